//! Count the syncs of a commit through the library's I/O layer: the number
//! docs/commit-protocol.md derives, so that an extra sync, or a missing one, fails.

use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};
use ultra_edit::{Journal, OpenOptions};

use crate::support::faultfs::{FaultFs, Op};
use crate::support::*;

/// The journal file, counting `sync_data` calls.
#[derive(Debug)]
struct Counting {
    inner: FileBackend,
    syncs: Arc<AtomicUsize>,
}

impl StorageBackend for Counting {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> Result<(), std::io::Error> {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.inner.write(offset, data)
    }
    fn close(&self) -> Result<(), std::io::Error> {
        self.inner.close()
    }
    fn try_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(s, e)
    }
    fn try_lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(s, e)
    }
    fn lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(s, e)
    }
    fn lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(s, e)
    }
    fn unlock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(s, e)
    }
    fn query_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(s, e)
    }
}

/// (file fsyncs, directory fsyncs, journal syncs) of one commit of `plan`.
fn count(ws: &Ws, plan_json: &str) -> (usize, usize, usize) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(ws.path(".ultra-edit/journal.redb"))
        .unwrap();
    let syncs = Arc::new(AtomicUsize::new(0));
    let fs = Arc::new(FaultFs::default());
    let j = Journal::open_with(
        ws.root(),
        OpenOptions {
            fs: Some(fs.clone()),
            journal_backend: Some(Box::new(Counting {
                inner: FileBackend::new(file).unwrap(),
                syncs: syncs.clone(),
            })),
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
        // n temp-file fsyncs, 1 directory fsync, and the 3 journal commits (intent,
        // commit point, completion) of JOURNAL_SYNCS_PER_COMMIT syncs each.
        assert_eq!(
            (files, dirs, journal),
            (n, 1, 3 * JOURNAL_SYNCS_PER_COMMIT),
            "n = {n}"
        );
    }
    // Deletions need no file fsync; a created directory adds its parent's fsync.
    let ws = workspace();
    let (files, dirs, journal) = count(
        &ws,
        r#"{"edits":[{"op":"delete_file","path":"run.sh"},{"op":"create_file","path":"new/x.txt","content":"x"}]}"#,
    );
    assert_eq!((files, dirs, journal), (1, 2, 3 * JOURNAL_SYNCS_PER_COMMIT));
}

/// redb 4.6 in MultiWriter mode syncs a `Durability::Immediate` commit this many times
/// (measured by this test's counting backend; see docs/commit-protocol.md).
const JOURNAL_SYNCS_PER_COMMIT: usize = 2;
