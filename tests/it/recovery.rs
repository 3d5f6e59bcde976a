//! Recovery after a batch dies half-way. The "crash" is a panic from the filesystem
//! twin at the n-th mutating operation, which unwinds out of the library with the
//! journal exactly as a dead process leaves it. (Real process deaths and power cuts are
//! the crash-injection suite's job.)

use std::collections::BTreeMap;
use std::sync::Arc;

use ultra_edit::{
    BatchState, BlobHash, Error, Journal, JournalError, OpenOptions, RollbackOptions, TxState,
};

use crate::support::faultfs::FaultFs;
use crate::support::*;

const FIVE_FILES: &str = r#"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
    {"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper_a"},
    {"op":"delete_file","path":"run.sh"},
    {"op":"create_file","path":"docs/new/guide.md","content":"guide\n"},
    {"op":"replace_lines","path":"crlf.txt","start":1,"end":1,"content":"ONE"}]}"#;

/// Mutating operations before the commit point: 2 mkdirs + 4 temp writes.
const STAGE_OPS: usize = 6;

/// The library turns the twin's panic into `JournalError::Panicked` (no panic crosses
/// its boundary); the journal is left as the dead process would leave it.
fn crashed<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::Journal(JournalError::Panicked { .. })))
}

fn crash_commit(ws: &Ws, tx: u64, after: usize) -> bool {
    let j = faulty(ws, FaultFs::crash_after(after));
    crashed(j.commit(tx, Default::default()))
}

fn post_tree() -> BTreeMap<String, String> {
    let ws = workspace();
    let p = ws.preview(FIVE_FILES);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.tree()
}

fn no_temps(tree: &BTreeMap<String, String>) -> bool {
    tree.keys().all(|k| !k.contains(".ue-"))
}

#[test]
fn recovery_reverts_before_the_commit_point_and_completes_after() {
    let post = post_tree();
    let mut crashed = 0;
    for n in 0..40 {
        let ws = workspace();
        let pre = ws.tree();
        let p = ws.preview(FIVE_FILES);
        if !crash_commit(&ws, p.tx, n) {
            break; // n is past the last operation: the commit finished.
        }
        crashed += 1;
        let j = Journal::open(ws.root()).unwrap();
        let report = j.recovery_on_open().expect("recovery ran on open").clone();
        assert_eq!(report.batches_found, 1, "n={n}");
        let tree = ws.tree();
        assert!(no_temps(&tree), "n={n}: temp left: {tree:?}");
        let state = j.show(p.tx, None).unwrap().state;
        if n < STAGE_OPS {
            assert_eq!(
                tree, pre,
                "n={n}: before the commit point the batch is reverted"
            );
            assert_eq!(report.reverted.len(), 1, "n={n}");
            assert_eq!(state, TxState::Open);
        } else {
            assert_eq!(
                tree, post,
                "n={n}: after the commit point the batch is completed"
            );
            assert_eq!(report.completed.len(), 1, "n={n}");
            assert_eq!(state, TxState::Committed);
            // The one receipt is recovery's.
            let log = j.log(None).unwrap();
            assert_eq!(log[0].committed.map(|c| c.revision), Some(0));
        }
        // Recovery is idempotent: nothing left to do.
        assert_eq!(j.recover().unwrap().batches_found, 0);
    }
    assert!(
        crashed > STAGE_OPS + 5,
        "only {crashed} crash points reached"
    );
}

#[test]
fn recovery_that_crashes_can_run_again() {
    let post = post_tree();
    for recovery_crash in 0..4 {
        let ws = workspace();
        let p = ws.preview(FIVE_FILES);
        assert!(crash_commit(&ws, p.tx, STAGE_OPS + 2)); // two files installed
        let opts = OpenOptions {
            fs: Some(Arc::new(
                FaultFs::crash_after(recovery_crash).beneath(ws.root()),
            )),
            ..Default::default()
        };
        assert!(
            crashed(Journal::open_with(ws.root(), opts)),
            "recovery crash {recovery_crash} not reached"
        );
        let j = Journal::open(ws.root()).unwrap();
        assert_eq!(j.recovery_on_open().unwrap().completed.len(), 1);
        assert_eq!(ws.tree(), post, "after recovery crash {recovery_crash}");
    }
}

#[test]
fn foreign_bytes_are_never_clobbered() {
    let ws = workspace();
    let p = ws.preview(FIVE_FILES);
    assert!(crash_commit(&ws, p.tx, STAGE_OPS + 1)); // crlf.txt installed, others not
    ws.write("src/lib.rs", b"a human saved this meanwhile\n");
    let j = Journal::open(ws.root()).unwrap();
    let report = j.recovery_on_open().unwrap().clone();
    assert_eq!(report.needs_attention.len(), 1);
    let action = &report.actions[0];
    assert_eq!(action.result, BatchState::NeedsAttention);
    assert_eq!(action.foreign.len(), 1);
    assert_eq!(action.foreign[0].path, "src/lib.rs");
    let kept = BlobHash::of(b"a human saved this meanwhile\n");
    assert_eq!(action.foreign[0].found.hash(), Some(kept));
    // Untouched on disk, kept in the journal, the rest rolled forward.
    assert_eq!(ws.read("src/lib.rs"), b"a human saved this meanwhile\n");
    assert_eq!(
        j.blob(&kept).unwrap().unwrap(),
        b"a human saved this meanwhile\n"
    );
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u32 {\n    crate::helper_a()\n}\n"
    );
    assert!(!ws.path("run.sh").exists());
    let log = j.log(None).unwrap();
    assert_eq!(log[0].batch_state, Some(BatchState::NeedsAttention));
    // And a later rollback attempt of the never-committed tx is refused, not guessed.
    assert!(j.rollback(p.tx, RollbackOptions::default()).is_err());
}

#[test]
fn a_rollback_interrupted_after_its_commit_point_is_completed() {
    let ws = workspace();
    let pre = ws.tree();
    let p = ws.preview(FIVE_FILES);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    let j = faulty(&ws, FaultFs::crash_after(5)); // 4 temps staged, 1 rename done
    assert!(crashed(j.rollback(p.tx, RollbackOptions::default())));
    let j = Journal::open(ws.root()).unwrap();
    assert_eq!(j.recovery_on_open().unwrap().completed.len(), 1);
    assert_eq!(ws.tree(), pre);
    assert_eq!(j.show(p.tx, None).unwrap().state, TxState::RolledBack);
}
