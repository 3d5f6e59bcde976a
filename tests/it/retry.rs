//! Retries and the truth of what the tool says (issue 29, items 3, 4, 7 and 8): a
//! retried commit or rollback that already landed says so with its receipt, no next
//! step is a rollback the caller did not ask for, the commit gate checks every file
//! the transaction names, and a rebase that changes nothing gives a true next step.

use serde_json::json;
use ultra_edit::{
    BatchKind, CommitOptions, Error, NextStep, ReviseOptions, RollbackOptions, StateReason, TxState,
};

use crate::support::{cli, json_of, plan, receipts_of, text, workspace};

const B_RS: &[u8] = b"pub fn b() -> u32 {\n    2\n}\n";
const B_RS_3: &[u8] = b"pub fn b() -> u32 {\n    3\n}\n";
const SET_3: &str =
    r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#;

/// Every next step that runs a rollback.
fn is_a_rollback(step: &Option<NextStep>) -> bool {
    matches!(
        step,
        Some(
            NextStep::RollBack { .. }
                | NextStep::Redo { .. }
                | NextStep::ForceRollBack { .. }
                | NextStep::RollBackLaterFirst { .. }
                | NextStep::RollBackAgain { .. }
        )
    )
}

// ---- item 3: a retried commit or rollback that already landed says so ----------------

/// A second `commit` of the committed revision answers with the first commit's
/// receipt, `already`, and writes nothing: no second batch, the same bytes.
#[test]
fn a_retried_commit_answers_already_with_the_first_receipt() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    let first = ws
        .journal
        .commit_report(p.tx, CommitOptions::default())
        .unwrap();
    assert!(!first.already);
    assert_eq!(first.receipt.batch, 1);
    ws.journal.flush().unwrap();
    let again = ws
        .journal
        .commit_report(p.tx, CommitOptions::default())
        .unwrap();
    assert!(again.already);
    assert_eq!(again.receipt, first.receipt);
    assert_eq!(again.receipt.kind, BatchKind::Commit { revision: 0 });
    // By its revision number too, and through `commit` (the receipt alone).
    let by_number = ws
        .journal
        .commit_report(p.tx, CommitOptions::new().with_revision(0))
        .unwrap();
    assert!(by_number.already);
    assert_eq!(
        ws.journal.commit(p.tx, CommitOptions::default()).unwrap(),
        first.receipt
    );
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
    assert_eq!(receipts_of(&ws.journal, p.tx), vec![1]);
    assert_eq!(ws.journal.tx(p.tx).unwrap().state, TxState::Committed);
}

/// A commit of revision 1 when revision 0 was committed is not "already": it is
/// refused and names the revision that landed; its next step shows it (never a
/// rollback).
#[test]
fn a_commit_of_another_revision_than_the_committed_one_names_the_one_that_landed() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    ws.journal
        .revise(
            p.tx,
            ReviseOptions::default(),
            &plan(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    3","new":"    4"}]}"#),
        )
        .unwrap();
    let r0 = CommitOptions::new().with_revision(0);
    assert!(!ws.journal.commit_report(p.tx, r0).unwrap().already);
    let err = ws
        .journal
        .commit_report(p.tx, CommitOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                tx: 1,
                state: TxState::Committed,
                reason: StateReason::OtherRevisionCommitted {
                    revision: 0,
                    batch: 1,
                    asked: 1
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tx 1 is committed; revision 0 was applied by batch 1, not revision 1, so revision 1 cannot be committed"
    );
    assert_eq!(err.next_step(), Some(NextStep::Show { tx: 1 }));
    assert_eq!(err.exit_code(), 1);
    // The revision that landed, retried, is "already".
    assert!(ws.journal.commit_report(p.tx, r0).unwrap().already);
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
}

/// A commit that was rolled back since is not "already committed" (its change is not
/// on disk): refused, and the next step is the history, not a redo (a rollback).
#[test]
fn a_retried_commit_of_a_rolled_back_tx_is_refused_without_a_rollback_step() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    let err = ws
        .journal
        .commit_report(p.tx, CommitOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                tx: 1,
                state: TxState::RolledBack,
                reason: StateReason::RolledBack {
                    by: 2,
                    redo: Some(2)
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tx 1 is rolled_back; tx 2 rolled it back, so it cannot be committed"
    );
    assert_eq!(err.next_step(), Some(NextStep::Log));
    assert_eq!(ws.read("src/b.rs"), B_RS);
}

/// A second `rollback` of a tx whose rollback landed answers with that rollback's
/// receipt, `already`, and writes nothing.
#[test]
fn a_retried_rollback_answers_already_with_the_rollbacks_receipt() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    let rb = ws
        .journal
        .rollback_report(p.tx, RollbackOptions::default())
        .unwrap();
    assert!(!rb.already);
    assert_eq!(rb.receipt.tx, 2);
    assert_eq!(
        rb.receipt.kind,
        BatchKind::Rollback {
            of: 1,
            forced: false
        }
    );
    ws.journal.flush().unwrap();
    let again = ws
        .journal
        .rollback_report(p.tx, RollbackOptions::default())
        .unwrap();
    assert!(again.already);
    assert_eq!(again.receipt, rb.receipt);
    assert_eq!(ws.read("src/b.rs"), B_RS);
    assert_eq!(receipts_of(&ws.journal, 2), vec![2]);
    assert_eq!(ws.journal.log(None).unwrap().len(), 2, "no third tx");
}

/// The CLI: a retried `commit` and `rollback` exit 0 with `"already": true` and the
/// receipt; the text says "already".
#[test]
fn cli_a_retried_commit_and_rollback_exit_0_with_already() {
    let ws = workspace();
    let out = cli(ws.root(), &["--json", "preview"], Some(SET_3));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = cli(ws.root(), &["--json", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let first = json_of(&out);
    assert_eq!(first["already"], false);
    let out = cli(ws.root(), &["--json", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut again = json_of(&out);
    assert_eq!(again["already"], true);
    assert_eq!(again["tx"], 1);
    assert_eq!(again["batch"], 1);
    assert_eq!(again["kind"], json!({"commit": {"revision": 0}}));
    assert_eq!(again["bytes_written"], B_RS_3.len());
    again["already"] = json!(false);
    assert_eq!(again, first, "the same receipt");
    let out = cli(ws.root(), &["--color", "never", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(0));
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(
        shown.starts_with(
            "already committed: tx 1 revision 0 (batch 1): 1 file(s), 28 bytes written then; nothing written now\n  M src/b.rs  "
        ),
        "{shown}"
    );
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
    let out = cli(ws.root(), &["--json", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["already"], false);
    let out = cli(ws.root(), &["--json", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["already"], true);
    assert_eq!(v["tx"], 2);
    assert_eq!(v["batch"], 2);
    assert_eq!(v["kind"], json!({"rollback": {"of": 1, "forced": false}}));
    assert_eq!(ws.read("src/b.rs"), B_RS);
    let out = cli(ws.root(), &["--color", "never", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("already rolled back tx 1 as tx 2 (batch 2): 1 file(s), 28 bytes written then; nothing written now\n"),
        "{}",
        text(&out)
    );
}

/// MCP: a retried `edit_commit` and `edit_rollback` succeed with `already: true` and
/// the first call's receipt; nothing is written.
#[test]
fn mcp_a_retried_commit_and_rollback_answer_already() {
    let ws = workspace();
    let tools = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(
        ultra_edit::Journal::open(ws.root()).unwrap(),
    ));
    let p = tools
        .call(
            "edit_preview",
            json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
        )
        .unwrap();
    let id = p["preview_id"].clone();
    let commit = json!({"agent_id": "dev", "preview_id": id, "confirm": true});
    let first = tools.call("edit_commit", commit.clone()).unwrap();
    assert_eq!(first["already"], false);
    let again = tools.call("edit_commit", commit).unwrap();
    assert_eq!(again["already"], true);
    assert_eq!(again["receipt"], first["receipt"]);
    assert_eq!(again["tx"], 1);
    assert_eq!(again["batch"], 1);
    assert_eq!(again["bytes_written"], 14);
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\n");
    let rollback = json!({"agent_id": "dev", "tx": id});
    let rb = tools.call("edit_rollback", rollback.clone()).unwrap();
    assert_eq!(rb["already"], false);
    let rb2 = tools.call("edit_rollback", rollback).unwrap();
    assert_eq!(rb2["already"], true);
    assert_eq!(rb2["tx"], 2);
    assert_eq!(rb2["receipt"], rb["receipt"]);
    assert_eq!(ws.read("src/b.rs"), B_RS);
}

/// No refusal of a verb other than `rollback` names a rollback as its next step: not
/// `revise`, `rebase`, `abort` or `commit` of a committed tx, nor of a rolled-back
/// one (library, CLI and MCP).
#[test]
fn no_next_step_is_a_rollback_unless_the_caller_asked_to_undo() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    let other = ws.preview(r#"{"edits":[{"op":"append","path":"run.sh","text":"echo bye\n"}]}"#);
    ws.journal
        .commit(other.tx, CommitOptions::default())
        .unwrap();
    ws.journal
        .rollback(other.tx, RollbackOptions::default())
        .unwrap();
    let fix = plan(r#"{"edits":[{"op":"append","path":"src/a.rs","text":"//\n"}]}"#);
    for tx in [p.tx, other.tx] {
        let errs = [
            ws.journal
                .revise(tx, ReviseOptions::default(), &fix)
                .unwrap_err(),
            ws.journal.rebase(tx).unwrap_err(),
            ws.journal.abort(tx).unwrap_err(),
        ];
        for e in &errs {
            assert!(
                !is_a_rollback(&e.next_step()),
                "tx {tx}: {e:?} -> {:?}",
                e.next_step()
            );
        }
    }
    assert_eq!(
        ws.journal.abort(p.tx).unwrap_err().next_step(),
        Some(NextStep::Show { tx: p.tx })
    );
    let out = cli(ws.root(), &["--json", "abort", "1"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_of(&out)["error"],
        json!({
            "kind": "wrong_state",
            "exit_code": 1,
            "message": "tx 1 is committed; revision 0 was applied by batch 1, so it cannot be aborted",
            "hint": "`ultra-edit show 1` shows what landed; a further change is a new preview",
            "next_step": {"step": "show", "tx": 1},
            "command": "ultra-edit show 1",
        })
    );
    let out = cli(ws.root(), &["--json", "commit", "2"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = &json_of(&out)["error"];
    assert_eq!(err["next_step"], json!({"step": "log"}));
    assert_eq!(err["command"], "ultra-edit log");
    // MCP: a revise of a committed preview, a commit of a rolled-back one.
    let tools = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(
        ultra_edit::Journal::open(ws.root()).unwrap(),
    ));
    for (tool, args) in [
        (
            "edit_revise",
            json!({"agent_id": "dev", "preview_id": "1", "edits": [{"op": "append", "path": "src/a.rs", "text": "//\n"}]}),
        ),
        (
            "edit_commit",
            json!({"agent_id": "dev", "preview_id": "2", "confirm": true}),
        ),
        ("edit_abort", json!({"agent_id": "dev", "preview_id": "1"})),
    ] {
        let e = tools.call(tool, args).unwrap_err();
        let v = e.to_json();
        assert!(!e.hint.contains("edit_rollback"), "{tool}: {}", e.hint);
        assert_ne!(v["example"]["tool"], "edit_rollback", "{tool}: {v}");
    }
}

// ---- item 4: the commit gate checks every file the transaction named --------------

/// A file deleted in revision 0 and re-created with the same bytes in revision 1 is
/// left equal to its snapshot by revision 1, yet the gate checks it: edited on disk,
/// the commit is refused as stale (exit 3) and writes nothing; `show` says so too. A
/// rebase takes the disk as its snapshot, and then the commit lands, keeping the
/// person's bytes.
#[test]
fn the_gate_checks_a_file_an_earlier_revision_named() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"delete_file","path":"run.sh"},{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    let r1 = ws
        .journal
        .revise(
            p.tx,
            ReviseOptions::default(),
            &plan(r##"{"edits":[{"op":"create_file","path":"run.sh","content":"#!/bin/sh\necho hi\n","mode":"0755"}]}"##),
        )
        .unwrap();
    assert_eq!(
        r1.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["src/b.rs"],
        "revision 1 leaves run.sh equal to its snapshot"
    );
    ws.write("run.sh", b"#!/bin/sh\necho edited\n");
    let shown = ws.journal.show(p.tx, None).unwrap();
    assert_eq!(shown.stale_paths, Some(vec!["run.sh".to_string()]));
    assert!(!shown.ready_to_commit);
    let err = ws
        .journal
        .commit(p.tx, CommitOptions::default())
        .unwrap_err();
    assert!(
        matches!(&err, Error::StaleSnapshot { tx: 1, paths, .. } if paths == &["run.sh"]),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 3);
    assert_eq!(err.next_step(), Some(NextStep::Rebase { tx: 1 }));
    assert_eq!(ws.read("src/b.rs"), B_RS, "nothing written");
    assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho edited\n");
    // The CLI: exit 3 naming the file.
    let out = cli(ws.root(), &["--json", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "stale_snapshot");
    // A rebase records run.sh with the disk as its snapshot; the commit then lands
    // and leaves run.sh as the person wrote it.
    let rebased = ws.journal.rebase(p.tx).unwrap();
    assert_eq!(rebased.revision, 2);
    assert!(rebased.ready_to_commit, "{:?}", rebased.validation);
    let receipt = ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    assert_eq!(
        receipt
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        ["src/b.rs"]
    );
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
    assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho edited\n");
}

/// A file a revision changed and a later one changed back (left equal to its
/// snapshot) is checked too; unedited, the commit lands.
#[test]
fn the_gate_checks_a_file_changed_back_and_lets_an_untouched_one_pass() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// a\n"},{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    ws.journal
        .revise(
            p.tx,
            ReviseOptions::default(),
            &plan(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"}\n// a\n","new":"}\n"}]}"#),
        )
        .unwrap();
    // Untouched on disk: the commit lands, writing src/b.rs only.
    let receipt = ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    assert_eq!(
        receipt
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        ["src/b.rs"]
    );
    // The same, with src/a.rs edited on disk first: stale.
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// a\n"},{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    ws.journal
        .revise(
            p.tx,
            ReviseOptions::default(),
            &plan(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"}\n// a\n","new":"}\n"}]}"#),
        )
        .unwrap();
    ws.write("src/a.rs", b"pub fn a() -> u32 {\n    7\n}\n");
    let err = ws
        .journal
        .commit(p.tx, CommitOptions::default())
        .unwrap_err();
    assert!(
        matches!(&err, Error::StaleSnapshot { tx: 1, paths, .. } if paths == &["src/a.rs"]),
        "{err:?}"
    );
    assert_eq!(ws.read("src/b.rs"), B_RS);
}

// ---- item 8: a rebase that changes nothing gives a true next step ------------------

/// Someone makes the preview's change on disk: `rebase` records a revision that
/// changes nothing (exit 4, and its hint is to drop it, not to fix and commit). A
/// second `rebase` answers `nothing_to_rebase` saying there is nothing to commit, with
/// next step `abort` (never `commit`), and `commit` says the same; `abort` then works.
#[test]
fn cli_a_rebase_that_changes_nothing_never_points_at_commit() {
    let ws = workspace();
    let out = cli(ws.root(), &["--json", "preview"], Some(SET_3));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws.write("src/b.rs", B_RS_3);
    let out = cli(ws.root(), &["--json", "rebase", "1"], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["revision"], 1);
    assert_eq!(v["ready_to_commit"], false);
    assert!(
        String::from_utf8_lossy(&out.stderr).ends_with(
            "ultra-edit: tx 1 revision 1 changes nothing (the files hold its candidate already), so there is nothing to commit; drop it with `ultra-edit abort 1`, or revise it with a new plan\n"
        ),
        "{}",
        text(&out)
    );
    let out = cli(ws.root(), &["--json", "rebase", "1"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "nothing_to_rebase");
    assert_eq!(
        err["message"],
        "tx 1: nothing to rebase, the disk still matches every snapshot of revision 1; but revision 1 changes nothing (every file holds its candidate already), so there is nothing to commit"
    );
    assert_eq!(err["next_step"], json!({"step": "abort", "tx": 1}));
    assert_eq!(err["command"], "ultra-edit abort 1");
    assert_eq!(
        err["hint"],
        "there is nothing to commit (the files hold its candidate already): drop it with `ultra-edit abort 1`, or revise it with a new plan"
    );
    // The commit is refused for the same reason, with the same step.
    let out = cli(ws.root(), &["--json", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "validation_failed");
    assert_eq!(err["next_step"], json!({"step": "abort", "tx": 1}));
    // The step works.
    let out = cli(ws.root(), &["--json", "abort", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
}

/// A rebase that moved nothing on a revision that is ready names `commit`, and the
/// commit lands; the library's error says whether a commit can go ahead.
#[test]
fn nothing_to_rebase_names_commit_only_when_a_commit_can_go_ahead() {
    let ws = workspace();
    let p = ws.preview(SET_3);
    let err = ws.journal.rebase(p.tx).unwrap_err();
    assert!(
        matches!(&err, Error::NothingToRebase { tx: 1, revision: 0, blocked } if blocked.is_empty()),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tx 1: nothing to rebase, the disk still matches every snapshot of revision 0; a commit can go ahead"
    );
    assert_eq!(err.next_step(), Some(NextStep::Commit { tx: 1 }));
    ws.journal.commit(p.tx, CommitOptions::default()).unwrap();
    // The same change made on disk first: not `commit`.
    let ws = workspace();
    let p = ws.preview(SET_3);
    ws.write("src/b.rs", B_RS_3);
    let rebased = ws.journal.rebase(p.tx).unwrap();
    assert!(!rebased.ready_to_commit);
    let err = ws.journal.rebase(p.tx).unwrap_err();
    match &err {
        Error::NothingToRebase {
            tx: 1,
            revision: 1,
            blocked,
        } => assert_eq!(blocked.len(), 1, "{blocked:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(err.next_step(), Some(NextStep::Abort { tx: 1 }));
    let err = ws
        .journal
        .commit(p.tx, CommitOptions::default())
        .unwrap_err();
    assert_eq!(err.exit_code(), 4);
    assert_eq!(err.next_step(), Some(NextStep::Abort { tx: 1 }));
    // MCP says the same: not edit_commit.
    let tools = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(
        ultra_edit::Journal::open(ws.root()).unwrap(),
    ));
    let e = tools
        .call("edit_rebase", json!({"agent_id": "dev", "preview_id": "1"}))
        .unwrap_err();
    assert_eq!(e.kind, "nothing_to_rebase");
    assert_eq!(e.to_json()["example"]["tool"], "edit_abort");
    assert!(!e.hint.contains("edit_commit"), "{}", e.hint);
}

// ---- item 7: whole-file writes can carry the base they were made from ---------------

fn hex(bytes: &[u8]) -> String {
    ultra_edit::BlobHash::of(bytes).to_hex()
}

/// The plan's `write_file` / `replace_file` with `expected_base`: the base it names
/// (hash, or edit_preview's size+hash shape) lets the preview through and lists no
/// unchecked write; another base is refused as `base_changed` (exit 3), recording and
/// writing nothing; without one the preview says the write was unchecked.
#[test]
fn a_whole_file_write_with_an_expected_base_is_refused_when_the_file_moved_on() {
    let ws = workspace();
    let ok = ws.preview(&format!(
        r#"{{"edits":[{{"op":"write_file","path":"src/b.rs","content":"x\n","expected_base":"{}"}},{{"op":"replace_file","path":"run.sh","content":"y\n","expected_base":{{"content_hash":"{}","bytes":18}}}},{{"op":"write_file","path":"new.txt","content":"n\n","expected_base":{{"file_exists":false,"content_hash":""}}}}]}}"#,
        hex(B_RS),
        hex(b"#!/bin/sh\necho hi\n")
    ));
    assert!(ok.unchecked_base.is_empty(), "{:?}", ok.unchecked_base);
    assert_eq!(ok.files.len(), 3);
    ws.journal.abort(ok.tx).unwrap();
    let unchecked = ws.preview(r#"{"edits":[{"op":"write_file","path":"src/b.rs","content":"x\n"},{"op":"append","path":"src/a.rs","text":"//\n"}]}"#);
    assert_eq!(unchecked.unchecked_base, ["src/b.rs"]);
    ws.journal.abort(unchecked.tx).unwrap();
    // Someone wrote src/b.rs after the writer read it.
    let read = B_RS;
    ws.write("src/b.rs", B_RS_3);
    let stale = plan(&format!(
        r#"{{"edits":[{{"op":"write_file","path":"src/b.rs","content":"x\n","expected_base":"{}"}}]}}"#,
        hex(read)
    ));
    let err = ws.journal.preview(&stale).unwrap_err();
    match &err {
        Error::BaseChanged { paths, found } => {
            assert_eq!(paths, &["src/b.rs"]);
            assert_eq!(
                found,
                &[format!(
                    "src/b.rs: expected blake3 {}, found blake3 {} (28 bytes)",
                    hex(read),
                    hex(B_RS_3)
                )]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.kind(), "base_changed");
    assert_eq!(err.exit_code(), 3);
    assert_eq!(err.next_step(), Some(NextStep::PreviewAgain));
    assert_eq!(ws.journal.log(None).unwrap().len(), 2, "nothing recorded");
    // The size of the shape counts too, and a file that should not exist.
    let wrong_size = plan(&format!(
        r#"{{"edits":[{{"op":"replace_file","path":"src/b.rs","content":"x\n","expected_base":{{"content_hash":"{}","bytes":27}}}}]}}"#,
        hex(B_RS_3)
    ));
    assert!(matches!(
        ws.journal.preview(&wrong_size),
        Err(Error::BaseChanged { .. })
    ));
    let not_new = plan(
        r#"{"edits":[{"op":"write_file","path":"src/b.rs","content":"x\n","expected_base":{"file_exists":false}}]}"#,
    );
    let err = ws.journal.preview(&not_new).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("src/b.rs changed since the content written over it was made from it: src/b.rs: expected no file, found blake3 {} (28 bytes); nothing was recorded", hex(B_RS_3))
    );
    // A hash that is not one is a bad plan.
    let bad = ultra_edit::Plan::from_json(
        br#"{"edits":[{"op":"write_file","path":"src/b.rs","content":"x\n","expected_base":"abc"}]}"#,
    );
    let err = match bad {
        Ok(p) => ws.journal.preview(&p).unwrap_err(),
        Err(e) => Error::Edit(e),
    };
    assert_eq!(err.kind(), "invalid_plan", "{err}");
    assert_eq!(ws.read("src/b.rs"), B_RS_3);
    // The CLI: exit 3, kind base_changed, nothing recorded.
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(&format!(
            r#"{{"edits":[{{"op":"write_file","path":"src/b.rs","content":"x\n","expected_base":"{}"}}]}}"#,
            hex(read)
        )),
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "base_changed");
    assert_eq!(
        json_of(&out)["error"]["next_step"],
        json!({"step": "preview_again"})
    );
}

/// MCP: two agents read `seed` and each write the whole file with `apply_batch`. With
/// the base they read, the second is refused as `source_modified` and the first
/// agent's update stays; without it both succeed (m1nd's behaviour) and each result
/// says the write was not checked against a base.
#[test]
fn mcp_two_agents_writing_a_file_they_both_read_the_second_is_refused() {
    let ws = workspace();
    ws.write("seed", b"seed\n");
    let tools = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(
        ultra_edit::Journal::open(ws.root()).unwrap(),
    ));
    // Both read seed: edit_preview reports its content_hash and bytes.
    let read = tools
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": "seed", "new_content": "seed\nA\n"}),
        )
        .unwrap();
    assert_eq!(read["base_checked"], false);
    assert_eq!(read["unchecked_base"], json!(["seed"]));
    let base = read["snapshot"].clone();
    assert_eq!(base["content_hash"], hex(b"seed\n"));
    assert_eq!(base["bytes"], 5);
    let batch = |agent: &str, content: &str, base: Option<&serde_json::Value>| {
        let mut item = json!({"file_path": "seed", "new_content": content});
        if let Some(b) = base {
            item["expected_base"] = b.clone();
        }
        tools.call("apply_batch", json!({"agent_id": agent, "edits": [item]}))
    };
    let a = batch("a", "seed\nA\n", Some(&base)).unwrap();
    assert_eq!(a["results"][0]["success"], true);
    assert_eq!(a["results"][0]["base_checked"], true);
    let e = batch("b", "seed\nB\n", Some(&json!(hex(b"seed\n")))).unwrap_err();
    assert_eq!(e.kind, "source_modified");
    assert!(
        e.message.contains(&format!(
            "seed: expected blake3 {}, found blake3 {} (7 bytes)",
            hex(b"seed\n"),
            hex(b"seed\nA\n")
        )),
        "{}",
        e.message
    );
    assert_eq!(
        ws.read("seed"),
        b"seed\nA\n",
        "the first agent's update stays"
    );
    // edit_preview's whole-file form is refused the same way.
    let e = tools
        .call(
            "edit_preview",
            json!({"agent_id": "b", "file_path": "seed", "new_content": "seed\nB\n", "expected_base": base}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "source_modified");
    // Without a base: m1nd's behaviour, said in the result.
    let b = batch("b", "seed\nB\n", None).unwrap();
    assert_eq!(b["results"][0]["success"], true);
    assert_eq!(b["results"][0]["base_checked"], false);
    assert_eq!(ws.read("seed"), b"seed\nB\n");
}
