//! The schema-v3 fixture (tests/fixtures/v3, written by the v3 code): it opens with
//! this binary unchanged, and `journal gc` and `journal verify` agree on every blob it
//! references, the foreign bytes of a needs-attention batch included.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use redb::TableDefinition;
use ultra_edit::{BlobHash, DumpDetail, DumpFilter, GcPolicy, Journal, Problem, Subject, TxState};

use crate::support::{fixture, tree_state};

/// A workspace holding the v3 fixture (journal + files), not yet opened.
fn v3_fixture() -> tempfile::TempDir {
    fixture("v3")
}

#[test]
fn migration_from_the_committed_v3_fixture() {
    let dir = v3_fixture();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3");
    let original = std::fs::read(fixture.join("journal.redb")).unwrap();
    // git keeps only the executable bit: give docs/notes.md back the 0600 it was
    // committed with (the rollback below compares modes).
    std::fs::set_permissions(
        dir.path().join("docs/notes.md"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let files_before = tree_state(dir.path());
    let j = Journal::open(dir.path()).unwrap();
    // The v3 file was backed up byte for byte before the step ran.
    let backup = std::fs::read(dir.path().join(".ultra-edit/journal.redb.v3.bak")).unwrap();
    assert_eq!(BlobHash::of(&backup), BlobHash::of(&original));
    assert_eq!(
        j.stats().unwrap().schema_version,
        ultra_edit::SCHEMA_VERSION
    );
    let v = j.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
    assert_eq!(
        (v.txs, v.revisions, v.blobs, v.batches, v.receipts, v.events),
        (7, 8, 13, 5, 5, 52)
    );
    let rows: Vec<(u64, TxState, Option<u64>, Option<u64>)> = j
        .log(None)
        .unwrap()
        .iter()
        .map(|e| (e.tx, e.state, e.rollback_of, e.rolled_back_by))
        .collect();
    assert_eq!(
        rows,
        [
            (7, TxState::Open, None, None),
            (6, TxState::Aborted, None, None),
            (5, TxState::Committed, None, None),
            (4, TxState::Committed, None, None),
            (3, TxState::Committed, Some(2), None),
            (2, TxState::RolledBack, Some(1), Some(3)),
            (1, TxState::Committed, None, None),
        ]
    );
    assert_eq!(tree_state(dir.path()), files_before);
    // The migrated history still works: v3 states recorded no owner, and a rollback of
    // a v3 commit restores the exact bytes and modes.
    let r = j.rollback(4, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(r.tx, 8);
    assert_eq!(
        std::fs::read(dir.path().join("src/main.rs")).unwrap(),
        b"fn main() {\n    println!(\"world\");\n}\n"
    );
    assert!(r.files.iter().all(|f| f.pre.owner().is_some()));
    j.commit(7, Default::default()).unwrap();
    j.flush().unwrap();
    assert!(!dir.path().join("run.sh").exists());
    let v = j.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
}

#[test]
fn verify_requires_the_foreign_bytes_that_gc_keeps() {
    let dir = v3_fixture();
    let foreign = BlobHash::of(b"foreign\n");
    {
        let mut j = Journal::open(dir.path()).unwrap();
        let mut batch = None;
        let filter = DumpFilter::new().with_tx(5u64);
        j.dump(filter, |e| {
            if let Some(DumpDetail::Batch(b)) = e.detail {
                batch = Some(b);
            }
            Ok(true)
        })
        .unwrap();
        let b = batch.unwrap();
        assert_eq!(b.foreign.len(), 1);
        assert_eq!(
            (b.foreign[0].path.as_str(), b.foreign[0].found.hash()),
            ("g.txt", Some(foreign))
        );
        // gc keeps the foreign bytes of a kept tx …
        let policy = GcPolicy {
            keep_last: Some(10),
            ..Default::default()
        };
        j.gc(policy).unwrap();
        assert_eq!(
            j.blob(&foreign).unwrap().as_deref(),
            Some(&b"foreign\n"[..])
        );
    }
    // … so verify requires them: with the blob gone, it names the batch and file.
    let mut b = redb::Builder::new();
    b.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    let db = b.open(dir.path().join(".ultra-edit/journal.redb")).unwrap();
    let txn = db.begin_write().unwrap();
    txn.open_table(TableDefinition::<&[u8; 32], &[u8]>::new("blob_manifests"))
        .unwrap()
        .remove(&foreign.0)
        .unwrap();
    txn.commit().unwrap();
    drop(db);
    let v = Journal::open(dir.path()).unwrap().verify().unwrap();
    assert_eq!(
        v.problems,
        [Problem {
            subject: Subject::Batch { batch: 5 },
            what: format!("g.txt foreign bytes: blob {foreign} is missing"),
        }]
    );
    assert_eq!(
        v.problems[0].to_string(),
        format!("batch 5: g.txt foreign bytes: blob {foreign} is missing")
    );
}
