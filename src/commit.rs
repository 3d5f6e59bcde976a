//! Commit and rollback: the gate, then ApplyBatch (docs/design.md, "Lifecycle" ›
//! 3. Commit gate, 4. Persistence, 5. Rollback).

use crate::batch::gate;
use crate::batch::machine::NewBatch;
use crate::batch::protocol;
use crate::edit;
use crate::error::{Error, Result, StateReason, Verb};
use crate::failpoint::crash_point;
use crate::fs::snapshot;
use crate::journal::records::*;
use crate::journal::window::BlobWindow;
use crate::journal::{Reader, Writer};
use crate::recovery;
use crate::workspace::Journal;
use std::collections::{BTreeMap, BTreeSet};

/// Options of [`Journal::commit`].
/// `#[non_exhaustive]`: start from [`CommitOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct CommitOptions {
    /// The revision to apply (default: the latest).
    pub revision: Option<u32>,
    /// Accept that files this process cannot give their owner back (it is not root)
    /// get its owner instead of refusing the commit ([`Error::OwnerNotKept`]).
    pub allow_owner_change: bool,
    /// Refuse a preview older than this ([`Error::PreviewExpired`]), instead of the
    /// journal's [`crate::OpenOptions::max_preview_age`] (default: `None`, the
    /// journal's). The age is checked before the lock is taken and again under it.
    pub max_preview_age: Option<std::time::Duration>,
}

impl CommitOptions {
    /// Every default: the latest revision, owners kept, the journal's max preview age.
    pub fn new() -> CommitOptions {
        CommitOptions::default()
    }
    /// [`CommitOptions::revision`]: apply this revision (0-based) instead of the latest.
    pub fn with_revision(mut self, revision: u32) -> Self {
        self.revision = Some(revision);
        self
    }
    /// [`CommitOptions::allow_owner_change`].
    pub fn with_allow_owner_change(mut self, allow: bool) -> Self {
        self.allow_owner_change = allow;
        self
    }
    /// [`CommitOptions::max_preview_age`].
    pub fn with_max_preview_age(mut self, age: std::time::Duration) -> Self {
        self.max_preview_age = Some(age);
        self
    }
}

/// What a forced rollback did to a file that had changed since the commit it rolled
/// back ([`Journal::overwritten`]), and where that file's bytes went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Overwritten {
    /// Root-relative path.
    pub path: String,
    /// What the rollback did to it.
    pub action: OverwriteAction,
    /// The tx whose revision keeps the bytes the file held (the forced rollback's own
    /// tx: rolling it back brings them back); `None` when the file was absent.
    pub kept_in: Option<u64>,
    /// The tx the rollback undid.
    pub rolled_back: u64,
}

/// See [`Overwritten::action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverwriteAction {
    /// The file held other bytes (or mode): the rollback wrote the old ones over them.
    Overwrote,
    /// The file was absent (deleted or moved since): the rollback re-created it.
    Recreated,
    /// The tx created the file and it was rewritten since: the rollback deleted it.
    Deleted,
}

impl Overwritten {
    /// What happened, in words that name no front end, e.g. "the bytes x.txt held
    /// (changed since tx 3) are kept in tx 7; rolling back tx 7 brings them back".
    pub fn describe(&self) -> String {
        let (path, of) = (&self.path, self.rolled_back);
        match (self.action, self.kept_in) {
            (OverwriteAction::Recreated, _) | (_, None) => format!(
                "{path} was absent (deleted or moved since tx {of}); the rollback re-created it"
            ),
            (OverwriteAction::Overwrote, Some(k)) => format!(
                "the bytes {path} held (changed since tx {of}) were overwritten and are kept in tx {k}; rolling back tx {k} brings them back"
            ),
            (OverwriteAction::Deleted, Some(k)) => format!(
                "{path}, which tx {of} created, was rewritten since; the rollback deleted it, and its bytes are kept in tx {k}; rolling back tx {k} brings them back"
            ),
        }
    }
}

/// Options of [`Journal::rollback`].
/// `#[non_exhaustive]`: start from [`RollbackOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RollbackOptions {
    /// Overwrite files changed since the commit; their current bytes are stored in the
    /// journal first, so nothing is lost (docs/design.md, "Rollback").
    pub force: bool,
    /// As [`CommitOptions::allow_owner_change`].
    pub allow_owner_change: bool,
}

impl RollbackOptions {
    /// Every default: not forced, owners kept.
    pub fn new() -> RollbackOptions {
        RollbackOptions::default()
    }
    /// [`RollbackOptions::force`].
    pub fn with_force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
    /// [`RollbackOptions::allow_owner_change`].
    pub fn with_allow_owner_change(mut self, allow: bool) -> Self {
        self.allow_owner_change = allow;
        self
    }
}

/// What [`Journal::commit_report`] or [`Journal::rollback_report`] did: the receipt of
/// the batch that applied the change, and whether it had landed before this call.
/// Serialized flat: the receipt's fields, then `already` (as [`crate::AbortReport`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommitReport {
    /// The receipt: of this call's batch, or (`already`) of the batch that landed the
    /// change before, read from the journal.
    #[serde(flatten)]
    pub receipt: Receipt,
    /// The change had landed before this call, so nothing was written: a retried
    /// commit of the revision that was committed, or a retried rollback of a tx whose
    /// rollback is live. A retry after a timeout or a lost answer is answered with the
    /// receipt instead of an error, so that an agent never follows a next step that
    /// would undo its own work (issue 29, item 3).
    pub already: bool,
}

impl CommitReport {
    fn new(receipt: Receipt) -> CommitReport {
        CommitReport {
            receipt,
            already: false,
        }
    }
}

impl Journal {
    /// As [`Journal::commit_report`], the receipt alone: a retried commit of the
    /// revision that was committed returns that commit's receipt too.
    pub fn commit(&self, tx: impl Into<crate::TxRef>, opts: CommitOptions) -> Result<Receipt> {
        self.commit_report(tx, opts).map(|r| r.receipt)
    }

    /// Apply a revision of an open tx to the disk, all files or none (docs/design.md,
    /// "Lifecycle" › 3. Commit gate and 4. Persistence).
    ///
    /// Under the commit lock: recover any batch a dead process left, re-check every
    /// path, compare every file with its snapshot by blake3, then run ApplyBatch.
    /// Returns the one receipt of the commit as soon as every file holds its new
    /// content durably; the journal's record of the completion (the same receipt) is
    /// written in the background, still under the lock, and every later call on this
    /// handle waits for it ([`Journal::flush`] waits for it and returns its error;
    /// docs/commit-protocol.md, steps 6–7). The reingest hook is called once after.
    ///
    /// Errors (nothing on disk changed): [`Error::WrongState`], [`Error::UnknownRevision`],
    /// [`Error::ValidationFailed`], [`Error::LockTimeout`], [`Error::StaleSnapshot`]
    /// (run `rebase` or preview again), [`Error::Path`], [`Error::CommitFailed`] (an I/O
    /// error inside the batch, reverted), [`Error::AttentionOwnsFiles`] when a batch that
    /// needs attention names a file the commit writes. [`Error::NeedsAttention`] when a
    /// revert met foreign bytes.
    ///
    /// A commit that landed already is not an error: when the tx is committed with the
    /// revision asked for (`opts.revision`, else its latest), the answer is that
    /// commit's receipt from the journal with [`CommitReport::already`] set, and nothing
    /// is written (checked before the lock and again under it, where a concurrent
    /// commit of the same tx may have landed meanwhile). When another revision was
    /// committed, [`Error::WrongState`] with [`StateReason::OtherRevisionCommitted`]
    /// names it; a tx committed and since rolled back is [`StateReason::RolledBack`]:
    /// its change is not on disk, so neither is "already committed".
    pub fn commit_report(
        &self,
        tx: impl Into<crate::TxRef>,
        opts: CommitOptions,
    ) -> Result<CommitReport> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            if let Some(done) = self.already_committed(tx, opts.revision)? {
                return Ok(done);
            }
            self.ws.writable()?;
            let max_age = opts.max_preview_age.or(self.max_preview_age);
            // A batch of this tx in flight (another handle or process committing it,
            // its completion not yet recorded) is no refusal: wait for its lock below,
            // and answer its receipt as `already` once it has landed (a retried commit).
            let rev = match self.committable_revision(tx, opts.revision, max_age) {
                Ok(rev) => Some(rev),
                Err(Error::WrongState {
                    reason: StateReason::BatchInFlight { .. },
                    ..
                }) => None,
                Err(e) => return Err(e),
            };
            let receipt = {
                let locked = self.lock()?;
                crash_point!("batch::after_lock");
                recovery::recover(&locked, false)?;
                // Re-read under the lock: another process may have committed it meanwhile.
                // The tx record is enough: a revision never changes once recorded, and
                // one is only dropped with its tx no longer open (journal gc aborts it).
                if let Some(done) = self.already_committed(tx, opts.revision)? {
                    return Ok(done);
                }
                let rev = match rev {
                    Some(rev) => rev,
                    // The batch in flight was settled without landing (recovery
                    // reverted it): the tx is open again, commit it as asked.
                    None => self.committable_revision(tx, opts.revision, max_age)?,
                };
                let (_, txrec) = self.committable_tx(tx, max_age)?;
                let mut files: Vec<BatchFile> = rev
                    .files
                    .iter()
                    .filter(|f| f.snapshot != f.candidate)
                    .map(|f| BatchFile {
                        path: f.path.clone(),
                        pre: f.snapshot,
                        post: f.candidate,
                    })
                    .collect();
                // A batch that needs attention owns its files until it is settled.
                gate::attention_owner(&locked, tx, Verb::Commit, files.iter().map(|f| &f.path))?;
                // Every file the tx named, not only those this revision changes.
                let gated = crate::revision::gated_files(&self.ws.store.read()?, &txrec, &rev)?;
                let stale = gate::stale_paths(
                    &locked,
                    gated.iter().map(|(p, s)| (p, s)),
                    gate::Refused::Fails,
                )?;
                if !stale.is_empty() {
                    let writers = gate::writers(&locked, tx, &stale)?;
                    return Err(Error::StaleSnapshot {
                        tx,
                        paths: stale,
                        writers,
                    });
                }
                gate::keep_owners(&locked, tx, &mut files, opts.allow_owner_change)?;
                gate::keep_acls(&locked, tx, &files)?;
                let new = NewBatch {
                    kind: BatchKind::Commit {
                        revision: rev.revision,
                    },
                    files,
                    create_dirs: Vec::new(),
                    // A revert removes the directories its reverted commits created,
                    // when it leaves them empty, as a rollback does.
                    remove_dirs: crate::revert::dirs_to_remove(&self.ws.store.read()?, tx)?,
                };
                let landed = protocol::apply(&locked, new, |w| {
                    // An `abort` or another committer may have got there first.
                    let rec = w.tx(tx)?;
                    if rec.state != TxState::Open {
                        return Err(Error::wrong_state(&rec, Verb::Apply));
                    }
                    Ok(tx)
                })?;
                // Landed: the receipt is returned now, and the completion is written
                // in the background, the lock held until it is durable.
                self.complete_landed(locked, landed)
            };
            self.reingest(&paths_of(&receipt));
            Ok(CommitReport::new(receipt))
        })
        .map_err(|e| self.with_redo(e))
    }

    /// `Some` (the landed commit's receipt, `already`) when the tx `tx` is committed
    /// with `revision` (`None`: its latest); `None` when it is not committed, so the
    /// commit goes on (and is refused there when the tx is not open). Errors:
    /// [`Error::WrongState`] with [`StateReason::OtherRevisionCommitted`] when another
    /// revision of it was committed; a rollback tx is never "already committed" by a
    /// commit ([`StateReason::Committed`], as before).
    fn already_committed(&self, tx: u64, revision: Option<u32>) -> Result<Option<CommitReport>> {
        let r = self.ws.store.read()?;
        let rec = r.tx_required(tx)?;
        let (TxState::Committed, Some(c), None) = (rec.state, rec.committed, rec.rollback_of)
        else {
            return Ok(None);
        };
        let asked = revision.unwrap_or(rec.revisions.saturating_sub(1));
        if asked != c.revision {
            return Err(Error::state(
                &rec,
                Verb::Commit,
                StateReason::OtherRevisionCommitted {
                    revision: c.revision,
                    batch: c.batch,
                    asked,
                },
            ));
        }
        let receipt = r
            .receipt(c.batch)?
            .ok_or_else(|| crate::error::JournalError::Missing {
                what: format!("receipt of batch {} of tx {tx}", c.batch),
            })?;
        Ok(Some(CommitReport {
            receipt,
            already: true,
        }))
    }

    /// `Some` (the receipt of the rollback that undid it, `already`) when the tx `tx` is
    /// rolled back and that rollback's change is live (the journal says so and the disk
    /// agrees, as [`Journal::with_redo`] checks it); `None` otherwise, so the rollback
    /// goes on (and is refused there when it cannot be rolled back).
    fn already_rolled_back(&self, tx: u64) -> Result<Option<CommitReport>> {
        let (rec, by) = {
            let r = self.ws.store.read()?;
            let rec = r.tx_required(tx)?;
            match (rec.state, rec.rolled_back_by) {
                (TxState::RolledBack, Some(by)) => (r.tx_required(by)?, by),
                _ => return Ok(None),
            }
        };
        let Some(c) = rec.committed.filter(|_| rec.state == TxState::Committed) else {
            return Ok(None);
        };
        if self.redo_of(by)? != Some(by) {
            return Ok(None);
        }
        let receipt = self.ws.store.read()?.receipt(c.batch)?.ok_or_else(|| {
            crate::error::JournalError::Missing {
                what: format!("receipt of batch {} of tx {by}", c.batch),
            }
        })?;
        Ok(Some(CommitReport {
            receipt,
            already: true,
        }))
    }

    /// The open tx `tx`, if a commit may apply it: not too old, not a rollback's tx.
    fn committable_tx(
        &self,
        tx: u64,
        max_age: Option<std::time::Duration>,
    ) -> Result<(crate::journal::Reader, TxRecord)> {
        let r = self.ws.store.read()?;
        let txrec = crate::tx::open_tx(&r, tx, Verb::Commit)?;
        self.check_age(&txrec, max_age)?;
        if let Some(of) = txrec.rollback_of {
            return Err(Error::state(
                &txrec,
                Verb::Commit,
                StateReason::RollbackTx { of },
            ));
        }
        Ok((r, txrec))
    }

    fn committable_revision(
        &self,
        tx: u64,
        revision: Option<u32>,
        max_age: Option<std::time::Duration>,
    ) -> Result<RevisionRecord> {
        let (r, txrec) = self.committable_tx(tx, max_age)?;
        let rev = r.revision_of(&txrec, revision)?;
        let n = rev.revision;
        if edit::has_errors(&rev.validation) {
            return Err(Error::ValidationFailed {
                tx,
                revision: n,
                summary: crate::revision::error_summary(&rev.validation),
            });
        }
        Ok(rev)
    }

    /// For the `stale` files of a rollback of `tx` (each: its batch file, what it holds
    /// now): the later changes to roll back first — ascending, the hint names them newest
    /// first — and the files no later change explains, sorted.
    ///
    /// The later changes: the landed txs after `tx` that wrote a stale file, grouped by
    /// rollback chain (a tx with the rollbacks of it, of those, … that came after `tx`).
    /// In a chain each member undoes the one before, so a chain of an even number of
    /// members changes nothing, and one of an odd number holds its first member's
    /// change, owned by its newest member (a redo owns what it redid: `Redone`). Only
    /// those owners are named: a rollback that merely undid a later commit is not a
    /// change to undo (naming it sent the user round in a loop, found by the breaker).
    ///
    /// A file is explained when undoing every later landed change of it, newest first,
    /// each from the post-image it left to its pre-image, leads from what it holds now
    /// back to `tx`'s post-image; otherwise something outside ultra-edit wrote it too,
    /// and rolling the later txs back first would not clear the refusal. Walks the txs
    /// newer than `tx`, newest first.
    fn later_writers(
        &self,
        tx: u64,
        stale: &[(&BatchFile, FileState)],
    ) -> Result<(Vec<u64>, Vec<String>)> {
        let r = self.ws.store.read()?;
        // Every later tx's `rollback_of`, and the landed ones that wrote a stale file.
        let mut parent: BTreeMap<u64, Option<u64>> = BTreeMap::new();
        let mut writers: Vec<u64> = Vec::new();
        let mut live: BTreeSet<u64> = BTreeSet::new();
        // Per stale file: the state reached so far, and whether each step was a change
        // the journal knows.
        let mut walk: Vec<(FileState, bool)> = stale.iter().map(|(_, now)| (*now, true)).collect();
        r.txs_newest_first(|rec| {
            if rec.tx <= tx {
                return Ok(false);
            }
            parent.insert(rec.tx, rec.rollback_of);
            let landed = matches!(rec.state, TxState::Committed | TxState::RolledBack);
            let batch = match rec.committed {
                Some(c) if landed => r.batch(c.batch)?,
                _ => None,
            };
            let Some(batch) = batch else {
                return Ok(true);
            };
            let mut wrote = false;
            for ((f, _), (state, known)) in stale.iter().zip(walk.iter_mut()) {
                let Some(w) = batch.files.iter().find(|w| w.path == f.path) else {
                    continue;
                };
                wrote = true;
                if *known && w.post.matches(state) {
                    *state = w.pre;
                } else {
                    *known = false;
                }
            }
            if wrote {
                writers.push(rec.tx);
                if rec.state == TxState::Committed {
                    live.insert(rec.tx);
                }
            }
            Ok(true)
        })?;
        // Group the writers by the first later member of their chain.
        let mut chains: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &w in &writers {
            let mut first = w;
            let mut seen = BTreeSet::from([w]);
            while let Some(Some(p)) = parent.get(&first) {
                if !parent.contains_key(p) || !seen.insert(*p) {
                    break;
                }
                first = *p;
            }
            chains.entry(first).or_default().push(w);
        }
        let mut later: Vec<u64> = chains
            .values()
            .filter(|members| members.len() % 2 == 1)
            .filter_map(|members| members.iter().max().copied())
            // A chain whose members wrote different files (a rollback writes only the
            // files not already back) may end, for these files, in an undone member:
            // nothing of it to roll back here.
            .filter(|top| live.contains(top))
            .collect();
        later.sort();
        let mut outside: Vec<String> = stale
            .iter()
            .zip(&walk)
            .filter(|((f, _), (state, known))| !(*known && f.post.matches(state)))
            .map(|((f, _), _)| f.path.to_string())
            .collect();
        outside.sort();
        Ok((later, outside))
    }

    /// As [`Journal::rollback_report`], the receipt alone: a retried rollback whose
    /// rollback is live returns that rollback's receipt too.
    pub fn rollback(&self, tx: impl Into<crate::TxRef>, opts: RollbackOptions) -> Result<Receipt> {
        self.rollback_report(tx, opts).map(|r| r.receipt)
    }

    /// Restore the exact pre-commit bytes, modes and existence of every file of the
    /// committed tx `tx`, as a new tx (docs/design.md, "Lifecycle" › 5. Rollback). Created files are removed, deleted
    /// files recreated, created directories removed when empty. Rolling back a rollback
    /// redoes the commit.
    ///
    /// Errors: [`Error::WrongState`] (not committed, or already rolled back),
    /// [`Error::StaleRollback`] when a file changed since the commit (unless
    /// `opts.force`), and those of [`Journal::commit`].
    ///
    /// A rollback that landed already is not an error: when `tx` is rolled back and
    /// the rollback tx that undid it is committed with its change on disk, the answer
    /// is that rollback's receipt from the journal with [`CommitReport::already`] set,
    /// and nothing is written (checked before the lock and again under it).
    pub fn rollback_report(
        &self,
        tx: impl Into<crate::TxRef>,
        opts: RollbackOptions,
    ) -> Result<CommitReport> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            if let Some(done) = self.already_rolled_back(tx)? {
                return Ok(done);
            }
            let receipt = {
                let locked = self.lock()?;
                crash_point!("batch::after_lock");
                recovery::recover(&locked, false)?;
                if let Some(done) = self.already_rolled_back(tx)? {
                    return Ok(done);
                }
                let (orig, batch) = self.rollbackable(tx)?;
                gate::attention_owner(
                    &locked,
                    tx,
                    Verb::RollBack,
                    batch.files.iter().map(|f| &f.path),
                )?;
                let mut current = Vec::with_capacity(batch.files.len());
                let mut windows = Vec::with_capacity(batch.files.len());
                let mut xattr_blobs = Vec::new();
                let mut stale = Vec::new();
                for f in &batch.files {
                    let (state, bytes, xattrs, window) = read_current(&locked, f)?;
                    if !f.post.matches(&state) {
                        stale.push(f.path.to_string());
                    }
                    current.push((f, state, bytes));
                    windows.push(window);
                    xattr_blobs.extend(xattrs);
                }
                // Where a test changes a file between the rollback's check of the files
                // (its gate: the protocol checks them next at the install) and the rest.
                #[cfg(feature = "failpoints")]
                fail::fail_point!("rollback::after_check");
                // Nothing to do when every file already holds its old content (a later
                // rollback of it, or an edit, undid it): say so rather than "changed",
                // forced or not. A forced rollback that changed no file used to record
                // itself, and its redo then claimed to redo the commit while writing
                // nothing (found by the breaker).
                if !batch.files.is_empty()
                    && current.iter().all(|(f, state, _)| f.pre.matches(state))
                {
                    return Err(Error::state(
                        &orig,
                        Verb::RollBack,
                        StateReason::AlreadyUndone,
                    ));
                }
                if !stale.is_empty() && !opts.force {
                    let files: Vec<(&BatchFile, FileState)> = current
                        .iter()
                        .filter(|(f, state, _)| !f.post.matches(state))
                        .map(|(f, state, _)| (*f, *state))
                        .collect();
                    let (changed_by, outside) = self.later_writers(tx, &files)?;
                    // Deleted or moved since, and a forced rollback would re-create it.
                    let mut absent: Vec<String> = files
                        .iter()
                        .filter(|(f, state)| !state.exists() && f.pre.exists())
                        .map(|(f, _)| f.path.to_string())
                        .collect();
                    absent.sort();
                    return Err(Error::StaleRollback {
                        tx,
                        paths: stale,
                        changed_by,
                        outside,
                        absent,
                    });
                }
                let revision = self.rollback_revision(&current, windows, (tx, batch.batch))?;
                let mut new = NewBatch {
                    kind: BatchKind::Rollback {
                        of: tx,
                        forced: opts.force && !stale.is_empty(),
                    },
                    files: current
                        .iter()
                        .filter(|(f, state, _)| !f.pre.matches(state))
                        .map(|(f, state, _)| BatchFile {
                            path: f.path.clone(),
                            pre: *state,
                            post: f.pre,
                        })
                        .collect(),
                    create_dirs: Vec::new(),
                    remove_dirs: batch.create_dirs.iter().rev().cloned().collect(),
                };
                gate::keep_owners(&locked, tx, &mut new.files, opts.allow_owner_change)?;
                gate::keep_acls(&locked, tx, &new.files)?;
                // The rollback tx is created in the intent's own journal write: it never
                // exists without its batch, so it ends with the batch (committed, or
                // aborted when the batch is reverted) and is never left open.
                let landed = protocol::apply(&locked, new, |w| {
                    record_rollback_tx(w, &orig, &current, &xattr_blobs, revision)
                })?;
                self.complete_landed(locked, landed)
            };
            self.reingest(&paths_of(&receipt));
            Ok(CommitReport::new(receipt))
        })
        .map_err(|e| self.with_redo(e))
    }

    /// For the receipt of a forced rollback: each file that had changed since the
    /// commit it rolled back (its state before the rollback is not that commit's
    /// post-image), what the rollback did to it and where its bytes are kept (the
    /// rollback's own tx records them as its snapshot, so rolling that tx back brings
    /// them back). Empty for any other receipt. Reads the rolled-back tx's batch.
    ///
    /// Errors: journal errors reading it.
    pub fn overwritten(&self, receipt: &Receipt) -> Result<Vec<Overwritten>> {
        let BatchKind::Rollback { of, forced: true } = receipt.kind else {
            return Ok(Vec::new());
        };
        let r = self.ws.store.read()?;
        let batch = match r.tx_required(of)?.committed {
            Some(c) => r.batch(c.batch)?,
            None => None,
        };
        let Some(batch) = batch else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for f in &receipt.files {
            let Some(orig) = batch.files.iter().find(|b| b.path == f.path) else {
                continue;
            };
            if orig.post.matches(&f.pre) {
                continue;
            }
            let action = match (f.pre.exists(), f.post.exists()) {
                (false, _) => OverwriteAction::Recreated,
                (true, false) => OverwriteAction::Deleted,
                (true, true) => OverwriteAction::Overwrote,
            };
            out.push(Overwritten {
                path: f.path.to_string(),
                action,
                kept_in: f.pre.exists().then_some(receipt.tx),
                rolled_back: of,
            });
        }
        Ok(out)
    }

    /// `e`, where it refuses a rolled-back tx, with the redo checked against the disk:
    /// the journal says the rollback `by` that undid it redoes it, but when `by`'s own
    /// change is undone already (rolled back, or every file of its batch holds its old
    /// content again, say after another rollback of the same tx), rolling `by` back
    /// would be refused, and nothing redoes it ([`StateReason::RolledBack`]'s `redo`).
    pub(crate) fn with_redo(&self, e: Error) -> Error {
        match e {
            Error::WrongState {
                tx,
                state,
                pruned,
                verb,
                reason: StateReason::RolledBack { by, .. },
            } => Error::WrongState {
                tx,
                state,
                pruned,
                verb,
                reason: StateReason::RolledBack {
                    by,
                    // Where the journal or the disk cannot be read, the journal's answer.
                    redo: self.redo_of(by).unwrap_or(Some(by)),
                },
            },
            e => e,
        }
    }

    /// `Some(by)` while the change of the rollback tx `by` is live; `None` when it is
    /// undone: `by` rolled back, or every file its batch wrote holds that file's old
    /// content again.
    fn redo_of(&self, by: u64) -> Result<Option<u64>> {
        let r = self.ws.store.read()?;
        let rec = r.tx_required(by)?;
        if rec.state != TxState::Committed {
            return Ok(None);
        }
        let batch = match rec.committed {
            Some(c) => r.batch(c.batch)?,
            None => None,
        };
        let Some(batch) = batch.filter(|b| !b.files.is_empty()) else {
            return Ok(Some(by));
        };
        for f in &batch.files {
            let (state, _) = snapshot::state_of(self.ws.fs.as_ref(), &self.ws.root, &f.path)?;
            if !f.pre.matches(&state) {
                return Ok(Some(by));
            }
        }
        Ok(None)
    }

    fn rollbackable(&self, tx: u64) -> Result<(TxRecord, BatchRecord)> {
        let r = self.ws.store.read()?;
        let rec = r.tx_required(tx)?;
        let committed = match (rec.state, rec.committed) {
            (TxState::Committed, Some(c)) if !rec.pruned => c,
            _ => return Err(Error::wrong_state(&rec, Verb::RollBack)),
        };
        if let Some((undone_by, redo)) = redone(&r, tx)? {
            return Err(Error::state(
                &rec,
                Verb::RollBack,
                StateReason::Redone { undone_by, redo },
            ));
        }
        let batch =
            r.batch(committed.batch)?
                .ok_or_else(|| crate::error::JournalError::Missing {
                    what: format!("batch {} of tx {tx}", committed.batch),
                })?;
        Ok((rec, batch))
    }

    /// The files of a rollback tx's revision 0 (snapshot = disk now, candidate = the
    /// original pre-images), diffed before the journal write that records them.
    /// `windows`: per file of `current`, the diff's window [`read_current`] made from
    /// its one read of a large file that holds its post-image (a journal error met
    /// making it is returned here, after the rollback's checks of the files, where
    /// the window is needed).
    fn rollback_revision(
        &self,
        current: &[(&BatchFile, FileState, Option<Vec<u8>>)],
        windows: Vec<Window>,
        (tx, batch): (u64, u64),
    ) -> Result<Vec<FileRevision>> {
        let reader = self.ws.store.read()?;
        // What a journal error was reading, for its message.
        let needed = |f: &BatchFile, what: &'static str| {
            let path = f.path.clone();
            move |e: Error| {
                e.needed_by(|| {
                    format!("the {what} of {path} in batch {batch} of tx {tx}, which this rollback of tx {tx} restores")
                })
            }
        };
        // A large file that holds its post-image (read_current left its bytes on disk)
        // is diffed from the journal's chunks around the edit (`window_diff`): neither
        // side is read whole. Where a window cannot stand for the whole (see
        // `Reader::blob_window`), both sides are read whole, as for any other file.
        let mut windowed = Vec::with_capacity(current.len());
        let mut pres = Vec::with_capacity(current.len());
        let mut nows = Vec::with_capacity(current.len());
        for ((f, state, bytes), window) in current.iter().zip(windows) {
            let window = match window {
                Window::Made(Some(w)) => edit::window_diff(&f.path, &w.as_diff_window()),
                Window::Made(None) | Window::NotMade => None,
                Window::Failed(e) => {
                    // Which image is damaged: each streamed through its checks (a chunk
                    // at a time, never whole), the pre-image first; the first to fail
                    // is named alone. Both whole: the window's own error, for both.
                    let label = [(f.pre.hash(), "pre-image"), (state.hash(), "post-image")];
                    for (hash, what) in label {
                        if let Some(h) = hash {
                            if let Err(bad) = reader.blob_stream(&h, &mut |_| Ok(())) {
                                return Err(needed(f, what)(bad));
                            }
                        }
                    }
                    return Err(needed(f, "post-image and pre-image")(e));
                }
            };
            let whole = window.is_none();
            windowed.push(window);
            pres.push(match f.pre.hash() {
                Some(h) if whole => Some(reader.blob_required(&h).map_err(needed(f, "pre-image"))?),
                _ => None,
            });
            // The disk's bytes, when read_current left them there: they are the
            // post-image's, which the journal holds.
            nows.push(match (bytes, state.hash()) {
                (None, Some(h)) if whole => {
                    Some(reader.blob_required(&h).map_err(needed(f, "post-image"))?)
                }
                _ => None,
            });
        }
        // The diffs (with their hunk names' parses) are independent per file: in
        // parallel for a large rollback, as for a preview (`revision::par_map`).
        let items: Vec<_> = current
            .iter()
            .zip(windowed)
            .zip(pres.iter().zip(&nows))
            .collect();
        type Item<'c, 'b> = (
            (&'c Current<'b>, Option<edit::CandidateDiff>),
            (&'c Option<Vec<u8>>, &'c Option<Vec<u8>>),
        );
        let bytes_of = |((cur, _), (pre, now)): &Item<'_, '_>| {
            let read = cur.2.as_ref().or(now.as_ref());
            read.map_or(0, Vec::len) + pre.as_ref().map_or(0, Vec::len)
        };
        Ok(crate::revision::par_map(
            &items,
            bytes_of,
            |_, (((f, state, bytes), window), (pre, now))| FileRevision {
                path: f.path.clone(),
                snapshot: *state,
                candidate: f.pre,
                diff: crate::revision::with_mode_lines(
                    match window {
                        Some(diff) => diff.clone(),
                        None => edit::candidate_diff(
                            &f.path,
                            bytes.as_deref().or(now.as_deref()),
                            pre.as_deref(),
                        ),
                    },
                    state,
                    &f.pre,
                ),
            },
        ))
    }
}

/// One file of a rollback: its batch file, what it holds now, and those bytes (`None`
/// for a large file that holds its post-image, see [`read_current`]).
type Current<'a> = (&'a BatchFile, FileState, Option<Vec<u8>>);

/// The diff's window of one file of a rollback, as [`read_current`] left it.
enum Window {
    /// None made: the diff reads what it needs itself (a file read whole, a file the
    /// commit created).
    NotMade,
    /// Made from the one read of a large file that holds its post-image; `None` when
    /// the two images have no window (either stored inline, or equal), and the diff
    /// reads them whole.
    Made(Option<BlobWindow>),
    /// The journal failed while it was made: returned where the diff needs the window,
    /// after the rollback's checks of the files ([`Journal::rollback_report`]).
    Failed(Error),
}

/// Files over this many bytes that hold their post-image are not read into memory by
/// a rollback (the size from which a commit streams its temps, `batch::protocol`).
const READ_WHOLE_MAX: u64 = 8 << 20;

/// What `f`'s path holds now, its bytes and its xattrs' blob, as
/// [`snapshot::read_state`] gives them; but a file over [`READ_WHOLE_MAX`] whose
/// post-image the journal holds (stored by the commit) is only hashed as it is read,
/// and when it holds that post-image comes without its bytes: the rollback diffs it
/// from the journal's chunks around the edit and records the blob the journal holds.
/// That one read also scans the file for the diff's window ([`Window`]): the window's
/// chunk lists and differing chunks are read from the journal first, the shared start
/// and end are scanned from the file's bytes as they are hashed, and the scan is used
/// only when the hash (and size, mode, owner…) show the bytes were the post-image —
/// else the file is read again whole, as any changed file. Memory: the scan's, not
/// the file. Errors: those of `read_state`, and the journal's (those met making the
/// window are kept in [`Window::Failed`]).
#[allow(clippy::type_complexity)]
fn read_current(
    locked: &crate::lock::Locked<'_>,
    f: &BatchFile,
) -> Result<(FileState, Option<Vec<u8>>, Option<Vec<u8>>, Window)> {
    if let Some(post) = f.post.hash().filter(|_| f.post.size() > READ_WHOLE_MAX) {
        let reader = locked.store.read()?;
        if reader.has_blob(&post)? {
            let plan = f.pre.hash().map(|pre| reader.blob_window_plan(&post, &pre));
            let mut scan = match &plan {
                Some(Ok(Some(p))) => Some(p.disk_scan()),
                _ => None,
            };
            let (state, xattrs) =
                snapshot::state_of_with(locked.fs.as_ref(), &locked.root, &f.path, &mut |piece| {
                    if let Some(scan) = scan.as_mut() {
                        scan.feed(piece);
                    }
                })?;
            if f.post.matches(&state) && state.hash() == Some(post) {
                let window = match plan {
                    None => Window::NotMade,
                    Some(Err(e)) => Window::Failed(e),
                    Some(Ok(None)) => Window::Made(None),
                    Some(Ok(Some(p))) => {
                        // The scan saw exactly the bytes the state's hash was taken of:
                        // the post-image's, so it stands for the journal's chunks.
                        let scanned = scan.and_then(|s| s.proven(state.exists(), &post));
                        match reader.blob_window_finish(p, scanned) {
                            Ok(w) => Window::Made(Some(w)),
                            Err(e) => Window::Failed(e),
                        }
                    }
                };
                return Ok((state, None, xattrs, window));
            }
        }
    }
    let (state, bytes, xattrs) = snapshot::read_state(locked.fs.as_ref(), &locked.root, &f.path)?;
    Ok((state, bytes, xattrs, Window::NotMade))
}

/// For the committed `tx`: `Some((b, c))` when its change is live through a redo — its
/// newest rollback `b` was rolled back — with `c` the committed tx at the top of that
/// chain (a redo can itself be undone and redone: the chain is followed up while each
/// step is live through a redo in turn). `None` when `tx`'s change is its own: never
/// rolled back, or (in a journal written before this check) rolled back again since.
/// Reads the txs newer than each step, newest first.
pub(crate) fn redone(r: &Reader, tx: u64) -> Result<Option<(u64, u64)>> {
    let mut found: Option<(u64, u64)> = None;
    let mut step = tx;
    let mut seen = BTreeSet::from([tx]);
    loop {
        let mut newest_rollback = None;
        r.txs_newest_first(|t| {
            if t.tx <= step {
                return Ok(false);
            }
            if t.rollback_of == Some(step) {
                newest_rollback = Some(t);
                return Ok(false);
            }
            Ok(true)
        })?;
        let Some(b) = newest_rollback else {
            return Ok(found);
        };
        let (TxState::RolledBack, Some(c)) = (b.state, b.rolled_back_by) else {
            return Ok(found);
        };
        if !seen.insert(c) || r.tx_required(c)?.state != TxState::Committed {
            return Ok(found);
        }
        found = Some((found.map_or(b.tx, |(first, _)| first), c));
        step = c;
    }
}

/// Inside the intent's write: store the disk bytes of the changed files as blobs, then
/// create the rollback tx of `orig` with its revision 0 (`files`). Returns its id.
fn record_rollback_tx(
    w: &mut Writer,
    orig: &TxRecord,
    current: &[(&BatchFile, FileState, Option<Vec<u8>>)],
    xattr_blobs: &[Vec<u8>],
    files: Vec<FileRevision>,
) -> Result<u64> {
    for b in xattr_blobs {
        w.put_blob(b)?;
    }
    for (_, state, bytes) in current {
        if let (Some(hash), Some(b)) = (state.hash(), bytes) {
            w.put_blob_hashed(hash, b)?;
        }
    }
    let rec = w.create_tx(
        orig.agent.clone(),
        Some(format!("rollback of tx {}", orig.tx)),
        Some(orig.tx),
    )?;
    w.add_revision(&RevisionRecord {
        tx: rec.tx,
        revision: 0,
        base: None,
        created_ms: w.now(),
        plan: RevisionOrigin::RollbackOf(orig.tx).to_recorded_json(),
        files,
        validation: Vec::new(),
        conflicts: Vec::new(),
    })?;
    Ok(rec.tx)
}

fn paths_of(r: &Receipt) -> Vec<String> {
    r.files.iter().map(|f| f.path.to_string()).collect()
}
