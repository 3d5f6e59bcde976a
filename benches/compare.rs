//! Side-by-side comparison, in one run on the same files: ultra-edit commit against the
//! fsync floor, the unsafe baseline and git; ultra-edit preview against `diff -u`; and
//! journal growth per one-line commit to a 1 MiB file. Prints medians and ratios with
//! the performance targets of docs/benchmarks.md as a markdown table.
//!
//! Run it through `benches/compare.sh` (release build, 21 repetitions, machine info,
//! fsync counts, writes docs/benchmarks.md). Directly:
//!
//! ```sh
//! cargo bench --bench compare -- [--reps N] [--sizes 1,10,100] [--growth N]
//!                                [--growth-windows N] [--linear 1000,10000]
//!                                [--floor-bin PATH] [--out FILE]
//! cargo bench --bench compare -- --test     # smoke run: 1 repetition, 1 file (CI)
//! ```
//!
//! Every repetition runs every method once, in an order rotated per repetition, on the
//! same workspace of n files, each rewriting line 1 of every file; the first repetition
//! is a discarded warm-up. Before each timed operation the filesystem is `syncfs`ed
//! (untimed), so no method pays for another's dirty pages. Methods:
//!
//! - `ultra-edit lib`: `Journal::commit` in-process (journal open and preview untimed).
//! - `ultra-edit CLI`: the `ultra-edit --root W commit TX` process (preview untimed).
//! - `floor`: temp files written, each fsynced, renamed, directory fsynced (in-process),
//!   and the same as a process (`benches/floor.c` when built, else this binary).
//! - `unsafe`: temp + rename, no fsync (in-process, and as a process).
//! - `git`: `git add -A` then `git commit -q` processes (files written untimed).
//! - `/bin/true`: a process spawn, for scale.
//! - `ultra-edit --version`: the CLI binary's own start-up (loading, relocation, clap).
//! - `redb floor`: what redb 4.6 costs any process that writes the journal, in-process:
//!   a copy of the workspace's journal opened for writing in MultiWriter mode with the
//!   settings of `Store` (src/journal/store.rs), k empty `Immediate` commits (2 for a
//!   commit, 1 for a preview), closed. With the start-up and the fsync floor it gives a
//!   lower bound for a CLI process (the "Lower bound" table).

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{file_name, line1_plan, source, write_files};
use ultra_edit::{CommitOptions, Journal, Plan};

struct Opts {
    reps: usize,
    sizes: Vec<usize>,
    growth: u64,
    /// Commits of the sliding-window growth run (0: not run).
    growth_windows: usize,
    floor_bin: Option<PathBuf>,
    out: Option<PathBuf>,
    cli: PathBuf,
    open_sizes: Vec<u64>,
    linear: Vec<usize>,
    linear_reps: usize,
}

fn opts() -> Opts {
    let mut o = Opts {
        reps: 9,
        sizes: vec![1, 10, 100],
        growth: 100,
        growth_windows: 0,
        floor_bin: None,
        out: None,
        cli: PathBuf::from(env!("CARGO_BIN_EXE_ultra-edit")),
        open_sizes: vec![0, 10_000, 100_000],
        // benches/compare.sh asks for 1000,10000 (≈ 1 min more than `cargo bench` needs)
        linear: vec![100, 1_000],
        linear_reps: 3,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--reps" => o.reps = val().parse().expect("--reps N"),
            "--sizes" => {
                o.sizes = val()
                    .split(',')
                    .map(|s| s.parse().expect("--sizes 1,10,100"))
                    .collect()
            }
            "--growth" => o.growth = val().parse().expect("--growth N"),
            "--growth-windows" => o.growth_windows = val().parse().expect("--growth-windows N"),
            "--floor-bin" => o.floor_bin = Some(PathBuf::from(val())),
            "--out" => o.out = Some(PathBuf::from(val())),
            "--cli" => o.cli = PathBuf::from(val()),
            "--linear" => {
                o.linear = val()
                    .split(',')
                    .map(|s| s.parse().expect("--linear 1000,10000"))
                    .collect()
            }
            "--test" => {
                o.reps = 1;
                o.sizes = vec![1];
                o.growth = 2;
                o.growth_windows = 0;
                o.open_sizes = vec![0, 100];
                o.linear = vec![10, 100];
                o.linear_reps = 1;
            }
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    o
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum M {
    Lib,
    Cli,
    Floor,
    FloorPar,
    FloorProc,
    Unsafe,
    UnsafeProc,
    Git,
    True,
    PreviewCli,
    PreviewLib,
    Diff,
    OpenClean,
    OpenKilled,
    Linear,
    LinearFloor,
    /// `ultra-edit --version` as a process.
    Startup,
    /// [`redb_floor`] with the commits of a CLI commit (2), in-process.
    RedbFloorCommit,
    /// [`redb_floor`] with the commits of a CLI preview (1), in-process.
    RedbFloorPreview,
}

/// Journal commits of one CLI commit (the intent, the completion:
/// docs/commit-protocol.md) and of one CLI preview.
const COMMIT_JOURNAL_COMMITS: usize = 2;
const PREVIEW_JOURNAL_COMMITS: usize = 1;

/// The least any process that writes the journal pays redb 4.6: open `path` for writing
/// in MultiWriter mode with the settings of `Store` (src/journal/store.rs: MultiWriter,
/// 16 MiB cache), make `commits` empty write transactions with redb's default
/// `Durability::Immediate` (MultiWriter refuses `None`; each is a two-phase commit),
/// close. Syncs (strace, benches/compare.sh): 1 at the open (the header marks the file
/// open), 2 per commit, 4 at the close (a commit recording the allocator state, and the
/// shutdown header's two flushes).
fn redb_floor(path: &Path, commits: usize) {
    let mut builder = redb::Builder::new();
    builder
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .set_cache_size(16 * 1024 * 1024);
    let db = builder.open(path).expect("open the redb floor's file");
    for _ in 0..commits {
        db.begin_write()
            .expect("begin_write")
            .commit()
            .expect("commit");
    }
    db.close().expect("close");
}

/// A copy of the journal of the workspace `w` for [`redb_floor`] (the workspace's own
/// journal is left alone), in `side`.
fn redb_floor_file(w: &Path, side: &Path) -> PathBuf {
    let copy = side.join("redb-floor.redb");
    fs::copy(w.join(".ultra-edit/journal.redb"), &copy).expect("copy the journal");
    File::open(&copy)
        .and_then(|f| f.sync_all())
        .expect("sync the copy");
    copy
}

fn version_cmd(o: &Opts) -> Command {
    let mut cmd = Command::new(&o.cli);
    cmd.arg("--version");
    cmd
}

/// The bytes every method writes to each file in round `tag`: what ultra-edit's
/// `replace_lines 1..1` of `// {tag}\n` makes of `source(4096)`.
fn content(tag: &str) -> String {
    let body = source(4096);
    let rest = &body[body.find('\n').expect("line") + 1..];
    format!("// {tag}\n{rest}")
}

/// The floor (`sync`) or the unsafe baseline, in-process; same steps as floor.c.
fn floor(dir: &Path, n: usize, content: &[u8], sync: bool) -> std::io::Result<()> {
    let tmps: Vec<PathBuf> = (0..n)
        .map(|i| dir.join(format!(".floor-{i}.tmp")))
        .collect();
    for tmp in &tmps {
        let mut f = OpenOptions::new().write(true).create_new(true).open(tmp)?;
        f.write_all(content)?;
        if sync {
            f.sync_all()?;
        }
    }
    for (i, tmp) in tmps.iter().enumerate() {
        fs::rename(tmp, dir.join(file_name(i)))?;
    }
    if sync {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The parallel floor, in-process: the same steps as [`floor`] with `sync`, but the
/// temps are written and fsynced on up to 8 threads at once (as ultra-edit stages them).
fn floor_par(dir: &Path, n: usize, content: &[u8]) -> std::io::Result<()> {
    let tmps: Vec<PathBuf> = (0..n)
        .map(|i| dir.join(format!(".floor-{i}.tmp")))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| -> std::io::Result<()> {
        let workers: Vec<_> = (0..n.clamp(1, 8))
            .map(|_| {
                s.spawn(|| -> std::io::Result<()> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(tmp) = tmps.get(i) else {
                            return Ok(());
                        };
                        let mut f = OpenOptions::new().write(true).create_new(true).open(tmp)?;
                        f.write_all(content)?;
                        f.sync_all()?;
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("worker")?;
        }
        Ok(())
    })?;
    for (i, tmp) in tmps.iter().enumerate() {
        fs::rename(tmp, dir.join(file_name(i)))?;
    }
    File::open(dir)?.sync_all()
}

fn syncfs(dir: &Path) {
    rustix::fs::syncfs(File::open(dir).expect("open dir")).expect("syncfs");
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn run(cmd: &mut Command, ok_codes: &[i32]) {
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(
        st.code().is_some_and(|c| ok_codes.contains(&c)),
        "{cmd:?} exited {st}"
    );
}

fn git(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(args);
    c
}

type Samples = BTreeMap<(M, usize), Vec<Duration>>;

fn bench_commit(o: &Opts, n: usize, samples: &mut Samples) {
    let ws = tempfile::tempdir().expect("tempdir");
    let w = ws.path();
    write_files(w, n, 4096);
    drop(Journal::init(w).expect("init"));
    let side = tempfile::tempdir().expect("tempdir");
    let redb_copy = redb_floor_file(w, side.path());
    for args in [
        &["init", "-q"][..],
        &["config", "user.email", "bench@example.invalid"],
        &["config", "user.name", "bench"],
        &["config", "commit.gpgsign", "false"],
        &["config", "gc.auto", "0"],
        &["add", "-A"],
        &["commit", "-q", "-m", "init"],
    ] {
        run(&mut git(w, args), &[0]);
    }
    let floor_proc = |sync: bool, c: &str| -> Command {
        let mode = if sync { "sync" } else { "nosync" };
        let mut cmd = match &o.floor_bin {
            Some(bin) => Command::new(bin),
            None => {
                let mut cmd = Command::new(std::env::current_exe().expect("exe"));
                cmd.env("UE_COMPARE_FLOOR", "1");
                cmd
            }
        };
        cmd.arg(mode).arg(w).arg(n.to_string()).arg(c);
        cmd
    };
    let methods = [
        M::Lib,
        M::Cli,
        M::Floor,
        M::FloorPar,
        M::FloorProc,
        M::Unsafe,
        M::UnsafeProc,
        M::Git,
        M::True,
        M::Startup,
        M::RedbFloorCommit,
    ];
    for rep in 0..=o.reps {
        for k in 0..methods.len() {
            let m = methods[(rep + k) % methods.len()];
            let tag = format!("rep {rep} {m:?}");
            let d = match m {
                M::Lib => {
                    let j = Journal::open(w).expect("open");
                    let tx = j.preview(&line1_plan(n, &tag)).expect("preview").tx;
                    syncfs(w);
                    let t = timed(|| {
                        j.commit(tx, CommitOptions::default()).expect("commit");
                    });
                    // The time until `commit` returns; its completion, written in the
                    // background after that (docs/commit-protocol.md, step 7), is
                    // waited for untimed, before the next timed operation.
                    j.flush().expect("flush");
                    t
                }
                M::Cli => {
                    let tx = {
                        let j = Journal::open(w).expect("open");
                        j.preview(&line1_plan(n, &tag)).expect("preview").tx
                    };
                    syncfs(w);
                    let mut cmd = Command::new(&o.cli);
                    cmd.arg("--root").arg(w).arg("commit").arg(tx.to_string());
                    timed(|| run(&mut cmd, &[0]))
                }
                M::Floor | M::Unsafe => {
                    let c = content(&tag);
                    syncfs(w);
                    timed(|| floor(w, n, c.as_bytes(), m == M::Floor).expect("floor"))
                }
                M::FloorPar => {
                    let c = content(&tag);
                    syncfs(w);
                    timed(|| floor_par(w, n, c.as_bytes()).expect("parallel floor"))
                }
                M::FloorProc | M::UnsafeProc => {
                    let mut cmd = floor_proc(m == M::FloorProc, &content(&tag));
                    syncfs(w);
                    timed(|| run(&mut cmd, &[0]))
                }
                M::Git => {
                    let c = content(&tag);
                    for i in 0..n {
                        fs::write(w.join(file_name(i)), &c).expect("write");
                    }
                    syncfs(w);
                    let mut add = git(w, &["add", "-A"]);
                    let mut commit = git(w, &["commit", "-q", "-m", &tag]);
                    timed(|| {
                        run(&mut add, &[0]);
                        run(&mut commit, &[0]);
                    })
                }
                M::True => {
                    syncfs(w);
                    let mut cmd = Command::new("true");
                    timed(|| run(&mut cmd, &[0]))
                }
                M::Startup => {
                    syncfs(w);
                    let mut cmd = version_cmd(o);
                    timed(|| run(&mut cmd, &[0]))
                }
                M::RedbFloorCommit => {
                    syncfs(w);
                    timed(|| redb_floor(&redb_copy, COMMIT_JOURNAL_COMMITS))
                }
                _ => unreachable!(),
            };
            if rep > 0 {
                samples.entry((m, n)).or_default().push(d);
            }
        }
    }
    // Every method must have left the same bytes: the last writer's content.
    for i in 0..n {
        let s = fs::read_to_string(w.join(file_name(i))).expect("read");
        assert!(s.starts_with("// rep ") && s.len() > 4000, "{s:.40}");
    }
    assert!(
        !fs::read_dir(w).expect("ls").any(|e| e
            .expect("e")
            .file_name()
            .to_string_lossy()
            .ends_with(".tmp")),
        "temp files left behind"
    );
}

const PREVIEW_BYTES: usize = 1 << 20;

fn bench_preview(o: &Opts, samples: &mut Samples) {
    let ws = tempfile::tempdir().expect("tempdir");
    let side = tempfile::tempdir().expect("tempdir");
    let w = ws.path();
    let old = source(PREVIEW_BYTES);
    let new = old.replacen("compute(0);", "compute(1);", 1);
    fs::write(w.join("big.rs"), &old).expect("write");
    fs::write(side.path().join("big.new"), &new).expect("write");
    let plan_json =
        br#"{"edits":[{"op":"replace_text","path":"big.rs","old":"compute(0);","new":"compute(1);"}]}"#;
    let plan_path = side.path().join("plan.json");
    fs::write(&plan_path, plan_json).expect("write");
    let plan = Plan::from_json(plan_json).expect("plan");
    drop(Journal::init(w).expect("init"));
    let redb_copy = redb_floor_file(w, side.path());
    let methods = [
        M::PreviewCli,
        M::Diff,
        M::PreviewLib,
        M::Startup,
        M::RedbFloorPreview,
    ];
    for rep in 0..=o.reps {
        for k in 0..methods.len() {
            let m = methods[(rep + k) % methods.len()];
            let d = match m {
                M::PreviewCli => {
                    let mut cmd = Command::new(&o.cli);
                    cmd.arg("--root")
                        .arg(w)
                        .arg("preview")
                        .arg("--plan")
                        .arg(&plan_path);
                    syncfs(w);
                    timed(|| run(&mut cmd, &[0]))
                }
                M::Diff => {
                    let mut cmd = Command::new("diff");
                    cmd.arg("-u")
                        .arg(w.join("big.rs"))
                        .arg(side.path().join("big.new"));
                    syncfs(w);
                    timed(|| run(&mut cmd, &[1]))
                }
                M::PreviewLib => {
                    let j = Journal::open(w).expect("open");
                    syncfs(w);
                    let t = timed(|| {
                        let p = j.preview(&plan).expect("preview");
                        assert_eq!(p.files.len(), 1);
                    });
                    drop(j);
                    t
                }
                M::Startup => {
                    let mut cmd = version_cmd(o);
                    syncfs(w);
                    timed(|| run(&mut cmd, &[0]))
                }
                M::RedbFloorPreview => {
                    syncfs(w);
                    timed(|| redb_floor(&redb_copy, PREVIEW_JOURNAL_COMMITS))
                }
                _ => unreachable!(),
            };
            if rep > 0 {
                samples.entry((m, PREVIEW_BYTES)).or_default().push(d);
            }
        }
    }
}

/// What `count` successive one-line commits to a 1 MiB file (after a first commit that
/// stores the original) add to the journal.
struct Growth {
    count: u64,
    /// journal.redb's size before/after, with the same handle open throughout.
    open: (u64, u64),
    /// journal.redb's size before/after, each time after the handle was closed.
    closed: (u64, u64),
    /// Unique blob bytes stored (`Journal::stats`), before/after.
    stored: (u64, u64),
    /// Bytes in redb's allocated pages (`Journal::allocated_bytes`), before/after, one
    /// handle kept open: the used part of the file, which grows without redb's steps.
    allocated: (u64, u64),
    /// The same commits through the CLI (a process per preview and per commit):
    /// journal.redb's size before/after, and its allocated bytes (read through a
    /// library handle opened for it) before/after.
    cli_file: (u64, u64),
    cli_allocated: (u64, u64),
    /// Median time of a preview + commit.
    median: Duration,
}

/// What [`bench_growth_windows`] measured.
struct GrowthWindows {
    /// Commits after the first.
    commits: usize,
    /// journal.redb's size after the first commit and after each later one.
    sizes: Vec<u64>,
    /// Allocated bytes, likewise.
    allocated: Vec<u64>,
}

impl GrowthWindows {
    /// Growth per commit (KiB) of the file over every window of 100 successive commits.
    fn windows(&self) -> Vec<f64> {
        (0..self.sizes.len().saturating_sub(100))
            .map(|k| (self.sizes[k + 100] - self.sizes[k]) as f64 / 100.0 / 1024.0)
            .collect()
    }
    /// The commits at which the file grew: (commit, size before, size after).
    fn steps(&self) -> Vec<(usize, u64, u64)> {
        (1..self.sizes.len())
            .filter(|&k| self.sizes[k] != self.sizes[k - 1])
            .map(|k| (k, self.sizes[k - 1], self.sizes[k]))
            .collect()
    }
}

/// The journal file's growth in every 100-commit window of a longer run of one-line
/// commits to a 1 MiB file through one handle, and over the whole run: where the
/// 100-commit figure of [`bench_growth`] falls depends on where redb's growth steps
/// fall, which this shows.
fn bench_growth_windows(commits: usize) -> GrowthWindows {
    let ws = tempfile::tempdir().expect("tempdir");
    let w = ws.path();
    fs::write(w.join("big.rs"), source(PREVIEW_BYTES)).expect("write");
    let j = Journal::init(w).expect("init");
    let mut out = GrowthWindows {
        commits,
        sizes: Vec::new(),
        allocated: Vec::new(),
    };
    for i in 0..=commits as u64 {
        let plan = Plan::from_json(
            serde_json::json!({"edits":[{"op":"replace_lines","path":"big.rs",
                "start":2 + (i * 97) % 20_000,"end":2 + (i * 97) % 20_000,
                "content":format!("// window {i}\n")}]})
            .to_string()
            .as_bytes(),
        )
        .expect("plan");
        let tx = j.preview(&plan).expect("preview").tx;
        j.commit(tx, CommitOptions::default()).expect("commit");
        j.flush().expect("flush");
        out.sizes.push(
            fs::metadata(w.join(".ultra-edit/journal.redb"))
                .expect("journal")
                .len(),
        );
        out.allocated
            .push(j.allocated_bytes().expect("allocated").unwrap_or(0));
    }
    out
}

fn bench_growth(count: u64, cli: &Path) -> Growth {
    let ws = tempfile::tempdir().expect("tempdir");
    let w = ws.path();
    fs::write(w.join("big.rs"), source(PREVIEW_BYTES)).expect("write");
    let size = || {
        fs::metadata(w.join(".ultra-edit/journal.redb"))
            .expect("journal")
            .len()
    };
    let commit_line = |j: &Journal, line: u64, text: &str| -> Duration {
        let plan = Plan::from_json(
            serde_json::json!({"edits":[{"op":"replace_lines","path":"big.rs",
                "start":line,"end":line,"content":format!("{text}\n")}]})
            .to_string()
            .as_bytes(),
        )
        .expect("plan");
        let t = Instant::now();
        let tx = j.preview(&plan).expect("preview").tx;
        j.commit(tx, CommitOptions::default()).expect("commit");
        let elapsed = t.elapsed();
        j.flush().expect("flush");
        elapsed
    };
    {
        let j = Journal::init(w).expect("init");
        commit_line(&j, 1, "// first");
    }
    let closed0 = size();
    let j = Journal::open(w).expect("open");
    let stored0 = j.stats().expect("stats").blob_bytes_unique;
    let open0 = size();
    let allocated = |j: &Journal| j.allocated_bytes().expect("allocated").unwrap_or(0);
    let allocated0 = allocated(&j);
    let mut times: Vec<Duration> = (0..count)
        .map(|i| commit_line(&j, 2 + (i * 97) % 20_000, &format!("// commit {i}")))
        .collect();
    times.sort();
    let open1 = size();
    let stored1 = j.stats().expect("stats").blob_bytes_unique;
    let allocated1 = allocated(&j);
    drop(j);
    let closed1 = size();
    // The CLI: a fresh workspace, the same first commit and the same 100.
    let cws = tempfile::tempdir().expect("tempdir");
    let c = cws.path();
    fs::write(c.join("big.rs"), source(PREVIEW_BYTES)).expect("write");
    let cli_commit = |line: u64, text: &str| {
        let plan = serde_json::json!({"edits":[{"op":"replace_lines","path":"big.rs",
            "start":line,"end":line,"content":format!("{text}\n")}]})
        .to_string();
        let out = Command::new(cli)
            .arg("--root")
            .arg(c)
            .args(["--json", "preview", "--plan", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .and_then(|mut child| {
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(plan.as_bytes())?;
                child.wait_with_output()
            })
            .expect("preview");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("preview json");
        let tx = v["tx"].as_u64().expect("tx").to_string();
        run(
            Command::new(cli).arg("--root").arg(c).args(["commit", &tx]),
            &[0],
        );
    };
    let cli_size = || {
        fs::metadata(c.join(".ultra-edit/journal.redb"))
            .expect("journal")
            .len()
    };
    let cli_allocated = || allocated(&Journal::open(c).expect("open"));
    run(Command::new(cli).arg("--root").arg(c).arg("init"), &[0]);
    cli_commit(1, "// first");
    let (cli_file0, cli_alloc0) = (cli_size(), cli_allocated());
    for i in 0..count {
        cli_commit(2 + (i * 97) % 20_000, &format!("// commit {i}"));
    }
    Growth {
        count,
        open: (open0, open1),
        closed: (closed0, closed1),
        stored: (stored0, stored1),
        allocated: (allocated0, allocated1),
        cli_file: (cli_file0, cli_size()),
        cli_allocated: (cli_alloc0, cli_allocated()),
        median: times[times.len() / 2],
    }
}

/// `Journal::open` of journals holding `o.open_sizes` committed txs, cleanly closed and
/// right after a SIGKILLed writer (a fresh fsynced copy of the killed file each time,
/// untimed). The drop (redb's clean close) is not timed.
fn bench_open(o: &Opts, samples: &mut Samples) {
    let cases: Vec<(u64, PathBuf, PathBuf, tempfile::TempDir)> = o
        .open_sizes
        .iter()
        .map(|&n| {
            let clean = support::cached_journal(n);
            let killed = support::cached_killed_journal(n);
            let work = tempfile::tempdir().expect("tempdir");
            support::copy_tree(&clean, work.path());
            (n, clean, killed, work)
        })
        .collect();
    for rep in 0..=o.reps {
        for (n, clean, killed, work) in &cases {
            let t = {
                syncfs(clean);
                let t = Instant::now();
                let j = Journal::open(clean).expect("open");
                let t = t.elapsed();
                drop(j);
                t
            };
            let journal = work.path().join(".ultra-edit/journal.redb");
            fs::copy(killed, &journal).expect("copy killed journal");
            File::open(&journal)
                .and_then(|f| f.sync_all())
                .expect("sync copy");
            syncfs(work.path());
            let tk = Instant::now();
            let j = Journal::open(work.path()).expect("open killed");
            let tk = tk.elapsed();
            drop(j);
            if rep > 0 {
                let n = *n as usize;
                samples.entry((M::OpenClean, n)).or_default().push(t);
                samples.entry((M::OpenKilled, n)).or_default().push(tk);
            }
        }
    }
}

/// Library commits of `o.linear` files of 4 KiB in one directory (preview untimed),
/// each followed by the in-process fsync floor on the same files.
fn bench_linear(o: &Opts, samples: &mut Samples) {
    for &n in &o.linear {
        let ws = tempfile::tempdir().expect("tempdir");
        write_files(ws.path(), n, 4096);
        let j = Journal::init(ws.path()).expect("init");
        for rep in 0..o.linear_reps {
            let tx = j
                .preview(&line1_plan(n, &format!("linear {rep}")))
                .expect("preview")
                .tx;
            syncfs(ws.path());
            let t = timed(|| {
                j.commit(tx, CommitOptions::default()).expect("commit");
            });
            j.flush().expect("flush");
            samples.entry((M::Linear, n)).or_default().push(t);
            let c = content(&format!("linear floor {rep}"));
            syncfs(ws.path());
            let t = timed(|| floor(ws.path(), n, c.as_bytes(), true).expect("floor"));
            samples.entry((M::LinearFloor, n)).or_default().push(t);
        }
    }
}

struct Stat {
    median: f64,
    p25: f64,
    p75: f64,
}

fn stat(v: &[Duration]) -> Stat {
    let mut ms: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let q = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    let median = if ms.len() % 2 == 1 {
        ms[ms.len() / 2]
    } else {
        (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
    };
    Stat {
        median,
        p25: q(0.25),
        p75: q(0.75),
    }
}

fn fmt_ms(s: &Stat) -> String {
    format!("{:.2} ({:.2}–{:.2})", s.median, s.p25, s.p75)
}

/// Child mode for `strace` (benches/compare.sh): in the workspace `argv[1]` of
/// `argv[2]` files, two rounds of a library commit then a rollback of it, each between
/// `BEGIN <what>` / `END <what>` lines written to stderr; the journal stays open.
fn lib_syncs() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = a[1].parse().expect("n");
    let j = Journal::open(Path::new(&a[0])).expect("open");
    for round in 0..2 {
        let tx = j
            .preview(&line1_plan(n, &format!("lib {round}")))
            .expect("preview")
            .tx;
        eprintln!("BEGIN commit");
        let r = j.commit(tx, CommitOptions::default()).expect("commit");
        // Every sync of the batch, the background completion's included.
        j.flush().expect("flush");
        eprintln!("END commit");
        eprintln!("BEGIN rollback");
        j.rollback(r.tx, ultra_edit::RollbackOptions::default())
            .expect("rollback");
        j.flush().expect("flush");
        eprintln!("END rollback");
    }
}

fn main() {
    if std::env::var_os("UE_COMPARE_FLOOR").is_some() {
        // Child mode: the floor as a process, when floor.c was not built.
        let a: Vec<String> = std::env::args().skip(1).collect();
        let n: usize = a[2].parse().expect("n");
        floor(Path::new(&a[1]), n, a[3].as_bytes(), a[0] == "sync").expect("floor");
        return;
    }
    if let Some(root) = std::env::var_os("UE_BENCH_HOLD") {
        support::hold(Path::new(&root)); // child of cached_killed_journal
    }
    if std::env::var_os("UE_COMPARE_LIB_SYNCS").is_some() {
        lib_syncs();
        return;
    }
    if let Some(commits) = std::env::var_os("UE_COMPARE_REDB_FLOOR") {
        // Child mode for strace (benches/compare.sh): the redb floor on the file argv[1].
        let commits: usize = commits.to_string_lossy().parse().expect("commits");
        let path = std::env::args_os().nth(1).expect("a redb file");
        redb_floor(Path::new(&path), commits);
        return;
    }
    let o = opts();
    assert!(
        o.cli.is_file(),
        "no ultra-edit binary at {}",
        o.cli.display()
    );
    let mut samples = Samples::new();
    let t0 = Instant::now();
    for &n in &o.sizes {
        eprintln!("compare: commit of {n} files × {} reps…", o.reps);
        bench_commit(&o, n, &mut samples);
    }
    eprintln!("compare: preview of 1 MiB × {} reps…", o.reps);
    bench_preview(&o, &mut samples);
    eprintln!(
        "compare: open of journals of {:?} txs × {} reps (generated once, cached)…",
        o.open_sizes, o.reps
    );
    bench_open(&o, &mut samples);
    eprintln!(
        "compare: commits of {:?} files × {} reps…",
        o.linear, o.linear_reps
    );
    bench_linear(&o, &mut samples);
    eprintln!("compare: journal growth over {} commits…", o.growth);
    let growth = bench_growth(o.growth, &o.cli);
    let windows = (o.growth_windows > 100).then(|| {
        eprintln!(
            "compare: journal growth in every 100-commit window of {} commits…",
            o.growth_windows
        );
        bench_growth_windows(o.growth_windows)
    });
    eprintln!("compare: done in {:.1} s", t0.elapsed().as_secs_f64());

    let s = |m: M, n: usize| stat(&samples[&(m, n)]);
    let mut md = String::new();
    if o.reps < 5 {
        md += &format!(
            "**Smoke run ({} repetition(s)): too few for the ratios to mean anything; run \
             benches/compare.sh.**\n\n",
            o.reps
        );
    }
    let floor_what = if o.floor_bin.is_some() {
        "benches/floor.c"
    } else {
        "this binary in floor mode"
    };
    md += &format!(
        "Medians of {} repetitions in ms, (25th–75th percentile); every method rewrites \
         line 1 of the same n files of 4 KiB; the process floor is {floor_what}.\n\n",
        o.reps
    );
    md += "| n files | ultra-edit lib | ultra-edit CLI | fsync floor (in-process) | parallel fsync floor (in-process) | fsync floor (process) | unsafe (in-process) | unsafe (process) | git add -A && git commit | /bin/true |\n";
    md += "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for &n in &o.sizes {
        md += &format!("| {n} |");
        for m in [
            M::Lib,
            M::Cli,
            M::Floor,
            M::FloorPar,
            M::FloorProc,
            M::Unsafe,
            M::UnsafeProc,
            M::Git,
            M::True,
        ] {
            md += &format!(" {} |", fmt_ms(&s(m, n)));
        }
        md += "\n";
    }
    md += &format!(
        "\nPreview of one small edit in a 1 MiB file: ultra-edit CLI {}, ultra-edit lib \
         (in-process) {}, `diff -u` of the same pair {}.\n\n",
        fmt_ms(&s(M::PreviewCli, PREVIEW_BYTES)),
        fmt_ms(&s(M::PreviewLib, PREVIEW_BYTES)),
        fmt_ms(&s(M::Diff, PREVIEW_BYTES)),
    );
    md += "| journal of n committed txs | open, cleanly closed | open right after a SIGKILLed writer |\n";
    md += "|---:|---:|---:|\n";
    for &n in &o.open_sizes {
        md += &format!(
            "| {n} | {} | {} |\n",
            fmt_ms(&s(M::OpenClean, n as usize)),
            fmt_ms(&s(M::OpenKilled, n as usize))
        );
    }
    md += "\n";
    for &n in &o.linear {
        let st = s(M::Linear, n);
        let fl = s(M::LinearFloor, n);
        md += &format!(
            "Library commit of {n} files of 4 KiB ({} runs, each followed by the in-process \
             floor on the same files): {} ms, {:.3} ms per file; floor {} ms, {:.3} ms per \
             file; ratio {:.2}×.  \n",
            o.linear_reps,
            fmt_ms(&st),
            st.median / n as f64,
            fmt_ms(&fl),
            fl.median / n as f64,
            st.median / fl.median,
        );
    }
    md += "\n";
    md += "| comparison | n | ultra-edit ms | baseline ms | ratio | target | |\n";
    md += "|---|---:|---:|---:|---:|---:|---|\n";
    // The targets of docs/benchmarks.md, "Targets": library and CLI against their floors.
    let lib_target = |n: usize| match n {
        1 => Some(3.0),
        10 => Some(1.2),
        100 => Some(0.8),
        _ => None,
    };
    let cli_target = |n: usize| match n {
        1 => Some(2.5),
        10 => Some(1.4),
        100 => Some(0.9),
        _ => None,
    };
    let par_target = |n: usize| (n == 100).then_some(1.2);
    let no_target = |_: usize| None;
    let mut row = |what: &str, n: String, a: f64, b: f64, t: Option<f64>| {
        let r = a / b;
        let (ts, verdict) = match t {
            Some(t) if r <= t => (format!("≤ {t}×"), "met"),
            Some(t) => (format!("≤ {t}×"), "**missed**"),
            None => ("—".into(), ""),
        };
        md += &format!("| {what} | {n} | {a:.2} | {b:.2} | {r:.2}× | {ts} | {verdict} |\n");
    };
    type Target = fn(usize) -> Option<f64>;
    let rows: [(&str, M, M, Target); 7] = [
        (
            "commit: lib vs fsync floor, in-process",
            M::Lib,
            M::Floor,
            lib_target,
        ),
        (
            "commit: lib vs parallel fsync floor, in-process",
            M::Lib,
            M::FloorPar,
            par_target,
        ),
        (
            "parallel fsync floor vs fsync floor, in-process",
            M::FloorPar,
            M::Floor,
            no_target,
        ),
        (
            "commit: CLI vs fsync floor, processes",
            M::Cli,
            M::FloorProc,
            cli_target,
        ),
        (
            "commit: lib vs unsafe temp+rename, in-process",
            M::Lib,
            M::Unsafe,
            no_target,
        ),
        (
            "commit: CLI vs unsafe temp+rename, processes",
            M::Cli,
            M::UnsafeProc,
            no_target,
        ),
        (
            "commit: CLI vs git add -A && git commit",
            M::Cli,
            M::Git,
            no_target,
        ),
    ];
    for (what, ue, base, target) in rows {
        for &n in &o.sizes {
            row(
                what,
                n.to_string(),
                s(ue, n).median,
                s(base, n).median,
                target(n),
            );
        }
    }
    row(
        "preview 1 MiB: CLI vs `diff -u`, processes",
        "1".into(),
        s(M::PreviewCli, PREVIEW_BYTES).median,
        s(M::Diff, PREVIEW_BYTES).median,
        Some(1.0),
    );
    let empty_clean = s(M::OpenClean, 0).median;
    let empty_killed = s(M::OpenKilled, 0).median;
    for &n in o.open_sizes.iter().filter(|&&n| n > 0) {
        let n = n as usize;
        row(
            "open+recover: n txs vs empty journal, clean",
            n.to_string(),
            s(M::OpenClean, n).median,
            empty_clean,
            Some(1.5),
        );
        row(
            "open+recover after SIGKILL: n txs vs empty journal after SIGKILL",
            n.to_string(),
            s(M::OpenKilled, n).median,
            empty_killed,
            Some(1.5),
        );
        row(
            "open+recover after SIGKILL: n txs vs empty journal, clean",
            n.to_string(),
            s(M::OpenKilled, n).median,
            empty_clean,
            Some(1.5),
        );
    }
    if let (Some(&a), Some(&b)) = (o.linear.first(), o.linear.last()) {
        if b > a {
            let per = |n: usize| s(M::Linear, n).median / n as f64;
            row(
                &format!(
                    "commit ms per file (lib): {b} files vs {a} files (target: linear; \
                     the 1.25× tolerance is this script's)"
                ),
                format!("{b}"),
                per(b),
                per(a),
                Some(1.25),
            );
            row(
                &format!("commit of {b} files: lib vs fsync floor, in-process"),
                format!("{b}"),
                s(M::Linear, b).median,
                s(M::LinearFloor, b).median,
                None,
            );
        }
    }
    // Lower bounds: what a CLI process cannot avoid here, without any work of ultra-edit's.
    md += &format!(
        "\nLower bound of a CLI process on redb 4.6 in MultiWriter mode, medians in ms: \
         start-up (`ultra-edit --version`) + redb floor (open for writing, k empty `Immediate` \
         commits, close: 1 + 2k + 4 syncs; k = {COMMIT_JOURNAL_COMMITS} for a commit, \
         {PREVIEW_JOURNAL_COMMITS} for a preview) + the files' own syncs (the faster of the \
         in-process fsync floor and the parallel one; none for a preview). When the bound alone exceeds the target × its baseline, \
         the target cannot be met with this journal on this machine.\n\n\
         | figure | n | start-up | redb floor | file syncs | lower bound | target × baseline | measured | |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n"
    );
    let mut bound_row = |what: &str,
                         n: usize,
                         parts: [f64; 3],
                         target: Option<f64>,
                         base: f64,
                         measured: f64| {
        let bound: f64 = parts.iter().sum();
        let (allowed, verdict) = match target {
            Some(t) if bound > t * base => (
                format!("{t} × {base:.2} = {:.2}", t * base),
                "**impossible here**",
            ),
            Some(t) => (
                format!("{t} × {base:.2} = {:.2}", t * base),
                "not ruled out",
            ),
            None => ("—".into(), ""),
        };
        md += &format!(
                "| {what} | {n} | {:.2} | {:.2} | {:.2} | {bound:.2} | {allowed} | {measured:.2} | {verdict} |\n",
                parts[0], parts[1], parts[2]
            );
    };
    for &n in &o.sizes {
        bound_row(
            "CLI commit vs fsync floor (process)",
            n,
            [
                s(M::Startup, n).median,
                s(M::RedbFloorCommit, n).median,
                // the files made durable the faster way: one after another, or concurrently
                // as the commit stages them
                s(M::Floor, n).median.min(s(M::FloorPar, n).median),
            ],
            cli_target(n),
            s(M::FloorProc, n).median,
            s(M::Cli, n).median,
        );
    }
    bound_row(
        "CLI preview 1 MiB vs `diff -u`",
        1,
        [
            s(M::Startup, PREVIEW_BYTES).median,
            s(M::RedbFloorPreview, PREVIEW_BYTES).median,
            0.0,
        ],
        Some(1.0),
        s(M::Diff, PREVIEW_BYTES).median,
        s(M::PreviewCli, PREVIEW_BYTES).median,
    );
    let g = &growth;
    let per = |(a, b): (u64, u64)| b.saturating_sub(a) as f64 / g.count as f64 / 1024.0;
    let verdict = |kib: f64| if kib <= 16.0 { "met" } else { "**missed**" };
    md += &format!(
        "\nJournal growth over {} successive one-line commits to a 1 MiB file (target ≤ 16 KiB \
         per commit on average; median preview + commit {:.1} ms):\n\n\
         | measured as | before | after | per commit | target ≤ 16 KiB |\n\
         |---|---:|---:|---:|---|\n\
         | journal.redb size, one handle kept open (an embedder) | {:.2} MiB | {:.2} MiB | {:.1} KiB | {} |\n\
         | journal.redb size, each measured after closing the handle | {:.2} MiB | {:.2} MiB | {:.1} KiB | {} |\n\
         | journal.redb size through the CLI (a process per preview and per commit) | {:.2} MiB | {:.2} MiB | {:.1} KiB | {} |\n\
         | allocated pages (`Journal::allocated_bytes`), one handle kept open | {:.2} MiB | {:.2} MiB | {:.1} KiB | {} |\n\
         | allocated pages (`Journal::allocated_bytes`), through the CLI | {:.2} MiB | {:.2} MiB | {:.1} KiB | {} |\n\
         | unique blob bytes stored (`Journal::stats`) | {:.2} MiB | {:.2} MiB | {:.1} KiB | — |\n\n\
         The file grows in redb's steps (it doubles its usable size when a write needs \
         room, and trims the free tail when the last handle closes), so its figure is 0 or \
         one step of about the journal's size, depending on where the window falls; the \
         allocated pages are what the commits use.\n",
        g.count,
        g.median.as_secs_f64() * 1e3,
        g.open.0 as f64 / 1048576.0,
        g.open.1 as f64 / 1048576.0,
        per(g.open),
        verdict(per(g.open)),
        g.closed.0 as f64 / 1048576.0,
        g.closed.1 as f64 / 1048576.0,
        per(g.closed),
        verdict(per(g.closed)),
        g.cli_file.0 as f64 / 1048576.0,
        g.cli_file.1 as f64 / 1048576.0,
        per(g.cli_file),
        verdict(per(g.cli_file)),
        g.allocated.0 as f64 / 1048576.0,
        g.allocated.1 as f64 / 1048576.0,
        per(g.allocated),
        verdict(per(g.allocated)),
        g.cli_allocated.0 as f64 / 1048576.0,
        g.cli_allocated.1 as f64 / 1048576.0,
        per(g.cli_allocated),
        verdict(per(g.cli_allocated)),
        g.stored.0 as f64 / 1048576.0,
        g.stored.1 as f64 / 1048576.0,
        per(g.stored),
    );
    if let Some(gw) = &windows {
        let mut win = gw.windows();
        win.sort_by(f64::total_cmp);
        let over = win.iter().filter(|k| **k > 16.0).count();
        let last = gw.commits;
        let whole = |v: &[u64]| (v[last] - v[0]) as f64 / last as f64 / 1024.0;
        let steps: Vec<String> = gw
            .steps()
            .iter()
            .map(|(k, a, b)| {
                format!(
                    "at commit {k}: {:.2} → {:.2} MiB",
                    *a as f64 / 1048576.0,
                    *b as f64 / 1048576.0
                )
            })
            .collect();
        md += &format!(
            "\nThe same commits, {last} of them through one handle, journal.redb's size \
             after each: its growth per commit over each of the {} windows of 100 \
             successive commits — min {:.1}, median {:.1}, max {:.1} KiB; {over} windows \
             ({:.0} %) over 16 KiB. Over the whole run the file grew {:.1} KiB per commit \
             and the allocated pages {:.1} KiB. redb's growth steps: {}.\n",
            win.len(),
            win.first().copied().unwrap_or(0.0),
            win.get(win.len() / 2).copied().unwrap_or(0.0),
            win.last().copied().unwrap_or(0.0),
            100.0 * over as f64 / win.len().max(1) as f64,
            whole(&gw.sizes),
            whole(&gw.allocated),
            if steps.is_empty() {
                "none".to_string()
            } else {
                steps.join("; ")
            },
        );
    }
    println!("{md}");
    if let Some(out) = &o.out {
        fs::write(out, &md).expect("write --out");
    }
}
