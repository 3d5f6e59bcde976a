//! Recovery: complete or revert every batch a crash interrupted (docs/design.md,
//! "Recovery"). Runs on every open of the journal (when the in-flight index is not
//! empty and no live process holds the commit lock), before every batch, and on
//! `ultra-edit recover`.
//!
//! | state found | action |
//! |---|---|
//! | `Prepared` (only journals of earlier versions, whose intent preceded a separate commit point) | revert: temps and created dirs removed, no file touched → `Aborted` |
//! | `Committing` | roll forward: every file to its post-image → `Committed` + receipt |
//! | `Reverting` | continue the revert → `Aborted` |
//! | `NeedsAttention` | retried toward the side it was going to; settles once the foreign bytes are gone (or overwritten with `--overwrite`) |
//!
//! Per file the decision is by hash ([`crate::batch::drive`]), so recovery is idempotent
//! and may itself crash. A file holding foreign bytes is never clobbered: its bytes are
//! stored as a blob and the batch ends `NeedsAttention`.

use serde::{Deserialize, Serialize};

use crate::batch::drive::{self, DriveOptions, Side};
use crate::batch::gate;
use crate::batch::machine::Batch;
use crate::error::{Error, OwnedPath, Result};
use crate::failpoint::crash_point;
use crate::fs::snapshot;
use crate::journal::records::*;
use crate::lock::Locked;

/// What recovery did to one batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecoveryAction {
    /// Batch id.
    pub batch: u64,
    /// Its transaction.
    pub tx: u64,
    /// The state it was found in.
    pub found: BatchState,
    /// The state it was left in.
    pub result: BatchState,
    /// Files rewritten from the journal's blobs.
    pub rewritten: Vec<String>,
    /// Files left alone because someone else wrote them.
    pub foreign: Vec<ForeignWrite>,
    /// Files with foreign bytes that `recover --overwrite` overwrote (bytes kept).
    pub overwritten: Vec<ForeignWrite>,
    /// Temp files removed.
    pub temps_removed: usize,
    /// Temp files out of reach: a directory of the batch was moved away and replaced by
    /// a link or a file, so they are wherever it went (root-relative, as staged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temps_unreachable: Vec<String>,
    /// Recovery drives the batch's files to their new content (it reached its commit
    /// point); `false`: back to their old content. What a file with foreign bytes will
    /// get once it is moved aside.
    #[serde(default)]
    pub rolls_forward: bool,
}

/// The report of one recovery pass (printed by `ultra-edit recover`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// Non-terminal batches found.
    pub batches_found: usize,
    /// Batches rolled forward to `Committed`.
    pub completed: Vec<u64>,
    /// Batches reverted to `Aborted`.
    pub reverted: Vec<u64>,
    /// Batches left `NeedsAttention`.
    pub needs_attention: Vec<u64>,
    /// Temp files removed, over all batches.
    pub temps_removed: usize,
    /// One entry per batch.
    pub actions: Vec<RecoveryAction>,
}

/// Recover every in-flight batch, under the commit lock (`l`). With `overwrite`,
/// foreign bytes are overwritten (after being stored in the journal) instead of left.
pub(crate) fn recover(l: &Locked<'_>, overwrite: bool) -> Result<RecoveryReport> {
    let mut report = RecoveryReport::default();
    let ids = l.store.read()?.inflight()?;
    if overwrite {
        for &id in &ids {
            overwrite_undoes_no_commit(l, id)?;
        }
    }
    report.batches_found = ids.len();
    // A signal now would leave the batches half-settled until the next recovery.
    let _guard = (!ids.is_empty()).then(|| l.guard());
    for id in ids {
        let Some(rec) = l.store.read()?.batch(id)? else {
            continue;
        };
        let action = recover_batch(l, Batch::resume(rec), overwrite)?;
        report.temps_removed += action.temps_removed;
        match action.result {
            BatchState::Committed => report.completed.push(id),
            BatchState::Aborted => report.reverted.push(id),
            _ => report.needs_attention.push(id),
        }
        report.actions.push(action);
    }
    Ok(report)
}

fn recover_batch(l: &Locked<'_>, mut batch: Batch, overwrite: bool) -> Result<RecoveryAction> {
    let rec = batch.record();
    let found = rec.state;
    let side = if rec.rolls_forward() {
        Side::Post
    } else {
        Side::Pre
    };
    let after = || crash_point!("recovery::after_file");
    // Files are renamed only after the commit point: a batch that never reached it
    // touched no file, so reverting it only removes its temps and new directories, and
    // whatever a file holds now (someone's edit) is not the batch's business.
    let files = if rec.reached_commit_point() {
        usize::MAX
    } else {
        0
    };
    owners_can_be_given(l, rec, side, files)?;
    let opts = DriveOptions {
        overwrite,
        files,
        ..DriveOptions::all(side)
    };
    let out = drive::drive(l, rec, opts, &after)?;
    let action_note = format!("recovery: found {found}, drove files to {side:?}-images");
    let mut action = RecoveryAction {
        batch: rec.batch,
        tx: rec.tx,
        found,
        result: found,
        rewritten: out.rewritten.clone(),
        foreign: out.foreign.iter().map(|(f, _)| f.clone()).collect(),
        overwritten: out.overwritten.clone(),
        temps_removed: out.temps_removed,
        temps_unreachable: out
            .temps_unreachable
            .iter()
            .map(|t| t.to_string())
            .collect(),
        rolls_forward: side == Side::Post,
    };
    batch.settle(l, side, out, Some(action_note), true)?;
    action.result = batch.record().state;
    Ok(action)
}

/// Refuse `recover --overwrite` of batch `id` (before anything is written) where one of
/// its files holds foreign bytes that are the new content of a later committed batch:
/// a commit that landed on the batch's files while it needed attention (versions before
/// [`Error::AttentionOwnsFiles`] let one). Overwriting them would undo that commit while
/// the journal still shows it committed, so it is [`Error::OverwriteUndoesCommit`], a
/// case for a person. "Later": a batch with a higher id, `Committed`, that writes the
/// path with exactly the state found (existence, blake3, metadata). One read per file of
/// the batch, and one scan of the batches when a file holds foreign bytes.
fn overwrite_undoes_no_commit(l: &Locked<'_>, id: u64) -> Result<()> {
    let r = l.store.read()?;
    let Some(rec) = r.batch(id)? else {
        return Ok(());
    };
    if rec.state != BatchState::NeedsAttention {
        return Ok(());
    }
    let mut found = Vec::new();
    for f in &rec.files {
        let Ok((state, _)) = snapshot::state_of(l.fs.as_ref(), &l.root, &f.path) else {
            continue;
        };
        if !f.pre.matches(&state) && !f.post.matches(&state) {
            found.push((f.path.clone(), state));
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    let mut paths = Vec::new();
    let mut later = Vec::new();
    r.scan_batches(|bid, b| {
        if bid <= id {
            return Ok(());
        }
        let b = b?;
        if b.state != BatchState::Committed {
            return Ok(());
        }
        for (path, state) in &found {
            if b.files
                .iter()
                .any(|w| &w.path == path && w.post.matches(state))
            {
                paths.push(path.to_string());
                later.push(b.tx);
            }
        }
        Ok(())
    })?;
    if paths.is_empty() {
        return Ok(());
    }
    paths.sort();
    paths.dedup();
    later.sort();
    later.dedup();
    Err(Error::OverwriteUndoesCommit {
        tx: rec.tx,
        batch: rec.batch,
        paths,
        later,
    })
}

/// Refuse, before writing anything, a recovery that would give files the wrong owner:
/// each file recovery rewrites (its `side` image recorded with an owner, and the disk
/// not holding that image yet) must get an owner this process can give
/// ([`gate::Chown`]). Root can give any; a user settling another user's batch (or
/// root's) gets [`Error::RecoveryNeedsOwner`] instead of files that are suddenly its
/// own, or a failed `fchown` halfway through. Root pays nothing; a user one read per
/// file whose owner it cannot give.
fn owners_can_be_given(l: &Locked<'_>, rec: &BatchRecord, side: Side, files: usize) -> Result<()> {
    let chown = gate::Chown::current();
    if chown.uid() == 0 {
        return Ok(());
    }
    let mut refused = Vec::new();
    for f in rec.files.iter().take(files) {
        let target = side.target(f);
        let Some(o) = target.owner() else {
            continue;
        };
        if chown.can_give(l, &f.path, &o)? {
            continue;
        }
        // Already there (the crash came after this file): nothing to give.
        let written = matches!(
            snapshot::state_of(l.fs.as_ref(), &l.root, &f.path),
            Ok((found, _)) if target.matches(&found)
        );
        if !written {
            refused.push(OwnedPath {
                path: f.path.to_string(),
                uid: o.uid,
                gid: o.gid,
            });
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Error::RecoveryNeedsOwner {
            tx: rec.tx,
            batch: rec.batch,
            completes: side == Side::Post,
            uid: chown.uid(),
            files: refused,
        })
    }
}
