//! The ApplyBatch protocol, step by step (design brief, "Commit protocol").
//!
//! | step | effect | why it is there |
//! |---|---|---|
//! | 3 intent | journal txn (durable): batch `Prepared`, pre/post states, all blobs | rollback material is durable before anything destructive (seed invariant) |
//! | 4 stage | mkdir new parents; per file: temp in the target's dir, write, chmod, `fsync` | same-dir temp makes the rename atomic; the fsync makes the bytes durable before the name points at them |
//! | 5 commit point | journal txn (durable): `Prepared → Committing` | recovery completes from here on instead of reverting |
//! | 6 install | `rename`/`unlink` per file, `rmdir` emptied dirs, `fsync` each touched dir once | the dir fsync makes the renames durable before the receipt says they happened |
//! | 7 complete | journal txn (durable): `Committed` + receipt + tx state | exactly one receipt; a returned receipt survives power loss |
//!
//! An error in stage reverts (temps and new dirs removed, `Aborted`); an error in
//! install marks `Reverting` (durable), drives every file back to its pre-image, then
//! `Aborted`. The caller gets [`Error::CommitFailed`] and the workspace is byte-for-byte
//! what it was.

use std::collections::BTreeSet;

use crate::batch::drive::{self, DriveOptions, Side};
use crate::batch::{gate, parent_dir, temp_path};
use crate::error::{Error, IoContext, IoError, Result};
use crate::failpoint::crash_point;
use crate::journal::records::*;
use crate::journal::Writer;
use crate::workspace::Ws;

/// What to apply: everything but the on-disk effects, decided before the intent.
pub(crate) struct BatchPlan {
    pub tx: u64,
    pub kind: BatchKind,
    /// Files that change, sorted by path. Their pre and post blobs are in the journal.
    pub files: Vec<BatchFile>,
    /// Directories to remove when empty after installing, deepest first.
    pub remove_dirs: Vec<String>,
}

/// Why step 4 or 6 stopped.
enum StepError {
    /// An I/O error on a workspace file.
    Io(IoError),
    /// A file changed on disk after the gate (a writer that does not take the lock).
    Stale(String),
    /// A journal error while reading blobs.
    Journal(Error),
}

impl StepError {
    fn note(&self) -> String {
        match self {
            StepError::Io(e) => e.to_string(),
            StepError::Stale(p) => format!("{p} changed on disk during the commit"),
            StepError::Journal(e) => e.to_string(),
        }
    }

    /// The caller's error once the batch has been reverted.
    fn into_error(self, rec: &BatchRecord) -> Error {
        match self {
            StepError::Io(cause) => Error::CommitFailed {
                tx: rec.tx,
                batch: rec.batch,
                cause,
            },
            StepError::Stale(path) => Error::StaleSnapshot {
                tx: rec.tx,
                paths: vec![path],
            },
            StepError::Journal(e) => e,
        }
    }
}

impl From<IoError> for StepError {
    fn from(e: IoError) -> Self {
        StepError::Io(e)
    }
}

/// Run the protocol. The caller holds the commit lock and has passed the gate.
pub(crate) fn apply(ws: &Ws, plan: BatchPlan) -> Result<Receipt> {
    let mut rec = intent(ws, plan)?;
    crash_point!("batch::after_intent");
    if let Err(cause) = stage(ws, &rec) {
        let _ = drive::remove_temps(ws, &rec);
        let dirs: Vec<String> = rec.create_dirs.iter().rev().cloned().collect();
        let _ = drive::remove_empty_dirs(ws, &dirs);
        transition(
            ws,
            &mut rec,
            BatchState::Aborted,
            Some(cause.note()),
            |_, _| Ok(()),
        )?;
        return Err(cause.into_error(&rec));
    }
    if let Err(e) = transition(ws, &mut rec, BatchState::Committing, None, |_, _| Ok(())) {
        // The commit point did not become durable: the batch is still Prepared, so
        // undo the staging now (recovery would do the same if this fails too).
        let _ = drive::remove_temps(ws, &rec);
        let dirs: Vec<String> = rec.create_dirs.iter().rev().cloned().collect();
        let _ = drive::remove_empty_dirs(ws, &dirs);
        if let Err(again) = transition(
            ws,
            &mut rec,
            BatchState::Aborted,
            Some(e.to_string()),
            |_, _| Ok(()),
        ) {
            // Whether the commit point reached the disk is unknown: the next recovery
            // decides (and completes the batch if it did). Say so.
            return Err(Error::NeedsAttention {
                tx: rec.tx,
                batch: rec.batch,
                message: format!("the journal could not record the commit point ({e}) nor the abort ({again}); the next recovery settles the batch"),
            });
        }
        return Err(e);
    }
    crash_point!("batch::after_commit_point");
    let removed = match install(ws, &rec) {
        Ok(removed) => removed,
        Err((cause, installed)) => return Err(revert_after_error(ws, rec, cause, installed)),
    };
    crash_point!("batch::after_dir_sync");
    let receipt = match complete(ws, &mut rec, removed, false) {
        Ok(r) => r,
        // The completion record could not be written: revert, as for an error in step
        // 6, so the caller's error and the disk agree.
        Err(e) => {
            let n = rec.files.len();
            return Err(revert_after_error(ws, rec, StepError::Journal(e), n));
        }
    };
    crash_point!("batch::after_complete");
    Ok(receipt)
}

/// Step 3: the durable intent. The tx must still be open (an `abort` or another
/// committer may have got there first).
fn intent(ws: &Ws, plan: BatchPlan) -> Result<BatchRecord> {
    let create_dirs = gate::dirs_to_create(ws, &plan.files)?;
    ws.store.write(|w| {
        let tx = w.tx(plan.tx)?;
        if tx.state != TxState::Open {
            return Err(crate::tx::wrong_state(&tx, "be applied"));
        }
        for f in &plan.files {
            for hash in [f.pre.hash, f.post.hash].into_iter().flatten() {
                if !w.has_blob(&hash)? {
                    return Err(crate::error::JournalError::Missing {
                        what: format!("blob {hash} of {}", f.path),
                    }
                    .into());
                }
            }
        }
        let rec = BatchRecord {
            batch: w.next_batch_id()?,
            tx: plan.tx,
            kind: plan.kind,
            state: BatchState::Prepared,
            nonce: super::new_nonce(),
            files: plan.files,
            create_dirs,
            remove_dirs: plan.remove_dirs,
            history: vec![StateChange {
                state: BatchState::Prepared,
                at_ms: w.now(),
                note: None,
            }],
            foreign: Vec::new(),
        };
        w.put_batch(&rec)?;
        Ok(rec)
    })
}

/// Step 4: new directories, then one fsynced temp per file written.
fn stage(ws: &Ws, rec: &BatchRecord) -> Result<(), StepError> {
    for d in &rec.create_dirs {
        let abs = ws.root.join(d);
        ws.fs.create_dir(&abs).ctx("mkdir", &abs)?;
    }
    let reader = ws.store.read().map_err(StepError::Journal)?;
    for (i, f) in rec.files.iter().enumerate() {
        let Some(hash) = f.post.hash.filter(|_| f.post.exists) else {
            continue;
        };
        let bytes = reader.blob_required(&hash).map_err(StepError::Journal)?;
        let tmp = temp_path(&ws.root, &f.path, rec, i);
        ws.fs
            .write_synced(&tmp, &bytes, f.post.mode)
            .ctx("write temp", &tmp)?;
        crash_point!("batch::after_stage_file");
    }
    Ok(())
}

/// Step 6: renames and unlinks in path order, emptied dirs removed, each touched
/// directory fsynced once. Returns the directories removed, or the error with the
/// number of files installed before it.
///
/// Just before its rename or unlink, each file is compared with its pre-image once
/// more: a process that does not take the lock may have written it while the temps
/// were staged. A changed file stops the batch before it is touched.
fn install(ws: &Ws, rec: &BatchRecord) -> Result<Vec<String>, (StepError, usize)> {
    let mut dirs = BTreeSet::new();
    for (i, f) in rec.files.iter().enumerate() {
        let abs = ws.root.join(&f.path);
        let fresh = gate::stale_paths(ws, [(f.path.as_str(), &f.pre)])
            .map_err(|e| (StepError::Journal(e), i))?;
        if !fresh.is_empty() {
            return Err((StepError::Stale(f.path.clone()), i));
        }
        let done = if f.post.exists {
            let tmp = temp_path(&ws.root, &f.path, rec, i);
            ws.fs.rename(&tmp, &abs).ctx("rename", &abs)
        } else {
            ws.fs.remove_file(&abs).ctx("unlink", &abs)
        };
        done.map_err(|e| (StepError::Io(e), i))?;
        dirs.insert(parent_dir(&ws.root, &f.path));
        crash_point!("batch::after_install_file");
    }
    let n = rec.files.len();
    for d in &rec.create_dirs {
        dirs.insert(parent_dir(&ws.root, d));
    }
    let removed =
        drive::remove_empty_dirs(ws, &rec.remove_dirs).map_err(|e| (StepError::Journal(e), n))?;
    for d in &removed {
        dirs.remove(&ws.root.join(d));
        dirs.insert(parent_dir(&ws.root, d));
    }
    for d in &dirs {
        ws.fs
            .sync_dir(d)
            .ctx("fsync dir", d)
            .map_err(|e| (StepError::Io(e), n))?;
    }
    Ok(removed)
}

/// Error in step 6: `Reverting` (durable), the `installed` files back to their
/// pre-images (the others were never touched), `Aborted`.
fn revert_after_error(ws: &Ws, mut rec: BatchRecord, cause: StepError, installed: usize) -> Error {
    let note = Some(cause.note());
    if let Err(e) = transition(ws, &mut rec, BatchState::Reverting, note.clone(), |_, _| {
        Ok(())
    }) {
        // The batch stays Committing in the journal: files installed so far stay, and
        // the next recovery rolls the batch forward. Say so, rather than a bare
        // journal error the caller would read as "nothing changed".
        return Error::NeedsAttention {
            tx: rec.tx,
            batch: rec.batch,
            message: format!(
                "the batch stopped ({}) and the journal could not record the revert ({e}); {installed} file(s) already hold the new content, and the next recovery completes the batch",
                cause.note()
            ),
        };
    }
    let after = || crash_point!("revert::after_restore_file");
    let opts = DriveOptions {
        files: installed,
        ..DriveOptions::all(Side::Pre)
    };
    let settled = drive::drive(ws, &rec, opts, &after)
        .and_then(|out| crate::recovery::settle(ws, &mut rec, Side::Pre, out, note, false));
    let what = cause.note();
    match settled {
        Ok(()) if rec.state == BatchState::Aborted => cause.into_error(&rec),
        Ok(()) => Error::NeedsAttention {
            tx: rec.tx,
            batch: rec.batch,
            message: format!("the batch stopped ({what}); while reverting, foreign bytes were found and left untouched"),
        },
        Err(e) => Error::NeedsAttention {
            tx: rec.tx,
            batch: rec.batch,
            message: format!("the batch stopped ({what}) and the revert could not finish ({e}); the batch stays Reverting"),
        },
    }
}

/// Change a batch's state in one durable journal txn, running `extra` in the same txn.
pub(crate) fn transition(
    ws: &Ws,
    rec: &mut BatchRecord,
    state: BatchState,
    note: Option<String>,
    extra: impl FnOnce(&mut Writer, &BatchRecord) -> Result<()>,
) -> Result<()> {
    let mut next = rec.clone();
    ws.store.write(|w| {
        next.state = state;
        next.history.push(StateChange {
            state,
            at_ms: w.now(),
            note,
        });
        w.put_batch(&next)?;
        extra(w, &next)
    })?;
    *rec = next;
    Ok(())
}

/// Step 7: `Committed`, the receipt, and the tx states, in one durable txn.
pub(crate) fn complete(
    ws: &Ws,
    rec: &mut BatchRecord,
    removed_dirs: Vec<String>,
    by_recovery: bool,
) -> Result<Receipt> {
    let mut receipt = None;
    let note = by_recovery.then(|| "completed by recovery".to_string());
    transition(ws, rec, BatchState::Committed, note, |w, rec| {
        if by_recovery {
            w.event(EventKind::Recovery {
                batch: rec.batch,
                action: format!("completed batch of tx {}", rec.tx),
            })?;
        }
        let r = Receipt {
            tx: rec.tx,
            batch: rec.batch,
            kind: rec.kind,
            files: rec.files.clone(),
            created_dirs: rec.create_dirs.clone(),
            removed_dirs,
            bytes_written: rec.files.iter().map(|f| f.post.size).sum(),
            at_ms: w.now(),
            by_recovery,
        };
        w.put_receipt(&r)?;
        mark_txs_committed(w, rec)?;
        receipt = Some(r);
        Ok(())
    })?;
    receipt.ok_or_else(|| {
        crate::error::JournalError::Missing {
            what: "receipt".into(),
        }
        .into()
    })
}

fn mark_txs_committed(w: &mut Writer, rec: &BatchRecord) -> Result<()> {
    let mut tx = w.tx(rec.tx)?;
    tx.state = TxState::Committed;
    if tx.attention == Some(rec.batch) {
        tx.attention = None;
    }
    tx.committed = Some(CommitRef {
        revision: match rec.kind {
            BatchKind::Commit { revision } => revision,
            BatchKind::Rollback { .. } => 0,
        },
        batch: rec.batch,
    });
    w.put_tx(&tx)?;
    if let BatchKind::Rollback { of, .. } = rec.kind {
        let mut old = w.tx(of)?;
        old.state = TxState::RolledBack;
        old.rolled_back_by = Some(rec.tx);
        w.put_tx(&old)?;
        // Rolling back a rollback redoes the tx it had rolled back: that tx's changes
        // are live again, so it is committed (and can be rolled back) once more.
        if let Some(redone) = old.rollback_of {
            let mut t = w.tx(redone)?;
            t.state = TxState::Committed;
            t.rolled_back_by = None;
            w.put_tx(&t)?;
        }
    }
    Ok(())
}
