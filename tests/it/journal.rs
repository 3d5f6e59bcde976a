//! The journal as people and m1nd read it: dump, verify, log, stats, gc, migrations,
//! and damaged files.

use std::path::Path;

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use ultra_edit::{
    BlobHash, DumpFilter, Error, GcPolicy, Journal, JournalError, RollbackOptions, TxState,
    SCHEMA_VERSION,
};

use crate::support::*;

fn raw_db(root: &Path) -> redb::Database {
    let mut b = redb::Builder::new();
    b.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    b.open(root.join(".ultra-edit/journal.redb")).unwrap()
}

/// A workspace holding the schema-v1 fixture (journal + files), not yet opened.
fn v1_fixture() -> tempfile::TempDir {
    fixture("v1")
}

#[test]
fn migration_from_the_committed_v1_fixture() {
    let dir = v1_fixture();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1");
    let original = std::fs::read(fixture.join("journal.redb")).unwrap();
    let files_before = tree_state(dir.path());
    let j = Journal::open(dir.path()).unwrap();
    // The v1 file was backed up byte for byte before the step ran.
    let backup = std::fs::read(dir.path().join(".ultra-edit/journal.redb.v1.bak")).unwrap();
    assert_eq!(BlobHash::of(&backup), BlobHash::of(&original));
    assert_eq!(j.stats().unwrap().schema_version, SCHEMA_VERSION);
    let v = j.verify().unwrap();
    assert!(v.ok, "{:?}", v.problems);
    assert_eq!(
        (v.txs, v.revisions, v.blobs, v.batches, v.receipts, v.events),
        (4, 4, 6, 3, 3, 26)
    );
    let log = j.log(None).unwrap();
    type Row<'a> = (u64, TxState, Option<&'a str>, Option<u64>, Option<u64>);
    let rows: Vec<Row> = log
        .iter()
        .map(|e| {
            (
                e.tx,
                e.state,
                e.description.as_deref(),
                e.rollback_of,
                e.rolled_back_by,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (4, TxState::Open, Some("open preview"), None, None),
            (3, TxState::Committed, Some("kept"), None, None),
            (
                2,
                TxState::Committed,
                Some("rollback of tx 1"),
                Some(1),
                None
            ),
            (1, TxState::RolledBack, Some("v1 commit"), None, Some(2)),
        ]
    );
    // Opening changed no workspace file; the migrated history still works.
    assert_eq!(tree_state(dir.path()), files_before);
    assert_eq!(
        std::fs::read(dir.path().join("src/main.rs")).unwrap(),
        b"fn main() {\n    println!(\"kept\");\n}\n"
    );
    j.rollback(3, RollbackOptions::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("src/main.rs")).unwrap(),
        b"fn main() {\n    println!(\"hello\");\n}\n"
    );
    j.commit(4, Default::default()).unwrap();
    j.flush().unwrap();
    assert!(!dir.path().join("run.sh").exists());
    assert!(j.verify().unwrap().ok);
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let ws = workspace();
    {
        let db = raw_db(ws.root());
        let txn = db.begin_write().unwrap();
        txn.open_table(TableDefinition::<&str, u64>::new("meta"))
            .unwrap()
            .insert("schema_version", 99)
            .unwrap();
        txn.commit().unwrap();
    }
    let path = ws.path(".ultra-edit/journal.redb");
    let before = std::fs::read(&path).unwrap();
    match Journal::open(ws.root()) {
        Err(Error::Journal(JournalError::SchemaTooNew {
            found: 99,
            supported,
        })) => assert_eq!(supported, SCHEMA_VERSION),
        other => panic!("expected SchemaTooNew, got {:?}", other.map(|_| ())),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let out = cli(ws.root(), &["log"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("upgrade ultra-edit"));
}

#[test]
fn stats_count_everything() {
    let ws = workspace();
    let p = ws.preview(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"replace_file","path":"src/b.rs","content":"b\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    let s = ws.journal.stats().unwrap();
    let b_rs = b"pub fn b() -> u32 {\n    2\n}\n".len() as u64;
    assert_eq!(
        (
            s.txs,
            s.txs_pruned,
            s.revisions,
            s.blobs,
            s.batches,
            s.receipts
        ),
        (2, 0, 2, 2, 2, 2)
    );
    assert_eq!(s.blob_bytes_unique, b_rs + 2);
    // Each of the 2 revisions and 2 batches refers to both images.
    assert_eq!(s.blob_bytes_referenced, 4 * (b_rs + 2));
    assert!(s.file_bytes.unwrap() > 0);
    let json = json_of(&cli(ws.root(), &["--json", "journal", "stats"], None));
    assert_eq!(json["blobs"], 2);
}

#[test]
fn gc_keeps_rollback_material_of_kept_txs_and_shrinks_the_file() {
    let mut ws = workspace();
    let big = "x".repeat(200_000);
    ws.write("big.txt", b"start\n");
    // An open preview older than every commit: gc keeps it unless told to abort it.
    let old_open = ws
        .preview(r#"{"edits":[{"op":"create_file","path":"later.txt","content":"x"}]}"#)
        .tx;
    let mut txs = Vec::new();
    for i in 0..6 {
        let json = serde_json::json!({"edits":[{"op":"replace_file","path":"big.txt","content":format!("{big}{i}\n")}]}).to_string();
        let p = ws.preview(&json);
        ws.journal.commit(p.tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        txs.push(p.tx);
    }
    let open = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    let before = ws.journal.stats().unwrap();
    let report = ws
        .journal
        .gc(GcPolicy {
            keep_last: Some(2),
            keep_days: None,
            abort_open: false,
            dry_run: false,
        })
        .unwrap();
    // Kept: the open preview and the last commit. Pruned: the five older commits.
    assert_eq!(report.removed.txs_pruned, 5);
    assert_eq!(report.removed.revisions_dropped, 5);
    assert_eq!(
        report.removed.previews_aborted, 0,
        "the open preview is among the kept"
    );
    assert!(report.compacted);
    assert!(
        report.file_bytes_after.unwrap() < report.file_bytes_before.unwrap(),
        "{report:?}"
    );
    let after = ws.journal.stats().unwrap();
    assert!(after.blob_bytes_unique < before.blob_bytes_unique);
    assert!(
        ws.journal.verify().unwrap().ok,
        "{:?}",
        ws.journal.verify().unwrap().problems
    );
    // The kept commit still rolls back to the exact previous bytes…
    ws.journal
        .rollback(txs[5], RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.read("big.txt"), format!("{big}4\n").as_bytes());
    // …a pruned one says why it cannot, and the open preview still commits.
    let err = ws
        .journal
        .rollback(txs[1], RollbackOptions::default())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::WrongState {
                pruned: true,
                reason: ultra_edit::StateReason::Pruned,
                ..
            }
        ) && err.to_string().contains("(pruned)"),
        "{err:?}"
    );
    ws.journal.commit(open, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let log = ws.journal.log(None).unwrap();
    let pruned: Vec<_> = log.iter().filter(|e| e.pruned).collect();
    assert_eq!(pruned.len(), 5);
    assert_eq!(ws.journal.tx(old_open).unwrap().state, TxState::Open);
    // With abort_open, the old preview outside the kept range goes too.
    let report = ws
        .journal
        .gc(GcPolicy {
            keep_last: Some(3),
            keep_days: None,
            abort_open: true,
            dry_run: false,
        })
        .unwrap();
    assert_eq!(
        (report.removed.txs_pruned, report.removed.previews_aborted),
        (1, 1)
    );
    let old = ws.journal.tx(old_open).unwrap();
    assert_eq!((old.state, old.pruned), (TxState::Aborted, true));
    // A pruned commit still names its files (from its receipt); its line counts are gone.
    for e in pruned {
        assert_eq!(e.files, ["big.txt"], "tx {}", e.tx);
        assert_eq!((e.lines_added, e.lines_removed), (0, 0));
    }
    assert!(ws.journal.verify().unwrap().ok);
    // A policy is required.
    assert!(matches!(
        ws.journal.gc(GcPolicy::default()),
        Err(Error::InvalidPolicy { .. })
    ));
}

/// `journal gc` prints the size the file has once the command is over: redb writes its
/// allocator state when the handle closes, after compaction.
#[test]
fn cli_gc_reports_the_file_size_left_on_disk() {
    let ws = workspace();
    let root = ws.dir.path().to_path_buf();
    drop(ws.journal);
    for i in 0..6 {
        std::fs::write(root.join(format!("f{i}.txt")), b"v\n").unwrap();
        let plan = format!(
            r#"{{"edits":[{{"op":"replace_text","path":"f{i}.txt","old":"v","new":"w"}}]}}"#
        );
        let p = json_of(&cli(
            &root,
            &["--json", "preview", "--plan", "-"],
            Some(&plan),
        ));
        let tx = p["tx"].to_string();
        assert!(cli(&root, &["commit", &tx], None).status.success());
    }
    let out = cli(
        &root,
        &["--json", "journal", "gc", "--keep-last", "2"],
        None,
    );
    let report = json_of(&out);
    let on_disk = std::fs::metadata(root.join(".ultra-edit/journal.redb")).map(|m| m.len());
    assert_eq!(
        report["file_bytes_after"].as_u64(),
        on_disk.ok(),
        "{report}"
    );
    assert!(report["file_bytes_after"].as_u64() < report["file_bytes_before"].as_u64());
}

#[test]
fn dump_filters_by_tx_kind_and_since() {
    let ws = workspace();
    let a = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    ws.journal.commit(a, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let b = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"crlf.txt"}]}"#)
        .tx;
    let kinds = |f: DumpFilter| {
        let mut v = Vec::new();
        ws.journal
            .dump(f, |e| {
                v.push((e.event.seq, e.event.kind.name()));
                Ok(true)
            })
            .unwrap();
        v
    };
    let all = kinds(DumpFilter::default());
    assert_eq!(
        all.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        (1..=all.len() as u64).collect::<Vec<_>>()
    );
    let of_b = kinds(DumpFilter::new().with_tx(b));
    assert_eq!(
        of_b.iter().map(|(_, k)| *k).collect::<Vec<_>>(),
        ["tx_created", "revision_recorded"]
    );
    let receipts = kinds(DumpFilter::new().with_kinds(["receipt_issued"]));
    assert_eq!(receipts.len(), 1);
    let since = kinds(DumpFilter::new().with_since_seq(all[all.len() - 2].0));
    assert_eq!(since.len(), 2);
    // The CLI's --since takes a seq or a time.
    let out = cli(
        ws.root(),
        &[
            "--json",
            "journal",
            "dump",
            "--since",
            "2000-01-01T00:00:00Z",
            "--kind",
            "tx_created",
        ],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    let out = cli(
        ws.root(),
        &["journal", "dump", "--since", "yesterday"],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a malformed --since is a usage error"
    );
}

#[test]
fn dump_works_while_another_process_holds_the_journal() {
    // A committer blocked on the lock keeps the journal open in another process.
    use fs2::FileExt;
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path(".ultra-edit/commit.lock"))
        .unwrap();
    lock.lock_exclusive().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(ws.root())
        .args(["commit", &tx.to_string(), "--lock-timeout", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = cli(ws.root(), &["--json", "journal", "dump"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() >= 3);
    FileExt::unlock(&lock).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(!ws.path("run.sh").exists());
}

/// Every command on a damaged journal: a clear error, a non-zero exit, no panic.
fn assert_clear_failure(root: &Path, what: &str) {
    for args in [
        &["log"][..],
        &["show", "1"],
        &["journal", "dump"],
        &["journal", "verify"],
        &["commit", "1"],
        &["rollback", "1"],
        &["journal", "stats"],
    ] {
        let out = cli(root, args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what}: {args:?} succeeded");
        assert_ne!(
            out.status.code(),
            Some(101),
            "{what}: {args:?} panicked: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{what}: {args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{what}: {args:?}: {stderr}");
    }
}

#[test]
fn damaged_journals_give_clear_errors() {
    // Truncated file.
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    ws.journal.commit(tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let path = ws.path(".ultra-edit/journal.redb");
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len / 3)
        .unwrap();
    assert_clear_failure(ws.root(), "truncated");

    // A record with an unknown format byte: verify names it, readers fail clearly.
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    ws.journal.commit(tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    {
        let db = raw_db(ws.root());
        let txn = db.begin_write().unwrap();
        {
            let mut t = txn
                .open_table(TableDefinition::<u64, &[u8]>::new("txs"))
                .unwrap();
            let mut v = t.get(tx).unwrap().unwrap().value().to_vec();
            v[0] = 9;
            t.insert(tx, v.as_slice()).unwrap();
        }
        txn.commit().unwrap();
        let r = db.begin_read().unwrap();
        assert!(r
            .open_table(TableDefinition::<u64, &[u8]>::new("txs"))
            .is_ok());
    }
    let out = cli(ws.root(), &["journal", "verify"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("unknown format byte 9"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = cli(ws.root(), &["show", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown format byte 9"));

    // Flipped bytes all over the file (a seeded, bounded sweep).
    let mut flipped_runs = 0;
    for seed in 1..=12u64 {
        let ws = workspace();
        let tx = ws
            .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
            .tx;
        ws.journal.commit(tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        let mut bytes = std::fs::read(path_of(&ws)).unwrap();
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let at = (x as usize) % bytes.len();
            bytes[at] ^= 0xFF;
        }
        std::fs::write(path_of(&ws), &bytes).unwrap();
        for args in [
            &["log"][..],
            &["journal", "dump"],
            &["journal", "verify"],
            &["rollback", "1"],
        ] {
            let out = cli(ws.root(), args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_ne!(
                out.status.code(),
                Some(101),
                "seed {seed}: {args:?} panicked: {stderr}"
            );
            assert!(
                !stderr.contains("panicked"),
                "seed {seed}: {args:?}: {stderr}"
            );
        }
        flipped_runs += 1;
    }
    assert_eq!(flipped_runs, 12);
}

fn path_of(ws: &Ws) -> std::path::PathBuf {
    ws.path(".ultra-edit/journal.redb")
}

/// A file of `n` lines, large enough (over 32 chunks) for its blob to need manifest
/// pages (docs/on-disk-format.md, "Blobs"); `tag` changes one line in the middle.
fn paged_file(n: usize, tag: &str) -> Vec<u8> {
    (0..n)
        .map(|i| match i == n / 2 {
            true => format!("middle line {tag}\n"),
            false => format!("line {i} holds {}\n", i * 7 % 1013),
        })
        .collect::<String>()
        .into_bytes()
}

fn blob_pages(root: &Path) -> Vec<([u8; 32], Vec<u8>)> {
    let db = raw_db(root);
    let r = db.begin_read().unwrap();
    let t = r
        .open_table(TableDefinition::<&[u8; 32], &[u8]>::new("blob_pages"))
        .unwrap();
    t.iter()
        .unwrap()
        .map(|i| {
            let (k, v) = i.unwrap();
            (*k.value(), v.value().to_vec())
        })
        .collect()
}

/// gc keeps every manifest page and chunk a kept blob reaches and drops the rest: what
/// is left is exactly what a fresh journal storing only the kept blobs holds.
#[test]
fn gc_drops_exactly_the_pages_and_chunks_no_kept_blob_reaches() {
    let mut ws = workspace();
    let versions: Vec<Vec<u8>> = (0..4).map(|i| paged_file(8000, &i.to_string())).collect();
    ws.write("big.txt", &versions[0]);
    for v in &versions[1..] {
        let json = serde_json::json!({"edits":[{"op":"replace_file","path":"big.txt",
            "content":String::from_utf8(v.clone()).unwrap()}]})
        .to_string();
        let p = ws.preview(&json);
        ws.journal.commit(p.tx, Default::default()).unwrap();
    }
    let pages_before = blob_pages(ws.root()).len();
    let before = ws.journal.stats().unwrap();
    assert_eq!(before.blobs, 4);
    let report = ws
        .journal
        .gc(GcPolicy {
            keep_last: Some(1),
            ..Default::default()
        })
        .unwrap();
    let after = ws.journal.stats().unwrap();
    // Kept: the last commit's pre- and post-image (versions 2 and 3).
    assert_eq!(
        (report.removed.txs_pruned, report.removed.blobs_dropped),
        (2, 2)
    );
    assert_eq!(after.blobs, 2);
    assert_eq!(
        report.removed.bytes_freed,
        before.blob_bytes_unique - after.blob_bytes_unique
    );
    // The same two blobs stored by a fresh journal: same pages, same bytes.
    let fresh = workspace();
    fresh.write("big.txt", &versions[2]);
    let json = serde_json::json!({"edits":[{"op":"replace_file","path":"big.txt",
        "content":String::from_utf8(versions[3].clone()).unwrap()}]})
    .to_string();
    let p = fresh.preview(&json);
    fresh.journal.commit(p.tx, Default::default()).unwrap();
    assert_eq!(
        fresh.journal.stats().unwrap().blob_bytes_unique,
        after.blob_bytes_unique
    );
    let kept_pages = blob_pages(ws.root());
    assert_eq!(kept_pages, blob_pages(fresh.root()));
    assert!(!kept_pages.is_empty() && kept_pages.len() < pages_before);
    // Nothing more to drop, and both kept blobs read back exactly.
    let again = ws
        .journal
        .gc(GcPolicy {
            keep_last: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        (again.removed.blobs_dropped, again.removed.bytes_freed),
        (0, 0)
    );
    for v in &versions[2..] {
        assert_eq!(ws.journal.blob(&BlobHash::of(v)).unwrap().as_ref(), Some(v));
    }
    assert!(ws.journal.verify().unwrap().ok);
}

/// A damaged or missing manifest page: `journal verify` names the blob and the page,
/// a rollback that needs it refuses with `Corrupt` and leaves the file as it was.
#[test]
fn verify_and_rollback_check_every_manifest_page() {
    let ws = workspace();
    let old = paged_file(8000, "old");
    ws.write("big.txt", &old);
    let new = String::from_utf8(paged_file(8000, "new")).unwrap();
    let p = ws.preview(
        &serde_json::json!({"edits":[{"op":"replace_file","path":"big.txt","content":new}]})
            .to_string(),
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    // A page that only the old blob reaches (its middle line differs): one of this
    // journal's pages that a journal holding only the new blob does not have.
    let Ws { dir, journal } = ws;
    drop(journal);
    let new_only = {
        let fresh = workspace();
        fresh.write("big.txt", new.as_bytes());
        let p = fresh.preview(r#"{"edits":[{"op":"delete_file","path":"big.txt"}]}"#);
        fresh.journal.commit(p.tx, Default::default()).unwrap();
        blob_pages(fresh.root())
    };
    let both = blob_pages(dir.path());
    let old_only: Vec<_> = both.iter().filter(|p| !new_only.contains(p)).collect();
    // The two blobs share every page but those on the changed chunk's path.
    assert!(
        (1..=3).contains(&old_only.len()) && both.len() == new_only.len() + old_only.len(),
        "{} {} {}",
        both.len(),
        new_only.len(),
        old_only.len()
    );
    let (key, page) = old_only[0].clone();
    let mut damaged = page.clone();
    damaged[5] ^= 0x40;
    let db = raw_db(dir.path());
    let txn = db.begin_write().unwrap();
    txn.open_table(TableDefinition::<&[u8; 32], &[u8]>::new("blob_pages"))
        .unwrap()
        .insert(&key, damaged.as_slice())
        .unwrap();
    txn.commit().unwrap();
    drop(db);
    let j = Journal::open(dir.path()).unwrap();
    let v = j.verify().unwrap();
    let old_hash = BlobHash::of(&old);
    // The blob, and the two records that need it (the new blob shares the page's
    // neighbours, not the page).
    let subjects: Vec<_> = v.problems.iter().map(|p| p.subject).collect();
    assert_eq!(
        subjects,
        [
            ultra_edit::Subject::Blob { hash: old_hash },
            ultra_edit::Subject::Revision { tx: 1, revision: 0 },
            ultra_edit::Subject::Batch { batch: 1 },
        ]
    );
    assert!(
        v.problems[0].what.contains(&format!(
            "manifest page {} of blob {old_hash} holds {} bytes that hash to {}",
            BlobHash(key),
            page.len(),
            BlobHash::of(&damaged)
        )),
        "{}",
        v.problems[0].what
    );
    let err = j.rollback(p.tx, RollbackOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Journal(JournalError::Corrupt {
                table: "blob_pages",
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("big.txt")).unwrap(),
        new.as_bytes()
    );
    // gc refuses too, rather than judge what the damaged blob reaches.
    drop(j);
    let mut j = Journal::open(dir.path()).unwrap();
    let err = j
        .gc(GcPolicy {
            keep_last: Some(5),
            ..Default::default()
        })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Journal(JournalError::Corrupt {
                table: "blob_pages",
                ..
            })
        ),
        "{err:?}"
    );
}

/// Found by the breaker: one flipped byte in an event (tx 3's `revision_recorded`
/// naming tx 2) passed `journal verify`, and `journal dump` then told tx 2 two
/// revision events and tx 3 none. Verify now holds the events to the records.
#[test]
fn verify_finds_an_event_that_names_another_tx() {
    let ws = workspace();
    ws.write("f.txt", b"a\nb\nc\n");
    for i in 1..=3 {
        let p = ws.preview(&format!(
            r#"{{"edits":[{{"op":"replace_lines","path":"f.txt","start":{i},"end":{i},"content":"L{i}\n"}}]}}"#
        ));
        assert_eq!(p.tx, i);
        ws.journal.commit(p.tx, Default::default()).unwrap();
    }
    let root = ws.root().to_path_buf();
    let Ws { dir, journal } = ws;
    drop(journal);
    // Tx 3's revision_recorded event: its value ends with the variant (1), tx 3,
    // revision 0 (bincode varints).
    let db = raw_db(&root);
    let seq = {
        let txn = db.begin_read().unwrap();
        let events = txn
            .open_table(TableDefinition::<u64, &[u8]>::new("events"))
            .unwrap();
        let found = events.iter().unwrap().find_map(|e| {
            let (k, v) = e.unwrap();
            v.value().ends_with(&[1, 3, 0]).then(|| k.value())
        });
        found.expect("tx 3's revision_recorded event")
    };
    let txn = db.begin_write().unwrap();
    {
        let mut events = txn
            .open_table(TableDefinition::<u64, &[u8]>::new("events"))
            .unwrap();
        let mut value = events.get(seq).unwrap().unwrap().value().to_vec();
        let n = value.len();
        value[n - 2] = 2;
        events.insert(seq, value.as_slice()).unwrap();
    }
    txn.commit().unwrap();
    drop(db);
    let j = Journal::open(dir.path()).unwrap();
    let v = j.verify().unwrap();
    assert!(!v.ok);
    let problems: Vec<String> = v.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            format!("tx 2: its revision_recorded event {seq} names revision 0 where revision 1 comes next"),
            "tx 3: has 0 revision_recorded event(s) for 1 revision(s)".to_string(),
        ]
    );
}
