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

/// Mutating operations of the staging, after the intent (the commit point): 2 mkdirs +
/// 4 temp writes.
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
    ws.journal.flush().unwrap();
    ws.tree()
}

fn no_temps(tree: &BTreeMap<String, String>) -> bool {
    tree.keys().all(|k| !k.contains(".ue-"))
}

#[test]
fn recovery_completes_every_batch_whose_intent_is_durable() {
    // The intent is the commit point (docs/commit-protocol.md): every filesystem
    // mutation of a commit comes after it, so a crash at any of them — while staging,
    // between renames, before the directory fsync — is rolled forward.
    let post = post_tree();
    let mut crashed = 0;
    for n in 0..40 {
        let ws = workspace();
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
        assert_eq!(tree, post, "n={n}: the batch is completed");
        assert_eq!(report.completed.len(), 1, "n={n}");
        assert_eq!(j.show(p.tx, None).unwrap().state, TxState::Committed);
        // The one receipt is recovery's.
        let log = j.log(None).unwrap();
        assert_eq!(log[0].committed.map(|c| c.revision), Some(0));
        // Recovery is idempotent: nothing left to do.
        assert_eq!(j.recover().unwrap().batches_found, 0);
        assert!(j.verify().unwrap().ok, "n={n}");
    }
    assert!(
        crashed > STAGE_OPS + 5,
        "only {crashed} crash points reached"
    );
}

/// Write batch 1 of `tx` (revision 0) as earlier versions wrote a batch: the intent
/// `Prepared` with the directories `create_dirs` (already on disk) and, with
/// `reached_commit_point`, the later `Prepared → Committing` record; then stage a temp
/// for each of its written files as they did (`.ue-<batch>-<index>-<nonce>.tmp` in the
/// target's directory). Returns the number of temps staged.
pub(crate) fn legacy_batch(
    ws: &Ws,
    tx: u64,
    create_dirs: &[&str],
    reached_commit_point: bool,
) -> usize {
    use ultra_edit::journal::Store;
    use ultra_edit::{BatchFile, BatchKind, BatchRecord, FileState, StateChange};
    let store = Store::open(&ws.root().join(".ultra-edit/journal.redb"), false).unwrap();
    let rev = store.read().unwrap().revision(tx, 0).unwrap().unwrap();
    let files: Vec<BatchFile> = rev
        .files
        .iter()
        .map(|f| BatchFile {
            path: f.path.clone(),
            pre: f.snapshot,
            post: f.candidate,
        })
        .collect();
    let change = |state| StateChange {
        state,
        at_ms: 1,
        note: None,
    };
    let nonce = 0x00ab_cdef_0123_4567u64;
    let mut rec = BatchRecord {
        batch: 1,
        tx,
        kind: BatchKind::Commit { revision: 0 },
        state: BatchState::Prepared,
        nonce,
        files,
        create_dirs: create_dirs
            .iter()
            .map(|d| ultra_edit::fs::RelPath::parse(d).unwrap())
            .collect(),
        remove_dirs: Vec::new(),
        history: vec![change(BatchState::Prepared)],
        foreign: Vec::new(),
    };
    store.write(|w| w.put_batch(&rec)).unwrap();
    let mut temps = 0;
    for (i, f) in rec.files.iter().enumerate() {
        let FileState::File { hash, .. } = f.post else {
            continue;
        };
        let bytes = ws.journal.blob(&hash).unwrap().unwrap();
        let name = format!(".ue-1-{i}-{nonce:016x}.tmp");
        let parent = f.path.parent();
        match parent.is_root() {
            true => ws.write(&name, &bytes),
            false => ws.write(&format!("{}/{name}", parent.as_str()), &bytes),
        }
        temps += 1;
    }
    if reached_commit_point {
        rec.state = BatchState::Committing;
        rec.history.push(change(BatchState::Committing));
        store.write(|w| w.put_batch(&rec)).unwrap();
    }
    temps
}

/// A batch as earlier versions wrote it — the intent `Prepared`, the commit point a
/// later `Prepared → Committing` record — interrupted with its temps staged and its new
/// directories created: before its commit point it is reverted (temps and directories
/// removed, the tx still open), after it rolled forward from the journal's blobs, with
/// one receipt.
#[test]
fn batches_of_the_earlier_two_record_intent_still_recover() {
    let post = post_tree();
    for reached_commit_point in [false, true] {
        let ws = workspace();
        let pre = ws.tree();
        let p = ws.preview(FIVE_FILES);
        let temps = legacy_batch(&ws, p.tx, &["docs", "docs/new"], reached_commit_point);
        assert_eq!(temps, 4);
        let j = Journal::open(ws.root()).unwrap();
        let report = j.recovery_on_open().expect("recovery ran on open").clone();
        assert_eq!(report.batches_found, 1);
        assert_eq!(report.temps_removed, 4, "{report:?}");
        let tree = ws.tree();
        assert!(no_temps(&tree), "temp left: {tree:?}");
        if reached_commit_point {
            assert_eq!(report.completed, [1]);
            assert_eq!(tree, post);
            assert_eq!(j.show(p.tx, None).unwrap().state, TxState::Committed);
        } else {
            assert_eq!(report.reverted, [1]);
            assert_eq!(tree, pre, "the new directories are removed too");
            assert_eq!(j.show(p.tx, None).unwrap().state, TxState::Open);
            // The tx commits normally afterwards, with the new protocol.
            j.commit(p.tx, Default::default()).unwrap();
            j.flush().unwrap();
            assert_eq!(ws.tree(), post);
        }
        assert!(j.verify().unwrap().ok, "{:?}", j.verify().unwrap().problems);
        assert_eq!(j.recover().unwrap().batches_found, 0);
    }
}

#[test]
fn recovery_that_crashes_can_run_again() {
    let post = post_tree();
    for recovery_crash in 0..4 {
        let ws = workspace();
        let p = ws.preview(FIVE_FILES);
        assert!(crash_commit(&ws, p.tx, STAGE_OPS + 2)); // two files installed
        let opts = OpenOptions::default().with_fs(Arc::new(
            FaultFs::crash_after(recovery_crash).beneath(ws.root()),
        ));
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
    ws.journal.flush().unwrap();
    let j = faulty(&ws, FaultFs::crash_after(5)); // 4 temps staged, 1 rename done
    assert!(crashed(j.rollback(p.tx, RollbackOptions::default())));
    let j = Journal::open(ws.root()).unwrap();
    assert_eq!(j.recovery_on_open().unwrap().completed.len(), 1);
    assert_eq!(ws.tree(), pre);
    assert_eq!(j.show(p.tx, None).unwrap().state, TxState::RolledBack);
}

/// The temp names in the workspace's root directory.
fn temps_in(ws: &Ws) -> Vec<String> {
    std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ue-"))
        .collect()
}

/// A recovery that cannot run here (the disk is full: every file fsync fails with
/// ENOSPC) leaves no half-written temp behind, does not stop a reading verb — which
/// reads the journal as it is and says which batch waits and why — and stops a writing
/// one with its error. Once the disk has room, the next command rolls the batch forward.
#[cfg(feature = "failpoints")]
#[test]
fn a_recovery_that_fails_leaves_no_temp_and_does_not_stop_readers() {
    let ws = workspace();
    ws.write("f.txt", b"a\n");
    let tx = ws
        .preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"A\n"}]}"#)
        .tx;
    let out = run_ue(
        ws.root(),
        &["commit", &tx.to_string()],
        Some("batch::after_commit_point=return"),
    );
    assert_eq!(out.status.code(), None, "the failpoint aborts the process");
    let full = Some("fs::fsync=return(28)");
    let out = run_ue(ws.root(), &["log"], full);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // The temp's name ends with the batch's random nonce: `.ue-1-0-<nonce>.tmp`.
    let note = String::from_utf8_lossy(&out.stderr).into_owned();
    let (before, after) = (
        format!(
            "ultra-edit: batch 1 of tx {tx} (committing) was interrupted and needs recovery, which failed here because the disk is full (write temp {}/.ue-1-0-",
            ws.root().display()
        ),
        format!(
            ".tmp: No space left on device (os error 28)); until it runs, f.txt may hold old, new or mixed content. Free at least 2 byte(s) on the filesystem of {0} (`df -h {0}` shows its space; recovery writes that much file content there, each file as a temp before its rename), then run `ultra-edit recover`.\n",
            ws.root().display()
        ),
    );
    assert!(
        note.starts_with(&before) && note.ends_with(&after),
        "{note}"
    );
    assert_eq!(note.len(), before.len() + 16 + after.len(), "{note}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&format!("tx {tx} ")));
    assert_eq!(temps_in(&ws), Vec::<String>::new(), "no half-written temp");
    assert_eq!(ws.read("f.txt"), b"a\n");
    let out = run_ue(ws.root(), &["--json", "abort", &tx.to_string()], full);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "io");
    assert_eq!(temps_in(&ws), Vec::<String>::new());
    // Room again: rolled forward (past its commit point), one receipt.
    let out = run_ue(ws.root(), &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("f.txt"), b"A\n");
    assert_eq!(temps_in(&ws), Vec::<String>::new());
}
