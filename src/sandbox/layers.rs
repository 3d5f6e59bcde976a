//! The overlay's upper and work directories: `<state dir>/sandbox/run-<pid>-<n>/`, with
//! a lock file held (`flock`) by the process that runs the command. Removed when the
//! run ends ([`Layers`]'s `Drop`); a run whose process died (SIGKILL) leaves its
//! directory unlocked, and [`sweep`], called before every run and by the CLI on every
//! command, removes it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, IoContext};

/// The directory of the runs under a state directory.
pub(crate) fn runs_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("sandbox")
}

/// One run's layers; removed on drop.
pub(crate) struct Layers {
    pub dir: PathBuf,
    pub upper: PathBuf,
    pub work: PathBuf,
    /// Held while the run lives: [`sweep`] leaves a locked directory alone.
    _lock: fs::File,
}

impl Layers {
    /// Make a run's directories under `state_dir`. Errors: [`Error::Io`].
    pub fn create(state_dir: &Path) -> Result<Layers, Error> {
        let runs = runs_dir(state_dir);
        fs::create_dir_all(&runs).ctx("mkdir", &runs)?;
        let pid = std::process::id();
        let mut n = 0u32;
        let dir = loop {
            let nonce: u32 = {
                let mut b = [0u8; 4];
                let _ = rustix::rand::getrandom(&mut b, rustix::rand::GetRandomFlags::empty());
                u32::from_le_bytes(b)
            };
            // Made under a name `sweep` passes over until it is whole: locked, with
            // its layers (a sweep by another process between the `mkdir` and the
            // `flock` would take it for a dead run's and remove it).
            let dir = runs.join(format!(".new-run-{pid}-{nonce:08x}"));
            match fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 16 => n += 1,
                Err(source) => {
                    return Err(crate::error::IoError {
                        op: "mkdir",
                        path: dir,
                        source,
                    }
                    .into())
                }
            }
        };
        let lock_path = dir.join("lock");
        let lock = fs::File::create(&lock_path).ctx("create", &lock_path)?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .map_err(std::io::Error::from)
            .ctx("flock", &lock_path)?;
        let upper = dir.join("upper");
        let work = dir.join("work");
        fs::create_dir(&upper).ctx("mkdir", &upper)?;
        fs::create_dir(&work).ctx("mkdir", &work)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().trim_start_matches(".new-").to_string())
            .unwrap_or_default();
        let whole = runs.join(name);
        if let Err(source) = fs::rename(&dir, &whole) {
            remove_tree(&dir);
            return Err(crate::error::IoError {
                op: "rename",
                path: dir,
                source,
            }
            .into());
        }
        let (dir, upper, work) = (whole.clone(), whole.join("upper"), whole.join("work"));
        Ok(Layers {
            dir,
            upper,
            work,
            _lock: lock,
        })
    }
}

impl Drop for Layers {
    fn drop(&mut self) {
        remove_tree(&self.dir);
    }
}

/// Remove `dir` and everything under it, making directories writable first (the
/// overlay's work directory is mode 000). Best effort: what cannot be removed stays
/// for the next [`sweep`].
pub(crate) fn remove_tree(dir: &Path) {
    if fs::remove_dir_all(dir).is_ok() {
        return;
    }
    fn open_up(d: &Path, depth: usize) {
        if depth > 4096 {
            return;
        }
        let _ = fs::set_permissions(d, fs::Permissions::from_mode(0o700));
        if let Ok(rd) = fs::read_dir(d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    open_up(&e.path(), depth + 1);
                }
            }
        }
    }
    open_up(dir, 0);
    let _ = fs::remove_dir_all(dir);
}

/// Remove the directories of runs whose process is gone (no one holds their lock).
/// Returns how many were removed. Cost: one `readdir` of `<state dir>/sandbox/` (absent
/// in a workspace that never ran a command), plus the removal of what is left.
pub fn sweep(state_dir: &Path) -> usize {
    let Ok(rd) = fs::read_dir(runs_dir(state_dir)) else {
        return 0;
    };
    let mut removed = 0;
    for e in rd.flatten() {
        let dir = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        // A run still being set up is `.new-run-…` until it is locked and whole; one
        // left by a process that died in those few steps is removed once it is a
        // minute old.
        let half_made = name.starts_with(".new-run-");
        if half_made {
            let young = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_none_or(|age| age < std::time::Duration::from_secs(60));
            if young {
                continue;
            }
        } else if !name.starts_with("run-") {
            continue;
        }
        let held = match fs::File::open(dir.join("lock")) {
            Ok(f) => {
                rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err()
            }
            // No lock file: a run that died before it made one.
            Err(_) => false,
        };
        if !held {
            remove_tree(&dir);
            removed += 1;
        }
    }
    removed
}
