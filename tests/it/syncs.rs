//! Count the syncs of a commit through the library's I/O layer: the number
//! docs/commit-protocol.md derives, so that an extra sync, or a missing one, fails.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ultra_edit::{Journal, OpenOptions};

use crate::support::faultfs::{FaultFs, Op};
use crate::support::hooked::{BackendOp, Hooked};
use crate::support::*;

/// (file fsyncs, directory fsyncs, journal syncs) of one commit of `plan`.
fn count(ws: &Ws, plan_json: &str) -> (usize, usize, usize) {
    let syncs = Arc::new(AtomicUsize::new(0));
    let counter = syncs.clone();
    let backend = Hooked::on_journal_of(ws.root(), move |op| {
        if op == BackendOp::Sync {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        Ok(())
    });
    let fs = Arc::new(FaultFs::default().beneath(ws.root()));
    let j = Journal::open_with(
        ws.root(),
        OpenOptions {
            fs: Some(fs.clone()),
            journal_backend: Some(Box::new(backend)),
            ..Default::default()
        },
    )
    .unwrap();
    // redb's first commits after an open also persist its allocator state (one more
    // sync each); two previews by this handle reach the steady state, then the
    // commit's syncs are counted.
    let tx = j.preview(&plan(plan_json)).unwrap().tx;
    j.preview(&plan(plan_json)).unwrap();
    let opened = syncs.load(Ordering::SeqCst);
    j.commit(tx, Default::default()).unwrap();
    let log = fs.log();
    let files = log.iter().filter(|(op, _)| *op == Op::WriteSynced).count();
    let dirs = log.iter().filter(|(op, _)| *op == Op::SyncDir).count();
    (files, dirs, syncs.load(Ordering::SeqCst) - opened)
}

#[test]
fn a_commit_performs_exactly_the_documented_syncs() {
    for n in [1usize, 10, 100] {
        let ws = workspace();
        for i in 0..n {
            ws.write(&format!("d/f{i}.txt"), format!("old {i}\n").as_bytes());
        }
        let edits: Vec<_> = (0..n)
            .map(|i| serde_json::json!({"op":"replace_file","path":format!("d/f{i}.txt"),"content":format!("new {i}\n")}))
            .collect();
        let (files, dirs, journal) = count(&ws, &serde_json::json!({ "edits": edits }).to_string());
        // n temp-file fsyncs, 1 directory fsync, and the 2 journal commits (the intent,
        // which is the commit point, and the completion) of JOURNAL_SYNCS_PER_COMMIT
        // syncs each: n + 5.
        assert_eq!(
            (files, dirs, journal),
            (n, 1, 2 * JOURNAL_SYNCS_PER_COMMIT),
            "n = {n}"
        );
    }
    // Deletions need no file fsync; a created directory adds its parent's fsync.
    let ws = workspace();
    let (files, dirs, journal) = count(
        &ws,
        r#"{"edits":[{"op":"delete_file","path":"run.sh"},{"op":"create_file","path":"new/x.txt","content":"x"}]}"#,
    );
    assert_eq!((files, dirs, journal), (1, 2, 2 * JOURNAL_SYNCS_PER_COMMIT));
}

/// redb 4.6 in MultiWriter mode syncs a `Durability::Immediate` commit this many times
/// (measured by this test's counting backend; see docs/commit-protocol.md).
const JOURNAL_SYNCS_PER_COMMIT: usize = 2;
