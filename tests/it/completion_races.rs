//! The completion written after `commit`/`rollback` returned (docs/commit-protocol.md,
//! steps 6–7), under races: one handle used from several threads, a failed completion
//! followed by more calls on the same handle, a reingest hook calling back into the
//! journal, and gc right after a commit. Every loop is bounded by count and time.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ultra_edit::{Journal, RollbackOptions, TxState};

use crate::support::hooked::{BackendOp, Hooked, COMPLETION_THREAD};
use crate::support::*;

/// Files under the root whose names look like the batch's temp files.
fn temps(root: &std::path::Path) -> Vec<String> {
    tree_state(root)
        .into_keys()
        .filter(|p| p.contains(".ue-") || p.contains(".tmp"))
        .collect()
}

fn edit(n: usize) -> String {
    format!(r#"{{"edits":[{{"op":"replace_file","path":"f{n}.txt","content":"new {n}\n"}}]}}"#)
}

/// One handle, shared by threads: one commits and rolls back in turn while the others
/// preview, log, show, stats and abort their own txs. Every commit returned shows as
/// committed to every later call, with exactly one receipt.
#[test]
fn one_handle_shared_by_threads_keeps_one_receipt_per_commit() {
    let ws = workspace();
    for n in 0..8 {
        ws.write(&format!("f{n}.txt"), b"old\n");
    }
    let j = &ws.journal;
    let deadline = Instant::now() + Duration::from_secs(20);
    let stop = AtomicBool::new(false);
    let receipts = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for n in 0..8 {
                if Instant::now() > deadline {
                    break;
                }
                let p = j.preview(&plan(&edit(n))).unwrap();
                let r = j.commit(p.tx, Default::default()).unwrap();
                // No flush: the next call on this thread sees it committed.
                assert_eq!(j.tx(p.tx).unwrap().state, TxState::Committed);
                receipts.lock().unwrap().push(r.clone());
                if n % 2 == 0 {
                    let back = j.rollback(p.tx, RollbackOptions::default()).unwrap();
                    assert_eq!(j.tx(p.tx).unwrap().state, TxState::RolledBack);
                    receipts.lock().unwrap().push(back);
                }
            }
            stop.store(true, Ordering::SeqCst);
        });
        for k in 0..3 {
            let stop = &stop;
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) && i < 400 && Instant::now() < deadline {
                    i += 1;
                    match (i + k) % 4 {
                        0 => {
                            j.log(Some(5)).unwrap();
                        }
                        1 => {
                            j.stats().unwrap();
                        }
                        2 => {
                            let p = j
                                .preview(&plan(r#"{"edits":[{"op":"create_file","path":"other.txt","content":"x\n"}]}"#))
                                .unwrap();
                            j.abort(p.tx).unwrap();
                        }
                        _ => {
                            j.flush().unwrap();
                        }
                    }
                }
            });
        }
    });
    j.flush().unwrap();
    j.flush().unwrap();
    let receipts = receipts.into_inner().unwrap();
    assert_eq!(receipts.len(), 12);
    for r in &receipts {
        assert!(!r.by_recovery);
        assert_eq!(receipts_of(j, r.tx), vec![r.batch], "tx {}", r.tx);
    }
    assert!(temps(ws.root()).is_empty(), "{:?}", temps(ws.root()));
    assert!(j.verify().unwrap().ok);
}

/// Commit, an immediate rollback, another commit, no flush between: each sees the
/// previous one completed; a handle dropped right after a commit leaves it recorded.
#[test]
fn commit_rollback_commit_without_flush_then_drop() {
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let j = Journal::open(ws.root()).unwrap();
    let p = j.preview(&plan(&edit(0))).unwrap();
    let a = j.commit(p.tx, Default::default()).unwrap();
    let b = j.rollback(p.tx, RollbackOptions::default()).unwrap();
    let c = j.rollback(b.tx, RollbackOptions::default()).unwrap();
    drop(j);
    assert_eq!(ws.read("f0.txt"), b"new 0\n");
    for r in [&a, &b, &c] {
        assert_eq!(receipts_of(&ws.journal, r.tx), vec![r.batch]);
    }
    // Rolling back the rollback redoes the commit: the original is committed again.
    assert_eq!(ws.journal.tx(a.tx).unwrap().state, TxState::Committed);
    assert_eq!(ws.journal.tx(b.tx).unwrap().state, TxState::RolledBack);
    assert_eq!(ws.journal.tx(c.tx).unwrap().state, TxState::Committed);
}

/// A reingest hook that calls back into the journal through another handle (log, and a
/// commit of its own) while this handle's completion holds the commit lock: no
/// deadlock, both commits recorded once.
#[test]
fn a_reingest_hook_calling_back_into_the_journal_does_not_deadlock() {
    let mut ws = workspace();
    ws.write("f0.txt", b"old\n");
    ws.write("f1.txt", b"old\n");
    let second = ws.preview(&edit(1)).tx;
    let root = ws.root().to_path_buf();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let out = seen.clone();
    let once = AtomicUsize::new(0);
    ws.journal.set_reingest_hook(move |_paths| {
        if once.fetch_add(1, Ordering::SeqCst) > 0 {
            return;
        }
        let other = Journal::open(&root).map_err(|e| e.to_string());
        let res = other.and_then(|o| {
            o.log(None).map_err(|e| e.to_string())?;
            let r = o
                .commit(second, Default::default())
                .map_err(|e| e.to_string())?;
            o.flush().map_err(|e| e.to_string())?;
            Ok(r)
        });
        out.lock().unwrap().push(res);
    });
    let p = ws.preview(&edit(0));
    let (tx, rx) = std::sync::mpsc::channel();
    let j = &ws.journal;
    std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(j.commit(p.tx, Default::default()));
        });
        let r = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("commit with a reingest hook calling back hung");
        let r = r.unwrap();
        assert_eq!(receipts_of(j, r.tx), vec![r.batch]);
    });
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let inner = seen[0].as_ref().unwrap();
    assert_eq!(receipts_of(&ws.journal, second), vec![inner.batch]);
    assert_eq!(ws.read("f1.txt"), b"new 1\n");
}

/// Open a handle on `ws`'s journal whose first completion write fails with ENOSPC.
fn journal_whose_completion_fails(ws: &Ws) -> Journal {
    let fail = Arc::new(AtomicBool::new(true));
    let backend = Hooked::on_journal_of(ws.root(), move |op| {
        if op == BackendOp::Write
            && std::thread::current().name() == Some(COMPLETION_THREAD)
            && fail.swap(false, Ordering::SeqCst)
        {
            return Err(io::Error::from_raw_os_error(28));
        }
        Ok(())
    });
    backend.open_journal(ws.root())
}

/// The completion's journal write fails with an I/O error. redb then refuses every
/// later use of that handle (its `PreviousIo`: "close and re-open the database"),
/// which the journal reports as the typed `JournalError::HandleFailed` (kind
/// `journal_handle_failed`, next step "retry": a new handle works) — that is what
/// another call on the handle gets, its own failure. The completion's own failure,
/// `CompletionNotRecorded` naming the landed files, goes to the flush of its tx only,
/// once: on a handle shared by several callers, another caller's `flush_tx` does not
/// receive it. A new handle's recovery records the batch with the returned receipt,
/// exactly once, and commits go on through it.
#[test]
fn a_failed_completion_is_reported_once_to_its_own_flush_and_a_new_handle_goes_on() {
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    ws.write("f1.txt", b"old\n");
    let p = ws.preview(&edit(0));
    let q = ws.preview(&edit(1));
    let a = journal_whose_completion_fails(&ws);
    let r = a.commit(p.tx, Default::default()).unwrap();
    assert_eq!(ws.read("f0.txt"), b"new 0\n");
    let other = a.log(None).unwrap_err();
    assert!(
        matches!(
            &other,
            ultra_edit::Error::Journal(ultra_edit::JournalError::HandleFailed { .. })
        ),
        "{other:?}"
    );
    assert_eq!(other.kind(), "journal_handle_failed");
    assert_eq!(other.next_step(), Some(ultra_edit::NextStep::Retry));
    // Another caller's flush of its own tx: nothing of its own failed.
    assert!(a.flush_tx(q.tx).is_ok());
    match a.flush_tx(r.tx) {
        Err(ultra_edit::Error::NeedsAttention {
            tx,
            batch,
            attention: ultra_edit::Attention::CompletionNotRecorded { files, .. },
        }) => assert_eq!(
            (tx, batch, files),
            (r.tx, r.batch, vec!["f0.txt".to_string()])
        ),
        other => panic!("{other:?}"),
    }
    // Reported once.
    assert!(a.flush_tx(r.tx).is_ok());
    assert!(a.flush().is_ok());
    drop(a);
    let j = Journal::open(ws.root()).unwrap();
    assert_eq!(receipts_of(&j, p.tx), vec![r.batch]);
    assert_eq!(j.tx(p.tx).unwrap().state, TxState::Committed);
    let c = j.commit(q.tx, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(receipts_of(&j, q.tx), vec![c.batch]);
    assert_eq!(ws.read("f1.txt"), b"new 1\n");
}

/// `flush` without a tx reports the oldest failure not yet reported, once, the same
/// error `flush_tx` would have given.
#[test]
fn flush_reports_a_failed_completion_once() {
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let p = ws.preview(&edit(0));
    let a = journal_whose_completion_fails(&ws);
    let r = a.commit(p.tx, Default::default()).unwrap();
    let e = a.flush().unwrap_err();
    assert_eq!((e.kind(), e.tx()), ("needs_attention", Some(r.tx)));
    assert!(a.flush().is_ok());
    assert!(a.flush_tx(r.tx).is_ok());
}

/// The MCP tools over a handle whose completion fails: the commit landed, so
/// edit_commit answers it — the receipt, the files written, reingested — with the
/// journal's failure as `journal_attention` (outcome `will_land`), not as an error an
/// agent would read as "not written" and retry. The next call on the failed handle
/// says `journal_handle_failed`; a new handle records the commit once.
#[test]
fn the_tools_answer_a_landed_commit_whose_completion_failed_with_journal_attention() {
    use serde_json::json;
    use ultra_edit::mcp::EditTools;
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let hooked = Arc::new(Mutex::new(Vec::new()));
    let seen = hooked.clone();
    let tools = EditTools::new(Arc::new(journal_whose_completion_fails(&ws)))
        .with_reingest_hook(move |paths| seen.lock().unwrap().extend(paths.to_vec()));
    let v = tools
        .call(
            "edit_preview",
            json!({"agent_id": "a", "edits": [
                {"op": "replace_file", "path": "f0.txt", "content": "new\n"}]}),
        )
        .unwrap();
    let id = v["preview_id"].as_str().unwrap().to_string();
    let v = tools
        .call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(ws.read("f0.txt"), b"new\n");
    assert_eq!(v["bytes_written"], 4, "{v}");
    assert_eq!(v["reingested"], true, "{v}");
    assert_eq!(v["receipt"]["tx"], 1, "{v}");
    assert_eq!(v["journal_attention"]["kind"], "needs_attention", "{v}");
    assert_eq!(v["journal_attention"]["outcome"], "will_land", "{v}");
    assert_eq!(*hooked.lock().unwrap(), vec!["f0.txt".to_string()]);
    let e = tools.call("journal_log", json!({})).unwrap_err();
    assert_eq!(e.kind, "journal_handle_failed", "{e:?}");
    drop(tools);
    let j = Journal::open(ws.root()).unwrap();
    assert_eq!(j.tx(1).unwrap().state, TxState::Committed);
    assert_eq!(receipts_of(&j, 1).len(), 1);
}

/// The MCP server after `journal_handle_failed`: the failed call answers its error,
/// saying the journal was reopened, and the next calls go through a new handle, whose
/// recovery on open recorded the landed commit (once) — the server does not refuse
/// every call until it is restarted.
#[test]
fn the_server_reopens_its_journal_after_journal_handle_failed() {
    use serde_json::json;
    use ultra_edit::mcp::{EditTools, McpServer};
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    ws.write("f1.txt", b"old\n");
    let root = ws.root().to_path_buf();
    let reopened = Arc::new(AtomicUsize::new(0));
    let count = reopened.clone();
    let server = McpServer::new(EditTools::new(Arc::new(journal_whose_completion_fails(
        &ws,
    ))))
    .with_reopen(move || {
        count.fetch_add(1, Ordering::SeqCst);
        Ok(EditTools::new(Arc::new(Journal::open(&root)?)))
    });
    let commit = |n: usize| {
        let v = server
            .call(
                "edit_preview",
                json!({"agent_id": "a", "edits": [
                    {"op": "replace_file", "path": format!("f{n}.txt"), "content": "new\n"}]}),
            )
            .unwrap_or_else(|e| panic!("{e:?}"));
        let id = v["preview_id"].as_str().unwrap().to_string();
        server.call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
    };
    let v = commit(0).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(v["journal_attention"]["outcome"], "will_land", "{v}");
    let e = server.call("journal_log", json!({})).unwrap_err();
    assert_eq!(e.kind, "journal_handle_failed", "{e:?}");
    assert!(
        e.hint.starts_with("the server reopened its journal"),
        "{e:?}"
    );
    assert_eq!(reopened.load(Ordering::SeqCst), 1);
    let v = commit(1).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(v.get("journal_attention").is_none(), "{v}");
    assert_eq!(reopened.load(Ordering::SeqCst), 1);
    assert_eq!(ws.read("f1.txt"), b"new\n");
    let j = server.tools();
    let j = j.journal();
    j.flush().unwrap();
    for tx in [1, 2] {
        assert_eq!(j.tx(tx).unwrap().state, TxState::Committed, "tx {tx}");
        assert_eq!(receipts_of(j, tx).len(), 1, "tx {tx}");
    }
}

/// gc (with compaction) right after a commit, no flush: compaction happens (the
/// completion's thread gave back its reference) and the commit is recorded once.
#[test]
fn gc_right_after_a_commit_compacts_and_keeps_the_receipt() {
    let mut ws = workspace();
    ws.write("f0.txt", b"old\n");
    let p = ws.preview(&edit(0));
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    let report = ws
        .journal
        .gc(ultra_edit::GcPolicy {
            keep_last: Some(10),
            ..Default::default()
        })
        .unwrap();
    assert!(report.compacted, "{report:?}");
    assert_eq!(receipts_of(&ws.journal, r.tx), vec![r.batch]);
}

/// The MCP tools over one shared handle, called from several threads at once (as the
/// server's blocking pool does): apply_batch and edit_preview + edit_commit on two
/// threads, journal_log and journal_dump on a third. Every call answers; every commit
/// shows in the log as committed with one receipt.
#[test]
fn the_tools_over_one_handle_answer_concurrent_commits_and_logs() {
    use serde_json::json;
    use ultra_edit::mcp::EditTools;
    let ws = workspace();
    for n in 0..12 {
        ws.write(&format!("f{n}.txt"), b"old\n");
    }
    let tools = EditTools::new(Arc::new(Journal::open(ws.root()).unwrap()));
    let deadline = Instant::now() + Duration::from_secs(20);
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for n in 0..6 {
                let v = tools
                    .call(
                        "apply_batch",
                        json!({"agent_id": "a", "atomic": true, "edits": [
                            {"file_path": format!("f{n}.txt"), "new_content": format!("a {n}\n")}]}),
                    )
                    .unwrap_or_else(|e| panic!("apply_batch {n}: {e:?}"));
                assert_eq!(v["files_written"], 1, "{v}");
            }
            done.fetch_add(1, Ordering::SeqCst);
        });
        s.spawn(|| {
            for n in 6..12 {
                let v = tools
                    .call(
                        "edit_preview",
                        json!({"agent_id": "b", "edits": [
                            {"op": "replace_file", "path": format!("f{n}.txt"), "content": format!("b {n}\n")}]}),
                    )
                    .unwrap_or_else(|e| panic!("edit_preview {n}: {e:?}"));
                let id = v["preview_id"].as_str().unwrap().to_string();
                tools
                    .call(
                        "edit_commit",
                        json!({"preview_id": id, "agent_id": "b", "confirm": true}),
                    )
                    .unwrap_or_else(|e| panic!("edit_commit {n}: {e:?}"));
            }
            done.fetch_add(1, Ordering::SeqCst);
        });
        s.spawn(|| {
            let mut i = 0;
            while done.load(Ordering::SeqCst) < 2 && i < 500 && Instant::now() < deadline {
                i += 1;
                tools
                    .call("journal_log", json!({}))
                    .unwrap_or_else(|e| panic!("journal_log: {e:?}"));
                tools
                    .call("journal_dump", json!({"limit": 5}))
                    .unwrap_or_else(|e| panic!("journal_dump: {e:?}"));
            }
        });
    });
    let j = tools.journal();
    for n in 0..12 {
        let want = if n < 6 {
            format!("a {n}\n")
        } else {
            format!("b {n}\n")
        };
        assert_eq!(ws.read(&format!("f{n}.txt")), want.as_bytes());
    }
    let log = j.log(None).unwrap();
    assert_eq!(log.len(), 12);
    for e in &log {
        assert_eq!(e.state, TxState::Committed, "tx {}", e.tx);
        assert_eq!(receipts_of(j, e.tx).len(), 1, "tx {}", e.tx);
    }
    assert!(temps(ws.root()).is_empty());
}

/// A reingest hook that panics: the commit landed and its receipt is recorded, so the
/// caller must get that receipt, not `Panicked` (which reads as "the commit failed" and
/// invites a retry of a change already on disk). Rollback likewise.
#[test]
fn a_panicking_reingest_hook_does_not_turn_a_landed_commit_into_an_error() {
    let mut ws = workspace();
    ws.write("f0.txt", b"old\n");
    ws.journal.set_reingest_hook(|_| panic!("indexer broke"));
    let p = ws.preview(&edit(0));
    let r = ws.journal.commit(p.tx, Default::default());
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("f0.txt"), b"new 0\n");
    assert_eq!(ws.journal.tx(p.tx).unwrap().state, TxState::Committed);
    let batches = receipts_of(&ws.journal, p.tx);
    assert_eq!(batches.len(), 1);
    let r = r.unwrap();
    assert_eq!(r.batch, batches[0]);
    assert!(!r.by_recovery);
    let back = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.read("f0.txt"), b"old\n");
    assert_eq!(receipts_of(&ws.journal, back.tx), vec![back.batch]);
    assert_eq!(ws.journal.tx(p.tx).unwrap().state, TxState::RolledBack);
}

/// The MCP tools' own reingest hook panics: the tool call still answers with the
/// commit (which landed), `reingested: false`, instead of the panic unwinding out of
/// `EditTools::call` into the embedder.
#[test]
fn a_panicking_tools_reingest_hook_answers_the_commit_with_reingested_false() {
    use serde_json::json;
    use ultra_edit::mcp::EditTools;
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let tools = EditTools::new(Arc::new(Journal::open(ws.root()).unwrap()))
        .with_reingest_hook(|_| panic!("indexer broke"));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tools.call(
            "apply_batch",
            json!({"agent_id": "a", "atomic": true, "edits": [
                {"file_path": "f0.txt", "new_content": "new\n"}]}),
        )
    }));
    let v = out
        .expect("the hook's panic unwound out of EditTools::call")
        .unwrap();
    assert_eq!(v["files_written"], 1, "{v}");
    assert_eq!(v["reingested"], false, "{v}");
    assert_eq!(ws.read("f0.txt"), b"new\n");
    let j = tools.journal();
    assert_eq!(j.tx(1).unwrap().state, TxState::Committed);
    assert_eq!(receipts_of(j, 1).len(), 1);
}

/// While handle A's completion is held (its lock too), another handle reads: log,
/// dump, stats, verify, touched answer at once and say the batch is in flight (not an
/// error, not a problem of the journal); recover and abort of the tx wait for the lock
/// and then see it committed.
#[test]
fn another_handle_reads_verifies_and_recovers_while_a_completion_is_pending() {
    use crate::support::hooked::journal_with_completion_held;
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let tx = ws.preview(&edit(0)).tx;
    let (a, gate) = journal_with_completion_held(ws.root());
    let r = a.commit(tx, Default::default()).unwrap();
    let b = &ws.journal;
    assert_eq!(b.tx(tx).unwrap().state, TxState::Open);
    assert_eq!(b.log(None).unwrap().len(), 1);
    b.stats().unwrap();
    let report = b.verify().unwrap();
    assert!(report.ok, "{report:?}");
    std::thread::scope(|s| {
        let recovering = s.spawn(|| b.recover());
        let aborting = s.spawn(|| b.abort(tx));
        std::thread::sleep(Duration::from_millis(200));
        // Recovery needs the commit lock, which A's completion holds: it waits. Abort
        // does not take the commit lock (docs/embedding.md: aborting one tx never waits
        // for another tx's batch); it waits at most for the journal write that A's
        // completion may have begun, so whether it has returned by now depends on
        // the scheduling, and only its answer is checked.
        if recovering.is_finished() {
            gate.set(true);
            panic!(
                "recover returned while A's lock was held: {:?}",
                recovering.join()
            );
        }
        gate.set(true);
        let rec = recovering.join().unwrap().unwrap();
        assert_eq!(rec.completed, Vec::<u64>::new(), "{rec:?}");
        let ab = aborting.join().unwrap();
        assert!(
            matches!(ab, Err(ultra_edit::Error::WrongState { .. })),
            "{ab:?}"
        );
    });
    a.flush().unwrap();
    assert_eq!(receipts_of(b, tx), vec![r.batch]);
    assert_eq!(b.tx(tx).unwrap().state, TxState::Committed);
}

/// A retried commit while the first is still committing (handle A's completion held,
/// its lock too): the retry through another handle waits for the lock instead of
/// answering `wrong_state` (batch in flight), then answers A's receipt with
/// `already: true` and writes nothing more.
#[test]
fn a_commit_retried_while_the_first_is_committing_waits_and_answers_already() {
    use crate::support::hooked::journal_with_completion_held;
    let ws = workspace();
    ws.write("f0.txt", b"old\n");
    let tx = ws.preview(&edit(0)).tx;
    let (a, gate) = journal_with_completion_held(ws.root());
    let r = a.commit(tx, Default::default()).unwrap();
    let b = &ws.journal;
    std::thread::scope(|s| {
        let retry = s.spawn(|| b.commit_report(tx, Default::default()));
        // Bounded: at most 200 ms before the gate opens.
        std::thread::sleep(Duration::from_millis(200));
        let early = retry.is_finished();
        gate.set(true);
        let report = retry.join().unwrap();
        let report = report.unwrap_or_else(|e| panic!("retry refused: {} {e}", e.kind()));
        if rustix::process::geteuid().is_root() {
            assert!(!early, "the retry returned while A's lock was held");
        }
        assert!(report.already);
        assert_eq!(report.receipt.batch, r.batch);
        assert_eq!(report.receipt.tx, tx);
    });
    a.flush().unwrap();
    assert_eq!(ws.read("f0.txt"), b"new 0\n");
    assert_eq!(receipts_of(b, tx), vec![r.batch]);
    assert_eq!(b.tx(tx).unwrap().state, TxState::Committed);
}
