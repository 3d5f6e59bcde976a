//! Running one command in a private mount namespace where the workspace root is an
//! overlayfs: lower = the real root, upper and work directories in the state directory
//! ([`super::layers::Layers`]), mounted at the root's own absolute path.
//!
//! The child is made by `std::process::Command` with a `pre_exec` hook, which runs after
//! `fork` in a process that may have had other threads: it makes only system calls
//! (no allocation, no locks), on data prepared before the fork. As root it unshares the
//! mount namespace alone; as another user it unshares a user namespace too, maps its
//! own uid and gid to themselves and mounts with `userxattr` (Linux ≥ 5.11). Then it
//! makes every mount private (so nothing propagates out), mounts the overlay, enters the
//! working directory again (to see it through the overlay), applies a prelude of file
//! writes and deletions (a candidate the command must see, src/sandbox/check.rs), and
//! execs `sh -c CMD`. It asks to be killed with its parent (`PR_SET_PDEATHSIG`), and
//! where the kernel allows it unshares a PID namespace too, whose first process is a
//! minimal init that runs the command as its child ([`enter_pid_namespace`]): whatever
//! the command leaves behind dies with the init.

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, SandboxError};

/// Bytes of output kept ([`Outcome::tail`]): the last 64 KiB.
pub const TAIL_BYTES: usize = 64 * 1024;

/// One step of the prelude applied inside the overlay before the command runs.
pub(crate) enum PreludeOp {
    /// Create a directory (an existing one is no error).
    Mkdir(CString),
    /// Write a file with exactly these bytes and permission bits.
    Write(CString, Vec<u8>, u32),
    /// Delete a file (a missing one is no error).
    Delete(CString),
}

/// Where the output of the command goes besides its kept tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passthrough {
    /// Kept only (the library's default; an MCP server's stdout is its protocol).
    None,
    /// Its stdout to this process's stdout and its stderr to stderr (the CLI).
    Both,
    /// Both to this process's stderr (the CLI under `--json`).
    Stderr,
}

/// What to run.
pub(crate) struct Spec<'a> {
    pub root: &'a Path,
    pub cwd: &'a Path,
    pub command: &'a str,
    pub prelude: Vec<PreludeOp>,
    pub timeout: Duration,
    pub passthrough: Passthrough,
    pub interrupt: Option<&'a crate::Interrupt>,
}

/// How the command ended.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub status: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub tail: String,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// The step of the child's setup that failed, encoded in the error code the child
/// reports (`step * STEP + errno`): `std` passes only an `i32` back from `pre_exec`.
const STEP: i32 = 100_000;
const STEP_UNSHARE: i32 = 1;
const STEP_MAPS: i32 = 2;
const STEP_PRIVATE: i32 = 3;
const STEP_MOUNT: i32 = 4;
const STEP_CHDIR: i32 = 5;
const STEP_PRELUDE: i32 = 6;
const STEP_FORK: i32 = 8;

/// An option value of the overlay's mount data: `\`, `,` and `:` escaped.
fn escape(p: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in p.as_os_str().as_bytes() {
        if matches!(b, b'\\' | b',' | b':') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

fn cstring(bytes: Vec<u8>, what: &str) -> Result<CString, Error> {
    CString::new(bytes).map_err(|_| {
        SandboxError::Unavailable {
            cause: format!("{what} contains a NUL byte"),
            setting: "Use a path without NUL bytes.".into(),
        }
        .into()
    })
}

/// The overlay's mount data for this user.
fn mount_data(root: &Path, upper: &Path, work: &Path, as_root: bool) -> Vec<u8> {
    let mut d = b"lowerdir=".to_vec();
    d.extend(escape(root));
    d.extend(b",upperdir=");
    d.extend(escape(upper));
    d.extend(b",workdir=");
    d.extend(escape(work));
    if as_root {
        // Data copied up whole, renamed directories copied too: the upper directory
        // then holds every changed byte, and no redirect or metacopy xattr to follow.
        d.extend(b",redirect_dir=off,metacopy=off,index=off");
    } else {
        d.extend(b",userxattr");
    }
    // No sync of the upper layer's filesystem when the overlay goes (Linux ≥ 5.10): the
    // upper directory is read right after, through the page cache, and then removed,
    // so a `syncfs` of the whole state directory's filesystem would buy nothing.
    d.extend(b",volatile");
    d
}

/// Decode the child's setup error into [`SandboxError::Unavailable`].
fn unavailable(code: i32, as_root: bool) -> SandboxError {
    let step = code / STEP;
    let errno = rustix::io::Errno::from_raw_os_error(code % STEP);
    let (what, setting) = match step {
        STEP_UNSHARE if as_root => (
            "unshare(CLONE_NEWNS)",
            "Run it where this process may create a mount namespace (a container needs CAP_SYS_ADMIN, e.g. `--cap-add SYS_ADMIN`, or a seccomp profile that allows unshare).",
        ),
        STEP_UNSHARE => (
            "unshare(CLONE_NEWUSER | CLONE_NEWNS)",
            "Allow unprivileged user namespaces: `sysctl -w kernel.unprivileged_userns_clone=1` (Debian kernels), `sysctl -w user.max_user_namespaces=15000`, or on Ubuntu ≥ 23.10 `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; or run as root.",
        ),
        STEP_MAPS => (
            "writing /proc/self/uid_map and gid_map",
            "Allow unprivileged user namespaces to map their own uid (a kernel or LSM setting refused it); or run as root.",
        ),
        STEP_PRIVATE => (
            "making the mounts private (mount --make-rprivate /)",
            "Run it where this process may change mount propagation in its own mount namespace.",
        ),
        STEP_MOUNT if as_root => (
            "mounting the overlay",
            "Load overlayfs (`modprobe overlay`, kernel option CONFIG_OVERLAY_FS), and keep the state directory on a filesystem an overlay's upper directory may use (ext4, xfs, btrfs, tmpfs; not NFS or another overlay).",
        ),
        STEP_MOUNT => (
            "mounting the overlay in a user namespace",
            "Use Linux ≥ 5.11 with overlayfs (unprivileged overlay mounts with `userxattr`), and keep the state directory on a filesystem that stores user.* extended attributes (ext4, xfs, btrfs, tmpfs ≥ 6.6); or run as root.",
        ),
        STEP_CHDIR => (
            "entering the working directory through the overlay",
            "Run it from a directory that exists.",
        ),
        STEP_PRELUDE => (
            "writing the candidate into the overlay",
            "Check that the state directory's filesystem has space.",
        ),
        STEP_FORK => (
            "starting the command's PID namespace (fork)",
            "Raise the process limit (`ulimit -u`, `kernel.pid_max`, the cgroup's pids.max).",
        ),
        _ => (
            "starting the command",
            "Check that /bin/sh exists and can be run.",
        ),
    };
    SandboxError::Unavailable {
        cause: format!("{what}: {errno}"),
        setting: setting.into(),
    }
}

/// Run `spec` on an overlay whose upper and work directories are `upper` and `work`.
/// Returns when the command exits, its timeout passes (then its process group is
/// killed: [`SandboxError::TimedOut`]) or `spec.interrupt` is requested
/// ([`SandboxError::Interrupted`]). Errors: [`SandboxError::Unavailable`] when the
/// namespace or the overlay cannot be set up (the command was not run).
pub(crate) fn run(spec: Spec<'_>, upper: &Path, work: &Path) -> Result<Outcome, Error> {
    let as_root = rustix::process::geteuid().is_root();
    let uid = rustix::process::geteuid().as_raw();
    let gid = rustix::process::getegid().as_raw();
    let root_c = cstring(spec.root.as_os_str().as_bytes().to_vec(), "the root")?;
    let cwd_c = cstring(
        spec.cwd.as_os_str().as_bytes().to_vec(),
        "the working directory",
    )?;
    let data = cstring(
        mount_data(spec.root, upper, work, as_root),
        "a layer's path",
    )?;
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    let prelude = spec.prelude;

    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(spec.command)
        .current_dir(spec.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook makes system calls only (rustix wrappers over raw syscalls),
    // on buffers made before the fork; it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            child_setup(
                as_root, &root_c, &cwd_c, &data, &uid_map, &gid_map, &prelude,
            )
            .map_err(|(step, e)| std::io::Error::from_raw_os_error(step * STEP + e.raw_os_error()))
        });
    }
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = e.raw_os_error().unwrap_or(0);
            return Err(if code >= STEP {
                unavailable(code, as_root).into()
            } else {
                SandboxError::Unavailable {
                    cause: format!("starting /bin/sh: {e}"),
                    setting: "Check that /bin/sh exists and can be run.".into(),
                }
                .into()
            });
        }
    };
    let tail = Arc::new(Mutex::new(std::collections::VecDeque::<u8>::new()));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(reader(out, tail.clone(), spec.passthrough, false));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(reader(err, tail.clone(), spec.passthrough, true));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32);
    let kill_group = || {
        if let Some(pid) = pid {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    };
    // Woken when the command exits (a pidfd), not by polling on a timer: the timer's
    // backoff (up to 10 ms) was latency added to every run. Without a pidfd (Linux
    // < 5.3), the timer as before.
    let exited = child_pidfd(child.id());
    let mut pause = Duration::from_micros(200);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                kill_group();
                return Err(crate::error::IoError {
                    op: "waitpid",
                    path: spec.root.to_path_buf(),
                    source: e,
                }
                .into());
            }
        }
        let timed_out = started.elapsed() > spec.timeout;
        let interrupted = spec.interrupt.is_some_and(|i| i.requested());
        if timed_out || interrupted {
            kill_group();
            let _ = child.wait();
            let tail_now = tail_string(&tail, &mut readers);
            return Err(if interrupted {
                SandboxError::Interrupted {
                    command: spec.command.to_string(),
                }
            } else {
                SandboxError::TimedOut {
                    command: spec.command.to_string(),
                    timeout_ms: spec.timeout.as_millis() as u64,
                    output_tail: tail_now,
                }
            }
            .into());
        }
        match &exited {
            Some(fd) => {
                let left = spec.timeout.saturating_sub(started.elapsed());
                wait_readable(fd, left.min(INTERRUPT_POLL));
            }
            None => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(10));
            }
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    // The group may have members left (a command that started a background job):
    // they run on in the overlay's namespace, which only they keep alive now. Kill
    // them, so that the upper directory stops changing before it is read.
    kill_group();
    Ok(Outcome {
        status: status.code(),
        signal: status.signal(),
        duration_ms,
        tail: tail_string(&tail, &mut readers),
    })
}

/// How often a wait on the command wakes to look at the interrupt (a signal usually
/// wakes it at once, unless it lands on another thread): 20 ms.
const INTERRUPT_POLL: Duration = Duration::from_millis(20);

/// A pidfd of the child `pid` (`pidfd_open`, Linux ≥ 5.3): readable once it exits.
/// `None` where the kernel has none.
fn child_pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: a system call on a child of this process that has not been reaped (it
    // is reaped only by the wait loop that owns the fd); the returned descriptor is
    // owned from here on.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Block until `fd` is readable (the child exited), a signal arrives, or `max`
/// passes, whichever is first.
fn wait_readable(fd: &std::os::fd::OwnedFd, max: Duration) {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = max.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd on the stack for the duration of the call.
    unsafe { libc::poll(&mut p, 1, ms) };
}

/// The kept tail as text, after the readers finished (or 1 s passed: a process that
/// left the group may hold the pipe open).
fn tail_string(
    tail: &Mutex<std::collections::VecDeque<u8>>,
    readers: &mut Vec<std::thread::JoinHandle<()>>,
) -> String {
    let until = Instant::now() + Duration::from_secs(1);
    while readers.iter().any(|r| !r.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    for r in readers.drain(..) {
        if r.is_finished() {
            let _ = r.join();
        }
    }
    let bytes: Vec<u8> = match tail.lock() {
        Ok(t) => t.iter().copied().collect(),
        Err(p) => p.into_inner().iter().copied().collect(),
    };
    String::from_utf8_lossy(&bytes).into_owned()
}

fn reader(
    mut from: impl Read + Send + 'static,
    tail: Arc<Mutex<std::collections::VecDeque<u8>>>,
    passthrough: Passthrough,
    is_stderr: bool,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            let chunk = &buf[..n];
            {
                use std::io::Write;
                match (passthrough, is_stderr) {
                    (Passthrough::None, _) => {}
                    (Passthrough::Both, false) => {
                        let mut o = std::io::stdout().lock();
                        let _ = o.write_all(chunk);
                        let _ = o.flush();
                    }
                    _ => {
                        let _ = std::io::stderr().lock().write_all(chunk);
                    }
                }
            }
            let mut t = match tail.lock() {
                Ok(t) => t,
                Err(p) => p.into_inner(),
            };
            t.extend(chunk);
            let excess = t.len().saturating_sub(TAIL_BYTES);
            t.drain(..excess);
        }
    })
}

type StepResult = Result<(), (i32, rustix::io::Errno)>;

/// The child's setup between fork and exec: system calls only (see the module docs).
fn child_setup(
    as_root: bool,
    root: &CString,
    cwd: &CString,
    data: &CString,
    uid_map: &[u8],
    gid_map: &[u8],
    prelude: &[PreludeOp],
) -> StepResult {
    use rustix::fs::{Mode, OFlags};
    use rustix::thread::UnshareFlags;
    let at = |step: i32| move |e: rustix::io::Errno| (step, e);
    let base = if as_root {
        UnshareFlags::NEWNS
    } else {
        UnshareFlags::NEWUSER | UnshareFlags::NEWNS
    };
    // A PID namespace too where the kernel allows it: its first process (made by the
    // fork below) runs the command, and when that one ends, or is killed, the kernel
    // kills every process left in the namespace — background jobs and `setsid`
    // escapees included. Where it is refused, the command runs without one (its
    // process group is still killed at the end).
    // SAFETY: new namespaces for this single-threaded child only (CLONE_NEWUSER
    // requires a single thread, which a child between fork and exec is).
    let with_pid_ns = match unsafe { rustix::thread::unshare_unsafe(base | UnshareFlags::NEWPID) } {
        Ok(()) => true,
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::PERM | rustix::io::Errno::NOSPC) => {
            // SAFETY: as above.
            unsafe { rustix::thread::unshare_unsafe(base) }.map_err(at(STEP_UNSHARE))?;
            false
        }
        Err(e) => return Err((STEP_UNSHARE, e)),
    };
    // Killed when the process that started it dies (`PR_SET_PDEATHSIG`), from here on.
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
        .map_err(at(7))?;
    if !as_root {
        let write_file = |path: &std::ffi::CStr, bytes: &[u8]| -> Result<(), rustix::io::Errno> {
            let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
            rustix::io::write(&fd, bytes)?;
            Ok(())
        };
        write_file(c"/proc/self/setgroups", b"deny").map_err(at(STEP_MAPS))?;
        write_file(c"/proc/self/uid_map", uid_map).map_err(at(STEP_MAPS))?;
        write_file(c"/proc/self/gid_map", gid_map).map_err(at(STEP_MAPS))?;
    }
    if with_pid_ns {
        enter_pid_namespace()?;
    }
    rustix::mount::mount_change(
        c"/",
        rustix::mount::MountPropagationFlags::REC | rustix::mount::MountPropagationFlags::PRIVATE,
    )
    .map_err(at(STEP_PRIVATE))?;
    rustix::mount::mount(
        c"overlay",
        root.as_c_str(),
        c"overlay",
        rustix::mount::MountFlags::empty(),
        data.as_c_str(),
    )
    .map_err(at(STEP_MOUNT))?;
    rustix::process::chdir(cwd.as_c_str()).map_err(at(STEP_CHDIR))?;
    for op in prelude {
        match op {
            PreludeOp::Mkdir(p) => {
                match rustix::fs::mkdir(p.as_c_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err((STEP_PRELUDE, e)),
                }
            }
            PreludeOp::Delete(p) => match rustix::fs::unlink(p.as_c_str()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err((STEP_PRELUDE, e)),
            },
            PreludeOp::Write(p, bytes, mode) => {
                let fd = rustix::fs::open(
                    p.as_c_str(),
                    OFlags::WRONLY
                        | OFlags::CREATE
                        | OFlags::TRUNC
                        | OFlags::CLOEXEC
                        | OFlags::NOFOLLOW,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(at(STEP_PRELUDE))?;
                let mut rest: &[u8] = bytes;
                while !rest.is_empty() {
                    match rustix::io::write(&fd, rest) {
                        Ok(0) => return Err((STEP_PRELUDE, rustix::io::Errno::IO)),
                        Ok(n) => rest = &rest[n..],
                        Err(rustix::io::Errno::INTR) => {}
                        Err(e) => return Err((STEP_PRELUDE, e)),
                    }
                }
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(*mode)).map_err(at(STEP_PRELUDE))?;
            }
        }
    }
    Ok(())
}

/// After `unshare(CLONE_NEWPID)`: fork the namespace's first process, its init, which
/// forks again the process that returns to run the rest of the setup and exec the
/// command. The command is not the namespace's first process because the kernel
/// delivers a signal to that one from inside its namespace only if it has a handler:
/// `sh -c 'kill -TERM $$'` as PID 1 would survive its own signal and run on.
///
/// This process stays outside the namespace as the init's parent: it closes every
/// descriptor but standard input, output and error and the read end of a status pipe
/// (`std`'s error pipe among them, so that the spawn returns once the command is
/// exec'd), waits for the init, and ends as the command ended — its exit status, or the
/// same signal — which the init reports through the pipe as the raw wait status (4
/// bytes). When the pipe says nothing (the init was killed), it ends as the init did.
/// Killed with its parent (`PR_SET_PDEATHSIG`, set before), it takes the init with it,
/// and with the init the whole namespace. System calls only, as the rest of the setup.
fn enter_pid_namespace() -> StepResult {
    let errno = || {
        rustix::io::Errno::from_io_error(&std::io::Error::last_os_error())
            .unwrap_or(rustix::io::Errno::AGAIN)
    };
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: a system call filling a local array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err((STEP_FORK, errno()));
    }
    let [read_end, write_end] = fds;
    // SAFETY: fork in a single-threaded child between fork and exec; both sides go on
    // with system calls only.
    let init = unsafe { libc::fork() };
    if init < 0 {
        return Err((STEP_FORK, errno()));
    }
    if init == 0 {
        // The namespace's first process; its parent is the process above.
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
            .map_err(|e| (7, e))?;
        // SAFETY: closing this process's own descriptor.
        unsafe { libc::close(read_end) };
        // SAFETY: as above.
        let command = unsafe { libc::fork() };
        if command < 0 {
            return Err((STEP_FORK, errno()));
        }
        if command == 0 {
            // The command's process (PID 2), killed with the init.
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(|e| (7, e))?;
            // SAFETY: closing this process's own descriptor.
            unsafe { libc::close(write_end) };
            return Ok(());
        }
        // SAFETY: the init's system calls on its own descriptors and children; it never
        // returns to the caller.
        unsafe { run_init(command, write_end) }
    }
    // SAFETY: system calls on this process's own descriptors, children and signals;
    // none of them returns to the caller.
    unsafe {
        libc::close(write_end);
        close_all_but(read_end);
        let mut status: libc::c_int = 0;
        loop {
            let r = libc::waitpid(init, &mut status, 0);
            if r == init {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        let mut reported = [0u8; 4];
        let mut got = 0usize;
        while got < reported.len() {
            let n = libc::read(
                read_end,
                reported[got..].as_mut_ptr().cast(),
                reported.len() - got,
            );
            if n > 0 {
                got += n as usize;
            } else if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            } else {
                break;
            }
        }
        if got == reported.len() {
            status = libc::c_int::from_ne_bytes(reported);
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = if libc::WIFSIGNALED(status) {
            libc::WTERMSIG(status)
        } else {
            libc::SIGKILL
        };
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}

/// The namespace's init: closes every descriptor but `report` (so that it holds none of
/// the command's output pipes, nor `std`'s error pipe), reaps every process left to it
/// until `command` ends, writes `command`'s raw wait status (4 bytes, native order) to
/// `report`, and exits — which makes the kernel kill whatever is left in the namespace.
///
/// # Safety
/// Only in the namespace's first process, between fork and exec (system calls only).
unsafe fn run_init(command: libc::pid_t, report: libc::c_int) -> ! {
    unsafe {
        for fd in 0..3 {
            libc::close(fd);
        }
        close_all_but(report);
        let mut status: libc::c_int = 0;
        loop {
            let r = libc::waitpid(-1, &mut status, 0);
            if r == command {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        let bytes = status.to_ne_bytes();
        let _ = libc::write(report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(0)
    }
}

/// Closes every descriptor from 3 up except `keep` (`close_range`, or one by one below
/// 4096 where the kernel lacks it).
///
/// # Safety
/// Between fork and exec only: it closes descriptors other code may think it owns.
unsafe fn close_all_but(keep: libc::c_int) {
    let keep = keep as u32;
    let close = |from: u32, to: u32| unsafe {
        if from <= to && libc::syscall(libc::SYS_close_range, from, to, 0u32) != 0 {
            for fd in from..=to.min(4095) {
                libc::close(fd as libc::c_int);
            }
        }
    };
    if keep >= 3 {
        close(3, keep - 1);
        close(keep + 1, u32::MAX);
    } else {
        close(3, u32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_failure_names_its_cause_and_the_setting_that_allows_it() {
        let e = unavailable(STEP_UNSHARE * STEP + 1, false);
        assert_eq!(e.kind(), "sandbox_unavailable");
        let SandboxError::Unavailable { cause, setting } = e else {
            panic!()
        };
        assert!(
            cause.starts_with("unshare(CLONE_NEWUSER | CLONE_NEWNS): "),
            "{cause}"
        );
        assert!(
            setting.contains("kernel.unprivileged_userns_clone=1"),
            "{setting}"
        );
        let SandboxError::Unavailable { cause, setting } =
            unavailable(STEP_MOUNT * STEP + 19, true)
        else {
            panic!()
        };
        assert!(cause.starts_with("mounting the overlay: "), "{cause}");
        assert!(setting.contains("modprobe overlay"), "{setting}");
    }

    #[test]
    fn layer_paths_are_escaped_in_the_mount_data() {
        let d = mount_data(Path::new("/a,b:c"), Path::new("/u"), Path::new("/w"), false);
        assert_eq!(
            d,
            b"lowerdir=/a\\,b\\:c,upperdir=/u,workdir=/w,userxattr,volatile"
        );
    }
}
