//! The journal's default check (docs/commands.md, "The default check"): stored with
//! the journal, set and shown by `ultra-edit config`, `Journal::set_default_check`
//! and the MCP tool `edit_config` (only with `--allow-commands`), and run by preview,
//! revise, rebase, resolve and run when no check is given (`--no-check` skips it).

use ultra_edit::{Error, Journal, SandboxError};

use crate::sandbox::available;
use crate::support::*;

/// A plan that sets `src/b.rs`'s second line to `    WORD`.
fn echo_plan(word: &str) -> String {
    format!(
        r#"{{"edits":[{{"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    {word}\n"}}]}}"#
    )
}

fn codes(v: &serde_json::Value) -> Vec<String> {
    v["validation"]
        .as_array()
        .unwrap_or_else(|| panic!("no validation in {v}"))
        .iter()
        .map(|i| i["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_default_check_is_stored_with_the_journal_and_seen_by_another_handle() {
    let ws = workspace();
    assert_eq!(ws.journal.default_check().unwrap(), None);
    ws.journal
        .set_default_check(Some("cargo check --offline"))
        .unwrap();
    assert_eq!(
        ws.journal.default_check().unwrap().as_deref(),
        Some("cargo check --offline")
    );
    let other = Journal::open(ws.root()).unwrap();
    assert_eq!(
        other.config().unwrap().check.as_deref(),
        Some("cargo check --offline")
    );
    // Whitespace only: a typed error, and the stored check is kept.
    let e = other.set_default_check(Some(" \t")).unwrap_err();
    assert_eq!(e.kind(), "empty_command");
    assert!(
        matches!(&e, Error::Sandbox(SandboxError::EmptyCommand { what }) if what == "the default check"),
        "{e:?}"
    );
    assert_eq!(
        ws.journal.default_check().unwrap().as_deref(),
        Some("cargo check --offline")
    );
    other.set_default_check(None).unwrap();
    assert_eq!(ws.journal.default_check().unwrap(), None);
    assert_eq!(
        serde_json::to_value(ws.journal.config().unwrap()).unwrap(),
        serde_json::json!({"check": null})
    );
    // Stored in the journal file: a reopen after the handles are gone still has it.
    ws.journal.set_default_check(Some("true")).unwrap();
    drop(other);
    let again = Journal::open(ws.root()).unwrap();
    assert_eq!(again.default_check().unwrap().as_deref(), Some("true"));
}

#[test]
fn cli_config_sets_and_shows_the_default_check_and_preview_rebase_and_run_use_it() {
    let ws = workspace();
    let show = cli(ws.root(), &["config", "show"], None);
    assert_eq!(show.status.code(), Some(0), "{}", text(&show));
    assert_eq!(String::from_utf8_lossy(&show.stdout), "check: (none)\n");
    let set = cli(
        ws.root(),
        &["config", "check", "grep -q bye src/b.rs && echo saw-bye"],
        None,
    );
    assert_eq!(set.status.code(), Some(0), "{}", text(&set));
    assert_eq!(
        String::from_utf8_lossy(&set.stdout),
        "default check: `grep -q bye src/b.rs && echo saw-bye` (preview, revise, rebase, resolve and run run it when no --check is given; --no-check skips it)\n"
    );
    let show = cli(ws.root(), &["--json", "config", "show"], None);
    assert_eq!(
        json_of(&show),
        serde_json::json!({"check": "grep -q bye src/b.rs && echo saw-bye"})
    );
    let show = cli(ws.root(), &["config", "show"], None);
    assert_eq!(
        String::from_utf8_lossy(&show.stdout),
        "check: grep -q bye src/b.rs && echo saw-bye\n"
    );
    // Neither a command nor --unset: a usage error, nothing changed.
    let bad = cli(ws.root(), &["config", "check"], None);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert_eq!(
        ws.journal.default_check().unwrap().as_deref(),
        Some("grep -q bye src/b.rs && echo saw-bye")
    );
    if !available(&ws) {
        return;
    }
    // preview without --check runs the default check on the candidate.
    let out = cli(
        ws.root(),
        &["--json", "preview", "--plan", "-"],
        Some(&echo_plan("bye")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(codes(&v), ["check_passed"]);
    let passed = v["tx"].as_u64().unwrap();
    // A candidate the check refuses: check_failed, exit 4, commit refused.
    let out = cli(
        ws.root(),
        &["--json", "preview", "--plan", "-"],
        Some(&echo_plan("other")),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(codes(&v), ["check_failed"]);
    let failed = v["tx"].as_u64().unwrap();
    let commit = cli(ws.root(), &["commit", &failed.to_string()], None);
    assert_ne!(commit.status.code(), Some(0), "{}", text(&commit));
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    // --no-check: no check runs, the validation has no check issue.
    let out = cli(
        ws.root(),
        &["--json", "preview", "--no-check", "--plan", "-"],
        Some(&echo_plan("other")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(codes(&json_of(&out)), Vec::<String>::new());
    // --check given wins over the default.
    let out = cli(
        ws.root(),
        &["--json", "preview", "--check", "true", "--plan", "-"],
        Some(&echo_plan("other")),
    );
    assert_eq!(codes(&json_of(&out)), ["check_passed"]);
    // A rebase runs the default check again on the merged candidate.
    ws.write("src/b.rs", b"// moved on\npub fn b() -> u32 {\n    2\n}\n");
    let out = cli(ws.root(), &["--json", "rebase", &passed.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(codes(&json_of(&out)), ["check_passed"]);
    let out = cli(
        ws.root(),
        &["--json", "rebase", "--no-check", &failed.to_string()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(codes(&json_of(&out)), Vec::<String>::new());
    // resolve (the editor turns `other` into `bye`) runs it on the resolved candidate.
    let out = ue_command(ws.root(), &["--json", "resolve", &failed.to_string()])
        .env("EDITOR", "sed -i s/other/bye/")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(codes(&json_of(&out)), ["check_passed"]);
    let out = ue_command(
        ws.root(),
        &["--json", "resolve", "--no-check", &failed.to_string()],
    )
    .env("EDITOR", "sed -i s/bye/other/")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(codes(&json_of(&out)), Vec::<String>::new());
    // run -- uses it too: a command whose result the check refuses is not committed.
    let out = cli(ws.root(), &["run", "--", "echo x > x.txt"], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(!ws.path("x.txt").exists());
    // --unset removes it: a preview runs no check again.
    let unset = cli(ws.root(), &["config", "check", "--unset"], None);
    assert_eq!(
        String::from_utf8_lossy(&unset.stdout),
        "default check removed\n"
    );
    assert_eq!(ws.journal.default_check().unwrap(), None);
    let out = cli(
        ws.root(),
        &["--json", "preview", "--plan", "-"],
        Some(&echo_plan("third")),
    );
    assert_eq!(codes(&json_of(&out)), Vec::<String>::new());
}

#[test]
fn mcp_edit_config_exists_only_with_commands_allowed_and_its_check_runs_by_default() {
    use serde_json::json;
    use std::sync::Arc;
    use ultra_edit::mcp::{tool_definitions_for, EditTools, EDIT_CONFIG};
    let ws = workspace();
    let tools = |allow: bool| {
        EditTools::new(Arc::new(Journal::open(ws.root()).unwrap())).with_commands(allow)
    };
    assert!(tool_definitions_for(false)
        .iter()
        .all(|d| d.name != EDIT_CONFIG));
    let e = tools(false)
        .call(EDIT_CONFIG, json!({"agent_id": "a", "check": "true"}))
        .unwrap_err();
    assert_eq!(e.kind, "commands_not_allowed");
    assert_eq!(ws.journal.default_check().unwrap(), None);
    let defs = tool_definitions_for(true);
    assert!(defs.iter().any(|d| d.name == EDIT_CONFIG));
    let t = tools(true);
    assert_eq!(
        t.call(EDIT_CONFIG, json!({"agent_id": "a"})).unwrap(),
        json!({"check": null})
    );
    assert_eq!(
        t.call(
            EDIT_CONFIG,
            json!({"agent_id": "a", "check": "grep -q bye run.sh"})
        )
        .unwrap(),
        json!({"check": "grep -q bye run.sh"})
    );
    assert_eq!(
        ws.journal.default_check().unwrap().as_deref(),
        Some("grep -q bye run.sh")
    );
    let e = t
        .call(
            EDIT_CONFIG,
            json!({"agent_id": "a", "check": "x", "unset": true}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "invalid_arguments");
    if available(&ws) {
        let issue_codes = |v: &serde_json::Value| -> Vec<String> {
            v["validation_issues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["code"].as_str().unwrap().to_string())
                .collect()
        };
        let v = t
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "run.sh", "new_content": "#!/bin/sh\necho other\n"}),
            )
            .unwrap();
        assert_eq!(issue_codes(&v), ["check_failed"]);
        let v = t
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "run.sh", "new_content": "#!/bin/sh\necho other\n", "no_check": true}),
            )
            .unwrap();
        assert_eq!(issue_codes(&v), Vec::<String>::new());
        // A server without the opt-in runs no default check.
        let v = tools(false)
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "run.sh", "new_content": "#!/bin/sh\necho other\n"}),
            )
            .unwrap();
        assert_eq!(issue_codes(&v), Vec::<String>::new());
    }
    assert_eq!(
        t.call(EDIT_CONFIG, json!({"agent_id": "a", "unset": true}))
            .unwrap(),
        json!({"check": null})
    );
    assert_eq!(ws.journal.default_check().unwrap(), None);
}
