//! Criterion benches of the journal as it grows:
//!
//! - `open_recover/{0,10000,100000}tx`: `Journal::open` (redb open, schema check,
//!   recovery check) of a journal holding that many committed txs, cleanly closed.
//! - `open_recover_after_kill/...`: the same journal right after a writer holding it
//!   open was SIGKILLed (redb must repair its file before use); each iteration starts
//!   from a fresh, fsynced copy of the killed file (the copy is set-up, not timed).
//! - `dump/{10000,100000}tx`: `Journal::dump` of every record, throughput in records/s.
//!
//! The journals are generated once by the library in a loop of small commits (a preview
//! and a commit of a one-line change to one small file each) and cached under
//! `<target>/ue-bench-cache/` (or `$UE_BENCH_CACHE`), keyed by the crate version, the
//! journal schema and a generator version, so a schema change regenerates them. They
//! are generated on tmpfs (/dev/shm, where fsync is nearly free) when it exists, then
//! copied to the cache, which is on the target dir's filesystem: the bytes are the same
//! as a generation on disk, only faster. The time each took is in `gen.txt` beside it.
//!
//! With `-- --test` (CI) the 10k/100k journals are replaced by 100 txs so a fresh
//! machine does not spend minutes generating them.

#[path = "support/mod.rs"]
mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use support::{cached_journal, cached_killed_journal, hold};
use ultra_edit::{DumpFilter, Journal};

fn sizes() -> Vec<u64> {
    if support::test_mode() {
        vec![0, 100]
    } else {
        vec![0, 10_000, 100_000]
    }
}

fn bench_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("open_recover");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    for n in sizes() {
        let root = cached_journal(n);
        g.bench_function(BenchmarkId::from_parameter(format!("{n}tx")), |b| {
            // Timed: the open; the drop (redb's clean close) is not.
            b.iter_batched(
                || (),
                |_| Journal::open(&root).expect("open"),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();

    let mut g = c.benchmark_group("open_recover_after_kill");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    for n in sizes() {
        let killed = cached_killed_journal(n);
        let work = tempfile::tempdir().expect("tempdir");
        support::copy_tree(&cached_journal(n), work.path());
        let journal = work.path().join(".ultra-edit/journal.redb");
        g.bench_function(BenchmarkId::from_parameter(format!("{n}tx")), |b| {
            b.iter_batched(
                || {
                    // Untimed: a fresh copy of the killed file, synced so the open's
                    // own fsyncs do not also flush the copy's dirty pages.
                    fs::copy(&killed, &journal).expect("restore killed journal");
                    fs::File::open(&journal)
                        .and_then(|f| f.sync_all())
                        .expect("sync copy");
                },
                |_| Journal::open(work.path()).expect("open"),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn bench_dump(c: &mut Criterion) {
    let mut g = c.benchmark_group("dump");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    for n in sizes().into_iter().filter(|&n| n > 0) {
        let root = cached_journal(n);
        let j = Journal::open(&root).expect("open");
        let mut records = 0u64;
        j.dump(DumpFilter::default(), |_| {
            records += 1;
            Ok(true)
        })
        .expect("dump");
        g.throughput(Throughput::Elements(records));
        g.bench_function(BenchmarkId::from_parameter(format!("{n}tx")), |b| {
            b.iter(|| {
                let mut seen = 0u64;
                j.dump(DumpFilter::default(), |e| {
                    criterion::black_box(&e);
                    seen += 1;
                    Ok(true)
                })
                .expect("dump");
                assert_eq!(seen, records);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_open, bench_dump);

fn main() {
    if let Some(root) = std::env::var_os("UE_BENCH_HOLD") {
        hold(Path::new(&root));
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
