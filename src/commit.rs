//! Commit and rollback: the gate, then ApplyBatch (seed stages 3–5).

use crate::batch::gate::{self, same_state};
use crate::batch::protocol::{self, BatchPlan};
use crate::edit;
use crate::error::{Error, Result};
use crate::failpoint::crash_point;
use crate::fs::snapshot;
use crate::journal::records::*;
use crate::recovery;
use crate::tx::wrong_state;
use crate::workspace::Journal;

/// Options of [`Journal::commit`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CommitOptions {
    /// The revision to apply (default: the latest).
    pub revision: Option<u32>,
}

/// Options of [`Journal::rollback`].
#[derive(Debug, Clone, Copy, Default)]
pub struct RollbackOptions {
    /// Overwrite files changed since the commit; their current bytes are stored in the
    /// journal first, so nothing is lost (design brief, "Rollback").
    pub force: bool,
}

impl Journal {
    /// Apply a revision of an open tx to the disk, all files or none (seed stages 3–4).
    ///
    /// Under the commit lock: recover any batch a dead process left, re-check every
    /// path, compare every file with its snapshot by blake3, then run ApplyBatch.
    /// Returns the one receipt of the commit; the reingest hook is called once after.
    ///
    /// Errors (nothing on disk changed): [`Error::WrongState`], [`Error::UnknownRevision`],
    /// [`Error::ValidationFailed`], [`Error::LockTimeout`], [`Error::StaleSnapshot`]
    /// (run `rebase` or preview again), [`Error::Path`], [`Error::CommitFailed`] (an I/O
    /// error inside the batch, reverted). [`Error::NeedsAttention`] when a revert met
    /// foreign bytes.
    pub fn commit(&self, tx: u64, opts: CommitOptions) -> Result<Receipt> {
        crate::workspace::guarded(|| {
            let rev = self.committable_revision(tx, opts.revision)?;
            let receipt = {
                let _lock = self.lock()?;
                crash_point!("batch::after_lock");
                recovery::recover(&self.ws, false)?;
                // Re-read under the lock: another process may have committed it meanwhile.
                self.committable_revision(tx, Some(rev.revision))?;
                let files: Vec<BatchFile> = rev
                    .files
                    .iter()
                    .filter(|f| !same_state(&f.snapshot, &f.candidate))
                    .map(|f| BatchFile {
                        path: f.path.clone(),
                        pre: f.snapshot,
                        post: f.candidate,
                    })
                    .collect();
                let stale = gate::stale_paths(
                    &self.ws,
                    rev.files.iter().map(|f| (f.path.as_str(), &f.snapshot)),
                )?;
                if !stale.is_empty() {
                    return Err(Error::StaleSnapshot { tx, paths: stale });
                }
                protocol::apply(
                    &self.ws,
                    BatchPlan {
                        tx,
                        kind: BatchKind::Commit {
                            revision: rev.revision,
                        },
                        files,
                        remove_dirs: Vec::new(),
                    },
                )?
            };
            self.reingest(&paths_of(&receipt));
            Ok(receipt)
        })
    }

    fn committable_revision(&self, tx: u64, revision: Option<u32>) -> Result<RevisionRecord> {
        let r = self.ws.store.read()?;
        let txrec = crate::tx::open_tx(&r, tx, "be committed")?;
        if let Some(of) = txrec.rollback_of {
            return Err(Error::WrongState {
                tx,
                state: txrec.state.to_string(),
                hint: format!(
                    "it is an unfinished rollback of tx {of}; run `ultra-edit rollback {of}` again"
                ),
            });
        }
        let rev = r.revision_of(&txrec, revision)?;
        let n = rev.revision;
        if edit::has_errors(&rev.validation) {
            return Err(Error::ValidationFailed {
                tx,
                revision: n,
                summary: rev
                    .validation
                    .iter()
                    .filter(|i| i.severity == edit::Severity::Error)
                    .map(|i| format!("{} {}: {}", i.code, i.path, i.message))
                    .collect(),
            });
        }
        Ok(rev)
    }

    /// Restore the exact pre-commit bytes, modes and existence of every file of the
    /// committed tx `tx`, as a new tx (seed stage 5). Created files are removed, deleted
    /// files recreated, created directories removed when empty. Rolling back a rollback
    /// redoes the commit.
    ///
    /// Errors: [`Error::WrongState`] (not committed, or already rolled back),
    /// [`Error::StaleRollback`] when a file changed since the commit (unless
    /// `opts.force`), and those of [`Journal::commit`].
    pub fn rollback(&self, tx: u64, opts: RollbackOptions) -> Result<Receipt> {
        crate::workspace::guarded(|| {
            let receipt = {
                let _lock = self.lock()?;
                crash_point!("batch::after_lock");
                recovery::recover(&self.ws, false)?;
                let (orig, batch) = self.rollbackable(tx)?;
                let mut current = Vec::with_capacity(batch.files.len());
                let mut stale = Vec::new();
                for f in &batch.files {
                    let (state, bytes) =
                        snapshot::read_state(self.ws.fs.as_ref(), &self.ws.root, &f.path)?;
                    if !same_state(&state, &f.post) {
                        stale.push(f.path.clone());
                    }
                    current.push((f, state, bytes));
                }
                if !stale.is_empty() && !opts.force {
                    return Err(Error::StaleRollback { tx, paths: stale });
                }
                let rb_tx = self.record_rollback_tx(&orig, &current)?;
                let files = current
                    .iter()
                    .filter(|(f, state, _)| !same_state(state, &f.pre))
                    .map(|(f, state, _)| BatchFile {
                        path: f.path.clone(),
                        pre: *state,
                        post: f.pre,
                    })
                    .collect();
                let applied = protocol::apply(
                    &self.ws,
                    BatchPlan {
                        tx: rb_tx,
                        kind: BatchKind::Rollback {
                            of: tx,
                            forced: opts.force && !stale.is_empty(),
                        },
                        files,
                        remove_dirs: batch.create_dirs.iter().rev().cloned().collect(),
                    },
                );
                // A rollback that did not land leaves no open rollback tx behind (unless
                // its batch is still in flight: recovery owns it then).
                if applied.is_err() {
                    self.abort_failed_rollback(rb_tx)?;
                }
                applied?
            };
            self.reingest(&paths_of(&receipt));
            Ok(receipt)
        })
    }

    fn abort_failed_rollback(&self, rb_tx: u64) -> Result<()> {
        self.ws.store.write(|w| {
            if w.has_inflight_batch(rb_tx)? {
                return Ok(());
            }
            let mut rec = w.tx(rb_tx)?;
            if rec.state == TxState::Open {
                rec.state = TxState::Aborted;
                w.put_tx(&rec)?;
                w.event(EventKind::TxAborted { tx: rb_tx })?;
            }
            Ok(())
        })
    }

    fn rollbackable(&self, tx: u64) -> Result<(TxRecord, BatchRecord)> {
        let r = self.ws.store.read()?;
        let rec = r.tx_required(tx)?;
        let committed = match (rec.state, rec.committed) {
            (TxState::Committed, Some(c)) if !rec.pruned => c,
            _ => return Err(wrong_state(&rec, "be rolled back")),
        };
        let batch =
            r.batch(committed.batch)?
                .ok_or_else(|| crate::error::JournalError::Missing {
                    what: format!("batch {} of tx {tx}", committed.batch),
                })?;
        Ok((rec, batch))
    }

    /// Record the rollback tx and its revision 0 (snapshot = disk now, candidate = the
    /// original pre-images); the disk bytes of changed files become blobs first.
    fn record_rollback_tx(
        &self,
        orig: &TxRecord,
        current: &[(&BatchFile, FileState, Option<Vec<u8>>)],
    ) -> Result<u64> {
        let reader = self.ws.store.read()?;
        let mut files = Vec::with_capacity(current.len());
        let mut pre_bytes = Vec::with_capacity(current.len());
        for (f, state, bytes) in current {
            let pre = match f.pre.hash.filter(|_| f.pre.exists) {
                Some(h) => Some(reader.blob_required(&h)?),
                None => None,
            };
            files.push(FileRevision {
                path: f.path.clone(),
                snapshot: *state,
                candidate: f.pre,
                diff: edit::candidate_diff(&f.path, bytes.as_deref(), pre.as_deref()),
            });
            pre_bytes.push(pre);
        }
        drop(reader);
        self.ws.store.write(|w| {
            let id = w.next_tx_id()?;
            for (_, state, bytes) in current {
                if let (Some(hash), Some(b)) = (state.hash.filter(|_| state.exists), bytes) {
                    w.put_blob_hashed(hash, b)?;
                }
            }
            w.put_tx(&TxRecord {
                tx: id,
                created_ms: w.now(),
                agent: orig.agent.clone(),
                description: Some(format!("rollback of tx {}", orig.tx)),
                state: TxState::Open,
                revisions: 1,
                committed: None,
                rollback_of: Some(orig.tx),
                rolled_back_by: None,
                attention: None,
                pruned: false,
            })?;
            w.event(EventKind::TxCreated {
                tx: id,
                rollback_of: Some(orig.tx),
            })?;
            w.put_revision(&RevisionRecord {
                tx: id,
                revision: 0,
                base: None,
                created_ms: w.now(),
                plan: format!("{{\"rollback_of\":{}}}", orig.tx),
                files: files.clone(),
                validation: Vec::new(),
                conflicts: Vec::new(),
            })?;
            Ok(id)
        })
    }
}

fn paths_of(r: &Receipt) -> Vec<String> {
    r.files.iter().map(|f| f.path.clone()).collect()
}
