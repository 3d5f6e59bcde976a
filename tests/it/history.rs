//! The transaction history agrees with the disk: rollback, redo and abort change a tx's
//! state only through the state machine (docs/commit-protocol.md, "State machines"),
//! and every outcome a verb reports is what the disk holds.

use std::path::Path;

use ultra_edit::{
    Error, JournalError, NextStep, RollbackOptions, StateReason, Transition, TxState,
};

use crate::support::*;

/// A workspace with `f.txt = "a\n"` and `g.txt = "b\n"` besides the sample files.
fn ws_ab() -> Ws {
    let ws = workspace();
    ws.write("f.txt", b"a\n");
    ws.write("g.txt", b"b\n");
    ws
}

/// `(tx, state, rollback_of, rolled_back_by)` of every tx, oldest first.
fn history(ws: &Ws) -> Vec<(u64, TxState, Option<u64>, Option<u64>)> {
    let mut rows: Vec<_> = ws
        .journal
        .log(None)
        .unwrap()
        .into_iter()
        .map(|e| (e.tx, e.state, e.rollback_of, e.rolled_back_by))
        .collect();
    rows.reverse();
    rows
}

fn verify_ok(root: &Path) {
    let out = run_ue(root, &["--json", "journal", "verify"], None);
    let v = json_of(&out);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn undo_of_a_redo_leaves_the_original_commit_rolled_back() {
    let ws = workspace();
    ws.write("f.txt", b"X\n");
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"Y\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let undo = |tx| {
        ws.journal
            .rollback(tx, RollbackOptions::default())
            .unwrap()
            .tx
    };
    assert_eq!(undo(1), 2);
    assert_eq!(ws.read("f.txt"), b"X\n");
    assert_eq!(undo(2), 3); // redo of tx 1
    assert_eq!(ws.read("f.txt"), b"Y\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::Committed, None, None),
            (2, TxState::RolledBack, Some(1), Some(3)),
            (3, TxState::Committed, Some(2), None),
        ]
    );
    assert_eq!(undo(3), 4); // undo of the redo: tx 2's change is live again
    assert_eq!(ws.read("f.txt"), b"X\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::RolledBack, None, Some(2)),
            (2, TxState::Committed, Some(1), None),
            (3, TxState::RolledBack, Some(2), Some(4)),
            (4, TxState::Committed, Some(3), None),
        ]
    );
    // Tx 1 is answered as already rolled back (by tx 2, whose change is live again),
    // not refused as stale: nobody wrote f.txt, and nothing is written.
    let again = ws
        .journal
        .rollback_report(1, RollbackOptions::default())
        .unwrap();
    assert!(again.already);
    assert_eq!(again.receipt.tx, 2);
    assert_eq!(
        again.receipt.kind,
        ultra_edit::BatchKind::Rollback {
            of: 1,
            forced: false
        }
    );
    assert_eq!(ws.read("f.txt"), b"X\n");
    // And the chain goes on: undo tx 4 (tx 5) redoes tx 3, so tx 1 is live again.
    assert_eq!(undo(4), 5);
    assert_eq!(ws.read("f.txt"), b"Y\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::Committed, None, None),
            (2, TxState::RolledBack, Some(1), Some(3)),
            (3, TxState::Committed, Some(2), None),
            (4, TxState::RolledBack, Some(3), Some(5)),
            (5, TxState::Committed, Some(4), None),
        ]
    );
    // Tx 1's change is tx 5's now (undone by tx 2, redone by tx 3, undone by tx 4,
    // redone by tx 5): a second rollback of tx 1, or of tx 3, would leave tx 5 marked
    // committed with its change undone, so each is refused and names tx 5, changing
    // nothing.
    for (tx, undone_by) in [(1, 2), (3, 4)] {
        let err = ws
            .journal
            .rollback(tx, RollbackOptions::default())
            .unwrap_err();
        assert!(
            matches!(
                &err,
                Error::WrongState {
                    tx: t,
                    state: TxState::Committed,
                    reason: StateReason::Redone { undone_by: u, redo: 5 },
                    ..
                } if *t == tx && *u == undone_by
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("tx {tx} is committed; tx {undone_by} rolled it back and tx 5 redid it, so its change is tx 5's now and it cannot be rolled back itself")
        );
        assert_eq!(err.next_step(), Some(NextStep::RollBack { tx: 5 }));
    }
    let out = run_ue(ws.root(), &["--json", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "wrong_state", "{v}");
    assert_eq!(
        v["error"]["hint"], "`ultra-edit rollback 5` restores the files",
        "{v}"
    );
    assert_eq!(ws.read("f.txt"), b"Y\n");
    assert_eq!(ws.journal.log(None).unwrap().len(), 5);
    // Rolling back tx 5 undoes the change, and every label follows.
    assert_eq!(undo(5), 6);
    assert_eq!(ws.read("f.txt"), b"X\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::RolledBack, None, Some(2)),
            (2, TxState::Committed, Some(1), None),
            (3, TxState::RolledBack, Some(2), Some(4)),
            (4, TxState::Committed, Some(3), None),
            (5, TxState::RolledBack, Some(4), Some(6)),
            (6, TxState::Committed, Some(5), None),
        ]
    );
    assert!(ws.journal.verify().unwrap().ok);
    verify_ok(ws.root());
}

#[cfg(feature = "failpoints")]
#[test]
fn a_rollback_whose_completion_is_not_recorded_says_what_is_on_disk() {
    let ws = workspace();
    ws.write("f.txt", b"a\n");
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"b\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    // The rollback's journal writes: intent (with its tx, the commit point), completion.
    // The second fails, after the rollback landed (the CLI waits for the completion
    // before it prints): the file already holds the rolled-back bytes, and the batch
    // stays committing for the next recovery to complete.
    let out = run_ue(
        ws.root(),
        &["--json", "rollback", "1"],
        Some("journal::commit=1*off->return(28)"),
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "needs_attention");
    assert_eq!(v["tx"], 2);
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("the batch landed (1 file holds the new content: f.txt)")
            && msg.contains("the next recovery completes it with the same receipt"),
        "{msg}"
    );
    // As data: the change will land.
    assert_eq!(v["error"]["outcome"], "will_land");
    assert_eq!(
        v["error"]["attention"]["completion_not_recorded"]["files"],
        serde_json::json!(["f.txt"])
    );
    assert_eq!(ws.read("f.txt"), b"a\n");
    // The next command's recovery completes the rollback, as the error said.
    let log = json_of(&run_ue(ws.root(), &["--json", "log"], None));
    let states: Vec<(u64, &str)> = log["txs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["tx"].as_u64().unwrap(), t["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [(2, "committed"), (1, "rolled_back")]);
    assert_eq!(ws.read("f.txt"), b"a\n");
    verify_ok(ws.root());
}

#[cfg(feature = "failpoints")]
#[test]
fn abort_is_refused_while_the_batch_is_past_its_commit_point() {
    let ws = ws_ab();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"A\n"},{"op":"replace_file","path":"g.txt","content":"B\n"}]}"#,
    );
    let out = run_ue(
        ws.root(),
        &["commit", &p.tx.to_string()],
        Some("batch::after_commit_point=return"),
    );
    assert_eq!(out.status.code(), None, "the failpoint aborts the process");
    ws.write("g.txt", b"someone\n");
    let out = run_ue(ws.root(), &["--json", "recover"], None);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(ws.read("f.txt"), b"A\n");
    assert_eq!(ws.read("g.txt"), b"someone\n");
    // The batch needs attention: the tx cannot be declared dead.
    let out = run_ue(ws.root(), &["--json", "abort", "1"], None);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "wrong_state");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("its batch 1 needs attention"), "{msg}");
    assert_eq!(v["error"]["next_step"]["step"], "recover_foreign");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(hint.contains("ultra-edit recover --overwrite"), "{hint}");
    assert_eq!(ws.journal.tx(1).unwrap().state, TxState::Open);
    // Commit, revise and rebase say the same, not "stale" nor "changed meanwhile"; show
    // tells it.
    let plan_dir = tempfile::tempdir().unwrap();
    let plan_file = plan_dir.path().join("p.json");
    std::fs::write(
        &plan_file,
        r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"C\n"}]}"#,
    )
    .unwrap();
    let plan_arg = plan_file.to_str().unwrap();
    for args in [
        &["--json", "commit", "1"][..],
        &["--json", "rebase", "1"],
        &["--json", "revise", "1", "--plan", plan_arg],
    ] {
        let out = run_ue(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let v = json_of(&out);
        assert_eq!(v["error"]["kind"], "wrong_state", "{args:?}");
        assert_eq!(
            v["error"]["next_step"]["step"], "recover_foreign",
            "{args:?}"
        );
    }
    let shown = ws.journal.show(1, None).unwrap();
    assert_eq!(
        (shown.needs_attention, shown.ready_to_commit),
        (Some(1), false)
    );
    // Settled as the refusal says, the tx is committed, never "aborted and committed".
    let out = run_ue(ws.root(), &["recover", "--overwrite"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ws.journal.tx(1).unwrap().state, TxState::Committed);
    assert_eq!(
        (ws.read("f.txt"), ws.read("g.txt")),
        (b"A\n".to_vec(), b"B\n".to_vec())
    );
    verify_ok(ws.root());
}

#[cfg(feature = "failpoints")]
#[test]
fn a_rollback_interrupted_after_its_intent_lands_and_before_it_leaves_no_tx() {
    // The rollback's intent is its commit point (docs/commit-protocol.md): a crash
    // before it leaves no rollback tx at all, a crash after it (before staging, or
    // with temps staged) is rolled forward by recovery, with exactly one receipt.
    for point in [
        "batch::after_lock",
        "batch::after_intent",
        "batch::after_commit_point",
        "batch::after_stage_file",
        "batch::after_stage",
    ] {
        let ws = ws_ab();
        let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"b2\n"}]}"#);
        ws.journal.commit(p.tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        let out = run_ue(
            ws.root(),
            &["rollback", "1"],
            Some(&format!("{point}=return")),
        );
        assert_eq!(
            out.status.code(),
            None,
            "{point}: the failpoint aborts the process"
        );
        let out = run_ue(ws.root(), &["--json", "recover"], None);
        assert_eq!(out.status.code(), Some(0), "{point}");
        let rows = history(&ws);
        if point == "batch::after_lock" {
            // The lock was taken, nothing recorded: no rollback tx, nothing undone.
            assert_eq!(ws.read("f.txt"), b"b2\n", "{point}");
            assert_eq!(rows, [(1, TxState::Committed, None, None)]);
            verify_ok(ws.root());
            let r = ws.journal.rollback(1, RollbackOptions::default()).unwrap();
            ws.journal.flush().unwrap();
            assert_eq!(ws.read("f.txt"), b"a\n", "{point}");
            assert_eq!(ws.journal.tx(r.tx).unwrap().state, TxState::Committed);
            continue;
        }
        assert_eq!(ws.read("f.txt"), b"a\n", "{point}: the rollback landed");
        assert_eq!(
            rows,
            [
                (1, TxState::RolledBack, None, Some(2)),
                (2, TxState::Committed, Some(1), None),
            ],
            "{point}"
        );
        let dump = run_ue(ws.root(), &["--json", "journal", "dump"], None);
        let receipts = String::from_utf8_lossy(&dump.stdout)
            .lines()
            .filter(|l| l.contains("\"receipt_issued\""))
            .count();
        assert_eq!(
            receipts, 2,
            "{point}: the commit's receipt and the rollback's"
        );
        verify_ok(ws.root());
    }
}

#[cfg(feature = "failpoints")]
#[test]
fn a_rollback_that_fails_while_staging_leaves_no_open_tx() {
    // An I/O error staging the temp, past the commit point: the revert path ends the
    // batch and its rollback tx; the file never changed and the rollback can be run
    // again.
    let ws = ws_ab();
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"b2\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let before = ws.tree();
    let out = run_ue(
        ws.root(),
        &["--json", "rollback", "1"],
        Some("fs::fsync=return(5)"),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json_of(&out)["error"]["kind"], "commit_failed");
    assert_eq!(ws.tree(), before);
    assert_eq!(
        history(&ws),
        [
            (1, TxState::Committed, None, None),
            (2, TxState::Aborted, Some(1), None),
        ]
    );
    verify_ok(ws.root());
    let r = ws.journal.rollback(1, RollbackOptions::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("f.txt"), b"a\n");
    assert_eq!(ws.journal.tx(r.tx).unwrap().state, TxState::Committed);
}

#[test]
fn the_journal_refuses_batch_and_tx_steps_its_state_machines_do_not_allow() {
    use ultra_edit::journal::Store;
    use ultra_edit::{BatchKind, BatchRecord, BatchState, StateChange};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("journal.redb"), true).unwrap();
    let change = |state| StateChange {
        state,
        at_ms: 0,
        note: None,
    };
    let prepared = BatchRecord {
        batch: 1,
        tx: 1,
        kind: BatchKind::Commit { revision: 0 },
        state: BatchState::Prepared,
        nonce: 7,
        files: Vec::new(),
        create_dirs: Vec::new(),
        remove_dirs: Vec::new(),
        history: vec![change(BatchState::Prepared)],
        foreign: Vec::new(),
    };
    let refused = |r: Result<(), Error>| match r {
        Err(Error::Journal(JournalError::IllegalTransition(t))) => t,
        other => panic!("{other:?}"),
    };
    // A new batch starts at its intent: committing (prepared in journals of earlier
    // versions), with a history that says so.
    let mut committing = prepared.clone();
    committing.state = BatchState::Committing;
    assert_eq!(
        refused(store.write(|w| w.put_batch(&committing))),
        Transition::NewBatch {
            batch: 1,
            state: BatchState::Committing
        }
    );
    let mut reverting = prepared.clone();
    reverting.state = BatchState::Reverting;
    reverting.history = vec![change(BatchState::Reverting)];
    assert_eq!(
        refused(store.write(|w| w.put_batch(&reverting))),
        Transition::NewBatch {
            batch: 1,
            state: BatchState::Reverting
        }
    );
    store
        .write(|w| {
            w.create_tx(None, None, None)?;
            w.put_batch(&prepared)
        })
        .unwrap();
    // Prepared → Committed skips the commit point: refused, nothing written.
    let mut skip = prepared.clone();
    skip.state = BatchState::Committed;
    skip.history.push(change(BatchState::Committed));
    assert_eq!(
        refused(store.write(|w| w.put_batch(&skip))),
        Transition::Batch {
            batch: 1,
            from: BatchState::Prepared,
            to: BatchState::Committed
        }
    );
    assert_eq!(store.read().unwrap().inflight().unwrap(), [1]);
    // Another process reverted the batch; this one's commit point comes too late.
    let mut aborted = prepared.clone();
    aborted.state = BatchState::Aborted;
    aborted.history.push(change(BatchState::Aborted));
    store.write(|w| w.put_batch(&aborted)).unwrap();
    let mut late = prepared.clone();
    late.state = BatchState::Committing;
    late.history.push(change(BatchState::Committing));
    assert_eq!(
        refused(store.write(|w| w.put_batch(&late))),
        Transition::Batch {
            batch: 1,
            from: BatchState::Aborted,
            to: BatchState::Committing
        }
    );
    let stored = store.read().unwrap().batch(1).unwrap().unwrap();
    assert_eq!(stored.state, BatchState::Aborted);
    assert!(store.read().unwrap().inflight().unwrap().is_empty());
    // A tx aborted once cannot be aborted again; the refusal names its state.
    store.write(|w| w.abort_tx(1).map(|_| ())).unwrap();
    let err = store.write(|w| w.abort_tx(1).map(|_| ())).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                tx: 1,
                state: TxState::Aborted,
                reason: StateReason::Aborted,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        JournalError::IllegalTransition(Transition::Tx {
            tx: 1,
            from: TxState::Committed,
            to: TxState::Aborted,
        })
        .to_string(),
        "journal refused to move tx 1 from committed to aborted; nothing was written (another process may have changed it meanwhile: run the command again)"
    );
}

/// Found by the soak (seed 690272408), since narrowed, and by the breaker: a rollback
/// that would change no file (the disk already holds the old content) is refused as
/// already undone even when forced. A forced one used to record itself with no file,
/// and its redo then claimed to redo the commit while writing nothing.
#[test]
fn a_rollback_that_would_change_no_file_is_refused_even_forced() {
    let ws = workspace();
    ws.write("f.txt", b"X\n");
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"Y\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let undo = |tx, force| {
        ws.journal
            .rollback(tx, RollbackOptions::new().with_force(force))
    };
    assert_eq!(undo(1, false).unwrap().tx, 2); // X
    assert_eq!(undo(2, false).unwrap().tx, 3); // redo: Y
                                               // Someone writes X back by hand: tx 3's change is not on disk.
    ws.write("f.txt", b"X\n");
    for force in [false, true] {
        let err = undo(3, force).unwrap_err();
        assert!(
            matches!(
                err,
                Error::WrongState {
                    tx: 3,
                    reason: StateReason::AlreadyUndone,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.next_step(), Some(NextStep::Log));
    }
    // Nothing recorded: the history is the redo's (what the hand edit did, no label
    // can know).
    assert_eq!(ws.read("f.txt"), b"X\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::Committed, None, None),
            (2, TxState::RolledBack, Some(1), Some(3)),
            (3, TxState::Committed, Some(2), None),
        ]
    );
    let v = ws.journal.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
}

/// Found by the soak (seeds 783866287, 911920914) when a commit could be rolled back a
/// second time after a redo, which left the redo marked committed with its change
/// undone. That second rollback is now refused, forced or not, naming the redo; the
/// redo's own rollback undoes the change with every label true.
#[test]
fn a_second_rollback_of_a_redone_commit_is_refused_even_forced() {
    let ws = workspace();
    ws.write("f.txt", b"X\n");
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"Y\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let undo = |tx, force| {
        ws.journal
            .rollback(tx, RollbackOptions::new().with_force(force))
    };
    assert_eq!(undo(1, false).unwrap().tx, 2); // X: tx 2 undoes tx 1
    assert_eq!(undo(2, false).unwrap().tx, 3); // Y: redo
    for force in [false, true] {
        let err = undo(1, force).unwrap_err();
        assert!(
            matches!(
                err,
                Error::WrongState {
                    tx: 1,
                    state: TxState::Committed,
                    reason: StateReason::Redone {
                        undone_by: 2,
                        redo: 3
                    },
                    ..
                }
            ),
            "{err:?}"
        );
    }
    assert_eq!(ws.read("f.txt"), b"Y\n");
    assert_eq!(ws.journal.log(None).unwrap().len(), 3);
    assert_eq!(undo(3, false).unwrap().tx, 4); // X: tx 2's change live again
    assert_eq!(ws.read("f.txt"), b"X\n");
    assert_eq!(
        history(&ws),
        [
            (1, TxState::RolledBack, None, Some(2)),
            (2, TxState::Committed, Some(1), None),
            (3, TxState::RolledBack, Some(2), Some(4)),
            (4, TxState::Committed, Some(3), None),
        ]
    );
    let v = ws.journal.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
}
