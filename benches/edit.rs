//! Criterion benches of the hot verbs, on files in a temp dir (the filesystem of
//! `$TMPDIR`, normally /tmp):
//!
//! - `preview_one_edit/{1KiB,100KiB,1MiB,10MiB}`: one `replace_text` in one file
//!   (read, blake3, resolve, diff, validation, one durable journal write).
//! - `commit_4KiB_files/{1,10,100,1000}`: the full ApplyBatch protocol with its fsyncs;
//!   each iteration's preview is set-up, not timed.
//! - `rollback_4KiB_files/{1,10,100,1000}`: rolling back the latest commit or rollback
//!   of the same n files (a rollback of a rollback redoes it), so every iteration is a
//!   full rollback batch of n files and needs no untimed set-up.
//!
//! `cargo bench --bench edit`; `.ci/run` runs each once with `-- --test`. Sample sizes
//! and times are small (the machine has 2 cores): see docs/benchmarks.md.

#[path = "support/mod.rs"]
mod support;

use std::cell::Cell;
use std::fs;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode};
use support::{line1_plan, source, write_files};
use ultra_edit::{CommitOptions, Journal, Plan, RollbackOptions};

fn bench_preview(c: &mut Criterion) {
    let mut g = c.benchmark_group("preview_one_edit");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    for (label, bytes) in [
        ("1KiB", 1usize << 10),
        ("100KiB", 100 << 10),
        ("1MiB", 1 << 20),
        ("10MiB", 10 << 20),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("f.rs"), source(bytes)).expect("write");
        let j = Journal::init(dir.path()).expect("init");
        let plan = Plan::from_json(
            br#"{"edits":[{"op":"replace_text","path":"f.rs","old":"compute(0);","new":"compute(1);"}]}"#,
        )
        .expect("plan");
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| j.preview(&plan).expect("preview"))
        });
    }
    g.finish();
}

const BATCHES: [usize; 4] = [1, 10, 100, 1000];

fn bench_commit(c: &mut Criterion) {
    let mut g = c.benchmark_group("commit_4KiB_files");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    for n in BATCHES {
        let dir = tempfile::tempdir().expect("tempdir");
        write_files(dir.path(), n, 4096);
        let j = Journal::init(dir.path()).expect("init");
        let mut round = 0u64;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_batched(
                || {
                    // Each round rewrites line 1 of every file with a new value, so every
                    // commit changes n files.
                    round += 1;
                    j.preview(&line1_plan(n, &format!("round {round}")))
                        .expect("preview")
                        .tx
                },
                |tx| j.commit(tx, CommitOptions::default()).expect("commit"),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn bench_rollback(c: &mut Criterion) {
    let mut g = c.benchmark_group("rollback_4KiB_files");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    for n in BATCHES {
        let dir = tempfile::tempdir().expect("tempdir");
        write_files(dir.path(), n, 4096);
        let j = Journal::init(dir.path()).expect("init");
        let tx = j.preview(&line1_plan(n, "committed")).expect("preview").tx;
        let latest = Cell::new(j.commit(tx, CommitOptions::default()).expect("commit").tx);
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter(|| {
                let r = j
                    .rollback(latest.get(), RollbackOptions::default())
                    .expect("rollback");
                assert_eq!(r.files.len(), n);
                latest.set(r.tx);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_preview, bench_commit, bench_rollback);
criterion_main!(benches);
