//! The schema-v4 fixture (tests/fixtures/v4, written by the v4 code): opened by this
//! binary, the v5 step gives the journal its identity, so its transactions get handles,
//! while the history and the files stay as they were.

use std::path::Path;

use ultra_edit::{BlobHash, Journal, TxState};

use crate::support::{fixture, tree_state};

#[test]
fn migration_from_the_committed_v4_fixture_gives_the_journal_an_id() {
    let dir = fixture("v4");
    let original =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v4/journal.redb"))
            .unwrap();
    let files_before = tree_state(dir.path());
    let j = Journal::open(dir.path()).unwrap();
    let backup = std::fs::read(dir.path().join(".ultra-edit/journal.redb.v4.bak")).unwrap();
    assert_eq!(BlobHash::of(&backup), BlobHash::of(&original));
    assert_eq!(
        j.stats().unwrap().schema_version,
        ultra_edit::SCHEMA_VERSION
    );
    let v = j.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
    assert_eq!(tree_state(dir.path()), files_before);
    let rows: Vec<(u64, TxState, String)> = j
        .log(None)
        .unwrap()
        .into_iter()
        .map(|e| (e.tx, e.state, e.handle.to_string()))
        .collect();
    let id = j.id().to_string();
    assert_eq!(id.len(), 16);
    assert_eq!(
        rows,
        [
            (3, TxState::Aborted, format!("{id}-3")),
            (2, TxState::Open, format!("{id}-2")),
            (1, TxState::Committed, format!("{id}-1")),
        ]
    );
    assert_eq!(j.copied_from(), None);
    drop(j);
    // The id is the same on every later open (the nonce was drawn once).
    let j = Journal::open(dir.path()).unwrap();
    assert_eq!(j.id().to_string(), id);
    // The fixture recorded its files as root's (0:0): as another user they are that
    // user's, which is a changed owner, so the preview is stale by design.
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped the commit: the fixture's files were recorded as root's");
        return;
    }
    // The open v4 preview commits by handle.
    let r = j.commit(j.handle(2), Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(r.tx, 2);
    assert_eq!(
        std::fs::read(dir.path().join("notes.txt")).unwrap(),
        b"a\nb\nc\n"
    );
    // And the v4 commit rolls back by handle.
    j.rollback(j.handle(1), Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("src/main.rs")).unwrap(),
        b"fn main() {\n    println!(\"hello\");\n}\n"
    );
    assert!(!dir.path().join("new.txt").exists());
    assert!(j.verify().unwrap().ok);
}
