//! [`Pending`]: the one background journal write a handle may have in flight — a
//! batch's completion, written after `commit`/`rollback` returned its receipt
//! (docs/commit-protocol.md, steps 6–7) — and the barrier every later access of the same
//! handle passes first, so the handle reads its own writes.
//!
//! The barrier sits in [`super::Store::read`] and [`super::Store::write`] (and the other
//! accesses of the store): whatever a verb reads or writes, it first waits for the
//! pending completion. The completion's own thread passes it (it is the write being
//! waited for). A completion that failed is kept with its tx and reported once, by
//! `Journal::flush` (the oldest failure) or `Journal::flush_tx` (that tx's): never as
//! the error of another call, which on a handle shared by several callers (an MCP
//! server's agents) would hand one caller's failure to another, whose own call did
//! not fail.

use std::cell::Cell;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;

use crate::error::{Error, JournalError, Result};

/// The name of the thread that writes a completion: tests tell its journal syncs from
/// those of the caller by it.
pub const COMPLETION_THREAD: &str = "ue-completion";

thread_local! {
    /// True on a completion's own thread, which the barrier lets through.
    static ON_COMPLETION_THREAD: Cell<bool> = const { Cell::new(false) };
    /// How many journal write transactions this thread is inside ([`in_write`]): a
    /// thread that holds redb's write lock must not wait for a completion, which needs
    /// that lock to finish.
    static WRITING: Cell<usize> = const { Cell::new(0) };
}

/// Run `f` (the body of a journal write transaction) marked as inside a write, for the
/// barrier: reads made inside it do not wait (the completion cannot commit before this
/// write ends, so they see the journal as the completion will find it).
pub(crate) fn in_write<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            WRITING.with(|w| w.set(w.get().saturating_sub(1)));
        }
    }
    WRITING.with(|w| w.set(w.get() + 1));
    let _leave = Leave;
    f()
}

/// The background write in flight, or the error of one that failed and was not yet
/// reported.
#[derive(Default)]
pub struct Pending {
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    /// The completion in flight, its tx, and where its result arrives.
    running: Option<(u64, mpsc::Receiver<Result<()>>)>,
    /// Completions that failed, oldest first, each with its tx, not yet reported.
    failed: Vec<(u64, Error)>,
    /// The handle's completion thread, started by its first completion and kept
    /// until the handle is dropped (a thread per commit cost a spawn each).
    worker: Option<Worker>,
}

/// A job for the completion thread: it runs the completion and sends its result.
type Job = Box<dyn FnOnce() + Send>;

/// The long-lived completion thread ([`COMPLETION_THREAD`]) and its queue.
struct Worker {
    jobs: mpsc::Sender<Job>,
    thread: JoinHandle<()>,
}

impl Slot {
    /// Wait for the completion in flight, if any, keeping its failure.
    fn join_running(&mut self) {
        if let Some((tx, running)) = self.running.take() {
            // No result: the thread died inside the job (a panic `guarded` missed).
            let result = running.recv().unwrap_or_else(|_| {
                Err(JournalError::Panicked {
                    message: "the background completion panicked".into(),
                }
                .into())
            });
            if let Err(e) = result {
                self.failed.push((tx, e));
            }
        }
    }

    /// Queue `job` on the completion thread, starting it if there is none (or it
    /// died); `Err(job)` when no thread can be started.
    fn send(&mut self, job: Job) -> std::result::Result<(), Job> {
        let job = match &self.worker {
            Some(w) => match w.jobs.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => {
                    // The thread is gone: reap it and start another.
                    if let Some(dead) = self.worker.take() {
                        let _ = dead.thread.join();
                    }
                    job
                }
            },
            None => job,
        };
        let (jobs, queue) = mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name(COMPLETION_THREAD.into())
            .spawn(move || {
                ON_COMPLETION_THREAD.with(|c| c.set(true));
                while let Ok(job) = queue.recv() {
                    job();
                }
            });
        match spawned {
            Ok(thread) => match jobs.send(job) {
                Ok(()) => {
                    self.worker = Some(Worker { jobs, thread });
                    Ok(())
                }
                Err(mpsc::SendError(job)) => Err(job),
            },
            Err(_) => Err(job),
        }
    }
}

impl Drop for Pending {
    /// Wait for the completion in flight (its error is dropped: the batch stays
    /// `committing` and the next recovery completes it), then end the completion
    /// thread: its queue closes and it returns.
    fn drop(&mut self) {
        let slot = self.slot.get_mut().unwrap_or_else(|p| p.into_inner());
        // On the completion thread itself the job in flight is the caller: no wait.
        if !ON_COMPLETION_THREAD.with(Cell::get) {
            slot.join_running();
        }
        if let Some(worker) = slot.worker.take() {
            drop(worker.jobs);
            // Never join from the thread itself (it would wait for itself).
            if worker.thread.thread().id() != std::thread::current().id() {
                let _ = worker.thread.join();
            }
        }
    }
}

impl Pending {
    /// Run `job`, the completion of a batch of `tx`, on the handle's completion
    /// thread ([`COMPLETION_THREAD`], started by the first completion and kept until
    /// the handle is dropped); every later access of the store waits for it. The
    /// caller has passed the barrier (nothing else is in flight). If no thread can be
    /// started, `job` runs here, before this returns.
    pub fn start(&self, tx: u64, job: impl FnOnce() -> Result<()> + Send + 'static) {
        let mut slot = self.lock();
        // Not reached through the verbs (they pass the barrier first); kept so that
        // two completions never overlap.
        slot.join_running();
        let (done, result) = mpsc::sync_channel(1);
        // `guarded` consumes `job`, so what it holds (the handle's state, the commit
        // lock) is released before the result is sent: a caller that drops the handle
        // once it has the result never leaves its last reference on the thread.
        let boxed: Job = Box::new(move || {
            let _ = done.send(crate::workspace::guarded(job));
        });
        match slot.send(boxed) {
            Ok(()) => slot.running = Some((tx, result)),
            Err(boxed) => {
                drop(slot);
                boxed();
                if let Ok(Err(e)) = result.try_recv() {
                    self.lock().failed.push((tx, e));
                }
            }
        }
    }

    /// Run `job` on this thread, as [`Pending::start`] would on its own: its error is
    /// kept for the next [`Pending::wait`]. For a caller that waits for the write right
    /// away anyway (the CLI): starting a thread only to join it costs tens of µs, and
    /// more on a loaded machine (docs/benchmarks.md, "The CLI process").
    pub fn run_here(&self, tx: u64, job: impl FnOnce() -> Result<()>) {
        self.wait();
        if let Err(e) = crate::workspace::guarded(job) {
            self.lock().failed.push((tx, e));
        }
    }

    /// The barrier: wait for the write in flight, if any. A failure of it is kept for
    /// [`Pending::take_failure`], not returned here. Immediate on the completion's own
    /// thread, and inside a journal write transaction ([`in_write`]).
    pub fn wait(&self) {
        if ON_COMPLETION_THREAD.with(Cell::get) || WRITING.with(Cell::get) > 0 {
            return;
        }
        self.lock().join_running();
    }

    /// [`Pending::wait`], then the error of a completion that failed and was not yet
    /// reported, which it forgets: the oldest (`tx` `None`), or the one of `tx`.
    pub fn take_failure(&self, tx: Option<u64>) -> Result<()> {
        self.wait();
        let mut slot = self.lock();
        let at = slot
            .failed
            .iter()
            .position(|(t, _)| tx.is_none_or(|want| *t == want));
        match at {
            Some(i) => Err(slot.failed.remove(i).1),
            None => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        // A panic while holding this lock cannot leave the slot inconsistent (every
        // update is one assignment): use it anyway.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread::ThreadId;

    /// Each completion's thread: its id and name.
    type Seen = Vec<(ThreadId, Option<String>)>;

    /// Completions of one handle run on one long-lived thread, named
    /// [`COMPLETION_THREAD`], not on the caller's; each failure (a panic too) is kept
    /// for its tx; dropping the handle's `Pending` ends the thread.
    #[test]
    fn completions_share_one_thread_keep_failures_and_drop_ends_it() {
        let pending = Pending::default();
        let seen: Arc<Mutex<Seen>> = Arc::default();
        for tx in 1..=4u64 {
            let seen = Arc::clone(&seen);
            pending.start(tx, move || {
                let me = std::thread::current();
                seen.lock()
                    .unwrap()
                    .push((me.id(), me.name().map(String::from)));
                match tx {
                    2 => Err(Error::UnknownTx { tx }),
                    3 => panic!("completion {tx} panicked"),
                    _ => Ok(()),
                }
            });
            pending.wait();
        }
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 4);
        assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
        assert_ne!(seen[0].0, std::thread::current().id());
        assert_eq!(seen[0].1.as_deref(), Some(COMPLETION_THREAD));
        assert!(matches!(
            pending.take_failure(None),
            Err(Error::UnknownTx { tx: 2 })
        ));
        match pending.take_failure(None) {
            Err(Error::Journal(JournalError::Panicked { message })) => {
                assert_eq!(message, "completion 3 panicked")
            }
            other => panic!("expected the panic of tx 3, got {other:?}"),
        }
        assert!(pending.take_failure(None).is_ok());
        let worker = pending
            .lock()
            .worker
            .as_ref()
            .map(|w| w.thread.thread().id());
        assert_eq!(worker, Some(seen[0].0));
        // Drop joins the thread: it returns once the thread has ended.
        drop(pending);
    }
}
