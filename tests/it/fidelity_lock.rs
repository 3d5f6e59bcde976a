//! Lock liveness (docs/commit-protocol.md): whether a batch is alive never depends on a path
//! that can be unlinked or replaced.
//!
//! - A holder of the commit lock keeps it when `.ultra-edit/commit.lock` is removed or
//!   replaced: a second commit waits its timeout (exit 5) and changes nothing.
//! - A batch past its intent (its commit point), temps staged, whose lock file is
//!   removed is not "recovered" by a second process: its history stays `committing`.
//! - `journal verify` walks the event log and reports a batch whose `batch_state`
//!   events break the state machine.
//!
//! The holders are `ultra-edit` itself paused by a failpoint (with `--features
//! failpoints`), and `flock(1)` on the state directory (skipped, with a printed
//! reason, where `flock(1)` is missing).

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use ultra_edit::{BatchState, EventKind};

use crate::support::*;

const EDIT_B: &str =
    r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    22\n"}]}"#;
const EDIT_A: &str =
    r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"}]}"#;

/// Kills and reaps the child on drop, whatever the test's outcome.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `flock(1)` holding the state directory's lock (it writes no pid), once it holds it.
fn flock_state_dir(ws: &Ws) -> Reaped {
    let scratch = tempfile::tempdir().unwrap();
    let ready = scratch.path().join("ready");
    let holder = Reaped(
        Command::new("flock")
            .args(["-x", "-o"])
            .arg(ws.path(".ultra-edit"))
            .args(["sh", "-c", r#": > "$1"; exec sleep 30"#, "sh"])
            .arg(&ready)
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready.exists() {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(5));
    }
    holder
}

/// Remove the lock file, or replace it with another file of the same name.
fn unlink_or_replace(ws: &Ws, replace: bool) {
    let lock = ws.path(".ultra-edit/commit.lock");
    if replace {
        let other = ws.path(".ultra-edit/commit.lock.new");
        fs::write(&other, b"").unwrap();
        fs::rename(&other, &lock).unwrap();
    } else {
        fs::remove_file(&lock).unwrap();
    }
}

/// A second commit, with a 1 s lock timeout: must time out (exit 5) and change nothing.
fn second_commit_times_out(ws: &Ws, tx: u64) {
    let before = ws.tree();
    let t0 = Instant::now();
    let out = run_ue(
        ws.root(),
        &["--json", "commit", &tx.to_string(), "--lock-timeout", "1"],
        None,
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "lock_timeout");
    assert!(t0.elapsed() >= Duration::from_secs(1), "{:?}", t0.elapsed());
    assert_eq!(ws.tree(), before, "the second commit changed the tree");
}

#[test]
fn a_holder_of_the_state_directory_keeps_the_lock_when_the_lock_file_goes() {
    if let Some(why) = flock_missing() {
        println!("SKIPPED a_holder_of_the_state_directory_keeps_the_lock…: {why}");
        return;
    }
    let ws = workspace();
    let tx = ws.preview(EDIT_B).tx;
    let _holder = flock_state_dir(&ws);
    for replace in [false, true] {
        unlink_or_replace(&ws, replace);
        second_commit_times_out(&ws, tx);
    }
}

/// `ultra-edit commit` paused at `failpoint`, once it holds the lock (its pid is in the
/// lock file).
#[cfg(feature = "failpoints")]
fn paused_commit(ws: &Ws, tx: u64, failpoint: &str) -> Reaped {
    let child = Reaped(
        Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
            .arg("--root")
            .arg(ws.root())
            .args(["commit", &tx.to_string()])
            .env("FAILPOINTS", format!("{failpoint}=sleep(30000)"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id().to_string();
    let lock = ws.path(".ultra-edit/commit.lock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(&lock).unwrap_or_default().trim() != pid {
        assert!(
            Instant::now() < deadline,
            "the paused commit never took the lock"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[cfg(feature = "failpoints")]
#[test]
fn removing_or_replacing_the_lock_file_does_not_let_a_second_commit_in() {
    for replace in [false, true] {
        let ws = workspace();
        let first = ws.preview(EDIT_B).tx;
        let second = ws.preview(EDIT_A).tx;
        let mut holder = paused_commit(&ws, first, "batch::after_lock");
        unlink_or_replace(&ws, replace);
        second_commit_times_out(&ws, second);
        // The holder goes: the next commit takes the lock at once and lands.
        holder.0.kill().unwrap();
        holder.0.wait().unwrap();
        let out = run_ue(ws.root(), &["commit", &second.to_string()], None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(
            ws.read("src/a.rs"),
            b"pub fn a() -> u32 {\n    crate::helper2()\n}\n"
        );
    }
}

/// The batch states the journal's event log records for `tx`.
fn batch_states(root: &Path, tx: u64) -> Vec<String> {
    let out = run_ue(
        root,
        &["journal", "dump", "--json", "--tx", &tx.to_string()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter_map(|v| {
            v["event"]["kind"]["batch_state"]["state"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

#[cfg(feature = "failpoints")]
#[test]
fn a_live_batch_is_never_recovered_when_its_lock_file_is_removed() {
    let ws = workspace();
    let before = ws.tree();
    let first = ws.preview(EDIT_B).tx;
    let second = ws.preview(EDIT_A).tx;
    // Past the intent (the commit point), its temp staged, nothing installed.
    let mut holder = paused_commit(&ws, first, "batch::after_stage_file");
    // The lock is taken before the intent: wait (bounded) until the holder has staged
    // its temp, where the failpoint holds it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while ws.tree().len() == before.len() {
        assert!(Instant::now() < deadline, "the paused commit never staged");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(batch_states(ws.root(), first), ["committing"]);
    fs::remove_file(ws.path(".ultra-edit/commit.lock")).unwrap();

    // A second process: neither its open nor its commit recovers the live batch.
    second_commit_times_out(&ws, second);
    let j = ultra_edit::Journal::open(ws.root()).unwrap();
    assert!(j.recovery_on_open().is_none());
    assert_eq!(batch_states(ws.root(), first), ["committing"]);
    assert_eq!(ws.tree().len(), before.len() + 1, "only the temp was added");

    // Once its process is gone, recovery rolls it forward, and the journal is
    // consistent.
    holder.0.kill().unwrap();
    holder.0.wait().unwrap();
    let out = run_ue(ws.root(), &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    22\n}\n");
    assert_eq!(ws.tree().len(), before.len(), "the temp was removed");
    assert_eq!(batch_states(ws.root(), first), ["committing", "committed"]);
    let out = run_ue(ws.root(), &["journal", "verify"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn journal_verify_reports_batch_state_events_that_break_the_state_machine() {
    let ws = workspace();
    let tx = ws.preview(EDIT_B).tx;
    ws.journal.commit(tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let events = TableDefinition::<u64, &[u8]>::new("events");
    let (committed_seq, appended_seq) = {
        let mut b = redb::Builder::new();
        b.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
        let db = b.open(ws.path(".ultra-edit/journal.redb")).unwrap();
        let r = db.begin_read().unwrap();
        let t = r.open_table(events).unwrap();
        let (mut committing, mut committed, mut last) = (None, None, 0);
        for item in t.iter().unwrap() {
            let (k, v) = item.unwrap();
            last = k.value();
            let ev: EventProbe = ultra_edit::journal::codec::decode("events", v.value()).unwrap();
            match ev.kind {
                EventKind::BatchState {
                    state: BatchState::Committing,
                    ..
                } => committing = Some(v.value().to_vec()),
                EventKind::BatchState {
                    state: BatchState::Committed,
                    ..
                } => committed = Some(k.value()),
                _ => {}
            }
        }
        drop(t);
        drop(r);
        // The batch's `committing` event once more, after its `committed`: the log now
        // says committed → committing, while the batch record is untouched.
        let w = db.begin_write().unwrap();
        w.open_table(events)
            .unwrap()
            .insert(
                last + 1,
                committing.expect("no committing event").as_slice(),
            )
            .unwrap();
        w.commit().unwrap();
        (committed.expect("no committed event"), last + 1)
    };
    let out = run_ue(ws.root(), &["journal", "verify"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let problem = format!(
        "  problem: batch 1: its batch_state events go committed (event {}) -> committing (event {}), which the state machine does not allow\n",
        committed_seq, appended_seq
    );
    assert!(stdout.ends_with(&problem), "{stdout}");
    assert_eq!(stdout.matches("problem:").count(), 1, "{stdout}");
}

/// An event as stored, for finding one by content.
#[derive(serde::Deserialize, serde::Serialize)]
struct EventProbe {
    at_ms: u64,
    kind: EventKind,
}

/// A lock held by another tool (`flock(1)` on the state directory, which writes no pid):
/// the timeout names the lock that was busy — the directory, not `commit.lock` — and
/// its holder, found in the kernel's table of locks (`/proc/locks`).
#[test]
fn a_timeout_names_the_busy_lock_and_a_foreign_holders_pid() {
    if let Some(why) = flock_missing() {
        println!("SKIPPED a_timeout_names_the_busy_lock_and_a_foreign_holders_pid: {why}");
        return;
    }
    let ws = workspace();
    let tx = ws.preview(EDIT_B).tx;
    let holder = flock_state_dir(&ws);
    let out = run_ue(
        ws.root(),
        &["--json", "commit", &tx.to_string(), "--lock-timeout", "0.2"],
        None,
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let v = json_of(&out);
    let message = v["error"]["message"].as_str().unwrap();
    let dir = ws.path(".ultra-edit");
    let (before, after) = (
        format!("commit lock {} still held after ", dir.display()),
        format!(" ms (held by pid {})", holder.0.id()),
    );
    assert!(
        message.starts_with(&before) && message.ends_with(&after),
        "{message}"
    );
}
