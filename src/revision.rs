//! Building revisions (docs/design.md, "Lifecycle" › 1. Preview and 2. Iteration):
//! apply a plan to the files of a prior revision (or of the disk), diff and validate the
//! candidates, and record the result as a tx's next revision. Used by `preview`,
//! `revise`, `rebase` and `rollback`; it writes nothing outside the journal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::edit::{self, FileBase, FileCheck, Plan};
use crate::engine::Ws;
use crate::error::{Error, IoContext, Result, StateReason, Verb};
use crate::fs::RelPath;
use crate::fs::{path, snapshot};
use crate::journal::records::*;
use crate::journal::Writer;

/// A revision as returned by `preview`, `revise` and `show` (and printed by `--json`).
/// `#[non_exhaustive]`: fields will be added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Preview {
    /// Transaction number in this journal (the CLI's `TX`).
    pub tx: u64,
    /// The transaction's handle: its journal's id and `tx`, as a string
    /// (`"3f9a2c1b7d4e8a60-7"`). Every verb takes it; another journal refuses it.
    pub handle: crate::TxHandle,
    /// Revision number.
    pub revision: u32,
    /// When the tx was previewed (its first revision), in ms since the Unix epoch by
    /// the journal's clock: the time its age ([`crate::Journal::preview_age`]) and
    /// expiry are counted from.
    #[serde(default)]
    pub created_ms: u64,
    /// Latest revision of the tx.
    pub latest_revision: u32,
    /// The revision a commit applied to the disk, and its batch (as the tx record's
    /// `committed`): set once the tx is committed, and kept when it is rolled back;
    /// `None` for an open or aborted tx.
    #[serde(default)]
    pub committed: Option<crate::CommitRef>,
    /// The tx's state.
    pub state: TxState,
    /// Agent of the tx.
    pub agent: Option<String>,
    /// Description of the tx.
    pub description: Option<String>,
    /// The revision this one was built on.
    pub base: Option<u32>,
    /// Per file: snapshot, candidate and diff; sorted by path.
    pub files: Vec<FileRevision>,
    /// Validation report.
    pub validation: Vec<edit::Issue>,
    /// The tx is open and the validation report has no error: `commit` would pass the
    /// validation gate. Freshness is checked at commit time, and by [`Journal::show`]:
    /// there a revision with [`Preview::stale_paths`] is not ready either.
    pub ready_to_commit: bool,
    /// Files of an open tx whose disk state (bytes, existence, mode, owner, kept
    /// attributes) is no longer the revision's snapshot, sorted: a commit would be
    /// refused as stale ([`Error::StaleSnapshot`]) until a rebase. Checked by
    /// [`Journal::show`], which reads each file: `Some` from it for an open tx, `None`
    /// (not checked) from preview, revise and rebase and for a tx that is not open.
    #[serde(default)]
    pub stale_paths: Option<Vec<String>>,
    /// Sum of the files' added lines.
    pub lines_added: usize,
    /// Sum of the files' removed lines.
    pub lines_removed: usize,
    /// Files a rebase could not merge; a conflicted revision cannot be committed.
    pub conflicts: Vec<FileConflict>,
    /// The same conflicts as a list for people: file, 1-based line range of each
    /// marked region in the candidate, and the labelled sides.
    #[serde(default)]
    pub conflict_list: Vec<crate::ConflictEntry>,
    /// The batch of this tx that needs attention (a file holds foreign bytes), if any:
    /// the tx cannot be committed, revised or aborted until recovery settles it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_attention: Option<u64>,
    /// Every file of the revision, unchanged ones too, sorted by path, with the byte
    /// and line counts of its snapshot and candidate. `preview`, `revise` and `rebase`
    /// list every file the revision touched (the unchanged ones are known only while
    /// it is built); `show` lists the files of [`Preview::files`], counting their
    /// lines from the journal's blobs (it reads each file's two images).
    #[serde(default)]
    pub summary: Vec<FileSummary>,
    /// The shell command this revision was captured from (`preview --run`, `revise
    /// --run`, `run`; feature `sandbox`, docs/commands.md), with its exit status,
    /// duration and output tail; `None` for a revision made by a plan, a rollback or a
    /// rebase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandOrigin>,
    /// The files this call's plan wrote whole (`write_file`, `replace_file`) without
    /// an `expected_base`, in plan order: those writes were not checked against the
    /// content they were made from, so a change made on disk between the writer's
    /// read and this preview is overwritten by the commit (issue 29, item 7). Set by
    /// `preview` and `revise`; empty (and not serialized) otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked_base: Vec<String>,
}

impl Preview {
    /// The error a commit of this revision would be refused with for its validation
    /// errors ([`Error::ValidationFailed`], with the same summary lines), `None` when
    /// its validation report has no error. Front ends report a recorded revision that
    /// is not ready with it (the CLI's `--json` `error` object at exit 4).
    pub fn validation_error(&self) -> Option<Error> {
        edit::has_errors(&self.validation).then(|| Error::ValidationFailed {
            tx: self.tx,
            revision: self.revision,
            summary: error_summary(&self.validation),
        })
    }

    pub(crate) fn new(journal: crate::JournalId, tx: &TxRecord, rev: RevisionRecord) -> Self {
        Preview {
            tx: tx.tx,
            handle: crate::TxHandle { journal, tx: tx.tx },
            revision: rev.revision,
            created_ms: tx.created_ms,
            latest_revision: tx.revisions.saturating_sub(1),
            committed: tx.committed,
            state: tx.state,
            agent: tx.agent.clone(),
            description: tx.description.clone(),
            base: rev.base,
            needs_attention: tx.attention,
            ready_to_commit: tx.state == TxState::Open
                && tx.attention.is_none()
                && tx.rollback_of.is_none()
                && rev.ready_to_commit(),
            lines_added: rev.files.iter().map(|f| f.diff.lines_added).sum(),
            lines_removed: rev.files.iter().map(|f| f.diff.lines_removed).sum(),
            files: rev.files,
            validation: rev.validation,
            conflict_list: crate::conflicts::conflict_list(&rev.conflicts, &rev.plan),
            conflicts: rev.conflicts,
            summary: Vec::new(),
            stale_paths: None,
            command: RevisionOrigin::command_of(&rev.plan),
            unchecked_base: Vec::new(),
        }
    }

    pub(crate) fn with_summary(mut self, summary: Vec<FileSummary>) -> Self {
        self.summary = summary;
        self
    }

    /// With [`Preview::unchecked_base`] from `plan`.
    pub(crate) fn with_unchecked_base(mut self, plan: &crate::edit::Plan) -> Self {
        self.unchecked_base = plan
            .edits
            .iter()
            .filter(|e| e.is_unchecked_write())
            .map(|e| e.path().to_string())
            .collect();
        self
    }
}

/// A file of a revision as an MCP tool returns it: its path, whether the revision
/// changes it, and the sizes of its snapshot and candidate (docs/embedding.md,
/// "Preview results").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FileSummary {
    /// Root-relative path.
    pub path: String,
    /// The candidate differs from the snapshot (bytes, existence or mode). An
    /// unchanged file is in no batch and not in [`Preview::files`].
    pub changed: bool,
    /// The file at the snapshot; `None` when it did not exist.
    pub snapshot: Option<Size>,
    /// The candidate; `None` when the revision deletes the file (or it stays absent).
    pub candidate: Option<Size>,
}

/// The size and hash of a file's content (one side of a [`FileSummary`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Size {
    /// Length in bytes.
    pub bytes: u64,
    /// Number of lines: `\n` bytes, plus one for a last line without one (0 for an
    /// empty file), as `wc -l` counts plus the unterminated last line.
    pub lines: u64,
    /// The blake3 of the content (the snapshot's hash a host reports, m1nd's
    /// `content_hash`), as the journal records it.
    pub hash: BlobHash,
}

impl Size {
    /// The size of `bytes`, and their blake3.
    pub fn of(bytes: &[u8]) -> Size {
        Size::hashed(bytes, None)
    }

    /// The size of `bytes` whose blake3 is `hash` when known (not computed again).
    pub(crate) fn hashed(bytes: &[u8], hash: Option<BlobHash>) -> Size {
        Size {
            bytes: bytes.len() as u64,
            lines: crate::edit::count_lines(bytes) as u64,
            hash: hash.unwrap_or_else(|| BlobHash::of(bytes)),
        }
    }
}

/// A file's state while a revision is built: snapshot, candidate, and their bytes.
#[derive(Clone)]
pub(crate) struct Working {
    pub snapshot: FileState,
    pub snapshot_bytes: Option<Vec<u8>>,
    /// The blob of the snapshot's extended attributes when the snapshot was read from
    /// the disk now (recorded with the revision); `None` when it came from the journal.
    pub snapshot_xattrs: Option<Vec<u8>>,
    pub candidate: FileState,
    /// The candidate's bytes; `None` when it is absent. A large text-edited file's
    /// is [`Content::Spliced`] on `snapshot_bytes` (which then holds its base).
    pub candidate_bytes: Option<Content>,
    pub text_op_on_binary: bool,
    /// Findings of the plan's resolution for the validation report (see
    /// `FileCandidate::notes`).
    pub notes: Vec<edit::Issue>,
    /// Record the file with the revision even though its candidate equals its
    /// snapshot: a rebase sets it on a file an earlier revision named that moved on
    /// disk, so that the commit gate checks it against its new snapshot
    /// ([`gated_files`]). Never read back from the journal (`false` when loaded).
    pub keep: bool,
}

/// A candidate's bytes: whole, or (a large file's, issue 34) its snapshot with one
/// region replaced, so a preview holds one copy of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    /// The bytes themselves.
    Whole(Vec<u8>),
    /// The snapshot's bytes ([`Working::snapshot_bytes`]) with one region replaced.
    Spliced(edit::Spliced),
}

/// From this size of a file's snapshot (bytes) up, a preview keeps a text-edited
/// candidate as [`Content::Spliced`] instead of assembling it: the size from which a
/// commit streams a file (`batch::image::STREAM_ABOVE`).
pub(crate) const SPLICE_FROM_BYTES: usize = 8 << 20;

thread_local! {
    /// Tests: the size [`splice_from`] returns instead of [`SPLICE_FROM_BYTES`].
    static SPLICE_FROM: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The snapshot size (bytes) from which candidates are kept spliced on this thread:
/// [`SPLICE_FROM_BYTES`] unless a test set another with [`set_splice_from`].
pub(crate) fn splice_from() -> usize {
    SPLICE_FROM.with(|c| c.get()).unwrap_or(SPLICE_FROM_BYTES)
}

/// Tests only (re-exported `#[doc(hidden)]` at the crate root): keep candidates spliced
/// from `bytes` of snapshot up on this thread (`None`: the default), to prove both
/// paths record the same revision.
pub fn set_splice_from(bytes: Option<usize>) {
    SPLICE_FROM.with(|c| c.set(bytes));
}

impl Working {
    /// The candidate's whole bytes (assembled when spliced); `None` when absent, or
    /// when a spliced candidate's snapshot bytes are gone (they are kept with it).
    pub(crate) fn candidate_whole(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self.candidate_bytes.as_ref()? {
            Content::Whole(b) => Some(std::borrow::Cow::Borrowed(b)),
            Content::Spliced(s) => Some(std::borrow::Cow::Owned(
                s.to_vec(self.snapshot_bytes.as_deref()?),
            )),
        }
    }

    /// The candidate's bytes when they are whole ([`Content::Whole`]); `None` when
    /// absent or spliced: for the callers that run only on [`assemble`]d files or
    /// files loaded from the journal (merges, reverts).
    pub(crate) fn candidate_slice(&self) -> Option<&[u8]> {
        match self.candidate_bytes.as_ref()? {
            Content::Whole(b) => Some(b),
            Content::Spliced(_) => None,
        }
    }

    /// The candidate's bytes equal the snapshot's (both absent, or the same bytes).
    pub(crate) fn candidate_is_snapshot_bytes(&self) -> bool {
        match (&self.candidate_bytes, &self.snapshot_bytes) {
            (Some(Content::Spliced(s)), Some(base)) => s.unchanged(base),
            (Some(Content::Whole(c)), Some(b)) => c == b,
            (None, None) => true,
            _ => false,
        }
    }

    /// The spliced candidate and its base, when the candidate is kept spliced.
    fn spliced(&self) -> Option<(&[u8], &edit::Spliced)> {
        match (&self.candidate_bytes, &self.snapshot_bytes) {
            (Some(Content::Spliced(s)), Some(base)) => Some((base, s)),
            _ => None,
        }
    }
}

/// Every spliced candidate of `files` assembled whole ([`Content::Whole`]), for the
/// merges, which read candidates as one buffer.
pub(crate) fn assemble(files: &mut BTreeMap<RelPath, Working>) {
    for w in files.values_mut() {
        if let (Some(Content::Spliced(s)), Some(base)) = (&w.candidate_bytes, &w.snapshot_bytes) {
            w.candidate_bytes = Some(Content::Whole(s.to_vec(base)));
        }
    }
}

/// The validation errors of `issues` as `"{code} {path}: {message}"` lines, in order
/// ([`Error::ValidationFailed`]'s summary).
pub(crate) fn error_summary(issues: &[edit::Issue]) -> Vec<String> {
    issues
        .iter()
        .filter(|i| i.severity == edit::Severity::Error)
        .map(|i| match i.path.is_empty() {
            // An issue of the whole revision names no file (as `show` prints it).
            true => format!("{}: {}", i.code, i.message),
            false => format!("{} {}: {}", i.code, i.path, i.message),
        })
        .collect()
}

/// Every file the commit gate checks for revision `rev` of `txrec` (docs/design.md,
/// "Lifecycle" › 3. Commit gate): each path any revision `0..=rev` named, with the
/// snapshot the newest of them recorded — `rev`'s own files first, then the paths an
/// earlier revision named that `rev` leaves equal to their snapshot (deleted in
/// revision 0 and re-created with the same bytes in revision 1, say). Sorted by path.
/// Reads every revision up to `rev` (issue 29, item 4).
pub(crate) fn gated_files(
    r: &crate::journal::Reader,
    txrec: &TxRecord,
    rev: &RevisionRecord,
) -> Result<Vec<(RelPath, FileState)>> {
    let mut out: BTreeMap<RelPath, FileState> = rev
        .files
        .iter()
        .map(|f| (f.path.clone(), f.snapshot))
        .collect();
    for n in (0..rev.revision).rev() {
        // A revision `journal gc` dropped names nothing any more.
        let Some(older) = r.revision(txrec.tx, n)? else {
            continue;
        };
        for f in older.files {
            out.entry(f.path).or_insert(f.snapshot);
        }
    }
    Ok(out.into_iter().collect())
}

/// Snapshots and candidates of a recorded revision, with their bytes.
pub(crate) fn load_working(ws: &Ws, rev: &RevisionRecord) -> Result<BTreeMap<RelPath, Working>> {
    let mut files = load_candidates(ws, rev)?;
    for w in files.values_mut() {
        load_snapshot(ws, &w.snapshot, &mut w.snapshot_bytes)?;
    }
    Ok(files)
}

/// Like [`load_working`], with the bytes of the candidates only: an
/// existing snapshot's bytes are `None` until [`load_snapshot`].
pub(crate) fn load_candidates(ws: &Ws, rev: &RevisionRecord) -> Result<BTreeMap<RelPath, Working>> {
    let r = ws.store.read()?;
    let load = |s: &FileState, path: &RelPath| -> Result<Option<Content>> {
        match s.hash() {
            Some(h) => Ok(Some(Content::Whole(r.blob_required(&h).map_err(|e| {
                e.needed_by(|| {
                    format!(
                        "the candidate of {path} in revision {} of tx {}",
                        rev.revision, rev.tx
                    )
                })
            })?))),
            None => Ok(None),
        }
    };
    let mut out = BTreeMap::new();
    for f in &rev.files {
        out.insert(
            f.path.clone(),
            Working {
                snapshot: f.snapshot,
                snapshot_bytes: None,
                snapshot_xattrs: None,
                candidate: f.candidate,
                candidate_bytes: load(&f.candidate, &f.path)?,
                text_op_on_binary: false,
                notes: Vec::new(),
                keep: false,
            },
        );
    }
    Ok(out)
}

/// Load into `bytes` the bytes of `snapshot` if it exists and they are not loaded.
fn load_snapshot(ws: &Ws, snapshot: &FileState, bytes: &mut Option<Vec<u8>>) -> Result<()> {
    if let Some(h) = snapshot.hash() {
        if bytes.is_none() {
            *bytes = Some(ws.store.read()?.blob_required(&h)?);
        }
    }
    Ok(())
}

/// Apply `plan` on top of `prior` (the base revision's files; empty for a preview).
/// A snapshot of `prior` may come without its bytes; they are loaded here.
pub(crate) fn build(
    ws: &Ws,
    plan: &Plan,
    prior: BTreeMap<RelPath, Working>,
) -> Result<BTreeMap<RelPath, Working>> {
    // Every path is checked before any is read: one bad path refuses the whole plan.
    let mut groups: BTreeMap<RelPath, Vec<(usize, &edit::Edit)>> = BTreeMap::new();
    for (i, e) in plan.edits.iter().enumerate() {
        let rel = ws.normalize(e.path())?;
        path::check_on_disk(ws.fs.as_ref(), &ws.root, &rel, e.path())?;
        groups.entry(rel).or_default().push((i, e));
    }
    let mut out = BTreeMap::new();
    let mut touched = BTreeMap::new();
    // Every missing or ambiguous target of the plan, reported together.
    let mut unresolved = Vec::new();
    // Every whole-file write whose `expected_base` the base does not hold.
    let mut base_changed: Vec<(String, String)> = Vec::new();
    for (rel, mut w) in prior {
        if groups.contains_key(&rel) {
            touched.insert(rel, w);
        } else {
            load_snapshot(ws, &w.snapshot, &mut w.snapshot_bytes)?;
            out.insert(rel, w);
        }
    }
    for (rel, edits) in groups {
        // The base of the edits: the prior revision's candidate, or for a file
        // joining now, its snapshot itself (borrowed, not copied: a preview of a
        // large file holds one copy of its bytes, not two).
        let mut prior_file = touched.remove(&rel);
        let (snapshot, snapshot_bytes, snapshot_xattrs) = match &mut prior_file {
            Some(w) => (
                w.snapshot,
                w.snapshot_bytes.take(),
                w.snapshot_xattrs.take(),
            ),
            None => snapshot::read_state(ws.fs.as_ref(), &ws.root, &rel)?,
        };
        let (base_state, base_bytes) = match &prior_file {
            Some(w) => (w.candidate, w.candidate_slice()),
            None => (snapshot, snapshot_bytes.as_deref()),
        };
        for (_, e) in &edits {
            if let Some(found) = base_mismatch(e, &base_state) {
                base_changed.push((rel.to_string(), format!("{rel}: {found}")));
            }
        }
        let base = FileBase {
            bytes: base_bytes,
            mode: base_state.mode(),
        };
        // A large base keeps its candidate as splices (then the snapshot plus one
        // spliced region): one copy of the file, not two (issue 34).
        let spliceable = base_bytes.is_some_and(|b| b.len() >= splice_from());
        let resolved = match spliceable {
            true => edit::apply_file_edits_spliced(&rel, base, &edits),
            false => edit::apply_file_edits(&rel, base, &edits).map(|c| (c, None)),
        };
        let (mut cand, spliced) = match resolved {
            Ok(cand) => cand,
            Err(e) if e.is_target_failure() => {
                unresolved.push(crate::access::with_near_path(ws.fs.as_ref(), &rel, e));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut notes = cand.notes;
        // A file the plan creates whose name is a near miss of an existing one.
        if cand.exists && !base_state.exists() && !snapshot.exists() {
            notes.extend(crate::access::new_file_near_existing(ws.fs.as_ref(), &rel));
        }
        // A revision's splices apply to the old candidate: carried over to the
        // snapshot (with the region where the two differ), or assembled.
        let spliced = match (spliced, &prior_file) {
            (Some(sp), Some(w)) => {
                let old = w.candidate_slice().unwrap_or_default();
                match onto_snapshot(ws, sp.clone(), old, &w.candidate, &snapshot)? {
                    Some(onto) => Some(onto),
                    None => {
                        cand.bytes = sp.to_vec(old);
                        None
                    }
                }
            }
            (spliced, _) => spliced,
        };
        // The old candidate is no longer needed; the snapshot may now be loaded.
        let mut snapshot_bytes = snapshot_bytes;
        if prior_file.take().is_some() {
            load_snapshot(ws, &snapshot, &mut snapshot_bytes)?;
        }
        let (candidate, candidate_bytes) = if cand.exists {
            // An explicit mode; else the base's; else, for a path that existed at the
            // snapshot (deleted by an earlier revision), the snapshot's; else a new
            // file's, from the umask (docs/design.md, "Lifecycle" › 1. Preview).
            let mode = match cand.mode.or(base_state.mode()).or(snapshot.mode()) {
                Some(mode) => mode,
                None => new_file_mode(ws, &rel)?,
            };
            // The owner is the file's (or, re-created, the snapshot's); a new file's is
            // whatever the process gives it (not recorded).
            let meta = FileMeta {
                mode,
                owner: base_state.owner().or(snapshot.owner()),
                xattrs: base_state.xattrs().or(snapshot.xattrs()),
            };
            match (spliced, snapshot_bytes.as_deref()) {
                (Some(spliced), Some(base)) => {
                    let state = FileState::File {
                        hash: BlobHash(*spliced.hash(base).as_bytes()),
                        size: spliced.len(base) as u64,
                        meta,
                    };
                    (state, Some(Content::Spliced(spliced)))
                }
                // No splices, or (never: a spliced candidate's base is the snapshot,
                // loaded above) no base for them: the candidate's bytes are whole.
                _ => (
                    FileState::with_meta(&cand.bytes, meta),
                    Some(Content::Whole(cand.bytes)),
                ),
            }
        } else {
            (FileState::ABSENT, None)
        };
        out.insert(
            rel,
            Working {
                snapshot,
                snapshot_bytes,
                snapshot_xattrs,
                candidate,
                candidate_bytes,
                text_op_on_binary: cand.text_op_on_binary,
                notes,
                keep: false,
            },
        );
    }
    if !base_changed.is_empty() {
        let (paths, found) = base_changed.into_iter().unzip();
        return Err(Error::BaseChanged { paths, found });
    }
    if let Some(e) = edit::EditError::combine(unresolved) {
        return Err(e.into());
    }
    file_under_file(&out)?;
    // Permissions, seen now rather than as a failed rename at commit: on the first
    // changed file of each path (notes are rebuilt with every revision).
    let changed: Vec<(&RelPath, &FileState)> = out
        .iter()
        .filter(|(_, w)| w.snapshot != w.candidate)
        .map(|(rel, w)| (rel, &w.snapshot))
        .collect();
    let issues = crate::access::permission_issues(ws.fs.as_ref(), &changed);
    for issue in issues {
        let rel = RelPath::parse(&issue.path).ok();
        if let Some(w) = rel.and_then(|rel| out.get_mut(&rel)) {
            w.notes.push(issue);
        }
    }
    Ok(out)
}

/// `spliced`, splices on the old candidate `old` (bytes of state `old_state`), as
/// splices on the snapshot `snapshot` the old candidate was made from: the region
/// where the journal's blobs of the two differ (`Reader::blob_window`) joined with
/// `spliced`'s, its text taken from `old`. `None` when the journal cannot give that
/// window (a small or absent side): the caller assembles the candidate.
fn onto_snapshot(
    ws: &Ws,
    spliced: edit::Spliced,
    old: &[u8],
    old_state: &FileState,
    snapshot: &FileState,
) -> Result<Option<edit::Spliced>> {
    let (Some(s_hash), Some(p_hash)) = (snapshot.hash(), old_state.hash()) else {
        return Ok(None);
    };
    if s_hash == p_hash {
        return Ok(Some(spliced));
    }
    let Some(w) = ws.store.read()?.blob_window(&s_hash, &p_hash)? else {
        return Ok(None);
    };
    let start = usize::try_from(w.start).unwrap_or(usize::MAX);
    // The blobs differ in `old[start..old_end]`, `snapshot[start..snapshot_end]`.
    let (old_end, snapshot_end) = (start + w.new.len(), start + w.old.len());
    if old_end > old.len() || spliced.end > old.len() {
        return Ok(None);
    }
    let lo = spliced.start.min(start);
    let hi = spliced.end.max(old_end);
    let mut text = Vec::with_capacity(hi - lo + spliced.text.len());
    text.extend_from_slice(&old[lo..spliced.start]);
    text.extend_from_slice(&spliced.text);
    text.extend_from_slice(&old[spliced.end..hi]);
    Ok(Some(edit::Spliced {
        start: lo,
        end: snapshot_end + (hi - old_end),
        text,
    }))
}

/// Issues added to a revision's validation by its maker, from the files as built
/// (a check command's `check_passed` / `check_failed`, src/sandbox/check.rs).
pub(crate) type Extra<'a> =
    Option<&'a dyn Fn(&BTreeMap<RelPath, Working>) -> Result<Vec<edit::Issue>>>;
/// What the base holds, when the whole-file write `e` names an `expected_base` it
/// does not hold; `None` when it holds it or `e` names none.
fn base_mismatch(e: &edit::Edit, base: &FileState) -> Option<String> {
    // Checked by `Plan::checked_with`; an unreadable one expects what no file holds.
    let expected = e.expected_base()?.expected().ok()?;
    let found = match base.hash() {
        Some(h) => format!("blake3 {} ({} bytes)", h.to_hex(), base.size()),
        None => "no file".to_string(),
    };
    match (&expected, base.hash()) {
        (None, None) => None,
        (Some((hash, size)), Some(h))
            if *hash == h.to_hex() && size.is_none_or(|n| n == base.size()) =>
        {
            None
        }
        (None, Some(_)) => Some(format!("expected no file, found {found}")),
        (Some((hash, Some(n))), _) => {
            Some(format!("expected blake3 {hash} ({n} bytes), found {found}"))
        }
        (Some((hash, None)), _) => Some(format!("expected blake3 {hash}, found {found}")),
    }
}

/// Record `files` as the next revision of `txrec`, built on revision `base`. Fails
/// with [`Error::WrongState`] if the tx changed since `txrec` was read.
pub(crate) fn append(
    ws: &Ws,
    txrec: &TxRecord,
    base: u32,
    plan_json: String,
    files: BTreeMap<RelPath, Working>,
    conflicts: Vec<FileConflict>,
    policy: &crate::Policy,
    extra: Vec<edit::Issue>,
) -> Result<(TxRecord, RevisionRecord, Vec<FileSummary>)> {
    let tx = txrec.tx;
    let content = RevisionContent::of_with(files, conflicts, policy, extra);
    let summary = content.summary();
    let (txrec, rev) = ws.store.write(|w| {
        let now = w.tx(tx)?;
        if now.revisions != txrec.revisions
            || now.state != TxState::Open
            || w.has_inflight_batch(tx)?
        {
            return Err(Error::state(
                &now,
                Verb::Revise,
                StateReason::ChangedMeanwhile,
            ));
        }
        record_revision(w, tx, now.revisions, Some(base), plan_json, content)
    })?;
    Ok((txrec, rev, summary))
}

/// Refuse a revision in which one path is a file (before or after) and another lies
/// under it (`d` and `d/x`): no single batch can turn one into the other.
fn file_under_file(files: &BTreeMap<RelPath, Working>) -> Result<()> {
    for (p, w) in files {
        if !(w.snapshot.exists() || w.candidate.exists()) {
            continue;
        }
        let prefix = format!("{p}/");
        if let Some((q, _)) = files
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .filter(|(q, _)| q.starts_with(&prefix))
        {
            return Err(crate::error::PathError::WrongKind {
                path: q.to_string(),
                why: format!("{p} is a file in this transaction, so {q} cannot be under it; change them in two transactions"),
            }
            .into());
        }
    }
    Ok(())
}

/// What a revision records, computed before the journal write that records it: the
/// diffs (up to seconds for a large file) and the validation are pure, and a journal
/// write transaction holds the database's writer lock, which other processes wait on.
pub(crate) struct RevisionContent {
    /// The files, for their bytes (stored as blobs by [`record_revision`]).
    files: BTreeMap<RelPath, Working>,
    /// The files whose candidate differs from their snapshot, with their diffs.
    changed: Vec<FileRevision>,
    validation: Vec<edit::Issue>,
    conflicts: Vec<FileConflict>,
}

impl RevisionContent {
    /// The revision changes nothing and its policy refuses that: its validation has
    /// the error `no_changes`.
    pub fn changes_nothing(&self) -> bool {
        self.validation
            .iter()
            .any(|i| i.code == "no_changes" && i.severity == edit::Severity::Error)
    }

    /// Drop the validation issues with code `code` about the paths in `paths` (a
    /// revert's whole-file conflicts keep the disk's file on purpose: their
    /// `candidate_equals_source` warning would be about edits nobody wrote).
    pub fn drop_issues(&mut self, code: &str, paths: &std::collections::BTreeSet<String>) {
        self.validation
            .retain(|i| !(i.code == code && paths.contains(&i.path)));
    }

    /// Every file of the revision, changed or not, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.files.keys().map(|p| p.as_str().to_string()).collect()
    }

    /// Validate `files` and diff the changed ones. Files whose candidate equals their
    /// snapshot are validated (a `candidate_equals_source` warning) but leave the
    /// candidate set. Each conflict adds a `merge_conflict` error.
    ///
    /// `policy` may make `no_changes`, `conflict_markers` and `syntax_error` warnings
    /// ([`crate::Policy`]); the report recorded with the revision is what `commit`
    /// checks, so the choice is recorded with it.
    ///
    /// `extra` issues (a check's outcome, src/sandbox/check.rs) join the validation
    /// before the policy is applied; a `no_changes` one among them replaces the
    /// generic `no_changes` error's wording when the revision changes nothing, and is
    /// dropped otherwise (a `check_failed` error becomes a warning under
    /// [`crate::Checks::Allow`]).
    pub fn of_with(
        files: BTreeMap<RelPath, Working>,
        conflicts: Vec<FileConflict>,
        policy: &crate::Policy,
        extra: Vec<edit::Issue>,
    ) -> Self {
        let entries: Vec<(&RelPath, &Working)> = files.iter().collect();
        // A spliced candidate is checked and diffed over its base and region; one that
        // cannot be (small, binary) is assembled for that file alone (`whole`).
        let whole: Vec<Option<Vec<u8>>> = entries
            .iter()
            .map(|(_, f)| match f.spliced() {
                Some((base, s)) if !windowed(base, s) => Some(s.to_vec(base)),
                _ => None,
            })
            .collect();
        let checks: Vec<FileCheck<'_>> = entries
            .iter()
            .zip(&whole)
            .map(|((p, f), whole)| FileCheck {
                path: p,
                before: f.snapshot_bytes.as_deref(),
                after: whole.as_deref().or(f.candidate_slice()),
                text_op_on_binary: f.text_op_on_binary,
                meta_changed: meta_changed(&f.snapshot, &f.candidate),
            })
            .collect();
        // Per file, its diff (the hunk names parse the snapshot) and then its checks
        // (the syntax check reuses that tree for the candidate's incremental parse):
        // independent of the other files, so a codemod's files are worked on in
        // parallel ([`par_map`]); the results keep the files' order.
        let bytes_of = |(_, w): &(&RelPath, &Working)| {
            w.snapshot_bytes.as_ref().map_or(0, Vec::len)
                + match &w.candidate_bytes {
                    Some(Content::Whole(b)) => b.len(),
                    Some(Content::Spliced(s)) => s.text.len(),
                    None => 0,
                }
        };
        let per_file = par_map(&entries, bytes_of, |i, (path, f)| {
            let windowed = f.spliced().filter(|_| whole[i].is_none());
            let diff = (f.snapshot != f.candidate || f.keep).then(|| {
                let diff = match windowed {
                    Some((base, s)) => edit::window_diff(path, &s.diff_window(base))
                        .unwrap_or_else(|| {
                            edit::candidate_diff(path, Some(base), Some(&s.to_vec(base)))
                        }),
                    None => edit::candidate_diff(path, checks[i].before, checks[i].after),
                };
                FileRevision {
                    path: (*path).clone(),
                    snapshot: f.snapshot,
                    candidate: f.candidate,
                    diff: with_mode_lines(diff, &f.snapshot, &f.candidate),
                }
            });
            let issues = windowed
                .and_then(|(base, s)| {
                    edit::validate::check_spliced(
                        path,
                        base,
                        s,
                        f.text_op_on_binary,
                        checks[i].meta_changed,
                    )
                })
                .unwrap_or_else(|| edit::validate::check_file(&checks[i]));
            (issues, diff)
        });
        let mut validation = Vec::new();
        let mut changed = Vec::new();
        for (issues, diff) in per_file {
            validation.extend(issues);
            changed.extend(diff);
        }
        // A `no_changes` issue among `extra` is the maker's wording of it (a rebase
        // whose merge equals the disk says so), used only when nothing changes.
        let (worded, extra): (Vec<_>, Vec<_>) =
            extra.into_iter().partition(|i| i.code == "no_changes");
        let unchanged = entries.iter().zip(&checks).all(|((_, f), c)| {
            match f.spliced().filter(|_| c.after.is_none()) {
                Some((base, s)) => s.unchanged(base) && !c.meta_changed,
                None => c.before == c.after && !c.meta_changed,
            }
        });
        validation.extend(
            edit::validate::no_changes_if(unchanged)
                .map(|generic| worded.into_iter().next().unwrap_or(generic)),
        );
        validation.extend(extra);
        for issue in &mut validation {
            let allowed = match issue.code.as_str() {
                "no_changes" => policy.identical_content == crate::Identical::Allow,
                "conflict_markers" => policy.conflict_markers == crate::Markers::Allow,
                "syntax_error" => policy.syntax_errors == crate::SyntaxErrors::Allow,
                "check_failed" => policy.check_failed == crate::Checks::Allow,
                _ => false,
            };
            if allowed && issue.code == "syntax_error" {
                issue.message.push_str(
                    " (allowed by the policy's \"syntax_errors\": \"allow\", so it does not \
                     block a commit)",
                );
            }
            if allowed && issue.code == "check_failed" {
                issue.message.push_str(
                    " (allowed by the policy's \"check_failed\": \"allow\", so it does not \
                     block a commit)",
                );
            }
            if allowed {
                issue.severity = edit::Severity::Warning;
            }
        }
        validation.extend(files.values().flat_map(|f| f.notes.iter().cloned()));
        if policy.read_only_files == crate::ReadOnlyFiles::Refuse {
            for issue in validation.iter_mut().filter(|i| i.code == "read_only_file") {
                issue.severity = edit::Severity::Error;
                issue.message.push_str(
                    " (an error under the policy's \"read_only_files\": \"refuse\": the \
                     revision cannot be committed)",
                );
            }
        }
        validation.extend(conflicts.iter().map(conflict_issue));
        RevisionContent {
            files,
            changed,
            validation,
            conflicts,
        }
    }
}

impl RevisionContent {
    /// Every file, unchanged ones too, with the sizes of its snapshot and candidate.
    pub fn summary(&self) -> Vec<FileSummary> {
        self.files
            .iter()
            .map(|(path, f)| FileSummary {
                path: path.to_string(),
                changed: f.snapshot != f.candidate,
                snapshot: f
                    .snapshot_bytes
                    .as_deref()
                    .map(|b| Size::hashed(b, f.snapshot.hash())),
                candidate: match (f.spliced(), f.candidate_slice()) {
                    (Some((base, s)), _) => f.candidate.hash().map(|hash| Size {
                        bytes: s.len(base) as u64,
                        lines: s.count_lines(base) as u64,
                        hash,
                    }),
                    (None, b) => b.map(|b| Size::hashed(b, f.candidate.hash())),
                },
            })
            .collect()
    }
}

/// Whether the spliced candidate `s` of `base` is diffed and checked over its region
/// (else it is assembled for that): neither side binary, and large enough that the
/// window diff applies and no syntax check parses it.
fn windowed(base: &[u8], s: &edit::Spliced) -> bool {
    let least = crate::syntax::PARSE_MAX_BYTES + 1;
    base.len() >= least && s.len(base) >= least && !edit::is_binary(base) && !s.is_binary(base)
}

/// Whether a file that exists on both sides changes its metadata (mode).
fn meta_changed(before: &FileState, after: &FileState) -> bool {
    matches!((before.mode(), after.mode()), (Some(a), Some(b)) if a != b)
}

/// `diff` with git's extended header lines first: `old mode` / `new mode` when a file
/// that exists on both sides changes its mode, `new file mode` for a file the change
/// creates, `deleted file mode` for one it deletes (modes with the regular-file type
/// bits 100000, as git prints them).
pub(crate) fn with_mode_lines(
    mut diff: edit::CandidateDiff,
    before: &FileState,
    after: &FileState,
) -> edit::CandidateDiff {
    let header = match (before.mode(), after.mode()) {
        (Some(old), Some(new)) if old != new => format!(
            "old mode {:o}\nnew mode {:o}\n",
            0o100000 | old,
            0o100000 | new
        ),
        (None, Some(new)) => format!("new file mode {:o}\n", 0o100000 | new),
        (Some(old), None) => format!("deleted file mode {:o}\n", 0o100000 | old),
        _ => return diff,
    };
    diff.unified = header + &diff.unified;
    diff
}

/// At least this many files, and at least [`PAR_MIN_BYTES`] of them, before
/// [`par_map`] starts threads: below, a spawn (tens of µs) costs more than it saves.
const PAR_MIN_FILES: usize = 8;
/// See [`PAR_MIN_FILES`]: bytes of snapshots and candidates together.
const PAR_MIN_BYTES: usize = 256 * 1024;

/// `f(i, &items[i])` for every item, results in the items' order: on the calling
/// thread alone for a small revision (fewer than [`PAR_MIN_FILES`] items, or fewer
/// than [`PAR_MIN_BYTES`] by `bytes_of`), else on up to the machine's parallelism
/// (`std::thread::available_parallelism`, at most 8) scoped threads taking items in
/// turn. The work (diffs, parses) is CPU-bound and pure, so the result is the same
/// either way.
pub(crate) fn par_map<T: Sync, R: Send + Sync>(
    items: &[T],
    bytes_of: impl Fn(&T) -> usize,
    f: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let bytes: usize = items.iter().map(bytes_of).sum();
    let serial = || items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    // Decided before asking for the parallelism: `available_parallelism` reads the
    // cgroup's CPU quota from /proc and /sys (seven syscalls) on every call, which a
    // long-lived host's one-file preview would pay each time (issue 32, item 7).
    if items.len() < PAR_MIN_FILES || bytes < PAR_MIN_BYTES {
        return serial();
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(8)
        .min(items.len());
    if threads < 2 {
        return serial();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::OnceLock<R>> =
        items.iter().map(|_| std::sync::OnceLock::new()).collect();
    let work = || loop {
        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(item) = items.get(i) else {
            return;
        };
        let _ = slots[i].set(f(i, item));
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            // A thread that cannot be started (a process or cgroup thread limit) is
            // no error: the others, and this one, take its items.
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().expect("every item was mapped"))
        .collect()
}

/// Store the blobs of the changed files of `content` (under the hashes their
/// `FileState`s already carry) and record the revision as the tx's next one.
pub(crate) fn record_revision(
    w: &mut Writer,
    tx: u64,
    revision: u32,
    base: Option<u32>,
    plan: String,
    content: RevisionContent,
) -> Result<(TxRecord, RevisionRecord)> {
    for f in &content.changed {
        let Some(working) = content.files.get(&f.path) else {
            continue;
        };
        let snapshot = working
            .snapshot
            .hash()
            .zip(working.snapshot_bytes.as_deref());
        if let Some((hash, bytes)) = snapshot {
            w.put_blob_hashed(hash, bytes)?;
        }
        // The candidate differs from its snapshot where the plan edited it: only that
        // region is chunked and hashed (`Writer::put_blob_like`).
        match (working.candidate.hash(), &working.candidate_bytes, snapshot) {
            (Some(hash), Some(Content::Spliced(s)), Some((base_hash, base))) => {
                let bytes = crate::journal::blobs::SplicedBytes {
                    base,
                    start: s.start,
                    end: s.end,
                    text: &s.text,
                };
                w.put_blob_spliced(hash, base_hash, bytes)?;
            }
            (Some(hash), Some(content), _) => {
                let bytes = match content {
                    Content::Whole(b) => std::borrow::Cow::Borrowed(b.as_slice()),
                    // A spliced candidate's snapshot is always loaded with it.
                    Content::Spliced(_) => working.candidate_whole().unwrap_or_default(),
                };
                w.put_blob_like(hash, &bytes, snapshot)?;
            }
            _ => {}
        }
        if let Some(xattrs) = &working.snapshot_xattrs {
            w.put_blob(xattrs)?;
        }
    }
    let rec = RevisionRecord {
        tx,
        revision,
        base,
        created_ms: w.now(),
        plan,
        files: content.changed,
        validation: content.validation,
        conflicts: content.conflicts,
    };
    let tx = w.add_revision(&rec)?;
    Ok((tx, rec))
}

fn conflict_issue(c: &FileConflict) -> edit::Issue {
    let lines: Vec<String> = c
        .regions
        .iter()
        .map(|r| {
            format!(
                "{}-{}",
                r.merged_start,
                r.merged_start + r.merged_lines.saturating_sub(1)
            )
        })
        .collect();
    let at = if lines.is_empty() {
        String::new()
    } else {
        format!(" (conflict markers at lines {})", lines.join(", "))
    };
    let holds = if c.regions.is_empty() {
        "the candidate is one side's version of the whole file, without markers: saving it unchanged in `resolve` keeps it"
    } else {
        "the candidate holds both sides and their base between conflict markers"
    };
    edit::Issue {
        code: "merge_conflict".into(),
        severity: edit::Severity::Error,
        path: c.path.to_string(),
        message: format!(
            "{}{at}; resolve it in an editor with `resolve` or with a `revise` plan ({holds}), or abort and preview again",
            c.reason
        ),
    }
}

/// The mode open(2) gives a file created at `rel` when asked for `0666`: with a
/// default ACL on its nearest existing directory (which directories created beneath
/// it inherit), `0666` intersected with that ACL's permissions and no umask; else
/// `0666 & !umask` (docs/design.md, "Lifecycle" › 1. Preview). One `getxattr`.
fn new_file_mode(ws: &Ws, rel: &RelPath) -> Result<u32> {
    let dir = crate::batch::gate::nearest_existing_dir(ws, rel)?;
    let inherited = ws
        .fs
        .default_acl_permissions(&dir)
        .ctx("getxattr", ws.abs(&dir))?;
    Ok(match inherited {
        Some(allowed) => 0o666 & allowed,
        None => ws.new_file_mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn working(before: Option<&[u8]>, after: Option<&[u8]>) -> Working {
        let state =
            |b: Option<&[u8]>| b.map_or(FileState::ABSENT, |b| FileState::present(b, 0o644));
        Working {
            snapshot: state(before),
            snapshot_bytes: before.map(<[u8]>::to_vec),
            snapshot_xattrs: None,
            candidate: state(after),
            candidate_bytes: after.map(|a| Content::Whole(a.to_vec())),
            text_op_on_binary: false,
            notes: Vec::new(),
            keep: false,
        }
    }

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s).unwrap()
    }

    #[test]
    fn a_revision_records_changed_files_only_and_validates_all() {
        let mut files = BTreeMap::new();
        files.insert(rel("same.txt"), working(Some(b"x\n"), Some(b"x\n")));
        files.insert(rel("new.txt"), working(None, Some(b"n\n")));
        let content =
            RevisionContent::of_with(files, Vec::new(), &crate::Policy::default(), Vec::new());
        let changed: Vec<&str> = content.changed.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(changed, ["new.txt"]);
        assert_eq!(content.changed[0].diff.lines_added, 1);
        let codes: Vec<(&str, &str)> = content
            .validation
            .iter()
            .map(|i| (i.code.as_str(), i.path.as_str()))
            .collect();
        assert_eq!(codes, [("candidate_equals_source", "same.txt")]);
        // Nothing changes at all: a no_changes error, so not ready to commit.
        let mut files = BTreeMap::new();
        files.insert(rel("same.txt"), working(Some(b"x\n"), Some(b"x\n")));
        let content =
            RevisionContent::of_with(files, Vec::new(), &crate::Policy::default(), Vec::new());
        assert!(content.changed.is_empty());
        assert!(edit::has_errors(&content.validation));
    }

    #[test]
    fn a_file_and_a_path_under_it_cannot_share_a_revision() {
        let mut files = BTreeMap::new();
        files.insert(rel("d"), working(None, Some(b"")));
        files.insert(rel("d/x"), working(None, Some(b"")));
        files.insert(rel("d.txt"), working(None, Some(b"")));
        match file_under_file(&files) {
            Err(Error::Path(crate::error::PathError::WrongKind { path, .. })) => {
                assert_eq!(path, "d/x")
            }
            other => panic!("{other:?}"),
        }
        files.remove("d/x");
        assert!(file_under_file(&files).is_ok());
    }
}
