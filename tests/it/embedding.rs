//! The embedding API beyond m1nd's handlers (docs/embedding.md): `write_file` and its
//! modes, the preview's per-file summary, policies per plan and per journal, a
//! hand-built empty plan, the receipt's touched paths, and expiry on other verbs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use ultra_edit::edit::{Edit, Severity};
use ultra_edit::{
    BlobHash, CommitOptions, Error, FileSummary, Journal, ManualClock, Markers, OpenOptions, Plan,
    Policy, Size, TxState,
};

use crate::support::{plan, workspace};

fn write_file(path: &str, content: &str) -> Edit {
    Edit::WriteFile {
        path: path.into(),
        content: Some(content.into()),
        content_base64: None,
        mode: None,
        expected_base: None,
    }
}

/// The process's umask, as the journal reads it (`Umask:` of /proc/self/status).
fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|v| u32::from_str_radix(v.trim(), 8).unwrap())
        .unwrap()
}

fn hand_built(edits: Vec<Edit>) -> Plan {
    Plan {
        description: None,
        agent: None,
        edits,
        policy: None,
    }
}

#[test]
fn write_file_replaces_keeping_the_mode_and_creates_with_the_default_mode() {
    let ws = workspace();
    // src/b.rs is 0600; a new file gets 0666 & !umask (0644 under umask 022).
    let p = ws
        .journal
        .preview(&hand_built(vec![
            write_file("src/b.rs", "pub fn b() {}\n"),
            write_file("src/new/c.rs", "pub fn c() {}\n"),
        ]))
        .unwrap();
    assert!(p.ready_to_commit);
    let kinds: Vec<(String, bool, bool)> = p
        .files
        .iter()
        .map(|f| {
            (
                f.path.to_string(),
                f.snapshot.exists(),
                f.candidate.exists(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("src/b.rs".to_string(), true, true),
            ("src/new/c.rs".to_string(), false, true)
        ]
    );
    ws.journal
        .commit(p.handle, CommitOptions::default())
        .unwrap();
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\n");
    assert_eq!(ws.read("src/new/c.rs"), b"pub fn c() {}\n");
    assert_eq!(ws.mode("src/b.rs"), 0o600);
    assert_eq!(ws.mode("src/new/c.rs"), 0o666 & !umask());
    // An explicit mode wins.
    let p = ws
        .preview(r##"{"edits":[{"op":"write_file","path":"run.sh","content":"#!/bin/sh\n","mode":"0700"}]}"##);
    ws.journal
        .commit(p.handle, CommitOptions::default())
        .unwrap();
    assert_eq!(ws.mode("run.sh"), 0o700);
}

#[test]
fn write_file_of_a_file_deleted_since_the_preview_is_stale() {
    let ws = workspace();
    let p = ws
        .journal
        .preview(&hand_built(vec![write_file("src/a.rs", "pub fn a() {}\n")]))
        .unwrap();
    fs::remove_file(ws.path("src/a.rs")).unwrap();
    match ws.journal.commit(p.handle, CommitOptions::default()) {
        Err(Error::StaleSnapshot { tx, paths, .. }) => {
            assert_eq!((tx, paths), (p.tx, vec!["src/a.rs".to_string()]));
        }
        other => panic!("expected StaleSnapshot, got {other:?}"),
    }
    assert!(!ws.path("src/a.rs").exists());
}

#[test]
fn the_summary_lists_every_file_with_bytes_and_lines() {
    let ws = workspace();
    // src/a.rs changes, src/b.rs is written with its own bytes (unchanged), x.txt is
    // created without a final newline.
    let b = String::from_utf8(ws.read("src/b.rs")).unwrap();
    let p = ws
        .journal
        .preview(&hand_built(vec![
            write_file("src/a.rs", "one\ntwo\nthree\n"),
            write_file("src/b.rs", &b),
            write_file("x.txt", "no newline"),
        ]))
        .unwrap();
    // Each side: bytes, lines, and the blake3 of the exact content.
    let a_old = ws.read("src/a.rs");
    let size = |bytes, lines, content: &[u8]| Some((bytes, lines, BlobHash::of(content)));
    let got: Vec<_> = p
        .summary
        .iter()
        .map(|f: &FileSummary| {
            let side = |s: Option<Size>| s.map(|s| (s.bytes, s.lines, s.hash));
            (
                f.path.as_str(),
                f.changed,
                side(f.snapshot),
                side(f.candidate),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "src/a.rs",
                true,
                size(42, 3, &a_old),
                size(14, 3, b"one\ntwo\nthree\n")
            ),
            (
                "src/b.rs",
                false,
                size(28, 3, b.as_bytes()),
                size(28, 3, b.as_bytes())
            ),
            ("x.txt", true, None, size(10, 1, b"no newline")),
        ]
    );
    assert_eq!(p.files.len(), 2);
    // `show` lists the changed files, counted from the journal's blobs.
    let shown = ws.journal.show(p.handle, None).unwrap();
    assert_eq!(shown.summary, [p.summary[0].clone(), p.summary[2].clone()]);
    // A revision carries the files of the earlier one.
    let r = ws
        .journal
        .revise(
            p.handle,
            Default::default(),
            &plan(r#"{"edits":[{"op":"append","path":"x.txt","text":"\n"}]}"#),
        )
        .unwrap();
    let paths: Vec<_> = r
        .summary
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.candidate.map(|s| (s.bytes, s.lines, s.hash)),
            )
        })
        .collect();
    assert_eq!(
        paths,
        [
            ("src/a.rs", size(14, 3, b"one\ntwo\nthree\n")),
            ("x.txt", size(11, 1, b"no newline\n"))
        ]
    );
}

#[test]
fn conflict_markers_are_refused_by_default_and_allowed_by_policy() {
    let ws = workspace();
    let marked = "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n";
    let p = ws
        .journal
        .preview(&hand_built(vec![write_file("notes.md", marked)]))
        .unwrap();
    assert!(!p.ready_to_commit);
    assert_eq!(p.validation[0].code, "conflict_markers");
    assert_eq!(
        ws.journal
            .commit(p.handle, CommitOptions::default())
            .unwrap_err()
            .kind(),
        "validation_failed"
    );
    // The journal's policy allows them: a warning, and the commit writes them.
    let j = Journal::open_with(
        ws.root(),
        OpenOptions::default().with_policy(Policy::default().with_conflict_markers(Markers::Allow)),
    )
    .unwrap();
    let p = j
        .preview(&hand_built(vec![write_file("notes.md", marked)]))
        .unwrap();
    assert!(p.ready_to_commit);
    assert_eq!(
        (p.validation[0].code.as_str(), p.validation[0].severity),
        ("conflict_markers", ultra_edit::Severity::Warning)
    );
    j.commit(p.handle, CommitOptions::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(ws.read("notes.md"), marked.as_bytes());
    // A plan's own policy wins over the journal's: strict again.
    let strict = Plan {
        policy: Some(Policy::default()),
        ..hand_built(vec![write_file("other.md", marked)])
    };
    assert!(!j.preview(&strict).unwrap().ready_to_commit);
}

#[test]
fn a_hand_built_plan_without_edits_is_refused_like_a_parsed_one() {
    let ws = workspace();
    let parsed = Plan::from_json(br#"{"edits":[]}"#).unwrap_err();
    let built = ws.journal.preview(&hand_built(Vec::new())).unwrap_err();
    assert_eq!(built.kind(), "invalid_plan");
    assert_eq!(built.to_string(), parsed.to_string());
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"run.sh","text":"x\n"}]}"#);
    let e = ws
        .journal
        .revise(p.handle, Default::default(), &hand_built(Vec::new()))
        .unwrap_err();
    assert_eq!(e.kind(), "invalid_plan");
    assert_eq!(ws.journal.log(None).unwrap().len(), 1);
    assert_eq!(ws.journal.show(p.handle, None).unwrap().latest_revision, 0);
}

#[test]
fn touched_gives_the_receipts_paths_relative_and_absolute() {
    let ws = workspace();
    let p = ws
        .journal
        .preview(&hand_built(vec![
            write_file("src/b.rs", "pub fn b() {}\n"),
            write_file("run.sh", "R\n"),
        ]))
        .unwrap();
    let r = ws
        .journal
        .commit(p.handle, CommitOptions::default())
        .unwrap();
    let root = ws.root().canonicalize().unwrap();
    let touched: Vec<(String, std::path::PathBuf)> = ws
        .journal
        .touched(&r)
        .into_iter()
        .map(|t| (t.path, t.absolute))
        .collect();
    assert_eq!(
        touched,
        [
            ("run.sh".to_string(), root.join("run.sh")),
            ("src/b.rs".to_string(), root.join("src/b.rs")),
        ]
    );
}

#[test]
fn expiry_is_checked_for_other_verbs_by_check_preview_age() {
    let ws = workspace();
    let clock = ManualClock::at(1_000_000);
    let j = Journal::open_with(
        ws.root(),
        OpenOptions::default().with_clock(std::sync::Arc::new(clock.clone())),
    )
    .unwrap();
    let p = j.preview(&hand_built(vec![write_file("x", "1")])).unwrap();
    assert_eq!(j.tx(p.handle).unwrap().created_ms, 1_000_000);
    clock.advance(Duration::from_millis(1500));
    assert_eq!(j.preview_age(p.handle).unwrap(), 1500);
    assert_eq!(p.created_ms, 1_000_000);
    j.check_preview_age(p.handle, Some(Duration::from_millis(1501)))
        .unwrap();
    // Exactly at the max age it is expired.
    assert_eq!(
        j.check_preview_age(p.handle, Some(Duration::from_millis(1500)))
            .unwrap_err()
            .kind(),
        "preview_expired"
    );
    match j.check_preview_age(p.handle, Some(Duration::from_secs(1))) {
        Err(Error::PreviewExpired {
            tx,
            age_ms,
            max_age_ms,
        }) => assert_eq!((tx, age_ms, max_age_ms), (p.tx, 1500, 1000)),
        other => panic!("expected PreviewExpired, got {other:?}"),
    }
    j.check_preview_age(p.handle, None).unwrap();
    // Without a max age on the journal, the commit goes through.
    j.commit(p.handle, CommitOptions::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(j.tx(p.handle).unwrap().state, TxState::Committed);
    assert_eq!(
        fs::metadata(ws.path("x")).unwrap().permissions().mode() & 0o777,
        0o666 & !umask()
    );
}

/// A journal in a state directory outside the root recovers like `.ultra-edit/`: a
/// commit crashed at every file-system operation is completed on the next open of that
/// state directory. Every file operation comes after the commit point (the intent
/// record, a journal write: docs/commit-protocol.md), so none of these crashes reverts;
/// the crashes before the commit point are the failpoint suite's (tests/it/crash.rs).
#[test]
fn recovery_with_a_state_dir_outside_the_root() {
    use crate::support::faultfs::FaultFs;
    use crate::support::tree_state;
    let plan_json = r#"{"edits":[{"op":"replace_file","path":"src/a.rs","content":"pub fn a() {}\n"},{"op":"create_file","path":"new/b.txt","content":"B\n"},{"op":"delete_file","path":"run.sh"}]}"#;
    let (mut reverted, mut completed) = (0, 0);
    for n in 0..40 {
        let ws = workspace();
        let state = tempfile::tempdir().unwrap();
        let opts = |fs: Option<FaultFs>| {
            let mut o = OpenOptions::default().with_state_dir(state.path());
            o.fs = fs.map(|f| {
                std::sync::Arc::new(f.beneath(ws.root()))
                    as std::sync::Arc<dyn ultra_edit::fs::FileSystem>
            });
            o
        };
        let j = Journal::init_with(ws.root(), opts(None)).unwrap();
        let pre = tree_state(ws.root());
        let p = j.preview(&plan(plan_json)).unwrap();
        drop(j);
        let crashing = Journal::open_with(ws.root(), opts(Some(FaultFs::crash_after(n)))).unwrap();
        let crashed = matches!(
            crashing.commit(p.handle, CommitOptions::default()),
            Err(Error::Journal(ultra_edit::JournalError::Panicked { .. }))
        );
        drop(crashing);
        if !crashed {
            break;
        }
        let j = Journal::open_with(ws.root(), opts(None)).unwrap();
        let report = j.recovery_on_open().expect("recovery ran on open").clone();
        assert_eq!(report.batches_found, 1, "n={n}");
        let tree = tree_state(ws.root());
        assert!(tree.keys().all(|k| !k.contains(".ue-")), "n={n}: {tree:?}");
        match j.tx(p.handle).unwrap().state {
            TxState::Open => {
                assert_eq!(tree, pre, "n={n}");
                reverted += 1;
            }
            TxState::Committed => {
                assert_eq!(ws.read("src/a.rs"), b"pub fn a() {}\n", "n={n}");
                assert_eq!(ws.read("new/b.txt"), b"B\n", "n={n}");
                assert!(!ws.path("run.sh").exists(), "n={n}");
                completed += 1;
            }
            other => panic!("n={n}: {other:?}"),
        }
        assert_eq!(j.recover().unwrap().batches_found, 0);
    }
    assert!(
        reverted == 0 && completed >= 3,
        "{reverted} reverted, {completed} completed"
    );
}

/// The MCP tools take a policy too: m1nd's `apply_batch` lets the last write of a
/// path win; the default refuses the batch and writes nothing.
#[test]
fn the_tools_apply_batch_with_the_last_write_wins_policy() {
    use serde_json::json;
    use ultra_edit::mcp::EditTools;
    use ultra_edit::SamePath;
    let ws = workspace();
    let batch = json!({"agent_id": "dev", "atomic": true, "edits": [
        {"file_path": "src/b.rs", "new_content": "pub fn first() {}\n"},
        {"file_path": "src/b.rs", "new_content": "pub fn second() {}\n"}]});
    let j = std::sync::Arc::new(Journal::open(ws.root()).unwrap());
    let strict = EditTools::new(j.clone());
    let e = strict.call("apply_batch", batch.clone()).unwrap_err();
    assert_eq!(e.kind, "overlapping_edits");
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    let m1nd = EditTools::new(j)
        .with_policy(Policy::default().with_same_path_twice(SamePath::LastWriteWins));
    let out = m1nd.call("apply_batch", batch).unwrap();
    assert_eq!(out["files_written"], 1);
    assert_eq!(out["results"][0]["superseded_by"], 1);
    assert_eq!(out["results"][0]["bytes_written"], 0);
    assert_eq!(out["results"][1]["bytes_written"], 19);
    assert_eq!(ws.read("src/b.rs"), b"pub fn second() {}\n");
}

/// `journal gc --keep-days` measures ages by the journal's clock too.
#[test]
fn gc_keep_days_uses_the_journal_clock() {
    let ws = workspace();
    let clock = ManualClock::at(1_796_083_200_000);
    let mut j = Journal::open_with(
        ws.root(),
        OpenOptions::default().with_clock(std::sync::Arc::new(clock.clone())),
    )
    .unwrap();
    let old = j.preview(&hand_built(vec![write_file("x", "1")])).unwrap();
    j.commit(old.handle, CommitOptions::default()).unwrap();
    j.flush().unwrap();
    clock.advance(Duration::from_secs(2 * 86_400));
    let young = j.preview(&hand_built(vec![write_file("x", "2")])).unwrap();
    j.commit(young.handle, CommitOptions::default()).unwrap();
    j.flush().unwrap();
    let report = j
        .gc(ultra_edit::GcPolicy {
            keep_days: Some(1),
            ..Default::default()
        })
        .unwrap();
    let pruned: Vec<u64> = report.pruned.iter().map(|p| p.tx).collect();
    assert_eq!(pruned, [old.tx]);
    assert!(j.tx(old.handle).unwrap().pruned);
    assert!(!j.tx(young.handle).unwrap().pruned);
}

/// `syntax_errors: allow` in the journal's policy makes a candidate that stops parsing
/// a warning that says so; the MCP `allow` argument sets it on top of the tools' other
/// choices (here last write wins), not instead of them.
#[cfg(feature = "syntax")]
#[test]
fn syntax_errors_are_allowed_by_the_journals_policy_and_by_the_tools_allow() {
    use serde_json::json;
    use ultra_edit::mcp::EditTools;
    use ultra_edit::{SamePath, SyntaxErrors};
    let ws = workspace();
    let allow = Policy::default().with_syntax_errors(SyntaxErrors::Allow);
    let j = Journal::open_with(ws.root(), OpenOptions::default().with_policy(allow)).unwrap();
    assert_eq!(j.policy(), allow);
    let p = j
        .preview(&hand_built(vec![write_file("src/a.rs", "fn (\n")]))
        .unwrap();
    assert!(p.ready_to_commit);
    let found: Vec<(&str, Severity)> = p
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.severity))
        .collect();
    assert_eq!(found, [("syntax_error", Severity::Warning)]);
    assert!(
        p.validation[0].message.ends_with(
            "(allowed by the policy's \"syntax_errors\": \"allow\", so it does not block a commit)"
        ),
        "{}",
        p.validation[0].message
    );
    j.commit(p.handle, CommitOptions::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(ws.read("src/a.rs"), b"fn (\n");
    // The tools: two writes of one path and a broken candidate.
    let tools = EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()))
        .with_policy(Policy::default().with_same_path_twice(SamePath::LastWriteWins));
    let args = json!({"agent_id": "dev", "edits": [
        {"file_path": "src/b.rs", "new_content": "pub fn b() {}\n"},
        {"file_path": "src/b.rs", "new_content": "pub fn b( {}\n"}]});
    let v = tools.call("edit_preview", args.clone()).unwrap();
    assert_eq!(v["validation"]["ready_to_commit"], false, "{v}");
    let mut allowed = args;
    allowed["allow"] = json!(["syntax_error"]);
    let v = tools.call("edit_preview", allowed.clone()).unwrap();
    assert_eq!(v["validation"]["ready_to_commit"], true, "{v}");
    assert_eq!(
        (
            &v["validation_issues"][0]["code"],
            &v["validation_issues"][0]["severity"]
        ),
        (&json!("syntax_error"), &json!("warning")),
        "{v}"
    );
    allowed["allow"] = json!(["no_changes"]);
    let e = tools.call("edit_preview", allowed).unwrap_err();
    assert_eq!(e.kind, "invalid_plan", "{e:?}");
}

/// `edit_show` compares the disk with the snapshot as a preview reads the disk: a file
/// swapped for a FIFO is not waited on, a link to `/dev/zero` is not followed (it was
/// read until memory ran out), and a path outside the root is not read: each is
/// "changed", answered at once.
#[test]
fn the_tools_read_the_disk_without_following_links_or_waiting_on_a_fifo() {
    use serde_json::json;
    let ws = workspace();
    let (tools, id) = tools_with_a_preview(&ws);
    let tools = std::sync::Arc::new(tools);
    // On a thread, answered within 10 s or failed: a read that blocks must not hang
    // the test run.
    let show = || {
        let (tools, id) = (tools.clone(), id.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(tools.call("edit_show", json!({"agent_id": "dev", "preview_id": id})));
        });
        rx.recv_timeout(Duration::from_secs(10))
            .expect("edit_show answered within 10 s")
            .unwrap()
    };
    assert_eq!(show()["validation"]["source_changed"], false);
    std::fs::remove_file(ws.path("src/b.rs")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.path("src/b.rs"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    assert_eq!(show()["validation"]["source_changed"], true, "a FIFO");
    std::fs::remove_file(ws.path("src/b.rs")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.path("src/b.rs")).unwrap();
    assert_eq!(show()["validation"]["source_changed"], true, "a link");
}

/// `edit_rollback` of a preview that was rolled back answers `already` with the
/// rollback transaction's receipt; redone, it names the redo, as data an agent can call.
#[test]
fn the_tools_name_the_transaction_that_redoes_a_rolled_back_preview() {
    use serde_json::json;
    let ws = workspace();
    let (tools, id) = tools_with_a_preview(&ws);
    tools
        .call(
            "edit_commit",
            json!({"agent_id": "dev", "preview_id": id, "confirm": true}),
        )
        .unwrap();
    let rb = tools
        .call("edit_rollback", json!({"agent_id": "dev", "tx": id}))
        .unwrap();
    let by = rb["tx"].as_u64().unwrap();
    // A retried rollback answers with the rollback's receipt: `already`.
    let again = tools
        .call("edit_rollback", json!({"agent_id": "dev", "tx": id}))
        .unwrap();
    assert_eq!(again["already"], true);
    assert_eq!(again["tx"], by);
    // Redone, the preview's change is the redo's: a second rollback of the preview is
    // refused and names the redo, which is the one to roll back.
    let redo = tools
        .call(
            "edit_rollback",
            json!({"agent_id": "dev", "tx": by.to_string()}),
        )
        .unwrap()["tx"]
        .as_u64()
        .unwrap();
    let e = tools
        .call("edit_rollback", json!({"agent_id": "dev", "tx": id}))
        .unwrap_err();
    assert_eq!(e.kind, "wrong_state");
    let tx = id.as_str().unwrap().rsplit('-').next().unwrap();
    assert_eq!(
        e.message,
        format!("transaction {tx}'s change was rolled back by transaction {by} and redone by transaction {redo}: the change is transaction {redo}'s now")
    );
    assert_eq!(
        e.hint,
        format!("to undo the change, call edit_rollback with tx = {redo}")
    );
}

/// The MCP tools on `ws`'s journal, and the `preview_id` of an `edit_preview` of
/// `src/b.rs` by agent `dev`.
fn tools_with_a_preview(
    ws: &crate::support::Ws,
) -> (ultra_edit::mcp::EditTools, serde_json::Value) {
    let tools =
        ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let p = tools
        .call(
            "edit_preview",
            serde_json::json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
        )
        .unwrap();
    let id = p["preview_id"].clone();
    (tools, id)
}

/// Issue 32, item 4: the option and filter structs are `#[non_exhaustive]`, so a host
/// (this test is outside the crate, like one) builds them from `new()` with the
/// `with_*` methods; each method sets its field and only it.
#[test]
fn option_structs_are_built_with_new_and_with_methods_outside_the_crate() {
    use ultra_edit::{
        CommitOptions, DumpFilter, PreviewOptions, RecoverOptions, ResolveOptions, ReviseOptions,
        RollbackOptions,
    };
    let c = CommitOptions::new();
    assert_eq!(
        (c.revision, c.allow_owner_change, c.max_preview_age),
        (None, false, None)
    );
    let c = CommitOptions::new()
        .with_revision(2)
        .with_allow_owner_change(true)
        .with_max_preview_age(Duration::from_millis(1500));
    assert_eq!(
        (c.revision, c.allow_owner_change, c.max_preview_age),
        (Some(2), true, Some(Duration::from_millis(1500)))
    );
    assert_eq!(ultra_edit::RevertOptions::new().agent, None);
    assert_eq!(
        ultra_edit::RevertOptions::new()
            .with_agent("alice")
            .agent
            .as_deref(),
        Some("alice")
    );
    let g = ultra_edit::AgentRange::all();
    assert_eq!((g.since_ms, g.last), (None, None));
    let g = ultra_edit::AgentRange::all()
        .with_since_ms(Some(1_700_000_000_000))
        .with_last(Some(2));
    assert_eq!((g.since_ms, g.last), (Some(1_700_000_000_000), Some(2)));
    let r = RollbackOptions::new();
    assert_eq!((r.force, r.allow_owner_change), (false, false));
    let r = RollbackOptions::new().with_force(true);
    assert_eq!((r.force, r.allow_owner_change), (true, false));
    let r = RollbackOptions::new().with_allow_owner_change(true);
    assert_eq!((r.force, r.allow_owner_change), (false, true));
    assert!(!RecoverOptions::new().overwrite);
    assert!(RecoverOptions::new().with_overwrite(true).overwrite);
    assert!(!PreviewOptions::new().refuse_nothing_to_change);
    assert!(
        PreviewOptions::new()
            .with_refuse_nothing_to_change(true)
            .refuse_nothing_to_change
    );
    let v = ReviseOptions::new();
    assert_eq!((v.base, v.rebase), (None, false));
    let v = ReviseOptions::new().with_base(3).with_rebase(true);
    assert_eq!((v.base, v.rebase), (Some(3), true));
    assert!(!ResolveOptions::new().force);
    assert!(ResolveOptions::new().with_force(true).force);
    let d = DumpFilter::new();
    assert_eq!(
        (d.tx, d.since_seq, d.since_ms, d.kinds.len()),
        (None, 0, None, 0)
    );
    let d = DumpFilter::new()
        .with_tx(7u64)
        .with_since_seq(4)
        .with_since_ms(1_700_000_000_000)
        .with_kinds(["tx_created", "receipt_issued"]);
    assert_eq!(d.tx, Some(ultra_edit::TxRef::from(7u64)));
    assert_eq!(
        (d.since_seq, d.since_ms, d.kinds),
        (
            4,
            Some(1_700_000_000_000),
            vec!["tx_created".to_string(), "receipt_issued".to_string()]
        )
    );
}

/// As above, for the MCP server's options (feature `mcp`).
#[cfg(feature = "mcp")]
#[test]
fn serve_options_are_built_with_new_and_with_methods() {
    let s = ultra_edit::mcp::ServeOptions::new();
    assert_eq!((s.preview_ttl, s.allow_commands), (None, false));
    let s = ultra_edit::mcp::ServeOptions::new()
        .with_preview_ttl(Duration::from_secs(300))
        .with_allow_commands(true);
    assert_eq!(
        (s.preview_ttl, s.allow_commands),
        (Some(Duration::from_secs(300)), true)
    );
}
