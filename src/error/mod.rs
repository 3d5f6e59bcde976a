//! Typed errors of the public API, as data.
//!
//! One enum, [`Error`], is returned by every verb of [`crate::Journal`]. A variant
//! carries what went wrong as typed values ([`StateReason`], [`Attention`], paths,
//! ids); its message (`Display`) says what was wrong and what it means for the files,
//! in words that name no particular front end; [`Error::next_step`] gives the step that
//! gets past it as data ([`NextStep`]), which the CLI renders as a command and the MCP
//! server as a tool call (as jj's `command_error.rs` renders hints apart from errors).
//! [`Error::exit_code`] maps a variant to the CLI's exit codes (docs/design.md, "CLI
//! contract").
//!
//! Errors are returned *before* anything outside `.ultra-edit/` changes, unless the
//! variant says otherwise (only [`Error::CommitFailed`] and [`Error::NeedsAttention`] come
//! from inside a batch, and both describe exactly what is on disk).

mod io;
mod journal;
mod path;
mod resolve;
mod state;

use std::path::PathBuf;

pub(crate) use io::IoContext;
pub use io::IoError;
pub use journal::{JournalError, Transition};
pub use path::PathError;
pub use resolve::{MarkedFile, ResolveError};
pub use state::{Attention, NextStep, Outcome, StateReason, Verb};

use crate::edit::EditError;
use crate::journal::records::{BatchState, TxRecord, TxState};

/// A file and the owner it has ([`Error::OwnerNotKept`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OwnedPath {
    /// Root-relative path.
    pub path: String,
    /// Its owner's uid.
    pub uid: u32,
    /// Its group's gid.
    pub gid: u32,
}

/// The part of [`Error::CommitFailed`]'s message about temps left behind.
fn temps_left_note(temps: &[String]) -> String {
    if temps.is_empty() {
        return String::new();
    }
    format!(
        "; the temp file(s) {} could not be removed: a directory of the batch was moved away and replaced by a link meanwhile, so delete them where that directory went",
        temps.join(", ")
    )
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    /// `resolve` recorded nothing (markers remain, nothing changed, the editor failed).
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// A `journal gc` policy that keeps nothing in particular.
    #[error("invalid retention policy: {message}")]
    InvalidPolicy {
        /// What is wrong.
        message: String,
    },
    /// The journal is on a read-only filesystem and the verb needs to write it (or the
    /// workspace); nothing was changed. Reading history works read-only.
    #[error("{} is on a read-only filesystem and {what}; nothing was changed. Remount it read-write to do that; the history can be read as it is (log, show, journal dump, verify, stats)", path.display())]
    ReadOnly {
        /// The journal file (or the state directory, for `init`).
        path: PathBuf,
        /// What would have to be written.
        what: &'static str,
    },
    /// No workspace journal at the root.
    #[error("no ultra-edit journal at {root}{}", if *searched_up { " (nor in a parent directory)" } else { "" })]
    NotInitialized {
        /// The workspace root (or, when searched for, the directory the search began in).
        root: PathBuf,
        /// Whether the parent directories were searched too (the CLI without --root).
        searched_up: bool,
    },
    /// Unknown transaction id.
    #[error("no transaction {tx} in this journal")]
    UnknownTx {
        /// The id asked for.
        tx: u64,
    },
    /// Unknown revision of a known transaction.
    #[error("transaction {tx} has no revision {revision} (latest is {latest})")]
    UnknownRevision {
        /// Transaction id.
        tx: u64,
        /// Revision asked for.
        revision: u32,
        /// Latest revision.
        latest: u32,
    },
    /// The transaction is not in a state that allows the verb.
    #[error("tx {tx} is {state}{}; {}", if *pruned { " (pruned)" } else { "" }, reason.describe(*verb))]
    WrongState {
        /// Transaction id.
        tx: u64,
        /// Its state.
        state: TxState,
        /// `journal gc` pruned it.
        pruned: bool,
        /// The verb refused.
        verb: Verb,
        /// Why.
        reason: StateReason,
    },
    /// Files changed on disk since the preview's snapshot; nothing was written.
    #[error("stale snapshot of tx {tx}: {} changed on disk since the preview, so the preview must be rebased onto the disk (or made again)", paths.join(", "))]
    StaleSnapshot {
        /// Transaction id.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
    },
    /// A revise plan was written against a revision that is no longer the latest.
    #[error("tx {tx}: the plan was written against revision {base}, but the latest is {latest}; write it against revision {latest}, or rebase it onto revision {latest}")]
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
    #[error("tx {tx}: nothing to rebase, the disk still matches every snapshot of revision {revision}; a commit can go ahead")]
    NothingToRebase {
        /// Transaction id.
        tx: u64,
        /// The latest revision.
        revision: u32,
    },
    /// Files changed since the commit that is being rolled back; nothing was written.
    #[error("cannot roll back tx {tx}: {} changed (or was deleted) since it was committed; a forced rollback (`--force`) overwrites them after keeping their current bytes in the journal", paths.join(", "))]
    StaleRollback {
        /// Transaction id being rolled back.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
    },
    /// The revision's validation report has errors; nothing was written.
    #[error("tx {tx} revision {revision} failed validation: {}", summary.join("; "))]
    ValidationFailed {
        /// Transaction id.
        tx: u64,
        /// Revision.
        revision: u32,
        /// One line per error issue.
        summary: Vec<String>,
    },
    /// The commit lock was held by another committer for longer than the timeout.
    #[error("commit lock {path} still held after {waited_ms} ms{}", holder.map(|p| format!(" (held by pid {p})")).unwrap_or_default())]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long we waited, in milliseconds.
        waited_ms: u64,
        /// The pid written into the lock file by the holder, if readable.
        holder: Option<u32>,
    },
    /// A commit or rollback would change a file's owner: it writes a new inode, and this
    /// process cannot give it the file's owner and group (it is not root, and the file
    /// belongs to another user or to a group it is not in). Nothing was written.
    #[error("tx {tx} would change the owner of {}: this process (uid {uid}) cannot give a new file another owner; run it as that owner or as root, or accept the change (allow_owner_change, --allow-owner-change)", files.iter().map(|f| format!("{} ({}:{})", f.path, f.uid, f.gid)).collect::<Vec<_>>().join(", "))]
    OwnerNotKept {
        /// Transaction id.
        tx: u64,
        /// The process's effective uid.
        uid: u32,
        /// The files and the owners they would lose.
        files: Vec<OwnedPath>,
    },
    /// A batch failed and was reverted: every file is byte-for-byte as before, the batch
    /// is `Aborted` in the journal and the transaction can be committed again.
    #[error(
        "batch {batch} of tx {tx} failed and was reverted, no file changed: {cause}{}",
        temps_left_note(temps_left)
    )]
    CommitFailed {
        /// Transaction id.
        tx: u64,
        /// Batch id.
        batch: u64,
        /// The first error.
        cause: IoError,
        /// Temp files (root-relative, as staged) that could not be removed because a
        /// directory of the batch was moved away and replaced by a link or a file
        /// meanwhile: they are wherever that directory went.
        temps_left: Vec<String>,
    },
    /// A batch could neither finish nor revert by itself; the journal keeps everything
    /// needed. [`Attention::outcome`] says whether it may still land.
    #[error("batch {batch} of tx {tx} needs attention: {attention}")]
    NeedsAttention {
        /// Transaction id.
        tx: u64,
        /// Batch id.
        batch: u64,
        /// What is on disk and what settles it.
        attention: Attention,
    },
}

impl Error {
    /// CLI exit code (docs/design.md, "CLI contract"): 1 other (including an invalid plan or path),
    /// 3 stale snapshot or stale rollback, 4 validation failed (or, for `resolve`,
    /// conflict markers remain), 5 lock timeout, 6 target
    /// not found or ambiguous (a text target, a line range, a file that is missing or
    /// that a `create_file` finds present), 7 needs attention.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::StaleSnapshot { .. }
            | Error::StaleRollback { .. }
            | Error::StaleRevision { .. } => 3,
            Error::ValidationFailed { .. } => 4,
            Error::Resolve(ResolveError::MarkersRemain { .. }) => 4,
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
            | Error::OwnerNotKept { tx, .. }
            | Error::NeedsAttention { tx, .. } => Some(*tx),
            Error::Resolve(
                ResolveError::MarkersRemain { tx, .. }
                | ResolveError::Unchanged { tx, .. }
                | ResolveError::NotInRevision { tx, .. }
                | ResolveError::NothingToEdit { tx, .. },
            ) => Some(*tx),
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
            Error::ReadOnly { .. } => "read_only",
            Error::InvalidPolicy { .. } => "invalid_policy",
            Error::UnknownTx { .. } => "unknown_tx",
            Error::UnknownRevision { .. } => "unknown_revision",
            Error::WrongState { .. } => "wrong_state",
            Error::StaleSnapshot { .. } => "stale_snapshot",
            Error::StaleRollback { .. } => "stale_rollback",
            Error::StaleRevision { .. } => "stale_revision",
            Error::NothingToRebase { .. } => "nothing_to_rebase",
            Error::Resolve(ResolveError::MarkersRemain { .. }) => "markers_remain",
            Error::Resolve(ResolveError::Unchanged { .. }) => "nothing_resolved",
            Error::Resolve(ResolveError::NotInRevision { .. }) => "not_in_revision",
            Error::Resolve(ResolveError::NothingToEdit { .. }) => "nothing_to_edit",
            Error::Resolve(ResolveError::Editor { .. }) => "editor_failed",
            Error::ValidationFailed { .. } => "validation_failed",
            Error::LockTimeout { .. } => "lock_timeout",
            Error::CommitFailed { .. } => "commit_failed",
            Error::OwnerNotKept { .. } => "owner_not_kept",
            Error::NeedsAttention { .. } => "needs_attention",
        }
    }
}

impl Error {
    /// A [`Error::WrongState`] for `verb` from the tx's own state and links.
    pub(crate) fn wrong_state(rec: &TxRecord, verb: Verb) -> Error {
        Error::state(rec, verb, StateReason::of(rec, verb))
    }

    /// A [`Error::WrongState`] for `verb` with `reason`.
    pub(crate) fn state(rec: &TxRecord, verb: Verb, reason: StateReason) -> Error {
        Error::WrongState {
            tx: rec.tx,
            state: rec.state,
            pruned: rec.pruned,
            verb,
            reason,
        }
    }

    /// A [`Error::WrongState`] for `verb` while batch `batch` of the tx is in flight in
    /// state `state`: recovery, not the verb, settles it.
    pub(crate) fn batch_in_flight(
        rec: &TxRecord,
        verb: Verb,
        batch: u64,
        state: BatchState,
    ) -> Error {
        Error::state(rec, verb, StateReason::BatchInFlight { batch, state })
    }

    /// The step that gets past this error, if there is one to name.
    pub fn next_step(&self) -> Option<NextStep> {
        Some(match self {
            Error::NotInitialized { .. } => NextStep::Init,
            Error::ReadOnly { .. } => NextStep::RemountWritable,
            Error::UnknownTx { .. } => NextStep::Log,
            Error::UnknownRevision { tx, .. } => NextStep::Show { tx: *tx },
            Error::StaleSnapshot { tx, .. } => NextStep::Rebase { tx: *tx },
            Error::StaleRevision { tx, latest, .. } => NextStep::ReviseOnLatest {
                tx: *tx,
                latest: *latest,
            },
            Error::NothingToRebase { tx, .. } => NextStep::Commit { tx: *tx },
            Error::Resolve(
                ResolveError::NotInRevision { tx, .. } | ResolveError::NothingToEdit { tx, .. },
            ) => NextStep::Revise { tx: *tx },
            Error::StaleRollback { tx, .. } => NextStep::ForceRollBack { tx: *tx },
            Error::ValidationFailed { tx, .. } => NextStep::Revise { tx: *tx },
            Error::LockTimeout { .. } => NextStep::WaitForLock,
            Error::OwnerNotKept { tx, .. } => NextStep::AllowOwnerChange { tx: *tx },
            Error::NeedsAttention { attention, .. } => match attention.outcome() {
                Outcome::NeedsAPerson => NextStep::RecoverForeign,
                _ => NextStep::Recover,
            },
            Error::WrongState {
                tx,
                reason,
                verb,
                pruned,
                ..
            } => match reason {
                StateReason::Committed { .. } if *pruned => NextStep::History { tx: *tx },
                StateReason::Committed { .. } => NextStep::RollBack { tx: *tx },
                StateReason::RolledBack { by } => NextStep::Redo { by: *by },
                StateReason::Pruned if *verb == Verb::Show => NextStep::History { tx: *tx },
                StateReason::Aborted | StateReason::Pruned => NextStep::PreviewAgain,
                StateReason::NotCommitted => NextStep::Commit { tx: *tx },
                StateReason::BatchInFlight {
                    state: BatchState::NeedsAttention,
                    ..
                } => NextStep::RecoverForeign,
                StateReason::BatchInFlight { .. } => NextStep::Recover,
                StateReason::ChangedMeanwhile => NextStep::Retry,
                StateReason::RollbackTx { of } => NextStep::RollBackAgain { of: *of },
                StateReason::AlreadyUndone => NextStep::Log,
            },
            Error::Journal(JournalError::IllegalTransition(_)) => NextStep::Retry,
            Error::Journal(_) => NextStep::RepairJournal,
            _ => return None,
        })
    }

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
