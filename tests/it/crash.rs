//! Crash injection with real process deaths (docs/commit-protocol.md, "What a crash
//! leaves, and what recovery does").
//!
//! The `ultra-edit` binary (built with `--features failpoints`) runs as a child with
//! `FAILPOINTS` set so that a failpoint calls `std::process::abort()`. A new process then
//! runs `recover`, and the test checks that table: a crash before the commit
//! point leaves the complete pre-state, after it the complete post-state (whole-tree
//! hash with modes and directories), the journal agrees (tx state, receipts), `journal
//! verify` passes, and no temp file is left.

#![cfg(feature = "failpoints")]

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

type Tree = BTreeMap<String, String>;

/// Every batch failpoint, whether a crash there ends in the post-state, and whether the
/// batch is in flight at that point (so recovery has one batch to settle).
/// The intent is the commit point: every point after it ends in the post-state.
const POINTS: &[(&str, bool, bool)] = &[
    ("batch::after_lock", false, false),
    ("batch::after_intent", true, true),
    ("batch::after_commit_point", true, true),
    ("batch::after_stage_file", true, true),
    ("batch::after_stage", true, true),
    ("batch::after_install_file", true, true),
    ("batch::after_dir_sync", true, true),
    // On the completion's thread, after the receipt was returned (the CLI is waiting
    // in `flush` before printing it): recovery writes the completion.
    ("batch::before_complete", true, true),
    ("batch::after_complete", true, false),
];

const ONE_FILE: &str =
    r#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    11\n"}]}"#;
const SIX_FILES: &str = r##"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    11\n"},
    {"op":"replace_file","path":"run.sh","content":"#!/bin/sh\necho bye\n"},
    {"op":"create_file","path":"gen/a/b/x.rs","content":"// x\n"},
    {"op":"create_file","path":"gen/a/c/y.rs","content":"// y\n","mode":493},
    {"op":"delete_file","path":"src/b.rs"},
    {"op":"delete_file","path":"crlf.txt"}]}"##;

fn run(root: &Path, args: &[&str], failpoints: Option<&str>) -> Output {
    run_ue(root, args, failpoints)
}

fn ok_json(root: &Path, args: &[&str]) -> serde_json::Value {
    let out = run(root, args, None);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out)
}

/// One scenario: how to prepare a workspace, and the command that may crash.
struct Scenario {
    name: &'static str,
    /// Returns the workspace and the args of the command to crash.
    setup: fn() -> (Ws, Vec<String>, u64),
}

fn commit_of(plan_json: &'static str) -> (Ws, Vec<String>, u64) {
    let ws = workspace();
    let tx = ws.preview(plan_json).tx;
    (ws, vec!["commit".into(), tx.to_string()], tx)
}

fn committed_six() -> (Ws, u64) {
    let ws = workspace();
    let tx = ws.preview(SIX_FILES).tx;
    ws.journal.commit(tx, Default::default()).unwrap();
    // The completion is written after `commit` returns: durable before another
    // process looks.
    ws.journal.flush().unwrap();
    (ws, tx)
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "commit 1 file",
        setup: || commit_of(ONE_FILE),
    },
    Scenario {
        name: "commit 6 files",
        setup: || commit_of(SIX_FILES),
    },
    Scenario {
        name: "rollback 6 files",
        setup: || {
            let (ws, tx) = committed_six();
            (ws, vec!["rollback".into(), tx.to_string()], tx)
        },
    },
    Scenario {
        name: "forced rollback over a changed file",
        setup: || {
            let (ws, tx) = committed_six();
            ws.write("src/lib.rs", b"changed after the commit\n");
            (
                ws,
                vec!["rollback".into(), tx.to_string(), "--force".into()],
                tx,
            )
        },
    },
];

/// The tree a scenario ends in when nothing crashes.
fn clean_post(s: &Scenario) -> Tree {
    let (ws, args, _) = (s.setup)();
    let out = run(
        ws.root(),
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert!(
        out.status.success(),
        "{}: {}",
        s.name,
        String::from_utf8_lossy(&out.stderr)
    );
    ws.tree()
}

fn receipts(root: &Path) -> usize {
    let out = run(root, &["--json", "journal", "dump"], None);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"receipt_issued\""))
        .count()
}

/// The checks every crash is followed by. Returns the recovery report.
fn check_after_crash(
    ws: &Ws,
    tx: u64,
    is_rollback: bool,
    expect: &Tree,
    receipts_expected: usize,
    what: &str,
) -> serde_json::Value {
    let report = ok_json(ws.root(), &["--json", "recover"]);
    let tree = ws.tree();
    assert!(
        tree.keys().all(|k| !k.contains(".ue-")),
        "{what}: temp file left: {tree:?}"
    );
    assert_eq!(
        &tree, expect,
        "{what}: tree is neither the expected pre nor post state"
    );
    let verify = run(ws.root(), &["--json", "journal", "verify"], None);
    assert!(
        verify.status.success(),
        "{what}: journal verify failed: {}",
        String::from_utf8_lossy(&verify.stdout)
    );
    assert_eq!(receipts(ws.root()), receipts_expected, "{what}: receipts");
    let state = ok_json(ws.root(), &["--json", "show", &tx.to_string()])["state"].clone();
    let landed = receipts_expected > usize::from(is_rollback);
    let want = match (is_rollback, landed) {
        (false, true) => "committed",
        (false, false) => "open",
        (true, true) => "rolled_back",
        (true, false) => "committed",
    };
    assert_eq!(state, want, "{what}: tx state");
    report
}

#[test]
fn process_crash_matrix_every_failpoint_every_hit() {
    let started = Instant::now();
    let mut exercised = 0;
    for s in SCENARIOS {
        let post = clean_post(s);
        let is_rollback = s.name.contains("rollback");
        for &(point, expect_post, in_flight) in POINTS {
            for hit in 0..64 {
                let (ws, args, tx) = (s.setup)();
                let pre = ws.tree();
                let base_receipts = receipts(ws.root());
                let fp = format!("{point}={hit}*off->return");
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let out = run(ws.root(), &argv, Some(&fp));
                if out.status.success() {
                    assert!(hit > 0, "{}: {point} was never reached", s.name);
                    assert_eq!(ws.tree(), post, "{}: clean run with {fp}", s.name);
                    break;
                }
                assert_eq!(
                    out.status.signal(),
                    Some(6),
                    "{}: {fp}: not an abort: {:?} {}",
                    s.name,
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
                exercised += 1;
                let what = format!("{} crashed at {fp}", s.name);
                let expect = if expect_post { &post } else { &pre };
                let report = check_after_crash(
                    &ws,
                    tx,
                    is_rollback,
                    expect,
                    base_receipts + usize::from(expect_post),
                    &what,
                );
                assert_eq!(
                    report["batches_found"],
                    u64::from(in_flight),
                    "{what}: {report}"
                );
                if in_flight {
                    let list = if expect_post { "completed" } else { "reverted" };
                    assert_eq!(
                        report[list].as_array().map(Vec::len),
                        Some(1),
                        "{what}: {report}"
                    );
                }
            }
        }
    }
    println!(
        "process crash matrix: {exercised} crash points exercised, all held ({:?})",
        started.elapsed()
    );
    // 1 file: 9 points; 6 files (4 written, 2 deleted) and both rollbacks: 17 each.
    assert_eq!(exercised, 9 + 17 * 3);
}

#[test]
fn crash_inside_revert_after_an_io_error_ends_in_the_pre_state() {
    // The 4th rename fails (EACCES): the batch goes Reverting and restores files; the
    // process dies after the k-th restored file. Recovery finishes the revert.
    let mut exercised = 0;
    for hit in 0..16 {
        let (ws, args, tx) = commit_of(SIX_FILES);
        let pre = ws.tree();
        let fp = format!(
            "fs::rename=3*off->1*return(13)->off;revert::after_restore_file={hit}*off->return"
        );
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(ws.root(), &argv, Some(&fp));
        if out.status.signal() != Some(6) {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{fp}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("reverted"),
                "{fp}"
            );
            assert_eq!(ws.tree(), pre);
            assert!(hit >= 3, "revert restored only {hit} files");
            break;
        }
        exercised += 1;
        let report = check_after_crash(&ws, tx, false, &pre, 0, &format!("revert crash {fp}"));
        assert_eq!(
            report["reverted"].as_array().map(Vec::len),
            Some(1),
            "{report}"
        );
        // Nothing is stuck: the tx commits now.
        ok_json(ws.root(), &["--json", "commit", &tx.to_string()]);
    }
    println!("revert crash points exercised: {exercised}");
}

#[test]
fn recovery_that_crashes_twice_ends_like_a_clean_recovery() {
    let post = clean_post(&SCENARIOS[1]);
    let (ws, args, tx) = commit_of(SIX_FILES);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(
        ws.root(),
        &argv,
        Some("batch::after_install_file=1*off->return"),
    );
    assert_eq!(out.status.signal(), Some(6));
    for attempt in 0..2 {
        let out = run(ws.root(), &["recover"], Some("recovery::after_file=return"));
        assert_eq!(
            out.status.signal(),
            Some(6),
            "recovery attempt {attempt} did not crash"
        );
    }
    let report = check_after_crash(&ws, tx, false, &post, 1, "after two crashed recoveries");
    assert_eq!(
        report["completed"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
}

#[test]
fn foreign_write_between_crash_and_recovery_is_kept_and_reported() {
    let (ws, args, tx) = commit_of(SIX_FILES);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    // Files install in path order; crash after the first (crlf.txt), then a human edits
    // src/lib.rs, which the batch had not installed yet.
    let out = run(ws.root(), &argv, Some("batch::after_install_file=return"));
    assert_eq!(out.status.signal(), Some(6));
    ws.write("src/lib.rs", b"human edit\n");
    let out = run(ws.root(), &["--json", "recover"], None);
    assert_eq!(out.status.code(), Some(7), "needs attention exits 7");
    let report = json_of(&out);
    assert_eq!(
        report["needs_attention"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(report["actions"][0]["foreign"][0]["path"], "src/lib.rs");
    assert_eq!(ws.read("src/lib.rs"), b"human edit\n");
    let log = ok_json(ws.root(), &["--json", "log"]);
    assert_eq!(log["txs"][0]["batch_state"], "needs_attention", "{log}");
    let dump = run(
        ws.root(),
        &["journal", "dump", "--tx", &tx.to_string()],
        None,
    );
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(
        text.contains("needs_attention") && text.contains("foreign bytes in src/lib.rs"),
        "{text}"
    );
    let hash = blake3::hash(b"human edit\n").to_hex().to_string();
    let blobs = run(ws.root(), &["--json", "journal", "dump"], None);
    assert!(
        String::from_utf8_lossy(&blobs.stdout).contains(&hash),
        "foreign bytes not kept in the journal"
    );
    assert!(run(ws.root(), &["journal", "verify"], None)
        .status
        .success());
    let _ = Duration::ZERO;
}

/// A workspace of 140 files in 7 directories and a plan that rewrites 120, deletes 10
/// and creates 10 in new nested directories.
fn big_batch() -> (tempfile::TempDir, u64) {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..140 {
        let p = dir.path().join(format!("d{}/f{i}.txt", i % 7));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("file {i}\n").repeat(50)).unwrap();
    }
    let j = ultra_edit::Journal::init(dir.path()).unwrap();
    let mut edits: Vec<serde_json::Value> = (0..120)
        .map(|i| serde_json::json!({"op":"replace_file","path":format!("d{}/f{i}.txt", i % 7),"content":format!("new {i}\n")}))
        .collect();
    edits
        .extend((120..130).map(
            |i| serde_json::json!({"op":"delete_file","path":format!("d{}/f{i}.txt", i % 7)}),
        ));
    edits.extend((0..10).map(|i| serde_json::json!({"op":"create_file","path":format!("new/n{}/c{i}.txt", i % 3),"content":"c\n"})));
    let tx = j
        .preview(&plan(&serde_json::json!({ "edits": edits }).to_string()))
        .unwrap()
        .tx;
    (dir, tx)
}

#[test]
fn random_sigkill_during_a_large_batch_leaves_pre_or_post() {
    let (clean, tx) = big_batch();
    let pre = tree_state(clean.path());
    let t0 = Instant::now();
    assert!(run(clean.path(), &["commit", &tx.to_string()], None)
        .status
        .success());
    let span_us = (t0.elapsed().as_micros() as u64).max(1000);
    let post = tree_state(clean.path());
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let started = Instant::now();
    let (mut runs, mut pres, mut posts) = (0, 0, 0);
    while runs < 40 && started.elapsed() < Duration::from_secs(45) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % (span_us + span_us / 2));
        let (dir, tx) = big_batch();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
            .arg("--root")
            .arg(dir.path())
            .args(["commit", &tx.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let what = format!("run {runs}, seed {seed}, kill after {delay:?}");
        let out = run(dir.path(), &["--json", "recover"], None);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = tree_state(dir.path());
        assert!(
            tree.keys().all(|k| !k.contains(".ue-")),
            "{what}: temp left"
        );
        if tree == pre {
            pres += 1;
        } else if tree == post {
            posts += 1;
        } else {
            panic!("{what}: tree is neither pre nor post");
        }
        assert!(
            run(dir.path(), &["journal", "verify"], None)
                .status
                .success(),
            "{what}: verify"
        );
        runs += 1;
    }
    println!("random SIGKILL: {runs} runs ({pres} ended pre, {posts} post), all held");
    assert!(runs >= 5);
}

/// Recovery on open (here under `log`) that leaves a file someone wrote meanwhile says
/// what it did and what the file will get: how many files it wrote, which it left, and
/// that moving them aside lets `recover` write the batch's new content there too.
#[test]
fn recovery_on_open_says_what_it_wrote_and_what_the_left_file_gets() {
    let (ws, args, tx) = commit_of(SIX_FILES);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(ws.root(), &argv, Some("batch::after_install_file=return"));
    assert_eq!(out.status.signal(), Some(6));
    ws.write("src/lib.rs", b"human edit\n");
    let out = run(ws.root(), &["log"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines,
        [
            "ultra-edit: recovery on open: 1 batch(es) found, 0 completed, 0 reverted, 1 need attention".to_string(),
            format!("ultra-edit: batch 1 (tx {tx}): recovery wrote 4 file(s) with tx {tx}'s new content and left 1 that someone else wrote meanwhile (src/lib.rs); `ultra-edit recover --overwrite` writes tx {tx}'s new content there too, keeping the bytes found in the journal (`ultra-edit journal dump --tx {tx}` lists them)"),
        ]
    );
    assert_eq!(ws.read("src/lib.rs"), b"human edit\n");
    // As it says: --overwrite writes the new content and settles the batch.
    let out = run(ws.root(), &["--json", "recover", "--overwrite"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = json_of(&out);
    assert_eq!(report["actions"][0]["rolls_forward"], true, "{report}");
    assert_eq!(
        report["actions"][0]["rewritten"],
        serde_json::json!(["src/lib.rs"])
    );
    assert_eq!(report["actions"][0]["overwritten"][0]["path"], "src/lib.rs");
}
