//! Helpers shared by the bench targets (`#[path = "support/mod.rs"] mod support;`).
#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ultra_edit::{CommitOptions, Journal, Plan, SCHEMA_VERSION};

/// A file of about `bytes` bytes (at least `bytes`) of numbered Rust-like lines.
pub fn source(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut i = 0;
    while s.len() < bytes {
        s += &format!("    let value_{i} = compute({i}); // line {i}\n");
        i += 1;
    }
    s
}

/// `n` files `f{i}.rs` of `bytes` bytes each in `dir`.
pub fn write_files(dir: &Path, n: usize, bytes: usize) {
    let body = source(bytes);
    for i in 0..n {
        fs::write(dir.join(file_name(i)), &body).expect("write");
    }
}

pub fn file_name(i: usize) -> String {
    format!("f{i:04}.rs")
}

/// A plan that replaces line 1 of each of the `n` files with `// {tag}`.
pub fn line1_plan(n: usize, tag: &str) -> Plan {
    let edits: Vec<_> = (0..n)
        .map(|i| {
            serde_json::json!({"op":"replace_lines","path":file_name(i),
                "start":1,"end":1,"content":format!("// {tag}\n")})
        })
        .collect();
    Plan::from_json(serde_json::json!({ "edits": edits }).to_string().as_bytes()).expect("plan")
}

/// True when criterion runs each bench once (`cargo bench -- --test`, as CI does).
pub fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// The cargo target dir this bench was built into: `$CARGO_TARGET_DIR`, else the
/// directory three levels above `<target>/release/deps/<bench>-<hash>`.
pub fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
}

/// Where generated fixtures (big journals) are cached: `$UE_BENCH_CACHE`, else
/// `<target>/ue-bench-cache`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("UE_BENCH_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("ue-bench-cache"))
}

/// Copy a directory tree (regular files and directories only).
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for e in fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dst = to.join(e.file_name());
        if e.file_type().expect("file_type").is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            fs::copy(e.path(), &dst).expect("copy");
        }
    }
}

// ---- big journals, generated once and cached (benches/journal.rs, benches/compare.rs) ----

/// Bump when the generated journals' content changes.
pub const GENERATOR: u32 = 1;

pub fn key(n: u64) -> String {
    format!(
        "journal-v{}-schema{}-gen{}-{}tx",
        env!("CARGO_PKG_VERSION"),
        SCHEMA_VERSION,
        GENERATOR,
        n
    )
}

pub fn one_line_plan(i: u64) -> Plan {
    Plan::from_json(
        serde_json::json!({"edits":[{"op":"replace_lines","path":"f.txt","start":1,"end":1,
            "content":format!("version {i}\n")}]})
        .to_string()
        .as_bytes(),
    )
    .expect("plan")
}

/// A workspace root in the cache whose journal holds `n` committed txs (generated once).
pub fn cached_journal(n: u64) -> PathBuf {
    let dir = cache_dir().join(key(n));
    if dir.join("ready").is_file() {
        return dir;
    }
    fs::create_dir_all(cache_dir()).expect("mkdir cache");
    let shm = Path::new("/dev/shm");
    let (work, where_) = if shm.is_dir() {
        (
            tempfile::tempdir_in(shm).expect("tempdir"),
            "tmpfs /dev/shm",
        )
    } else {
        (
            tempfile::tempdir_in(cache_dir()).expect("tempdir"),
            "the cache dir",
        )
    };
    fs::write(work.path().join("f.txt"), "version 0\nsecond line\n").expect("write");
    let t0 = Instant::now();
    {
        let j = Journal::init(work.path()).expect("init");
        for i in 1..=n {
            let tx = j.preview(&one_line_plan(i)).expect("preview").tx;
            j.commit(tx, CommitOptions::default()).expect("commit");
            if i % 10_000 == 0 {
                eprintln!(
                    "generating {n}-tx journal: {i} txs, {:.1} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let tmp = cache_dir().join(format!("{}.tmp{}", key(n), std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    copy_tree(work.path(), &tmp);
    let size = fs::metadata(tmp.join(".ultra-edit/journal.redb"))
        .expect("journal")
        .len();
    let note = format!(
        "{n} committed txs (preview + commit of a one-line change to one small file each) \
         generated by the library in {secs:.1} s on {where_}; journal {size} bytes\n"
    );
    eprint!("{note}");
    fs::write(tmp.join("gen.txt"), note).expect("gen.txt");
    let _ = fs::remove_dir_all(&dir);
    fs::rename(&tmp, &dir).expect("rename");
    fs::write(dir.join("ready"), "").expect("ready");
    dir
}

/// A copy of the `n`-tx journal file as a SIGKILLed writer left it (cached).
pub fn cached_killed_journal(n: u64) -> PathBuf {
    let clean = cached_journal(n);
    let out = cache_dir().join(format!("{}-killed.redb", key(n)));
    if out.is_file() {
        return out;
    }
    let work = tempfile::tempdir().expect("tempdir");
    copy_tree(&clean, work.path());
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .env("UE_BENCH_HOLD", work.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn writer");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    assert_eq!(line.trim(), "ready", "writer child failed");
    child.kill().expect("SIGKILL"); // std's kill is SIGKILL
    child.wait().expect("wait");
    let tmp = out.with_extension("tmp");
    fs::copy(work.path().join(".ultra-edit/journal.redb"), &tmp).expect("copy");
    fs::rename(&tmp, &out).expect("rename");
    out
}

/// Child mode: open the journal, record a preview (a write txn), say "ready", and wait
/// to be killed.
pub fn hold(root: &Path) -> ! {
    let j = Journal::open(root).expect("open");
    j.preview(&one_line_plan(u64::MAX)).expect("preview");
    let mut out = std::io::stdout();
    writeln!(out, "ready").expect("stdout");
    out.flush().expect("flush");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}
