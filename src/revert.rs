//! `revert`: undo committed transactions and keep everyone else's work
//! (docs/design.md, "Revert").
//!
//! A revert is a new transaction, an open preview at revision 0, whose candidate
//! removes the change of each reverted tx from the current disk by a three-way merge
//! per file, the one `rebase` uses ([`crate::rebase::merge_file`]): base = the tx's
//! post-image, ours = the disk (with the reverts of newer txs already applied),
//! theirs = the tx's pre-image. A change nobody touched since comes out as the
//! pre-image; lines others changed since are kept; where both changed the same lines
//! the candidate holds git's diff3 markers, labelled
//! [`crate::conflicts::REVERT_LABELS`], and the revision lists the conflict (`resolve`
//! works on it as on a rebase's).
//!
//! File cases, as the merge decides them (plus one rule of its own, below):
//! - a file the tx created: deleted if it still holds the tx's bytes and mode, else a
//!   modify/delete conflict (the candidate keeps the disk's bytes and mode);
//! - a file the tx deleted: re-created with its old bytes and mode while it is still
//!   absent; if it exists again (with other bytes), a whole-file conflict — the one
//!   rule of this module: the merge alone would mark an add/add conflict line by line,
//!   against an empty base;
//! - a mode the tx changed: changed back unless changed since; both changed it: a
//!   whole-file conflict (the candidate keeps the disk's mode);
//! - binary content: the old bytes unless changed since, else a whole-file conflict.
//!
//! Several txs are reverted newest first into one candidate, each merge starting from
//! the previous one's result. Per file, the changes of the txs are first joined where
//! they compose cleanly (an older tx's undo merged onto what the newer one found;
//! simply the older's pre-image when nothing else wrote the file in between), so an
//! agent's successive commits to the same lines are one merge against the disk: it
//! conflicts only where someone else changed those lines, and never nests markers. A file
//! the revert leaves unchanged is not part of the revision unless it conflicts. The
//! revert's owner and extended attributes of a file that exists on disk are the
//! disk's (bytes and mode are merged; owner and attributes are not); a re-created
//! file gets the pre-image's.
//!
//! The origin is recorded in the new tx: its description `revert of tx N` (what `log`
//! prints) and its revision 0's plan `{"revert_of":{"txs":[N,…]}}`
//! ([`RevisionOrigin::RevertOf`]), so the journal's schema is unchanged.

use std::collections::BTreeMap;

use crate::conflicts::REVERT_LABELS;
use crate::error::{Error, Result, Verb};
use crate::fs::snapshot;
use crate::fs::RelPath;
use crate::journal::records::{
    BatchRecord, FileConflict, FileState, RevisionOrigin, TxRecord, TxState,
};
use crate::rebase::merge_file;
use crate::revision::Preview;
use crate::revision::{self, RevisionContent, Working};
use crate::workspace::Journal;

/// Options of [`Journal::revert`] and [`Journal::revert_agent`].
///
/// `#[non_exhaustive]`: start from [`RevertOptions::new`] (or `Default`) and set fields
/// with the `with_*` methods, so that a field added later does not break a host's code.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RevertOptions {
    /// The agent recorded for the revert's tx (default: none; for
    /// [`Journal::revert_agent`], the agent whose work it reverts).
    pub agent: Option<String>,
}

impl RevertOptions {
    /// The defaults: no agent recorded (for [`Journal::revert_agent`], its agent).
    pub fn new() -> RevertOptions {
        RevertOptions::default()
    }

    /// Record `agent` as the revert's agent.
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }
}

/// Which committed txs of one agent [`Journal::revert_agent`] reverts: every one by
/// default; those created at or after `since_ms`; at most the `last` newest. Both
/// together: the `last` newest of those since `since_ms`.
///
/// `#[non_exhaustive]`: start from [`AgentRange::all`] (or `Default`) and narrow it
/// with the `with_*` methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentRange {
    /// Only txs created at or after this time (ms since the Unix epoch).
    pub since_ms: Option<u64>,
    /// Only the `last` newest (0 selects none, which is [`Error::NothingToRevert`]).
    pub last: Option<usize>,
}

impl AgentRange {
    /// Every committed tx of the agent.
    pub fn all() -> AgentRange {
        AgentRange::default()
    }

    /// Only txs created at or after `since_ms` (ms since the Unix epoch); `None`: no
    /// lower bound.
    pub fn with_since_ms(mut self, since_ms: Option<u64>) -> Self {
        self.since_ms = since_ms;
        self
    }

    /// Only the `last` newest; `None`: no limit.
    pub fn with_last(mut self, last: Option<usize>) -> Self {
        self.last = last;
        self
    }
}

impl Journal {
    /// Revert the committed txs `txs` (in any order; reverted newest first) into one
    /// new tx: an open preview whose revision 0 removes their changes from the disk
    /// by a three-way merge per file (module docs). Nothing outside `.ultra-edit/` is
    /// written; review it with `show`, fix conflicts with `resolve` or `revise`,
    /// apply it with `commit`, undo it later with `rollback`.
    ///
    /// Errors: [`Error::UnknownTx`]; [`Error::WrongState`] (verb `revert`) for a tx
    /// that is not committed (open, aborted, rolled back) or was pruned by `journal
    /// gc`; [`Error::NothingToRevert`] when no tx is named or every file already holds
    /// what it held before them (nothing recorded); path and I/O errors reading the
    /// disk.
    pub fn revert(&self, txs: &[crate::TxRef], opts: RevertOptions) -> Result<Preview> {
        crate::workspace::guarded(|| {
            let mut numbers = Vec::with_capacity(txs.len());
            for t in txs {
                numbers.push(self.tx_number(*t)?);
            }
            self.revert_numbers(numbers, None, opts)
        })
    }

    /// Revert every committed tx of `agent` in `range`, newest first, into one new tx
    /// (as [`Journal::revert`]). Counted: txs in state committed whose agent is
    /// `agent`, except rollbacks and reverts (undoing those would redo what they
    /// undid). The new tx's agent is `opts.agent`, else `agent`.
    ///
    /// Errors: [`Error::NothingToRevert`] when the agent has no such tx in the range,
    /// and those of [`Journal::revert`].
    pub fn revert_agent(
        &self,
        agent: &str,
        range: AgentRange,
        opts: RevertOptions,
    ) -> Result<Preview> {
        crate::workspace::guarded(|| {
            let txs = self.agent_txs(agent, range)?;
            if txs.is_empty() {
                return Err(Error::NothingToRevert {
                    txs: Vec::new(),
                    agent: Some(agent.to_string()),
                });
            }
            let opts = RevertOptions {
                agent: opts.agent.or_else(|| Some(agent.to_string())),
            };
            self.revert_numbers(txs, Some(agent), opts)
        })
    }

    /// The committed txs of `agent` in `range`, newest first (see
    /// [`Journal::revert_agent`]).
    fn agent_txs(&self, agent: &str, range: AgentRange) -> Result<Vec<u64>> {
        let r = self.ws.store.read()?;
        let mut out = Vec::new();
        let limit = range.last.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(out);
        }
        r.txs_newest_first(|t| {
            if range.since_ms.is_some_and(|s| t.created_ms < s) {
                return Ok(false);
            }
            if t.state == TxState::Committed
                && t.agent.as_deref() == Some(agent)
                && t.rollback_of.is_none()
                && !t.pruned
                && !is_revert(&r, &t)?
            {
                out.push(t.tx);
            }
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    fn revert_numbers(
        &self,
        mut txs: Vec<u64>,
        agent: Option<&str>,
        opts: RevertOptions,
    ) -> Result<Preview> {
        self.ws.writable()?;
        txs.sort_unstable_by(|a, b| b.cmp(a));
        txs.dedup();
        if txs.is_empty() {
            return Err(Error::NothingToRevert {
                txs,
                agent: agent.map(str::to_string),
            });
        }
        let r = self.ws.store.read()?;
        let mut batches: Vec<BatchRecord> = Vec::with_capacity(txs.len());
        for &tx in &txs {
            let rec = r.tx_required(tx)?;
            batches.push(committed_batch(&r, &rec)?);
        }
        // Per file, the changes to undo, newest first, joined where they compose
        // (see `squash`).
        let mut steps: BTreeMap<RelPath, Vec<Step>> = BTreeMap::new();
        for batch in &batches {
            for f in &batch.files {
                let load = |s: &FileState| -> Result<Option<Vec<u8>>> {
                    s.hash()
                        .map(|h| {
                            r.blob_required(&h).map_err(|e| {
                                e.needed_by(|| {
                                    format!(
                                        "an image of {} in batch {} of tx {}, which the revert merges",
                                        f.path, batch.batch, batch.tx
                                    )
                                })
                            })
                        })
                        .transpose()
                };
                let (post, pre) = (load(&f.post)?, load(&f.pre)?);
                steps.entry(f.path.clone()).or_default().push(Step {
                    txs: vec![batch.tx],
                    post: (f.post, post),
                    pre: (f.pre, pre),
                });
            }
        }
        let mut files: BTreeMap<RelPath, Working> = BTreeMap::new();
        let mut conflicts: BTreeMap<RelPath, FileConflict> = BTreeMap::new();
        for (path, file_steps) in steps {
            let (state, bytes, xattrs) =
                snapshot::read_state(self.ws.fs.as_ref(), &self.ws.root, &path)?;
            let mut w = Working {
                snapshot: state,
                snapshot_bytes: bytes.clone(),
                snapshot_xattrs: xattrs,
                candidate: state,
                candidate_bytes: bytes.map(crate::revision::Content::Whole),
                text_op_on_binary: false,
                notes: Vec::new(),
                keep: false,
            };
            for step in squash(&path, file_steps) {
                let (state, bytes, conflict) = revert_file(
                    &path,
                    &step.txs,
                    (&step.post.0, step.post.1.as_deref()),
                    (&w.candidate, w.candidate_slice()),
                    (&step.pre.0, step.pre.1.as_deref()),
                );
                w.candidate = state;
                w.candidate_bytes = bytes.map(crate::revision::Content::Whole);
                if let Some(c) = conflict {
                    match conflicts.entry(path.clone()) {
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(c);
                        }
                        std::collections::btree_map::Entry::Occupied(mut e) => {
                            // An older tx's conflict in a file a newer one conflicted
                            // in already: both reasons; the regions are the last
                            // merge's, whose output is the candidate.
                            let old = e.get_mut();
                            old.reason = format!("{}; {}", old.reason, c.reason);
                            if !c.regions.is_empty() {
                                old.regions = c.regions;
                            }
                        }
                    }
                }
            }
            files.insert(path, w);
        }
        // A candidate equal to the disk is no change (its owner and attributes are the
        // disk's, not a pre-image's).
        for w in files.values_mut() {
            if w.candidate_is_snapshot_bytes() && w.candidate.mode() == w.snapshot.mode() {
                w.candidate = w.snapshot;
            }
        }
        // A file the revert leaves as it is (its change was undone by hand already, or
        // a later tx deleted what it created) is not part of the revision, unless it
        // holds a conflict: listing it would only add a `candidate_equals_source`
        // warning about edits nobody wrote.
        files.retain(|path, w| w.candidate != w.snapshot || conflicts.contains_key(path));
        if files.is_empty() {
            return Err(Error::NothingToRevert {
                txs,
                agent: agent.map(str::to_string),
            });
        }
        // A whole-file conflict whose candidate keeps the disk changes nothing, yet it
        // is recorded: the conflict is what the person must decide.
        let conflicted = !conflicts.is_empty();
        // A whole-file conflict's candidate is the disk's file on purpose: the
        // `candidate_equals_source` warning would be about edits nobody wrote (found by
        // the breaker); its `merge_conflict` error says what to decide.
        let kept_as_is: std::collections::BTreeSet<String> = conflicts
            .keys()
            .filter(|p| {
                files
                    .get(*p)
                    .is_some_and(|w| w.candidate_is_snapshot_bytes())
            })
            .map(|p| p.as_str().to_string())
            .collect();
        let mut content = RevisionContent::of_with(
            files,
            conflicts.into_values().collect(),
            &self.policy,
            Vec::new(),
        );
        content.drop_issues("candidate_equals_source", &kept_as_is);
        if content.changes_nothing() && !conflicted {
            return Err(Error::NothingToRevert {
                txs,
                agent: agent.map(str::to_string),
            });
        }
        let summary = content.summary();
        let description = format!("revert of {}", txs_label(&txs));
        let plan = RevisionOrigin::RevertOf { txs }.to_recorded_json();
        drop(r);
        let (tx, rev) = self.ws.store.write(|w| {
            let tx = w.create_tx(opts.agent.clone(), Some(description.clone()), None)?;
            revision::record_revision(w, tx.tx, 0, None, plan.clone(), content)
        })?;
        Ok(Preview::new(self.id(), &tx, rev).with_summary(summary))
    }
}

/// The directories a commit of the revert tx `tx` removes when they are empty after it:
/// those the commits of the txs it reverts created (each reverted batch's
/// `create_dirs`), deepest first — the rule a rollback follows (it removes its
/// commit's created directories when the rollback leaves them empty). Empty for a
/// tx that is not a revert. A directory someone put a file in since is kept (the
/// batch removes only empty ones); a commit of a revision that re-creates a file there
/// keeps it too.
///
/// Errors: journal read errors.
pub(crate) fn dirs_to_remove(r: &crate::journal::Reader, tx: u64) -> Result<Vec<RelPath>> {
    let Some(rev) = r.revision(tx, 0)? else {
        return Ok(Vec::new());
    };
    // A revert's origin is recorded exactly as `{"revert_of":…}` (`to_recorded_json`):
    // any other plan, a large one too, is passed over without being parsed.
    if !rev.plan.starts_with("{\"revert_of\"") {
        return Ok(Vec::new());
    }
    let Ok(RevisionOrigin::RevertOf { txs }) = serde_json::from_str::<RevisionOrigin>(&rev.plan)
    else {
        return Ok(Vec::new());
    };
    let mut dirs: Vec<RelPath> = Vec::new();
    for reverted in txs {
        let Some(rec) = r.tx(reverted)? else { continue };
        let Some(c) = rec.committed else { continue };
        if let Some(batch) = r.batch(c.batch)? {
            dirs.extend(batch.create_dirs);
        }
    }
    // Deepest first, so that a parent is tried after its children; each once.
    dirs.sort_by(|a, b| {
        let depth = |p: &RelPath| p.as_str().matches('/').count();
        depth(b).cmp(&depth(a)).then_with(|| b.cmp(a))
    });
    dirs.dedup();
    Ok(dirs)
}

/// Whether `t` is a revert: its revision 0 was made by `revert`.
fn is_revert(r: &crate::journal::Reader, t: &TxRecord) -> Result<bool> {
    Ok(r.revision(t.tx, 0)?.is_some_and(|rev| {
        matches!(
            serde_json::from_str::<RevisionOrigin>(&rev.plan),
            Ok(RevisionOrigin::RevertOf { .. })
        )
    }))
}

/// The batch that committed `rec`, if it can be reverted: committed, not pruned.
fn committed_batch(r: &crate::journal::Reader, rec: &TxRecord) -> Result<BatchRecord> {
    match (rec.state, rec.committed) {
        (TxState::Committed, Some(c)) if !rec.pruned => r.batch(c.batch)?.ok_or_else(|| {
            crate::error::JournalError::Missing {
                what: format!("batch {} of tx {}", c.batch, rec.tx),
            }
            .into()
        }),
        _ => Err(Error::wrong_state(rec, Verb::Revert)),
    }
}

/// One file of one reverted tx: the merge of `base` (what the tx wrote), `ours` (the
/// disk, or the candidate so far) and `theirs` (what the file held before the tx).
fn revert_file(
    path: &RelPath,
    txs: &[u64],
    base: (&FileState, Option<&[u8]>),
    ours: (&FileState, Option<&[u8]>),
    theirs: (&FileState, Option<&[u8]>),
) -> (FileState, Option<Vec<u8>>, Option<FileConflict>) {
    // Deleted by the tx, present again with other bytes: a whole-file conflict (see
    // the module docs); the candidate keeps the disk's file.
    let which = txs_label(txs);
    if let (None, Some(o), Some(t)) = (base.1, ours.1, theirs.1) {
        if o != t {
            return (
                *ours.0,
                Some(o.to_vec()),
                Some(FileConflict {
                    path: path.clone(),
                    reason: format!(
                        "reverting {which}: {which} deleted it and it exists again with other bytes; the candidate keeps the file on disk"
                    ),
                    regions: Vec::new(),
                }),
            );
        }
    }
    let (mut state, bytes, conflict) = merge_file(path, base, ours, theirs, &REVERT_LABELS);
    // Owner and attributes: the disk's where the file exists there.
    if let (FileState::File { meta, .. }, Some(disk)) = (&mut state, ours.0.meta()) {
        meta.owner = disk.owner;
        meta.xattrs = disk.xattrs;
    }
    let conflict = conflict.map(|mut c| {
        c.reason = format!("reverting {which}: {}", c.reason);
        c
    });
    (state, bytes, conflict)
}

/// One change of one file to undo: what `txs` (newest first; several when squashed)
/// found there (`pre`) and left there (`post`), states with their bytes.
struct Step {
    txs: Vec<u64>,
    post: (FileState, Option<Vec<u8>>),
    pre: (FileState, Option<Vec<u8>>),
}

/// Join the steps of one file (newest first) into as few as compose cleanly, so that
/// undoing them is one merge against the disk instead of one per tx. Merged one
/// after the other, a conflict of a newer tx's merge would be merged again by the
/// older tx's, nesting its markers, wherever one agent changed lines and then changed
/// them again (its successive commits, other agents' commits in between or not).
///
/// An older step joins the newer one when its undo carries over onto what the newer
/// one found: the three-way merge of base = the older's post-image, ours = the
/// newer's pre-image, theirs = the older's pre-image — what the file would have held
/// before the newer tx had the older never happened — is clean. The joined step goes
/// from the newer's post-image to that merge. When nothing else wrote the file in
/// between (the older left exactly what the newer found), that is the older's
/// pre-image. A merge that conflicts (another tx changed the same lines in between)
/// keeps the steps apart, and so does any step in which the file is absent on one of
/// the three sides without being joined exactly.
fn squash(path: &RelPath, steps: Vec<Step>) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for step in steps {
        let Some(newer) = out.last_mut() else {
            out.push(step);
            continue;
        };
        if same_content(&newer.pre.0, &step.post.0) {
            newer.pre = step.pre;
            newer.txs.extend(step.txs);
            continue;
        }
        // Existence changes join only exactly (above): the merge would take a file
        // the older tx deleted and someone re-created as an add/add against an empty
        // base, where `revert_file` asks the person (a whole-file conflict).
        if step.post.1.is_none() || newer.pre.1.is_none() || step.pre.1.is_none() {
            out.push(step);
            continue;
        }
        let (state, bytes, conflict) = merge_file(
            path,
            (&step.post.0, step.post.1.as_deref()),
            (&newer.pre.0, newer.pre.1.as_deref()),
            (&step.pre.0, step.pre.1.as_deref()),
            &REVERT_LABELS,
        );
        if conflict.is_none() {
            newer.pre = (state, bytes);
            newer.txs.extend(step.txs);
        } else {
            out.push(step);
        }
    }
    out
}

/// Same bytes and mode (owner and attributes aside), or absent both.
fn same_content(a: &FileState, b: &FileState) -> bool {
    a.hash() == b.hash() && a.mode() == b.mode()
}

/// `tx 5`, or `txs 5, 3` for a squashed step.
fn txs_label(txs: &[u64]) -> String {
    match txs {
        [one] => format!("tx {one}"),
        many => format!(
            "txs {}",
            many.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
