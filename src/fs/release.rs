//! Letting go of the inodes a batch held ([`super::FileSystem::hold`]) across its
//! renames: in place (the descriptors closed here, the default), or — for the CLI, with
//! a large file — by a detached child process, so that the process can print its
//! receipt and exit without waiting for the filesystem to free the replaced file's
//! blocks (docs/commit-protocol.md, step 7).
//!
//! Closing the last reference to an inode that has no name left makes the kernel free
//! it on the spot: on ext4 it truncates the file, ≈ 40-55 ms for a 106 MB file on the
//! bench VM (docs/benchmarks.md, "Where the time goes now"). A thread does not help a
//! process that is about to exit: the kernel closes its descriptors at exit, and the
//! parent's `wait` waits for that. A forked child holding the last references does the
//! free instead, after the parent has gone (git's `gc --auto` detaches likewise).
//! Nothing durable depends on the free: the batch has landed and its completion is
//! written before the release; a power cut before the free leaves the unlinked inode on
//! ext4's orphan list, which the next mount frees, as it always did.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Bytes held from which a detached release is worth a fork (bytes, summed over the
/// held inodes' `st_size`): 8 MiB, the project's large-file threshold (the size from
/// which a commit streams a file, `batch::image::STREAM_ABOVE`). Below it the free
/// costs less than the fork.
pub const DETACH_FROM: u64 = 8 << 20;

/// A detached release needs this many times the held bytes free on the filesystem of
/// every held inode (`statvfs`'s `f_bavail` × `f_frsize`): 4. On a fuller disk the
/// blocks are freed in place, so that they are free again when the command returns — the
/// next command (a rollback of the same file writes a temp of its size) may need them
/// at once.
pub const ROOM_FACTOR: u64 = 4;

/// How a commit or rollback lets go of the inodes it held ([`release`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Release {
    /// Hand the descriptors to the caller's in-place free ([`release`]'s `in_place`:
    /// the batch closes them on its pool) without asking anything of them (the
    /// library's default).
    #[default]
    InPlace,
    /// Hand large holds to a detached child process ([`release`] says when); small
    /// ones are closed in place. For a process that exits right after (the CLI): the
    /// child stays a zombie until this process exits, so a long-running host should
    /// not ask for it.
    Detached,
}

/// What [`release`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// Nothing was held.
    Nothing,
    /// The descriptors were closed in place: by the caller's `in_place`, or on the
    /// calling thread where a pipe or the fork for a detached release failed.
    InPlace,
    /// A child process (`pid`) holds the last references and closes them; nobody waits
    /// for it.
    Detached {
        /// The child's process id.
        pid: i32,
    },
}

/// Let go of `held` (the descriptors [`super::FileSystem::hold`] returned) as `how`
/// says. [`Release::Detached`] detaches only when the held inodes total at least
/// [`DETACH_FROM`] bytes and each one's filesystem has [`ROOM_FACTOR`] times that free
/// ([`worth_detaching`]), and the child can close its other descriptors cheaply
/// ([`closes_cheaply`]: `close_range(2)`, or at most [`CLOSE_LOOP_MAX`] to close one by
/// one); else, or when the fork fails, the descriptors are closed in place by
/// `in_place` (the batch closes them on its pool: `batch::release::free`). With
/// [`Release::InPlace`] nothing is asked of the held inodes: they go to `in_place`
/// directly. Never an error: this is only a matter of speed.
pub fn release(held: Vec<OwnedFd>, how: Release, in_place: impl FnOnce(Vec<OwnedFd>)) -> Released {
    if held.is_empty() {
        return Released::Nothing;
    }
    if how == Release::InPlace {
        in_place(held);
        return Released::InPlace;
    }
    let bytes = held_bytes(&held);
    let n = held.len();
    let done =
        if worth_detaching(bytes, room(&held)) && closes_cheaply(has_close_range(), open_limit()) {
            match release_detached(held) {
                Some(pid) => Released::Detached { pid },
                // No pipe or no fork: closed by `release_detached`, on this thread.
                None => Released::InPlace,
            }
        } else {
            in_place(held);
            Released::InPlace
        };
    observe(n, bytes, done);
    done
}

/// Whether `bytes` held deserve a detached release when the held inodes' filesystems
/// have `room` bytes free (the least of them; `None`: unknown): at least
/// [`DETACH_FROM`] bytes, and [`ROOM_FACTOR`] times them free.
pub fn worth_detaching(bytes: u64, room: Option<u64>) -> bool {
    bytes >= DETACH_FROM && room.is_some_and(|r| r / ROOM_FACTOR >= bytes)
}

/// Descriptor numbers from which a child without `close_range(2)` costs more than it
/// saves: 2^14. Such a child closes every number below the soft `RLIMIT_NOFILE` one by
/// one ([`close_between`]), ≈ 0.2 µs each (≈ 200 ms for a container's common 2^20,
/// measured here), and the parent waits for that before it returns — longer than the
/// free it would spare (≈ 45 ms for 100 MB on ext4).
pub const CLOSE_LOOP_MAX: u32 = 1 << 14;

/// Whether the child's descriptor sweep is cheap: the kernel has `close_range(2)`
/// (`has_close_range`), or the descriptor limit (`limit`, numbers) is at most
/// [`CLOSE_LOOP_MAX`].
pub fn closes_cheaply(has_close_range: bool, limit: libc::c_uint) -> bool {
    has_close_range || limit <= CLOSE_LOOP_MAX
}

/// Whether `close_range(2)` works here (Linux 5.9 and later, unless a seccomp filter
/// refuses it): asked with the range `u32::MAX..=u32::MAX`, which no descriptor can be
/// in, so nothing is closed.
fn has_close_range() -> bool {
    // SAFETY: closes nothing: no descriptor has the number u32::MAX.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::MAX,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        ) == 0
    }
}

/// The held inodes' sizes (`st_size` by `fstat`, bytes), summed; one that cannot be
/// stated counts 0.
fn held_bytes(held: &[OwnedFd]) -> u64 {
    held.iter()
        .filter_map(|fd| rustix::fs::fstat(fd).ok())
        .map(|st| u64::try_from(st.st_size).unwrap_or(0))
        .fold(0, u64::saturating_add)
}

/// The least space free to this process (bytes) on the filesystems of the held inodes
/// (`fstatvfs` of each descriptor); `None` when one cannot be asked.
fn room(held: &[OwnedFd]) -> Option<u64> {
    held.iter()
        .map(|fd| {
            rustix::fs::fstatvfs(fd)
                .ok()
                .map(|st| st.f_bavail.saturating_mul(st.f_frsize))
        })
        .try_fold(u64::MAX, |least, r| r.map(|r| least.min(r)))
}

/// Close `held` in a detached child process and return its pid, having closed this
/// process's copies first (cheap: the child still holds the inodes, so its `close` is
/// the last reference's, the one that frees). The parent does not wait for the child's
/// exit, only until the child has closed every other descriptor it inherited: from then
/// on the child holds no lock, journal file or stdout of this process, so a reader of
/// this process's stdout sees EOF when it exits and the next command finds the locks
/// free. Two pipes order the two processes: the child closes the write end of `done`
/// after the others, the parent reads EOF there, closes its copies of `held`, then the
/// write end of `go`, and the child, reading EOF on `go`, closes `held` and exits. The
/// child has every signal blocked and makes only system calls (`close_range`, or
/// `close` one by one before Linux 5.9; `read`; `close`; `_exit`): safe after a `fork`
/// in a process with other threads. It exits 0, or 1 when closing a held descriptor
/// failed. `None` (the descriptors closed here) when a pipe or the fork cannot be
/// made, or nothing is held. The caller reaps the child or leaves it to this process's
/// exit.
pub fn release_detached(held: Vec<OwnedFd>) -> Option<i32> {
    detach(held, None)
}

/// How long [`detach`] waits at most for the child to close the descriptors it does not
/// keep (ms): 2,000. It takes tens of µs; the bound is for a write end another thread's
/// `fork` copied meanwhile, which keeps the pipe open for as long as that child runs.
const DONE_WAIT_MS: libc::c_int = 2_000;

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut ends: [libc::c_int; 2] = [-1, -1];
    // SAFETY: `ends` is a valid array of two ints; on success both are new descriptors
    // owned here.
    unsafe {
        if libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        Some((OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])))
    }
}

/// Read `fd` until EOF (or an error other than `EINTR`), discarding what comes.
/// System calls only (for [`child`] too).
fn wait_for_eof(fd: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into `byte`.
        let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        // SAFETY: reads this thread's errno.
        if n > 0 || (n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR) {
            continue;
        }
        return;
    }
}

/// [`release_detached`]; with `gate` (tests only) the child, once the parent has let go,
/// also waits for `gate` to read EOF before it closes the held descriptors, so a test
/// can look at it meanwhile.
fn detach(held: Vec<OwnedFd>, gate: Option<libc::c_int>) -> Option<i32> {
    if held.is_empty() {
        return None;
    }
    let (Some((done_read, done_write)), Some((go_read, go_write))) = (pipe(), pipe()) else {
        return None;
    };
    let fds: Vec<libc::c_int> = held.iter().map(|fd| fd.as_raw_fd()).collect();
    let waits = [go_read.as_raw_fd(), gate.unwrap_or(-1)];
    // Every descriptor the child keeps until it has closed the others, sorted.
    let mut keep: Vec<libc::c_uint> = fds.iter().map(|&fd| fd as libc::c_uint).collect();
    keep.push(done_write.as_raw_fd() as libc::c_uint);
    keep.extend(
        waits
            .iter()
            .filter(|&&w| w >= 0)
            .map(|&w| w as libc::c_uint),
    );
    keep.sort_unstable();
    let limit = open_limit();
    // SAFETY: plain system calls on valid arguments; after `fork` the child runs only
    // `child`, which makes system calls and `_exit`s (no allocation, no locks).
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let masked = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old) == 0;
        let pid = libc::fork();
        if pid == 0 {
            child(&keep, &fds, done_write.as_raw_fd(), &waits, limit);
        }
        if masked {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        }
        pid
    };
    drop(done_write);
    if pid > 0 {
        // EOF once the child has closed its copy of the write end, after every other
        // inherited descriptor (or has died). At most [`DONE_WAIT_MS`]: another thread's
        // fork may have taken a copy of the write end too, for as long as its child runs.
        let mut poll = libc::pollfd {
            fd: done_read.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut poll, 1, DONE_WAIT_MS) } == 1 {
            wait_for_eof(done_read.as_raw_fd());
        }
    }
    // This process's copies first, then the child may close the last references.
    drop(held);
    drop(go_write);
    (pid > 0).then_some(pid)
}

/// The detached child: close every inherited descriptor but `keep` (the held ones,
/// `done` and the read ends in `waits`), then `done` (the parent's wait ends), wait for
/// EOF on each of `waits` (`-1`: none) — the parent has closed its copies of the held
/// descriptors — then close the held ones (the kernel frees the inodes now), and exit.
/// System calls only.
///
/// # Safety
/// Only in the child of a `fork`; never returns.
unsafe fn child(
    keep: &[libc::c_uint],
    held: &[libc::c_int],
    done: libc::c_int,
    waits: &[libc::c_int],
    limit: libc::c_uint,
) -> ! {
    let mut from: libc::c_uint = 0;
    for &k in keep {
        if k > from {
            close_between(from, k - 1, limit);
        }
        from = k.saturating_add(1);
    }
    close_between(from, libc::c_uint::MAX, limit);
    libc::close(done);
    for &w in waits {
        if w >= 0 {
            wait_for_eof(w);
        }
    }
    let mut status = 0;
    for &fd in held {
        if libc::close(fd) != 0 {
            status = 1;
        }
    }
    libc::_exit(status)
}

/// Close the descriptors `first..=last`: `close_range(2)`, or where the kernel lacks it
/// (before 5.9) one `close` each up to `limit`. System calls only (for [`child`]).
unsafe fn close_between(first: libc::c_uint, last: libc::c_uint, limit: libc::c_uint) {
    if libc::syscall(libc::SYS_close_range, first, last, 0 as libc::c_uint) == 0 {
        return;
    }
    let mut fd = first;
    while fd <= last && fd < limit {
        libc::close(fd as libc::c_int);
        fd += 1;
    }
}

/// The highest descriptor number plus one this process may have open (the soft
/// `RLIMIT_NOFILE`, at most 2^20): where [`close_between`] stops without `close_range`.
fn open_limit() -> libc::c_uint {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    limit.map_or(1 << 20, |n| n.min(1 << 20) as libc::c_uint)
}

/// With the feature `failpoints` and `FAILPOINTS=fs::release=return`: one line on
/// stderr saying how the held inodes were released, for the CLI's tests (a detached
/// child is otherwise seen only by `strace`). Nothing otherwise.
fn observe(n: usize, bytes: u64, done: Released) {
    #[cfg(feature = "failpoints")]
    {
        let how = match done {
            Released::Nothing => return,
            Released::InPlace => "in place".to_string(),
            Released::Detached { pid } => format!("detached to process {pid}"),
        };
        fail::fail_point!("fs::release", |_| {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "ultra-edit: released {n} held inode(s) of {bytes} bytes {how}"
            );
        });
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = (n, bytes, done);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, IntoRawFd};

    /// Hold `path` as [`super::super::StdFs::hold`] does: `O_PATH`, no symlink followed.
    fn hold(path: &std::path::Path) -> OwnedFd {
        rustix::fs::open(
            path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap()
    }

    /// Wait for `pid` (at most 10 s: then it is killed and the test fails) and return
    /// its exit status (`None`: killed by a signal).
    fn exit_status(pid: i32) -> Option<i32> {
        let mut status = 0;
        for _ in 0..1000 {
            // SAFETY: polls this test's own child.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            }
            assert_eq!(r, 0, "waitpid: {}", std::io::Error::last_os_error());
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // SAFETY: kills and reaps this test's own child (its signals are blocked:
        // SIGKILL).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
        }
        panic!("the child {pid} did not exit within 10 s");
    }

    /// Whether descriptor number `fd` of this process still refers to the inode
    /// `(dev, ino)`: it is closed (`EBADF`), or the number was reused for another file
    /// by a test running meanwhile.
    fn still_refers_to(fd: libc::c_int, id: (u64, u64)) -> bool {
        // SAFETY: fstat into a zeroed stat; a closed descriptor gives EBADF.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EBADF)
            );
            return false;
        }
        (st.st_dev, st.st_ino) == id
    }

    /// Two unlinked files held `O_PATH`, released detached: a child process (not this
    /// one) took them, exits 0 (both closes succeeded), and this process's descriptors
    /// are closed.
    #[test]
    fn a_detached_release_closes_the_holds_in_a_child_that_exits_0() {
        let dir = tempfile::tempdir().unwrap();
        let mut held = Vec::new();
        let mut ids = Vec::new();
        for name in ["a.txt", "b.txt"] {
            let p = dir.path().join(name);
            std::fs::write(&p, vec![b'x'; 64 << 10]).unwrap();
            let fd = hold(&p);
            let st = rustix::fs::fstat(&fd).unwrap();
            ids.push((fd.as_raw_fd(), (st.st_dev, st.st_ino)));
            std::fs::remove_file(&p).unwrap();
            assert_eq!(rustix::fs::fstat(&fd).unwrap().st_nlink, 0);
            held.push(fd);
        }
        let pid = release_detached(held).expect("fork works here");
        assert!(pid > 0 && pid as u32 != std::process::id(), "{pid}");
        for (fd, id) in ids {
            assert!(!still_refers_to(fd, id), "fd {fd} still open");
        }
        assert_eq!(exit_status(pid), Some(0));
        // Nothing held: nothing forked.
        assert_eq!(release_detached(Vec::new()), None);
    }

    /// The inode number of a pipe end, as `/proc/<pid>/fd` names it: `pipe:[N]`.
    fn pipe_name(fd: &OwnedFd) -> String {
        format!("pipe:[{}]", rustix::fs::fstat(fd).unwrap().st_ino)
    }

    /// Once [`detach`] has returned — this process's copy of the held descriptor closed —
    /// the child (stopped at a test gate before its own closes) still holds the unlinked
    /// file, so its close is the one that frees it, and it has nothing else open but the
    /// pipes it waits on: a pipe this process had open (its write end inherited by the
    /// fork) reads EOF once this process closes its own copy — as a reader of the CLI's
    /// stdout sees EOF when the CLI exits. Let through, the child exits 0.
    #[test]
    fn the_child_keeps_only_the_held_descriptors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        std::fs::write(&p, b"held\n").unwrap();
        let fd = hold(&p);
        std::fs::remove_file(&p).unwrap();
        let (reader, writer) = pipe().unwrap();
        let (gate, opener) = pipe().unwrap();
        let pid = detach(vec![fd], Some(gate.as_raw_fd())).expect("fork works here");
        drop(writer);
        // Not readable (no EOF) while the child held its copy of `writer`: wait at most
        // 10 s for it, then read EOF.
        let mut poll = libc::pollfd {
            fd: reader.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut poll, 1, 10_000) }, 1, "no EOF");
        let mut buf = [0u8; 1];
        assert_eq!(rustix::io::read(reader.as_fd(), &mut buf).unwrap(), 0);
        let mut open: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .map(|e| {
                std::fs::read_link(e.unwrap().path())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        open.sort();
        // The held file, the test's gate, and `detach`'s own `go` pipe.
        assert_eq!(open.len(), 3, "{open:?}");
        assert!(
            open.contains(&format!("{} (deleted)", p.display())),
            "{open:?}"
        );
        assert!(open.contains(&pipe_name(&gate)), "{open:?}");
        assert!(!open.contains(&pipe_name(&reader)), "{open:?}");
        assert_eq!(open.iter().filter(|o| o.starts_with("pipe:[")).count(), 2);
        drop(opener);
        drop(gate);
        assert_eq!(exit_status(pid), Some(0));
    }

    /// The policy: [`DETACH_FROM`] bytes or more, with [`ROOM_FACTOR`] times them free;
    /// an unknown room never detaches.
    #[test]
    fn large_holds_detach_only_with_room_to_spare() {
        let big = DETACH_FROM;
        assert!(worth_detaching(big, Some(4 * big)));
        assert!(!worth_detaching(big, Some(4 * big - 1)));
        assert!(!worth_detaching(big - 1, Some(u64::MAX)));
        assert!(!worth_detaching(big, None));
        assert!(worth_detaching(100 << 20, Some(400 << 20)));
    }

    /// A child without `close_range(2)` is worth it only under [`CLOSE_LOOP_MAX`]
    /// descriptors; the probe closes nothing and agrees with a real `close_range` of
    /// an open descriptor.
    #[test]
    fn without_close_range_only_a_low_descriptor_limit_detaches() {
        assert!(closes_cheaply(true, 1 << 20));
        assert!(closes_cheaply(false, 1024));
        assert!(closes_cheaply(false, CLOSE_LOOP_MAX));
        assert!(!closes_cheaply(false, CLOSE_LOOP_MAX + 1));
        assert!(!closes_cheaply(false, 1 << 20));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let kept = hold(&p);
        let probed = has_close_range();
        assert!(
            rustix::fs::fstat(&kept).is_ok(),
            "the probe closed a descriptor"
        );
        let fd = hold(&p).into_raw_fd() as libc::c_uint;
        // SAFETY: closes only `fd`, this test's own descriptor.
        let real = unsafe { libc::syscall(libc::SYS_close_range, fd, fd, 0 as libc::c_uint) };
        if real != 0 {
            // SAFETY: still open: close it once.
            unsafe { libc::close(fd as libc::c_int) };
        }
        assert_eq!(probed, real == 0);
    }

    /// [`release`]: a small hold is closed in place even when detaching is asked; a
    /// large one (an 8 MiB file, sparse) goes to a child, which exits 0; in place when
    /// asked, and nothing when nothing is held.
    #[test]
    fn release_detaches_large_holds_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small");
        std::fs::write(&small, b"tiny\n").unwrap();
        let large = dir.path().join("large");
        std::fs::File::create(&large)
            .unwrap()
            .set_len(DETACH_FROM)
            .unwrap();
        let room = room(&[hold(&large)]).unwrap();
        // What the caller's in-place free was handed, descriptors counted.
        let handed = std::cell::Cell::new(0);
        let count = |h: Vec<OwnedFd>| handed.set(handed.get() + h.len());
        assert_eq!(
            release(vec![hold(&small)], Release::Detached, count),
            Released::InPlace
        );
        assert_eq!(handed.get(), 1);
        assert_eq!(
            release(vec![hold(&large), hold(&small)], Release::InPlace, count),
            Released::InPlace
        );
        assert_eq!(handed.get(), 3);
        assert_eq!(
            release(Vec::new(), Release::Detached, drop),
            Released::Nothing
        );
        let got = release(vec![hold(&small), hold(&large)], Release::Detached, drop);
        if room / ROOM_FACTOR < DETACH_FROM + 5 || !closes_cheaply(has_close_range(), open_limit())
        {
            // A nearly full disk where the test runs, or a kernel without close_range
            // and a high descriptor limit: in place.
            assert_eq!(got, Released::InPlace);
            return;
        }
        let Released::Detached { pid } = got else {
            panic!("{got:?}")
        };
        assert_eq!(exit_status(pid), Some(0));
    }
}
