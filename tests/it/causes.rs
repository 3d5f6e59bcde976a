//! Errors that name the real cause: what a message says is what happened, and what the
//! next command will do (README, "Exit codes").

use ultra_edit::{Error, GcPolicy, Journal, NextStep, StateReason, Subject};

use crate::support::*;

#[test]
fn commit_of_a_committed_tx_that_gc_pruned_says_it_is_committed() {
    let mut ws = workspace();
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"run.sh","content":"x\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.journal
        .gc(GcPolicy {
            keep_days: Some(0),
            ..Default::default()
        })
        .unwrap();
    assert!(ws.journal.tx(p.tx).unwrap().pruned);
    // A retried commit of it is answered with its receipt (receipts outlive gc).
    let again = ws.journal.commit_report(p.tx, Default::default()).unwrap();
    assert!(again.already);
    assert_eq!(again.receipt.batch, 1);
    assert_eq!(
        again.receipt.kind,
        ultra_edit::BatchKind::Commit { revision: 0 }
    );
    // Abort of it is refused as committed, and points at its history.
    let err = ws.journal.abort(p.tx).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                pruned: true,
                reason: StateReason::Committed {
                    revision: 0,
                    batch: 1
                },
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "tx 1 is committed (pruned); revision 0 was applied by batch 1, so it cannot be aborted"
    );
    assert_eq!(err.next_step(), Some(NextStep::History { tx: 1 }));
    // A rollback of it, which needs what gc dropped, says that.
    let err = ws.journal.rollback(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                reason: StateReason::Pruned,
                ..
            }
        ),
        "{err:?}"
    );
}

#[cfg(feature = "failpoints")]
#[test]
fn a_revert_that_cannot_finish_says_so_and_the_next_command_finishes_it() {
    let ws = workspace();
    ws.write("a.txt", b"a\n");
    ws.write("b.txt", b"b\n");
    let before = ws.tree();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"A\n"},{"op":"replace_file","path":"b.txt","content":"B\n"}]}"#,
    );
    // The first rename succeeds, every later one fails (EIO): the install stops at
    // b.txt and the revert cannot put a.txt back either. No foreign bytes anywhere.
    let out = run_ue(
        ws.root(),
        &["--json", "commit", &p.tx.to_string()],
        Some("fs::rename=1*off->return(5)"),
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "needs_attention");
    assert_eq!(v["error"]["outcome"], "will_revert");
    assert!(
        v["error"]["attention"]["revert_incomplete"].is_object(),
        "{v}"
    );
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("the revert could not finish")
            && msg.contains("the next recovery finishes the revert"),
        "{msg}"
    );
    assert!(!msg.contains("foreign"), "{msg}");
    let hint = v["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("finishes the revert") && !hint.contains("--overwrite"),
        "{hint}"
    );
    // The next command's recovery finishes the revert, as said.
    assert_eq!(run_ue(ws.root(), &["log"], None).status.code(), Some(0));
    assert_eq!(ws.tree(), before);
    assert_eq!(
        run_ue(ws.root(), &["journal", "verify"], None)
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn verify_names_the_transactions_and_files_a_damaged_blob_breaks() {
    let original = b"ORIGINAL-PRECIOUS-CONTENT-0123456789\n".repeat(4);
    let (dir, _) = with_damaged_blob(&original);
    let v = Journal::open(dir.path()).unwrap().verify().unwrap();
    let hash = ultra_edit::BlobHash::of(&original);
    let about: Vec<(Subject, bool)> = v
        .problems
        .iter()
        .map(|p| (p.subject, p.what.contains("which is damaged")))
        .collect();
    assert_eq!(
        about,
        [
            (Subject::Blob { hash }, false),
            (Subject::Revision { tx: 1, revision: 0 }, true),
            (Subject::Batch { batch: 1 }, true),
        ],
        "{:?}",
        v.problems
    );
    assert!(
        v.problems[1].what.starts_with("f.txt snapshot: needs blob"),
        "{:?}",
        v.problems
    );
    assert!(
        v.problems[2]
            .what
            .starts_with("f.txt pre-image: needs blob"),
        "{:?}",
        v.problems
    );
}
