//! A test of the batch protocol's completion that drives a whole [`Journal`]: it sits
//! beside the protocol, not in it, so the batch layer's code never names the workspace
//! above it (docs/architecture.md, "Layers").

use crate::batch::machine::Batch;
use crate::batch::protocol::{complete, Landed};
use crate::journal::records::BatchState;
use crate::workspace::Journal;

/// The completion is conditional (docs/commit-protocol.md, step 7): for a batch
/// that is no longer `Committing` as stored — here a completion already written —
/// it writes nothing and is not an error, so there is still exactly one receipt.
#[test]
fn a_completion_of_a_batch_settled_meanwhile_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), b"old\n").unwrap();
    let j = Journal::init(dir.path()).unwrap();
    let plan = crate::Plan::from_json(
        br#"{"edits":[{"op":"replace_file","path":"f.txt","content":"new\n"}]}"#,
    )
    .unwrap();
    let tx = j.preview(&plan).unwrap().tx;
    let receipt = j.commit(tx, Default::default()).unwrap();
    j.flush().unwrap();
    let stored =
        j.ws.store
            .read()
            .unwrap()
            .batch(receipt.batch)
            .unwrap()
            .unwrap();
    assert_eq!(stored.state, BatchState::Committed);
    // The landed batch as its committer held it, before its completion.
    let mut rec = stored.clone();
    rec.state = BatchState::Committing;
    rec.history.pop();
    let landed = Landed {
        batch: Batch::resume(rec),
        receipt: receipt.clone(),
        replaced: Vec::new(),
        guard: None,
        release: crate::fs::release::Release::InPlace,
    };
    let events = |j: &Journal| {
        let mut n = 0;
        j.ws.store
            .read()
            .unwrap()
            .events(0, |_| {
                n += 1;
                Ok(true)
            })
            .unwrap();
        n
    };
    let before = events(&j);
    let locked = j.lock().unwrap();
    complete(&locked, landed).unwrap();
    drop(locked);
    assert_eq!(events(&j), before, "nothing was written");
    let r = j.ws.store.read().unwrap();
    assert_eq!(r.batch(receipt.batch).unwrap().unwrap(), stored);
    assert_eq!(r.receipt(receipt.batch).unwrap(), Some(receipt));
}
