//! Freeing the inodes a batch's install held (docs/commit-protocol.md, step 5): on
//! ext4 the last close of a replaced file truncates and frees its inode, ≈ 150 µs of
//! kernel work each on this project's bench VM, which runs 1.6–2× faster on the
//! bounded pool's threads than on one (docs/benchmarks.md, "Per-file cost at 10,000
//! files").

use std::os::fd::OwnedFd;
use std::sync::Mutex;
use std::thread::{Scope, ScopedJoinHandle};

use crate::batch::pool;

/// Close every descriptor of `fds` on the bounded pool ([`pool::for_each`]); on the
/// calling thread alone when no thread can be started. Returns when all are closed.
pub(crate) fn free(fds: Vec<OwnedFd>) {
    if fds.len() <= 1 {
        drop(fds);
        return;
    }
    let slots: Vec<Mutex<Option<OwnedFd>>> = fds.into_iter().map(|f| Mutex::new(Some(f))).collect();
    let _ = pool::for_each(&slots, |_, slot| {
        let fd = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(fd);
        Ok::<(), std::convert::Infallible>(())
    });
}

/// Held descriptors handed off in batches during an install, freed ([`free`]) on a
/// scoped thread while the renames go on. At most one batch is being freed at a time:
/// [`Releaser::hand_off`] waits for the one before, so the descriptors open at once
/// stay within the hold's bound (`protocol::hold_max`).
pub(crate) struct Releaser<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    busy: Option<ScopedJoinHandle<'scope, ()>>,
}

impl<'scope, 'env> Releaser<'scope, 'env> {
    /// A releaser whose threads end with `scope`.
    pub(crate) fn new(scope: &'scope Scope<'scope, 'env>) -> Self {
        Releaser { scope, busy: None }
    }

    /// Free `fds` on a thread of the scope, after the batch handed off before is freed;
    /// on the calling thread when no thread can be started. Nothing for an empty `fds`.
    pub(crate) fn hand_off(&mut self, fds: Vec<OwnedFd>) {
        if fds.is_empty() {
            // No thread for nothing (a batch of fewer files than the kept holds).
            return;
        }
        self.wait();
        let spawned = std::thread::Builder::new()
            .name("ue-release".into())
            .spawn_scoped(self.scope, move || free(fds));
        // A thread that cannot be started (a process or cgroup thread limit) is no
        // error: `spawn_scoped` dropped the closure, and with it the descriptors, on
        // this thread.
        self.busy = spawned.ok();
    }

    /// Wait until the batch handed off last is freed.
    pub(crate) fn wait(&mut self) {
        if let Some(h) = self.busy.take() {
            // `free` does not panic; a panic there would only leave descriptors for
            // the process's exit to close.
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;

    /// The files `fds` are open on, as `/proc/self/fd` names them.
    fn targets(fds: &[OwnedFd]) -> Vec<PathBuf> {
        fds.iter()
            .map(|f| std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd())).unwrap())
            .collect()
    }

    /// How many of `paths` this process has a descriptor open on.
    fn still_open(paths: &[PathBuf]) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|t| paths.contains(t))
            .count()
    }

    #[test]
    fn free_and_hand_off_close_every_descriptor_they_are_given() {
        let dir = tempfile::tempdir().unwrap();
        let open = |n: usize, tag: &str| -> Vec<OwnedFd> {
            (0..n)
                .map(|i| {
                    let p = dir.path().join(format!("{tag}{i}"));
                    std::fs::write(&p, b"x").unwrap();
                    OwnedFd::from(std::fs::File::open(&p).unwrap())
                })
                .collect()
        };
        let a = open(40, "a");
        let in_a = targets(&a);
        assert_eq!(still_open(&in_a), 40);
        free(a);
        assert_eq!(still_open(&in_a), 0);
        let (b, c, d) = (open(30, "b"), open(1, "c"), open(5, "d"));
        let (in_b, in_c, in_d) = (targets(&b), targets(&c), targets(&d));
        assert_eq!(
            still_open(&in_b) + still_open(&in_c) + still_open(&in_d),
            36
        );
        std::thread::scope(|s| {
            let mut r = Releaser::new(s);
            r.hand_off(b);
            r.hand_off(c);
            // The first batch is freed before the second is handed off.
            assert_eq!(still_open(&in_b), 0);
            r.wait();
            assert_eq!(still_open(&in_c), 0);
            assert_eq!(still_open(&in_d), 5);
            r.hand_off(d);
            r.hand_off(Vec::new());
            assert!(
                r.busy.is_some(),
                "an empty hand-off leaves the batch before it"
            );
        });
        // The scope's end waits for the last batch.
        assert_eq!(still_open(&in_d), 0);
    }
}
