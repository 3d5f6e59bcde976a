//! Count the syncs of a commit through the library's I/O layer: the number
//! docs/commit-protocol.md derives, so that an extra sync, or a missing one, fails.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ultra_edit::{Journal, OpenOptions};

use crate::support::faultfs::{FaultFs, Op};
use crate::support::hooked::{BackendOp, Gate, Hooked, COMPLETION_THREAD};
use crate::support::*;

/// The syncs of one batch: file fsyncs, directory fsyncs, and journal syncs made on
/// the caller's side (before `commit` returned) and by the background completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Syncs {
    files: usize,
    dirs: usize,
    journal: usize,
    completion: usize,
}

/// What a [`Counted`] journal and file system record.
struct Counted {
    journal: Journal,
    fs: Arc<FaultFs>,
    /// Journal syncs on any thread but the completion's.
    syncs: Arc<AtomicUsize>,
    /// Journal syncs on the completion's thread.
    completion_syncs: Arc<AtomicUsize>,
    /// Closed: the completion's thread waits at its first journal write.
    gate: Arc<Gate>,
}

impl Counted {
    /// The syncs since `mark` (from [`Counted::mark`]).
    fn since(&self, mark: (usize, usize, usize)) -> Syncs {
        let log = self.fs.log()[mark.0..].to_vec();
        Syncs {
            files: log.iter().filter(|(op, _)| *op == Op::WriteSynced).count(),
            dirs: log.iter().filter(|(op, _)| *op == Op::SyncDir).count(),
            journal: self.syncs.load(Ordering::SeqCst) - mark.1,
            completion: self.completion_syncs.load(Ordering::SeqCst) - mark.2,
        }
    }
    fn mark(&self) -> (usize, usize, usize) {
        (
            self.fs.log().len(),
            self.syncs.load(Ordering::SeqCst),
            self.completion_syncs.load(Ordering::SeqCst),
        )
    }

    /// Run `batch` with the completion held at its gate: the syncs made before `batch`
    /// returned (the critical path), then those after the gate opened and `flush`
    /// returned (all of them).
    fn batch(&self, batch: impl FnOnce(&Journal)) -> (Syncs, Syncs) {
        let mark = self.mark();
        self.gate.set(false);
        batch(&self.journal);
        let returned = self.since(mark);
        self.gate.set(true);
        self.journal.flush().unwrap();
        (returned, self.since(mark))
    }
}

/// The syncs of one commit of `plan`, before it returned and after `flush`.
fn count(ws: &Ws, plan_json: &str) -> (Syncs, Syncs) {
    let c = open_counted(ws);
    // redb's first commits after an open also persist its allocator state (one more
    // sync each); two previews by this handle reach the steady state, then the
    // commit's syncs are counted.
    let tx = c.journal.preview(&plan(plan_json)).unwrap().tx;
    c.journal.preview(&plan(plan_json)).unwrap();
    c.batch(|j| {
        j.commit(tx, Default::default()).unwrap();
    })
}

/// `ws`'s journal opened on a file system that logs its operations and a journal
/// backend that counts its syncs, by thread.
fn open_counted(ws: &Ws) -> Counted {
    let syncs = Arc::new(AtomicUsize::new(0));
    let completion_syncs = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(Gate::default());
    gate.set(true);
    let resized = std::sync::atomic::AtomicBool::new(false);
    let (counter, on_completion, held) = (syncs.clone(), completion_syncs.clone(), gate.clone());
    // Not counted: the sync redb makes when it grows the file, a sync with no write
    // since the last `set_len`.
    let backend = Hooked::on_journal_of(ws.root(), move |op| {
        let completion = std::thread::current().name() == Some(COMPLETION_THREAD);
        if completion {
            held.pass();
        }
        match op {
            BackendOp::Sync if resized.swap(false, Ordering::SeqCst) => {}
            BackendOp::Sync if completion => {
                on_completion.fetch_add(1, Ordering::SeqCst);
            }
            BackendOp::Sync => {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            BackendOp::SetLen => resized.store(true, Ordering::SeqCst),
            BackendOp::Write => resized.store(false, Ordering::SeqCst),
        }
        Ok(())
    });
    let fs = Arc::new(FaultFs::default().beneath(ws.root()));
    let journal = Journal::open_with(
        ws.root(),
        OpenOptions::default()
            .with_fs(fs.clone())
            .with_journal_backend(Box::new(backend)),
    )
    .unwrap();
    Counted {
        journal,
        fs,
        syncs,
        completion_syncs,
        gate,
    }
}

#[test]
fn a_commit_performs_exactly_the_documented_syncs() {
    for n in [1usize, 10, 100] {
        let ws = workspace();
        for i in 0..n {
            ws.write(&format!("d/f{i}.txt"), format!("old {i}\n").as_bytes());
        }
        let edits: Vec<_> = (0..n)
            .map(|i| serde_json::json!({"op":"replace_file","path":format!("d/f{i}.txt"),"content":format!("new {i}\n")}))
            .collect();
        let (returned, total) = count(&ws, &serde_json::json!({ "edits": edits }).to_string());
        // Before `commit` returns: n temp-file fsyncs, 1 directory fsync and the intent
        // (the commit point), one journal commit of JOURNAL_SYNCS_PER_COMMIT syncs:
        // n + 3. The completion, one more journal commit, comes after: n + 5 in all.
        let one = JOURNAL_SYNCS_PER_COMMIT;
        assert_eq!(
            returned,
            Syncs {
                files: n,
                dirs: 1,
                journal: one,
                completion: 0
            },
            "n = {n}, before commit returned"
        );
        assert_eq!(
            total,
            Syncs {
                files: n,
                dirs: 1,
                journal: one,
                completion: one
            },
            "n = {n}, after flush"
        );
    }
    // Deletions need no file fsync; a created directory adds its parent's fsync.
    let ws = workspace();
    let (returned, total) = count(
        &ws,
        r#"{"edits":[{"op":"delete_file","path":"run.sh"},{"op":"create_file","path":"new/x.txt","content":"x"}]}"#,
    );
    let one = JOURNAL_SYNCS_PER_COMMIT;
    assert_eq!(
        returned,
        Syncs {
            files: 1,
            dirs: 2,
            journal: one,
            completion: 0
        }
    );
    assert_eq!(
        total,
        Syncs {
            files: 1,
            dirs: 2,
            journal: one,
            completion: one
        }
    );
}

#[test]
fn a_rollback_performs_exactly_the_documented_syncs() {
    // A rollback is a batch like a commit: its intent (which also creates the rollback
    // tx) is its commit point, then the completion, after `rollback` returned.
    let ws = workspace();
    for i in 0..10 {
        ws.write(&format!("d/f{i}.txt"), format!("old {i}\n").as_bytes());
    }
    let edits: Vec<_> = (0..10)
        .map(|i| serde_json::json!({"op":"replace_file","path":format!("d/f{i}.txt"),"content":format!("new {i}\n")}))
        .collect();
    let c = open_counted(&ws);
    let tx = c
        .journal
        .preview(&plan(&serde_json::json!({ "edits": edits }).to_string()))
        .unwrap()
        .tx;
    c.journal.commit(tx, Default::default()).unwrap();
    c.journal.flush().unwrap();
    let (returned, total) = c.batch(|j| {
        j.rollback(tx, Default::default()).unwrap();
    });
    let one = JOURNAL_SYNCS_PER_COMMIT;
    assert_eq!(
        returned,
        Syncs {
            files: 10,
            dirs: 1,
            journal: one,
            completion: 0
        }
    );
    assert_eq!(
        total,
        Syncs {
            files: 10,
            dirs: 1,
            journal: one,
            completion: one
        }
    );
    assert_eq!(ws.read("d/f3.txt"), b"old 3\n");
}

/// redb 4.6 in MultiWriter mode syncs a `Durability::Immediate` commit this many times
/// (measured by this test's counting backend; see docs/commit-protocol.md).
const JOURNAL_SYNCS_PER_COMMIT: usize = 2;

/// What `strace -f` saw of one CLI process (strace is installed by `.ci/run`).
struct CliSyncs {
    /// `fsync`, `fdatasync`, `sync_file_range` and `syncfs` calls.
    syncs: usize,
    /// Times redb grew `journal.redb`: an `ftruncate` of it to more than its largest
    /// size so far, which redb follows with a sync of the new length (redb 4.6
    /// `TransactionalMemory::grow`). Whether a process grows the file depends on the
    /// journal's layout (the previous process's close trims it), not on the protocol.
    journal_growths: usize,
}

/// The calls of `trace` (strace's `-e trace=` list) that one CLI process on `root`
/// made, as `strace -f -y` prints them; `None` without strace or its ptrace permission.
fn cli_trace(root: &std::path::Path, trace: &str, args: &[&str]) -> Option<String> {
    let log = tempfile::NamedTempFile::new().unwrap();
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-y", "-o"])
        .arg(log.path())
        .args(["-e", &format!("trace={trace}")])
        .arg(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("FAILPOINTS")
        .output()
        .ok()?;
    if !out.status.success() {
        // strace missing its ptrace permission, or the command failed: say which.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("strace:"), "{args:?}: {}", text(&out));
        return None;
    }
    Some(std::fs::read_to_string(log.path()).unwrap())
}

/// One CLI process under `strace -f`; `None` without strace.
fn cli_syncs(root: &std::path::Path, args: &[&str]) -> Option<CliSyncs> {
    let journal = root.join(".ultra-edit/journal.redb");
    let size_before = std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(0);
    let calls = cli_trace(
        root,
        "fsync,fdatasync,sync_file_range,syncfs,ftruncate",
        args,
    )?;
    // A call another thread interrupts is split in two lines ("<unfinished ...>", then
    // "<... fsync resumed>"): count the first.
    let syncs = calls
        .lines()
        .filter(|l| !l.contains(" resumed>"))
        .filter(|l| {
            ["fsync(", "fdatasync(", "sync_file_range(", "syncfs("]
                .iter()
                .any(|c| l.contains(c))
        })
        .count();
    let mut largest = size_before;
    let mut journal_growths = 0;
    for l in calls
        .lines()
        .filter(|l| l.contains("ftruncate(") && l.contains("journal.redb>"))
    {
        // "ftruncate(4</…/journal.redb>, 274432) = 0", or "… 274432 <unfinished ...>"
        // when another thread interrupts it.
        let len: u64 = l
            .split_once("journal.redb>, ")
            .map(|(_, rest)| {
                rest.bytes()
                    .take_while(u8::is_ascii_digit)
                    .fold(0, |n, d| n * 10 + u64::from(d - b'0'))
            })
            .unwrap_or_else(|| panic!("unparsed strace line {l:?}"));
        if len > largest {
            journal_growths += 1;
            largest = len;
        }
    }
    Some(CliSyncs {
        syncs,
        journal_growths,
    })
}

/// What redb 4.6 in MultiWriter mode adds to any process that opens the journal for
/// writing: 1 sync when it opens the file (the header marks it open), 4 when it closes
/// it (a commit recording the allocator state, 2 syncs, and the shutdown header,
/// 2 flushes). `benches/compare.rs`'s redb floor (open, empty commits, close) makes the
/// same (docs/commit-protocol.md, "Syncs of a CLI process").
const REDB_OPEN_SYNCS: usize = 1;
const REDB_CLOSE_SYNCS: usize = 4;

#[test]
fn cli_reading_verbs_sync_nothing_and_a_commit_process_syncs_the_documented_count() {
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    2\n"}]}"#)
        .tx
        .to_string();
    // The CLI is the only process on the journal (a handle left open elsewhere changes
    // what redb writes on open).
    let Ws { dir, journal } = ws;
    drop(journal);
    let root = dir.path();
    let Some(log) = cli_syncs(root, &["log"]) else {
        println!("SKIPPED cli sync counts: strace is not installed or cannot trace here");
        return;
    };
    assert_eq!((log.syncs, log.journal_growths), (0, 0), "log");
    for args in [
        &["show", tx.as_str()][..],
        &["--json", "log"],
        &["journal", "dump"],
        &["journal", "stats"],
        &["journal", "verify"],
    ] {
        let c = cli_syncs(root, args).unwrap();
        assert_eq!((c.syncs, c.journal_growths), (0, 0), "{args:?}");
    }
    // One file replaced in one directory: 1 temp fsync + 1 directory fsync, the 2
    // journal commits of the protocol (2 syncs each), redb's open (1) and close (4),
    // and one sync per time redb grew the file.
    let commit = cli_syncs(root, &["commit", &tx]).unwrap();
    assert_eq!(
        commit.syncs,
        1 + 1
            + 2 * JOURNAL_SYNCS_PER_COMMIT
            + REDB_OPEN_SYNCS
            + REDB_CLOSE_SYNCS
            + commit.journal_growths,
        "growths {}",
        commit.journal_growths
    );
    // A preview process: one journal commit, and the same open and close.
    let plan = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        plan.path(),
        r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    2\n","new":"    3\n"}]}"#,
    )
    .unwrap();
    let plan_path = plan.path().to_str().unwrap();
    let preview = cli_syncs(root, &["preview", "--plan", plan_path]).unwrap();
    assert_eq!(
        preview.syncs,
        JOURNAL_SYNCS_PER_COMMIT + REDB_OPEN_SYNCS + REDB_CLOSE_SYNCS + preview.journal_growths,
        "growths {}",
        preview.journal_growths
    );
    // Reading verbs stay at 0 after a commit.
    let log = cli_syncs(root, &["log"]).unwrap();
    assert_eq!((log.syncs, log.journal_growths), (0, 0));
}

/// With a batch in flight, a reading verb opens the journal for writing, because the
/// recovery it runs on open writes: the interrupted commit is rolled forward and `log`
/// shows it committed.
#[cfg(feature = "failpoints")]
#[test]
fn a_reading_verb_still_recovers_a_batch_in_flight() {
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    2\n"}]}"#)
        .tx
        .to_string();
    let out = run_ue(
        ws.root(),
        &["commit", &tx],
        Some("batch::after_stage=return"),
    );
    assert_eq!(
        out.status.code(),
        None,
        "aborted by the failpoint: {}",
        text(&out)
    );
    let out = run_ue(ws.root(), &["--json", "log"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        json_of(&out)["txs"][0]["state"],
        "committed",
        "{}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("recover"),
        "{}",
        text(&out)
    );
    assert!(ws.read("src/lib.rs").ends_with(b"    2\n}\n"));
}

/// The file-level system calls of one CLI commit (docs/commit-protocol.md, steps 3–5):
/// each file it replaces is opened exactly three times — the gate's read (bytes and
/// extended attributes through one descriptor), the re-check just before its rename,
/// and the `O_PATH` hold on the inode the rename replaces — and the workspace root's
/// descriptor is used as it is, never duplicated per operation. Either was twice as
/// many system calls before (docs/benchmarks.md, "The CLI process").
#[test]
fn a_cli_commit_opens_each_file_it_replaces_three_times() {
    let ws = workspace();
    ws.write("top.rs", b"fn top() {}\n");
    let tx = ws
        .preview(
            r#"{"edits":[
                {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    2\n"},
                {"op":"replace_file","path":"top.rs","content":"fn top() { 1 }\n"}]}"#,
        )
        .tx
        .to_string();
    let Ws { dir, journal } = ws;
    drop(journal);
    let root = dir.path();
    let Some(calls) = cli_trace(root, "openat,fcntl", &["commit", &tx]) else {
        println!("SKIPPED cli open counts: strace is not installed or cannot trace here");
        return;
    };
    let opens_of = |name: &str| {
        calls
            .lines()
            .filter(|l| l.contains("openat(") && l.contains(&format!(", \"{name}\", ")))
            .count()
    };
    assert_eq!((opens_of("lib.rs"), opens_of("top.rs")), (3, 3), "{calls}");
    let root_dups = calls
        .lines()
        .filter(|l| l.contains("F_DUPFD") && l.contains(&format!("<{}>", root.display())))
        .count();
    assert_eq!(root_dups, 0, "{calls}");
    assert_eq!(
        std::fs::read(root.join("top.rs")).unwrap(),
        b"fn top() { 1 }\n"
    );
}
