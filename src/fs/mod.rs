//! Every filesystem effect of the commit, rollback and recovery paths.
//!
//! [`FileSystem`] is the seam (in the manner of redb's `StorageBackend`): the real
//! implementation is [`StdFs`]; tests substitute a twin that injects faults or separates
//! durable from volatile state. Paths given to it are absolute (root-joined) and have
//! already passed [`path`] safety checks.

pub mod path;
pub(crate) mod snapshot;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::failpoint::io_fault;

/// What is at a path, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Nothing.
    Absent,
    /// A regular file with `links` hard links and permission bits `mode`.
    File {
        /// `st_nlink`.
        links: u64,
        /// `st_mode & 0o7777`.
        mode: u32,
    },
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else (fifo, socket, device).
    Other,
}

/// The filesystem operations Ultra Edit performs. Each is one system call or a short,
/// fixed sequence of them; none retries or hides an error.
pub trait FileSystem: Send + Sync {
    /// `lstat`: what is at `path`.
    fn entry(&self, path: &Path) -> io::Result<EntryKind>;
    /// Read a whole regular file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Create `path` (must not exist), write `bytes`, set `mode`, `fsync` the file.
    fn write_synced(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()>;
    /// `rename(from, to)`, replacing `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// `unlink(path)`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// `mkdir(path)` with mode 0o755 (before umask).
    fn create_dir(&self, path: &Path) -> io::Result<()>;
    /// `rmdir(path)`; fails if not empty.
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
    /// `fsync` a directory, making its entries (renames, unlinks, creations) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

/// The real filesystem, through `std::fs`. With the `failpoints` feature each mutating
/// operation has an error failpoint: `fs::write`, `fs::rename`, `fs::unlink`, `fs::mkdir`,
/// `fs::rmdir`, `fs::sync_dir` (see `failpoint::io_fault!`).
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

impl FileSystem for StdFs {
    fn entry(&self, path: &Path) -> io::Result<EntryKind> {
        use std::os::unix::fs::MetadataExt;
        let md = match fs::symlink_metadata(path) {
            Ok(md) => md,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(EntryKind::Absent),
            Err(e) => return Err(e),
        };
        let ft = md.file_type();
        Ok(if ft.is_symlink() {
            EntryKind::Symlink
        } else if ft.is_dir() {
            EntryKind::Dir
        } else if ft.is_file() {
            EntryKind::File {
                links: md.nlink(),
                mode: md.mode() & 0o7777,
            }
        } else {
            EntryKind::Other
        })
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn write_synced(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        io_fault!("fs::write");
        let mut f: File = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        f.write_all(bytes)?;
        // set_permissions, not the open mode: the umask must not change the file's mode.
        f.set_permissions(fs::Permissions::from_mode(mode))?;
        f.sync_all()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        io_fault!("fs::rename");
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        io_fault!("fs::unlink");
        fs::remove_file(path)
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        io_fault!("fs::mkdir");
        fs::create_dir(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        io_fault!("fs::rmdir");
        fs::remove_dir(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        io_fault!("fs::sync_dir");
        File::open(path)?.sync_all()
    }
}
