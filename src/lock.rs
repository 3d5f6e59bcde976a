//! The workspace commit lock: one batch at a time per workspace (docs/commit-protocol.md, step 1).
//!
//! An exclusive `flock(2)` (through `fs2`) on `<root>/.ultra-edit/commit.lock`. The
//! kernel releases it when the holder's file descriptor closes, so a holder that dies
//! never blocks anyone. The holder writes its pid into the file so a waiter that times
//! out can name it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
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
    file: File,
}

impl CommitLock {
    /// Take the lock at `path`, waiting up to `timeout`.
    ///
    /// Errors: [`Error::LockTimeout`] with the holder's pid when it could be read; an I/O
    /// error if the lock file cannot be opened.
    pub fn acquire(path: &Path, timeout: Duration) -> Result<CommitLock> {
        let start = Instant::now();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .ctx("open", path)?;
        loop {
            match file.try_lock_exclusive() {
                Ok(()) => break,
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
                return Err(Error::LockTimeout {
                    path: PathBuf::from(path),
                    waited_ms: start.elapsed().as_millis() as u64,
                    holder: read_pid(path),
                });
            }
            std::thread::sleep(Duration::from_millis(POLL_MS));
        }
        let mut lock = CommitLock { file };
        lock.write_pid();
        Ok(lock)
    }

    /// Try once, without waiting: `None` when another holder has it.
    pub fn try_acquire(path: &Path) -> Result<Option<CommitLock>> {
        match Self::acquire(path, Duration::ZERO) {
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
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = FileExt::unlock(&self.file);
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
        let lock = CommitLock::acquire(&ws.lock_path, timeout)?;
        Ok(Locked { ws, _lock: lock })
    }

    /// Take it only if it is free now: `None` while another process holds it.
    pub fn try_acquire(ws: &'a Ws) -> Result<Option<Locked<'a>>> {
        Ok(CommitLock::try_acquire(&ws.lock_path)?.map(|lock| Locked { ws, _lock: lock }))
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = Ws;
    fn deref(&self) -> &Ws {
        self.ws
    }
}
