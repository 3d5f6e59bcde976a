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

/// Run `job(i, &items[i])` for every item, on up to [`MAX_THREADS`] threads: the
/// calling thread and scoped ones (the calling thread alone when there is at most one
/// item). After the first error no new item is started; the error returned is the one of the lowest index among the
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
            // A thread that cannot be started (a process or cgroup thread limit) is no
            // error: the others, and this one, take its items.
            if std::thread::Builder::new().spawn_scoped(s, work).is_err() {
                break;
            }
        }
        work();
    });
    match first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
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
}
