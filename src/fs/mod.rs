//! Every filesystem effect of the commit, rollback and recovery paths.
//!
//! [`FileSystem`] is the seam (in the manner of redb's `StorageBackend`): the real
//! implementation is [`StdFs`]; tests substitute a twin that injects faults or separates
//! durable from volatile state. A filesystem owns its root: every path it takes is a
//! [`RelPath`] below that root, which only normalization ([`path::normalize`]) makes;
//! several roots are several filesystems.

pub mod acl;
pub mod meta;
pub mod near;
pub mod path;
mod read_ahead;
pub mod release;
pub(crate) mod relpath;
pub(crate) mod snapshot;
pub(crate) mod state_files;

pub use relpath::RelPath;

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::failpoint::io_fault;
use crate::fs::meta::{FileMeta, Owner, Xattrs};

/// What is at a path, without following a final symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Nothing.
    Absent,
    /// A regular file with `links` hard links, permission bits `mode`, owner `uid` and
    /// group `gid`.
    File {
        /// `st_nlink`.
        links: u64,
        /// `st_mode & 0o7777`.
        mode: u32,
        /// `st_uid`.
        uid: u32,
        /// `st_gid`.
        gid: u32,
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
    /// `lstat`: what is at `path` (the root itself for [`RelPath::root`]).
    fn entry(&self, path: &RelPath) -> io::Result<EntryKind>;
    /// Read a whole regular file.
    fn read(&self, path: &RelPath) -> io::Result<Vec<u8>>;
    /// The kept extended attributes of a regular file — `user.*` and the POSIX access
    /// ACL ([`acl::ACCESS`], in its recorded form [`acl::normalize`]) — sorted by name
    /// (empty where the filesystem has none).
    fn xattrs(&self, path: &RelPath) -> io::Result<Xattrs>;
    /// Whether the filesystem holding the directory `dir` can store POSIX ACLs: `false`
    /// when it answers `EOPNOTSUPP` for them. The default (filesystems of tests, which
    /// keep any attribute) says yes.
    fn acls_supported(&self, _dir: &RelPath) -> io::Result<bool> {
        Ok(true)
    }
    /// The permissions a file created in the existing directory `dir` may get from the
    /// directory's default ACL (`system.posix_acl_default`), as a mode (owner, mask
    /// or group, others: [`acl::default_permissions`]); `None` when it has none. With a
    /// default ACL, open(2) ignores the umask and intersects the mode it is given with
    /// these (acl(5), "Object creation and default ACLs"). The default (filesystems of
    /// tests): none.
    fn default_acl_permissions(&self, _dir: &RelPath) -> io::Result<Option<u32>> {
        Ok(None)
    }
    /// What is at `path`, and for a regular file its bytes and kept extended
    /// attributes ([`FileRead`]). The default asks [`FileSystem::entry`],
    /// [`FileSystem::read`] and [`FileSystem::xattrs`]; [`StdFs`] opens the file once,
    /// without following a symlink and without blocking (a FIFO or device put there is
    /// refused, never waited on or read), and takes the kind, mode and owner from that
    /// descriptor's `fstat`: the metadata, bytes and attributes are of one inode.
    fn read_file(&self, path: &RelPath) -> io::Result<FileRead> {
        match self.entry(path)? {
            kind @ EntryKind::File { .. } => Ok(FileRead::File {
                kind,
                bytes: self.read(path)?,
                xattrs: self.xattrs(path)?,
            }),
            other => Ok(FileRead::Not(other)),
        }
    }
    /// Create `path` (must not exist), write `bytes`, set `xattrs` (an ACL given back
    /// the permissions of `meta.mode`, and an ACL the new file inherited from its
    /// directory removed when `meta.xattrs` is recorded and names none), when
    /// `meta.owner` is given the owner and group (`fchown`), and `meta.mode`, then
    /// `fsync` the file: its bytes and metadata are durable before a name points at it
    /// ([`fill_and_sync`]). On an error after the file was created, it is removed
    /// again (best effort).
    fn write_synced(
        &self,
        path: &RelPath,
        bytes: &[u8],
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()>;
    /// [`FileSystem::write_synced`] of bytes that come in pieces: `pieces` calls its
    /// argument with each piece in order (and returns its error, or its own, to stop
    /// the write: the file is then removed as `write_synced` removes it). A large file
    /// is written without ever being whole in memory (a commit or rollback streams it
    /// from the journal). The default gathers the pieces and calls `write_synced`
    /// (filesystems of tests); [`StdFs`] writes them as they come, in 1 MiB writes.
    fn write_synced_from(
        &self,
        path: &RelPath,
        pieces: Pieces<'_>,
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        let mut bytes = Vec::new();
        pieces(&mut |p| {
            bytes.extend_from_slice(p);
            Ok(())
        })?;
        self.write_synced(path, &bytes, meta, xattrs)
    }
    /// [`FileSystem::read_file`] handing a regular file's bytes to `sink` in pieces (in
    /// order, at most 1 MiB each for [`StdFs`]) instead of returning them: `bytes` is
    /// then empty. What checks a file against a recorded state hashes it this way,
    /// without holding it. The default reads the whole file and hands it over at once.
    fn read_file_with(&self, path: &RelPath, sink: &mut dyn FnMut(&[u8])) -> io::Result<FileRead> {
        let mut read = self.read_file(path)?;
        if let FileRead::File { bytes, .. } = &mut read {
            sink(bytes);
            *bytes = Vec::new();
        }
        Ok(read)
    }
    /// [`FileSystem::read_file_with`] with `pre` called on each piece before `sink` is,
    /// and once more with an empty slice after the last piece of a regular file. `pre`
    /// may run on another thread than the caller's ([`StdFs`] runs it on the thread that
    /// reads a large file, so that work on the pieces is shared between two cores: a
    /// splice's boundary search, `journal::splice::Cutter`); each piece reaches `pre`
    /// before it reaches `sink`. The default calls both on the calling thread.
    fn read_file_with_pre(
        &self,
        path: &RelPath,
        pre: &mut (dyn FnMut(&[u8]) + Send),
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<FileRead> {
        let read = self.read_file_with(path, &mut |piece| {
            pre(piece);
            sink(piece);
        })?;
        if matches!(read, FileRead::File { .. }) {
            pre(&[]);
        }
        Ok(read)
    }
    /// `rename(from, to)`, replacing `to` atomically.
    fn rename(&self, from: &RelPath, to: &RelPath) -> io::Result<()>;
    /// `unlink(path)`.
    fn remove_file(&self, path: &RelPath) -> io::Result<()>;
    /// `mkdir(path)` with mode 0o777 before the umask (as mkdir(1) makes it).
    fn create_dir(&self, path: &RelPath) -> io::Result<()>;
    /// The owner and group a file or directory created in the existing directory `dir`
    /// gets (open(2), mkdir(2) on Linux): the process's effective uid, and the
    /// directory's group when the directory has the set-group-ID bit (which a directory
    /// created in it inherits), else the process's effective gid. (A filesystem mounted
    /// with `grpid` gives every new file its directory's group; this does not model
    /// that.) The default, for filesystems of tests: the effective uid and gid.
    fn creation_owner(&self, _dir: &RelPath) -> io::Result<Owner> {
        Ok(process_owner())
    }
    /// `lchown(path, uid, gid)`, not following a final symlink: used only by root, to
    /// give a directory that recovery creates the owner of the files it is created for.
    /// The default (filesystems of tests, which do not model directory owners) does
    /// nothing.
    fn set_owner(&self, _path: &RelPath, _owner: Owner) -> io::Result<()> {
        Ok(())
    }
    /// `rmdir(path)`; fails if not empty.
    fn remove_dir(&self, path: &RelPath) -> io::Result<()>;
    /// `fsync` a directory (the root for [`RelPath::root`]), making its entries
    /// (renames, unlinks, creations) durable.
    fn sync_dir(&self, path: &RelPath) -> io::Result<()>;
    /// A reference to the inode at `path` (an `O_PATH` descriptor, no symlink
    /// followed), so that when a rename or unlink removes its last name the kernel
    /// frees it — on ext4, truncating its blocks — when the returned handle is
    /// dropped rather than inside the rename: the batch drops it after the receipt was
    /// returned (docs/commit-protocol.md, step 5). Only a matter of speed: `None` (the
    /// default, for filesystems that have no inodes to hold) changes nothing else.
    fn hold(&self, _path: &RelPath) -> io::Result<Option<OwnedFd>> {
        Ok(None)
    }
    /// The names in the directory `dir` (the root for [`RelPath::root`]), without `.`
    /// and `..`, in no order; names that are not UTF-8 are left out. Used only to
    /// suggest a near-miss name ([`near::near_path`]); the default (filesystems of
    /// tests) lists none.
    fn list_dir(&self, _dir: &RelPath) -> io::Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// Whether this process may create and rename entries in the directory `dir`:
    /// `faccessat(dir, W_OK | X_OK, AT_EACCESS)`, with the effective ids (root passes
    /// whatever the mode bits; a read-only mount fails). A commit replaces a file by
    /// renaming a temp over it, so the file's directory must pass. The default
    /// (filesystems of tests) says yes.
    fn dir_writable(&self, _dir: &RelPath) -> io::Result<bool> {
        Ok(true)
    }
}

/// The bytes [`FileSystem::write_synced_from`] writes: called once with a function that
/// takes each piece in order.
pub type Pieces<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()>;

/// Bytes a streamed read or write moves at a time ([`StdFs`]): 1 MiB.
const PIECE: usize = read_ahead::PIECE;

/// Files larger than this (bytes) are read by [`StdFs`]'s `read_file_with` on a second
/// thread while the caller consumes the pieces ([`read_ahead`]): 8 MiB, the size from
/// which a commit streams an image (`batch::image::STREAM_ABOVE`). Below it a thread
/// costs more than the overlap saves.
const READ_AHEAD_ABOVE: usize = 8 << 20;

/// The smallest buffer [`StdFs`]'s `read_file_with` reads a file into (bytes).
const READ_MIN: usize = 8 << 10;

/// What [`FileSystem::read_file`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// A regular file: its [`EntryKind::File`] (links, mode, owner), its bytes and its
    /// kept extended attributes (`user.*` and the access ACL), sorted by name.
    File {
        /// What the file is (always [`EntryKind::File`]).
        kind: EntryKind,
        /// Its bytes.
        bytes: Vec<u8>,
        /// Its `user.*` extended attributes and access ACL ([`FileSystem::xattrs`]).
        xattrs: Xattrs,
    },
    /// Not a regular file, so nothing was read: what is there instead
    /// ([`EntryKind::Absent`] when nothing is).
    Not(EntryKind),
}

/// A file being created by [`FileSystem::write_synced`], step by step: what
/// [`fill_and_sync`] drives, so that every filesystem (the real one, and the tests'
/// crash model) goes through the same steps in the same order.
pub trait NewFile {
    /// Write all of `bytes` at the current offset.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// `fsetxattr(name, value)`.
    fn set_xattr(&mut self, name: &str, value: &[u8]) -> io::Result<()>;
    /// `fremovexattr(name)`; an attribute the file does not have (`ENODATA`), or that
    /// its filesystem cannot hold (`EOPNOTSUPP`), is already removed: `Ok`.
    fn remove_xattr(&mut self, name: &str) -> io::Result<()>;
    /// `fchown(uid, gid)`.
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()>;
    /// `fchmod(mode)` (permission bits, `0o7777`).
    fn set_mode(&mut self, mode: u32) -> io::Result<()>;
    /// `fsync`: the bytes and every attribute set so far are durable.
    fn sync(&mut self) -> io::Result<()>;
    /// Ask the kernel to start writing `len` bytes from `offset` (bytes already
    /// written) to the disk, without waiting for them: Linux's
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` (sync_file_range(2)). A hint, not a
    /// durability step — nothing is durable until [`NewFile::sync`], which also reports
    /// any write error, so this one ignores its own. A large streamed file
    /// ([`fill_and_sync_from`]) calls it as it goes, so that the final `fsync` finds
    /// most of the file already on its way and the disk's work overlaps the reads and
    /// hashes that produce the rest (docs/benchmarks.md, "Large files and large
    /// batches"). The default does nothing.
    fn start_writeback(&mut self, offset: u64, len: u64) {
        let _ = (offset, len);
    }
}

/// Fill a new file and make it durable, in the order the commit protocol relies on
/// (docs/commit-protocol.md, step 4): the bytes, the extended attributes, the owner
/// (before the mode: a `chown` clears setuid/setgid bits, and the mode must be exact),
/// the mode (`fchmod`, so the umask does not change it), and only then the `fsync`.
/// Metadata set after the fsync would not be durable when a rename later points a name
/// at the file: a power cut could leave the new bytes with the wrong owner or mode.
///
/// The access ACL ([`acl::ACCESS`]) is an extended attribute that is also the mode:
/// setting it sets the mode's bits, and the `fchmod` after it sets the ACL's owner,
/// mask and other entries. It is set with the permissions of `meta.mode`
/// ([`acl::for_mode`]) and before the `fchmod`, so the file ends with exactly
/// `meta.mode` and the recorded ACL (the same ACL a `chmod` to `meta.mode` would give
/// when a plan changed the mode). A file whose recorded state (`meta.xattrs` is
/// `Some`) has no ACL loses one it inherited from a default ACL of its directory; a
/// file a batch creates (`None`) keeps what it inherits, as any new file does.
pub fn fill_and_sync(
    f: &mut dyn NewFile,
    bytes: &[u8],
    meta: &FileMeta,
    xattrs: &Xattrs,
) -> io::Result<()> {
    f.write_all(bytes)?;
    set_meta_and_sync(f, meta, xattrs)
}

/// [`fill_and_sync`] of bytes that come in [`Pieces`], gathered into writes of up to
/// 1 MiB: the same steps in the same order, the bytes never whole in memory.
pub fn fill_and_sync_from(
    f: &mut dyn NewFile,
    pieces: Pieces<'_>,
    meta: &FileMeta,
    xattrs: &Xattrs,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(PIECE);
    // Bytes written, and up to where writeback was started ([`NewFile::start_writeback`]).
    let (mut written, mut started) = (0u64, 0u64);
    let mut write = |f: &mut dyn NewFile, bytes: &[u8]| -> io::Result<()> {
        f.write_all(bytes)?;
        written += bytes.len() as u64;
        if written - started >= WRITEBACK_EVERY {
            f.start_writeback(started, written - started);
            started = written;
        }
        Ok(())
    };
    pieces(&mut |p| {
        if buf.len() + p.len() > PIECE && !buf.is_empty() {
            write(f, &buf)?;
            buf.clear();
        }
        if p.len() >= PIECE {
            write(f, p)
        } else {
            buf.extend_from_slice(p);
            Ok(())
        }
    })?;
    write(f, &buf)?;
    set_meta_and_sync(f, meta, xattrs)
}

/// How many bytes [`fill_and_sync_from`] writes between two
/// [`NewFile::start_writeback`] calls: 8 MiB, so a file at the streaming threshold
/// (8 MiB) starts none, and a 106 MB file about 13 — each one system call that returns
/// once the pages are queued.
const WRITEBACK_EVERY: u64 = 8 << 20;

/// The steps of [`fill_and_sync`] after the bytes: attributes, owner, mode, `fsync`.
fn set_meta_and_sync(f: &mut dyn NewFile, meta: &FileMeta, xattrs: &Xattrs) -> io::Result<()> {
    for (name, value) in &xattrs.0 {
        if name == acl::ACCESS {
            f.set_xattr(name, &acl::for_mode(value, meta.mode))?;
        } else {
            f.set_xattr(name, value)?;
        }
    }
    if meta.xattrs.is_some() && !xattrs.0.iter().any(|(n, _)| n == acl::ACCESS) {
        f.remove_xattr(acl::ACCESS)?;
    }
    if let Some(o) = meta.owner {
        f.set_owner(o.uid, o.gid)?;
    }
    f.set_mode(meta.mode & 0o7777)?;
    f.sync()
}

/// A new regular file of [`StdFs`].
struct StdNewFile(File);

impl NewFile for StdNewFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }
    fn set_xattr(&mut self, name: &str, value: &[u8]) -> io::Result<()> {
        Ok(rustix::fs::fsetxattr(
            &self.0,
            name,
            value,
            rustix::fs::XattrFlags::empty(),
        )?)
    }
    fn remove_xattr(&mut self, name: &str) -> io::Result<()> {
        match rustix::fs::fremovexattr(&self.0, name) {
            Ok(()) | Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()> {
        Ok(rustix::fs::fchown(
            &self.0,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
        )?)
    }
    fn set_mode(&mut self, mode: u32) -> io::Result<()> {
        Ok(rustix::fs::fchmod(&self.0, Mode::from_raw_mode(mode as _))?)
    }
    fn sync(&mut self) -> io::Result<()> {
        sync_file(&self.0)
    }
    #[cfg(target_os = "linux")]
    fn start_writeback(&mut self, offset: u64, len: u64) {
        let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
            return;
        };
        // SAFETY: `sync_file_range` takes a file descriptor this handle owns (open
        // for the call's whole duration) and three integers; it touches no memory of
        // ours. Its result is ignored: a hint (see the trait), the fsync reports errors.
        let _ = unsafe {
            libc::sync_file_range(self.0.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
        };
    }
}

/// The real filesystem. Every operation walks from a directory handle on the root,
/// one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`, and then acts on
/// the final name relative to its parent's handle (`renameat`, `unlinkat`, `mkdirat`,
/// `openat(O_NOFOLLOW)`, `statat(AT_SYMLINK_NOFOLLOW)`). A symlink anywhere in the
/// path fails the walk (`ELOOP`/`ENOTDIR`), so a directory swapped for a symlink
/// between the gate and the rename still cannot make a write land outside the root:
/// confinement by construction, not by an earlier string or `lstat` check.
///
/// With the `failpoints` feature each mutating operation has an error failpoint:
/// `fs::write`, `fs::fsync` (the temp's fsync), `fs::rename`, `fs::unlink`, `fs::mkdir`,
/// `fs::rmdir`, `fs::sync_dir`
/// (see `failpoint::io_fault!`).
#[derive(Debug, Clone)]
pub struct StdFs {
    root_fd: Arc<OwnedFd>,
}

impl StdFs {
    /// Create `path` (exclusive, no symlink followed, mode 0600 until `fill` sets the
    /// file's own) and let `fill` write, attribute and fsync it: the one body of
    /// [`FileSystem::write_synced`] and [`FileSystem::write_synced_from`]. A file this
    /// call created and could not finish (a full disk, an owner it may not give) is
    /// removed: never left behind half written, holding the space a retry needs.
    fn create_filled(
        &self,
        path: &RelPath,
        fill: impl FnOnce(&mut dyn NewFile) -> io::Result<()>,
    ) -> io::Result<()> {
        io_fault!("fs::write");
        let (dir, name) = self.parent(path)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let filled = fill(&mut StdNewFile(File::from(fd)));
        if filled.is_err() {
            let _ = rustix::fs::unlinkat(&dir, name, AtFlags::empty());
        }
        filled
    }

    /// A filesystem confined to `root` (which must be a canonical directory path).
    pub fn beneath(root: &Path) -> io::Result<StdFs> {
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(StdFs {
            root_fd: Arc::new(fd),
        })
    }

    /// A handle on the directory `parts`, walked from the root without following links
    /// (the root's own descriptor when `parts` is empty).
    fn open_dir(&self, parts: &[&str]) -> io::Result<Dir<'_>> {
        let mut dir = Dir::Root(self.root_fd.as_fd());
        for part in parts {
            dir = Dir::Opened(rustix::fs::openat(
                &dir,
                *part,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?);
        }
        Ok(dir)
    }

    /// The regular file `path` opened for reading, without following a final symlink
    /// and without blocking on a FIFO; anything but a regular file is refused
    /// (`InvalidInput`).
    fn open_read(&self, path: &RelPath) -> io::Result<OwnedFd> {
        let (dir, name) = self.parent(path)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        if !matches!(kind_of(&rustix::fs::fstat(&fd)?), EntryKind::File { .. }) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        Ok(fd)
    }

    /// The regular file `path` opened for reading as [`FileSystem::read_file`] opens it
    /// (no final symlink followed, a FIFO never waited on), with its kind and size from
    /// that descriptor's `fstat`; `Err(kind)` inside when something else is there
    /// ([`EntryKind::Absent`] when nothing is).
    #[allow(clippy::type_complexity)]
    fn open_regular(
        &self,
        path: &RelPath,
    ) -> io::Result<Result<(File, EntryKind, usize), EntryKind>> {
        let (dir, name) = match self.parent(path) {
            Ok(p) => p,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Err(EntryKind::Absent)),
            Err(e) => return Err(e),
        };
        // O_NONBLOCK: a FIFO swapped in after the caller's lstat would otherwise block
        // this open until a writer came (holding the commit lock meanwhile); a regular
        // file's reads ignore the flag.
        let fd = match rustix::fs::openat(
            &dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(Err(EntryKind::Absent)),
            // O_NOFOLLOW on a symlink.
            Err(rustix::io::Errno::LOOP) => return Ok(Err(EntryKind::Symlink)),
            Err(e) => return Err(e.into()),
        };
        let st = rustix::fs::fstat(&fd)?;
        let kind = kind_of(&st);
        if !matches!(kind, EntryKind::File { .. }) {
            return Ok(Err(kind));
        }
        let size = usize::try_from(st.st_size).unwrap_or(0);
        Ok(Ok((File::from(fd), kind, size)))
    }

    /// The parent's handle and the final name of `path`.
    fn parent<'p>(&self, path: &'p RelPath) -> io::Result<(Dir<'_>, &'p str)> {
        let parts: Vec<&str> = path.components().collect();
        let Some((name, dirs)) = parts.split_last() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the root itself",
            ));
        };
        Ok((self.open_dir(dirs)?, name))
    }
}

/// A directory handle of [`StdFs`]: the root's own descriptor, borrowed (most files of
/// a workspace sit in the root or near it, and a `dup` + `close` per operation was a
/// fifth of a 10-file commit's system calls), or one opened by the walk.
enum Dir<'a> {
    Root(BorrowedFd<'a>),
    Opened(OwnedFd),
}

impl AsFd for Dir<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Dir::Root(fd) => *fd,
            Dir::Opened(fd) => fd.as_fd(),
        }
    }
}

/// The kept extended attributes of the open file `fd` — `user.*`, and the access ACL
/// ([`acl::ACCESS`]) in its recorded form ([`acl::normalize`]) — sorted by name; none
/// where the filesystem does not support them (`ENOTSUP`).
fn xattrs_of(fd: BorrowedFd<'_>) -> io::Result<Xattrs> {
    let unsupported = |e: rustix::io::Errno| e == rustix::io::Errno::NOTSUP;
    let len = match rustix::fs::flistxattr_query(fd) {
        Ok(n) => n,
        Err(e) if unsupported(e) => return Ok(Xattrs::default()),
        Err(e) => return Err(e.into()),
    };
    if len == 0 {
        return Ok(Xattrs::default());
    }
    let mut list = vec![0u8; len];
    let n = rustix::fs::flistxattr(fd, &mut list[..])?;
    let mut out = Vec::new();
    for name in list[..n.min(len)].split(|b| *b == 0) {
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let is_acl = name == acl::ACCESS;
        if !name.starts_with("user.") && !is_acl {
            continue;
        }
        let size = rustix::fs::fgetxattr_query(fd, name)?;
        let mut value = vec![0u8; size];
        let got = rustix::fs::fgetxattr(fd, name, &mut value[..])?;
        value.truncate(got);
        if is_acl {
            value = acl::normalize(&value);
        }
        out.push((name.to_string(), value));
    }
    out.sort();
    Ok(Xattrs(out))
}

/// What a `stat` says is there.
// `st_nlink` and `st_mode` are of other widths on other targets.
#[allow(clippy::unnecessary_cast)]
fn kind_of(st: &rustix::fs::Stat) -> EntryKind {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => EntryKind::Symlink,
        FileType::Directory => EntryKind::Dir,
        FileType::RegularFile => EntryKind::File {
            links: st.st_nlink as u64,
            mode: st.st_mode as u32 & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
        },
        _ => EntryKind::Other,
    }
}

/// The process's effective uid and gid: the owner of a file it creates in a directory
/// without the set-group-ID bit.
pub fn process_owner() -> Owner {
    Owner {
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
    }
}

/// Mode bits of `st_mode` this module tests.
mod libc_mode {
    /// Set-group-ID.
    pub const S_ISGID: u32 = 0o2000;
}

/// `fsync` a written temp: its bytes must be durable before a name points at them.
/// The `fs::fsync` failpoint sits here, so the I/O-fault test fails if this call is
/// ever dropped from `write_synced`.
fn sync_file(f: &File) -> io::Result<()> {
    io_fault!("fs::fsync");
    f.sync_all()
}

impl FileSystem for StdFs {
    fn entry(&self, path: &RelPath) -> io::Result<EntryKind> {
        let st = if path.is_root() {
            rustix::fs::fstat(&*self.root_fd)?
        } else {
            let (dir, name) = match self.parent(path) {
                Ok(p) => p,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(EntryKind::Absent),
                Err(e) => return Err(e),
            };
            match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(rustix::io::Errno::NOENT) => return Ok(EntryKind::Absent),
                Err(e) => return Err(e.into()),
            }
        };
        Ok(kind_of(&st))
    }

    fn read(&self, path: &RelPath) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        File::from(self.open_read(path)?).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn xattrs(&self, path: &RelPath) -> io::Result<Xattrs> {
        xattrs_of(self.open_read(path)?.as_fd())
    }

    fn acls_supported(&self, dir: &RelPath) -> io::Result<bool> {
        let parts: Vec<&str> = dir.components().collect();
        let dir = self.open_dir(&parts)?;
        // An empty buffer asks for the size only: `ENODATA` (no ACL) and a size both
        // say the filesystem has ACLs.
        match rustix::fs::fgetxattr(&dir, acl::ACCESS, &mut [0u8; 0][..]) {
            Ok(_) | Err(rustix::io::Errno::NODATA | rustix::io::Errno::RANGE) => Ok(true),
            Err(rustix::io::Errno::NOTSUP) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    fn default_acl_permissions(&self, dir: &RelPath) -> io::Result<Option<u32>> {
        let parts: Vec<&str> = dir.components().collect();
        let dir = self.open_dir(&parts)?;
        let mut value = vec![0u8; 4096];
        match rustix::fs::fgetxattr(&dir, acl::DEFAULT, &mut value[..]) {
            Ok(n) => Ok(acl::default_permissions(&value[..n])),
            Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn read_file(&self, path: &RelPath) -> io::Result<FileRead> {
        let (mut file, kind, size) = match self.open_regular(path)? {
            Ok(found) => found,
            Err(other) => return Ok(FileRead::Not(other)),
        };
        // Sized by the fstat just made (one byte more, to see the end in one read):
        // std's File::read_to_end would ask the size again with statx and lseek.
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(size.saturating_add(1))
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "file too large to read"))?;
        Read::take(&mut file, u64::MAX).read_to_end(&mut bytes)?;
        let xattrs = xattrs_of(file.as_fd())?;
        Ok(FileRead::File {
            kind,
            bytes,
            xattrs,
        })
    }

    fn read_file_with(&self, path: &RelPath, sink: &mut dyn FnMut(&[u8])) -> io::Result<FileRead> {
        self.read_file_with_pre(path, &mut |_| {}, sink)
    }

    fn read_file_with_pre(
        &self,
        path: &RelPath,
        pre: &mut (dyn FnMut(&[u8]) + Send),
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<FileRead> {
        let (mut file, kind, size) = match self.open_regular(path)? {
            Ok(found) => found,
            Err(other) => return Ok(FileRead::Not(other)),
        };
        if size > READ_AHEAD_ABOVE {
            read_ahead::read_ahead(&mut file, pre, sink)?;
        } else {
            // Sized by the file (its `fstat` size and one byte more, so that one read
            // returns it all and the next the end), up to a piece: a zeroed 1 MiB
            // buffer for every small file was 2 MiB of `memset` (and the page faults of
            // a fresh mapping) per file of a commit, gate and install each (a fifth of
            // a 1,000-file commit's CPU, docs/benchmarks.md). A file that grew since is
            // read on in as many reads as it takes.
            let buf_len = size.saturating_add(1).clamp(READ_MIN, PIECE);
            read_ahead::read_inline(&mut file, pre, sink, buf_len)?;
        }
        let xattrs = xattrs_of(file.as_fd())?;
        Ok(FileRead::File {
            kind,
            bytes: Vec::new(),
            xattrs,
        })
    }

    fn write_synced_from(
        &self,
        path: &RelPath,
        pieces: Pieces<'_>,
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.create_filled(path, |f| fill_and_sync_from(f, pieces, meta, xattrs))
    }

    fn write_synced(
        &self,
        path: &RelPath,
        bytes: &[u8],
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.create_filled(path, |f| fill_and_sync(f, bytes, meta, xattrs))
    }

    fn rename(&self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        io_fault!("fs::rename");
        let (from_dir, from_name) = self.parent(from)?;
        let (to_dir, to_name) = self.parent(to)?;
        Ok(rustix::fs::renameat(
            &from_dir, from_name, &to_dir, to_name,
        )?)
    }

    fn remove_file(&self, path: &RelPath) -> io::Result<()> {
        io_fault!("fs::unlink");
        let (dir, name) = self.parent(path)?;
        Ok(rustix::fs::unlinkat(&dir, name, AtFlags::empty())?)
    }

    fn create_dir(&self, path: &RelPath) -> io::Result<()> {
        io_fault!("fs::mkdir");
        let (dir, name) = self.parent(path)?;
        // 0777 & ~umask, as mkdir(1) and git make directories: the process's umask
        // decides, so a group-writable umask (002) gives a directory the group can use.
        Ok(rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o777))?)
    }

    fn creation_owner(&self, dir: &RelPath) -> io::Result<Owner> {
        let st = if dir.is_root() {
            rustix::fs::fstat(&*self.root_fd)?
        } else {
            let (parent, name) = self.parent(dir)?;
            rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)?
        };
        let mut owner = process_owner();
        if st.st_mode & libc_mode::S_ISGID != 0 {
            owner.gid = st.st_gid;
        }
        Ok(owner)
    }

    fn set_owner(&self, path: &RelPath, owner: Owner) -> io::Result<()> {
        let (dir, name) = self.parent(path)?;
        Ok(rustix::fs::chownat(
            &dir,
            name,
            Some(rustix::fs::Uid::from_raw(owner.uid)),
            Some(rustix::fs::Gid::from_raw(owner.gid)),
            AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    fn remove_dir(&self, path: &RelPath) -> io::Result<()> {
        io_fault!("fs::rmdir");
        let (dir, name) = self.parent(path)?;
        Ok(rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR)?)
    }

    fn hold(&self, path: &RelPath) -> io::Result<Option<OwnedFd>> {
        let (dir, name) = self.parent(path)?;
        let fd = rustix::fs::openat(
            &dir,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Some(fd))
    }

    fn sync_dir(&self, path: &RelPath) -> io::Result<()> {
        io_fault!("fs::sync_dir");
        let parts: Vec<&str> = path.components().collect();
        Ok(rustix::fs::fsync(self.open_dir(&parts)?)?)
    }

    fn list_dir(&self, dir: &RelPath) -> io::Result<Vec<String>> {
        let parts: Vec<&str> = dir.components().collect();
        let fd = self.open_dir(&parts)?;
        let mut listing = rustix::fs::Dir::read_from(&fd)?;
        let mut names = Vec::new();
        while let Some(entry) = listing.read() {
            let entry = entry?;
            if let Ok(name) = entry.file_name().to_str() {
                if name != "." && name != ".." {
                    names.push(name.to_string());
                }
            }
        }
        Ok(names)
    }

    fn dir_writable(&self, dir: &RelPath) -> io::Result<bool> {
        let parts: Vec<&str> = dir.components().collect();
        let fd = self.open_dir(&parts)?;
        let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
        match rustix::fs::accessat(&fd, ".", access, AtFlags::EACCESS) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::ACCESS | rustix::io::Errno::ROFS | rustix::io::Errno::PERM) => {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`fill_and_sync_from`] does to a new file, in order.
    #[derive(Default)]
    struct Steps(Vec<String>, u64);

    impl NewFile for Steps {
        fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
            self.1 += bytes.len() as u64;
            Ok(())
        }
        fn set_xattr(&mut self, name: &str, _: &[u8]) -> io::Result<()> {
            self.0.push(format!("xattr {name}"));
            Ok(())
        }
        fn remove_xattr(&mut self, name: &str) -> io::Result<()> {
            self.0.push(format!("rmxattr {name}"));
            Ok(())
        }
        fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()> {
            self.0.push(format!("owner {uid}:{gid}"));
            Ok(())
        }
        fn set_mode(&mut self, mode: u32) -> io::Result<()> {
            self.0.push(format!("mode {mode:o}"));
            Ok(())
        }
        fn sync(&mut self) -> io::Result<()> {
            self.0.push(format!("sync at {}", self.1));
            Ok(())
        }
        fn start_writeback(&mut self, offset: u64, len: u64) {
            self.0
                .push(format!("writeback {offset}+{len} at {}", self.1));
        }
    }

    /// A streamed file starts the writeback of every 8 MiB written, each range once and
    /// only bytes already written, and the fsync still comes last, after the mode.
    #[test]
    fn a_streamed_file_starts_writeback_every_8_mib_then_syncs() {
        let mib = 1u64 << 20;
        let meta = FileMeta {
            mode: 0o640,
            owner: None,
            xattrs: None,
        };
        // 20 MiB and 5 bytes, in pieces of 3 MiB and one of 2 MiB + 5.
        let mut sizes = vec![3 * mib as usize; 6];
        sizes.push(2 * mib as usize + 5);
        let mut f = Steps::default();
        fill_and_sync_from(
            &mut f,
            &mut |put| {
                for &n in &sizes {
                    put(&vec![7u8; n])?;
                }
                Ok(())
            },
            &meta,
            &Xattrs::default(),
        )
        .unwrap();
        assert_eq!(
            f.0,
            vec![
                format!("writeback 0+{} at {}", 9 * mib, 9 * mib),
                format!("writeback {}+{} at {}", 9 * mib, 9 * mib, 18 * mib),
                "mode 640".to_string(),
                format!("sync at {}", 20 * mib + 5),
            ]
        );
        // A file at the streaming threshold starts none.
        let mut small = Steps::default();
        fill_and_sync_from(
            &mut small,
            &mut |put| put(&vec![1u8; 8 * mib as usize - 1]),
            &meta,
            &Xattrs::default(),
        )
        .unwrap();
        assert_eq!(
            small.0,
            vec!["mode 640".to_string(), format!("sync at {}", 8 * mib - 1)]
        );
    }

    /// A held inode outlives the rename that replaces its name: the descriptor still
    /// refers to it, with no name left (`nlink` 0), and the new file is at the path.
    /// A symlink is not followed: the descriptor is of the link itself (`O_NOFOLLOW`).
    #[test]
    fn a_held_inode_outlives_the_rename_that_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), b"old\n").unwrap();
        std::fs::write(dir.path().join("t.tmp"), b"new\n").unwrap();
        let fs = StdFs::beneath(dir.path()).unwrap();
        let f = RelPath::parse("f.txt").unwrap();
        let held = fs.hold(&f).unwrap().expect("StdFs holds");
        let before = rustix::fs::fstat(&held).unwrap();
        assert_eq!(before.st_nlink, 1);
        fs.rename(&RelPath::parse("t.tmp").unwrap(), &f).unwrap();
        let after = rustix::fs::fstat(&held).unwrap();
        assert_eq!((after.st_ino, after.st_nlink), (before.st_ino, 0));
        assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"new\n");
        std::os::unix::fs::symlink("f.txt", dir.path().join("link")).unwrap();
        let link = fs.hold(&RelPath::parse("link").unwrap()).unwrap().unwrap();
        let st = rustix::fs::fstat(&link).unwrap();
        assert_eq!(
            rustix::fs::FileType::from_raw_mode(st.st_mode),
            rustix::fs::FileType::Symlink
        );
    }

    /// `read_file_with` hands over exactly a file's bytes, in order, whatever its size
    /// against its buffer (sized by the file, [`READ_MIN`] to [`PIECE`]): empty, one
    /// byte, either side of the smallest buffer, and past one piece (pieces of at most
    /// `PIECE` bytes). Distinct bytes at every offset, so a lost or repeated piece shows.
    #[test]
    fn read_file_with_hands_over_every_byte_whatever_the_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let fs = StdFs::beneath(dir.path()).unwrap();
        let f = RelPath::parse("f.bin").unwrap();
        for size in [0, 1, READ_MIN - 1, READ_MIN, READ_MIN + 1, PIECE + 3] {
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(dir.path().join("f.bin"), &bytes).unwrap();
            let mut got = Vec::new();
            let mut largest = 0;
            let read = fs
                .read_file_with(&f, &mut |p| {
                    largest = largest.max(p.len());
                    got.extend_from_slice(p);
                })
                .unwrap();
            assert!(matches!(read, FileRead::File { ref bytes, .. } if bytes.is_empty()));
            assert_eq!(got, bytes, "size {size}");
            assert_eq!(largest, size.min(PIECE), "size {size}");
        }
    }

    /// One descriptor reads a file's bytes and its `user.*` attributes: the same as
    /// `read` and `xattrs` give, in the root and in a subdirectory (the root's own
    /// descriptor is borrowed, a subdirectory's opened by the walk), with the kind from
    /// that descriptor; a symlink, a directory, a FIFO and a missing file are named, not
    /// read (the FIFO is not waited on: the test would hang).
    #[test]
    fn read_file_reads_one_inode_and_names_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("f.txt"), b"top\n").unwrap();
        std::fs::write(dir.path().join("sub/g.txt"), b"nested\n").unwrap();
        let fs = StdFs::beneath(dir.path()).unwrap();
        let f = RelPath::parse("f.txt").unwrap();
        let g = RelPath::parse("sub/g.txt").unwrap();
        // Some filesystems (tmpfs before 6.6) refuse user.* attributes: then both
        // sides read none.
        let tagged = rustix::fs::setxattr(
            dir.path().join("sub/g.txt"),
            "user.tag",
            b"v1",
            rustix::fs::XattrFlags::empty(),
        )
        .is_ok();
        let FileRead::File {
            kind,
            bytes,
            xattrs,
        } = fs.read_file(&f).unwrap()
        else {
            panic!("f.txt is a file")
        };
        assert_eq!(
            (kind, bytes, xattrs),
            (fs.entry(&f).unwrap(), b"top\n".to_vec(), Xattrs::default())
        );
        let FileRead::File { bytes, xattrs, .. } = fs.read_file(&g).unwrap() else {
            panic!("sub/g.txt is a file")
        };
        assert_eq!(bytes, b"nested\n");
        assert_eq!(xattrs, fs.xattrs(&g).unwrap());
        if tagged {
            assert_eq!(xattrs.0, vec![("user.tag".to_string(), b"v1".to_vec())]);
        }
        std::os::unix::fs::symlink("f.txt", dir.path().join("link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("fifo"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        for (name, want) in [
            ("link", EntryKind::Symlink),
            ("sub", EntryKind::Dir),
            ("fifo", EntryKind::Other),
            ("missing", EntryKind::Absent),
            ("nodir/missing", EntryKind::Absent),
        ] {
            let got = fs.read_file(&RelPath::parse(name).unwrap()).unwrap();
            assert_eq!(got, FileRead::Not(want), "{name}");
        }
        // `read` refuses the FIFO too, without waiting for a writer.
        let err = fs.read(&RelPath::parse("fifo").unwrap()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
