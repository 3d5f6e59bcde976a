//! Issue 33, items 8–14: one answer shape. `--json` errors are always objects, a next
//! step's command runs, stale errors name who changed the file, MCP and the CLI agree,
//! gc says what it needs and claims only what it does, and progress is drawn only on
//! a terminal.

use std::process::Output;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use ultra_edit::mcp::EditTools;
use ultra_edit::{Error, GcPolicy, Journal, StaleWriter};

use crate::support::{cli, json_of, plan, run_ue, text, ue_command, workspace, Ws};

const B_RS: &[u8] = b"pub fn b() -> u32 {\n    2\n}\n";

fn tools(ws: &Ws) -> EditTools {
    EditTools::new(Arc::new(Journal::open(ws.root()).unwrap()))
}

// ---- item 8: --json errors are always objects ---------------------------------------

/// A revision recorded with validation errors exits 4, and its `--json` object
/// carries `error` with `kind`, `next_step` and the `command` that takes it, as a
/// failed command's object does; stderr keeps the sentence alone.
#[test]
fn json_at_exit_4_carries_an_error_object_with_kind_and_next_step() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out).get("error"), None);
    // A revision that changes nothing: recorded, exit 4, and the error says so.
    let out = cli(
        ws.root(),
        &["--json", "revise", "1"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    3","new":"    2"}]}"#),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["tx"], 1);
    assert_eq!(v["revision"], 1);
    assert_eq!(v["ready_to_commit"], false);
    let hint = "tx 1 revision 1 changes nothing (the files hold its candidate already), so there is nothing to commit; drop it with `ultra-edit abort 1`, or revise it with a new plan";
    assert_eq!(v["error"]["kind"], "validation_failed");
    assert_eq!(v["error"]["exit_code"], 4);
    assert_eq!(v["error"]["next_step"], json!({"step": "abort", "tx": 1}));
    assert_eq!(v["error"]["command"], "ultra-edit abort 1");
    assert_eq!(v["error"]["hint"], hint);
    assert_eq!(
        v["error"]["message"],
        "tx 1 revision 1 failed validation: no_changes: the revision changes nothing, so there is nothing to commit; revise the plan or abort the transaction"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("ultra-edit: {hint}\n")
    );
}

/// A syntax error: the error object names `revise` and its command.
#[cfg(feature = "syntax")]
#[test]
fn json_at_exit_4_for_a_syntax_error_names_revise() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(
            r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2\n}","new":"    2\n"}]}"#,
        ),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["tx"], 1);
    let err = &v["error"];
    assert_eq!(err["kind"], "validation_failed");
    assert_eq!(err["next_step"], json!({"step": "revise", "tx": 1}));
    assert_eq!(err["command"], "ultra-edit revise 1");
    assert_eq!(
        err["hint"],
        "tx 1 revision 0 has validation errors; fix them with `ultra-edit revise 1`"
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("tx 1 revision 0 failed validation: syntax_error src/b.rs: "),
        "{err}"
    );
}

// ---- item 9: a next step's command always runs --------------------------------------

/// Run `ultra-edit --json ARGS` with `failpoints`, send SIGINT once `ready` holds
/// (polled for up to 20 s), and wait.
fn interrupted(ws: &Ws, args: &[&str], failpoints: &str, ready: impl Fn() -> bool) -> Output {
    let mut cmd = ue_command(ws.root(), args);
    cmd.env("FAILPOINTS", failpoints);
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the command never reached the step"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    child.wait_with_output().unwrap()
}

/// Whether a temp of a batch is in `ws` (src/ holds the files the plans change).
fn staged(ws: &Ws) -> bool {
    std::fs::read_dir(ws.path("src"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(".ue-"))
}

/// Ctrl-C while a commit stages its temps: the next step is the commit again, as a
/// command that runs (not `show` without a tx, not a `retry` without a command); and
/// for a rollback, the rollback of the same tx.
#[test]
fn an_interrupted_batch_names_the_command_that_runs_it_again() {
    let ws = workspace();
    ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    20"}]}"#,
    );
    let fp = "batch::after_stage_file=1*sleep(2000)";
    let out = interrupted(&ws, &["--json", "commit", "1"], fp, || staged(&ws));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "interrupted");
    assert_eq!(err["next_step"], json!({"step": "commit", "tx": 1}));
    assert_eq!(err["command"], "ultra-edit commit 1");
    assert_eq!(err["hint"], "run `ultra-edit commit 1`");
    // The command runs.
    let out = run_ue(ws.root(), &["commit", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    20\n}\n");
    // A rollback interrupted the same way: its step rolls back tx 1 again.
    let out = interrupted(&ws, &["--json", "rollback", "1"], fp, || staged(&ws));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "interrupted");
    assert_eq!(
        err["next_step"],
        json!({"step": "roll_back_again", "of": 1})
    );
    assert_eq!(err["command"], "ultra-edit rollback 1");
    let out = run_ue(ws.root(), &["rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("src/b.rs"), B_RS);
}

// ---- item 10: stale errors say who changed the file ---------------------------------

/// A preview made stale by another tx's commit names that tx and its agent; one made
/// stale by a write outside ultra-edit says so (library, CLI `--json`, MCP).
#[test]
fn a_stale_commit_names_the_tx_and_agent_that_wrote_the_file() {
    let ws = workspace();
    let p1 = ws.journal.preview(&plan(
        r#"{"agent":"alice","edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    ))
    .unwrap();
    let p2 = ws.journal.preview(&plan(
        r#"{"agent":"bob","edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    4"},{"op":"replace_text","path":"src/a.rs","old":"crate::helper()","new":"7"}]}"#,
    ))
    .unwrap();
    ws.journal.commit(p2.tx, Default::default()).unwrap();
    let err = ws.journal.commit(p1.tx, Default::default()).unwrap_err();
    let Error::StaleSnapshot { tx, paths, writers } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*tx, paths.as_slice()),
        (1, ["src/b.rs".to_string()].as_slice())
    );
    assert_eq!(
        writers,
        &[StaleWriter {
            path: "src/b.rs".into(),
            tx: Some(2),
            agent: Some("bob".into()),
        }]
    );
    assert_eq!(
        err.to_string(),
        "stale snapshot of tx 1: src/b.rs changed on disk since the preview (changed: src/b.rs by tx 2 of agent \"bob\"), so the preview must be rebased onto the disk (or made again)"
    );
    // Written outside ultra-edit: a third preview of src/a.rs, then a plain write.
    let p3 = ws.journal.preview(&plan(
        r#"{"agent":"carol","edits":[{"op":"replace_text","path":"src/a.rs","old":"7","new":"8"}]}"#,
    ))
    .unwrap();
    ws.write("src/a.rs", b"pub fn a() -> u32 {\n    9\n}\n");
    let out = cli(ws.root(), &["--json", "commit", &p3.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "stale_snapshot");
    assert_eq!(
        err["changed_by"],
        json!([{"path": "src/a.rs", "tx": null, "agent": null}])
    );
    assert_eq!(
        err["message"],
        "stale snapshot of tx 3: src/a.rs changed on disk since the preview (changed: src/a.rs outside ultra-edit), so the preview must be rebased onto the disk (or made again)"
    );
    // MCP: the same writer, in the message and as data.
    let t = tools(&ws);
    let e = t
        .call(
            "edit_commit",
            json!({"agent_id": "alice", "preview_id": p1.tx, "confirm": true}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "source_modified");
    assert_eq!(
        e.message,
        "src/b.rs changed on disk since preview 1 was made (the content hash no longer matches the snapshot) (changed: src/b.rs by tx 2 of agent \"bob\"); nothing was written"
    );
    assert_eq!(
        e.to_json()["changed_by"],
        json!([{"path": "src/b.rs", "tx": 2, "agent": "bob"}])
    );
}

// ---- item 11: MCP and the CLI agree -------------------------------------------------

/// A plan that changes nothing is refused by MCP as by the CLI (`nothing_to_change`),
/// and no open tx is left behind.
#[test]
fn mcp_refuses_a_plan_that_changes_nothing_and_leaves_no_tx() {
    let ws = workspace();
    let t = tools(&ws);
    let e = t
        .call(
            "edit_preview",
            json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "pub fn b() -> u32 {\n    2\n}\n"}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "nothing_to_change");
    assert_eq!(
        e.message,
        "the plan changes nothing: src/b.rs would keep its bytes and mode, so there is nothing to preview or commit; nothing was recorded"
    );
    assert_eq!(e.to_json()["library_error"]["kind"], "nothing_to_change");
    assert_eq!(ws.journal.log(None).unwrap().len(), 0);
    let log = t.call("journal_log", json!({})).unwrap();
    assert_eq!(log["count"], 0);
    // The CLI, the same plan: the same kind, nothing recorded.
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(
            r#"{"edits":[{"op":"write_file","path":"src/b.rs","content":"pub fn b() -> u32 {\n    2\n}\n"}]}"#,
        ),
    );
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(json_of(&out)["error"]["kind"], "nothing_to_change");
    assert_eq!(ws.journal.log(None).unwrap().len(), 0);
}

/// `journal_log` filters by `by_agent`; `agent_id` (the caller elsewhere) is taken as
/// the filter too, with a note; the README's example now lists the agent's txs.
#[test]
fn journal_log_filters_by_agent_and_takes_the_old_key_with_a_note() {
    let ws = workspace();
    let t = tools(&ws);
    for (agent, content) in [("me", "pub fn b() {}\n"), ("you", "pub fn c() {}\n")] {
        t.call(
            "edit_preview",
            json!({"agent_id": agent, "file_path": "src/b.rs", "new_content": content}),
        )
        .unwrap();
    }
    let mine = t
        .call("journal_log", json!({"by_agent": "me", "limit": 5}))
        .unwrap();
    assert_eq!(mine["count"], 1);
    assert_eq!(mine["entries"][0]["tx"], 1);
    assert_eq!(mine.get("note"), None);
    let old = t
        .call("journal_log", json!({"agent_id": "me", "limit": 5}))
        .unwrap();
    assert_eq!(old["count"], 1);
    assert_eq!(old["entries"][0]["tx"], 1);
    assert_eq!(old["note"], ultra_edit::mcp::OLD_LOG_FILTER);
    assert_eq!(
        old["note"],
        "agent_id was taken as the filter by_agent (its old name); in every other tool agent_id names the caller, so pass the agent to list as by_agent"
    );
    let all = t.call("journal_log", json!({})).unwrap();
    assert_eq!(all["count"], 2);
}

/// `edit_rollback` takes `preview_id`, as every other tool; the old `tx` works with a
/// note. Every answer's `next_step` is an object: the tool, its arguments, the words.
#[test]
fn edit_rollback_takes_preview_id_and_next_steps_are_objects() {
    let ws = workspace();
    let t = tools(&ws);
    let p = t
        .call(
            "edit_preview",
            json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
        )
        .unwrap();
    let id = p["preview_id"].as_str().unwrap().to_string();
    assert_eq!(p["next_step"]["tool"], "edit_commit");
    assert_eq!(
        p["next_step"]["arguments"],
        json!({"preview_id": id, "agent_id": "dev", "confirm": true})
    );
    assert_eq!(
        p["next_step"]["text"],
        format!("review the diff, then call edit_commit with preview_id \"{id}\" and confirm=true (or edit_revise to change the candidate, edit_abort to drop it)")
    );
    let done = t
        .call(
            "edit_commit",
            json!({"agent_id": "dev", "preview_id": id, "confirm": true}),
        )
        .unwrap();
    assert_eq!(
        done["next_step"],
        json!({"tool": "edit_rollback", "arguments": {"preview_id": id, "agent_id": "dev"},
               "text": format!("done; edit_rollback with preview_id \"{id}\" restores the previous bytes")})
    );
    // The next step, called as it says.
    let mut args = done["next_step"]["arguments"].clone();
    args["agent_id"] = json!("dev");
    let rb = t.call("edit_rollback", args).unwrap();
    assert_eq!(rb["rolled_back"], 1);
    assert_eq!(rb.get("note"), None);
    assert_eq!(ws.read("src/b.rs"), B_RS);
    let redo_id = rb["preview_id"].as_str().unwrap().to_string();
    assert_eq!(rb["next_step"]["tool"], "edit_rollback");
    assert_eq!(
        rb["next_step"]["arguments"],
        json!({"preview_id": redo_id, "agent_id": "dev"})
    );
    // The old key: the redo, with a note.
    let redo = t
        .call("edit_rollback", json!({"agent_id": "dev", "tx": redo_id}))
        .unwrap();
    assert_eq!(redo["rolled_back"], 2);
    assert_eq!(redo["note"], ultra_edit::mcp::OLD_ROLLBACK_KEY);
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\n");
    // An error's next step has the same shape.
    let e = t
        .call(
            "edit_commit",
            json!({"agent_id": "dev", "preview_id": "99", "confirm": true}),
        )
        .unwrap_err();
    let step = &e.to_json()["next_step"];
    assert!(step.is_object(), "{step}");
    assert_eq!(step["text"], json!(e.hint));
}

// ---- item 13: gc and sizes ----------------------------------------------------------

/// `journal gc --dry-run` alone is refused with `invalid_policy`, saying a keep rule
/// is needed and naming both; the hint's command runs.
#[test]
fn gc_dry_run_alone_says_a_keep_rule_is_needed() {
    let ws = workspace();
    let out = cli(ws.root(), &["--json", "journal", "gc", "--dry-run"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        json_of(&out),
        json!({"error": {
            "kind": "invalid_policy",
            "exit_code": 1,
            "message": "invalid retention policy: a keep rule is needed, with --dry-run too (it lists what that rule would prune): give --keep-last N (keep the N newest transactions) or --keep-days D (keep those younger than D days); gc has no default rule, so that it never prunes what was not named",
            "hint": "`ultra-edit journal gc --keep-last 100 --dry-run` lists what keeping the 100 newest transactions would prune, and changes nothing",
        }})
    );
    let out = cli(
        ws.root(),
        &["journal", "gc", "--keep-last", "100", "--dry-run"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A commit whose change was rolled back and redone could not be rolled back before
/// gc: gc does not say it loses its rollback; the redo, which could, does.
#[test]
fn gc_claims_a_lost_rollback_only_for_a_tx_that_had_one() {
    let mut ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    let undo = ws.journal.rollback(1, Default::default()).unwrap();
    let redo = ws.journal.rollback(undo.tx, Default::default()).unwrap();
    assert_eq!((undo.tx, redo.tx), (2, 3));
    assert_eq!(
        ws.journal
            .rollback(1, Default::default())
            .unwrap_err()
            .kind(),
        "wrong_state"
    );
    let report = ws
        .journal
        .gc(GcPolicy {
            keep_last: Some(0),
            dry_run: true,
            ..Default::default()
        })
        .unwrap();
    let lost: Vec<(u64, &str, bool)> = report
        .pruned
        .iter()
        .map(|p| (p.tx, p.state.as_str(), p.loses_rollback))
        .collect();
    assert_eq!(
        lost,
        [
            (1, "committed", false),
            (2, "rolled_back", false),
            (3, "committed", true)
        ]
    );
    assert_eq!(report.rollbacks_lost, [3]);
    let out = cli(
        ws.root(),
        &["journal", "gc", "--keep-last", "0", "--dry-run"],
        None,
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .take(3)
            .collect::<Vec<_>>(),
        [
            "would prune tx 1 (committed)",
            "would prune tx 2 (rolled_back) rollback of tx 1",
            "would prune tx 3 (committed, can no longer be rolled back) rollback of tx 2",
        ]
    );
}

// ---- item 14: progress ---------------------------------------------------------------

/// A commit that takes over a second prints nothing extra off a terminal: stderr is
/// exactly empty, stdout the receipt alone.
#[test]
fn a_slow_commit_off_a_terminal_prints_no_progress() {
    let ws = workspace();
    ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    20"}]}"#,
    );
    let started = Instant::now();
    let out = run_ue(
        ws.root(),
        &["--json", "commit", "1"],
        Some("batch::after_stage_file=1*sleep(1500)"),
    );
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(json_of(&out)["tx"], 1);
}

/// On a terminal (a pty from `script`), the same slow commit draws its spinner, and
/// a quick one draws none.
#[test]
fn a_slow_commit_on_a_terminal_draws_progress() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no `script` to give the command a terminal");
        return;
    }
    let ws = workspace();
    ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    20"}]}"#,
    );
    ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"crate::helper()","new":"1"}]}"#,
    );
    let on_pty = |tx: &str, failpoints: &str| {
        let line = format!(
            "'{}' --root '{}' commit {tx} >/dev/null",
            env!("CARGO_BIN_EXE_ultra-edit"),
            ws.root().display()
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .env("FAILPOINTS", failpoints)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let slow = on_pty("1", "batch::after_stage_file=1*sleep(1800)");
    assert!(slow.contains("commit tx 1: writing the files"), "{slow:?}");
    let quick = on_pty("2", "");
    assert!(!quick.contains("writing the files"), "{quick:?}");
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    20\n}\n");
}

/// `journal stats` and `journal verify` report the same size figures under the same
/// names: the content (each distinct blob at full length) and what the store holds
/// (each distinct chunk once), which differ once a large file shares chunks.
#[test]
fn stats_and_verify_name_the_same_sizes_alike() {
    let ws = workspace();
    let big: String = (0..8000)
        .map(|i| format!("line {i} of a large file\n"))
        .collect();
    ws.write("big.txt", big.as_bytes());
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"big.txt","old":"line 4000 of","new":"LINE 4000 of"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    let stats = json_of(&cli(ws.root(), &["--json", "journal", "stats"], None));
    let verify = json_of(&cli(ws.root(), &["--json", "journal", "verify"], None));
    let content = 2 * big.len() as u64;
    assert_eq!(stats["blob_bytes_content"], content);
    assert_eq!(verify["blob_bytes_content"], content);
    assert_eq!(verify["blob_bytes_unique"], stats["blob_bytes_unique"]);
    let unique = stats["blob_bytes_unique"].as_u64().unwrap();
    assert!(unique < content, "{unique} of {content}");
    assert_eq!(stats["blob_bytes_referenced"], 2 * content);
}

// ---- item 12: damage names what needs it ----------------------------------------------

/// A rollback that needs a damaged blob names the file, batch and tx that need it,
/// not only the blob's hash; nothing is written.
#[test]
fn a_damaged_blob_names_the_file_batch_and_tx_that_need_it() {
    let original = b"ORIGINAL-PRECIOUS-CONTENT-0123456789\n".repeat(4);
    let (dir, tx) = crate::support::with_damaged_blob(&original);
    let out = cli(dir.path(), &["--json", "rollback", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "journal");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.starts_with("journal record in table blob_manifests is damaged: "),
        "{message}"
    );
    assert!(
        message.contains(" (it is the pre-image of f.txt in batch 1 of tx 1, which this rollback of tx 1 restores); "),
        "{message}"
    );
    assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"new\n");
}
