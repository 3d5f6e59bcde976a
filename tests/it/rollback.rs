use ultra_edit::{BatchKind, BlobHash, Error, RollbackOptions, TxState};

use crate::support::*;

const MIXED: &str = r#"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
    {"op":"delete_file","path":"run.sh"},
    {"op":"create_file","path":"gen/deep/out.bin","content_base64":"AP8AAQ==","mode":493},
    {"op":"replace_file","path":"src/b.rs","content":"fn b() {}\n"}]}"#;

#[test]
fn rollback_restores_exact_pre_commit_snapshot() {
    let ws = workspace();
    let before = ws.tree();
    let p = ws.preview(MIXED);
    let c = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("gen/deep/out.bin"), [0u8, 0xFF, 0, 1]);
    assert_eq!(ws.mode("gen/deep/out.bin"), 0o755);
    assert_ne!(ws.tree(), before);

    let r = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        r.kind,
        BatchKind::Rollback {
            of: p.tx,
            forced: false
        }
    );
    assert_ne!(r.tx, p.tx);
    // Bytes, modes (run.sh 755, src/b.rs 600), the deleted file recreated, the created
    // file and both created directories gone.
    assert_eq!(ws.tree(), before);
    assert_eq!(r.removed_dirs, ["gen/deep", "gen"]);
    assert!(!ws.path("gen").exists());
    let log = ws.journal.log(None).unwrap();
    assert_eq!(
        (log[0].tx, log[0].state, log[0].rollback_of),
        (r.tx, TxState::Committed, Some(p.tx))
    );
    assert_eq!(
        (log[1].tx, log[1].state, log[1].rolled_back_by),
        (p.tx, TxState::RolledBack, Some(r.tx))
    );
    // Rolling back twice answers the first rollback (`already`) and writes nothing;
    // rolling back the rollback redoes the commit.
    let again = ws
        .journal
        .rollback_report(p.tx, RollbackOptions::default())
        .unwrap();
    assert!(again.already);
    assert_eq!(again.receipt, r);
    assert_eq!(ws.tree(), before);
    let redo = ws
        .journal
        .rollback(r.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        redo.kind,
        BatchKind::Rollback {
            of: r.tx,
            forced: false
        }
    );
    for f in &c.files {
        let disk = std::fs::read(ws.path(&f.path)).ok();
        assert_eq!(
            disk.as_deref().map(BlobHash::of),
            f.post.hash(),
            "{}",
            f.path
        );
    }
    assert_eq!(ws.mode("gen/deep/out.bin"), 0o755);
    // After the redo the original tx's changes are live again: it is committed, but
    // its change is the redo's now, so rolling it back once more is refused, naming the
    // redo; rolling back the redo restores the pre-commit tree again.
    let log = ws.journal.log(None).unwrap();
    let orig = log.iter().find(|e| e.tx == p.tx).unwrap();
    assert_eq!(
        (orig.state, orig.rolled_back_by),
        (TxState::Committed, None)
    );
    let rb = log.iter().find(|e| e.tx == r.tx).unwrap();
    assert_eq!(
        (rb.state, rb.rolled_back_by),
        (TxState::RolledBack, Some(redo.tx))
    );
    let err = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::WrongState {
                reason: ultra_edit::StateReason::Redone { undone_by, redo: by },
                ..
            } if undone_by == r.tx && by == redo.tx
        ),
        "{err:?}"
    );
    ws.journal
        .rollback(redo.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.tree(), before);
}

/// Found by the new-user trial: a hand edit between two commits of one file, and the
/// later commit rolled back. Rolling back the first is refused; the later rollback tx
/// wrote the file last, but it only undid the second commit (no change of its own to
/// undo), and the hand edit is what still differs, so the refusal names no later tx,
/// says the file was written outside ultra-edit, and the step is the forced rollback
/// (it named the rollback tx, whose rollback redid the second commit, and looped).
#[test]
fn a_rollback_refused_for_an_edit_outside_ultra_edit_does_not_send_the_user_round_in_a_loop() {
    let ws = workspace();
    ws.write("f.py", b"a = 1\nb = 2\nc = 3\n");
    let first = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"f.py","old":"a = 1","new":"a = 10"}]}"#);
    ws.journal.commit(first.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.write("f.py", b"a = 10\nb = 2\nc = 30\n"); // by hand
    let second = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"f.py","old":"b = 2","new":"b = 20"}]}"#);
    ws.journal.commit(second.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let undo2 = ws
        .journal
        .rollback(second.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.read("f.py"), b"a = 10\nb = 2\nc = 30\n");
    let err = ws
        .journal
        .rollback(first.tx, RollbackOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::StaleRollback { changed_by, outside, .. }
                if changed_by.is_empty() && outside == &["f.py".to_string()]
        ),
        "{err:?}"
    );
    assert_eq!(undo2.tx, 3);
    assert_eq!(
        err.to_string(),
        format!(
            "cannot roll back tx {}: f.py changed (or was deleted) since it was committed (f.py was written outside ultra-edit); a forced rollback overwrites it after keeping its current bytes in the journal; a revert of tx {} removes only its own change and keeps the later changes",
            first.tx, first.tx
        )
    );
    assert_eq!(
        err.next_step(),
        Some(ultra_edit::NextStep::ForceRollBack { tx: first.tx })
    );
    let out = cli(
        ws.root(),
        &["--json", "rollback", &first.tx.to_string()],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(
        json_of(&out)["error"]["command"],
        format!("ultra-edit rollback {} --force", first.tx)
    );
    // Nothing was written by the refusals; forced, the first commit's old content is back.
    assert_eq!(ws.read("f.py"), b"a = 10\nb = 2\nc = 30\n");
    ws.journal
        .rollback(first.tx, RollbackOptions::new().with_force(true))
        .unwrap();
    assert_eq!(ws.read("f.py"), b"a = 1\nb = 2\nc = 3\n");
}

/// A later commit wrote the same file: the refusal names it, and the step is to roll
/// that one back first (a forced rollback would undo its change there too, as the
/// message says); rolled back in that order, each restores exact bytes.
#[test]
fn a_rollback_refused_for_a_later_commit_names_it_and_rolls_back_in_order() {
    let ws = workspace();
    let before = ws.tree();
    let first = ws.preview(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"pub fn b","new":"pub fn bee"}]}"#);
    ws.journal.commit(first.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let second = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    ws.journal.commit(second.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let err = ws
        .journal
        .rollback(first.tx, RollbackOptions::default())
        .unwrap_err();
    assert!(
        matches!(&err, Error::StaleRollback { changed_by, outside, .. } if changed_by == &[second.tx] && outside.is_empty()),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "cannot roll back tx {}: src/b.rs changed (or was deleted) since it was committed (tx {} has written there since); a forced rollback overwrites it, undoing tx {}'s change there too, after keeping its current bytes in the journal; a revert of tx {} removes only its own change and keeps the later changes",
            first.tx, second.tx, second.tx, first.tx
        )
    );
    assert_eq!(
        err.next_step(),
        Some(ultra_edit::NextStep::RollBackLaterFirst {
            later: second.tx,
            tx: first.tx
        })
    );
    // The CLI's words and command for it.
    let out = cli(
        ws.root(),
        &["--json", "rollback", &first.tx.to_string()],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v = json_of(&out);
    assert_eq!(
        v["error"]["command"],
        format!("ultra-edit rollback {}", second.tx)
    );
    assert_eq!(
        v["error"]["hint"],
        format!(
            "roll back the later change first (`ultra-edit rollback {}`), then tx {}; `ultra-edit rollback {} --force` would overwrite the file(s) instead, undoing tx {}'s change there too (their current bytes are kept in the journal first); `ultra-edit revert {}` undoes only tx {}'s change and keeps the later ones",
            second.tx, first.tx, first.tx, second.tx, first.tx, first.tx
        )
    );
    ws.journal
        .rollback(second.tx, RollbackOptions::default())
        .unwrap();
    ws.journal
        .rollback(first.tx, RollbackOptions::default())
        .unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.tree(), before);
}

#[test]
fn rollback_of_a_changed_file_is_stale_unless_forced() {
    let ws = workspace();
    let before = ws.tree();
    let p = ws.preview(MIXED);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.write("src/lib.rs", b"edited after the commit\n");
    let changed = ws.tree();
    let err = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap_err();
    match &err {
        Error::StaleRollback { paths, .. } => assert_eq!(paths, &vec!["src/lib.rs".to_string()]),
        other => panic!("expected StaleRollback, got {other:?}"),
    }
    // The message says what a forced rollback does; the step to take is data (the
    // CLI renders it as `--force`).
    assert_eq!(
        err.to_string(),
        format!("cannot roll back tx {}: src/lib.rs changed (or was deleted) since it was committed (src/lib.rs was written outside ultra-edit); a forced rollback overwrites it after keeping its current bytes in the journal; a revert of tx {} removes only its own change and keeps the later changes", p.tx, p.tx)
    );
    assert_eq!(
        err.next_step(),
        Some(ultra_edit::NextStep::ForceRollBack { tx: p.tx })
    );
    assert_eq!(ws.tree(), changed);
    // Forced: the tree returns to the pre-commit state and the overwritten bytes are
    // kept in the journal.
    let r = ws
        .journal
        .rollback(p.tx, RollbackOptions::new().with_force(true))
        .unwrap();
    assert_eq!(
        r.kind,
        BatchKind::Rollback {
            of: p.tx,
            forced: true
        }
    );
    assert_eq!(ws.tree(), before);
    let kept = ws
        .journal
        .blob(&BlobHash::of(b"edited after the commit\n"))
        .unwrap();
    assert_eq!(kept.as_deref(), Some(&b"edited after the commit\n"[..]));
    let lib = r.files.iter().find(|f| f.path == "src/lib.rs").unwrap();
    assert_eq!(
        lib.pre.hash(),
        Some(BlobHash::of(b"edited after the commit\n"))
    );
}

#[test]
fn rollback_of_an_uncommitted_tx_is_refused() {
    let ws = workspace();
    let p = ws.preview(MIXED);
    let err = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::WrongState { .. }), "{err:?}");
    assert!(matches!(
        ws.journal.rollback(999, RollbackOptions::default()),
        Err(Error::UnknownTx { tx: 999 })
    ));
    // The CLI's hint names both ways on: commit it first, or abort the preview.
    let tx = p.tx.to_string();
    let out = cli(ws.root(), &["--json", "rollback", &tx], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let hint = format!(
        "commit it first (`ultra-edit commit {tx}`), or drop the preview with `ultra-edit abort {tx}`"
    );
    let v = json_of(&out);
    assert_eq!(
        (&v["error"]["kind"], &v["error"]["hint"]),
        (&serde_json::json!("wrong_state"), &serde_json::json!(hint)),
        "{v}"
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!(
            "error: tx {tx} is open; it is not committed, so it cannot be rolled back\nhint: {hint}\n"
        )
    );
}

/// Found by the breaker: commits 1, 2 and 3 each rewrote a file. The refusal to roll
/// back tx 1 named txs 2 and 3; once tx 3 was rolled back (as tx 4), it named tx 4 —
/// whose rollback only redid tx 3 — and so on without end. A rollback that undid a
/// later commit cancels it and is no change to undo; a redo owns the change it redid.
/// Following the steps now ends at tx 1's rollback.
#[test]
fn following_a_stale_rollbacks_steps_ends_at_the_rollback() {
    let ws = workspace();
    ws.write("a.txt", b"0\n");
    for i in 1..=3 {
        let p = ws.preview(&format!(
            r#"{{"edits":[{{"op":"replace_file","path":"a.txt","content":"{i}\n"}}]}}"#
        ));
        assert_eq!(p.tx, i);
        ws.journal.commit(p.tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
    }
    let refused = |changed: &[u64]| {
        let err = ws
            .journal
            .rollback(1, RollbackOptions::default())
            .unwrap_err();
        assert!(
            matches!(&err, Error::StaleRollback { changed_by, outside, .. }
                if changed_by == changed && outside.is_empty()),
            "{err:?}"
        );
        err.next_step()
    };
    let undo = |tx| {
        let r = ws.journal.rollback(tx, RollbackOptions::default()).unwrap();
        ws.journal.flush().unwrap();
        r.tx
    };
    assert_eq!(
        refused(&[2, 3]),
        Some(ultra_edit::NextStep::RollBackLaterFirst { later: 3, tx: 1 })
    );
    assert_eq!(undo(3), 4); // a.txt = 2
                            // Tx 4 only undid tx 3: the one change left is tx 2's.
    assert_eq!(
        refused(&[2]),
        Some(ultra_edit::NextStep::RollBackLaterFirst { later: 2, tx: 1 })
    );
    // Redo tx 3 (tx 5 rolls back tx 4): the change is tx 5's now, with tx 2's.
    assert_eq!(undo(4), 5); // a.txt = 3
    assert_eq!(
        refused(&[2, 5]),
        Some(ultra_edit::NextStep::RollBackLaterFirst { later: 5, tx: 1 })
    );
    assert_eq!(undo(5), 6); // a.txt = 2
    assert_eq!(undo(2), 7); // a.txt = 1
    assert_eq!(undo(1), 8); // a.txt = 0
    assert_eq!(ws.read("a.txt"), b"0\n");
    assert!(ws.journal.verify().unwrap().ok);
}
