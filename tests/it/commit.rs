use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fs2::FileExt;
use ultra_edit::{
    BatchKind, BatchState, BlobHash, DumpFilter, Error, EventKind, Journal, OpenOptions, TxState,
};

use crate::support::faultfs::{FaultFs, Op};
use crate::support::*;

const FIVE_FILES: &str = r#"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
    {"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper_a"},
    {"op":"delete_file","path":"run.sh"},
    {"op":"create_file","path":"docs/new/guide.md","content":"guide\n","mode":420},
    {"op":"replace_lines","path":"crlf.txt","start":1,"end":1,"content":"ONE"}]}"#;

#[test]
fn atomic_commit_produces_single_receipt() {
    let mut ws = workspace();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    ws.journal
        .set_reingest_hook(move |paths| seen.lock().unwrap().push(paths.to_vec()));
    let p = ws.preview(FIVE_FILES);
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(r.tx, p.tx);
    assert_eq!(r.kind, BatchKind::Commit { revision: 0 });
    let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "crlf.txt",
            "docs/new/guide.md",
            "run.sh",
            "src/a.rs",
            "src/lib.rs"
        ]
    );
    assert_eq!(r.created_dirs, ["docs", "docs/new"]);
    assert_eq!(receipts_of(&ws.journal, p.tx), vec![r.batch]);
    assert_eq!(
        *calls.lock().unwrap(),
        vec![paths.iter().map(|s| s.to_string()).collect::<Vec<_>>()]
    );
    // A second commit of the same tx answers the first receipt (`already`), writes
    // nothing and issues no receipt.
    let again = ws.journal.commit_report(p.tx, Default::default()).unwrap();
    assert!(again.already);
    assert_eq!(again.receipt, r);
    assert_eq!(receipts_of(&ws.journal, p.tx).len(), 1);
    assert_eq!(calls.lock().unwrap().len(), 1);
    // Disk holds exactly the candidates.
    assert_eq!(
        ws.read("src/lib.rs"),
        b"pub mod a;\npub mod b;\n\nfn helper() -> u32 {\n    10\n}\n"
    );
    assert_eq!(ws.read("crlf.txt"), b"ONE\r\ntwo\r\nthree\r\n");
    assert_eq!(ws.read("docs/new/guide.md"), b"guide\n");
    assert_eq!(ws.mode("docs/new/guide.md"), 0o644);
    assert!(!ws.path("run.sh").exists());
    assert_eq!(ws.journal.log(None).unwrap()[0].state, TxState::Committed);
}

#[test]
fn candidate_and_commit_diff_match() {
    let ws = workspace();
    let p = ws.preview(FIVE_FILES);
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    for f in &p.files {
        let on_disk = std::fs::read(ws.path(&f.path)).ok();
        let disk_diff = ultra_edit::edit::candidate_diff(
            &f.path,
            f.snapshot
                .hash()
                .map(|h| ws.journal.blob(&h).unwrap().unwrap())
                .as_deref(),
            on_disk.as_deref(),
        );
        // The recorded diff adds git's mode header lines to the diff of the bytes.
        let header = match (f.snapshot.mode(), f.candidate.mode()) {
            (None, Some(m)) => format!("new file mode {:o}\n", 0o100000 | m),
            (Some(m), None) => format!("deleted file mode {:o}\n", 0o100000 | m),
            (Some(a), Some(b)) if a != b => {
                format!("old mode {:o}\nnew mode {:o}\n", 0o100000 | a, 0o100000 | b)
            }
            _ => String::new(),
        };
        let expected = ultra_edit::edit::CandidateDiff {
            unified: header + &disk_diff.unified,
            ..disk_diff
        };
        assert_eq!(expected, f.diff, "{}", f.path);
        assert_eq!(
            on_disk.as_deref().map(BlobHash::of),
            f.candidate.hash(),
            "{}",
            f.path
        );
        let rf = r.files.iter().find(|x| x.path == f.path).unwrap();
        // A created file's post-image records the owner the commit gave it (the
        // process's: no set-group-ID directory here), which the candidate cannot know.
        let mut post = f.candidate;
        if let ultra_edit::FileState::File { meta, .. } = &mut post {
            meta.owner.get_or_insert(ultra_edit::Owner {
                uid: rustix::process::geteuid().as_raw(),
                gid: rustix::process::getegid().as_raw(),
            });
        }
        assert_eq!((rf.pre, rf.post), (f.snapshot, post));
    }
    // Modes: an edited file keeps its mode.
    assert_eq!(ws.mode("src/lib.rs"), 0o644);
}

#[test]
fn commit_rejects_stale_preview() {
    let ws = workspace();
    let p = ws.preview(FIVE_FILES);
    ws.write("src/a.rs", b"someone else's edit\n");
    let before = ws.tree();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    match &err {
        Error::StaleSnapshot { tx, paths, .. } => {
            assert_eq!(*tx, p.tx);
            assert_eq!(paths, &vec!["src/a.rs".to_string()]);
        }
        other => panic!("expected StaleSnapshot, got {other:?}"),
    }
    assert_eq!(err.exit_code(), 3);
    assert!(err.to_string().contains("rebase"), "{err}");
    assert_eq!(ws.tree(), before);
    // A file a create_file expected absent that now exists is stale too.
    let q = ws.preview(r#"{"edits":[{"op":"create_file","path":"late.txt","content":"mine"}]}"#);
    ws.write("late.txt", b"theirs");
    assert!(matches!(
        ws.journal.commit(q.tx, Default::default()),
        Err(Error::StaleSnapshot { .. })
    ));
    assert_eq!(ws.read("late.txt"), b"theirs");
    // A chmod counts as a change too.
    let m = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    5"}]}"#,
    );
    std::fs::set_permissions(
        ws.path("src/b.rs"),
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    assert!(matches!(
        ws.journal.commit(m.tx, Default::default()),
        Err(Error::StaleSnapshot { .. })
    ));
}

#[test]
fn commit_requires_lock() {
    let mut ws = workspace();
    let p = ws.preview(FIVE_FILES);
    let before = ws.tree();
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path(".ultra-edit/commit.lock"))
        .unwrap();
    lock.lock_exclusive().unwrap();
    std::fs::write(
        ws.path(".ultra-edit/commit.lock"),
        std::process::id().to_string(),
    )
    .unwrap();
    ws.journal.set_lock_timeout(Duration::from_millis(300));
    let start = Instant::now();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    let waited = start.elapsed();
    match &err {
        Error::LockTimeout {
            holder, waited_ms, ..
        } => {
            assert_eq!(*holder, Some(std::process::id()));
            assert!(*waited_ms >= 300, "{waited_ms}");
        }
        other => panic!("expected LockTimeout, got {other:?}"),
    }
    assert!(waited >= Duration::from_millis(300));
    assert_eq!(err.exit_code(), 5);
    assert_eq!(ws.tree(), before);
    // Released: the same commit goes through.
    FileExt::unlock(&lock).unwrap();
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
}

#[test]
fn commit_all_or_nothing_when_one_file_is_unwritable() {
    // EACCES on the rename of the 4th of 5 files (after three renames landed), ENOSPC
    // on a temp write, and EIO on a directory fsync: every one leaves the tree exactly
    // as before, the batch Aborted with the cause, and the tx committable.
    for (op, suffix, errno) in [
        (Op::Rename, "src/a.rs", 13),
        (Op::WriteSynced, "docs/new/.ue-1-", 28),
        (Op::SyncDir, "/src", 5),
        (Op::RemoveFile, "run.sh", 13),
    ] {
        let ws = workspace();
        let p = ws.preview(FIVE_FILES);
        let before = ws.tree();
        let faulty = Journal::open_with(
            ws.root(),
            OpenOptions::default().with_fs(Arc::new(
                FaultFs::fail(op, suffix, errno).beneath(ws.root()),
            )),
        )
        .unwrap();
        let err = faulty.commit(p.tx, Default::default()).unwrap_err();
        match &err {
            Error::CommitFailed { tx, cause, .. } => {
                assert_eq!(*tx, p.tx);
                assert_eq!(cause.raw_os_error(), Some(errno), "{op:?}: {err}");
            }
            other => panic!("{op:?}: expected CommitFailed, got {other:?}"),
        }
        assert_eq!(ws.tree(), before, "{op:?} left the tree changed");
        let mut states = Vec::new();
        ws.journal
            .dump(DumpFilter::new().with_tx(p.tx), |e| {
                if let EventKind::BatchState { state, note, .. } = e.event.kind {
                    states.push((state, note.is_some()));
                }
                Ok(true)
            })
            .unwrap();
        let last = states.last().copied();
        assert_eq!(
            last,
            Some((BatchState::Aborted, true)),
            "{op:?}: {states:?}"
        );
        // Nothing is stuck: the same tx commits with a healthy filesystem.
        ws.journal.commit(p.tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        assert_eq!(ws.read("docs/new/guide.md"), b"guide\n");
    }
}

#[test]
fn a_second_process_can_show_and_commit_a_tx_the_first_created() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    7"}]}"#),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap();
    let shown = json_of(&cli(ws.root(), &["--json", "show", &tx.to_string()], None));
    assert_eq!(shown["files"][0]["path"], "src/b.rs");
    assert_eq!(shown["files"][0]["diff"]["lines_added"], 1);
    let committed = cli(ws.root(), &["--json", "commit", &tx.to_string()], None);
    assert!(
        committed.status.success(),
        "{}",
        String::from_utf8_lossy(&committed.stderr)
    );
    assert_eq!(json_of(&committed)["tx"].as_u64(), Some(tx));
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    7\n}\n");
    // And this process's handle, open all along, sees it.
    assert_eq!(ws.journal.show(tx, None).unwrap().state, TxState::Committed);
}

/// The completion of a commit is written after `commit` returned, by a background
/// thread that holds the commit lock until it is durable (docs/commit-protocol.md,
/// step 6). Meanwhile another handle (as another process would) sees the tx not yet
/// committed, and its own commit waits for the lock; once it gets it, the first batch
/// is `Committed` by its own completion — the second committer did not recover it —
/// and each tx has exactly one receipt.
#[test]
fn another_handle_committing_waits_for_a_pending_completion_and_does_not_recover_it() {
    use crate::support::hooked::journal_with_completion_held;
    let ws = workspace();
    let a_tx = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    11\n"}]}"#)
        .tx;
    let b_tx = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper_b"}]}"#)
        .tx;
    // Handle A: its completion's thread waits at its first journal write until the
    // gate opens.
    let (a, gate) = journal_with_completion_held(ws.root());
    let receipt = a.commit(a_tx, Default::default()).unwrap();
    assert!(!receipt.by_recovery);
    // Landed: the file holds its new bytes; the journal has not recorded it yet.
    assert!(ws.read("src/lib.rs").ends_with(b"    11\n}\n"));
    assert_eq!(ws.journal.show(a_tx, None).unwrap().state, TxState::Open);
    assert!(receipts_of(&ws.journal, a_tx).is_empty());
    // Handle B commits its own tx: it needs the lock, which A's completion holds.
    let b = std::thread::scope(|s| {
        let committing = s.spawn(|| ws.journal.commit(b_tx, Default::default()));
        std::thread::sleep(Duration::from_millis(300));
        if committing.is_finished() {
            gate.set(true);
            panic!(
                "B's commit returned while A's lock was held: {:?}",
                committing.join()
            );
        }
        gate.set(true);
        committing.join().unwrap()
    });
    let b = b.unwrap();
    a.flush().unwrap();
    ws.journal.flush().unwrap();
    assert!(!b.by_recovery);
    for (tx, batch) in [(a_tx, receipt.batch), (b_tx, b.batch)] {
        assert_eq!(receipts_of(&ws.journal, tx), vec![batch], "tx {tx}");
        assert_eq!(ws.journal.show(tx, None).unwrap().state, TxState::Committed);
    }
    // A's receipt as recorded is the one A returned: written by A's completion, not by
    // a recovery in B.
    let mut recorded = Vec::new();
    ws.journal
        .dump(DumpFilter::new().with_tx(a_tx), |e| {
            if let Some(ultra_edit::DumpDetail::Receipt(r)) = e.detail {
                recorded.push(r);
            }
            Ok(true)
        })
        .unwrap();
    assert_eq!(recorded, vec![receipt]);
}

/// Every call on the handle after `commit` returned waits for its completion: the
/// handle never shows its own commit as still open. (A failed completion's error:
/// `tests/it/powercut.rs`, `a_cut_at_each_sync_of_the_background_completion_…`.)
#[test]
fn the_committing_handle_reads_its_own_commit_without_a_flush() {
    let ws = workspace();
    let p = ws.preview(FIVE_FILES);
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    // No flush: `show` waits for the completion itself.
    assert_eq!(
        ws.journal.show(p.tx, None).unwrap().state,
        TxState::Committed
    );
    assert_eq!(receipts_of(&ws.journal, p.tx), vec![r.batch]);
    ws.journal.flush().unwrap();
    ws.journal.flush().unwrap();
}

/// With `set_completion_inline`, the completion is written on the calling thread
/// before `commit` returns: no journal write runs on the completion thread, and another
/// handle sees the tx committed, with the returned receipt, at once.
#[test]
fn an_inline_completion_is_recorded_before_commit_returns_on_the_calling_thread() {
    use crate::support::hooked::{Hooked, COMPLETION_THREAD};
    let ws = workspace();
    let tx = ws.preview(FIVE_FILES).tx;
    let threads = Arc::new(Mutex::new(Vec::new()));
    let seen = threads.clone();
    let backend = Hooked::on_journal_of(ws.root(), move |_| {
        let name = std::thread::current().name().map(str::to_string);
        seen.lock().unwrap().push(name);
        Ok(())
    });
    let mut a = backend.open_journal(ws.root());
    a.set_completion_inline(true);
    threads.lock().unwrap().clear();
    let receipt = a.commit(tx, Default::default()).unwrap();
    assert_eq!(ws.journal.show(tx, None).unwrap().state, TxState::Committed);
    assert_eq!(receipts_of(&ws.journal, tx), vec![receipt.batch]);
    let names = threads.lock().unwrap().clone();
    assert!(!names.is_empty());
    assert!(
        names
            .iter()
            .all(|n| n.as_deref() != Some(COMPLETION_THREAD)),
        "{names:?}"
    );
    a.flush().unwrap();
    assert!(ws.read("src/lib.rs").ends_with(b"    10\n}\n"));
}

/// Found by the breaker: the install holds each replaced inode open (up to 256), and
/// under a low open-file limit those descriptors took the ones the next file's re-read
/// needs (EMFILE on about the 45th of 300 files at `ulimit -n 64`). The holds now take
/// at most a quarter of the soft limit: the same commit lands.
#[test]
fn a_commit_of_300_files_lands_under_an_open_file_limit_of_64() {
    let ws = workspace();
    let mut edits = Vec::new();
    for i in 0..300 {
        ws.write(&format!("many/f{i:03}.txt"), b"a\n");
        edits.push(format!(
            r#"{{"op":"replace_text","path":"many/f{i:03}.txt","old":"a","new":"b"}}"#
        ));
    }
    let p = ws.preview(&format!(r#"{{"edits":[{}]}}"#, edits.join(",")));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" --root "$1" --json commit "$2""#)
        .arg(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg(ws.root())
        .arg(p.tx.to_string())
        .env_remove("FAILPOINTS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["files"].as_array().map(Vec::len), Some(300));
    for i in 0..300 {
        assert_eq!(ws.read(&format!("many/f{i:03}.txt")), b"b\n");
    }
}

/// The CLI run on `root` with `args` and `stdin` at `ulimit -u 1`: no thread can be
/// started (for a normal user; RLIMIT_NPROC does not bind root).
fn at_thread_limit(root: &std::path::Path, args: &[&str], stdin: &str) -> std::process::Output {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(r#"ulimit -u 1 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(root)
        .args(args)
        .env_remove("FAILPOINTS");
    output_with_stdin(cmd, stdin)
}

/// Where no thread can be started (a process or cgroup thread limit reached), the
/// preview's parallel diffs and the commit's staging pool do their work on the calling
/// thread: they used to panic ("failed to spawn thread"), reported as a damaged
/// journal. RLIMIT_NPROC does not bind root, so this runs in the normal-user pass
/// (scripts/test-as-user.sh).
#[test]
fn preview_and_commit_work_where_no_thread_can_be_started() {
    if rustix::process::geteuid().is_root() {
        eprintln!("skipped: RLIMIT_NPROC does not limit root (runs in scripts/test-as-user.sh)");
        return;
    }
    let ws = workspace();
    let body: String = (0..600)
        .map(|j| format!("fn f{j}() -> u32 {{\n    {j}\n}}\n"))
        .collect();
    let mut edits = Vec::new();
    for i in 0..30 {
        ws.write(&format!("t/f{i:02}.rs"), body.as_bytes());
        edits.push(
            serde_json::json!({"op": "replace_text", "path": format!("t/f{i:02}.rs"),
            "old": "fn f5() -> u32 {\n    5\n", "new": "fn f5() -> u32 {\n    -5\n"}),
        );
    }
    let plan = serde_json::json!({ "edits": edits }).to_string();
    let limited = |args: &[&str], stdin: &str| at_thread_limit(ws.root(), args, stdin);
    let out = limited(&["--json", "preview", "--plan", "-"], &plan);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let tx = json_of(&out)["tx"].as_u64().unwrap();
    let out = limited(&["--json", "commit", &tx.to_string()], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["files"].as_array().map(Vec::len), Some(30));
    for i in 0..30 {
        assert_eq!(
            ws.read(&format!("t/f{i:02}.rs")),
            body.replace("fn f5() -> u32 {\n    5\n", "fn f5() -> u32 {\n    -5\n")
                .as_bytes()
        );
    }
}

/// A file over 8 MiB is read by two threads (`fs::read_ahead`) in the gate, the splice,
/// the install's check and a rollback's check; where the second thread cannot be
/// started, it is read on the calling thread alone. A commit failed there with "read
/// big.txt: Resource temporarily unavailable" (found by the breaker of the detached
/// release, which cannot fork here either and frees in place). Preview, commit and
/// rollback of a one-line edit, exact bytes each way. Runs in the normal-user pass, as
/// the test above.
#[test]
fn a_large_file_commits_and_rolls_back_where_no_thread_can_be_started() {
    if rustix::process::geteuid().is_root() {
        eprintln!("skipped: RLIMIT_NPROC does not limit root (runs in scripts/test-as-user.sh)");
        return;
    }
    let ws = workspace();
    // 10 MiB of numbered 32-byte lines: line i (1-based) at byte 32 * (i - 1).
    let mut big = Vec::with_capacity(10 << 20);
    for i in 1..=(10 << 20) / 32 {
        big.extend_from_slice(format!("line {i:010} payload .......\n").as_bytes());
    }
    ws.write("big.txt", &big);
    let at = 199_999 * 32;
    let post = [&big[..at], b"CHANGED\n".as_slice(), &big[at + 32..]].concat();
    let limited = |args: &[&str], stdin: &str| at_thread_limit(ws.root(), args, stdin);
    let plan = r#"{"edits":[{"op":"replace_lines","path":"big.txt","start":200000,"end":200000,"content":"CHANGED\n"}]}"#;
    let out = limited(&["--json", "preview", "--plan", "-"], plan);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    let out = limited(&["--json", "commit", &tx], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        json_of(&out)["bytes_written"].as_u64(),
        Some(post.len() as u64)
    );
    assert_eq!(blake3::hash(&ws.read("big.txt")), blake3::hash(&post));
    let out = limited(&["--json", "rollback", &tx], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(blake3::hash(&ws.read("big.txt")), blake3::hash(&big));
}

/// A damaged chunk of a post-image over 8 MiB, which the commit streams from the
/// journal into its temp: the commit refuses with the typed damaged-blob error
/// (`blob_chunks`, the chunk and blob named, and what it is: the file, the batch and the
/// tx), the real file keeps its exact bytes, no temp is left, and the batch is aborted.
/// The chunk is damaged by flipping one byte of the edited line, wherever it is in the
/// closed journal file (redb may hold older copies of a page): the commit reads it from
/// the journal, since the disk file has the old line there (the chunks the post-image
/// shares with the file on disk are copied from the disk, `journal::splice`: damage in
/// one of those is not read by a commit, and `journal verify` names it).
#[test]
fn a_damaged_chunk_of_a_streamed_post_image_refuses_the_commit_and_changes_nothing() {
    use ultra_edit::JournalError;
    let ws = workspace();
    // 10 MiB of numbered 32-byte lines: line i (1-based) at byte 32 * (i - 1).
    let mut big = Vec::with_capacity(10 << 20);
    for i in 1..=(10 << 20) / 32 {
        big.extend_from_slice(format!("line {i:010} payload .......\n").as_bytes());
    }
    ws.write("big.txt", &big);
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_lines","path":"big.txt","start":200000,"end":200000,"content":"CHANGED\n"}]}"#,
    );
    let at = 199_999 * 32;
    let post = [&big[..at], b"CHANGED\n".as_slice(), &big[at + 32..]].concat();
    let post_hash = blake3::hash(&post);
    let before = ws.tree();
    let Ws { dir, journal } = ws;
    drop(journal);
    let db = dir.path().join(".ultra-edit/journal.redb");
    let mut bytes = std::fs::read(&db).unwrap();
    let needle = b"CHANGED\n";
    let mut flipped = 0;
    let mut from = 0;
    while let Some(k) = bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
    {
        bytes[from + k + 1] ^= 0x20;
        flipped += 1;
        from += k + needle.len();
    }
    assert!(flipped >= 1, "the edited line is stored in a chunk");
    std::fs::write(&db, &bytes).unwrap();
    let ws = Ws {
        journal: Journal::open(dir.path()).unwrap(),
        dir,
    };
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    let Error::Journal(JournalError::Corrupt { table, message }) = &err else {
        panic!("expected a damaged-blob error, got {err:?}");
    };
    assert_eq!(*table, "blob_chunks", "{err}");
    let mut batches = Vec::new();
    ws.journal
        .dump(DumpFilter::new().with_tx(p.tx), |e| {
            if let EventKind::BatchState { batch, state, .. } = e.event.kind {
                batches.push((batch, state));
            }
            Ok(true)
        })
        .unwrap();
    let batch = batches[0].0;
    assert_eq!(
        batches.last(),
        Some(&(batch, BatchState::Aborted)),
        "{batches:?}"
    );
    assert!(
        message.starts_with("chunk ")
            && message.contains(&format!(
                " of blob {} holds bytes that hash to ",
                post_hash.to_hex()
            ))
            && message.ends_with(&format!(
                " (it is the new content of big.txt that batch {batch} of tx {} writes)",
                p.tx
            )),
        "{message}"
    );
    assert!(ws.read("big.txt") == big, "big.txt changed");
    assert_eq!(ws.tree(), before, "the tree changed (a temp left?)");
}
