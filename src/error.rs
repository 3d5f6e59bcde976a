//! Typed errors of the public API.
//!
//! One enum, [`Error`], is returned by every verb of [`crate::Journal`]. Each variant's
//! message says what was wrong and what to do next (the next command to run), in the
//! manner of jj's `command_error.rs`. [`Error::exit_code`] maps a variant to the CLI exit
//! codes of the design brief (`shared/design/ultra-edit.md`, "CLI contract").
//!
//! Errors are returned *before* anything outside `.ultra-edit/` changes, unless the
//! variant says otherwise (only [`Error::CommitFailed`] and [`Error::NeedsAttention`] come
//! from inside a batch, and both describe exactly what is on disk).

use std::path::PathBuf;

use crate::edit::EditError;
use crate::journal::records::{BatchState, TxRecord, TxState};

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An I/O error with the path it happened on (never a bare "No such file or directory").
#[derive(Debug, thiserror::Error)]
#[error("{op} {path}: {source}")]
pub struct IoError {
    /// What was being done: "read", "rename", "fsync dir", …
    pub op: &'static str,
    /// The path the operation was applied to.
    pub path: PathBuf,
    /// The underlying OS error.
    #[source]
    pub source: std::io::Error,
}

impl IoError {
    /// The OS error number (`errno`), if any.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.source.raw_os_error()
    }
}

/// Attach an operation name and a path to an [`std::io::Error`].
pub(crate) trait IoContext<T> {
    fn ctx(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T, IoError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T, IoError> {
        self.map_err(|source| IoError {
            op,
            path: path.into(),
            source,
        })
    }
}

/// Why a path of a plan was refused (design brief, "Path safety").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// Empty path, NUL byte, or other malformed path text.
    #[error("path {path:?} is not a valid workspace path: {why}")]
    Invalid {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Absolute path outside the root, or a `..` that leaves it.
    #[error("path {path:?} is outside the workspace root; give a path relative to the root")]
    OutsideRoot {
        /// The path as given.
        path: String,
    },
    /// A path with a `.git` or `.ultra-edit` component, at any depth.
    #[error("path {path:?} is inside a {area}/ directory, which ultra-edit never edits")]
    Reserved {
        /// The path as given.
        path: String,
        /// `.git` or `.ultra-edit`.
        area: &'static str,
    },
    /// The file name has the form of ultra-edit's temp files (`.ue-*.tmp`).
    #[error("path {path:?} has the name form of ultra-edit's temp files (.ue-*.tmp); rename it")]
    TempName {
        /// The path as given.
        path: String,
    },
    /// A parent directory of the path is a symlink.
    #[error(
        "path {path:?} goes through the symlink {link:?}; edit the link's target by its real path"
    )]
    SymlinkInPath {
        /// The path as given.
        path: String,
        /// The component that is a symlink (relative to the root).
        link: String,
    },
    /// The file itself is a symlink: replacing it would turn the link into a regular file.
    #[error("path {path:?} is a symlink; ultra-edit never replaces a link, edit its target by its real path")]
    IsSymlink {
        /// The path as given.
        path: String,
    },
    /// The file has setuid, setgid or sticky bits. A rewrite (as root) would give them
    /// to a file owned by the writer, so such files are never edited.
    #[error("path {path:?} has mode {mode:o} (setuid, setgid or sticky); ultra-edit does not rewrite such files")]
    SetId {
        /// The path as given.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The file has more than one hard link: a rename would silently split it.
    #[error("path {path:?} has {links} hard links; a rename would split them, so it is refused")]
    HardLinked {
        /// The path as given.
        path: String,
        /// `st_nlink`.
        links: u64,
    },
    /// The path, or one of its parents, is not of the kind needed (a directory where a
    /// file is edited, a file where a directory is needed).
    #[error("path {path:?}: {why}")]
    WrongKind {
        /// The path as given.
        path: String,
        /// What was found.
        why: String,
    },
}

/// Errors decoding or reading the journal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// redb failed (I/O, corruption, lock protocol).
    #[error("journal storage error: {0}; if the disk is full or not writable, fix that and retry; if the journal file is damaged, see \"When the journal is damaged\" in the README (the tree's files are not affected)")]
    Storage(String),
    /// A record starts with a format byte this binary does not know.
    #[error("journal record in table {table} has unknown format byte {byte}; it was written by a newer ultra-edit or is damaged (see \"When the journal is damaged\" in the README)")]
    UnknownFormat {
        /// Table name.
        table: &'static str,
        /// The first byte found.
        byte: u8,
    },
    /// A record could not be decoded.
    #[error("journal record in table {table} is damaged: {message}; `ultra-edit journal verify` lists every damaged record, and \"When the journal is damaged\" in the README says how to recover")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// Decoder message.
        message: String,
    },
    /// The journal's schema is newer than this binary.
    #[error("journal schema version {found} is newer than this ultra-edit (supports up to {supported}); upgrade ultra-edit, the journal was not modified")]
    SchemaTooNew {
        /// Version found in the meta table.
        found: u64,
        /// [`crate::SCHEMA_VERSION`].
        supported: u64,
    },
    /// A verb panicked, most likely inside redb on a damaged journal file.
    #[error("internal failure ({message}); the journal file may be damaged: see \"When the journal is damaged\" in the README, and keep a copy of .ultra-edit/ for a bug report")]
    Panicked {
        /// The panic message.
        message: String,
    },
    /// `journal verify` found problems (listed in its report).
    #[error("journal verify found {problems} problem(s); the journal was not modified; see \"When the journal is damaged\" in the README")]
    Damaged {
        /// How many.
        problems: usize,
    },
    /// A state change that its state machine does not allow was attempted; nothing of
    /// the write it was part of was recorded. Either another process changed the
    /// record meanwhile, or this is a bug.
    #[error("journal refused {0}; nothing was written (another process may have changed it meanwhile: run the command again)")]
    IllegalTransition(Transition),
    /// A record that another record references is missing.
    #[error("journal is missing {what}; `ultra-edit journal verify` lists every damaged record, and \"When the journal is damaged\" in the README says how to recover")]
    Missing {
        /// Description of the missing record.
        what: String,
    },
}

/// A refused state change (see [`JournalError::IllegalTransition`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Transition {
    /// Of a transaction ([`TxState::can_become`]).
    #[error("to move tx {tx} from {from} to {to}")]
    Tx {
        /// Transaction id.
        tx: u64,
        /// Its recorded state.
        from: TxState,
        /// The state asked for.
        to: TxState,
    },
    /// Of a batch ([`BatchState::can_become`]), judged against the recorded batch.
    #[error("to move batch {batch} from {from} to {to}")]
    Batch {
        /// Batch id.
        batch: u64,
        /// Its recorded state.
        from: BatchState,
        /// The state asked for.
        to: BatchState,
    },
    /// A new batch that does not start `Prepared`, or a batch id already used.
    #[error("to insert batch {batch} in state {state} (a batch starts prepared, under a new id)")]
    NewBatch {
        /// Batch id.
        batch: u64,
        /// The state it was given.
        state: BatchState,
    },
    /// A revision that is not the next one of its open tx.
    #[error(
        "to record revision {revision} of tx {tx}, whose next revision is {next} (state {state})"
    )]
    Revision {
        /// Transaction id.
        tx: u64,
        /// The revision number given.
        revision: u32,
        /// The tx's next revision number.
        next: u32,
        /// The tx's state.
        state: TxState,
    },
}

impl Error {
    /// The error without its advice on what to run next: for `journal verify`'s own
    /// list of problems, where "run `journal verify`" would be circular.
    pub(crate) fn without_advice(&self) -> String {
        match self {
            Error::Journal(JournalError::Storage(s)) => format!("storage error: {s}"),
            Error::Journal(JournalError::Corrupt { table, message }) => {
                format!("record in table {table} is damaged: {message}")
            }
            Error::Journal(JournalError::Missing { what }) => format!("missing {what}"),
            other => other.to_string(),
        }
    }
}

macro_rules! storage_from {
    ($($t:ty),*) => {$(
        impl From<$t> for JournalError {
            fn from(e: $t) -> Self { JournalError::Storage(e.to_string()) }
        }
        impl From<$t> for Error {
            fn from(e: $t) -> Self { Error::Journal(JournalError::Storage(e.to_string())) }
        }
    )*};
}
storage_from!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// The error of every public verb.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The edit plan is invalid, or a target could not be resolved.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// A path was refused by the path-safety rules; nothing was changed.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// An I/O error outside a batch (reading a snapshot, opening the workspace).
    #[error(transparent)]
    Io(#[from] IoError),
    /// A `journal gc` policy that keeps nothing in particular.
    #[error("invalid retention policy: {message}")]
    InvalidPolicy {
        /// What is wrong.
        message: String,
    },
    /// No workspace journal at the root.
    #[error("no ultra-edit journal at {root} (nor in a parent directory); run `ultra-edit init` in the workspace's root directory, or pass --root DIR")]
    NotInitialized {
        /// The workspace root.
        root: PathBuf,
    },
    /// Unknown transaction id.
    #[error("no transaction {tx} in this journal; `ultra-edit log` lists them")]
    UnknownTx {
        /// The id asked for.
        tx: u64,
    },
    /// Unknown revision of a known transaction.
    #[error("transaction {tx} has no revision {revision} (latest is {latest}); `ultra-edit show {tx}` shows it")]
    UnknownRevision {
        /// Transaction id.
        tx: u64,
        /// Revision asked for.
        revision: u32,
        /// Latest revision.
        latest: u32,
    },
    /// The transaction is not in a state that allows the verb.
    #[error("tx {tx} is {state}; {hint}")]
    WrongState {
        /// Transaction id.
        tx: u64,
        /// Its state.
        state: String,
        /// What can be done instead.
        hint: String,
    },
    /// Files changed on disk since the preview's snapshot; nothing was written.
    #[error("stale snapshot of tx {tx}: {} changed on disk since the preview; run `ultra-edit rebase {tx}` to rebase the preview onto the disk, or preview again", paths.join(", "))]
    StaleSnapshot {
        /// Transaction id.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
    },
    /// A revise plan was written against a revision that is no longer the latest.
    #[error("tx {tx}: the plan was written against revision {base}, but the latest is {latest}; write it against revision {latest} (`ultra-edit show {tx}`), or pass --rebase to merge it onto revision {latest}")]
    StaleRevision {
        /// Transaction id.
        tx: u64,
        /// The revision the plan names.
        base: u32,
        /// The latest revision.
        latest: u32,
    },
    /// `rebase` found nothing to do: every file of the latest revision still matches
    /// its snapshot on disk.
    #[error("tx {tx}: nothing to rebase, the disk still matches every snapshot of revision {revision}; `ultra-edit commit {tx}` can go ahead")]
    NothingToRebase {
        /// Transaction id.
        tx: u64,
        /// The latest revision.
        revision: u32,
    },
    /// Files changed since the commit that is being rolled back; nothing was written.
    #[error("cannot roll back tx {tx}: {} changed (or was deleted) since it was committed; run `ultra-edit rollback {tx} --force` to overwrite them (their current bytes are kept in the journal first)", paths.join(", "))]
    StaleRollback {
        /// Transaction id being rolled back.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
    },
    /// The revision's validation report has errors; nothing was written.
    #[error("tx {tx} revision {revision} failed validation: {}; fix it with `ultra-edit revise {tx}`", summary.join("; "))]
    ValidationFailed {
        /// Transaction id.
        tx: u64,
        /// Revision.
        revision: u32,
        /// One line per error issue.
        summary: Vec<String>,
    },
    /// The commit lock was held by another committer for longer than the timeout.
    #[error("commit lock {path} still held after {waited_ms} ms{}; retry later or raise --lock-timeout", holder.map(|p| format!(" (held by pid {p})")).unwrap_or_default())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long we waited, in milliseconds.
        waited_ms: u64,
        /// The pid written into the lock file by the holder, if readable.
        holder: Option<u32>,
    },
    /// A batch failed and was reverted: every file is byte-for-byte as before, the batch
    /// is `Aborted` in the journal and the transaction can be committed again.
    #[error("batch {batch} of tx {tx} failed and was reverted, no file changed: {cause}")]
    CommitFailed {
        /// Transaction id.
        tx: u64,
        /// Batch id.
        batch: u64,
        /// The first error.
        cause: IoError,
    },
    /// A batch could not be completed or reverted; the journal keeps everything needed.
    #[error("batch {batch} of tx {tx} needs attention: {message}; put the file(s) back and run `ultra-edit recover`, or run `ultra-edit recover --overwrite` to overwrite them (their bytes are kept in the journal)")]
    NeedsAttention {
        /// Transaction id.
        tx: u64,
        /// Batch id.
        batch: u64,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// CLI exit code of the design brief: 1 other (including an invalid plan or path),
    /// 3 stale snapshot or stale rollback, 4 validation failed, 5 lock timeout, 6 target
    /// not found or ambiguous (a text target, a line range, a file that is missing or
    /// that a `create_file` finds present), 7 needs attention.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::StaleSnapshot { .. }
            | Error::StaleRollback { .. }
            | Error::StaleRevision { .. } => 3,
            Error::ValidationFailed { .. } => 4,
            Error::LockTimeout { .. } => 5,
            Error::Edit(e) if e.is_target_failure() => 6,
            Error::NeedsAttention { .. } => 7,
            _ => 1,
        }
    }

    /// The transaction the error is about, if any (printed as `tx` in `--json` errors).
    pub fn tx(&self) -> Option<u64> {
        match self {
            Error::UnknownTx { tx }
            | Error::UnknownRevision { tx, .. }
            | Error::WrongState { tx, .. }
            | Error::StaleSnapshot { tx, .. }
            | Error::StaleRollback { tx, .. }
            | Error::StaleRevision { tx, .. }
            | Error::NothingToRebase { tx, .. }
            | Error::ValidationFailed { tx, .. }
            | Error::CommitFailed { tx, .. }
            | Error::NeedsAttention { tx, .. } => Some(*tx),
            _ => None,
        }
    }

    /// A stable snake_case name of the error kind, printed in `--json` error objects.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Edit(e) => e.code(),
            Error::Path(_) => "path_refused",
            Error::Journal(_) => "journal",
            Error::Io(_) => "io",
            Error::NotInitialized { .. } => "not_initialized",
            Error::InvalidPolicy { .. } => "invalid_policy",
            Error::UnknownTx { .. } => "unknown_tx",
            Error::UnknownRevision { .. } => "unknown_revision",
            Error::WrongState { .. } => "wrong_state",
            Error::StaleSnapshot { .. } => "stale_snapshot",
            Error::StaleRollback { .. } => "stale_rollback",
            Error::StaleRevision { .. } => "stale_revision",
            Error::NothingToRebase { .. } => "nothing_to_rebase",
            Error::ValidationFailed { .. } => "validation_failed",
            Error::LockTimeout { .. } => "lock_timeout",
            Error::CommitFailed { .. } => "commit_failed",
            Error::NeedsAttention { .. } => "needs_attention",
        }
    }
}

impl Error {
    /// A [`Error::WrongState`] whose hint names what can be done with the tx instead.
    pub(crate) fn wrong_state(rec: &TxRecord, verb: &str) -> Error {
        if rec.pruned {
            return Error::WrongState {
                tx: rec.tx,
                state: format!("{} (pruned)", rec.state),
                hint: format!("`journal gc` dropped its revisions and images, so it cannot {verb}"),
            };
        }
        let hint = match (rec.state, rec.committed, rec.rolled_back_by) {
            (TxState::Committed, Some(c), _) => format!(
                "revision {} was applied by batch {}, so it cannot {verb}; `ultra-edit rollback {}` restores the files",
                c.revision, c.batch, rec.tx
            ),
            (TxState::RolledBack, _, Some(by)) => format!(
                "tx {by} rolled it back, so it cannot {verb}; `ultra-edit rollback {by}` redoes it"
            ),
            (TxState::Aborted, _, _) => format!("an aborted tx accepts nothing further, so it cannot {verb}; preview again"),
            (TxState::Open, _, _) => format!("it is not committed, so it cannot {verb}; `ultra-edit commit {}` first", rec.tx),
            _ => format!("it cannot {verb}"),
        };
        Error::WrongState {
            tx: rec.tx,
            state: rec.state.to_string(),
            hint,
        }
    }

    /// A [`Error::WrongState`] for a verb refused while batch `batch` of the tx is in
    /// flight in state `state`: recovery, not the verb, settles it.
    pub(crate) fn batch_in_flight(rec: &TxRecord, batch: u64, state: BatchState) -> Error {
        let hint = if state == BatchState::NeedsAttention {
            format!("its batch {batch} needs attention (a file holds bytes that are neither its old nor its new content), so it cannot be aborted; put the file(s) back and run `ultra-edit recover`, or run `ultra-edit recover --overwrite`, to settle it first")
        } else {
            format!("its batch {batch} is {state} (a commit under way, or interrupted), so it cannot be aborted; `ultra-edit recover` settles it")
        };
        Error::WrongState {
            tx: rec.tx,
            state: rec.state.to_string(),
            hint,
        }
    }
}
