//! Preview, revise, show, abort and log: the in-memory stages of a transaction (seed
//! stages 1–2). Nothing here writes outside `.ultra-edit/`; everything is recorded in
//! the journal before the verb returns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::batch::gate::same_state;
use crate::edit::{self, FileBase, FileCheck, Plan};
use crate::error::{Error, Result};
use crate::fs::{path, snapshot};
use crate::journal::records::*;
use crate::workspace::Journal;

/// A revision as returned by `preview`, `revise` and `show` (and printed by `--json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// Transaction id: the handle the other verbs take.
    pub tx: u64,
    /// Revision number.
    pub revision: u32,
    /// Latest revision of the tx.
    pub latest_revision: u32,
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
    /// validation gate (freshness is checked at commit time).
    pub ready_to_commit: bool,
    /// Sum of the files' added lines.
    pub lines_added: usize,
    /// Sum of the files' removed lines.
    pub lines_removed: usize,
    /// Files a rebase could not merge; a conflicted revision cannot be committed.
    pub conflicts: Vec<FileConflict>,
}

impl Preview {
    fn new(tx: &TxRecord, rev: RevisionRecord) -> Self {
        Preview {
            tx: tx.tx,
            revision: rev.revision,
            latest_revision: tx.revisions.saturating_sub(1),
            state: tx.state,
            agent: tx.agent.clone(),
            description: tx.description.clone(),
            base: rev.base,
            ready_to_commit: tx.state == TxState::Open
                && tx.rollback_of.is_none()
                && rev.ready_to_commit(),
            lines_added: rev.files.iter().map(|f| f.diff.lines_added).sum(),
            lines_removed: rev.files.iter().map(|f| f.diff.lines_removed).sum(),
            files: rev.files,
            validation: rev.validation,
            conflicts: rev.conflicts,
        }
    }
}

/// One line of `log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Transaction id.
    pub tx: u64,
    /// Creation time, ms since epoch.
    pub created_ms: u64,
    /// Agent.
    pub agent: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// State.
    pub state: TxState,
    /// Paths of the latest revision (or of the committed one). For a tx pruned by
    /// `journal gc`, the paths of its commit's receipt (none if it never committed).
    pub files: Vec<String>,
    /// Added lines of that revision.
    pub lines_added: usize,
    /// Removed lines of that revision.
    pub lines_removed: usize,
    /// Number of revisions.
    pub revisions: u32,
    /// The committed revision and batch.
    pub committed: Option<CommitRef>,
    /// `needs_attention` when a batch of this tx found foreign bytes (see `recover`).
    pub batch_state: Option<BatchState>,
    /// The tx this one rolled back.
    pub rollback_of: Option<u64>,
    /// The tx that rolled this one back.
    pub rolled_back_by: Option<u64>,
    /// `journal gc` dropped its revisions: line counts are then 0 and `files` come
    /// from the receipt.
    pub pruned: bool,
}

/// Options of [`Journal::revise`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ReviseOptions {
    /// The revision the plan was written against (default: the latest).
    pub base: Option<u32>,
    /// Accept a plan written against an older revision by merging it onto the latest.
    pub rebase: bool,
}

/// A file's state while a revision is built: snapshot, candidate, and their bytes.
#[derive(Clone)]
pub(crate) struct Working {
    pub snapshot: FileState,
    pub snapshot_bytes: Option<Vec<u8>>,
    pub candidate: FileState,
    pub candidate_bytes: Option<Vec<u8>>,
    pub text_op_on_binary: bool,
}

impl Journal {
    /// Stage 1 of the seed: snapshot every file of `plan`, resolve its edits against one
    /// base, build the candidates in memory, diff and validate them, and record the new
    /// tx's revision 0 in the journal.
    ///
    /// Errors: [`Error::Edit`] (target not found, ambiguous, overlapping, …),
    /// [`Error::Path`] (one bad path refuses the whole plan). Writes nothing outside
    /// `.ultra-edit/`.
    pub fn preview(&self, plan: &Plan) -> Result<Preview> {
        crate::workspace::guarded(|| {
            let files = self.build(plan, BTreeMap::new())?;
            let plan_json = plan_to_json(plan);
            let content = RevisionContent::of(files, Vec::new());
            let (tx, rev) = self.ws.store.write(|w| {
                let tx = w.create_tx(plan.agent.clone(), plan.description.clone(), None)?;
                record_revision(w, tx.tx, 0, None, plan_json, content)
            })?;
            Ok(Preview::new(&tx, rev))
        })
    }

    /// Stage 2 of the seed: a new revision of `tx`, made by applying `plan` to the
    /// candidates of the latest revision. Line numbers and matches in `plan` refer to
    /// that revision's candidates, never to the disk or an older revision. A file the
    /// plan touches for the first time is snapshotted now; a file whose candidate
    /// becomes equal to its snapshot leaves the candidate set.
    ///
    /// `opts.base` names the revision the plan was written against. If it is not the
    /// latest, the plan is refused with [`Error::StaleRevision`] unless `opts.rebase`:
    /// then it is applied to that revision and the result is merged three-way onto the
    /// latest (base = revision `base`, ours = the plan's result, theirs = latest); a
    /// conflict makes a revision marked conflicted that `commit` refuses.
    ///
    /// Errors: [`Error::UnknownTx`], [`Error::UnknownRevision`], [`Error::WrongState`]
    /// (the tx is not open, or another process revised it meanwhile),
    /// [`Error::StaleRevision`], and those of [`Journal::preview`].
    pub fn revise(&self, tx: u64, opts: ReviseOptions, plan: &Plan) -> Result<Preview> {
        crate::workspace::guarded(|| {
            let (txrec, latest) = self.latest_open(tx, "be revised")?;
            let base = match opts.base {
                Some(n) if n > latest.revision => {
                    return Err(Error::UnknownRevision {
                        tx,
                        revision: n,
                        latest: latest.revision,
                    })
                }
                Some(n) if n != latest.revision => {
                    if !opts.rebase {
                        return Err(Error::StaleRevision {
                            tx,
                            base: n,
                            latest: latest.revision,
                        });
                    }
                    self.ws.store.read()?.revision_of(&txrec, Some(n))?
                }
                _ => latest.clone(),
            };
            let mut conflicts = Vec::new();
            let files = if base.revision != latest.revision {
                // The base revision's candidates are the merge base too: loaded twice
                // rather than copied, and without their snapshots, which the merge
                // does not use.
                let prior = self.load_candidates(&base)?;
                let files = self.build(plan, self.load_candidates(&base)?)?;
                let theirs = self.load_working(&latest)?;
                let merged;
                (merged, conflicts) = crate::rebase::merge_onto(&prior, files, theirs);
                merged
            } else {
                // Snapshots are loaded by `build` when needed, after the old candidate
                // of a file is dropped: a revision of a large file holds two copies of
                // it at a time, not three.
                self.build(plan, self.load_candidates(&base)?)?
            };
            self.append_revision(
                &txrec,
                latest.revision,
                plan_to_json(plan),
                files,
                conflicts,
            )
        })
    }

    /// The tx, if open, and its latest revision.
    pub(crate) fn latest_open(&self, tx: u64, verb: &str) -> Result<(TxRecord, RevisionRecord)> {
        let r = self.ws.store.read()?;
        let txrec = open_tx(&r, tx, verb)?;
        let rev = r.revision_of(&txrec, None)?;
        Ok((txrec, rev))
    }

    /// Record `files` as the next revision of `txrec`, built on revision `base`. Fails
    /// with [`Error::WrongState`] if the tx changed since `txrec` was read.
    pub(crate) fn append_revision(
        &self,
        txrec: &TxRecord,
        base: u32,
        plan_json: String,
        files: BTreeMap<String, Working>,
        conflicts: Vec<FileConflict>,
    ) -> Result<Preview> {
        let tx = txrec.tx;
        let content = RevisionContent::of(files, conflicts);
        let (txrec, rev) = self.ws.store.write(|w| {
            let now = w.tx(tx)?;
            if now.revisions != txrec.revisions
                || now.state != TxState::Open
                || w.has_inflight_batch(tx)?
            {
                return Err(Error::WrongState {
                    tx,
                    state: now.state.to_string(),
                    hint: "it changed, or a commit of it is under way, while this revision was built; run the command again (`ultra-edit show` tells its state)".into(),
                });
            }
            record_revision(w, tx, now.revisions, Some(base), plan_json, content)
        })?;
        Ok(Preview::new(&txrec, rev))
    }

    /// The record of `tx`. Errors: [`Error::UnknownTx`].
    pub fn tx(&self, tx: u64) -> Result<TxRecord> {
        crate::workspace::guarded(|| self.ws.store.read()?.tx_required(tx))
    }

    /// A revision of `tx` (default: the latest) as recorded.
    pub fn show(&self, tx: u64, revision: Option<u32>) -> Result<Preview> {
        crate::workspace::guarded(|| {
            let r = self.ws.store.read()?;
            let txrec = r.tx_required(tx)?;
            if txrec.pruned {
                return Err(Error::wrong_state(
                    &txrec,
                    "be shown (`ultra-edit log` and `journal dump --tx` still show its history)",
                ));
            }
            let rev = r.revision_of(&txrec, revision)?;
            Ok(Preview::new(&txrec, rev))
        })
    }

    /// Abort an open tx: it accepts nothing further. Errors: [`Error::WrongState`] when
    /// the tx is not open, [`Error::LockTimeout`] while a commit holds the lock.
    pub fn abort(&self, tx: u64) -> Result<TxRecord> {
        crate::workspace::guarded(|| {
            // Under the commit lock: a commit of this tx in progress finishes first (and
            // the abort is then refused), never the two at once.
            let locked = self.lock()?;
            locked.store.write(|w| w.abort_tx(tx))
        })
    }

    /// One entry per tx, newest first; at most `limit` entries when given.
    pub fn log(&self, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        crate::workspace::guarded(|| {
            let r = self.ws.store.read()?;
            let mut out = Vec::new();
            r.txs_newest_first(|tx| {
                let rev_n = tx
                    .committed
                    .map(|c| c.revision)
                    .unwrap_or(tx.revisions.saturating_sub(1));
                let rev = r.revision(tx.tx, rev_n)?;
                let files = rev.as_ref().map(|r| r.files.as_slice()).unwrap_or(&[]);
                let mut paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
                if rev.is_none() {
                    // Pruned: the receipt of its commit is kept as history.
                    if let Some(receipt) = tx.committed.map(|c| r.receipt(c.batch)).transpose()? {
                        paths = receipt
                            .into_iter()
                            .flat_map(|rc| rc.files)
                            .map(|f| f.path)
                            .collect();
                    }
                }
                let batch_state = tx.attention.map(|_| BatchState::NeedsAttention);
                out.push(LogEntry {
                    tx: tx.tx,
                    created_ms: tx.created_ms,
                    agent: tx.agent.clone(),
                    description: tx.description.clone(),
                    state: tx.state,
                    files: paths,
                    lines_added: files.iter().map(|f| f.diff.lines_added).sum(),
                    lines_removed: files.iter().map(|f| f.diff.lines_removed).sum(),
                    revisions: tx.revisions,
                    committed: tx.committed,
                    batch_state,
                    rollback_of: tx.rollback_of,
                    rolled_back_by: tx.rolled_back_by,
                    pruned: tx.pruned,
                });
                Ok(limit.is_none_or(|l| out.len() < l))
            })?;
            Ok(out)
        })
    }

    /// Snapshots and candidates of a recorded revision, with their bytes.
    pub(crate) fn load_working(&self, rev: &RevisionRecord) -> Result<BTreeMap<String, Working>> {
        let mut files = self.load_candidates(rev)?;
        for w in files.values_mut() {
            self.load_snapshot(&w.snapshot, &mut w.snapshot_bytes)?;
        }
        Ok(files)
    }

    /// Like [`Journal::load_working`], with the bytes of the candidates only: an
    /// existing snapshot's bytes are `None` until [`Journal::load_snapshot`].
    fn load_candidates(&self, rev: &RevisionRecord) -> Result<BTreeMap<String, Working>> {
        let r = self.ws.store.read()?;
        let load = |s: &FileState| -> Result<Option<Vec<u8>>> {
            match s.hash.filter(|_| s.exists) {
                Some(h) => Ok(Some(r.blob_required(&h)?)),
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
                    candidate: f.candidate,
                    candidate_bytes: load(&f.candidate)?,
                    text_op_on_binary: false,
                },
            );
        }
        Ok(out)
    }

    /// Load into `bytes` the bytes of `snapshot` if it exists and they are not loaded.
    fn load_snapshot(&self, snapshot: &FileState, bytes: &mut Option<Vec<u8>>) -> Result<()> {
        if let Some(h) = snapshot.hash.filter(|_| snapshot.exists) {
            if bytes.is_none() {
                *bytes = Some(self.ws.store.read()?.blob_required(&h)?);
            }
        }
        Ok(())
    }

    /// Apply `plan` on top of `prior` (the base revision's files; empty for a preview).
    /// A snapshot of `prior` may come without its bytes; they are loaded here.
    fn build(
        &self,
        plan: &Plan,
        prior: BTreeMap<String, Working>,
    ) -> Result<BTreeMap<String, Working>> {
        let ws = &self.ws;
        // Every path is checked before any is read: one bad path refuses the whole plan.
        let mut groups: BTreeMap<String, Vec<(usize, &edit::Edit)>> = BTreeMap::new();
        for (i, e) in plan.edits.iter().enumerate() {
            let rel = path::normalize(&ws.root, e.path())?;
            path::check_on_disk(ws.fs.as_ref(), &ws.root, &rel, e.path())?;
            groups.entry(rel).or_default().push((i, e));
        }
        let mut out = BTreeMap::new();
        let mut touched = BTreeMap::new();
        for (rel, mut w) in prior {
            if groups.contains_key(&rel) {
                touched.insert(rel, w);
            } else {
                self.load_snapshot(&w.snapshot, &mut w.snapshot_bytes)?;
                out.insert(rel, w);
            }
        }
        for (rel, edits) in groups {
            // The base of the edits: the prior revision's candidate, or for a file
            // joining now, its snapshot itself (borrowed, not copied: a preview of a
            // large file holds one copy of its bytes, not two).
            let mut prior_file = touched.remove(&rel);
            let (snapshot, snapshot_bytes) = match &mut prior_file {
                Some(w) => (w.snapshot, w.snapshot_bytes.take()),
                None => snapshot::read_state(ws.fs.as_ref(), &ws.root, &rel)?,
            };
            let (base_state, base_bytes) = match &prior_file {
                Some(w) => (w.candidate, w.candidate_bytes.as_deref()),
                None => (snapshot, snapshot_bytes.as_deref()),
            };
            let base = FileBase {
                bytes: base_bytes,
                mode: base_state.exists.then_some(base_state.mode),
            };
            let cand = edit::apply_file_edits(&rel, base, &edits)?;
            // The old candidate is no longer needed; the snapshot may now be loaded.
            let mut snapshot_bytes = snapshot_bytes;
            if prior_file.take().is_some() {
                self.load_snapshot(&snapshot, &mut snapshot_bytes)?;
            }
            let (candidate, candidate_bytes) = if cand.exists {
                let mode = cand.mode.unwrap_or(if base_state.exists {
                    base_state.mode
                } else {
                    0o644
                });
                (FileState::present(&cand.bytes, mode), Some(cand.bytes))
            } else {
                (FileState::ABSENT, None)
            };
            out.insert(
                rel,
                Working {
                    snapshot,
                    snapshot_bytes,
                    candidate,
                    candidate_bytes,
                    text_op_on_binary: cand.text_op_on_binary,
                },
            );
        }
        file_under_file(&out)?;
        Ok(out)
    }
}

/// Refuse a revision in which one path is a file (before or after) and another lies
/// under it (`d` and `d/x`): no single batch can turn one into the other.
fn file_under_file(files: &BTreeMap<String, Working>) -> Result<()> {
    for (p, w) in files {
        if !(w.snapshot.exists || w.candidate.exists) {
            continue;
        }
        let prefix = format!("{p}/");
        if let Some((q, _)) = files
            .range(prefix.clone()..)
            .next()
            .filter(|(q, _)| q.starts_with(&prefix))
        {
            return Err(crate::error::PathError::WrongKind {
                path: q.clone(),
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
struct RevisionContent {
    /// The files, for their bytes (stored as blobs by [`record_revision`]).
    files: BTreeMap<String, Working>,
    /// The files whose candidate differs from their snapshot, with their diffs.
    changed: Vec<FileRevision>,
    validation: Vec<edit::Issue>,
    conflicts: Vec<FileConflict>,
}

impl RevisionContent {
    /// Validate `files` and diff the changed ones. Files whose candidate equals their
    /// snapshot are validated (a `candidate_equals_source` warning) but leave the
    /// candidate set. Each conflict adds a `merge_conflict` error.
    fn of(files: BTreeMap<String, Working>, conflicts: Vec<FileConflict>) -> Self {
        let checks: Vec<FileCheck<'_>> = files
            .iter()
            .map(|(p, f)| FileCheck {
                path: p,
                before: f.snapshot_bytes.as_deref(),
                after: f.candidate_bytes.as_deref(),
                text_op_on_binary: f.text_op_on_binary,
            })
            .collect();
        let mut validation = edit::validate(&checks);
        validation.extend(conflicts.iter().map(conflict_issue));
        let changed = files
            .iter()
            .filter(|(_, f)| !same_state(&f.snapshot, &f.candidate))
            .map(|(path, f)| FileRevision {
                path: path.clone(),
                snapshot: f.snapshot,
                candidate: f.candidate,
                diff: edit::candidate_diff(
                    path,
                    f.snapshot_bytes.as_deref(),
                    f.candidate_bytes.as_deref(),
                ),
            })
            .collect();
        RevisionContent {
            files,
            changed,
            validation,
            conflicts,
        }
    }
}

/// Store the blobs of the changed files of `content` (under the hashes their
/// `FileState`s already carry) and record the revision as the tx's next one.
fn record_revision(
    w: &mut crate::journal::Writer,
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
        for (state, bytes) in [
            (&working.snapshot, &working.snapshot_bytes),
            (&working.candidate, &working.candidate_bytes),
        ] {
            if let (Some(hash), Some(bytes)) = (state.hash.filter(|_| state.exists), bytes) {
                w.put_blob_hashed(hash, bytes)?;
            }
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
    edit::Issue {
        code: "merge_conflict".into(),
        severity: edit::Severity::Error,
        path: c.path.clone(),
        message: format!(
            "{}{at}; resolve it with `revise` (the candidate holds both sides between conflict markers), or abort and preview again",
            c.reason
        ),
    }
}

fn plan_to_json(plan: &Plan) -> String {
    plan.to_recorded_json()
}

/// The tx, if it is open; else [`Error::WrongState`] for `verb`.
pub(crate) fn open_tx(r: &crate::journal::Reader, tx: u64, verb: &str) -> Result<TxRecord> {
    let rec = r.tx_required(tx)?;
    if rec.state != TxState::Open {
        return Err(Error::wrong_state(&rec, verb));
    }
    Ok(rec)
}
