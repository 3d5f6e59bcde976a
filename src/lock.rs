//! The workspace commit lock: one batch at a time per workspace (docs/commit-protocol.md, step 1).
//!
//! Two exclusive `flock(2)`s (through `fs2`), taken in this order:
//!
//! 1. on the state directory `<root>/.ultra-edit/` itself. This is the lock that
//!    decides whether a batch is alive: the directory cannot be removed while it
//!    holds the journal, so no one can end a holder's lock by deleting a path (issue
//!    "a batch that no one can declare dead by deleting a file"). Should the directory
//!    be renamed and another put in its place, a locker notices (the inode it locked is
//!    no longer the one at the path) and locks the new one.
//! 2. on `<root>/.ultra-edit/commit.lock`, which older versions and other tools
//!    (`flock(1)`) lock; the holder writes its pid into it so a waiter that times out
//!    can name it. After locking, the locked inode is checked to be the one at the
//!    path (`fstat` vs `stat`, device and inode); if the file was removed or replaced
//!    meanwhile, it is opened and locked again.
//!
//! 3. on the workspace root directory itself: the lock keyed by the root, not by the
//!    state directory. Two journals over one root (a host's state directory and the
//!    root's own `.ultra-edit/`, or two hosts' runtime directories) have two state
//!    directories and two `commit.lock`s, which would let both commit over the same
//!    files at once; both lock the root's inode too, so a batch of one waits for a
//!    batch of the other, and times out with [`Error::LockTimeout`] naming the root
//!    and the holder's pid (docs/embedding.md, "One root, one journal"). Nothing is
//!    written in the root: `flock` needs only a descriptor of the directory.
//!
//! 4. a *shared* `flock` on every directory above the root (its parent up to `/`), top
//!    down: nested roots. A commit over `/a` holds `/a` exclusively (3.), and a commit
//!    over `/a/b` holds `/a` shared, so the two never run at once, whichever came
//!    first, whether or not their files overlap (a journal over `/a` may write files
//!    under `/a/b`). Sibling roots (`/a/x` and `/a/y`) both hold `/a` shared and do not
//!    wait for each other. No deadlock: a process waits for a directory above its root
//!    only, so two waiters would each need the other's root above its own. A
//!    directory this user cannot open (a parent of mode 0711) is skipped: nesting
//!    across it is not detected (docs/embedding.md, "Nested roots").
//!
//! The kernel releases them all when the holder's file descriptors close, so a holder
//! that dies never blocks anyone.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fs2::FileExt;

use crate::engine::Ws;
use crate::error::{Error, IoContext, IoError, Result};

/// How often a waiter retries, in milliseconds.
const POLL_MS: u64 = 5;

/// A held commit lock; released on drop.
#[must_use = "the lock is released when this value is dropped"]
pub struct CommitLock {
    _dir: File,
    file: File,
    _root: File,
    /// Shared locks on the directories above the root, top down (module docs, 4.).
    _above: Vec<File>,
}

impl CommitLock {
    /// Take the lock of the state directory `dir`, of `path` (its `commit.lock`) and of
    /// the workspace root `root`, waiting up to `timeout` in all.
    ///
    /// Errors: [`Error::LockTimeout`] with the holder's pid when it could be read (its
    /// `path` is the root when another journal of the root held it); an I/O error if
    /// the directory, the lock file or the root cannot be opened.
    pub fn acquire(dir: &Path, path: &Path, root: &Path, timeout: Duration) -> Result<CommitLock> {
        let start = Instant::now();
        // The lock that was busy, and who holds it: the pid an ultra-edit holder wrote,
        // else the kernel's record of the lock's owner (another tool's `flock`).
        let timed_out = |busy: &Path| Error::LockTimeout {
            path: PathBuf::from(busy),
            waited_ms: start.elapsed().as_millis() as u64,
            holder: read_pid(path).or_else(|| flock_holder(busy)),
        };
        let open_dir = || {
            OpenOptions::new()
                .read(true)
                .custom_flags(
                    crate::fs::state_files::no_follow()
                        | rustix::fs::OFlags::DIRECTORY.bits() as i32,
                )
                .open(dir)
                .ctx("open", dir)
        };
        let dir_file = lock_at(dir, open_dir, start, timeout)?.ok_or_else(|| timed_out(dir))?;
        let open_file = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                // Never through a symbolic link, and never a file with other names:
                // the lock file is truncated to hold the holder's pid.
                .custom_flags(crate::fs::state_files::no_follow())
                .open(path)
                .ctx("open", path)
                .and_then(|f| {
                    use std::os::unix::fs::MetadataExt;
                    let md = f.metadata().ctx("stat", path)?;
                    if !md.is_file() || md.nlink() > 1 {
                        return Err(crate::error::IoError {
                            op: "open",
                            path: path.to_path_buf(),
                            source: std::io::Error::other(
                                "the commit lock is not a regular file with one name (a hard link to another file?); remove it, a commit re-creates it",
                            ),
                        });
                    }
                    // Root re-creating a missing lock file in a user's state directory
                    // gives it to the directory's owner, who must still open it.
                    crate::fs::state_files::own_like_state_dir(dir, &f, path)?;
                    Ok(f)
                })
        };
        let file = match lock_at(path, open_file, start, timeout) {
            Ok(Some(file)) => file,
            // Release the directory's lock now rather than at close (see Drop).
            other => {
                let _ = FileExt::unlock(&dir_file);
                return Err(other.err().unwrap_or_else(|| timed_out(path)));
            }
        };
        // The root's own lock, so that a journal in another state directory of the
        // same root cannot run a batch beside this one.
        let open_root = || {
            OpenOptions::new()
                .read(true)
                .custom_flags(
                    crate::fs::state_files::no_follow()
                        | rustix::fs::OFlags::DIRECTORY.bits() as i32,
                )
                .open(root)
                .ctx("open", root)
        };
        let root_file = match lock_at(root, open_root, start, timeout) {
            Ok(Some(f)) => f,
            other => {
                let _ = FileExt::unlock(&file);
                let _ = FileExt::unlock(&dir_file);
                return Err(other.err().unwrap_or_else(|| Error::LockTimeout {
                    path: root.to_path_buf(),
                    waited_ms: start.elapsed().as_millis() as u64,
                    holder: flock_holder(root),
                }));
            }
        };
        let above = match lock_above(root, start, timeout) {
            Ok(above) => above,
            Err(e) => {
                let _ = FileExt::unlock(&root_file);
                let _ = FileExt::unlock(&file);
                let _ = FileExt::unlock(&dir_file);
                return Err(e);
            }
        };
        let mut lock = CommitLock {
            _dir: dir_file,
            file,
            _root: root_file,
            _above: above,
        };
        lock.write_pid();
        Ok(lock)
    }

    /// Try once, without waiting: `None` when another holder has it.
    pub fn try_acquire(dir: &Path, path: &Path, root: &Path) -> Result<Option<CommitLock>> {
        match Self::acquire(dir, path, root, Duration::ZERO) {
            Ok(l) => Ok(Some(l)),
            Err(Error::LockTimeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write_pid(&mut self) {
        // Best effort: the pid only improves a waiter's message.
        let pid = std::process::id().to_string();
        let _ = self.file.set_len(0);
        let _ = self.file.seek(SeekFrom::Start(0));
        let _ = self.file.write_all(pid.as_bytes());
    }
}

impl Drop for CommitLock {
    /// Unlock explicitly, both locks: a child process forked by another thread of the
    /// embedder (a test harness, a server) shares our open file descriptions until it
    /// execs, and closing our descriptors alone would leave the locks held that long.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        for f in self._above.iter().rev() {
            let _ = FileExt::unlock(f);
        }
        let _ = FileExt::unlock(&self._root);
        let _ = FileExt::unlock(&self.file);
        let _ = FileExt::unlock(&self._dir);
    }
}

/// Lock what `open` opens at `path`, polling until `timeout` since `start`: `None` on
/// timeout. A lock taken on an inode that is no longer the one at `path` (removed or
/// replaced meanwhile) is dropped and the path opened and locked again.
fn lock_at(
    path: &Path,
    open: impl Fn() -> Result<File, IoError>,
    start: Instant,
    timeout: Duration,
) -> Result<Option<File>> {
    // Immediate retries after a lock on a stale inode; past them, such a lock counts as
    // not taken (a path replaced over and over, or that cannot be stat'ed).
    let mut stale = 0;
    loop {
        let file = open()?;
        match file.try_lock_exclusive() {
            Ok(()) if same_inode(&file, path) => return Ok(Some(file)),
            // Removed or replaced since it was opened: the lock guards nothing.
            Ok(()) if stale < 8 => {
                let _ = FileExt::unlock(&file);
                stale += 1;
                continue;
            }
            Ok(()) => {
                let _ = FileExt::unlock(&file);
            }
            Err(e) if e.raw_os_error() == fs2::lock_contended_error().raw_os_error() => {}
            Err(source) => {
                return Err(IoError {
                    op: "flock",
                    path: path.into(),
                    source,
                }
                .into())
            }
        }
        if start.elapsed() >= timeout {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(POLL_MS));
    }
}

/// Shared locks on every directory above `root`, from `/` down to its parent, each
/// waited for until `timeout` since `start` (module docs, 4.). A directory that cannot
/// be opened is skipped. Errors: [`Error::LockTimeout`] naming the directory (the
/// root of another journal, committing) and its holder; an I/O error of `flock`.
fn lock_above(root: &Path, start: Instant, timeout: Duration) -> Result<Vec<File>> {
    let mut above: Vec<&Path> = root.ancestors().skip(1).collect();
    above.reverse();
    let mut held = Vec::with_capacity(above.len());
    let release = |held: &Vec<File>| {
        for f in held.iter().rev() {
            let _ = FileExt::unlock(f);
        }
    };
    for dir in above {
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::DIRECTORY.bits() as i32)
            .open(dir);
        let Ok(file) = opened else { continue };
        loop {
            match FileExt::try_lock_shared(&file) {
                Ok(()) => break,
                Err(e) if e.raw_os_error() == fs2::lock_contended_error().raw_os_error() => {}
                Err(source) => {
                    release(&held);
                    return Err(IoError {
                        op: "flock",
                        path: dir.into(),
                        source,
                    }
                    .into());
                }
            }
            if start.elapsed() >= timeout {
                release(&held);
                return Err(Error::LockTimeout {
                    path: dir.to_path_buf(),
                    waited_ms: start.elapsed().as_millis() as u64,
                    holder: flock_holder(dir),
                });
            }
            std::thread::sleep(Duration::from_millis(POLL_MS));
        }
        held.push(file);
    }
    Ok(held)
}

/// Whether `file` is still the inode at `path` (same device and inode number).
fn same_inode(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The pid the holder wrote into the lock file, if that process is alive: a holder
/// that did not write its pid (another tool's `flock`) leaves the pid of an earlier,
/// dead holder there, which must not be named.
fn read_pid(path: &Path) -> Option<u32> {
    let mut s = String::new();
    File::open(path).ok()?.read_to_string(&mut s).ok()?;
    let pid: u32 = s.trim().parse().ok()?;
    let alive = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?).is_some_and(|p| {
        // EPERM: alive, owned by another user; only ESRCH means gone.
        rustix::process::test_kill_process(p) != Err(rustix::io::Errno::SRCH)
    });
    alive.then_some(pid)
}

/// The process holding an exclusive `flock` on the inode at `path`, from the kernel's
/// table of locks (`/proc/locks`, proc(5): `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE
/// 0 EOF`, device numbers in hex), when it is not this process. `None` where there is
/// no such table or no such lock.
fn flock_holder(path: &Path) -> Option<u32> {
    let meta = std::fs::metadata(path).ok()?;
    let table = std::fs::read_to_string("/proc/locks").ok()?;
    holder_in(&table, meta.dev(), meta.ino())
}

/// The pid of the first granted `FLOCK` lock on device `dev`, inode `ino` in `table`
/// (the text of `/proc/locks`); waiters (`->` lines) and this process are skipped.
fn holder_in(table: &str, dev: u64, ino: u64) -> Option<u32> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    table.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid: u32 = f.get(4)?.parse().ok()?;
        let mut id = f.get(5)?.split(':');
        let (maj, min, inode) = (id.next()?, id.next()?, id.next()?);
        let same = u32::from_str_radix(maj, 16).ok()? == major
            && u32::from_str_radix(min, 16).ok()? == minor
            && inode.parse::<u64>().ok()? == ino;
        (same && pid != std::process::id()).then_some(pid)
    })
}

/// The workspace with its commit lock held. The batch protocol and recovery take it as
/// their first argument, so no code path reaches them without the lock (as jj mutates a
/// working copy only through its locked handle). Dereferences to the workspace;
/// releases the lock on drop.
pub(crate) struct Locked<'a> {
    ws: &'a Ws,
    _lock: CommitLock,
}

impl<'a> Locked<'a> {
    /// Take `ws`'s commit lock, waiting up to `timeout` ([`CommitLock::acquire`]).
    pub fn acquire(ws: &'a Ws, timeout: Duration) -> Result<Locked<'a>> {
        ws.writable()?;
        let lock = CommitLock::acquire(ws.state_dir(), &ws.lock_path, &ws.root, timeout)?;
        Ok(Locked { ws, _lock: lock })
    }

    /// Give up the borrow of the workspace and keep the lock: the batch's completion
    /// takes it to its own thread ([`Locked::resume`]) and releases it when the
    /// completion is durable (docs/commit-protocol.md, steps 6–7).
    pub fn into_lock(self) -> CommitLock {
        self._lock
    }

    /// The lock `lock` (held since [`Locked::into_lock`]) on `ws` again.
    pub fn resume(ws: &'a Ws, lock: CommitLock) -> Locked<'a> {
        Locked { ws, _lock: lock }
    }

    /// Take it only if it is free now: `None` while another process holds it.
    pub fn try_acquire(ws: &'a Ws) -> Result<Option<Locked<'a>>> {
        ws.writable()?;
        Ok(
            CommitLock::try_acquire(ws.state_dir(), &ws.lock_path, &ws.root)?
                .map(|lock| Locked { ws, _lock: lock }),
        )
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = Ws;
    fn deref(&self) -> &Ws {
        self.ws
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holder_of_a_flock_is_read_from_the_kernels_table() {
        // Lines as proc(5) shows them: a granted lock, a waiter on it, a POSIX lock,
        // and a lock on the same inode number of another device.
        let table = "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 77 fd:01:1234 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 99 fd:01:555 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 31 08:02:1234 0 EOF\n";
        let fd01 = rustix::fs::makedev(0xfd, 0x01);
        assert_eq!(holder_in(table, fd01, 1234), Some(4242));
        assert_eq!(holder_in(table, rustix::fs::makedev(8, 2), 1234), Some(31));
        assert_eq!(
            holder_in(table, fd01, 555),
            None,
            "a POSIX lock is not a flock"
        );
        assert_eq!(holder_in(table, fd01, 9), None);
    }
}
