//! The CLI contract: `--json` objects whose `tx` the other commands accept, exit codes.

use crate::support::*;

#[test]
fn exit_codes_follow_the_contract() {
    let ws = workspace();
    let code = |args: &[&str], stdin: Option<&str>| cli(ws.root(), args, stdin).status.code();
    assert_eq!(
        code(
            &["--json", "preview"],
            Some(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"zzz","new":"x"}]}"#)
        ),
        Some(6)
    );
    assert_eq!(code(&["--json", "preview"], Some("{not json")), Some(1));
    assert_eq!(code(&["frobnicate"], None), Some(2));
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    ws.write("src/b.rs", b"changed\n");
    let stale = cli(ws.root(), &["--json", "commit", &tx], None);
    assert_eq!(stale.status.code(), Some(3));
    let v = json_of(&stale);
    assert_eq!(v["error"]["kind"], "stale_snapshot");
    assert!(String::from_utf8_lossy(&stale.stderr).contains("rebase"));
    assert_eq!(code(&["show", "999"], None), Some(1));
    let fresh = tempfile::tempdir().unwrap();
    let out = cli(fresh.path(), &["log"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("init"));
}

#[test]
fn json_dump_lists_every_record_in_order() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"agent":"a1","edits":[{"op":"create_file","path":"n.txt","content":"n\n"}]}"#),
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    let dump = cli(
        ws.root(),
        &["--json", "journal", "dump", "--with-blobs"],
        None,
    );
    assert!(dump.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(dump.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            l["event"]["kind"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .clone()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tx_created",
            "blob_stored",
            "revision_recorded",
            "batch_state",
            "batch_state",
            "receipt_issued"
        ]
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| l["event"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=6).collect::<Vec<_>>());
    assert_eq!(lines[1]["blob"]["content"], "n\n");
    assert_eq!(lines[2]["detail"]["revision"]["files"][0]["path"], "n.txt");
    let states: Vec<&str> = lines[3..5]
        .iter()
        .map(|l| l["event"]["kind"]["batch_state"]["state"].as_str().unwrap())
        .collect();
    // The intent is the commit point (docs/commit-protocol.md).
    assert_eq!(states, ["committing", "committed"]);
}

#[test]
fn a_preview_that_fails_validation_is_recorded_but_exits_4() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"create_file","path":"notes.txt","content":"<<<<<<< ours\n"}]}"#),
    );
    assert_eq!(out.status.code(), Some(4));
    let v = json_of(&out); // exactly one JSON object: the preview
    assert_eq!(v["tx"], 1);
    assert_eq!(v["ready_to_commit"], false);
    assert_eq!(v["validation"][0]["code"], "conflict_markers");
}

/// A preview whose plan changes nothing is refused as `nothing_to_change` (exit 4, as
/// a failed validation) and records nothing: no open tx is left behind, as `git
/// commit` makes no empty commit. A plan whose policy allows identical content is
/// recorded, ready; a revision that comes to change nothing is recorded (its tx exists
/// already) with the `no_changes` error.
#[test]
fn a_preview_that_changes_nothing_records_nothing() {
    let ws = workspace();
    let same = r##"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    2"},{"op":"write_file","path":"run.sh","content":"#!/bin/sh\necho hi\n"}]}"##;
    let out = cli(ws.root(), &["--json", "preview"], Some(same));
    assert_eq!(out.status.code(), Some(4));
    let hint = "check that each edit changes its file (a `new` equal to its `old`, or a file written with the content it has, changes nothing); a plan with \"policy\": {\"identical_content\": \"allow\"} is recorded anyway";
    let message = "the plan changes nothing: run.sh and src/b.rs would keep their bytes and mode, so there is nothing to preview or commit; nothing was recorded";
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "nothing_to_change", "message": message, "exit_code": 4, "hint": hint,
        }})
    );
    let out = cli(ws.root(), &["preview"], Some(same));
    assert_eq!(out.status.code(), Some(4));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: {message}\nhint: {hint}\n")
    );
    assert_eq!(
        json_of(&cli(ws.root(), &["--json", "log"], None)),
        serde_json::json!({"txs": [], "needs_attention": []})
    );
    assert_eq!(ws.journal.log(None).unwrap().len(), 0);
    // Allowed by the plan's policy: recorded, and ready to commit.
    let allowed = r#"{"policy":{"identical_content":"allow"},"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    2"}]}"#;
    let out = cli(ws.root(), &["--json", "preview"], Some(allowed));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_of(&out)["tx"], 1);
    assert_eq!(json_of(&out)["ready_to_commit"], true);
    // A revision that undoes the whole change is recorded, not ready (exit 4).
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 2);
    let out = cli(
        ws.root(),
        &["--json", "revise", "2"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    3","new":"    2"}]}"#),
    );
    assert_eq!(out.status.code(), Some(4));
    let v = json_of(&out);
    assert_eq!(
        (v["tx"].clone(), v["revision"].clone()),
        (2.into(), 1.into())
    );
    assert_eq!(v["ready_to_commit"], false);
    // The library's plain preview records it, as m1nd's edit_preview answers it.
    let p = ws
        .journal
        .preview(&ultra_edit::Plan::from_json(same.as_bytes()).unwrap())
        .unwrap();
    assert_eq!((p.tx, p.ready_to_commit), (3, false));
}

#[test]
fn json_errors_name_the_tx() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#),
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["abort", &tx], None).status.success());
    let again = cli(ws.root(), &["--json", "commit", &tx], None);
    assert_eq!(again.status.code(), Some(1));
    let v = json_of(&again);
    assert_eq!(v["tx"].as_u64().map(|t| t.to_string()), Some(tx));
    assert_eq!(v["error"]["kind"], "wrong_state");
    assert_eq!(
        cli(ws.root(), &["journal", "dump", "--tx", "99"], None)
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn the_root_is_found_from_a_subdirectory_like_git() {
    let ws = workspace();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .args(["--json", "preview", "--plan", "-"])
        .current_dir(ws.path("src"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(br#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    assert_eq!(json_of(&out)["files"][0]["path"], "run.sh"); // paths stay root-relative
    assert!(!ws.path("src/.ultra-edit").exists());
}

#[test]
fn modes_are_octal_strings_or_numbers() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"create_file","path":"x.sh","content":"","mode":"0755"},
                                  {"op":"create_file","path":"y.txt","content":"","mode":420}]}"#,
    );
    assert_eq!(
        (p.files[0].candidate.mode(), p.files[1].candidate.mode()),
        (Some(0o755), Some(0o644))
    );
    let out = cli(
        ws.root(),
        &["preview"],
        Some(r#"{"edits":[{"op":"create_file","path":"z","content":"","mode":644}]}"#),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(r#""mode": "0644""#));
}

#[test]
fn help_plan_teaches_every_op_and_plan_errors_point_at_it() {
    let ws = workspace();
    let out = cli(ws.root(), &["help", "plan"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/plan.md")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), page);
    // One section per op, each with an example of that op.
    for op in ultra_edit::Edit::OPS {
        let section = page
            .split("\n## ")
            .find(|s| s.starts_with(&format!("{op}\n")))
            .unwrap_or_else(|| panic!("no section for {op}"));
        assert!(
            section.contains(&format!(r#"{{"op": "{op}""#)),
            "{op} has no example"
        );
    }
    // `help COMMAND` is that command's help; an unknown topic is a usage error.
    let show = String::from_utf8(cli(ws.root(), &["help", "show"], None).stdout).unwrap();
    assert!(show.contains("--from <M>"), "{show}");
    // Its usage line names the whole command, as `COMMAND --help` does.
    let help = |args: &[&str]| String::from_utf8(cli(ws.root(), args, None).stdout).unwrap();
    let commit = help(&["help", "commit"]);
    assert!(
        commit.starts_with(
            "Apply a revision to the disk, all files or none; prints the receipt\n\n\
             Usage: ultra-edit commit [OPTIONS] <TX>\n"
        ),
        "{commit}"
    );
    assert_eq!(commit, help(&["commit", "--help"]));
    let dump = help(&["help", "journal", "dump"]);
    assert!(
        dump.starts_with(
            "Every record, in journal order\n\nUsage: ultra-edit journal dump [OPTIONS]\n"
        ),
        "{dump}"
    );
    assert_eq!(dump, help(&["journal", "dump", "--help"]));
    assert_eq!(
        cli(ws.root(), &["help", "nope"], None).status.code(),
        Some(2)
    );
    // Under --json, the usage error object, as for any other refused command line.
    let out = cli(ws.root(), &["--json", "help", "nope"], None);
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "usage", "{v}");
    assert_eq!(v["error"]["exit_code"], 2, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("no help topic \"nope\"; topics: plan, and the commands (init, "),
        "{v}"
    );
    // A bad plan's error points at the page.
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"frob"}]}"#),
    );
    assert_eq!(out.status.code(), Some(1));
    let hint = json_of(&out)["error"]["hint"].as_str().unwrap().to_string();
    assert!(hint.contains("`ultra-edit help plan`"), "{hint}");
    // The ops that error names as known are exactly the ones the page teaches, so a
    // new op cannot go without a section.
    let message = json_of(&out)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with(
            "invalid edit plan: edit #1: \"op\": unknown variant `frob`, expected one of "
        ),
        "{message}"
    );
    let known = message
        .split_once("expected one of ")
        .and_then(|(_, rest)| rest.split_once(" (at line"))
        .map(|(list, _)| list.to_string())
        .unwrap_or_else(|| panic!("{message}"));
    let known: Vec<&str> = known.split(", ").map(|o| o.trim_matches('`')).collect();
    assert_eq!(known, ultra_edit::Edit::OPS, "{message}");
}

#[test]
fn each_commands_json_help_says_what_it_prints() {
    let ws = workspace();
    let json_help = |args: &[&str]| {
        let out = cli(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let help = String::from_utf8(out.stdout).unwrap();
        let at = help.find("--json\n").unwrap_or_else(|| panic!("{help}"));
        help[at..].lines().nth(1).unwrap().trim().to_string()
    };
    assert!(json_help(&["commit", "--help"]).starts_with("Print the receipt as one JSON object"));
    assert!(
        json_help(&["log", "--help"]).starts_with("Print one JSON object instead of text: {txs: [")
    );
    assert!(
        json_help(&["journal", "dump", "--help"]).starts_with("Print JSON lines instead of text")
    );
    assert!(json_help(&["revise", "--help"]).contains("interdiff"));
    // Still one flag: after the subcommand or before it.
    let out = cli(ws.root(), &["log", "--json"], None);
    assert!(json_of(&out)["txs"].is_array());
}

/// `show TX` of a committed tx shows the revision its commit applied (what is on the
/// disk), not the latest; its header says which revision was committed, and `--json`
/// names it in `committed`. `--revision N` still shows N.
#[test]
fn show_of_a_committed_tx_shows_the_revision_committed() {
    let ws = workspace();
    let step = |args: &[&str], old: &str, new: &str| {
        let plan = format!(
            r#"{{"edits":[{{"op":"replace_text","path":"src/b.rs","old":"{old}","new":"{new}"}}]}}"#
        );
        let out = cli(ws.root(), args, Some(&plan));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    step(&["preview"], "    2", "    3");
    step(&["revise", "1"], "    3", "    4");
    step(&["revise", "1"], "    4", "    5");
    let out = cli(ws.root(), &["commit", "1", "--revision", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    4\n}\n");
    let diff_to = |n: &str| {
        format!(
            "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,3 +1,3 @@ b\n pub fn b() -> u32 {{\n-    2\n+    {n}\n }}\n"
        )
    };
    let show = |args: &[&str]| {
        let out = cli(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        show(&["show", "1"]),
        "tx 1 revision 1 (committed, built on revision 0) — this revision was committed \
         (batch 1); the latest, revision 2, was not\n  M src/b.rs  +1 -1\n"
            .to_string()
            + &diff_to("4")
    );
    assert_eq!(
        show(&["show", "1", "--revision", "2"]),
        "tx 1 revision 2 (committed, built on revision 1) — not committed: revision 1 was \
         (batch 1)\n  M src/b.rs  +1 -1\n"
            .to_string()
            + &diff_to("5")
    );
    let v = json_of(&cli(ws.root(), &["--json", "show", "1"], None));
    assert_eq!(
        (&v["revision"], &v["latest_revision"], &v["committed"]),
        (
            &serde_json::json!(1),
            &serde_json::json!(2),
            &serde_json::json!({"revision": 1, "batch": 1})
        ),
        "{v}"
    );
    // An open tx has none; rolled back, the tx still names the revision it committed.
    let v = json_of(&cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"append","path":"run.sh","text":"echo bye\n"}]}"#),
    ));
    assert_eq!(v["committed"], serde_json::Value::Null, "{v}");
    let out = cli(ws.root(), &["rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        show(&["show", "1"]).lines().next(),
        Some(
            "tx 1 revision 1 (rolled_back, built on revision 0) — this revision was committed \
             (batch 1), then rolled back; the latest, revision 2, was not"
        )
    );
}

/// `init` is idempotent and says which it did, as `git init` does: the second run keeps
/// the journal (its transactions stay) and says "already initialized"; `--json` says
/// `created`.
#[test]
fn init_twice_keeps_the_journal_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), b"old\n").unwrap();
    let state = dir.path().canonicalize().unwrap().join(".ultra-edit");
    let first = run_ue(dir.path(), &["init"], None);
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        format!("initialized {}\n", state.display())
    );
    let j = ultra_edit::Journal::open(dir.path()).unwrap();
    let tx = j
        .preview(&plan(
            r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"new\n"}]}"#,
        ))
        .unwrap()
        .tx;
    drop(j);
    let again = run_ue(dir.path(), &["init"], None);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        format!(
            "already initialized {} (its journal was kept as it was)\n",
            state.display()
        )
    );
    let v = json_of(&run_ue(dir.path(), &["--json", "init"], None));
    assert_eq!(v["created"], false, "{v}");
    let j = ultra_edit::Journal::open(dir.path()).unwrap();
    assert_eq!(j.tx(tx).unwrap().state, ultra_edit::TxState::Open);
    let fresh = tempfile::tempdir().unwrap();
    let v = json_of(&run_ue(fresh.path(), &["--json", "init"], None));
    assert_eq!(v["created"], true, "{v}");
    // A new journal below another: said on stderr, since it hides the outer one from
    // the commands run below it.
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let nested = run_ue(&dir.path().join("sub"), &["init"], None);
    assert_eq!(nested.status.code(), Some(0));
    let outer = dir.path().canonicalize().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&nested.stderr),
        format!(
            "ultra-edit: note: {} already has a journal; this new one is separate, and commands run under {} now use it instead\n",
            outer.display(),
            outer.join("sub").display()
        )
    );
}

/// A `--plan` file that cannot be read is an `io` error (exit 1) with a hint: where a
/// relative path was looked for, and standard input as the other way; nothing is
/// recorded.
#[test]
fn a_missing_plan_file_has_a_hint() {
    let ws = workspace();
    let cwd = tempfile::tempdir().unwrap();
    let cwd_path = cwd.path().canonicalize().unwrap();
    let mut cmd = ue_command(ws.root(), &["--json", "preview", "--plan", "missing.json"]);
    cmd.current_dir(&cwd_path).env_remove("PWD");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let hint = format!(
        "there is no missing.json in the current directory {} (a relative --plan path is read from there, not from the workspace root): give --plan the plan file's path, or `--plan -` to read the plan from standard input",
        cwd_path.display()
    );
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "io",
            "message": "read plan missing.json: No such file or directory (os error 2)",
            "exit_code": 1,
            "hint": hint,
        }})
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: read plan missing.json: No such file or directory (os error 2)\nhint: {hint}\n"
        )
    );
    // An absolute path, or a path that is not a readable file: the general hint.
    let out = cli(
        ws.root(),
        &["preview", "--plan", &cwd_path.to_string_lossy()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: read plan {}: Is a directory (os error 21)\nhint: give --plan the path of a readable plan file, or `--plan -` to read the plan from standard input\n",
            cwd_path.display()
        )
    );
    let log = cli(ws.root(), &["--json", "log"], None);
    assert_eq!(
        json_of(&log),
        serde_json::json!({"txs": [], "needs_attention": []})
    );
}

/// A usage error under `--json`: the error on one line as `message` (no `error: `, no
/// usage block), the usage line as `usage`, clap's tips and where the help is as
/// `hint`; clap's whole text stays on standard error.
#[test]
fn json_usage_errors_are_short() {
    let ws = workspace();
    let out = cli(ws.root(), &["--json", "commit"], None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "usage",
            "message": "the following required arguments were not provided: <TX>",
            "exit_code": 2,
            "usage": "ultra-edit commit <TX>",
            "hint": "`ultra-edit commit --help` describes its arguments",
        }})
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the following required arguments were not provided:\n  <TX>\n\nUsage: ultra-edit commit <TX>\n\nFor more information, try '--help'.\n"
    );
    let out = cli(ws.root(), &["--json", "preview", "--plann", "p.json"], None);
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "usage",
            "message": "unexpected argument '--plann' found",
            "exit_code": 2,
            "usage": "ultra-edit preview --plan <PLAN>",
            "hint": "a similar argument exists: '--plan'; `ultra-edit preview --help` describes its arguments",
        }})
    );
    let out = cli(ws.root(), &["journal", "--json", "dump", "--tx", "x"], None);
    let v = json_of(&out);
    assert_eq!(
        v["error"]["hint"],
        "`ultra-edit journal dump --help` describes its arguments"
    );
    assert!(v["error"].get("usage").is_none(), "{v}");
    assert!(
        !v["error"]["message"].as_str().unwrap().contains('\n'),
        "{v}"
    );
    // An argument that is not UTF-8 is a usage error like any other (no panic).
    use std::os::unix::ffi::OsStrExt;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(ws.root())
        .arg("--json")
        .arg(std::ffi::OsStr::from_bytes(b"l\xffg"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "usage", "{v}");
    assert_eq!(v["error"]["exit_code"], 2, "{v}");
}

/// `--json` errors carry the command line of their next step (`command`) beside the
/// library's step (`next_step`, whose names are the library's: `roll_back`), and the
/// text hint names the same command.
#[test]
fn json_errors_name_the_next_command_line() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 1);
    // Rolling back an open tx: commit it first.
    let out = cli(ws.root(), &["--json", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(1));
    let err = &json_of(&out)["error"];
    assert_eq!(err["command"], "ultra-edit commit 1");
    assert_eq!(
        err["next_step"],
        serde_json::json!({"step": "commit", "tx": 1})
    );
    assert!(cli(ws.root(), &["commit", "1"], None).status.success());
    ws.write("src/b.rs", b"changed\n");
    let out = cli(ws.root(), &["--json", "rollback", "1"], None);
    assert_eq!(out.status.code(), Some(3));
    let err = &json_of(&out)["error"];
    assert_eq!(err["command"], "ultra-edit rollback 1 --force");
    assert_eq!(
        err["next_step"],
        serde_json::json!({"step": "force_roll_back", "tx": 1})
    );
    // A step that is no one command (a new preview needs a plan) has none.
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// end\n"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 2);
    assert!(cli(ws.root(), &["abort", "2"], None).status.success());
    let out = cli(ws.root(), &["--json", "commit", "2"], None);
    let err = &json_of(&out)["error"];
    assert_eq!(
        err["next_step"],
        serde_json::json!({"step": "preview_again"})
    );
    assert!(err.get("command").is_none(), "{err}");
}

/// A rollback of a rolled-back tx is "already" only while the rollback that undid it
/// is live: once tx 3 (the redo) is undone on disk (the old content written back by
/// hand), nothing redoes tx 2, and the hint says so instead of naming `rollback 3`
/// (which would be refused as having nothing to roll back).
#[test]
fn cli_rolled_back_hint_names_a_live_redo_or_says_there_is_none() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 1, "{}", text(&out));
    for args in [["commit", "1"], ["rollback", "1"], ["rollback", "2"]] {
        let out = cli(ws.root(), &args, None);
        assert!(out.status.success(), "{}", text(&out));
    }
    // Tx 1 live (redone by tx 3), tx 2 rolled back by tx 3: a rollback of tx 2 landed
    // already, and says so with tx 3's receipt (exit 0, nothing written).
    let out = cli(ws.root(), &["--json", "rollback", "2"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["already"], true);
    assert_eq!(v["tx"], 3);
    assert_eq!(
        v["kind"],
        serde_json::json!({"rollback": {"of": 2, "forced": false}})
    );
    // The old content written back by hand: tx 3's change is undone on disk. (A second
    // rollback of tx 1 is refused: its change is tx 3's now, `history.rs`.)
    ws.write("src/b.rs", b"pub fn b() -> u32 {\n    2\n}\n");
    let out = cli(ws.root(), &["--json", "rollback", "2"], None);
    assert_eq!(out.status.code(), Some(1));
    let hint = "nothing redoes it now: tx 3's change is undone already, so the files tx 3 restored hold tx 2's change again (`ultra-edit log` lists the transactions)";
    assert_eq!(
        json_of(&out),
        serde_json::json!({"tx": 2, "error": {
            "kind": "wrong_state",
            "exit_code": 1,
            "message": "tx 2 is rolled_back; tx 3 rolled it back, so it cannot be rolled back",
            "hint": hint,
            "command": "ultra-edit log",
            "next_step": {"step": "nothing_to_redo", "tx": 2, "by": 3},
        }})
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: tx 2 is rolled_back; tx 3 rolled it back, so it cannot be rolled back\nhint: {hint}\n")
    );
    // Every verb that refuses tx 2 says the same (commit here), in text too.
    let out = cli(ws.root(), &["commit", "2"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: tx 2 is rolled_back; tx 3 rolled it back, so it cannot be committed\nhint: {hint}\n")
    );
    // Nothing was written by the refusals.
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
}

/// `abort` of an aborted tx is a no-op that says so (exit 0, `"already": true`, no
/// second `tx_aborted` event), as `rm -f` of a missing file; a committed tx stays
/// refused.
#[test]
fn cli_abort_of_an_aborted_tx_succeeds_and_says_it_was_already_aborted() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// end\n"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 1, "{}", text(&out));
    let record = |already: bool| {
        let out = cli(ws.root(), &["--json", "abort", "1"], None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        let mut v = json_of(&out);
        assert!(v["created_ms"].as_u64().is_some(), "{v}");
        v["created_ms"] = serde_json::json!(0);
        assert_eq!(
            v,
            serde_json::json!({"tx": 1, "created_ms": 0, "agent": null, "description": null,
                "state": "aborted", "revisions": 1, "committed": null, "rollback_of": null,
                "rolled_back_by": null, "attention": null, "pruned": false, "already": already})
        );
    };
    record(false);
    record(true);
    let out = cli(ws.root(), &["abort", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "tx 1 was already aborted; nothing changed\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // One abort recorded, whatever the number of calls.
    let dump = cli(
        ws.root(),
        &["--json", "journal", "dump", "--kind", "tx_aborted"],
        None,
    );
    assert!(dump.status.success(), "{}", text(&dump));
    assert_eq!(String::from_utf8_lossy(&dump.stdout).lines().count(), 1);
    // A committed tx is not aborted: still an error.
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// end\n"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 2, "{}", text(&out));
    assert!(cli(ws.root(), &["commit", "2"], None).status.success());
    let out = cli(ws.root(), &["--json", "abort", "2"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_of(&out),
        serde_json::json!({"tx": 2, "error": {
            "kind": "wrong_state",
            "exit_code": 1,
            "message": "tx 2 is committed; revision 0 was applied by batch 1, so it cannot be aborted",
            "hint": "`ultra-edit show 2` shows what landed; a further change is a new preview",
            "next_step": {"step": "show", "tx": 2},
            "command": "ultra-edit show 2",
        }})
    );
}

/// `preview plan.json` (the plan as a positional argument) is a usage error whose tip
/// names `--plan plan.json`, when the argument ends in `.json` or names a file that
/// exists where the command runs; any other stray argument gets clap's error alone.
#[test]
fn cli_a_plan_file_given_without_plan_gets_a_tip_naming_plan() {
    let ws = workspace();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("edits.txt"), "{}").unwrap();
    let run = |args: &[&str]| {
        let out = ue_command(ws.root(), args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        out
    };
    let out = run(&["preview", "plan.json"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: unexpected argument 'plan.json' found\n\n  tip: to read the plan from the file 'plan.json', use '--plan plan.json'\n\nUsage: ultra-edit preview [OPTIONS]\n\nFor more information, try '--help'.\n"
    );
    let out = run(&["--json", "revise", "1", "edits.txt"]);
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "usage",
            "exit_code": 2,
            "message": "unexpected argument 'edits.txt' found",
            "hint": "to read the plan from the file 'edits.txt', use '--plan edits.txt'; `ultra-edit revise --help` describes its arguments",
            "usage": "ultra-edit revise [OPTIONS] <TX>",
        }})
    );
    // Neither a .json name nor a file there: no tip.
    let out = run(&["--json", "preview", "notes.txt"]);
    assert_eq!(
        json_of(&out),
        serde_json::json!({"error": {
            "kind": "usage",
            "exit_code": 2,
            "message": "unexpected argument 'notes.txt' found",
            "hint": "`ultra-edit preview --help` describes its arguments",
            "usage": "ultra-edit preview [OPTIONS]",
        }})
    );
    // Nothing was recorded.
    let log = cli(ws.root(), &["--json", "log"], None);
    assert_eq!(
        json_of(&log),
        serde_json::json!({"txs": [], "needs_attention": []})
    );
}

/// `journal stats` and `journal verify` say in words what each size counts; the JSON
/// keeps its field names.
#[test]
fn cli_journal_stats_and_verify_label_each_size() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    assert_eq!(json_of(&out)["tx"], 1, "{}", text(&out));
    assert!(cli(ws.root(), &["commit", "1"], None).status.success());
    let file_bytes = std::fs::metadata(ws.path(".ultra-edit/journal.redb"))
        .unwrap()
        .len();
    let out = cli(ws.root(), &["--json", "journal", "stats"], None);
    assert!(out.status.success(), "{}", text(&out));
    // Both images of src/b.rs (28 bytes each) are stored once and referenced twice:
    // by the revision and by the batch.
    assert_eq!(
        json_of(&out),
        serde_json::json!({"schema_version": ultra_edit::SCHEMA_VERSION, "txs": 1,
            "txs_pruned": 0, "revisions": 1, "blobs": 2, "blob_bytes_content": 56,
            "blob_bytes_unique": 56, "blob_bytes_referenced": 112, "batches": 1, "receipts": 1, "events": 7,
            "file_bytes": file_bytes})
    );
    let out = cli(ws.root(), &["journal", "stats"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "schema v{}\ntxs 1 (0 pruned)\nrevisions 1\nblobs 2\n  content     56 bytes (the blobs' full lengths, each distinct content once: what journal verify reports as file content)\n  stored      56 bytes (what the blob tables hold: each distinct chunk, inline blob, manifest page and hash list once, without redb's page overhead)\n  referenced  112 bytes (the file contents the revisions and batches refer to, every reference counted: the size without content addressing)\nbatches 1\nreceipts 1\nevents 7\njournal file {file_bytes} bytes (the length of journal.redb, unused pages included)\n",
            ultra_edit::SCHEMA_VERSION
        )
    );
    let out = cli(ws.root(), &["journal", "verify"], None);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "journal ok: 1 tx(s), 1 revision(s), 2 blob(s) holding 56 bytes of file content (each distinct content once, at its full length) stored in 56 bytes (each distinct chunk, inline blob, manifest page and hash list once), 1 batch(es), 1 receipt(s), 7 event(s)\n"
    );
    let out = cli(ws.root(), &["--json", "journal", "verify"], None);
    assert_eq!(
        json_of(&out),
        serde_json::json!({"ok": true, "txs": 1, "revisions": 1, "blobs": 2, "blob_bytes_content": 56, "blob_bytes_unique": 56,
            "batches": 1, "receipts": 1, "events": 7, "problems": []})
    );
}

/// A revision that fails validation is one failure of the command: its error lines go
/// to standard error with the summary, the revision itself (head, diff) to standard
/// output; `show` prints the same errors as part of the revision, on standard output.
#[test]
fn cli_a_failed_validation_prints_its_error_lines_on_standard_error() {
    let ws = workspace();
    let plan =
        r#"{"edits":[{"op":"append","path":"src/b.rs","text":"<<<<<<< x\n=======\n>>>>>>> y\n"}]}"#;
    let out = cli(ws.root(), &["--no-pager", "preview"], Some(plan));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let diff = "diff --git a/src/b.rs b/src/b.rs\n--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,3 +1,6 @@ b\n pub fn b() -> u32 {\n     2\n }\n+<<<<<<< x\n+=======\n+>>>>>>> y\n";
    let issue = "error: conflict_markers src/b.rs: src/b.rs line 4: new merge conflict marker; resolve the conflict and remove the markers before committing\n";
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("tx 1 revision 0 (open) — NOT ready to commit\n  M src/b.rs  +3 -0\n{diff}")
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("{issue}ultra-edit: tx 1 revision 0 has validation errors; fix them with `ultra-edit revise 1`\n")
    );
    // `show` is no failure: the revision's errors are part of what it prints.
    let out = cli(ws.root(), &["--no-pager", "show", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("tx 1 revision 0 (open) — NOT ready to commit\n  M src/b.rs  +3 -0\n{diff}{issue}")
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    // `--json`: the object on standard output holds the errors; standard error has the
    // summary alone.
    let out = cli(ws.root(), &["--json", "revise", "1"], Some(plan));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["revision"], 1);
    assert_eq!(v["ready_to_commit"], false);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ultra-edit: tx 1 revision 1 has validation errors; fix them with `ultra-edit revise 1`\n"
    );
}

/// `log --limit 0` lists no transaction, as `git log -n 0` prints nothing; `--limit 1`
/// lists the newest.
#[test]
fn cli_log_limit_zero_lists_nothing() {
    let ws = workspace();
    for _ in 0..2 {
        let out = cli(
            ws.root(),
            &["preview"],
            Some(r#"{"edits":[{"op":"append","path":"src/a.rs","text":"// end\n"}]}"#),
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = cli(ws.root(), &["--no-pager", "log", "--limit", "0"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let out = cli(ws.root(), &["--json", "log", "--limit", "0"], None);
    assert_eq!(
        json_of(&out),
        serde_json::json!({"txs": [], "needs_attention": []})
    );
    let out = cli(ws.root(), &["--json", "log", "--limit", "1"], None);
    let txs: Vec<u64> = json_of(&out)["txs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tx"].as_u64().unwrap())
        .collect();
    assert_eq!(txs, [2]);
    let out = cli(ws.root(), &["--json", "log"], None);
    let txs: Vec<u64> = json_of(&out)["txs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tx"].as_u64().unwrap())
        .collect();
    assert_eq!(txs, [2, 1]);
}

/// `show` of an open tx checks the disk as the commit gate would: a file changed since
/// the snapshot makes the revision not ready (`stale_paths`, and the header names the
/// rebase), as the MCP server's `edit_show` says; a rebase makes it ready again.
#[test]
fn cli_show_says_a_stale_revision_is_not_ready_and_names_the_files() {
    use serde_json::json;
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    let tx = p.tx.to_string();
    let shown = |json: bool| {
        let args: Vec<&str> = if json {
            vec!["--json", "show", &tx]
        } else {
            vec!["show", &tx]
        };
        let out = cli(ws.root(), &args, None);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        out
    };
    let v = json_of(&shown(true));
    assert_eq!(
        (v["ready_to_commit"].clone(), v["stale_paths"].clone()),
        (json!(true), json!([]))
    );
    ws.write("src/b.rs", b"pub fn b() -> u32 {\n    2\n}\n// outside\n");
    let v = json_of(&shown(true));
    assert_eq!(
        (v["ready_to_commit"].clone(), v["stale_paths"].clone()),
        (json!(false), json!(["src/b.rs"]))
    );
    let text = String::from_utf8(shown(false).stdout).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        format!("tx {tx} revision 0 (open) — NOT ready to commit: src/b.rs changed on disk since the snapshot (`ultra-edit rebase {tx}` brings the revision onto it)")
    );
    assert_eq!(
        cli(ws.root(), &["rebase", &tx], None).status.code(),
        Some(0)
    );
    let v = json_of(&shown(true));
    assert_eq!(
        (v["ready_to_commit"].clone(), v["stale_paths"].clone()),
        (json!(true), json!([]))
    );
}

/// An empty plan (standard input or a file with nothing but whitespace) says so, not
/// serde_json's "EOF while parsing a value at line 1 column 0" (found by the new-user
/// trial); nothing is recorded.
#[test]
fn cli_an_empty_plan_says_it_is_empty() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview", "--plan", "-"],
        Some("  \n"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "invalid_plan");
    assert_eq!(
        v["error"]["message"],
        "invalid edit plan: the plan is empty: standard input held no JSON"
    );
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// A plan's `description` and `agent` are an agent's free text: `log` prints them as
/// one line with their control, bidirectional and invisible characters escaped, so a
/// newline cannot forge a `tx 99 … committed` line and an escape sequence cannot reach
/// the terminal (found by the breaker); `--json` keeps the text exact.
#[test]
fn cli_log_escapes_what_a_plans_free_text_would_hide_or_forge() {
    let ws = workspace();
    let plan = serde_json::json!({
        "description": "fix\ntx 99    2026-12-02T10:00:00.000Z  committed  FORGED\u{1b}[8m",
        "agent": "me\u{202e}",
        "edits": [{"op": "append", "path": "README.md", "text": "\nmore\n"}]
    });
    let out = cli(
        ws.root(),
        &["preview", "--plan", "-"],
        Some(&plan.to_string()),
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = cli(ws.root(), &["--no-pager", "log"], None);
    let log = String::from_utf8(out.stdout).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(
        log.contains(
            r"me\u{202e} 1 file(s) +2 -1  fix\ntx 99    2026-12-02T10:00:00.000Z  committed  FORGED\u{1b}[8m"
        ),
        "{log}"
    );
    let out = cli(ws.root(), &["--json", "log"], None);
    let v = json_of(&out);
    assert_eq!(v["txs"][0]["description"], plan["description"]);
    assert_eq!(v["txs"][0]["agent"], "me\u{202e}");
}
