//! Criterion benches of the two hot verbs: preview (in memory + one journal write) and
//! commit (the full ApplyBatch protocol with its fsyncs).
//!
//! `cargo bench --bench edit`; `.ci/run` runs each once with `-- --test`.

use std::fs;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use ultra_edit::{CommitOptions, Journal, Plan};

/// A file of about `bytes` bytes of numbered Rust-like lines.
fn source(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut i = 0;
    while s.len() < bytes {
        s += &format!("    let value_{i} = compute({i}); // line {i}\n");
        i += 1;
    }
    s
}

fn bench_preview(c: &mut Criterion) {
    let mut g = c.benchmark_group("preview_one_edit");
    for kib in [1usize, 100, 1024] {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("f.rs"), source(kib * 1024)).expect("write");
        let j = Journal::init(dir.path()).expect("init");
        let plan = Plan::from_json(
            br#"{"edits":[{"op":"replace_text","path":"f.rs","old":"compute(0);","new":"compute(1);"}]}"#,
        )
        .expect("plan");
        g.bench_function(BenchmarkId::from_parameter(format!("{kib}KiB")), |b| {
            b.iter(|| j.preview(&plan).expect("preview"))
        });
    }
    g.finish();
}

fn bench_commit(c: &mut Criterion) {
    let mut g = c.benchmark_group("commit_4KiB_files");
    g.sample_size(10);
    for n in [1usize, 10, 100] {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..n {
            fs::write(dir.path().join(format!("f{i}.rs")), source(4096)).expect("write");
        }
        let j = Journal::init(dir.path()).expect("init");
        let mut round = 0u64;
        g.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_batched(
                || {
                    // Each round rewrites line 0 of every file with a new value, so every
                    // commit changes n files.
                    round += 1;
                    let edits: Vec<_> = (0..n)
                        .map(|i| {
                            serde_json::json!({"op":"replace_lines","path":format!("f{i}.rs"),
                                "start":1,"end":1,"content":format!("// round {round}\n")})
                        })
                        .collect();
                    let plan = Plan::from_json(
                        serde_json::json!({ "edits": edits }).to_string().as_bytes(),
                    )
                    .expect("plan");
                    j.preview(&plan).expect("preview").tx
                },
                |tx| j.commit(tx, CommitOptions::default()).expect("commit"),
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench_preview, bench_commit);
criterion_main!(benches);
