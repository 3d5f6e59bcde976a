//! A full disk under the journal: ENOSPC at every write of a commit.

use std::collections::BTreeMap;
use std::time::Instant;

use ultra_edit::Journal;

use crate::support::*;

use super::*;

/// A hook for the journal's backend that, once armed, fails its `n`-th mutating
/// operation (write, set_len, sync_data) and every one after it with ENOSPC, as a disk
/// that fills up at that moment and stays full. `budget`: operations left before the
/// disk is full (negative: not armed); `tripped`: set once an operation failed.
fn full_disk(
    budget: std::sync::Arc<std::sync::atomic::AtomicI64>,
    tripped: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> impl Fn(crate::support::hooked::BackendOp) -> std::io::Result<()> + Send + Sync + 'static {
    use std::sync::atomic::Ordering;
    move |_| {
        let left = budget.load(Ordering::SeqCst);
        if left < 0 {
            return Ok(());
        }
        if left == 0 {
            tripped.store(true, Ordering::SeqCst);
            return Err(std::io::Error::from_raw_os_error(28));
        }
        budget.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
}

const FULL_DISK_PLAN: &str = r#"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
    {"op":"create_file","path":"gen/new.rs","content":"// new\n"},
    {"op":"delete_file","path":"run.sh"}]}"#;

/// What one run of the full-disk matrix saw.
#[derive(Debug)]
struct FullDiskRun {
    /// The mutating journal operation that failed (0-based), or None when the commit
    /// never hit the full disk.
    at: Option<i64>,
    /// What `commit` returned: "ok" or the error's kind.
    returned: String,
    /// The tree right after the failed call, before any recovery: "pre", "post", "other".
    right_after: &'static str,
    /// The tree after the disk was freed and recovery ran: "pre" or "post".
    settled: &'static str,
    /// Paths that differed from the pre-state right after the call.
    changed: Vec<String>,
}

/// Commit FULL_DISK_PLAN with the journal's disk filling up at its n-th write, for every
/// n until the commit no longer reaches the full disk; after each, free the disk, open
/// the journal normally (recovery), and check the tree is exactly pre or post, the journal
/// agrees (tx state, receipts), `journal verify` passes, and nothing is stuck.
fn full_disk_matrix() -> Vec<FullDiskRun> {
    let (pre, post) = {
        let ws = workspace();
        let pre = ws.tree();
        commit(&ws, FULL_DISK_PLAN);
        (pre, ws.tree())
    };
    let classify = |t: &BTreeMap<String, String>| {
        if *t == pre {
            "pre"
        } else if *t == post {
            "post"
        } else {
            "other"
        }
    };
    let started = Instant::now();
    let mut runs = Vec::new();
    for n in 0..400i64 {
        assert!(
            started.elapsed().as_secs() < 60,
            "full-disk matrix too slow"
        );
        let ws = fast_workspace();
        let tx = ws.preview(FULL_DISK_PLAN).tx;
        let budget = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(-1));
        let tripped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let backend = crate::support::hooked::Hooked::on_journal_of(
            ws.root(),
            full_disk(budget.clone(), tripped.clone()),
        );
        let faulty = Journal::open_with(
            ws.root(),
            ultra_edit::OpenOptions::default().with_journal_backend(Box::new(backend)),
        )
        .unwrap();
        budget.store(n, std::sync::atomic::Ordering::SeqCst);
        let result = faulty.commit(tx, Default::default());
        let hit = tripped.load(std::sync::atomic::Ordering::SeqCst);
        let now = ws.tree();
        let right_after = classify(&now);
        let changed: Vec<String> = pre
            .keys()
            .chain(now.keys())
            .filter(|k| pre.get(*k) != now.get(*k))
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        drop(faulty);
        let returned = match &result {
            Ok(_) => "ok".to_string(),
            Err(e) => e.kind().to_string(),
        };
        // The disk has room again: a new handle recovers on open.
        let j = Journal::open(ws.root()).unwrap();
        j.recover().unwrap();
        let settled = classify(&ws.tree());
        let what = format!("journal full at write {n}: commit returned {returned}");
        assert_ne!(
            settled, "other",
            "{what}: tree is neither pre nor post after recovery"
        );
        assert!(
            ws.tree().keys().all(|k| !k.contains(".ue-")),
            "{what}: temp left"
        );
        let report = j.verify().unwrap();
        assert!(report.ok, "{what}: journal verify: {:?}", report.problems);
        let state = j.show(tx, None).unwrap().state;
        if settled == "post" {
            assert_eq!(state, ultra_edit::TxState::Committed, "{what}");
        } else {
            assert_eq!(state, ultra_edit::TxState::Open, "{what}");
            j.commit(tx, Default::default())
                .unwrap_or_else(|e| panic!("{what}: stuck, the tx does not commit now: {e:?}"));
            assert_eq!(classify(&ws.tree()), "post", "{what}");
        }
        if result.is_ok() {
            assert_eq!(right_after, "post", "{what}");
        }
        runs.push(FullDiskRun {
            at: hit.then_some(n),
            returned,
            right_after,
            settled,
            changed,
        });
        if !hit {
            break;
        }
    }
    runs
}

#[test]
fn journal_full_disk_at_every_write_of_a_commit_ends_pre_or_post() {
    let started = Instant::now();
    let runs = full_disk_matrix();
    let hits = runs.iter().filter(|r| r.at.is_some()).count();
    assert!(hits >= 3, "the commit made only {hits} journal writes");
    assert!(
        runs.last().unwrap().at.is_none(),
        "never got past the full disk"
    );
    let mut seen = BTreeMap::new();
    for r in runs.iter().filter(|r| r.right_after == "other") {
        println!(
            "  full at write {:?}: returned {}, changed right after {:?}, settled {}",
            r.at, r.returned, r.changed, r.settled
        );
    }
    for r in &runs {
        *seen
            .entry((r.returned.clone(), r.right_after, r.settled))
            .or_insert(0) += 1;
    }
    println!(
        "journal full disk: {hits} failing writes, outcomes (returned, right after, after recovery) {seen:?}, {:?}",
        started.elapsed()
    );
}

#[test]
fn journal_full_disk_error_tells_whether_files_changed() {
    // The contract of error.rs: an error other than NeedsAttention means no file changed,
    // now or later (CommitFailed: "reverted, no file changed"; the others are returned
    // before anything outside .ultra-edit/ changes).
    let mut broken = Vec::new();
    for r in full_disk_matrix() {
        if r.returned != "ok"
            && r.returned != "needs_attention"
            && (r.right_after != "pre" || r.settled != "pre")
        {
            broken.push(format!(
                "journal full at its write {:?}: commit returned `{}`; the tree right after was \
                 `{}` (changed: {:?}) and after recovery `{}`",
                r.at, r.returned, r.right_after, r.changed, r.settled
            ));
        }
    }
    assert!(
        broken.is_empty(),
        "{} commit(s) reported an error that does not say the files changed:\n{}",
        broken.len(),
        broken.join("\n")
    );
}
