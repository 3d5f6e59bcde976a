//! The serde types stored in the journal and printed by `--json`.
//!
//! These are the same types the library returns, so what the CLI prints is what the
//! journal holds. Times are milliseconds since the Unix epoch (UTC); sizes are bytes;
//! modes are Unix permission bits (`st_mode & 0o7777`).
//!
//! Stored types avoid serde features bincode cannot carry (`flatten`, internally tagged
//! enums, skipped fields): enums are externally tagged, e.g. `{"commit":{"revision":0}}`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::edit::{CandidateDiff, ConflictRegion, Issue};
use crate::fs::RelPath;

/// A blake3 hash of a blob's bytes: the blob's key in the journal.
///
/// Serialized as 64 lowercase hex characters in human-readable formats (JSON) and as 32
/// raw bytes in the journal.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlobHash(pub [u8; 32]);

impl BlobHash {
    /// blake3 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        BlobHash(*blake3::hash(bytes).as_bytes())
    }

    /// 64 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Parse 64 hex characters.
    pub fn from_hex(s: &str) -> Option<Self> {
        if s.len() != 64 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(BlobHash(out))
    }

    /// First 12 hex characters, for human output.
    pub fn short(&self) -> String {
        hex(&self.0[..6])
    }
}

/// Lowercase hex of `bytes`, two characters per byte. (A table lookup: formatting each
/// byte with `format!` cost ~300 instructions and an allocation per byte, 5 % of a
/// 10-file CLI commit's instructions in its receipt alone.)
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

impl fmt::Debug for BlobHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobHash({})", self.to_hex())
    }
}

impl fmt::Display for BlobHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for BlobHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_hex())
        } else {
            self.0.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for BlobHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let s = String::deserialize(d)?;
            BlobHash::from_hex(&s).ok_or_else(|| serde::de::Error::custom("expected 64 hex chars"))
        } else {
            Ok(BlobHash(<[u8; 32]>::deserialize(d)?))
        }
    }
}

/// The state of one path at one moment: a source snapshot, a candidate, or a batch's
/// pre- or post-image (docs/design.md, "Words").
///
/// Two states are the same file state exactly when they are `==`: absent both, or
/// files with the same blake3 (so the same bytes and size) and the same metadata.
/// Stored and printed (`--json`) as `{exists, hash, size, mode}` (`hash` null, `size`
/// and `mode` 0 when absent), the schema-v1 shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "FileStateRepr", into = "FileStateRepr")]
pub enum FileState {
    /// No regular file at the path.
    Absent,
    /// A regular file.
    File {
        /// blake3 of the bytes; the bytes are a blob of the journal.
        hash: BlobHash,
        /// Size in bytes.
        size: u64,
        /// What a commit keeps besides the bytes.
        meta: FileMeta,
    },
}

/// The metadata of a file that Ultra Edit records, compares (a change is a change of
/// state) and restores (docs/on-disk-format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// Unix permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Owner and group. `None`: not recorded — a file the batch creates gets whatever
    /// owner the process gives it, and records of schema ≤ 3 did not keep it; a
    /// comparison then ignores the owner ([`FileState::matches`]).
    pub owner: Option<Owner>,
    /// The blob of the file's `user.*` extended attributes and access ACL ([`Xattrs`], encoded; the
    /// empty set too). `None`: not recorded (a file the batch creates, records of
    /// schema ≤ 3); a comparison then ignores them.
    pub xattrs: Option<BlobHash>,
}

/// A file's `user.*` extended attributes and its POSIX access ACL
/// (`system.posix_acl_access`, in the form of [`crate::fs::acl::normalize`]), sorted by
/// name: what a commit keeps besides the bytes, mode and owner (`security.*` and
/// `trusted.*` are not kept; see docs/on-disk-format.md). Stored as a blob, named by
/// [`FileMeta::xattrs`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Xattrs(pub Vec<(String, Vec<u8>)>);

impl Xattrs {
    /// The blob bytes of this set (the journal's codec).
    pub fn encode(&self) -> Vec<u8> {
        crate::journal::codec::encode(self).unwrap_or_default()
    }

    /// The set a blob holds. Errors: [`crate::JournalError::Corrupt`].
    pub fn decode(bytes: &[u8]) -> Result<Xattrs, crate::error::JournalError> {
        crate::journal::codec::decode("blob (xattrs)", bytes)
    }

    /// The hash of the empty set. A state with no extended attributes names it, and
    /// no blob is stored for it (nor required: [`BlobRef`]s leave it out).
    pub fn empty_hash() -> BlobHash {
        static EMPTY: std::sync::OnceLock<BlobHash> = std::sync::OnceLock::new();
        *EMPTY.get_or_init(|| BlobHash::of(&Xattrs::default().encode()))
    }
}

/// A file's owner and group (`st_uid`, `st_gid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
}

/// The mode of a file a plan creates without giving one.
pub const DEFAULT_NEW_FILE_MODE: u32 = 0o644;

impl FileState {
    /// The state of an absent path.
    pub const ABSENT: FileState = FileState::Absent;

    /// The state of a file with `bytes` and permission bits `mode`, owner not recorded.
    pub fn present(bytes: &[u8], mode: u32) -> Self {
        FileState::with_meta(
            bytes,
            FileMeta {
                mode,
                owner: None,
                xattrs: None,
            },
        )
    }

    /// The state of a file with `bytes` and `meta`.
    pub fn with_meta(bytes: &[u8], meta: FileMeta) -> Self {
        FileState::File {
            hash: BlobHash::of(bytes),
            size: bytes.len() as u64,
            meta,
        }
    }

    /// Whether `found` (read from the disk) is this state: the same existence, bytes and
    /// mode, and — where this state recorded one — the same owner. The gate, the
    /// install's last check and recovery decide with it; exact record equality is `==`.
    pub fn matches(&self, found: &FileState) -> bool {
        match (self, found) {
            (FileState::Absent, FileState::Absent) => true,
            (
                FileState::File { hash, meta, .. },
                FileState::File {
                    hash: h2, meta: m2, ..
                },
            ) => {
                hash == h2
                    && meta.mode == m2.mode
                    && meta.owner.is_none_or(|o| m2.owner == Some(o))
                    && meta.xattrs.is_none_or(|x| m2.xattrs == Some(x))
            }
            _ => false,
        }
    }

    /// The recorded owner, if any.
    pub fn owner(&self) -> Option<Owner> {
        self.meta().and_then(|m| m.owner)
    }

    /// The blob of the recorded extended attributes, if recorded.
    pub fn xattrs(&self) -> Option<BlobHash> {
        self.meta().and_then(|m| m.xattrs)
    }

    /// Whether a regular file exists at the path.
    pub fn exists(&self) -> bool {
        matches!(self, FileState::File { .. })
    }

    /// blake3 of the bytes, `None` when absent.
    pub fn hash(&self) -> Option<BlobHash> {
        match self {
            FileState::File { hash, .. } => Some(*hash),
            FileState::Absent => None,
        }
    }

    /// Size in bytes (0 when absent).
    pub fn size(&self) -> u64 {
        match self {
            FileState::File { size, .. } => *size,
            FileState::Absent => 0,
        }
    }

    /// The recorded metadata, `None` when absent.
    pub fn meta(&self) -> Option<FileMeta> {
        match self {
            FileState::File { meta, .. } => Some(*meta),
            FileState::Absent => None,
        }
    }

    /// Permission bits, `None` when absent.
    pub fn mode(&self) -> Option<u32> {
        self.meta().map(|m| m.mode)
    }
}

/// The stored and printed shape of a [`FileState`].
#[derive(Clone, Copy, Serialize, Deserialize)]
struct FileStateRepr {
    exists: bool,
    hash: Option<BlobHash>,
    size: u64,
    mode: u32,
    owner: Option<Owner>,
    xattrs: Option<BlobHash>,
}

impl From<FileStateRepr> for FileState {
    fn from(r: FileStateRepr) -> Self {
        match (r.exists, r.hash) {
            (true, Some(hash)) => FileState::File {
                hash,
                size: r.size,
                meta: FileMeta {
                    mode: r.mode,
                    owner: r.owner,
                    xattrs: r.xattrs,
                },
            },
            _ => FileState::Absent,
        }
    }
}

impl From<FileState> for FileStateRepr {
    fn from(s: FileState) -> Self {
        FileStateRepr {
            exists: s.exists(),
            hash: s.hash(),
            size: s.size(),
            mode: s.mode().unwrap_or(0),
            owner: s.owner(),
            xattrs: s.xattrs(),
        }
    }
}

/// The stored shape of a [`FileState`] in schema ≤ 3 (no owner), for the migration.
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct FileStateV3 {
    exists: bool,
    hash: Option<BlobHash>,
    size: u64,
    mode: u32,
}

impl From<FileStateV3> for FileState {
    fn from(r: FileStateV3) -> Self {
        FileStateRepr {
            exists: r.exists,
            hash: r.hash,
            size: r.size,
            mode: r.mode,
            owner: None,
            xattrs: None,
        }
        .into()
    }
}

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
    /// `rollback`, `{"rollback_of":N}`; by `rebase`, `{"rebase_onto_disk":{"from_revision":N}}`.
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
/// `{"rebase_onto_disk":{"from_revision":N}}` or `{"command":{…}}` (serde's external
/// tagging).
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
mod hex_tests {
    use super::*;

    #[test]
    fn a_hash_prints_as_lowercase_hex_and_parses_back() {
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(0x1f) ^ 0xa5;
        }
        let h = BlobHash(bytes);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(h.to_hex(), expected);
        assert_eq!(
            h.to_hex(),
            "a5ba9bf8d93e1f7c5db293f0d136177455aa8be8c92e0f6c4da283e0c1260764"
        );
        assert_eq!(h.short(), "a5ba9bf8d93e");
        assert_eq!(h.to_string(), h.to_hex());
        assert_eq!(BlobHash::from_hex(&h.to_hex()), Some(h));
        // blake3 of the empty input, as its reference vectors print it
        assert_eq!(
            BlobHash::of(b"").to_hex(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }
}

#[cfg(test)]
mod file_state_tests {
    use super::*;

    #[test]
    fn file_state_keeps_its_stored_and_printed_shape() {
        let owner = Owner {
            uid: 1000,
            gid: 100,
        };
        let file = FileState::with_meta(
            b"hi\n",
            FileMeta {
                mode: 0o640,
                owner: Some(owner),
                xattrs: None,
            },
        );
        assert_eq!(
            serde_json::to_value(file).unwrap(),
            serde_json::json!({"exists": true, "hash": BlobHash::of(b"hi\n").to_hex(), "size": 3, "mode": 0o640, "owner": {"uid": 1000, "gid": 100}, "xattrs": null})
        );
        assert_eq!(
            serde_json::to_value(FileState::Absent).unwrap(),
            serde_json::json!({"exists": false, "hash": null, "size": 0, "mode": 0, "owner": null, "xattrs": null})
        );
        for s in [file, FileState::present(b"x", 0o644), FileState::Absent] {
            let bytes = crate::journal::codec::encode(&s).unwrap();
            // The bincode shape: the v1–v3 fields, then owner and xattrs (schema v4).
            let shape = (
                s.exists(),
                s.hash().map(|h| h.0),
                s.size(),
                s.mode().unwrap_or(0),
                s.owner().map(|o| (o.uid, o.gid)),
                s.xattrs().map(|h| h.0),
            );
            assert_eq!(bytes, crate::journal::codec::encode(&shape).unwrap());
            let back: FileState = crate::journal::codec::decode("test", &bytes).unwrap();
            assert_eq!(back, s);
            // A v3 record of it decodes with no owner (the migration's reading).
            let v3 = (
                s.exists(),
                s.hash().map(|h| h.0),
                s.size(),
                s.mode().unwrap_or(0),
            );
            let old: FileStateV3 =
                crate::journal::codec::decode("test", &crate::journal::codec::encode(&v3).unwrap())
                    .unwrap();
            assert_eq!(
                FileState::from(old),
                match s {
                    FileState::File { hash, size, meta } => FileState::File {
                        hash,
                        size,
                        meta: FileMeta {
                            owner: None,
                            ..meta
                        },
                    },
                    FileState::Absent => FileState::Absent,
                }
            );
        }
        // Equality is exact; `matches` ignores an owner not recorded.
        assert_ne!(file, FileState::present(b"hi\n", 0o640));
        assert!(FileState::present(b"hi\n", 0o640).matches(&file));
        assert!(!file.matches(&FileState::present(b"hi\n", 0o640)));
        assert!(!file.matches(&FileState::present(b"hi\n", 0o644)));
        let other = FileState::with_meta(
            b"hi\n",
            FileMeta {
                mode: 0o640,
                owner: Some(Owner { uid: 0, gid: 100 }),
                xattrs: None,
            },
        );
        assert!(!file.matches(&other));
        assert!(file.matches(&file));
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
    }
}
