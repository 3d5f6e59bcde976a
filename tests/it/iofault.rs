//! I/O faults injected as errors (not crashes) at every step of a commit and of a
//! rollback: ENOSPC or EACCES on a temp write (its fsync included), a mkdir, a rename,
//! an unlink, a directory fsync, and on the journal's own writes. Each must give a
//! typed error, leave the tree byte-for-byte as before, leave the batch (if one was
//! recorded) Aborted with the cause, keep `journal verify` happy, and let the next
//! commit through.

#![cfg(feature = "failpoints")]

use std::path::Path;
use std::process::Output;

use crate::support::*;

const SIX_FILES: &str = r##"{"edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    11\n"},
    {"op":"replace_file","path":"run.sh","content":"#!/bin/sh\necho bye\n"},
    {"op":"create_file","path":"gen/a/b/x.rs","content":"// x\n"},
    {"op":"create_file","path":"gen/a/c/y.rs","content":"// y\n"},
    {"op":"delete_file","path":"src/b.rs"},
    {"op":"delete_file","path":"crlf.txt"}]}"##;

const OPS: &[&str] = &[
    "fs::write",
    "fs::fsync",
    "fs::mkdir",
    "fs::rename",
    "fs::unlink",
    "fs::rmdir",
    "fs::sync_dir",
    "journal::commit",
];

fn run(root: &Path, args: &[&str], failpoints: Option<&str>) -> Output {
    run_ue(root, args, failpoints)
}

fn last_batch_state(root: &Path) -> Option<(String, Option<String>)> {
    let out = run(
        root,
        &["--json", "journal", "dump", "--kind", "batch_state"],
        None,
    );
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()?
        .to_string();
    let v: serde_json::Value = serde_json::from_str(&last).ok()?;
    let s = &v["event"]["kind"]["batch_state"];
    Some((
        s["state"].as_str()?.to_string(),
        s["note"].as_str().map(str::to_string),
    ))
}

/// `(setup, args)` of a scenario: a fresh workspace and the command to fault.
fn scenario(rollback: bool) -> (Ws, Vec<String>, u64) {
    let ws = workspace();
    let tx = ws.preview(SIX_FILES).tx;
    if rollback {
        ws.journal.commit(tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        return (ws, vec!["rollback".into(), tx.to_string()], tx);
    }
    (ws, vec!["commit".into(), tx.to_string()], tx)
}

#[test]
fn io_faults_at_every_step_leave_the_pre_state_and_an_aborted_batch() {
    let mut faults = 0;
    for rollback in [false, true] {
        for op in OPS {
            for (errno, text) in [(28, "No space left on device"), (13, "Permission denied")] {
                for hit in 0..16 {
                    let (ws, args, _tx) = scenario(rollback);
                    let pre = ws.tree();
                    let batches_before = last_batch_state(ws.root());
                    let fp = format!("{op}={hit}*off->1*return({errno})->off");
                    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                    let out = run(ws.root(), &argv, Some(&fp));
                    if out.status.success() {
                        // Past the last hit of this operation. Every step must have been
                        // hit (a commit removes no directory, its rollback creates none):
                        // a fault that is never reached means the step itself is gone.
                        let absent = if rollback { "fs::mkdir" } else { "fs::rmdir" };
                        assert!(
                            hit > 0 || *op == absent,
                            "{op} was never reached in a {}",
                            if rollback { "rollback" } else { "commit" }
                        );
                        break;
                    }
                    faults += 1;
                    let what = format!("{} with {fp}", argv.join(" "));
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    if *op == "journal::commit" && hit == 1 {
                        // The second journal write is the completion, written after the
                        // batch landed (docs/commit-protocol.md, step 7): nothing is
                        // reverted; the CLI, waiting for it before printing the receipt,
                        // says the change will land, and recovery completes it.
                        completion_not_recorded(&ws, &argv, &out, text, &what);
                        continue;
                    }
                    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
                    assert!(
                        stderr.contains(text),
                        "{what}: the error names the cause: {stderr}"
                    );
                    let tree = ws.tree();
                    assert_eq!(tree, pre, "{what}: tree changed");
                    match last_batch_state(ws.root()) {
                        state if state == batches_before => {} // failed before a batch existed
                        Some((state, note)) => {
                            assert_eq!(state, "aborted", "{what}");
                            assert!(
                                note.is_some_and(|n| n.contains(text)),
                                "{what}: cause recorded"
                            );
                        }
                        None => panic!("{what}: batch vanished"),
                    }
                    assert!(
                        run(ws.root(), &["journal", "verify"], None)
                            .status
                            .success(),
                        "{what}: verify"
                    );
                    // Nothing is stuck: the same command goes through now.
                    let again = run(ws.root(), &argv, None);
                    assert!(
                        again.status.success(),
                        "{what}: retry failed: {}",
                        String::from_utf8_lossy(&again.stderr)
                    );
                }
            }
        }
    }
    println!("I/O faults: {faults} injected errors, all reverted exactly");
    assert!(faults >= 60, "only {faults} faults reached");
}

/// A fault in the completion's journal write: exit 7, attention
/// `completion_not_recorded`, outcome `will_land`; every file already holds the new
/// content (the same tree as a clean run), and the next command's recovery completes
/// the batch.
fn completion_not_recorded(ws: &Ws, argv: &[&str], out: &Output, text: &str, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(7),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("could not record its completion") && stderr.contains(text),
        "{what}: {stderr}"
    );
    let landed = ws.tree();
    let clean = {
        let (other, args, _) = scenario(argv[0] == "rollback");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(run(other.root(), &args, None).status.success());
        other.tree()
    };
    assert_eq!(landed, clean, "{what}: the batch landed");
    let recovered = run(ws.root(), &["--json", "recover"], None);
    assert!(recovered.status.success(), "{what}");
    assert_eq!(
        last_batch_state(ws.root()).map(|(s, _)| s),
        Some("committed".to_string()),
        "{what}"
    );
    assert_eq!(ws.tree(), clean, "{what}");
    assert!(
        run(ws.root(), &["journal", "verify"], None)
            .status
            .success(),
        "{what}"
    );
}
