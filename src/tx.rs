//! Preview, revise, show, abort and log: the in-memory stages of a transaction
//! (docs/design.md, "Lifecycle" › 1. Preview and 2. Iteration). Nothing here writes outside `.ultra-edit/`; everything is recorded in
//! the journal before the verb returns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::edit::Plan;
use crate::error::{Error, Result, Verb};
use crate::journal::records::*;
use crate::revision::{self, RevisionContent};
use crate::workspace::Journal;

pub use crate::revision::{FileSummary, Preview, Size};

/// What [`Journal::abort`] did: the tx's record, and whether it was aborted already.
/// Serialized flat: the record's fields, then `already`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AbortReport {
    /// The tx's record, now aborted.
    #[serde(flatten)]
    pub record: TxRecord,
    /// It was aborted before this call: nothing was written (aborting is idempotent,
    /// as `rm -f` of a missing file is).
    pub already: bool,
}

/// One line of `log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogEntry {
    /// Transaction number.
    pub tx: u64,
    /// Its handle (see [`Preview::handle`]).
    pub handle: crate::TxHandle,
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
/// `#[non_exhaustive]`: start from [`ReviseOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ReviseOptions {
    /// The revision the plan was written against (default: the latest).
    pub base: Option<u32>,
    /// Accept a plan written against an older revision by merging it onto the latest.
    pub rebase: bool,
}

impl ReviseOptions {
    /// Every default: the plan is written against the latest revision, no rebase.
    pub fn new() -> ReviseOptions {
        ReviseOptions::default()
    }
    /// [`ReviseOptions::base`]: the plan was written against this revision (0-based).
    pub fn with_base(mut self, revision: u32) -> Self {
        self.base = Some(revision);
        self
    }
    /// [`ReviseOptions::rebase`].
    pub fn with_rebase(mut self, rebase: bool) -> Self {
        self.rebase = rebase;
        self
    }
}

/// Options of [`Journal::preview_with`].
/// `#[non_exhaustive]`: start from [`PreviewOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct PreviewOptions {
    /// Refuse a plan that changes nothing (every file it names would keep its bytes and
    /// mode, and the policy does not allow that) with [`Error::NothingToChange`],
    /// recording nothing, as `git commit` refuses an empty commit. Default `false`:
    /// such a preview is recorded as an open tx whose revision 0 has the validation
    /// error `no_changes` (m1nd's `edit_preview` answers a preview that is not ready
    /// to commit). The CLI sets it.
    pub refuse_nothing_to_change: bool,
}

impl PreviewOptions {
    /// Every default: a plan that changes nothing is recorded (see
    /// [`PreviewOptions::refuse_nothing_to_change`]).
    pub fn new() -> PreviewOptions {
        PreviewOptions::default()
    }
    /// [`PreviewOptions::refuse_nothing_to_change`].
    pub fn with_refuse_nothing_to_change(mut self, refuse: bool) -> Self {
        self.refuse_nothing_to_change = refuse;
        self
    }
}

impl Journal {
    /// Preview (docs/design.md, "Lifecycle" › 1. Preview): snapshot every file of `plan`, resolve its edits against one
    /// base, build the candidates in memory, diff and validate them, and record the new
    /// tx's revision 0 in the journal.
    ///
    /// Errors: [`Error::Edit`] (target not found, ambiguous, overlapping, …),
    /// [`Error::Path`] (one bad path refuses the whole plan). Writes nothing outside
    /// `.ultra-edit/`.
    pub fn preview(&self, plan: &Plan) -> Result<Preview> {
        self.preview_with(plan, PreviewOptions::default())
    }

    /// [`Journal::preview`] with `opts`; with
    /// [`PreviewOptions::refuse_nothing_to_change`], a plan that changes nothing is
    /// [`Error::NothingToChange`] and nothing is recorded.
    pub fn preview_with(&self, plan: &Plan, opts: PreviewOptions) -> Result<Preview> {
        self.preview_recorded(plan, opts, None, None)
    }

    /// [`Journal::preview_with`], recording `recorded` instead of the plan's JSON when
    /// given (a command's origin), and adding to the validation what `extra` finds in
    /// the built files (a check command's outcome).
    pub(crate) fn preview_recorded(
        &self,
        plan: &Plan,
        opts: PreviewOptions,
        recorded: Option<String>,
        extra: revision::Extra<'_>,
    ) -> Result<Preview> {
        crate::workspace::guarded(|| {
            self.ws.writable()?;
            let policy = plan.policy.unwrap_or(self.policy);
            let plan = &plan.checked_with(&policy)?;
            let files = revision::build(&self.ws, plan, BTreeMap::new())?;
            let plan_json = recorded.clone().unwrap_or_else(|| plan.to_recorded_json());
            let issues = match extra {
                Some(f) => f(&files)?,
                None => Vec::new(),
            };
            let content = RevisionContent::of_with(files, Vec::new(), &policy, issues);
            if opts.refuse_nothing_to_change && content.changes_nothing() {
                return Err(Error::NothingToChange {
                    paths: content.paths(),
                });
            }
            let summary = content.summary();
            let (tx, rev) = self.ws.store.write(|w| {
                let tx = w.create_tx(plan.agent.clone(), plan.description.clone(), None)?;
                revision::record_revision(w, tx.tx, 0, None, plan_json, content)
            })?;
            Ok(Preview::new(self.id(), &tx, rev)
                .with_summary(summary)
                .with_unchecked_base(plan))
        })
    }

    /// Iteration (docs/design.md, "Lifecycle" › 2. Iteration): a new revision of `tx`, made by applying `plan` to the
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
    pub fn revise(
        &self,
        tx: impl Into<crate::TxRef>,
        opts: ReviseOptions,
        plan: &Plan,
    ) -> Result<Preview> {
        self.revise_recorded(tx, opts, plan, None, None)
    }

    /// [`Journal::revise`], recording `recorded` instead of the plan's JSON when given,
    /// with the issues `extra` finds in the built files added to the validation (see
    /// [`Journal::preview_recorded`]).
    pub(crate) fn revise_recorded(
        &self,
        tx: impl Into<crate::TxRef>,
        opts: ReviseOptions,
        plan: &Plan,
        recorded: Option<String>,
        extra: revision::Extra<'_>,
    ) -> Result<Preview> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            self.ws.writable()?;
            let policy = plan.policy.unwrap_or(self.policy);
            let plan = &plan.checked_with(&policy)?;
            let (txrec, latest) = self.latest_open(tx, Verb::Revise)?;
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
            // A whole-file conflict (a mode or binary content changed on both sides, a
            // file deleted on one and changed on the other) has no markers to carry it:
            // it stands until a revision edits that file (a resolve that keeps the
            // candidate writes it too). A revision of other files keeps it, or the next
            // commit would take one side silently (found by the breaker).
            let edited: Vec<crate::fs::RelPath> = plan
                .edits
                .iter()
                .filter_map(|e| self.ws.normalize(e.path()).ok())
                .collect();
            let standing: Vec<FileConflict> = latest
                .conflicts
                .iter()
                .filter(|c| c.regions.is_empty() && !edited.contains(&c.path))
                .cloned()
                .collect();
            let mut conflicts = Vec::new();
            let files = if base.revision != latest.revision {
                // The base revision's candidates are the merge base too: loaded twice
                // rather than copied, and without their snapshots, which the merge
                // does not use.
                let prior = revision::load_candidates(&self.ws, &base)?;
                let mut files =
                    revision::build(&self.ws, plan, revision::load_candidates(&self.ws, &base)?)?;
                revision::assemble(&mut files);
                let theirs = revision::load_working(&self.ws, &latest)?;
                let merged;
                (merged, conflicts) = crate::rebase::merge_onto(&prior, files, theirs);
                merged
            } else {
                // Snapshots are loaded by `build` when needed, after the old candidate
                // of a file is dropped: a revision of a large file holds two copies of
                // it at a time, not three.
                revision::build(&self.ws, plan, revision::load_candidates(&self.ws, &base)?)?
            };
            for c in standing {
                if !conflicts.iter().any(|n: &FileConflict| n.path == c.path) {
                    conflicts.push(c);
                }
            }
            conflicts.sort_by(|a, b| a.path.cmp(&b.path));
            let issues = match extra {
                Some(f) => f(&files)?,
                None => Vec::new(),
            };
            let (txrec, rev, summary) = revision::append(
                &self.ws,
                &txrec,
                latest.revision,
                recorded.clone().unwrap_or_else(|| plan.to_recorded_json()),
                files,
                conflicts,
                &policy,
                issues,
            )?;
            Ok(Preview::new(self.id(), &txrec, rev)
                .with_summary(summary)
                .with_unchecked_base(plan))
        })
    }

    /// The age of `tx`'s preview, in milliseconds: the journal clock's now minus the
    /// tx's `created_ms` (0 for a tx made "in the future" of the clock). Errors:
    /// [`Error::UnknownTx`], [`Error::ForeignHandle`].
    pub fn preview_age(&self, tx: impl Into<crate::TxRef>) -> Result<u64> {
        let rec = self.tx(tx)?;
        Ok(self.ws.store.now_ms().saturating_sub(rec.created_ms))
    }

    /// [`Error::PreviewExpired`] if `tx` is open and its preview is `max_age` old or
    /// older (age in milliseconds ≥ the max age's), else `Ok` (a `max_age` of `None` is no limit; a tx that is not open
    /// is left to the verb, which refuses it with [`Error::WrongState`]): what
    /// [`Journal::commit`] checks, for a front end that wants the same rule on other
    /// verbs (the MCP server checks it before `edit_revise` and `edit_rebase`).
    /// Errors also: [`Error::UnknownTx`], [`Error::ForeignHandle`].
    pub fn check_preview_age(
        &self,
        tx: impl Into<crate::TxRef>,
        max_age: Option<std::time::Duration>,
    ) -> Result<()> {
        let rec = self.tx(tx)?;
        self.check_age(&rec, max_age)
    }

    pub(crate) fn check_age(
        &self,
        rec: &TxRecord,
        max_age: Option<std::time::Duration>,
    ) -> Result<()> {
        let Some(max) = max_age else { return Ok(()) };
        let age_ms = self.ws.store.now_ms().saturating_sub(rec.created_ms);
        let max_age_ms = u64::try_from(max.as_millis()).unwrap_or(u64::MAX);
        // At the max age exactly it is expired, as m1nd expires a preview at >= TTL.
        if rec.state == TxState::Open && age_ms >= max_age_ms {
            return Err(Error::PreviewExpired {
                tx: rec.tx,
                age_ms,
                max_age_ms,
            });
        }
        Ok(())
    }

    /// Abort every open preview whose age is `older_than` or more (by the journal
    /// clock; the rule of [`Journal::check_preview_age`]: at the max age exactly a
    /// preview is expired), in one
    /// journal write, without taking the commit lock: a commit running meanwhile is
    /// never disturbed, because the abort and the commit's intent are both journal
    /// writes that check the tx's state, and redb runs them one after the other — a
    /// tx whose batch is in flight is skipped, and a commit that comes second finds
    /// its tx aborted and writes nothing. Returns the handles of the txs aborted,
    /// oldest first. Cost: one read of every tx record, and one durable journal write
    /// (none when nothing is old enough).
    pub fn abort_expired(&self, older_than: std::time::Duration) -> Result<Vec<crate::TxHandle>> {
        crate::workspace::guarded(|| {
            self.ws.writable()?;
            let now = self.ws.store.now_ms();
            let max = u64::try_from(older_than.as_millis()).unwrap_or(u64::MAX);
            let mut old = Vec::new();
            self.ws.store.read()?.txs_newest_first(|tx| {
                if tx.state == TxState::Open
                    && tx.rollback_of.is_none()
                    && now.saturating_sub(tx.created_ms) >= max
                {
                    old.push(tx.tx);
                }
                Ok(true)
            })?;
            if old.is_empty() {
                return Ok(Vec::new());
            }
            old.reverse();
            let aborted = self.ws.store.write(|w| {
                let mut aborted = Vec::new();
                for &tx in &old {
                    // Re-checked inside the write: a commit may have won meanwhile.
                    let rec = w.tx(tx)?;
                    if rec.state == TxState::Open && w.inflight_batch_of(tx)?.is_none() {
                        w.abort_tx(tx)?;
                        aborted.push(tx);
                    }
                }
                Ok(aborted)
            })?;
            Ok(aborted.into_iter().map(|tx| self.handle(tx)).collect())
        })
    }

    /// The tx, if open, and its latest revision.
    pub(crate) fn latest_open(&self, tx: u64, verb: Verb) -> Result<(TxRecord, RevisionRecord)> {
        let r = self.ws.store.read()?;
        let txrec = open_tx(&r, tx, verb).map_err(|e| self.with_redo(e))?;
        let rev = r.revision_of(&txrec, None)?;
        Ok((txrec, rev))
    }

    /// The record of `tx`. Errors: [`Error::UnknownTx`].
    pub fn tx(&self, tx: impl Into<crate::TxRef>) -> Result<TxRecord> {
        let tx = tx.into();
        crate::workspace::guarded(|| self.ws.store.read()?.tx_required(self.tx_number(tx)?))
    }

    /// A revision of `tx` as recorded. Default: for a tx a commit applied (committed,
    /// or rolled back since), the revision that commit applied, which is what reached
    /// the disk; else the latest.
    pub fn show(&self, tx: impl Into<crate::TxRef>, revision: Option<u32>) -> Result<Preview> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            let r = self.ws.store.read()?;
            let txrec = r.tx_required(tx)?;
            if txrec.pruned {
                return Err(Error::wrong_state(&txrec, Verb::Show));
            }
            let revision = revision.or(txrec.committed.map(|c| c.revision));
            let rev = r.revision_of(&txrec, revision)?;
            let mut summary = Vec::with_capacity(rev.files.len());
            for f in &rev.files {
                let size = |s: &FileState| -> Result<Option<Size>> {
                    match s.hash() {
                        Some(h) => Ok(Some(Size::hashed(&r.blob_required(&h)?, Some(h)))),
                        None => Ok(None),
                    }
                };
                summary.push(FileSummary {
                    path: f.path.to_string(),
                    // A rebase records a file it kept for the gate unchanged.
                    changed: f.snapshot != f.candidate,
                    snapshot: size(&f.snapshot)?,
                    candidate: size(&f.candidate)?,
                });
            }
            // The files the commit gate would check: every file the tx named.
            let gated = if txrec.state == TxState::Open {
                crate::revision::gated_files(&r, &txrec, &rev)?
            } else {
                Vec::new()
            };
            let mut p = Preview::new(self.id(), &txrec, rev).with_summary(summary);
            if p.state == TxState::Open {
                let stale = crate::batch::gate::stale_paths(
                    &self.ws,
                    gated.iter().map(|(p, s)| (p, s)),
                    crate::batch::gate::Refused::IsStale,
                )?;
                p.ready_to_commit &= stale.is_empty();
                p.stale_paths = Some(stale);
            }
            Ok(p)
        })
    }

    /// Abort an open tx: it accepts nothing further. Aborting a tx that is aborted
    /// already changes nothing and succeeds, with [`AbortReport::already`] set (an
    /// aborted tx never leaves that state, so no lock is needed to tell). It never
    /// takes the commit lock: one journal write that checks the tx's state, as a
    /// commit's intent does, so a commit of another tx never delays it. Errors:
    /// [`Error::WrongState`] when the tx is committed or rolled back, or a batch of it
    /// is in flight; [`Error::ReadOnly`] on a read-only journal.
    pub fn abort(&self, tx: impl Into<crate::TxRef>) -> Result<AbortReport> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            let rec = self.ws.store.read()?.tx_required(tx)?;
            if rec.state == TxState::Aborted {
                return Ok(AbortReport {
                    record: rec,
                    already: true,
                });
            }
            // Without the commit lock, as `abort_expired`: the abort and a commit's
            // intent are both journal writes that check the tx's state, and redb runs
            // them one after the other. A tx whose batch is in flight is refused
            // (`abort_tx`); a commit that comes second finds the tx aborted and writes
            // nothing. So aborting one tx never waits for another tx's batch.
            self.ws.writable()?;
            let record = self.ws.store.write(|w| w.abort_tx(tx))?;
            Ok(AbortReport {
                record,
                already: false,
            })
        })
        .map_err(|e| self.with_redo(e))
    }

    /// One entry per tx, newest first; at most `limit` entries when given (`Some(0)`:
    /// none, as `git log -n 0` prints nothing).
    pub fn log(&self, limit: Option<usize>) -> Result<Vec<LogEntry>> {
        self.log_of(limit, None)
    }

    /// [`Journal::log`] of the txs whose agent is `agent` (all txs when `None`);
    /// `limit` counts the entries returned.
    pub fn log_of(&self, limit: Option<usize>, agent: Option<&str>) -> Result<Vec<LogEntry>> {
        crate::workspace::guarded(|| {
            if limit == Some(0) {
                return Ok(Vec::new());
            }
            let r = self.ws.store.read()?;
            let mut out = Vec::new();
            r.txs_newest_first(|tx| {
                if agent.is_some_and(|a| tx.agent.as_deref() != Some(a)) {
                    return Ok(true);
                }
                let rev_n = tx
                    .committed
                    .map(|c| c.revision)
                    .unwrap_or(tx.revisions.saturating_sub(1));
                let rev = r.revision(tx.tx, rev_n)?;
                let files = rev.as_ref().map(|r| r.files.as_slice()).unwrap_or(&[]);
                let mut paths: Vec<String> = files.iter().map(|f| f.path.to_string()).collect();
                if rev.is_none() {
                    // Pruned: the receipt of its commit is kept as history.
                    if let Some(receipt) = tx.committed.map(|c| r.receipt(c.batch)).transpose()? {
                        paths = receipt
                            .into_iter()
                            .flat_map(|rc| rc.files)
                            .map(|f| f.path.into())
                            .collect();
                    }
                }
                let batch_state = tx.attention.map(|_| BatchState::NeedsAttention);
                out.push(LogEntry {
                    tx: tx.tx,
                    handle: self.handle(tx.tx),
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
}

/// The tx, if it is open and no batch of it is in flight; else [`Error::WrongState`]
/// for `verb` (a batch in flight or needing attention is recovery's to settle first).
pub(crate) fn open_tx(r: &crate::journal::Reader, tx: u64, verb: Verb) -> Result<TxRecord> {
    let rec = r.tx_required(tx)?;
    if rec.state != TxState::Open {
        return Err(Error::wrong_state(&rec, verb));
    }
    if let Some(b) = r.inflight_batch_of(tx)? {
        return Err(Error::batch_in_flight(&rec, verb, b.batch, b.state));
    }
    Ok(rec)
}
