//! A power cut, simulated: an in-memory POSIX filesystem ([`CrashFs`]) and a redb storage
//! backend ([`CrashBackend`]) that keep what the running program sees (*volatile*) apart
//! from what survives losing power (*durable*), and share one [`PowerCut`] controller.
//!
//! Unlike `faultfs` (a panic that unwinds out of the library, after which the page cache
//! still holds every write), a power cut drops everything not yet synced, so a missing
//! `fsync` shows. In the spirit of redb's own `tests/crash_consistency.rs`.
//!
//! The model:
//! - An inode is a file (bytes + mode) or a directory (mode + entries). A directory has
//!   two entry maps: volatile (what `lstat`, `read`, … see) and durable (what its last
//!   `fsync` recorded).
//! - `write_synced` creates a new file inode and runs the library's own steps on it
//!   (`ultra_edit::fs::fill_and_sync`: write, xattrs, owner, mode, fsync). Bytes *and*
//!   metadata (owner, mode, xattrs) are volatile until the file's fsync: what was set
//!   after it is lost by a power cut, as unsynced bytes are, so moving `fchown` after
//!   the fsync fails the power-cut tests. The *name* pointing at the file lives only in
//!   the parent's volatile entries until the parent directory is synced. Files are
//!   never changed in place (the `FileSystem` trait has no such operation).
//! - `rename`, `remove_file`, `create_dir`, `remove_dir` change volatile entries only.
//! - `sync_dir(d)`: d's durable entries := its volatile entries. A new directory's own
//!   name becomes durable only when its parent is synced.
//! - The durable view is the tree reached from the root through durable entries only.
//! - Every fsync (file or directory) and every `sync_data` of the backend counts on the
//!   shared [`PowerCut`]. `cut_at(k)` makes the k-th sync not happen: it and every later
//!   operation of either side fail with EIO, as on a machine whose power is gone.
//!
//! Paths given to [`CrashFs`] are absolute and must lie under its root (the library joins
//! every path to the canonical root); it never touches the real disk.
//!
//! The model is the pessimistic one: *nothing* unsynced survives (no unsynced rename or
//! journal page ever reaches the disk early). The opposite extreme, everything survives,
//! is what the kill tests (`crash.rs`, `recovery.rs`) cover.
//!
//! The filesystem is in `filesystem.rs`, the redb backend in `backend.rs`; the controller they
//! share is here.

mod backend;
mod filesystem;

pub use backend::CrashBackend;
pub use filesystem::{CrashFs, Tree, TreeEntry};

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

// Linux errno values (the crate is unix-only; these tests run on Linux).
const ENOENT: i32 = 2;
const EIO: i32 = 5;
const EEXIST: i32 = 17;
const ENOTDIR: i32 = 20;
const EISDIR: i32 = 21;
const EINVAL: i32 = 22;
const EBUSY: i32 = 16;
const ENOTEMPTY: i32 = 39;

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

// ---------------------------------------------------------------------------------------
// The controller
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct PowerState {
    /// Syncs that happened.
    syncs: u64,
    /// The 1-based sync that does not happen.
    cut_at: Option<u64>,
    /// Power is gone.
    cut: bool,
    /// One label per sync that happened, then the one that was cut.
    log: Vec<String>,
}

/// The power switch shared by a [`CrashFs`] and a [`CrashBackend`]: counts their syncs
/// and cuts the power at a chosen one.
#[derive(Debug, Default)]
pub struct PowerCut {
    state: Mutex<PowerState>,
}

impl PowerCut {
    pub fn new() -> Arc<PowerCut> {
        Arc::new(PowerCut::default())
    }

    /// Cut the power at the `k`-th sync (1-based, counted from the start): that sync does
    /// not happen and every later operation fails with EIO.
    pub fn cut_at(&self, k: u64) {
        let mut s = self.lock();
        assert!(
            k > s.syncs,
            "sync {k} already happened ({} so far)",
            s.syncs
        );
        s.cut_at = Some(k);
    }

    /// How many syncs happened.
    pub fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Whether the power is gone.
    pub fn is_cut(&self) -> bool {
        self.lock().cut
    }

    /// What each sync so far was (`fsync <path>`, `fsync dir <path>` with root-relative
    /// paths, `journal sync_data`), in order; after a cut the last label is the sync that
    /// did not happen, marked ` (CUT)`.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }

    fn lock(&self) -> MutexGuard<'_, PowerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Any operation: fails once the power is gone.
    fn alive(&self) -> io::Result<()> {
        if self.lock().cut {
            Err(errno(EIO))
        } else {
            Ok(())
        }
    }

    /// A sync: happens (and is counted) unless it is the cut one or the power is gone.
    fn sync(&self, label: impl FnOnce() -> String) -> io::Result<()> {
        let mut s = self.lock();
        if s.cut {
            return Err(errno(EIO));
        }
        if s.cut_at == Some(s.syncs + 1) {
            s.cut = true;
            s.log.push(format!("{} (CUT)", label()));
            return Err(errno(EIO));
        }
        s.syncs += 1;
        s.log.push(label());
        Ok(())
    }
}

/// The durable images of a filesystem and its journal backend, sharing one fresh, uncut
/// controller: the machine as it boots after the power cut.
pub fn durable_images(fs: &CrashFs, backend: &CrashBackend) -> (CrashFs, CrashBackend) {
    let fs2 = fs.durable_image();
    let backend2 = backend.durable_image_on(fs2.power());
    (fs2, backend2)
}
