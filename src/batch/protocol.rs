//! The ApplyBatch protocol, step by step (docs/commit-protocol.md).
//!
//! | step | effect | why it is there |
//! |---|---|---|
//! | 3 intent = commit point | journal txn (durable): batch `Committing`, pre/post states, all blobs | rollback material is durable before anything destructive (docs/design.md, "Invariants"); from here recovery rolls forward from the blobs alone |
//! | 4 stage | mkdir new parents; per file: temp in the target's dir, write, chown, xattrs, chmod, `fsync` | same-dir temp makes the rename atomic; the fsync makes bytes and metadata durable before the name points at them |
//! | 5 install | `rename`/`unlink` per file, `rmdir` emptied dirs, `fsync` each touched dir once | the dir fsync makes the renames durable before the receipt says they happened |
//! | 6 return | the receipt, built from the batch record ([`Landed`]) | the batch has landed: every file holds its post-image durably |
//! | 7 complete | journal txn (durable), by a background thread that holds the lock: `Committed` + receipt + tx state, if still `Committing` ([`complete`]) | exactly one receipt; a returned receipt survives power loss (recovery writes the same one) |
//!
//! An error in stage or install marks `Reverting` (durable), drives every file back to
//! its pre-image (temps and new dirs removed), then `Aborted`. The caller gets
//! [`Error::CommitFailed`] and the workspace is byte-for-byte what it was.

use std::collections::BTreeSet;
use std::os::fd::OwnedFd;

use crate::batch::drive::{self, DriveOptions, Side};
use crate::batch::image::{self, ImageError, STREAM_ABOVE};
use crate::batch::machine::{Batch, NewBatch};
use crate::batch::release::Releaser;
use crate::batch::{gate, pool, temp_path};
use crate::error::{Attention, Error, IoContext, IoError, Result};
use crate::failpoint::crash_point;
use crate::fs::release::{self, Release};
use crate::fs::RelPath;
use crate::interrupt::Guard;
use crate::journal::records::*;
use crate::journal::Writer;
use crate::lock::Locked;

/// Why step 4 or 5 stopped.
enum StepError {
    /// An I/O error on a workspace file.
    Io(IoError),
    /// A file changed on disk after the gate (a writer that does not take the lock).
    Stale(String),
    /// A journal error while reading blobs.
    Journal(Error),
    /// [`crate::Interrupt::request`] was called while the temps were being staged.
    Interrupted,
}

impl StepError {
    fn note(&self) -> String {
        match self {
            StepError::Io(e) => e.to_string(),
            StepError::Stale(p) => format!("{p} changed on disk during the commit"),
            StepError::Journal(e) => e.to_string(),
            StepError::Interrupted => "interrupted before the first file was replaced".into(),
        }
    }

    /// The caller's error once the batch has been reverted; `left` are the temps out of
    /// reach.
    fn into_error(self, rec: &BatchRecord, left: Vec<RelPath>) -> Error {
        match self {
            StepError::Io(cause) => Error::CommitFailed {
                tx: rec.tx,
                batch: rec.batch,
                cause,
                temps_left: left.into_iter().map(String::from).collect(),
            },
            StepError::Stale(path) => Error::StaleSnapshot {
                tx: rec.tx,
                paths: vec![path],
                writers: Vec::new(),
            },
            StepError::Journal(e) => e,
            StepError::Interrupted => Error::Interrupted {
                tx: rec.tx,
                batch: rec.batch,
                temps_left: left.into_iter().map(String::from).collect(),
                rollback_of: match rec.kind {
                    BatchKind::Rollback { of, .. } => Some(of),
                    _ => None,
                },
            },
        }
    }
}

impl From<IoError> for StepError {
    fn from(e: IoError) -> Self {
        StepError::Io(e)
    }
}

/// A batch that has landed: every file holds its post-image durably (step 5 done), the
/// batch is still `Committing` in the journal, and its receipt is known. What is left
/// is the completion ([`complete`]), which the caller runs in the background with the
/// lock still held.
#[must_use = "a landed batch is completed by complete(), or by the next recovery"]
pub(crate) struct Landed {
    pub(super) batch: Batch,
    /// The receipt, as the completion will record it ([`Batch::receipt`]).
    pub receipt: Receipt,
    /// The inodes the install replaced or unlinked, held so the kernel frees them when
    /// the completion drops them, not inside the renames ([`install`]).
    pub(super) replaced: Vec<OwnedFd>,
    /// The batch's span of [`crate::Interrupt::guarding`], ended by the completion.
    pub(super) guard: Option<Guard>,
    /// How the completion lets go of `replaced` ([`Landed::release_with`]).
    pub(super) release: Release,
}

impl Landed {
    /// Let the completion release the held inodes as `how` says
    /// ([`crate::fs::release::release`]; default [`Release::InPlace`]).
    pub(crate) fn release_with(mut self, how: Release) -> Self {
        self.release = how;
        self
    }
}

/// Run the protocol for `new` under the commit lock (`l`), the gate passed, up to the
/// directory fsyncs of step 5: the batch has landed. `tx_of` runs inside the intent's
/// journal write and names the batch's tx (see [`Batch::intent`]). The completion
/// (step 7) is [`complete`], which the caller runs after returning the receipt, still
/// under the lock.
pub(crate) fn apply(
    l: &Locked<'_>,
    mut new: NewBatch,
    tx_of: impl FnOnce(&mut Writer) -> Result<u64>,
) -> Result<Landed> {
    new.create_dirs = gate::dirs_to_create(l, &new.files)?;
    gate::record_creation_owners(l, &mut new.files)?;
    // From the intent until the completion is durable, a process that died would leave
    // the batch for the next recovery: a signal handler defers signals meanwhile.
    let guard = l.batch_guard();
    let batch = intent(l, new, tx_of)?;
    // The intent is the commit point: both names mark the moment it is durable and
    // nothing is staged yet.
    crash_point!("batch::after_intent");
    crash_point!("batch::after_commit_point");
    if let Err(cause) = stage(l, batch.record()) {
        // Past the commit point, before any file was touched: the revert path (recovery
        // would roll forward if the revert is not recorded, and says so).
        return Err(revert_after_error(l, batch, cause, 0));
    }
    crash_point!("batch::after_stage");
    let (removed, replaced) = match install(l, batch.record()) {
        Ok(done) => done,
        Err((cause, installed)) => return Err(revert_after_error(l, batch, cause, installed)),
    };
    crash_point!("batch::after_dir_sync");
    let receipt = batch.receipt(removed, false);
    Ok(Landed {
        batch,
        receipt,
        replaced,
        guard,
        release: Release::InPlace,
    })
}

/// Step 6, the completion of a landed batch: `Committing → Committed`, its receipt and
/// the tx states, in one durable journal write, under the lock the batch was applied
/// with. Conditional: if the batch as stored is no longer `Committing` (another path
/// settled it), nothing is written and this is not an error — there is exactly one
/// receipt either way. An error leaves the batch `Committing`: every file already holds
/// its post-image, so the next recovery completes it with the same receipt (but
/// `by_recovery`); the error says so ([`Attention::CompletionNotRecorded`]). Never a
/// revert: the caller may already hold the receipt.
pub(crate) fn complete(l: &Locked<'_>, landed: Landed) -> Result<()> {
    let Landed {
        batch,
        receipt,
        replaced,
        guard,
        release: how,
    } = landed;
    let done = record_completion(l, batch, &receipt);
    // Ended here: the completion is durable (or left to recovery, which the error says).
    drop(guard);
    // After the completion, off the caller's path: the kernel frees the replaced
    // files' inodes now, on the pool as the install's hand-offs (on ext4, ~150 µs each
    // here, ~45 ms for 100 MB), or a detached child does for a large file when the
    // caller asked for it (the CLI: its exit would otherwise wait for the free).
    // Nothing durable depends on the free.
    release::release(replaced, how, crate::batch::release::free);
    done
}

/// The journal write of [`complete`].
fn record_completion(l: &Locked<'_>, mut batch: Batch, receipt: &Receipt) -> Result<()> {
    crash_point!("batch::before_complete");
    let (tx, id) = (receipt.tx, receipt.batch);
    let not_recorded = |e: Error| Error::NeedsAttention {
        tx,
        batch: id,
        attention: Attention::CompletionNotRecorded {
            journal: e.to_string(),
            files: receipt.files.iter().map(|f| f.path.to_string()).collect(),
        },
    };
    match batch.complete_as(l, receipt) {
        Ok(()) => {}
        // Settled by another path meanwhile: the journal checks the step against the
        // batch as stored (`Writer::put_batch`), refused it, and wrote nothing.
        Err(Error::Journal(crate::error::JournalError::IllegalTransition(_))) => return Ok(()),
        Err(e) => return Err(not_recorded(e)),
    }
    crash_point!("batch::after_complete");
    Ok(())
}

/// Step 3, the intent and commit point. When its journal write fails after the batch
/// was built, the journal is asked whether the batch is there: redb reports a failed
/// commit before its new root is durable, and after an I/O error it refuses every later
/// read of the handle (`PreviousIo`). So: the batch is absent → nothing will land, the
/// write's error is the answer; present → the commit point is durable, go on; the
/// journal cannot say → [`Attention::CommitPointUnknown`] (the next recovery, which
/// rolls a durable intent forward, decides).
fn intent(
    l: &Locked<'_>,
    new: NewBatch,
    tx_of: impl FnOnce(&mut Writer) -> Result<u64>,
) -> Result<Batch> {
    let mut id = None;
    let e = match Batch::intent(l, new, &mut id, tx_of) {
        Ok(b) => return Ok(b),
        Err(e) => e,
    };
    let Some((tx, batch)) = id else {
        return Err(e);
    };
    match Batch::find(l, batch) {
        Ok(None) => Err(e),
        Ok(Some(b)) => Ok(b),
        Err(again) => Err(Error::NeedsAttention {
            tx,
            batch,
            attention: Attention::CommitPointUnknown {
                cause: e.to_string(),
                again: again.to_string(),
            },
        }),
    }
}

/// The abort note: the cause, and the temps out of reach if any.
fn note_with(cause: String, left: &[RelPath]) -> Option<String> {
    Some(if left.is_empty() {
        cause
    } else {
        let names: Vec<&str> = left.iter().map(|t| t.as_str()).collect();
        format!("{cause}; temps out of reach: {}", names.join(", "))
    })
}

/// Files larger than this (bytes) are staged one at a time, before the others: the
/// pool holds each file's bytes in memory while it stages it, so a batch of several
/// large files keeps the memory of a commit near its largest file (README,
/// "Performance and limits"), while small files, where the fsync is the cost, go
/// concurrently.
const STAGE_CONCURRENTLY_MAX: u64 = STREAM_ABOVE;

/// Step 4: new directories, then one fsynced temp per file written, staged
/// concurrently on the bounded pool ([`pool::for_each`]; files over
/// [`STAGE_CONCURRENTLY_MAX`] one at a time): each temp gets its bytes, owner, xattrs
/// and mode and then its `fsync` ([`crate::fs::FileSystem::write_synced`]), so its
/// bytes and metadata are durable before step 5 renames it. The commit point is
/// durable before this step starts: a temp never exists without the record that names
/// it, so recovery always finds it.
fn stage(ws: &Locked<'_>, rec: &BatchRecord) -> Result<(), StepError> {
    for d in &rec.create_dirs {
        ws.fs.create_dir(d).ctx("mkdir", ws.abs(d))?;
    }
    type Staged<'a> = Vec<(usize, &'a BatchFile)>;
    let (large, small): (Staged, Staged) = rec
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.post.exists())
        .partition(|(_, f)| f.post.size() > STAGE_CONCURRENTLY_MAX);
    // One read transaction for all the post-images (a redb read transaction is a
    // handful of locking system calls to begin and end), shared by the pool's threads.
    let reader = ws.store.read().map_err(StepError::Journal)?;
    let stage_one = |&(i, f): &(usize, &BatchFile)| -> Result<(), StepError> {
        // Until the first rename, an interrupt can still leave every file as it was.
        if ws.interrupt_requested() {
            return Err(StepError::Interrupted);
        }
        let FileState::File { hash, size, meta } = f.post else {
            return Ok(());
        };
        let xattrs = reader.xattrs(&f.post).map_err(StepError::Journal)?;
        let tmp = temp_path(&f.path, rec, i);
        // Above the threshold streamed to the temp, never whole in memory: spliced from
        // the file on disk (the gate just found it holds the pre-image) and the
        // journal's changed chunks, else from the journal alone; checked against its
        // hash before the temp is synced (a damaged blob or a changed file removes it).
        let base = f.pre.hash().map(|pre| (&f.path, pre));
        let base = base.as_ref().map(|(p, h)| (*p, h));
        image::write_image(ws, &reader, &tmp, &hash, size, &meta, &xattrs, base).map_err(|e| {
            match e {
                ImageError::Journal(e) => StepError::Journal(e.needed_by(|| {
                    format!(
                        "the new content of {} that batch {} of tx {} writes",
                        f.path, rec.batch, rec.tx
                    )
                })),
                ImageError::Io(e) => StepError::Io(e),
            }
        })?;
        crash_point!("batch::after_stage_file");
        Ok(())
    };
    large.iter().try_for_each(stage_one)?;
    pool::for_each(&small, |_, item| stage_one(item))?;
    // The last check: a request that came while the last temps were written.
    if ws.interrupt_requested() {
        return Err(StepError::Interrupted);
    }
    Ok(())
}

/// At most this many replaced inodes are held by a batch ([`install`]): a descriptor
/// each, well under the usual 1024 open-file limit; past it, the kernel frees them in
/// the renames as usual. Lowered by [`hold_max`] under a lower limit.
const HOLD_MAX: usize = 256;

/// How many replaced inodes a batch may hold: [`HOLD_MAX`], or a quarter of the
/// process's soft open-file limit (`RLIMIT_NOFILE`, getrlimit(2)) where that is less,
/// so the held descriptors never take the ones the install's own reads need (found by
/// the breaker: at `ulimit -n 64` a 300-file commit failed with EMFILE).
fn hold_max() -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    limit.map_or(HOLD_MAX, |n| {
        HOLD_MAX.min(usize::try_from(n / 4).unwrap_or(HOLD_MAX))
    })
}

/// Step 5: renames and unlinks in path order, emptied dirs removed, each touched
/// directory fsynced once. Returns the directories removed and the replaced inodes
/// held, or the error with the number of files installed before it.
///
/// Just before its rename or unlink, each file is compared with its pre-image once
/// more: a process that does not take the lock may have written it while the temps
/// were staged. A changed file stops the batch before it is touched.
///
/// Before a rename replaces a file, or an unlink removes it, its inode is held open
/// ([`crate::fs::FileSystem::hold`]): a rename that drops the last name of an inode
/// otherwise frees it on the spot, which on ext4 (truncating its blocks) was most of a
/// 100-file commit's serial time (≈ 75 µs of a rename's ≈ 85 µs, measured on this
/// project's bench VM). The first half of [`hold_max`] is kept, and the completion
/// releases them after the receipt was returned ([`release::release`]); the rest are
/// freed on the pool in batches while the renames go on ([`install_in`]). Best effort: a file that
/// cannot be held is renamed all the same.
// The error is the step's and its file count, as every step returns it; boxing it here
// alone would buy nothing.
#[allow(clippy::result_large_err)]
fn install(
    ws: &Locked<'_>,
    rec: &BatchRecord,
) -> Result<(Vec<RelPath>, Vec<OwnedFd>), (StepError, usize)> {
    std::thread::scope(|s| install_in(ws, rec, &mut Releaser::new(s)))
}

/// [`install`], with the holds past the first half of [`hold_max`] handed to
/// `releaser` in batches of a quarter of it: their inodes are freed on the pool while
/// the renames go on, instead of each in its rename or all at the end, so a file's
/// install costs the same in a batch of 1,000 files or 10,000 (docs/benchmarks.md,
/// "Per-file cost at 10,000 files"). The first half is kept until the completion, off
/// the caller's path; at most [`hold_max`] descriptors are held at once.
#[allow(clippy::result_large_err)]
fn install_in(
    ws: &Locked<'_>,
    rec: &BatchRecord,
    releaser: &mut Releaser<'_, '_>,
) -> Result<(Vec<RelPath>, Vec<OwnedFd>), (StepError, usize)> {
    let mut dirs = BTreeSet::new();
    let hold_max = hold_max();
    let keep_max = hold_max.div_ceil(2);
    let batch_max = (hold_max / 4).max(1);
    let mut held = Vec::new();
    let mut batch = Vec::new();
    for (i, f) in rec.files.iter().enumerate() {
        let fresh = gate::stale_paths(ws, [(&f.path, &f.pre)], gate::Refused::Fails)
            .map_err(|e| (StepError::Journal(e), i))?;
        if !fresh.is_empty() {
            return Err((StepError::Stale(f.path.to_string()), i));
        }
        if f.pre.exists() && hold_max > 0 {
            if let Ok(Some(fd)) = ws.fs.hold(&f.path) {
                if held.len() < keep_max {
                    held.push(fd);
                } else {
                    batch.push(fd);
                }
            }
        }
        let done = if f.post.exists() {
            let tmp = temp_path(&f.path, rec, i);
            ws.fs
                .rename(&tmp, &f.path)
                .ctx_at("rename", || ws.abs(&f.path))
        } else {
            ws.fs
                .remove_file(&f.path)
                .ctx_at("unlink", || ws.abs(&f.path))
        };
        done.map_err(|e| (StepError::Io(e), i))?;
        if batch.len() >= batch_max {
            releaser.hand_off(std::mem::take(&mut batch));
        }
        dirs.insert(f.path.parent());
        crash_point!("batch::after_install_file");
    }
    releaser.hand_off(batch);
    let n = rec.files.len();
    for d in &rec.create_dirs {
        dirs.insert(d.parent());
    }
    let removed =
        drive::remove_empty_dirs(ws, &rec.remove_dirs).map_err(|e| (StepError::Journal(e), n))?;
    for d in &removed {
        dirs.remove(d);
        dirs.insert(d.parent());
    }
    // The touched directories are independent: fsynced at once.
    let dirs: Vec<RelPath> = dirs.into_iter().collect();
    pool::for_each(&dirs, |_, d| {
        ws.fs.sync_dir(d).ctx_at("fsync dir", || ws.abs(d))
    })
    .map_err(|e| (StepError::Io(e), n))?;
    Ok((removed, held))
}

/// Error in step 4 or 5: `Reverting` (durable), the
/// `installed` files back to their pre-images (the others were never touched), temps and
/// new directories removed, `Aborted`.
fn revert_after_error(
    l: &Locked<'_>,
    mut batch: Batch,
    cause: StepError,
    installed: usize,
) -> Error {
    let note = Some(cause.note());
    let (tx, id) = (batch.record().tx, batch.record().batch);
    if let Err(e) = batch.begin_revert(l, note.clone()) {
        // The batch stays Committing in the journal: files installed so far stay, and
        // the next recovery rolls the batch forward. Say so, rather than a bare
        // journal error the caller would read as "nothing changed".
        return Error::NeedsAttention {
            tx,
            batch: id,
            attention: Attention::RevertNotRecorded {
                cause: cause.note(),
                journal: e.to_string(),
                installed: batch.record().files[..installed.min(batch.record().files.len())]
                    .iter()
                    .map(|f| f.path.to_string())
                    .collect(),
            },
        };
    }
    let after = || crash_point!("revert::after_restore_file");
    let opts = DriveOptions {
        files: installed,
        ..DriveOptions::all(Side::Pre)
    };
    let mut left = Vec::new();
    let settled = drive::drive(l, batch.record(), opts, &after).and_then(|out| {
        left = out.temps_unreachable.clone();
        batch.settle(l, Side::Pre, out, note_with(cause.note(), &left), false)
    });
    let what = cause.note();
    match settled {
        Ok(()) if batch.record().state == BatchState::Aborted => {
            cause.into_error(batch.record(), left)
        }
        Ok(()) => Error::NeedsAttention {
            tx,
            batch: id,
            attention: Attention::ForeignBytes {
                cause: Some(what),
                paths: batch
                    .record()
                    .foreign
                    .iter()
                    .map(|f| f.path.to_string())
                    .collect(),
            },
        },
        Err(e) => Error::NeedsAttention {
            tx,
            batch: id,
            attention: Attention::RevertIncomplete {
                cause: what,
                error: e.to_string(),
            },
        },
    }
}
