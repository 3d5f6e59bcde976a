//! Criterion benches of the hot verbs, on files in a temp dir (the filesystem of
//! `$TMPDIR`, normally /tmp):
//!
//! - `preview_one_edit/{1KiB,100KiB,1MiB,10MiB}`: one `replace_text` in one file
//!   (read, blake3, resolve, diff, validation, one durable journal write).
//! - `replace_symbol_10k_lines/{replace_text,replace_symbol}`: one edit of one function
//!   in a Rust file of 10 000 lines (1 000 functions), as exact text and by symbol
//!   name: the difference is the cost of finding the definition (feature `syntax`);
//!   both pay the syntax validation and the hunk header's symbol name.
//! - `preview_parsed_rust_1MiB/{new_base,same_base}`: one edit in a Rust file just
//!   under the parse limit, with neither side's syntax tree cached (as in a CLI
//!   process) and with the base's tree cached (a long-lived handle).
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

/// A Rust file of `n` functions of 10 lines each.
fn functions(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "/// Function {i}.\npub fn f{i}(x: u64) -> u64 {{\n    let a = x + {i};\n    let b = a * 3;\n    \
                 let c = b ^ a;\n    if c > 10 {{\n        return c;\n    }}\n    a + b\n}}\n"
            )
        })
        .collect()
}

fn bench_replace_symbol(c: &mut Criterion) {
    if !ultra_edit::syntax::ENABLED {
        return;
    }
    let mut g = c.benchmark_group("replace_symbol_10k_lines");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(SamplingMode::Flat);
    let dir = tempfile::tempdir().expect("tempdir");
    let text = functions(1000);
    assert_eq!(text.lines().count(), 10_000);
    fs::write(dir.path().join("f.rs"), &text).expect("write");
    let j = Journal::init(dir.path()).expect("init");
    let plan = |edit: serde_json::Value| {
        Plan::from_json(
            serde_json::json!({ "edits": [edit] })
                .to_string()
                .as_bytes(),
        )
        .expect("plan")
    };
    let by_text = plan(serde_json::json!({"op": "replace_text", "path": "f.rs",
        "old": "    let a = x + 500;\n", "new": "    let a = x + 501;\n"}));
    let by_symbol = plan(
        serde_json::json!({"op": "replace_symbol", "path": "f.rs", "symbol": "f500",
        "content": "pub fn f500(x: u64) -> u64 {\n    x\n}\n"}),
    );
    for (label, plan) in [("replace_text", &by_text), ("replace_symbol", &by_symbol)] {
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| j.preview(plan).expect("preview"))
        });
    }
    g.finish();
}

/// One `replace_lines` preview in a Rust file just under `syntax::PARSE_MAX_BYTES`
/// (`fn main` holding 30 000 `let` lines, 1 008 904 bytes), so the candidate is
/// parsed: `new_base` rewrites the file's first line before each preview (untimed), so
/// neither side's syntax tree is in the process's cache — what a CLI process pays —
/// and `same_base` previews the same base again and again, as a long-lived library
/// handle or `serve` does.
fn bench_preview_parsed(c: &mut Criterion) {
    let mut g = c.benchmark_group("preview_parsed_rust_1MiB");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sampling_mode(SamplingMode::Flat);
    let body: String = (0..30_000)
        .map(|i| format!("let value_{i:05} = compute({i});\n"))
        .collect();
    let text = |first: &str| format!("{first}\nfn main() {{\n{body}}}\n");
    assert!(text("//").len() <= ultra_edit::syntax::PARSE_MAX_BYTES);
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("big.rs"), text("// 0")).expect("write");
    let j = Journal::init(dir.path()).expect("init");
    let plan = Plan::from_json(
        br#"{"edits":[{"op":"replace_lines","path":"big.rs","start":6,"end":6,"content":"// x\n"}]}"#,
    )
    .expect("plan");
    let round = Cell::new(0u64);
    g.bench_function("new_base", |b| {
        b.iter_batched(
            || {
                round.set(round.get() + 1);
                fs::write(
                    dir.path().join("big.rs"),
                    text(&format!("// {}", round.get())),
                )
                .expect("write");
            },
            |()| j.preview(&plan).expect("preview"),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("same_base", |b| {
        b.iter(|| j.preview(&plan).expect("preview"))
    });
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

criterion_group!(
    benches,
    bench_preview,
    bench_replace_symbol,
    bench_preview_parsed,
    bench_commit,
    bench_rollback
);
criterion_main!(benches);
