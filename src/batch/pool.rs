//! A small bounded pool for the independent syncs of a batch: staging its temps (write,
//! metadata, `fsync`) and fsyncing its directories (docs/commit-protocol.md, step 4 and
//! 5). On ext4, fsyncs issued at once share the journal's commits: 100 staged 4 KiB
//! files make durable in a few percent of the time sequential fsyncs take
//! (docs/benchmarks.md, "Sync strategies").

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// At most this many threads sync at once (8 measured as fast as 4 and faster for
/// small n; more only adds threads).
pub(crate) const MAX_THREADS: usize = 8;

/// Run `job(i, &items[i])` for every item, on up to [`MAX_THREADS`] threads: the calling
/// thread and scoped ones (the calling thread alone when there is at most one item). After the first error no
/// new item is started; the error returned is the one of the lowest index among the
/// items that ran, so the outcome does not depend on scheduling more than it must.
pub(crate) fn for_each<T: Sync, E: Send>(
    items: &[T],
    job: impl Fn(usize, &T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    if items.len() <= 1 {
        return items.iter().enumerate().try_for_each(|(i, t)| job(i, t));
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let work = || loop {
        if failed.load(Ordering::Acquire) {
            return;
        }
        let i = next.fetch_add(1, Ordering::AcqRel);
        let Some(item) = items.get(i) else {
            return;
        };
        if let Err(e) = job(i, item) {
            failed.store(true, Ordering::Release);
            let mut slot = first.lock().unwrap_or_else(|p| p.into_inner());
            if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                *slot = Some((i, e));
            }
            return;
        }
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers: one thread fewer to start (a
        // spawn costs tens of µs here, docs/benchmarks.md, "The CLI process"), and it
        // works instead of waiting.
        for _ in 1..items.len().min(MAX_THREADS) {
            s.spawn(work);
        }
        work();
    });
    match first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Workers started before their work exists ([`prestarted`]): one [`Prestarted::run`]
/// hands them a list of `n` items of `W`.
pub(crate) struct Prestarted<'env, W, E> {
    workers: Vec<std::sync::mpsc::Sender<std::sync::Arc<Run<W, E>>>>,
    done: std::sync::mpsc::Receiver<()>,
    job: Job<'env, W, E>,
}

/// What a worker runs for item `i` of a run's work.
pub(crate) type Job<'env, W, E> = &'env (dyn Fn(&W, usize) -> Result<(), E> + Sync);

/// One run's shared state: the work, the next index, the first error.
struct Run<W, E> {
    work: W,
    n: usize,
    next: AtomicUsize,
    failed: AtomicBool,
    first: Mutex<Option<(usize, E)>>,
}

impl<W, E> Run<W, E> {
    /// Take items until none is left or one failed ([`for_each`]'s rule).
    fn work(&self, job: Job<'_, W, E>) {
        loop {
            if self.failed.load(Ordering::Acquire) {
                return;
            }
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.n {
                return;
            }
            if let Err(e) = job(&self.work, i) {
                self.failed.store(true, Ordering::Release);
                let mut slot = self.first.lock().unwrap_or_else(|p| p.into_inner());
                if slot.as_ref().is_none_or(|(j, _)| i < *j) {
                    *slot = Some((i, e));
                }
                return;
            }
        }
    }
}

impl<W: Send + Sync, E: Send> Prestarted<'_, W, E> {
    /// Run `job(&work, i)` for every `i < n` on the started workers and the calling
    /// thread, with [`for_each`]'s rules (no new item after the first error; the error
    /// of the lowest index that ran). Returns when every item ran.
    pub(crate) fn run(&self, work: W, n: usize) -> Result<(), E> {
        let run = std::sync::Arc::new(Run {
            work,
            n,
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            first: Mutex::new(None),
        });
        let mut helping = 0;
        for w in &self.workers {
            if n > 1 + helping && w.send(run.clone()).is_ok() {
                helping += 1;
            }
        }
        run.work(self.job);
        for _ in 0..helping {
            // A worker that died (it cannot: its loop only runs jobs, whose panics the
            // scope re-raises) would close the channel: stop waiting then.
            if self.done.recv().is_err() {
                break;
            }
        }
        let first = run.first.lock().unwrap_or_else(|p| p.into_inner()).take();
        match first {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

/// Start `threads` workers, then call `body` with them: a thread's start costs tens of
/// µs here (more under load, docs/benchmarks.md, "The CLI process"), which this lets a
/// caller overlap with something it waits for anyway — the batch protocol starts the
/// staging workers before the commit point's journal write and gives them the temps
/// to write only once it is durable. The workers exit when `body` returns.
pub(crate) fn prestarted<'env, W, E, R>(
    threads: usize,
    job: Job<'env, W, E>,
    body: impl FnOnce(&Prestarted<'env, W, E>) -> R,
) -> R
where
    W: Send + Sync + 'env,
    E: Send + 'env,
{
    /// Tells the caller of `run` that this worker is done with it, also when the job
    /// panicked (the scope then re-raises the panic when it ends).
    struct Done(std::sync::mpsc::Sender<()>);
    impl Drop for Done {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    std::thread::scope(|s| {
        let (done_tx, done) = std::sync::mpsc::channel();
        let mut workers = Vec::new();
        for _ in 0..threads.min(MAX_THREADS.saturating_sub(1)) {
            let (tx, rx) = std::sync::mpsc::channel::<std::sync::Arc<Run<W, E>>>();
            let done_tx = done_tx.clone();
            s.spawn(move || {
                while let Ok(run) = rx.recv() {
                    let _done = Done(done_tx.clone());
                    run.work(job);
                }
            });
            workers.push(tx);
        }
        drop(done_tx);
        let pool = Prestarted { workers, done, job };
        // Dropping the pool (when `body` returns, before the scope joins) closes the
        // workers' channels: they return.
        let out = body(&pool);
        drop(pool);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_and_the_lowest_failing_index_is_reported() {
        let seen: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
        let items: Vec<usize> = (0..50).collect();
        for_each(&items, |i, &x| {
            assert_eq!(i, x);
            seen[i].fetch_add(1, Ordering::SeqCst);
            Ok::<(), ()>(())
        })
        .unwrap();
        assert!(seen.iter().all(|c| c.load(Ordering::SeqCst) == 1));
        // Items 3, 10, 17, … fail: the error reported is the lowest failing index
        // among the items that ran (which ran depends on the scheduling).
        let ran = Mutex::new(Vec::new());
        let err = for_each(&items, |i, _| {
            ran.lock().unwrap().push(i);
            if i % 7 == 3 {
                Err(i)
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        let ran = ran.into_inner().unwrap();
        let lowest = ran.iter().copied().filter(|i| i % 7 == 3).min();
        assert_eq!(Some(err), lowest);
        assert_eq!(
            for_each(&items[..1], |_, _| Err::<(), _>("one")),
            Err("one")
        );
        assert_eq!(for_each::<usize, ()>(&[], |_, _| Err(())), Ok(()));
    }

    #[test]
    fn prestarted_workers_run_every_item_once_and_report_the_lowest_failing_index() {
        let seen: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
        let job = |w: &Vec<usize>, i: usize| {
            seen[w[i]].fetch_add(1, Ordering::SeqCst);
            if w[i] % 7 == 3 && w.len() == 40 {
                Err(w[i])
            } else {
                Ok(())
            }
        };
        let (first, second, failing) = prestarted(7, &job, |p| {
            let first = p.run((0..50).collect::<Vec<_>>(), 50);
            // A second run on the same workers.
            let second = p.run((0..3).collect::<Vec<_>>(), 3);
            // Items 3, 10, 17, 24, 31, 38 fail in this run.
            let failing = p.run((0..40).collect::<Vec<_>>(), 40);
            (first, second, failing)
        });
        assert_eq!((first, second), (Ok(()), Ok(())));
        let e = failing.unwrap_err();
        assert_eq!(e % 7, 3);
        // Items 0..3 ran three times (three runs), 3..40 at most twice (the failing run
        // stops early), 40..50 once.
        for (i, c) in seen.iter().enumerate() {
            let c = c.load(Ordering::SeqCst);
            match i {
                0..=2 => assert_eq!(c, 3, "item {i}"),
                3..=39 => assert!((1..=2).contains(&c), "item {i}: {c}"),
                _ => assert_eq!(c, 1, "item {i}"),
            }
        }
        // The lowest failing index among those that ran in the failing run.
        assert_eq!(e, 3, "item 3 is the first taken after items 0..3 succeeded");
        // Workers never given work exit when the body returns.
        let idle = |_: &(), _: usize| Ok::<(), ()>(());
        assert_eq!(prestarted(3, &idle, |_| 5), 5);
    }
}
