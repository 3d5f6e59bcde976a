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
//! variant says otherwise (only [`Error::CommitFailed`], [`Error::Interrupted`] and
//! [`Error::NeedsAttention`] come from inside a batch, and each describes exactly what
//! is on disk).

mod io;
mod journal;
mod path;
mod resolve;
#[cfg(feature = "sandbox")]
mod sandbox;
mod state;

use std::path::PathBuf;

pub(crate) use io::IoContext;
pub use io::IoError;
pub use journal::{JournalError, Transition};
pub use path::PathError;
pub use resolve::{MarkedFile, ResolveError};
#[cfg(feature = "sandbox")]
pub use sandbox::{RefusedPath, SandboxError};
pub use state::{Attention, NextStep, Outcome, StateReason, Verb};

use crate::edit::EditError;
use crate::journal::records::{BatchState, TxRecord, TxState};

/// Who changed a file of a stale preview ([`Error::StaleSnapshot`]): a transaction of
/// this journal whose commit left the file as it is on disk now (its post-image is
/// the disk's state), or, when none did, a writer outside ultra-edit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StaleWriter {
    /// Root-relative path.
    pub path: String,
    /// The newest committed transaction whose batch wrote the file's current state;
    /// `None`: written outside ultra-edit (or by a transaction whose record gc dropped).
    pub tx: Option<u64>,
    /// That transaction's agent, if it named one.
    pub agent: Option<String>,
}

/// " (a.txt by tx 4 of agent \"bob\"; b.txt outside ultra-edit)": who changed the files of a
/// stale preview, empty when not known.
pub(crate) fn writers_note(writers: &[StaleWriter]) -> String {
    if writers.is_empty() {
        return String::new();
    }
    let each: Vec<String> = writers
        .iter()
        .map(|w| match (&w.tx, &w.agent) {
            (Some(tx), Some(agent)) => format!("{} by tx {tx} of agent {agent:?}", w.path),
            (Some(tx), None) => format!("{} by tx {tx}", w.path),
            (None, _) => format!("{} outside ultra-edit", w.path),
        })
        .collect();
    format!(" (changed: {})", each.join("; "))
}

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

/// The end of [`Error::NothingToRebase`]'s message: whether a commit can go ahead.
fn rebase_verdict(revision: u32, blocked: &[String]) -> String {
    if blocked.is_empty() {
        "a commit can go ahead".into()
    } else if summary_has(blocked, "no_changes") {
        format!("but revision {revision} changes nothing (every file holds its candidate already), so there is nothing to commit")
    } else {
        format!(
            "but revision {revision} cannot be committed: {}",
            blocked.join("; ")
        )
    }
}

/// The step past a revision whose validation has the errors `summary`
/// (`"{code} {path}: {message}"` lines, `"{code}: {message}"` for an issue of the
/// whole revision): a revision that changes nothing
/// (`no_changes`) is dropped or revised with a new plan, never committed; conflict
/// markers are fixed in an editor first; anything else is revised.
fn step_past_validation(tx: u64, summary: &[String]) -> NextStep {
    let has = |code: &str| summary_has(summary, code);
    if has("no_changes") {
        NextStep::Abort { tx }
    } else if has("merge_conflict") || has("conflict_markers") {
        NextStep::Resolve { tx }
    } else {
        NextStep::Revise { tx }
    }
}

/// Whether a validation summary (lines `"{code} {path}: {message}"`, or
/// `"{code}: {message}"` for an issue of the whole revision) has an error `code`.
pub(crate) fn summary_has(summary: &[String], code: &str) -> bool {
    summary.iter().any(|l| {
        l.strip_prefix(code)
            .is_some_and(|rest| rest.starts_with(' ') || rest.starts_with(':'))
    })
}

/// `tx 4` or `txs 4, 6`: the later txs of an [`Error::StaleRollback`], `None` if none.
fn later_txs(changed_by: &[u64]) -> Option<String> {
    match changed_by {
        [] => None,
        [one] => Some(format!("tx {one}")),
        many => Some(format!(
            "txs {}",
            many.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// " (tx 4 has written there since)"-style note of [`Error::StaleRollback`], with the
/// files written outside ultra-edit too, if any.
fn later_note(changed_by: &[u64], outside: &[String]) -> String {
    let have = if changed_by.len() == 1 { "has" } else { "have" };
    let was = if outside.len() == 1 { "was" } else { "were" };
    match (later_txs(changed_by), outside) {
        (None, []) => String::new(),
        (Some(txs), []) => format!(" ({txs} {have} written there since)"),
        (None, outside) => format!(" ({} {was} written outside ultra-edit)", and_list(outside)),
        (Some(txs), outside) => format!(
            " ({txs} {have} written there since, and {} {was} also written outside ultra-edit, which rolling {txs} back would not undo)",
            and_list(outside)
        ),
    }
}

/// ", undoing tx 4's change there too,"-style note of [`Error::StaleRollback`].
fn later_undone(changed_by: &[u64]) -> String {
    match changed_by {
        [one] => format!(", undoing tx {one}'s change there too,"),
        _ => later_txs(changed_by)
            .map(|txs| format!(", undoing the changes of {txs} there too,"))
            .unwrap_or_default(),
    }
}

/// The message of [`Error::StaleRollback`]: what changed (or is absent), what a forced
/// rollback does to it, and the revert that keeps the later changes.
fn stale_rollback(
    tx: u64,
    paths: &[String],
    changed_by: &[u64],
    outside: &[String],
    absent: &[String],
) -> String {
    let changed: Vec<String> = paths
        .iter()
        .filter(|p| !absent.contains(p))
        .cloned()
        .collect();
    let (it, its, was) = if changed.len() == 1 {
        ("it", "its", "was")
    } else {
        ("them", "their", "were")
    };
    let is = if absent.len() == 1 { "is" } else { "are" };
    let what = match (changed.is_empty(), absent.is_empty()) {
        (_, true) => format!(
            "{} changed (or {was} deleted) since it was committed",
            and_list(&changed)
        ),
        (true, false) => format!(
            "{} {is} absent (deleted or moved since it was committed)",
            and_list(absent)
        ),
        (false, false) => format!(
            "{} changed and {} {is} absent (deleted or moved) since it was committed",
            and_list(&changed),
            and_list(absent)
        ),
    };
    let forced = match (changed.is_empty(), absent.is_empty()) {
        (true, _) => format!(
            "a forced rollback re-creates {}{}",
            if absent.len() == 1 { "it" } else { "them" },
            later_undone(changed_by).trim_end_matches(',')
        ),
        (false, true) => format!(
            "a forced rollback overwrites {it}{} after keeping {its} current bytes in the journal",
            later_undone(changed_by)
        ),
        (false, false) => format!(
            "a forced rollback overwrites {}{} after keeping {its} current bytes in the journal, and re-creates {}",
            and_list(&changed),
            later_undone(changed_by),
            and_list(absent)
        ),
    };
    format!(
        "cannot roll back tx {tx}: {what}{}; {forced}; a revert of tx {tx} removes only its own change and keeps {}",
        later_note(changed_by, outside),
        if changed_by.is_empty() && outside.is_empty() {
            "what was written since"
        } else {
            "the later changes"
        }
    )
}

/// The message of [`Error::NothingToRevert`].
fn nothing_to_revert(txs: &[u64], agent: Option<&str>) -> String {
    match (txs, agent) {
        ([], Some(a)) => format!(
            "nothing to revert: agent {a:?} has no committed transaction in the range asked (rolled-back transactions, rollbacks and reverts are not counted); nothing was recorded"
        ),
        ([], None) => "nothing to revert: no transaction was named; nothing was recorded".into(),
        (txs, _) => format!(
            "nothing to revert: every file {} changed already holds what it held before; nothing was recorded",
            later_txs(txs).unwrap_or_default()
        ),
    }
}

/// Paths (or any words) as English lists them: `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `n` and `noun`, plural when `n` is not 1: `1 file`, `2 files`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
    /// A command run on the workspace's overlay recorded nothing (feature `sandbox`).
    #[cfg(feature = "sandbox")]
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A `journal gc` policy that keeps nothing in particular.
    #[error("invalid retention policy: {message}")]
    InvalidPolicy {
        /// What is wrong.
        message: String,
    },
    /// The journal is on a read-only filesystem and the verb needs to write it (or the
    /// workspace); nothing was changed. Reading history works read-only.
    #[error("{} is on a read-only filesystem and {what}; nothing was changed. Remount it read-write to do that; the history can be read as it is (the verbs that only read work)", path.display())]
    ReadOnly {
        /// The journal file (or the state directory, for `init`).
        path: PathBuf,
        /// What would have to be written.
        what: &'static str,
    },
    /// No workspace journal at the root.
    #[error("no ultra-edit journal {}", match state_dir {
        Some(dir) => format!("in the state directory {} (for the root {})", dir.display(), root.display()),
        None => format!("at {}{}", root.display(), if *searched_up { " (nor in a parent directory)" } else { "" }),
    })]
    NotInitialized {
        /// The workspace root (or, when searched for, the directory the search began in).
        root: PathBuf,
        /// Whether the parent directories were searched too (the CLI without --root).
        searched_up: bool,
        /// The state directory looked in, when one outside the root was given
        /// ([`crate::OpenOptions::state_dir`]); `None`: `<root>/.ultra-edit/`.
        state_dir: Option<PathBuf>,
    },
    /// The state directory exists, but this process may not read or enter it (`EACCES`):
    /// typically `.ultra-edit/` made by another user, private to them (mode 0700).
    /// The workspace is initialized; `init` would fail the same way. Nothing was read
    /// or changed.
    #[error("the ultra-edit journal in {} exists, but this user (uid {uid}) cannot read it: the directory belongs to uid {owner}, group {group}, mode {mode:o}; nothing was read or changed", state_dir.display())]
    JournalUnreadable {
        /// The state directory (`<root>/.ultra-edit`, or the one given).
        state_dir: PathBuf,
        /// The process's effective uid.
        uid: u32,
        /// The directory's owner (`st_uid`).
        owner: u32,
        /// The directory's group (`st_gid`).
        group: u32,
        /// The directory's permission bits (`st_mode & 0o7777`).
        mode: u32,
    },
    /// A transaction handle of another journal: nothing was read or written. A handle
    /// names the journal that made it (src/handle.rs); the same tx number in this
    /// journal is another transaction.
    #[error("transaction handle {handle} belongs to journal {}, not to this one ({journal}){}; nothing was changed", handle.journal, original_root.as_ref().map(|r| format!(": it was made when this journal was at {}, and this copy of it is another history", r.display())).unwrap_or_default())]
    ForeignHandle {
        /// The handle given.
        handle: crate::handle::TxHandle,
        /// This journal's id.
        journal: crate::handle::JournalId,
        /// When the handle was made by this journal at the root it was made for, and
        /// the journal has since been copied to another root: that root.
        original_root: Option<PathBuf>,
    },
    /// A state directory ([`crate::OpenOptions::state_dir`]) that holds the journal of
    /// another root; nothing was changed.
    #[error("state directory {} holds the journal of {}, not of {}; nothing was changed. Give each root its own state directory", state_dir.display(), made_for.display(), root.display())]
    StateDirOfOtherRoot {
        /// The state directory.
        state_dir: PathBuf,
        /// The root its journal was made for.
        made_for: PathBuf,
        /// The root it was opened for.
        root: PathBuf,
    },
    /// A handle whose journal no root known to a [`crate::Registry`] has: the registry's
    /// index (`<host dir>/index.json`) names no root with that journal id. Nothing was
    /// opened, read or written.
    #[error("no root known to the registry at {} has journal {} (handle {handle}); nothing was read or written. The handle was made by another host's registry or by a journal this registry never opened: preview again", registry.display(), handle.journal)]
    UnknownJournal {
        /// The handle given.
        handle: crate::handle::TxHandle,
        /// The registry's host directory.
        registry: PathBuf,
    },
    /// [`crate::Registry::write_files`] was given a preview (`expected`) that does not
    /// write exactly the files and bytes it was asked to write; nothing was written.
    #[error("preview {handle} does not write exactly {}: its files or their bytes differ from those given; nothing was written. Preview these files again and write with that preview, or write without one", and_list(paths))]
    PreviewWritesOther {
        /// The preview's handle.
        handle: crate::handle::TxHandle,
        /// The files given, root-relative, sorted.
        paths: Vec<String>,
    },
    /// A registry's host directory or its index cannot be used; nothing was changed.
    #[error("registry {} cannot be used: {reason}", path.display())]
    Registry {
        /// The file or directory at fault (the index, the host directory, or a root).
        path: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// The journal file is half-made: an `init` was cut (a power cut, a crash) before
    /// redb wrote its magic number, the last step of creating it, so it holds no
    /// history. Nothing was changed; `init` moves it aside (to
    /// `journal.redb.half-made`) and makes a new journal (docs/commit-protocol.md,
    /// "init and power cuts").
    #[error("the journal {} is half-made: the init that created it was cut before it finished (its first bytes are zero, so it holds no history); nothing was changed, and init moves it aside and makes a new one", path.display())]
    HalfMadeJournal {
        /// The journal file.
        path: PathBuf,
    },
    /// A state directory that cannot hold a journal; nothing was changed.
    #[error("state directory {} cannot be used: {reason}", state_dir.display())]
    InvalidStateDir {
        /// The state directory.
        state_dir: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// `rebase` of a transaction whose latest revision still has conflicts (from an
    /// earlier rebase): merging it again would nest their markers inside new ones, and
    /// one side of the old conflict may no longer exist anywhere. Nothing was changed;
    /// make a revision without conflicts first (docs/design.md, "Iteration").
    #[error("tx {tx}: revision {revision} still has conflicts in {}; a rebase on top of it would nest their markers. Nothing was changed: resolve them in a new revision first, then rebase", paths.join(", "))]
    UnresolvedConflicts {
        /// Transaction id.
        tx: u64,
        /// The latest revision, the one with conflicts.
        revision: u32,
        /// Root-relative paths of its conflicted files.
        paths: Vec<String>,
    },
    /// The preview is older than the max preview age: it was not committed and nothing
    /// was written. A fresh preview of the same plan sees the disk as it is now.
    #[error("preview tx {tx} expired: it was made {age_ms} ms ago and the max preview age is {max_age_ms} ms; nothing was written, preview again")]
    PreviewExpired {
        /// Transaction id.
        tx: u64,
        /// Its age, in milliseconds (journal clock's now − the tx's `created_ms`).
        age_ms: u64,
        /// The max age in force, in milliseconds.
        max_age_ms: u64,
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
    #[error("stale snapshot of tx {tx}: {} changed on disk since the preview{}, so the preview must be rebased onto the disk (or made again)", and_list(paths), writers_note(writers))]
    StaleSnapshot {
        /// Transaction id.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
        /// Who changed each of `paths`, in the same order, when the commit gate found
        /// out (empty when it did not look: a file that changed during the batch).
        writers: Vec<StaleWriter>,
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
    /// A preview whose plan changes nothing: every file it names would keep its bytes
    /// and mode. Nothing was recorded (no tx was made) and nothing was written; only
    /// [`crate::Journal::preview_with`] with
    /// [`crate::PreviewOptions::refuse_nothing_to_change`] returns it.
    #[error("the plan changes nothing: {} would keep {} bytes and mode, so there is nothing to preview or commit; nothing was recorded", and_list(paths), if paths.len() == 1 { "its" } else { "their" })]
    NothingToChange {
        /// The files the plan names, root-relative, sorted.
        paths: Vec<String>,
    },
    /// A whole-file write named the base it was made from (`expected_base`), and the
    /// file it applies to (the disk for a preview, the latest candidate for a revise)
    /// holds other content: someone changed it since the writer read it. Nothing was
    /// recorded or written (issue 29, item 7).
    #[error("{} changed since the content written over {} was made from {}: {}; nothing was recorded", and_list(paths), if paths.len() == 1 { "it" } else { "them" }, if paths.len() == 1 { "it" } else { "them" }, found.join("; "))]
    BaseChanged {
        /// The files, root-relative, in plan order.
        paths: Vec<String>,
        /// Per file, what the writer expected and what it holds
        /// (`"a.txt: expected blake3 …, found blake3 … (12 bytes)"`).
        found: Vec<String>,
    },
    /// `rebase` found nothing to do: every file of the latest revision still matches
    /// its snapshot on disk.
    #[error("tx {tx}: nothing to rebase, the disk still matches every snapshot of revision {revision}; {}", rebase_verdict(*revision, blocked))]
    NothingToRebase {
        /// Transaction id.
        tx: u64,
        /// The latest revision.
        revision: u32,
        /// The latest revision's validation errors (`"{code} {path}: {message}"`, as
        /// [`Error::ValidationFailed`]'s summary): empty when a commit can go ahead;
        /// else the commit would be refused for them (a rebase that left nothing to
        /// change records a `no_changes` revision), and the next step says what to do
        /// instead (issue 29, item 8).
        blocked: Vec<String>,
    },
    /// `revert` found nothing to undo; nothing was recorded. With `txs` empty: the
    /// agent has no committed transaction to revert (in the range asked); else every
    /// file the txs changed already holds what it held before them.
    #[error("{}", nothing_to_revert(txs, agent.as_deref()))]
    NothingToRevert {
        /// The txs asked for (newest first), empty when an agent has none.
        txs: Vec<u64>,
        /// The agent whose txs were asked for, if any.
        agent: Option<String>,
    },
    /// Files changed since the commit that is being rolled back; nothing was written.
    #[error("{}", stale_rollback(*tx, paths, changed_by, outside, absent))]
    StaleRollback {
        /// Transaction id being rolled back.
        tx: u64,
        /// The changed paths, sorted.
        paths: Vec<String>,
        /// Later transactions whose committed change (not rolled back) wrote one of
        /// `paths`, ascending: what a forced rollback would undo with it.
        changed_by: Vec<u64>,
        /// The paths among `paths` whose change the later transactions do not explain:
        /// undoing every later change of the file, newest first, from what it holds
        /// now does not lead back to the tx's new content, so it was also written
        /// outside ultra-edit, and rolling `changed_by` back first would not clear the
        /// refusal (only a forced rollback restores it). Sorted.
        outside: Vec<String>,
        /// The paths among `paths` that are absent now (deleted or moved since) and
        /// that a forced rollback would re-create (the tx's pre-image has them).
        /// Sorted.
        absent: Vec<String>,
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
        /// The lock file; or the workspace root, when a journal in another state
        /// directory of the same root held the root's lock (src/lock.rs).
        path: PathBuf,
        /// How long we waited, in milliseconds.
        waited_ms: u64,
        /// The pid written into the lock file by the holder, if readable.
        holder: Option<u32>,
    },
    /// A commit or rollback would change a file's owner: it writes a new inode, and this
    /// process cannot give it the file's owner and group (it is not root, and the file
    /// belongs to another user or to a group it is not in). Nothing was written.
    #[error("tx {tx} would change the owner of {}: the batch writes each file anew, and this process (uid {uid}) cannot give the new file another user's owner or a group it is not in; run it as that owner or as root, or accept the change of owner", files.iter().map(|f| format!("{} ({}:{})", f.path, f.uid, f.gid)).collect::<Vec<_>>().join(", "))]
    OwnerNotKept {
        /// Transaction id.
        tx: u64,
        /// The process's effective uid.
        uid: u32,
        /// The files and the owners they would lose.
        files: Vec<OwnedPath>,
    },
    /// A batch a crash interrupted (another process's, which may have been another
    /// user's) writes files whose recorded owner this process cannot give them: it is not
    /// root, and they belong to another user or to a group it is not in. Completing or
    /// reverting the batch as this user would leave those files owned by it, so
    /// recovery refuses before writing anything; the batch stays in flight, and root or
    /// the files' owner settles it. Reading commands work meanwhile.
    #[error("batch {batch} of tx {tx} was interrupted and recovery must {} it, but it writes {} and this process (uid {uid}) cannot give them their owner; nothing was changed", if *completes { "complete" } else { "revert" }, files.iter().map(|f| format!("{} ({}:{})", f.path, f.uid, f.gid)).collect::<Vec<_>>().join(", "))]
    RecoveryNeedsOwner {
        /// Transaction id.
        tx: u64,
        /// Batch id.
        batch: u64,
        /// Whether recovery completes the batch (`false`: reverts it).
        completes: bool,
        /// The process's effective uid.
        uid: u32,
        /// The files (as the batch names them) and the owners they must get.
        files: Vec<OwnedPath>,
    },
    /// A commit or rollback would write a file that has a POSIX ACL onto a filesystem
    /// that cannot store one (`EOPNOTSUPP`, e.g. mounted `noacl` since the preview): the
    /// file would lose its ACL, and with it the access it denies (a group that the ACL
    /// kept out could read the file through the mode's group bits). Nothing was written.
    #[error("tx {tx} would drop the POSIX ACL of {}: the filesystem there does not support ACLs now, and the file would lose the access limits its ACL sets; nothing was changed. Mount it with ACL support, or remove the ACL (`setfacl -b FILE`) and preview again", paths.join(", "))]
    AclNotKept {
        /// Transaction id.
        tx: u64,
        /// The files (root-relative, sorted) whose ACL cannot be written.
        paths: Vec<String>,
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
    /// A batch was interrupted ([`crate::Interrupt::request`]: the CLI's SIGINT, SIGTERM
    /// or SIGHUP) while it staged its temps, and was reverted: no file changed, the
    /// temps are removed, the batch is `Aborted` and the transaction can be committed
    /// (or the rollback run) again. A batch interrupted later, once files were being
    /// replaced, finishes instead (docs/commit-protocol.md, "Interrupts").
    #[error(
        "batch {batch} of tx {tx} was interrupted before any file was replaced and was reverted, no file changed{}",
        temps_left_note(temps_left)
    )]
    Interrupted {
        /// Transaction id (for a rollback, the rollback tx, aborted with its batch).
        tx: u64,
        /// Batch id.
        batch: u64,
        /// Temps out of reach, as in [`Error::CommitFailed`].
        temps_left: Vec<String>,
        /// For a rollback's batch: the tx it was rolling back, which the step past
        /// the error rolls back again ([`NextStep::RollBackAgain`]); `None` for a
        /// commit's batch (the step commits `tx` again, [`NextStep::Commit`]).
        rollback_of: Option<u64>,
    },
    /// A commit, rollback or revert would write files that belong to a batch that needs
    /// attention: a batch past its commit point that recovery could not finish because
    /// someone wrote one of its files. Until that batch is settled (`recover`, once the
    /// foreign bytes are gone or overwritten) it owns its files, because settling it
    /// writes them: a change landed there meanwhile would be overwritten by it, while
    /// the journal still showed the change committed. Nothing was changed; a preview of
    /// the files may still be made. The check is `batch::gate::attention_owner`
    /// (docs/design.md, "Recovery").
    #[error("tx {tx} cannot {verb}: {} {} to batch {batch} of tx {batch_tx}, which needs attention and writes {} when it is settled; nothing was changed. Settle batch {batch} first (its files: {})", and_list(paths), if paths.len() == 1 { "belongs" } else { "belong" }, if paths.len() == 1 { "it" } else { "them" }, and_list(files))]
    AttentionOwnsFiles {
        /// The transaction refused (for a rollback, the tx being rolled back).
        tx: u64,
        /// The verb refused.
        verb: Verb,
        /// The batch that needs attention.
        batch: u64,
        /// Its transaction.
        batch_tx: u64,
        /// The files both would write, root-relative, sorted.
        paths: Vec<String>,
        /// Every file of the batch that needs attention, root-relative, sorted.
        files: Vec<String>,
        /// The batch's files that hold foreign bytes (what keeps it from settling),
        /// sorted; empty when recovery alone settles it.
        foreign: Vec<String>,
    },
    /// `recover --overwrite` found, in files of a batch that needs attention, the new
    /// content of a later committed transaction (one that landed on the batch's files
    /// while it needed attention, as versions before [`Error::AttentionOwnsFiles`]
    /// allowed): overwriting them would undo that commit while the journal still shows
    /// it committed. Nothing was changed; this needs a person to decide what the files
    /// should hold.
    #[error("batch {batch} of tx {tx} needs a person: {} {} the new content of later committed {} {}, and overwriting {} would undo that commit while the journal still shows it committed; nothing was changed", and_list(paths), if paths.len() == 1 { "holds" } else { "hold" }, if later.len() == 1 { "tx" } else { "txs" }, and_list(&later.iter().map(u64::to_string).collect::<Vec<_>>()), if paths.len() == 1 { "it" } else { "them" })]
    OverwriteUndoesCommit {
        /// The transaction of the batch that needs attention.
        tx: u64,
        /// The batch that needs attention.
        batch: u64,
        /// Its files that hold a later commit's new content, root-relative, sorted.
        paths: Vec<String>,
        /// The later committed transactions whose new content they hold, ascending.
        later: Vec<u64>,
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
    /// conflict markers remain; or a preview that changes nothing), 5 lock timeout, 6 target
    /// not found or ambiguous (a text target, a line range, a file that is missing or
    /// that a `create_file` finds present), 7 needs attention.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::StaleSnapshot { .. }
            | Error::StaleRollback { .. }
            | Error::StaleRevision { .. }
            | Error::BaseChanged { .. } => 3,
            Error::ValidationFailed { .. }
            | Error::UnresolvedConflicts { .. }
            | Error::NothingToChange { .. } => 4,
            Error::Resolve(ResolveError::MarkersRemain { .. }) => 4,
            Error::LockTimeout { .. } => 5,
            Error::Edit(e) if e.is_target_failure() => 6,
            Error::NeedsAttention { .. }
            | Error::AttentionOwnsFiles { .. }
            | Error::OverwriteUndoesCommit { .. } => 7,
            #[cfg(feature = "sandbox")]
            Error::Sandbox(e) => e.exit_code(),
            // 128 + SIGINT, as a shell reports a process ended by Ctrl-C.
            Error::Interrupted { .. } => 130,
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
            | Error::Interrupted { tx, .. }
            | Error::OwnerNotKept { tx, .. }
            | Error::RecoveryNeedsOwner { tx, .. }
            | Error::AclNotKept { tx, .. }
            | Error::NeedsAttention { tx, .. }
            | Error::AttentionOwnsFiles { tx, .. }
            | Error::OverwriteUndoesCommit { tx, .. }
            | Error::PreviewExpired { tx, .. }
            | Error::UnresolvedConflicts { tx, .. } => Some(*tx),
            Error::Resolve(
                ResolveError::MarkersRemain { tx, .. }
                | ResolveError::Unchanged { tx, .. }
                | ResolveError::NotInRevision { tx, .. }
                | ResolveError::NothingToEdit { tx, .. }
                | ResolveError::KeptCopies { tx, .. },
            ) => Some(*tx),
            _ => None,
        }
    }

    /// A stable snake_case name of the error kind, printed in `--json` error objects.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Edit(e) => e.code(),
            Error::Path(_) => "path_refused",
            Error::Journal(JournalError::HandleFailed { .. }) => "journal_handle_failed",
            Error::Journal(_) => "journal",
            Error::Io(_) => "io",
            #[cfg(feature = "sandbox")]
            Error::Sandbox(e) => e.kind(),
            Error::NotInitialized { .. } => "not_initialized",
            Error::HalfMadeJournal { .. } => "half_made_journal",
            Error::JournalUnreadable { .. } => "journal_unreadable",
            Error::ReadOnly { .. } => "read_only",
            Error::InvalidPolicy { .. } => "invalid_policy",
            Error::UnknownTx { .. } => "unknown_tx",
            Error::ForeignHandle { .. } => "foreign_handle",
            Error::StateDirOfOtherRoot { .. } => "state_dir_of_other_root",
            Error::InvalidStateDir { .. } => "invalid_state_dir",
            Error::UnknownJournal { .. } => "unknown_journal",
            Error::PreviewWritesOther { .. } => "preview_writes_other",
            Error::Registry { .. } => "registry",
            Error::PreviewExpired { .. } => "preview_expired",
            Error::UnresolvedConflicts { .. } => "unresolved_conflicts",
            Error::UnknownRevision { .. } => "unknown_revision",
            Error::WrongState { .. } => "wrong_state",
            Error::StaleSnapshot { .. } => "stale_snapshot",
            Error::StaleRollback { .. } => "stale_rollback",
            Error::StaleRevision { .. } => "stale_revision",
            Error::NothingToRebase { .. } => "nothing_to_rebase",
            Error::NothingToRevert { .. } => "nothing_to_revert",
            Error::NothingToChange { .. } => "nothing_to_change",
            Error::BaseChanged { .. } => "base_changed",
            Error::Resolve(ResolveError::MarkersRemain { .. }) => "markers_remain",
            Error::Resolve(ResolveError::Unchanged { .. }) => "nothing_resolved",
            Error::Resolve(ResolveError::NotInRevision { .. }) => "not_in_revision",
            Error::Resolve(ResolveError::NothingToEdit { .. }) => "nothing_to_edit",
            Error::Resolve(ResolveError::Editor { .. }) => "editor_failed",
            Error::Resolve(ResolveError::KeptCopies { .. }) => "kept_copies_unusable",
            Error::ValidationFailed { .. } => "validation_failed",
            Error::LockTimeout { .. } => "lock_timeout",
            Error::CommitFailed { .. } => "commit_failed",
            Error::Interrupted { .. } => "interrupted",
            Error::OwnerNotKept { .. } => "owner_not_kept",
            Error::RecoveryNeedsOwner { .. } => "recovery_needs_owner",
            Error::AclNotKept { .. } => "acl_not_kept",
            Error::NeedsAttention { .. } => "needs_attention",
            Error::AttentionOwnsFiles { .. } => "attention_owns_files",
            Error::OverwriteUndoesCommit { .. } => "overwrite_undoes_commit",
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
            Error::NotInitialized { .. } | Error::HalfMadeJournal { .. } => NextStep::Init,
            Error::JournalUnreadable { owner, .. } => NextStep::RunAsJournalOwner { owner: *owner },
            Error::ReadOnly { .. } => NextStep::RemountWritable,
            Error::UnknownTx { .. } | Error::ForeignHandle { .. } => NextStep::Log,
            Error::NothingToRevert { .. } => NextStep::Log,
            Error::PreviewExpired { .. } | Error::UnknownJournal { .. } => NextStep::PreviewAgain,
            Error::PreviewWritesOther { .. } => NextStep::PreviewAgain,
            // Read the file again and write the content over what it holds now.
            Error::BaseChanged { .. } => NextStep::PreviewAgain,
            Error::UnresolvedConflicts { tx, .. } => NextStep::Resolve { tx: *tx },
            Error::UnknownRevision { tx, .. } => NextStep::Show { tx: *tx },
            Error::StaleSnapshot { tx, .. } => NextStep::Rebase { tx: *tx },
            Error::StaleRevision { tx, latest, .. } => NextStep::ReviseOnLatest {
                tx: *tx,
                latest: *latest,
            },
            Error::NothingToRebase { tx, blocked, .. } if blocked.is_empty() => {
                NextStep::Commit { tx: *tx }
            }
            Error::NothingToRebase { tx, blocked, .. } => step_past_validation(*tx, blocked),
            Error::Resolve(
                ResolveError::NotInRevision { tx, .. } | ResolveError::NothingToEdit { tx, .. },
            ) => NextStep::Revise { tx: *tx },
            // Written outside ultra-edit too: rolling the later txs back would not clear it.
            Error::StaleRollback { tx, outside, .. } if !outside.is_empty() => {
                NextStep::ForceRollBack { tx: *tx }
            }
            Error::StaleRollback { tx, changed_by, .. } => match changed_by.last() {
                Some(later) => NextStep::RollBackLaterFirst {
                    later: *later,
                    tx: *tx,
                },
                None => NextStep::ForceRollBack { tx: *tx },
            },
            // Nothing to commit: dropped; conflict markers (a rebase's, or left by
            // hand) are fixed in an editor first.
            Error::ValidationFailed { tx, summary, .. } => step_past_validation(*tx, summary),
            Error::LockTimeout { .. } => NextStep::WaitForLock,
            // The same command again, as a command line that runs (issue 33, item 9).
            Error::Interrupted {
                rollback_of: Some(of),
                ..
            } => NextStep::RollBackAgain { of: *of },
            Error::Interrupted { tx, .. } => NextStep::Commit { tx: *tx },
            Error::OwnerNotKept { tx, .. } => NextStep::AllowOwnerChange { tx: *tx },
            Error::RecoveryNeedsOwner { files, .. } => NextStep::RecoverAsOwner {
                uid: files.first().map(|f| f.uid).unwrap_or(0),
            },
            Error::AclNotKept { .. } => NextStep::MountWithAcls,
            Error::AttentionOwnsFiles { foreign, .. } if foreign.is_empty() => NextStep::Recover,
            Error::AttentionOwnsFiles { .. } => NextStep::RecoverForeign,
            Error::OverwriteUndoesCommit { tx, batch, .. } => NextStep::DecideByHand {
                tx: *tx,
                batch: *batch,
            },
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
                // A next step is never a rollback unless the caller asked to undo
                // (`rollback`): an agent that retried a commit and followed "roll it
                // back" undid its own work (issue 29, item 3). A committed tx is shown.
                StateReason::Committed { .. } if *pruned => NextStep::History { tx: *tx },
                StateReason::Committed { .. } | StateReason::OtherRevisionCommitted { .. } => {
                    NextStep::Show { tx: *tx }
                }
                // Redoing a rolled-back change is a rollback (of the rollback): named
                // only to a caller who asked to roll back; the others get the history.
                StateReason::RolledBack { redo: Some(by), .. } if *verb == Verb::RollBack => {
                    NextStep::Redo { by: *by }
                }
                StateReason::RolledBack { by, redo: None } => {
                    NextStep::NothingToRedo { tx: *tx, by: *by }
                }
                StateReason::RolledBack { .. } => NextStep::Log,
                StateReason::Pruned if *verb == Verb::Show => NextStep::History { tx: *tx },
                // Nothing of an aborted tx is on the disk: "preview again" would
                // redo what its caller meant to undo; the log shows what to undo.
                StateReason::Aborted if matches!(verb, Verb::RollBack | Verb::Revert) => {
                    NextStep::Log
                }
                StateReason::Aborted | StateReason::Pruned => NextStep::PreviewAgain,
                StateReason::NotCommitted => NextStep::Commit { tx: *tx },
                StateReason::BatchInFlight {
                    state: BatchState::NeedsAttention,
                    ..
                } => NextStep::RecoverForeign,
                StateReason::BatchInFlight { .. } => NextStep::Recover,
                // The same verb again, on the same tx.
                StateReason::ChangedMeanwhile => match verb {
                    Verb::Commit | Verb::Apply => NextStep::Commit { tx: *tx },
                    Verb::RollBack => NextStep::RollBack { tx: *tx },
                    Verb::Revise => NextStep::Revise { tx: *tx },
                    Verb::Rebase => NextStep::Rebase { tx: *tx },
                    Verb::Abort => NextStep::Abort { tx: *tx },
                    Verb::Show | Verb::Revert => NextStep::Show { tx: *tx },
                },
                StateReason::RollbackTx { of } => NextStep::RollBackAgain { of: *of },
                StateReason::AlreadyUndone => NextStep::Log,
                StateReason::Redone { redo, .. } => NextStep::RollBack { tx: *redo },
            },
            Error::Journal(JournalError::IllegalTransition(_)) => NextStep::Retry,
            // A new handle (a new process) works again.
            Error::Journal(JournalError::HandleFailed { .. }) => NextStep::Retry,
            Error::Journal(_) => NextStep::RepairJournal,
            _ => return None,
        })
    }

    /// The files the error is about, as the journal or the plan names them
    /// (root-relative, sorted where the variant keeps them sorted): the stale paths of
    /// [`Error::StaleSnapshot`] and [`Error::StaleRollback`], the refused path of
    /// [`Error::Path`], the target paths of an [`Error::Edit`], the files of
    /// [`Error::OwnerNotKept`] and [`Error::AclNotKept`] and of a
    /// [`Error::NeedsAttention`] that names them.
    /// Empty for the others. With [`Error::kind`], [`Error::tx`] and
    /// [`Error::next_step`], the error's subject as data: a front end renders its own
    /// words from them.
    pub fn paths(&self) -> Vec<String> {
        match self {
            Error::StaleSnapshot { paths, .. }
            | Error::StaleRollback { paths, .. }
            | Error::AclNotKept { paths, .. }
            | Error::AttentionOwnsFiles { paths, .. }
            | Error::OverwriteUndoesCommit { paths, .. }
            | Error::UnresolvedConflicts { paths, .. }
            | Error::BaseChanged { paths, .. }
            | Error::NothingToChange { paths } => paths.clone(),
            Error::Path(p) => vec![p.path().to_string()],
            Error::Edit(e) => {
                let mut out: Vec<String> = e.failures().into_iter().map(|f| f.path).collect();
                if out.is_empty() {
                    out.extend(e.path().map(str::to_string));
                }
                out.dedup();
                out
            }
            Error::OwnerNotKept { files, .. } | Error::RecoveryNeedsOwner { files, .. } => {
                files.iter().map(|f| f.path.clone()).collect()
            }
            Error::NeedsAttention { attention, .. } => match attention {
                Attention::ForeignBytes { paths, .. } => paths.clone(),
                Attention::RevertNotRecorded { installed, .. } => installed.clone(),
                Attention::CompletionNotRecorded { files, .. } => files.clone(),
                _ => Vec::new(),
            },
            #[cfg(feature = "sandbox")]
            Error::Sandbox(SandboxError::Unrepresentable { paths }) => {
                paths.iter().map(|p| p.path.clone()).collect()
            }
            #[cfg(feature = "sandbox")]
            Error::Sandbox(
                SandboxError::OutOfScope { paths } | SandboxError::NonUtf8Names { paths },
            ) => paths.clone(),
            _ => Vec::new(),
        }
    }

    /// The error's message without a pointer to the journal's repair (for a front end
    /// that gives its own, and for `journal verify`'s own list of problems, where
    /// "verify the journal" would be circular). [`std::fmt::Display`] names no
    /// front end's commands either way.
    pub fn without_advice(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message a front end may show as is: none names a command-line flag or
    /// subcommand (the CLI adds its own `hint:` from [`Error::next_step`]).
    #[test]
    fn messages_name_no_front_end() {
        let io = || IoError {
            op: "write",
            path: "/w/a".into(),
            source: std::io::Error::from_raw_os_error(28),
        };
        let errors = [
            Error::ReadOnly {
                path: "/w/.ultra-edit/journal.redb".into(),
                what: "this command writes to it",
            },
            Error::StaleSnapshot {
                tx: 3,
                paths: vec!["a".into()],
                writers: Vec::new(),
            },
            Error::StaleRollback {
                tx: 3,
                paths: vec!["a".into()],
                changed_by: vec![4],
                outside: Vec::new(),
                absent: Vec::new(),
            },
            Error::OwnerNotKept {
                tx: 3,
                uid: 1000,
                files: vec![OwnedPath {
                    path: "a".into(),
                    uid: 0,
                    gid: 0,
                }],
            },
            Error::RecoveryNeedsOwner {
                tx: 3,
                batch: 1,
                completes: true,
                uid: 1000,
                files: vec![OwnedPath {
                    path: "a".into(),
                    uid: 0,
                    gid: 0,
                }],
            },
            Error::PreviewExpired {
                tx: 3,
                age_ms: 300_001,
                max_age_ms: 300_000,
            },
            Error::CommitFailed {
                tx: 3,
                batch: 1,
                cause: io(),
                temps_left: Vec::new(),
            },
            Error::Interrupted {
                tx: 3,
                batch: 1,
                temps_left: Vec::new(),
                rollback_of: None,
            },
            Error::Journal(JournalError::Corrupt {
                table: "txs",
                message: "bad".into(),
            }),
            Error::Journal(JournalError::Missing { what: "x".into() }),
            Error::WrongState {
                tx: 3,
                state: TxState::Committed,
                pruned: true,
                verb: Verb::Show,
                reason: StateReason::Pruned,
            },
            Error::ForeignHandle {
                handle: crate::TxHandle {
                    journal: crate::JournalId(1),
                    tx: 3,
                },
                journal: crate::JournalId(2),
                original_root: Some("/old".into()),
            },
            Error::StateDirOfOtherRoot {
                state_dir: "/s".into(),
                made_for: "/a".into(),
                root: "/b".into(),
            },
        ];
        for e in errors {
            let m = e.to_string();
            assert!(
                !m.contains('`') && !m.contains("--") && !m.contains("ultra-edit "),
                "{m}"
            );
        }
    }

    /// Stale messages list their files in plain English, and agree in number with them.
    #[test]
    fn stale_messages_agree_with_their_files() {
        let paths = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let snapshot = |p: &[&str]| {
            Error::StaleSnapshot {
                tx: 3,
                paths: paths(p),
                writers: Vec::new(),
            }
            .to_string()
        };
        assert_eq!(
            snapshot(&["a.txt"]),
            "stale snapshot of tx 3: a.txt changed on disk since the preview, so the preview must be rebased onto the disk (or made again)"
        );
        assert_eq!(
            snapshot(&["a.txt", "b.txt", "c.txt"]),
            "stale snapshot of tx 3: a.txt, b.txt and c.txt changed on disk since the preview, so the preview must be rebased onto the disk (or made again)"
        );
        let rollback = |p: &[&str]| {
            Error::StaleRollback {
                tx: 3,
                paths: paths(p),
                changed_by: Vec::new(),
                outside: Vec::new(),
                absent: Vec::new(),
            }
            .to_string()
        };
        assert_eq!(
            rollback(&["a.txt"]),
            "cannot roll back tx 3: a.txt changed (or was deleted) since it was committed; a forced rollback overwrites it after keeping its current bytes in the journal; a revert of tx 3 removes only its own change and keeps what was written since"
        );
        assert_eq!(
            rollback(&["a.txt", "b.txt"]),
            "cannot roll back tx 3: a.txt and b.txt changed (or were deleted) since it was committed; a forced rollback overwrites them after keeping their current bytes in the journal; a revert of tx 3 removes only its own change and keeps what was written since"
        );
        // Written outside ultra-edit too: said, and the step is the forced rollback, not
        // the later tx's rollback (which would not clear the refusal).
        let outside = |changed_by: Vec<u64>| Error::StaleRollback {
            tx: 3,
            paths: paths(&["a.txt", "b.txt"]),
            changed_by,
            outside: paths(&["b.txt"]),
            absent: Vec::new(),
        };
        assert_eq!(
            outside(vec![4]).to_string(),
            "cannot roll back tx 3: a.txt and b.txt changed (or were deleted) since it was committed (tx 4 has written there since, and b.txt was also written outside ultra-edit, which rolling tx 4 back would not undo); a forced rollback overwrites them, undoing tx 4's change there too, after keeping their current bytes in the journal; a revert of tx 3 removes only its own change and keeps the later changes"
        );
        assert_eq!(
            outside(Vec::new()).to_string(),
            "cannot roll back tx 3: a.txt and b.txt changed (or were deleted) since it was committed (b.txt was written outside ultra-edit); a forced rollback overwrites them after keeping their current bytes in the journal; a revert of tx 3 removes only its own change and keeps the later changes"
        );
        let absent = |p: &[&str], gone: &[&str]| {
            Error::StaleRollback {
                tx: 3,
                paths: paths(p),
                changed_by: Vec::new(),
                outside: Vec::new(),
                absent: paths(gone),
            }
            .to_string()
        };
        assert_eq!(
            absent(&["a.txt"], &["a.txt"]),
            "cannot roll back tx 3: a.txt is absent (deleted or moved since it was committed); a forced rollback re-creates it; a revert of tx 3 removes only its own change and keeps what was written since"
        );
        assert_eq!(
            absent(&["a.txt", "b.txt"], &["b.txt"]),
            "cannot roll back tx 3: a.txt changed and b.txt is absent (deleted or moved) since it was committed; a forced rollback overwrites a.txt after keeping its current bytes in the journal, and re-creates b.txt; a revert of tx 3 removes only its own change and keeps what was written since"
        );
        assert_eq!(
            outside(vec![4]).next_step(),
            Some(NextStep::ForceRollBack { tx: 3 })
        );
        assert_eq!(
            (count(1, "file"), count(2, "file")),
            ("1 file".into(), "2 files".into())
        );
    }

    #[test]
    fn kind_subject_and_next_step_are_data() {
        let e = Error::StaleSnapshot {
            tx: 3,
            paths: vec!["a.txt".into(), "b/c.txt".into()],
            writers: Vec::new(),
        };
        assert_eq!(e.kind(), "stale_snapshot");
        assert_eq!(e.tx(), Some(3));
        assert_eq!(e.paths(), ["a.txt", "b/c.txt"]);
        assert_eq!(e.next_step(), Some(NextStep::Rebase { tx: 3 }));
        assert_eq!(e.exit_code(), 3);
        let e = Error::PreviewExpired {
            tx: 4,
            age_ms: 10,
            max_age_ms: 5,
        };
        assert_eq!(
            (e.kind(), e.tx(), e.next_step(), e.exit_code()),
            ("preview_expired", Some(4), Some(NextStep::PreviewAgain), 1)
        );
        let e = Error::Path(PathError::Reserved {
            path: ".git/config".into(),
            area: ".git",
        });
        assert_eq!(e.paths(), [".git/config"]);
    }

    #[test]
    fn a_revision_with_conflicts_is_resolved_any_other_failure_revised() {
        let failed = |line: &str| Error::ValidationFailed {
            tx: 5,
            revision: 2,
            summary: vec![line.to_string()],
        };
        for line in [
            "merge_conflict f.txt: both sides changed the same lines",
            "conflict_markers f.txt: f.txt line 3: new merge conflict marker",
        ] {
            assert_eq!(
                failed(line).next_step(),
                Some(NextStep::Resolve { tx: 5 }),
                "{line}"
            );
        }
        assert_eq!(
            failed("syntax_error f.rs: f.rs line 1, column 1: …").next_step(),
            Some(NextStep::Revise { tx: 5 })
        );
    }
}
