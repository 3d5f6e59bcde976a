//! The commit lock against a holder in another process (docs/design.md, "Lifecycle" ›
//! 3. Commit gate).
//!
//! - A commit waits up to its timeout, then fails with `LockTimeout` naming the holder's
//!   pid (exit 5), leaving the tree unchanged.
//! - A waiter gets the lock as soon as a live holder lets go, within its timeout.
//! - A lock held by a process that is SIGKILLed never blocks anyone: a commit right
//!   after the kill goes through at once, and so does one that was already waiting.
//!
//! The foreign holder is `flock(1)` (util-linux) holding `.ultra-edit/commit.lock` while
//! its command sleeps; the test is skipped, with a printed reason, where `flock(1)` is
//! missing. The last test's holder is `ultra-edit` itself, paused by a failpoint in
//! the middle of a batch and then SIGKILLed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ultra_edit::{Error, Journal};

use crate::support::*;

const EDIT: &str =
    r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    22\n"}]}"#;

/// A process holding the commit lock: `flock -o` (the lock stays with the flock
/// process, not its command) running a shell that writes the flock process's pid into
/// the lock file (as `ultra-edit` does) and then sleeps.
struct Holder {
    child: Child,
    /// Pid of the sleeping command (it holds no lock); killed on drop.
    sleeper: Option<u32>,
}

impl Holder {
    fn start(lock: &Path, scratch: &Path, secs: f64) -> Holder {
        let sleeper_file = scratch.join("sleeper.pid");
        let _ = fs::remove_file(&sleeper_file);
        let child = Command::new("flock")
            .args(["-x", "-o"])
            .arg(lock)
            .args([
                "sh",
                "-c",
                r#"printf %s "$PPID" > "$1"; printf %s "$$" > "$2"; exec sleep "$3""#,
                "sh",
            ])
            .arg(lock)
            .arg(&sleeper_file)
            .arg(secs.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn flock");
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let written = fs::read_to_string(lock).unwrap_or_default();
            let sleeper = fs::read_to_string(&sleeper_file)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            if written.trim() == pid.to_string() && sleeper.is_some() {
                return Holder { child, sleeper };
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        panic!("flock holder {pid} did not take the lock within 10 s");
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL the lock holder and reap it.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(pid) = self.sleeper.take() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn ue(root: &Path, args: &[&str]) -> Child {
    ue_command(root, args).spawn().unwrap()
}

fn lock_path(ws: &Ws) -> PathBuf {
    ws.path(".ultra-edit/commit.lock")
}

#[test]
fn lock_timeout_names_the_holder_pid_and_a_sigkilled_holder_never_blocks() {
    if let Some(why) = flock_missing() {
        println!("SKIPPED lock_timeout_names_the_holder_pid…: {why}");
        return;
    }
    let mut ws = workspace();
    let scratch = tempfile::tempdir().unwrap();
    let tx = ws.preview(EDIT).tx;
    let before = ws.tree();
    let mut holder = Holder::start(&lock_path(&ws), scratch.path(), 30.0);

    // CLI: waits the whole --lock-timeout, then exit 5 naming the pid.
    let t0 = Instant::now();
    let out = ue(
        ws.root(),
        &["--json", "commit", &tx.to_string(), "--lock-timeout", "0.6"],
    )
    .wait_with_output()
    .unwrap();
    let waited = t0.elapsed();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "lock_timeout", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("pid {}", holder.pid())),
        "the error does not name the holder pid {}: {message}",
        holder.pid()
    );
    assert!(
        waited >= Duration::from_millis(600),
        "gave up after {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(5),
        "waited {waited:?} for a 0.6 s timeout"
    );
    assert_eq!(ws.tree(), before);

    // Library: the same, as a typed error.
    ws.journal.set_lock_timeout(Duration::from_millis(300));
    let t0 = Instant::now();
    match ws.journal.commit(tx, Default::default()) {
        Err(Error::LockTimeout {
            holder: h,
            waited_ms,
            ..
        }) => {
            assert_eq!(h, Some(holder.pid()));
            assert!(waited_ms >= 300, "{waited_ms}");
        }
        other => panic!("expected LockTimeout, got {other:?}"),
    }
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert_eq!(ws.tree(), before);

    // SIGKILL the holder: the next commit does not wait for anything. A lock timeout
    // of zero tries the lock once, so a lock the dead holder still held would be a
    // LockTimeout here, not a slow commit (no wall-clock bound: those fail on a
    // loaded machine).
    holder.kill();
    ws.journal.set_lock_timeout(Duration::ZERO);
    let receipt = ws.journal.commit(tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(receipt.tx, tx);
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    22\n}\n");
}

#[test]
fn a_waiting_commit_proceeds_when_the_holder_lets_go_or_is_killed() {
    if let Some(why) = flock_missing() {
        println!("SKIPPED a_waiting_commit_proceeds…: {why}");
        return;
    }
    let ws = workspace();
    let scratch = tempfile::tempdir().unwrap();

    // 1. A live holder that lets go after ~0.5 s: the waiter (10 s timeout) gets the lock.
    let tx = ws.preview(EDIT).tx;
    let holder = Holder::start(&lock_path(&ws), scratch.path(), 0.5);
    let t0 = Instant::now();
    let out = ue(
        ws.root(),
        &["--json", "commit", &tx.to_string(), "--lock-timeout", "10"],
    )
    .wait_with_output()
    .unwrap();
    let took = t0.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        took >= Duration::from_millis(200),
        "did not wait for the holder: {took:?}"
    );
    assert!(took < Duration::from_secs(8), "{took:?}");
    drop(holder);

    // 2. A commit already waiting (60 s timeout) when the holder is SIGKILLed: it goes
    //    through right after the kill.
    let tx2 = ws
        .preview(
            r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"}]}"#,
        )
        .tx;
    let mut holder = Holder::start(&lock_path(&ws), scratch.path(), 60.0);
    let waiter = ue(
        ws.root(),
        &["--json", "commit", &tx2.to_string(), "--lock-timeout", "60"],
    );
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        ws.read("src/a.rs"),
        sample_files()[1].1,
        "committed while the lock was held"
    );
    let t0 = Instant::now();
    holder.kill();
    let out = waiter.wait_with_output().unwrap();
    let took = t0.elapsed();
    assert!(out.status.success(), "{}", text(&out));
    // Far under its 60 s timeout: it went through on the kill, not on giving up
    // (a tighter bound fails on a loaded machine).
    assert!(
        took < Duration::from_secs(30),
        "waiter took {took:?} after the holder died"
    );
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u32 {\n    crate::helper2()\n}\n"
    );
    let verify = ue(ws.root(), &["journal", "verify"])
        .wait_with_output()
        .unwrap();
    assert!(verify.status.success(), "{}", text(&verify));
}

/// The holder is `ultra-edit` itself, paused by a failpoint after staging its temp file
/// (batch `Committing`, temp on disk), then SIGKILLed: a waiter sees its pid; after the
/// kill, the next commit takes the lock at once, recovery rolls the dead batch forward
/// (temp removed), and the new commit lands.
#[cfg(feature = "failpoints")]
#[test]
fn ultra_edit_killed_mid_batch_names_its_pid_then_never_blocks() {
    let mut ws = workspace();
    let before = ws.tree();
    let dead_tx = ws.preview(EDIT).tx;
    let live_tx = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    33\n"}]}"#)
        .tx;
    let mut holder = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(ws.root())
        .args(["commit", &dead_tx.to_string()])
        .env("FAILPOINTS", "batch::after_stage_file=sleep(30000)")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for its temp file: the batch is past its commit point and the holder is
    // asleep.
    let deadline = Instant::now() + Duration::from_secs(10);
    let temp_seen = loop {
        let temps: Vec<String> = fs::read_dir(ws.path("src"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".ue-"))
            .collect();
        if !temps.is_empty() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if !temp_seen {
        let _ = holder.kill();
        let _ = holder.wait();
        panic!("the paused commit never staged its temp file");
    }
    ws.journal.set_lock_timeout(Duration::from_millis(250));
    match ws.journal.commit(live_tx, Default::default()) {
        Err(Error::LockTimeout { holder: h, .. }) => assert_eq!(h, Some(holder.id())),
        other => {
            let _ = holder.kill();
            panic!(
                "expected LockTimeout naming pid {}, got {other:?}",
                holder.id()
            )
        }
    }
    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    // Tried once (timeout 0): a lock the dead process still held would be a
    // LockTimeout, whatever the machine's load.
    ws.journal.set_lock_timeout(Duration::ZERO);
    let receipt = ws.journal.commit(live_tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(receipt.tx, live_tx);
    // The dead process's batch was past its commit point: the recovery before the live
    // commit rolled it forward, then the live commit landed.
    let mut expect = before;
    expect.insert(
        "src/b.rs".into(),
        format!(
            "{} 600",
            blake3::hash(b"pub fn b() -> u32 {\n    22\n}\n").to_hex()
        ),
    );
    expect.insert(
        "src/lib.rs".into(),
        format!(
            "{} 644",
            blake3::hash(b"pub mod a;\npub mod b;\n\nfn helper() -> u32 {\n    33\n}\n").to_hex()
        ),
    );
    assert_eq!(ws.tree(), expect, "temp left or wrong bytes");
    let shown = ws.journal.show(dead_tx, None).unwrap();
    assert_eq!(shown.state, ultra_edit::TxState::Committed);
    assert!(ws.journal.verify().unwrap().ok);
    let _ = Journal::open(ws.root()).unwrap();
}

/// The pid a `LockTimeout` names is read from the lock file, where each holder writes
/// its own. A holder that was SIGKILLed never truncates it, so when the next holder is
/// not an `ultra-edit` process (and writes nothing), a waiter names the dead process.
#[cfg(feature = "failpoints")]
#[test]
fn lock_timeout_never_names_a_dead_process() {
    if let Some(why) = flock_missing() {
        println!("SKIPPED lock_timeout_never_names_a_dead_process: {why}");
        return;
    }
    let mut ws = workspace();
    let tx = ws.preview(EDIT).tx;
    // An ultra-edit holder, paused inside its batch, then SIGKILLed: its pid stays in
    // the lock file.
    let mut dead = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(ws.root())
        .args(["commit", &tx.to_string()])
        .env("FAILPOINTS", "batch::after_lock=sleep(30000)")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let dead_pid = dead.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(lock_path(&ws))
        .unwrap_or_default()
        .trim()
        != dead_pid.to_string()
    {
        assert!(
            Instant::now() < deadline,
            "the ultra-edit holder never wrote its pid"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    dead.kill().unwrap();
    dead.wait().unwrap();
    // A holder that writes no pid (flock(1) on its own).
    let scratch = tempfile::tempdir().unwrap();
    let ready = scratch.path().join("ready");
    let mut other = Command::new("flock")
        .args(["-x", "-o"])
        .arg(lock_path(&ws))
        .args(["sh", "-c", r#": > "$1"; exec sleep 30"#, "sh"])
        .arg(&ready)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    while !ready.exists() {
        assert!(Instant::now() < deadline, "flock never took the lock");
        std::thread::sleep(Duration::from_millis(5));
    }
    ws.journal.set_lock_timeout(Duration::from_millis(200));
    let result = ws.journal.commit(tx, Default::default());
    let _ = other.kill();
    let _ = other.wait();
    match result {
        Err(Error::LockTimeout { holder, .. }) => assert_ne!(
            holder,
            Some(dead_pid),
            "LockTimeout names pid {dead_pid}, which was SIGKILLed before; the holder is flock pid {}",
            other.id()
        ),
        other => panic!("expected LockTimeout, got {other:?}"),
    }
}
