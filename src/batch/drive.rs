//! Bring every file of a batch to one side — its pre-images or its post-images — deciding
//! per file by hash (docs/design.md, "Recovery"): equal to the target → skip; equal to the
//! other side → rewrite from the journal's blob; equal to neither → someone else wrote
//! it: leave it and report it. Idempotent, so it may itself crash and run again. It
//! never needs the batch's temp files: the journal holds every image.

use std::collections::BTreeSet;
use std::io::ErrorKind;
use std::path::PathBuf;

use crate::batch::gate::missing_parents;
use crate::batch::image::{self, ImageError};
use crate::batch::temp_path;
use crate::engine::Ws;
use crate::error::{Error, IoContext, IoError, Result};
use crate::fs::{snapshot, EntryKind, RelPath};
use crate::journal::records::{BatchFile, BatchRecord, FileState, ForeignWrite, Owner};
use crate::lock::Locked;

/// Which images to bring the files to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The state before the batch (revert).
    Pre,
    /// The state after the batch (roll forward).
    Post,
}

impl Side {
    /// The image the drive writes.
    pub(crate) fn target(self, f: &BatchFile) -> &FileState {
        match self {
            Side::Pre => &f.pre,
            Side::Post => &f.post,
        }
    }
    fn other(self, f: &BatchFile) -> &FileState {
        match self {
            Side::Pre => &f.post,
            Side::Post => &f.pre,
        }
    }
}

/// What [`drive`] did.
#[derive(Debug, Default)]
pub(crate) struct DriveOutcome {
    /// Files rewritten (or unlinked) to reach the side.
    pub rewritten: Vec<String>,
    /// Files left alone because they hold foreign bytes, with the blobs of what was
    /// found (bytes, extended attributes).
    pub foreign: Vec<(ForeignWrite, Vec<Vec<u8>>)>,
    /// Files that held foreign bytes and were overwritten (`overwrite`); their bytes
    /// were stored in the journal first.
    pub overwritten: Vec<ForeignWrite>,
    /// Temp files of the batch that were removed.
    pub temps_removed: usize,
    /// Temps out of reach (a directory of the batch moved away): see [`remove_temps`].
    pub temps_unreachable: Vec<RelPath>,
    /// Directories removed because the side does not have them.
    pub dirs_removed: Vec<RelPath>,
    /// Directories created to hold restored files.
    pub dirs_created: Vec<RelPath>,
}

/// How far and how hard to drive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DriveOptions {
    /// Which images.
    pub side: Side,
    /// Only the first `files` files of the batch (a revert after an error in install
    /// touches only those installed); `usize::MAX` for all.
    pub files: usize,
    /// Overwrite foreign bytes instead of leaving them (`recover --overwrite`); they
    /// are stored as a blob first, so nothing is lost.
    pub overwrite: bool,
}

impl DriveOptions {
    /// Every file, foreign bytes left alone.
    pub fn all(side: Side) -> Self {
        DriveOptions {
            side,
            files: usize::MAX,
            overwrite: false,
        }
    }
}

/// Drive `rec`'s files to `opts.side`. `after_file` runs after each file that was
/// rewritten (a crash point). Errors are I/O errors that stopped the drive; what was
/// done before them stays done and a later drive continues from there.
pub(crate) fn drive(
    ws: &Locked<'_>,
    rec: &BatchRecord,
    opts: DriveOptions,
    after_file: &dyn Fn(),
) -> Result<DriveOutcome> {
    let side = opts.side;
    let mut out = DriveOutcome::default();
    let mut dirs_to_sync = BTreeSet::new();
    for (index, f) in rec.files.iter().enumerate().take(opts.files) {
        // Hashed as it is read, in pieces: a large file is never whole in memory
        // unless it is foreign, whose bytes the journal keeps (read once more below).
        let state = match snapshot::state_of(ws.fs.as_ref(), &ws.root, &f.path) {
            Ok((state, _)) => state,
            Err(Error::Path(e)) => {
                out.foreign
                    .push((foreign(f, FileState::ABSENT, e.to_string()), Vec::new()));
                continue;
            }
            Err(e) => return Err(e),
        };
        let target = side.target(f);
        if target.matches(&state) {
            continue;
        }
        let (state, found) = if side.other(f).matches(&state) {
            (state, Vec::new())
        } else {
            // The blobs of what was found (bytes, extended attributes): kept in the
            // journal before a foreign file is left or overwritten. Read again whole,
            // and decided again on what this read found: the file may have changed
            // since it was hashed.
            let (state, bytes, xattrs) =
                match snapshot::read_state(ws.fs.as_ref(), &ws.root, &f.path) {
                    Ok(found) => found,
                    Err(Error::Path(e)) => {
                        out.foreign
                            .push((foreign(f, FileState::ABSENT, e.to_string()), Vec::new()));
                        continue;
                    }
                    Err(e) => return Err(e),
                };
            if target.matches(&state) {
                continue;
            }
            (state, bytes.into_iter().chain(xattrs).collect())
        };
        if !side.other(f).matches(&state) {
            let note = "holds bytes that are neither the pre- nor the post-image";
            if !opts.overwrite {
                out.foreign
                    .push((foreign(f, state, format!("{note}; left untouched")), found));
                continue;
            }
            ws.store.write(|w| {
                for b in &found {
                    w.put_blob(b)?;
                }
                Ok(())
            })?;
            out.overwritten.push(foreign(
                f,
                state,
                format!("{note}; overwritten, its bytes kept in the journal"),
            ));
        }
        write_side(ws, rec, index, f, target, &mut out)?;
        dirs_to_sync.insert(f.path.parent());
        out.rewritten.push(f.path.to_string());
        after_file();
    }
    let (removed, unreachable) = remove_temps(ws, rec)?;
    out.temps_removed += removed;
    out.temps_unreachable = unreachable;
    let dirs = match side {
        Side::Pre => rec.create_dirs.iter().rev().cloned().collect::<Vec<_>>(),
        Side::Post => rec.remove_dirs.clone(),
    };
    out.dirs_removed = remove_empty_dirs(ws, &dirs)?;
    for d in out.dirs_removed.iter().chain(&out.dirs_created) {
        dirs_to_sync.insert(d.parent());
    }
    sync_existing_dirs(ws, &dirs_to_sync)?;
    Ok(out)
}

fn foreign(f: &BatchFile, found: FileState, note: String) -> ForeignWrite {
    ForeignWrite {
        path: f.path.clone(),
        found,
        note,
    }
}

/// Make `f.path` hold `target`: temp + fsync + rename from the journal's blob, or unlink.
fn write_side(
    ws: &Ws,
    rec: &BatchRecord,
    index: usize,
    f: &BatchFile,
    target: &FileState,
    out: &mut DriveOutcome,
) -> Result<()> {
    let FileState::File { hash, size, meta } = *target else {
        return ignore_not_found(ws.fs.remove_file(&f.path), "unlink", ws.abs(&f.path));
    };
    let reader = ws.store.read()?;
    let xattrs = reader.xattrs(target)?;
    out.dirs_created
        .extend(ensure_parents(ws, &f.path, meta.owner)?);
    let tmp = temp_path(&f.path, rec, index);
    // A temp staged by the interrupted batch is removed here, before its slot is
    // reused: it counts among the temps removed.
    match ws.fs.remove_file(&tmp) {
        Ok(()) => out.temps_removed += 1,
        r => ignore_not_found(r, "unlink", ws.abs(&tmp))?,
    }
    // The commit's own path: a large image is streamed from the journal, never whole
    // in memory, and checked against its hash before the temp is synced.
    // No base: what the disk holds here is not known (a recovery, a revert).
    image::write_image(ws, &reader, &tmp, &hash, size, &meta, &xattrs, None).map_err(
        |e| match e {
            ImageError::Journal(e) => {
                e.needed_by(|| format!("the content of {} that recovery writes back", f.path))
            }
            ImageError::Io(e) => e.into(),
        },
    )?;
    drop(reader);
    ws.fs.rename(&tmp, &f.path).ctx("rename", ws.abs(&f.path))?;
    Ok(())
}

/// Create the missing parent directories of `rel`, parents first; returns them. Run
/// by root for a file whose recorded owner is another user (recovery completing a
/// user's batch), each directory is given that owner, as the user's own commit would
/// have created it: root's would lock the user out of the directory.
pub(crate) fn ensure_parents(ws: &Ws, rel: &RelPath, owner: Option<Owner>) -> Result<Vec<RelPath>> {
    let missing = missing_parents(ws, rel)?;
    let give = owner.filter(|o| {
        let me = crate::fs::process_owner();
        me.uid == 0 && o.uid != me.uid
    });
    for dir in &missing {
        ws.fs.create_dir(dir).ctx("mkdir", ws.abs(dir))?;
        if let Some(o) = give {
            ws.fs.set_owner(dir, o).ctx("chown", ws.abs(dir))?;
        }
    }
    Ok(missing)
}

/// Remove every temp file the batch may have left; returns how many existed, and the
/// temps out of reach: where a directory of the batch was moved away and replaced by a
/// link or a file, the walk (which refuses links) cannot reach the directory, which may
/// still hold a temp wherever it went. Those are named to the caller instead.
pub(crate) fn remove_temps(ws: &Ws, rec: &BatchRecord) -> Result<(usize, Vec<RelPath>)> {
    let mut removed = 0;
    let mut unreachable = Vec::new();
    for (i, f) in rec.files.iter().enumerate() {
        let tmp = temp_path(&f.path, rec, i);
        match ws.fs.remove_file(&tmp) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e)
                if e.kind() == ErrorKind::NotADirectory
                    || e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
            {
                if f.post.exists() {
                    unreachable.push(tmp);
                }
            }
            // A temp never staged, on a read-only mount (EROFS) or in a directory this
            // process may not write: `unlink` fails without saying the name is absent.
            // Only a temp that is there and stays there is an error.
            Err(_) if matches!(ws.fs.entry(&tmp), Ok(EntryKind::Absent)) => {}
            Err(source) => {
                return Err(IoError {
                    op: "unlink temp",
                    path: ws.abs(&tmp),
                    source,
                }
                .into())
            }
        }
    }
    Ok((removed, unreachable))
}

/// `rmdir` each directory that exists and is empty, in the order given; returns those
/// removed. A directory that is not empty (someone put a file there) is kept.
pub(crate) fn remove_empty_dirs(ws: &Ws, dirs: &[RelPath]) -> Result<Vec<RelPath>> {
    let mut removed = Vec::new();
    for d in dirs {
        match ws.fs.remove_dir(d) {
            Ok(()) => removed.push(d.clone()),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::NotFound | ErrorKind::DirectoryNotEmpty | ErrorKind::NotADirectory
                ) => {}
            Err(source) => {
                return Err(IoError {
                    op: "rmdir",
                    path: ws.abs(d),
                    source,
                }
                .into())
            }
        }
    }
    Ok(removed)
}

/// `fsync` each directory that still exists.
pub(crate) fn sync_existing_dirs(ws: &Ws, dirs: &BTreeSet<RelPath>) -> Result<()> {
    for d in dirs {
        if ws.fs.entry(d).ctx("lstat", ws.abs(d))? == EntryKind::Dir {
            ws.fs.sync_dir(d).ctx("fsync dir", ws.abs(d))?;
        }
    }
    Ok(())
}

fn ignore_not_found(r: std::io::Result<()>, op: &'static str, path: PathBuf) -> Result<()> {
    match r {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(IoError {
            op,
            path,
            source: e,
        }
        .into()),
        _ => Ok(()),
    }
}
