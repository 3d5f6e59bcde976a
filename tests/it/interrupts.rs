//! SIGINT, SIGTERM and SIGHUP during a CLI commit (docs/commit-protocol.md,
//! "Interrupts"): a batch still staging its temps reverts (exit 130, every file as it
//! was, no temp left, the tx still open); one already replacing files finishes (exit 0,
//! every file new, a note on stderr); outside a batch the signal ends the process as
//! usual, before anything is written. A failpoint's `sleep` holds the process at the
//! step, and the signal is sent once the disk shows the process there.

#![cfg(feature = "failpoints")]

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::*;

const PLAN: &str = r#"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
    {"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"},
    {"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    20\n"}]}"#;

const FILES: [&str; 3] = ["src/lib.rs", "src/a.rs", "src/b.rs"];

/// Temps (`.ue-*.tmp`) under `dir`.
fn temps(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() && name != ".ultra-edit" {
            out.extend(temps(&e.path()));
        } else if name.starts_with(".ue-") && name.ends_with(".tmp") {
            out.push(name);
        }
    }
    out
}

/// Run `ultra-edit commit 1` under `failpoints`, send `signal` once `ready` holds
/// (polled for up to 20 s), and wait for the process.
fn commit_interrupted(
    ws: &Ws,
    failpoints: &str,
    signal: rustix::process::Signal,
    ready: impl Fn() -> bool,
) -> Output {
    let mut cmd = ue_command(ws.root(), &["--json", "commit", "1"]);
    cmd.env("FAILPOINTS", failpoints);
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the commit never reached the step"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, signal).unwrap();
    child.wait_with_output().unwrap()
}

fn ws_with_preview() -> (Ws, Vec<Vec<u8>>) {
    let ws = workspace();
    let p = ws.preview(PLAN);
    assert_eq!(p.tx, 1);
    let before = FILES.iter().map(|f| ws.read(f)).collect();
    (ws, before)
}

#[test]
fn a_signal_while_the_temps_are_staged_reverts_the_batch_and_exits_130() {
    use rustix::process::Signal;
    for signal in [Signal::INT, Signal::TERM, Signal::HUP] {
        let (ws, before) = ws_with_preview();
        let tree = ws.tree();
        // The first staged temp holds the process for 2 s; the signal comes then.
        let out = commit_interrupted(&ws, "batch::after_stage_file=1*sleep(2000)", signal, || {
            !temps(ws.root()).is_empty()
        });
        assert_eq!(out.status.code(), Some(130), "{signal:?}: {}", text(&out));
        let v = json_of(&out);
        assert_eq!(v["error"]["kind"], "interrupted", "{v}");
        assert_eq!(
            v["error"]["message"],
            "batch 1 of tx 1 was interrupted before any file was replaced and was reverted, no file changed",
            "{v}"
        );
        assert_eq!(
            v["error"]["next_step"],
            serde_json::json!({"step": "commit", "tx": 1})
        );
        assert_eq!(ws.tree(), tree, "{signal:?}");
        for (f, b) in FILES.iter().zip(&before) {
            assert_eq!(&ws.read(f), b, "{f}");
        }
        assert_eq!(temps(ws.root()), Vec::<String>::new());
        assert_eq!(ws.journal.tx(1).unwrap().state, ultra_edit::TxState::Open);
        assert!(ws.journal.verify().unwrap().ok);
        // Nothing is left for recovery, and the same tx commits afterwards.
        let out = run_ue(ws.root(), &["--json", "recover"], None);
        assert_eq!(json_of(&out)["batches_found"], 0, "{}", text(&out));
        let out = run_ue(ws.root(), &["commit", "1"], None);
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    20\n}\n");
    }
}

#[test]
fn a_signal_while_files_are_replaced_lets_the_batch_finish() {
    let (ws, _) = ws_with_preview();
    // The first rename (files in path order: src/a.rs) holds the process for 2 s.
    let out = commit_interrupted(
        &ws,
        "batch::after_install_file=1*sleep(2000)",
        rustix::process::Signal::INT,
        || ws.read("src/a.rs") == b"pub fn a() -> u32 {\n    crate::helper2()\n}\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["tx"], 1);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ultra-edit: interrupt received while the batch was replacing files: it finished first, as a batch lands whole or not at all\n"
    );
    assert_eq!(
        ws.read("src/lib.rs"),
        b"pub mod a;\npub mod b;\n\nfn helper() -> u32 {\n    10\n}\n"
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    20\n}\n");
    assert_eq!(temps(ws.root()), Vec::<String>::new());
    let t = ws.journal.tx(1).unwrap();
    assert_eq!(t.state, ultra_edit::TxState::Committed);
    assert_eq!(receipts_of(&ws.journal, 1).len(), 1);
    let out = run_ue(ws.root(), &["--json", "recover"], None);
    assert_eq!(json_of(&out)["batches_found"], 0, "{}", text(&out));
}

#[test]
fn a_signal_before_the_batch_ends_the_process_as_usual() {
    use std::os::unix::process::ExitStatusExt;
    let (ws, before) = ws_with_preview();
    let tree = ws.tree();
    // Held right after the lock is taken, before the intent: nothing is written yet.
    let lock = ws.root().join(".ultra-edit/commit.lock");
    let out = commit_interrupted(
        &ws,
        "batch::after_lock=1*sleep(2000)",
        rustix::process::Signal::INT,
        || std::fs::read(&lock).is_ok_and(|pid| !pid.is_empty()),
    );
    assert_eq!(out.status.signal(), Some(2), "{}", text(&out));
    assert_eq!(ws.tree(), tree);
    for (f, b) in FILES.iter().zip(&before) {
        assert_eq!(&ws.read(f), b, "{f}");
    }
    assert_eq!(ws.journal.tx(1).unwrap().state, ultra_edit::TxState::Open);
    let out = run_ue(ws.root(), &["--json", "recover"], None);
    assert_eq!(json_of(&out)["batches_found"], 0, "{}", text(&out));
}

/// The library's side of the CLI's deferral: an `Interrupt` guards a batch from its
/// intent to its durable completion, and from the intent on says a batch began, which
/// the CLI's handler reads to defer a signal until the receipt is printed (found by the
/// breaker: a signal between the completion and the printed receipt ended the process
/// with no receipt and a status that read as "nothing done"). Recovery is guarded but
/// is no batch of this process.
#[test]
fn an_interrupt_says_when_a_batch_began_and_guards_it_until_its_completion() {
    use std::sync::Arc;
    let (ws, _) = ws_with_preview();
    let interrupt = Arc::new(ultra_edit::Interrupt::new());
    let j = ultra_edit::Journal::open_with(
        ws.root(),
        ultra_edit::OpenOptions {
            interrupt: Some(interrupt.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!interrupt.batch_began() && !interrupt.guarding());
    j.commit(1, Default::default()).unwrap();
    assert!(interrupt.batch_began());
    j.flush().unwrap();
    assert!(!interrupt.guarding(), "the guard ends with the completion");
    // A request now stops the next batch before its first rename.
    interrupt.request();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    20\n","new":"    21\n"}]}"#,
    );
    let tree = ws.tree();
    let err = j.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, ultra_edit::Error::Interrupted { tx, .. } if tx == p.tx),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 130);
    assert_eq!(ws.tree(), tree);
    assert_eq!(temps(ws.root()), Vec::<String>::new());
}
