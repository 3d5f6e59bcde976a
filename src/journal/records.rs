//! The serde types stored in the journal and printed by `--json`.
//!
//! These are the same types the library returns, so what the CLI prints is what the
//! journal holds. Times are milliseconds since the Unix epoch (UTC); sizes are bytes;
//! modes are Unix permission bits (`st_mode & 0o7777`).
//!
//! Stored types avoid serde features bincode cannot carry (`flatten`, internally tagged
//! enums, skipped fields): enums are externally tagged, e.g. `{"commit":{"revision":0}}`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::edit::{CandidateDiff, ConflictRegion, Issue};
pub(crate) use crate::fs::meta::FileStateV3;
pub use crate::fs::meta::{BlobHash, FileMeta, FileState, Owner, Xattrs, DEFAULT_NEW_FILE_MODE};
use crate::fs::relpath::RelPath;

/// Lifecycle of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TxState {
    /// Previewed, possibly revised; not committed.
    Open,
    /// A revision was applied by a committed batch.
    Committed,
    /// Aborted by the user; accepts nothing further.
    Aborted,
    /// Committed, then restored by a rollback transaction.
    RolledBack,
}

impl TxState {
    /// Legal transitions of the transaction state machine (docs/commit-protocol.md,
    /// "State machines"): `Open → Committed` (its batch completed), `Open → Aborted`
    /// (`abort`, `journal gc --abort-open`, or a rollback tx whose batch was reverted),
    /// `Committed → RolledBack` (a rollback of it, or of the rollback that redid it,
    /// completed) and `RolledBack → Committed` (a rollback of its rollback completed:
    /// redo).
    pub fn can_become(self, next: TxState) -> bool {
        use TxState::*;
        matches!(
            (self, next),
            (Open, Committed) | (Open, Aborted) | (Committed, RolledBack) | (RolledBack, Committed)
        )
    }
}

impl fmt::Display for TxState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TxState::Open => "open",
            TxState::Committed => "committed",
            TxState::Aborted => "aborted",
            TxState::RolledBack => "rolled_back",
        })
    }
}

/// One transaction (table `txs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxRecord {
    /// Transaction id, from 1, allocated in journal order.
    pub tx: u64,
    /// Creation time (ms since epoch).
    pub created_ms: u64,
    /// Agent named by the plan.
    pub agent: Option<String>,
    /// Description of the plan.
    pub description: Option<String>,
    /// Current state.
    pub state: TxState,
    /// Number of revisions (latest is `revisions - 1`).
    pub revisions: u32,
    /// The committed revision and the batch that applied it.
    pub committed: Option<CommitRef>,
    /// For a rollback transaction: the tx it rolled back.
    pub rollback_of: Option<u64>,
    /// The rollback transaction that restored this one.
    pub rolled_back_by: Option<u64>,
    /// A batch of this tx that ended `NeedsAttention` (foreign bytes found).
    pub attention: Option<u64>,
    /// `journal gc` dropped this tx's revisions and the blobs only they needed (schema
    /// v2); its record, batches and receipts stay as history.
    pub pruned: bool,
}

/// Which revision a batch applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitRef {
    /// The revision applied.
    pub revision: u32,
    /// The batch that applied it.
    pub batch: u64,
}

/// One file of a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRevision {
    /// Path relative to the root, `/`-separated.
    pub path: RelPath,
    /// The source snapshot taken when the file joined the transaction.
    pub snapshot: FileState,
    /// The candidate.
    pub candidate: FileState,
    /// Diff snapshot → candidate.
    pub diff: CandidateDiff,
}

/// One revision of a transaction (table `revisions`, key `(tx, revision)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRecord {
    /// Transaction id.
    pub tx: u64,
    /// Revision number (0 from `preview`).
    pub revision: u32,
    /// The revision this one was built on.
    pub base: Option<u32>,
    /// Creation time (ms since epoch).
    pub created_ms: u64,
    /// The plan as JSON: [`crate::Plan::to_recorded_json`] of the plan given (an edit's
    /// string field over 64 KiB named by size and hash); for a revision made by
    /// `rollback`, `{"rollback_of":N}`; by `rebase`, `{"rebase_onto_disk":{"from_revision":N}}`;
    /// by `revert`, `{"revert_of":{"txs":[N,…]}}` (revision 0).
    pub plan: String,
    /// Files, sorted by path.
    pub files: Vec<FileRevision>,
    /// Validation report.
    pub validation: Vec<Issue>,
    /// Files a rebase could not merge cleanly (empty for a clean revision).
    pub conflicts: Vec<FileConflict>,
}

/// What a revision was made from when no plan made it, recorded as JSON in
/// [`RevisionRecord::plan`]: `{"rollback_of":N}`,
/// `{"rebase_onto_disk":{"from_revision":N}}`, `{"revert_of":{"txs":[N,…]}}` or
/// `{"command":{…}}` (serde's external tagging). Recorded as JSON inside the plan
/// string, a new origin needs no change of the journal's schema, and journals of
/// earlier versions read as before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RevisionOrigin {
    /// Revision 0 of the rollback of tx N.
    RollbackOf(u64),
    /// `rebase`: the latest revision's candidates merged onto the disk.
    RebaseOntoDisk {
        /// The revision rebased.
        from_revision: u32,
    },
    /// Revision 0 of a `revert`: the changes of `txs` (newest first) merged out of
    /// the disk (docs/design.md, "Revert").
    RevertOf {
        /// The txs reverted, newest first.
        txs: Vec<u64>,
    },
    /// `preview --run` / `revise --run` / `run`: what a shell command wrote on the
    /// workspace's overlay (docs/commands.md).
    Command(CommandOrigin),
}

/// The command a revision was captured from ([`RevisionOrigin::Command`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandOrigin {
    /// The command line, as given to `sh -c`.
    pub command: String,
    /// Its exit status (`None` when a signal ended it).
    pub status: Option<i32>,
    /// How long it ran, in milliseconds (wall clock, from spawn to exit).
    pub duration_ms: u64,
    /// The last 64 KiB of its standard output and standard error, as read (lossy
    /// UTF-8).
    pub output_tail: String,
    /// Changes dropped by the scope rules: under `.git/`, `.jj/`, `.hg/`, `.svn/` or
    /// the state directory.
    #[serde(default)]
    pub dropped_vcs: u64,
    /// Changes dropped because the repository's ignore rules ignore them.
    #[serde(default)]
    pub dropped_ignored: u64,
}

impl RevisionOrigin {
    /// The command origin recorded in `recorded_plan` ([`RevisionRecord::plan`]), if
    /// a command made the revision; `None` for a plan, a rollback or a rebase. Parses
    /// only a JSON object that starts with the `command` key.
    pub fn command_of(recorded_plan: &str) -> Option<CommandOrigin> {
        if !recorded_plan.starts_with("{\"command\"") {
            return None;
        }
        match serde_json::from_str(recorded_plan) {
            Ok(RevisionOrigin::Command(c)) => Some(c),
            _ => None,
        }
    }
}

impl RevisionOrigin {
    /// The JSON recorded in [`RevisionRecord::plan`].
    pub fn to_recorded_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A file a three-way rebase could not merge cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileConflict {
    /// Path relative to the root.
    pub path: RelPath,
    /// What conflicted, in words ("both changed the same lines", "deleted on disk,
    /// changed by the candidate", …).
    pub reason: String,
    /// The conflicting line regions (1-based lines); empty when the whole file
    /// conflicts (existence, binary content).
    pub regions: Vec<ConflictRegion>,
}

impl RevisionRecord {
    /// True when no validation issue has severity error. (A revision that changes no
    /// file carries a `no_changes` error, so it is not ready; freshness against the
    /// disk is checked only by `commit`.)
    pub fn ready_to_commit(&self) -> bool {
        !crate::edit::has_errors(&self.validation)
    }
}

/// States of a batch (docs/commit-protocol.md, "State machines").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchState {
    /// Intent durable, rollback material stored; nothing destructive done yet.
    Prepared,
    /// Past the commit point: the batch will be completed, never reverted by recovery.
    Committing,
    /// Completed; a receipt exists.
    Committed,
    /// Being reverted to its pre-images after an error.
    Reverting,
    /// Reverted; every file is as before.
    Aborted,
    /// Recovery found bytes it must not clobber; see `foreign`. Not terminal: every
    /// recovery retries it (it settles once the foreign bytes are gone), and
    /// `recover --overwrite` settles it by overwriting them (their bytes are kept).
    NeedsAttention,
}

impl BatchState {
    /// Terminal states leave the in-flight index.
    pub fn is_terminal(self) -> bool {
        matches!(self, BatchState::Committed | BatchState::Aborted)
    }

    /// Legal transitions of the state machine.
    pub fn can_become(self, next: BatchState) -> bool {
        use BatchState::*;
        matches!(
            (self, next),
            (Prepared, Committing)
                | (Prepared, Aborted)
                | (Prepared, Reverting)
                | (Prepared, NeedsAttention)
                | (Committing, Committed)
                | (Committing, Reverting)
                | (Committing, NeedsAttention)
                | (Reverting, Aborted)
                | (Reverting, NeedsAttention)
                | (NeedsAttention, Committed)
                | (NeedsAttention, Aborted)
                | (NeedsAttention, NeedsAttention)
        )
    }
}

impl BatchRecord {
    /// Whether the batch ever recorded its commit point (files may have been installed).
    pub fn reached_commit_point(&self) -> bool {
        self.history
            .iter()
            .any(|h| h.state == BatchState::Committing)
    }

    /// The side recovery drives this batch to: post-images once past the commit point
    /// (`Committing`, or `NeedsAttention` reached from it), else pre-images.
    pub fn rolls_forward(&self) -> bool {
        let before_attention = self
            .history
            .iter()
            .rev()
            .map(|h| h.state)
            .find(|s| *s != BatchState::NeedsAttention);
        before_attention == Some(BatchState::Committing)
    }
}

impl fmt::Display for BatchState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        f.write_str(&s)
    }
}

/// What a batch applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// A commit of a revision of its tx.
    Commit {
        /// Revision applied.
        revision: u32,
    },
    /// A rollback: its tx restores the pre-state of `of`.
    Rollback {
        /// The tx rolled back.
        of: u64,
        /// Whether changed files were overwritten (`--force`).
        forced: bool,
    },
}

/// One file of a batch: the state before and the state after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchFile {
    /// Path relative to the root.
    pub path: RelPath,
    /// State before the batch (rollback material: its blob is in the journal).
    pub pre: FileState,
    /// State after the batch (its blob is in the journal).
    pub post: FileState,
}

/// A state change of a batch, with its time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    /// New state.
    pub state: BatchState,
    /// When (ms since epoch).
    pub at_ms: u64,
    /// Why, for error paths and recovery.
    pub note: Option<String>,
}

/// Bytes found on disk that belong to neither side of a batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignWrite {
    /// Path relative to the root.
    pub path: RelPath,
    /// What was found (its blob is stored in the journal when it is a regular file).
    pub found: FileState,
    /// Why it was left alone.
    pub note: String,
}

/// One on-disk application (table `batches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// Batch id, from 1.
    pub batch: u64,
    /// The tx applied.
    pub tx: u64,
    /// Commit or rollback.
    pub kind: BatchKind,
    /// Current state.
    pub state: BatchState,
    /// Random part of the batch's temp file names (`.ue-<batch>-<index>-<nonce>.tmp`),
    /// so that no existing file, nor a file of the batch itself, can share a name with
    /// a temp.
    pub nonce: u64,
    /// Files, sorted by path.
    pub files: Vec<BatchFile>,
    /// Directories this batch creates, parents first.
    pub create_dirs: Vec<RelPath>,
    /// Directories this batch removes when empty after installing, deepest first.
    pub remove_dirs: Vec<RelPath>,
    /// Every state change, in order.
    pub history: Vec<StateChange>,
    /// Foreign bytes found by recovery.
    pub foreign: Vec<ForeignWrite>,
}

/// What a record keeps a blob for ([`BlobRef::role`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobRole {
    /// A revision's source snapshot of a file.
    Snapshot,
    /// A revision's candidate.
    Candidate,
    /// A batch's pre-image (rollback material).
    PreImage,
    /// A batch's post-image.
    PostImage,
    /// Bytes recovery found in a file of a batch and kept before leaving or
    /// overwriting them.
    ForeignBytes,
    /// A file state's extended attributes ([`Xattrs`]).
    Xattrs,
}

impl fmt::Display for BlobRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlobRole::Snapshot => "snapshot",
            BlobRole::Candidate => "candidate",
            BlobRole::PreImage => "pre-image",
            BlobRole::PostImage => "post-image",
            BlobRole::ForeignBytes => "foreign bytes",
            BlobRole::Xattrs => "xattrs",
        })
    }
}

/// One reference from a record to a blob: the one list of what references what, used
/// by `journal gc` (what to keep) and `journal verify` (what must be there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobRef<'a> {
    /// The blob.
    pub hash: BlobHash,
    /// The file (root-relative) it is an image of.
    pub path: &'a str,
    /// What it is kept for.
    pub role: BlobRole,
}

fn refs_of<'a>(
    path: &'a str,
    states: impl IntoIterator<Item = (&'a FileState, BlobRole)>,
) -> impl Iterator<Item = BlobRef<'a>> {
    states.into_iter().flat_map(move |(s, role)| {
        let content = s.hash().map(|hash| BlobRef { hash, path, role });
        let xattrs = s
            .xattrs()
            .filter(|h| *h != Xattrs::empty_hash())
            .map(|hash| BlobRef {
                hash,
                path,
                role: BlobRole::Xattrs,
            });
        content.into_iter().chain(xattrs)
    })
}

impl RevisionRecord {
    /// Every blob this revision references: each file's snapshot and candidate.
    pub fn blob_refs(&self) -> Vec<BlobRef<'_>> {
        self.files
            .iter()
            .flat_map(|f| {
                refs_of(
                    &f.path,
                    [
                        (&f.snapshot, BlobRole::Snapshot),
                        (&f.candidate, BlobRole::Candidate),
                    ],
                )
            })
            .collect()
    }
}

impl BatchRecord {
    /// Every blob this batch references: each file's pre- and post-image, and the
    /// foreign bytes recovery kept.
    pub fn blob_refs(&self) -> Vec<BlobRef<'_>> {
        let images = self.files.iter().flat_map(|f| {
            refs_of(
                &f.path,
                [(&f.pre, BlobRole::PreImage), (&f.post, BlobRole::PostImage)],
            )
        });
        let foreign = self
            .foreign
            .iter()
            .flat_map(|f| refs_of(&f.path, [(&f.found, BlobRole::ForeignBytes)]));
        images.chain(foreign).collect()
    }
}

/// The record a finished commit or rollback emits (table `receipts`, key batch id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The transaction.
    pub tx: u64,
    /// The batch.
    pub batch: u64,
    /// Commit or rollback.
    pub kind: BatchKind,
    /// Files changed, sorted by path, with their states before and after.
    pub files: Vec<BatchFile>,
    /// Directories created.
    pub created_dirs: Vec<RelPath>,
    /// Directories removed.
    pub removed_dirs: Vec<RelPath>,
    /// Total bytes of the files written.
    pub bytes_written: u64,
    /// The time of the batch's commit point (ms since the Unix epoch): when its intent
    /// became durable, the moment from which the batch lands whatever happens. Taken
    /// from the batch record, so the receipt `commit` returns and the one the journal
    /// holds agree even when recovery wrote the latter (docs/commit-protocol.md, steps 6–7).
    /// (Receipts of earlier versions hold their completion's time.)
    pub at_ms: u64,
    /// True when recovery, not the committing process, completed the batch.
    pub by_recovery: bool,
}

/// What happened, in journal order (table `events`, key `seq`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A tx was created by `preview` or `rollback`.
    TxCreated {
        /// Tx id.
        tx: u64,
        /// For a rollback tx.
        rollback_of: Option<u64>,
    },
    /// A revision was recorded.
    RevisionRecorded {
        /// Tx id.
        tx: u64,
        /// Revision.
        revision: u32,
    },
    /// A new blob was stored.
    BlobStored {
        /// Its key.
        hash: BlobHash,
        /// Its size in bytes.
        size: u64,
    },
    /// A batch entered a state.
    BatchState {
        /// Batch id.
        batch: u64,
        /// Tx id.
        tx: u64,
        /// New state.
        state: BatchState,
        /// Why.
        note: Option<String>,
    },
    /// A receipt was issued.
    ReceiptIssued {
        /// Batch id.
        batch: u64,
        /// Tx id.
        tx: u64,
    },
    /// A tx was aborted.
    TxAborted {
        /// Tx id.
        tx: u64,
    },
    /// `journal gc` ran.
    Gc {
        /// Transactions pruned.
        txs_pruned: u64,
        /// Blobs dropped.
        blobs_dropped: u64,
        /// Bytes freed.
        bytes_freed: u64,
    },
    /// Recovery acted on a batch.
    Recovery {
        /// Batch id.
        batch: u64,
        /// What it did.
        action: String,
    },
}

impl EventKind {
    /// The snake_case name of the kind, as `--json` prints it and `--kind` takes it.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::TxCreated { .. } => "tx_created",
            EventKind::RevisionRecorded { .. } => "revision_recorded",
            EventKind::BlobStored { .. } => "blob_stored",
            EventKind::BatchState { .. } => "batch_state",
            EventKind::ReceiptIssued { .. } => "receipt_issued",
            EventKind::TxAborted { .. } => "tx_aborted",
            EventKind::Gc { .. } => "gc",
            EventKind::Recovery { .. } => "recovery",
        }
    }

    /// Every kind name, for `--kind` validation.
    pub const NAMES: &'static [&'static str] = &[
        "tx_created",
        "revision_recorded",
        "blob_stored",
        "batch_state",
        "receipt_issued",
        "tx_aborted",
        "gc",
        "recovery",
    ];
}

/// One entry of the event log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Sequence number, from 1, gap-free.
    pub seq: u64,
    /// When (ms since epoch).
    pub at_ms: u64,
    /// What.
    pub kind: EventKind,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod blob_ref_tests {
    use super::*;

    #[test]
    fn blob_refs_list_every_present_image_once_and_skip_absent_ones() {
        let (a, b, c) = (b"a".as_slice(), b"b".as_slice(), b"c".as_slice());
        let rev = RevisionRecord {
            tx: 1,
            revision: 0,
            base: None,
            created_ms: 0,
            plan: String::new(),
            files: vec![FileRevision {
                path: RelPath::parse("new.txt").unwrap(),
                snapshot: FileState::ABSENT,
                candidate: FileState::present(a, 0o644),
                diff: CandidateDiff {
                    unified: String::new(),
                    lines_added: 1,
                    lines_removed: 0,
                    binary: false,
                    lossy: false,
                },
            }],
            validation: Vec::new(),
            conflicts: Vec::new(),
        };
        assert_eq!(
            rev.blob_refs(),
            [BlobRef {
                hash: BlobHash::of(a),
                path: "new.txt",
                role: BlobRole::Candidate
            }]
        );
        let batch = BatchRecord {
            batch: 1,
            tx: 1,
            kind: BatchKind::Commit { revision: 0 },
            state: BatchState::NeedsAttention,
            nonce: 0,
            files: vec![
                BatchFile {
                    path: RelPath::parse("f").unwrap(),
                    pre: FileState::present(a, 0o644),
                    post: FileState::present(b, 0o600),
                },
                BatchFile {
                    path: RelPath::parse("gone").unwrap(),
                    pre: FileState::present(b, 0o644),
                    post: FileState::ABSENT,
                },
            ],
            create_dirs: Vec::new(),
            remove_dirs: Vec::new(),
            history: Vec::new(),
            foreign: vec![ForeignWrite {
                path: RelPath::parse("f").unwrap(),
                found: FileState::present(c, 0o644),
                note: String::new(),
            }],
        };
        let refs: Vec<(&str, BlobRole, BlobHash)> = batch
            .blob_refs()
            .iter()
            .map(|r| (r.path, r.role, r.hash))
            .collect();
        assert_eq!(
            refs,
            [
                ("f", BlobRole::PreImage, BlobHash::of(a)),
                ("f", BlobRole::PostImage, BlobHash::of(b)),
                ("gone", BlobRole::PreImage, BlobHash::of(b)),
                ("f", BlobRole::ForeignBytes, BlobHash::of(c)),
            ]
        );
    }
}

#[cfg(test)]
mod origin_tests {
    use super::RevisionOrigin;

    #[test]
    fn revision_origins_keep_their_recorded_json() {
        assert_eq!(
            RevisionOrigin::RollbackOf(3).to_recorded_json(),
            r#"{"rollback_of":3}"#
        );
        assert_eq!(
            RevisionOrigin::RebaseOntoDisk { from_revision: 2 }.to_recorded_json(),
            r#"{"rebase_onto_disk":{"from_revision":2}}"#
        );
        assert_eq!(
            RevisionOrigin::RevertOf { txs: vec![9, 7] }.to_recorded_json(),
            r#"{"revert_of":{"txs":[9,7]}}"#
        );
    }
}
