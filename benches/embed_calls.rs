//! Criterion benches of what a long-lived host pays per call (issue 32 item 7,
//! docs/benchmarks.md "Embedder per-call cost"): m1nd-shaped `edit_preview` and
//! `edit_preview` + `edit_commit` of one small file through a `Registry` whose journal
//! stays open, beside the same write done directly with write + fsync + rename (+ the
//! directory's fsync).
//!
//! - `direct/write_fsync_rename`: write a temp beside the file, fsync it, rename it
//!   over the file, fsync the directory.
//! - `host/edit_preview`: route to the root's journal (`Registry::open_or_create`,
//!   already open), `Plan::new().write_file(path, content)`, `preview`. The tx is left
//!   open (a host's previews expire; abort is not what is timed).
//! - `host/edit_preview_commit`: the same preview, then `journal_of(handle)` and
//!   `commit`, then `flush_tx` (a host answering a remote caller flushes).
//!
//! The root is a directory on the target's filesystem (`$UE_BENCH_DIR` or the system
//! temp directory), so fsyncs cost what they cost there.

use std::fs;
use std::io::Write;
use std::time::Duration;

use criterion::{criterion_group, Criterion};
use ultra_edit::{CommitOptions, Plan, Registry};

fn content(i: u64) -> String {
    format!("fn main() {{\n    println!(\"{i}\");\n}}\n")
}

fn bench_calls(c: &mut Criterion) {
    let base = match std::env::var_os("UE_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .expect("temp dir");
    let root = base.path().join("root");
    fs::create_dir_all(&root).expect("root");
    let file = root.join("main.rs");
    fs::write(&file, content(0)).expect("file");
    let root = root.canonicalize().expect("canonical root");
    let path = root.join("main.rs").display().to_string();

    let mut g = c.benchmark_group("direct");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut i = 0u64;
    g.bench_function("write_fsync_rename", |b| {
        b.iter(|| {
            i += 1;
            let tmp = root.join(".main.rs.tmp");
            let mut f = fs::File::create(&tmp).expect("create");
            f.write_all(content(i).as_bytes()).expect("write");
            f.sync_all().expect("fsync");
            fs::rename(&tmp, &file).expect("rename");
            fs::File::open(&root)
                .and_then(|d| d.sync_all())
                .expect("fsync dir");
        })
    });
    g.finish();

    let registry = Registry::open(base.path().join("host")).expect("registry");
    registry.open_or_create(&root).expect("journal");
    let mut g = c.benchmark_group("host");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("edit_preview", |b| {
        b.iter(|| {
            i += 1;
            let j = registry.open_or_create(&root).expect("journal");
            let plan = Plan::new().agent("dev").write_file(&path, content(i));
            criterion::black_box(j.preview(&plan).expect("preview").handle)
        })
    });
    g.bench_function("edit_preview_commit", |b| {
        b.iter(|| {
            i += 1;
            let j = registry.open_or_create(&root).expect("journal");
            let plan = Plan::new().agent("dev").write_file(&path, content(i));
            let handle = j.preview(&plan).expect("preview").handle;
            let j = registry.journal_of(&handle).expect("route");
            let receipt = j.commit(handle, CommitOptions::default()).expect("commit");
            j.flush_tx(handle).expect("flush");
            criterion::black_box(receipt)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_calls);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
