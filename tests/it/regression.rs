//! Regressions found by adversarial testing, each named after its case.

use ultra_edit::{
    BatchState, BlobHash, Error, Journal, JournalError, PathError, RecoverOptions, RollbackOptions,
    TxState,
};

use crate::support::faultfs::{FaultFs, Op};
use crate::support::*;

#[test]
fn regression_a_file_named_like_a_temp_is_neither_deleted_nor_editable() {
    let ws = workspace();
    ws.write("src/.ue-1-0.tmp", b"PRECIOUS\n");
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h2"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("src/.ue-1-0.tmp"), b"PRECIOUS\n");
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[{"op":"create_file","path":"x/.ue-2-1.tmp","content":"n"}]}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(err, Error::Path(PathError::TempName { .. })),
        "{err:?}"
    );
}

#[test]
fn regression_a_write_during_staging_stops_the_batch_and_is_kept() {
    // Another process (no lock) writes src/lib.rs after the gate, while temps are
    // staged. The batch must not overwrite it: files installed so far are reverted,
    // the commit is StaleSnapshot, and the write survives.
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h2"},
                     {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    9\n"}]}"#,
    );
    let before = ws.tree();
    let lib = ws.path("src/lib.rs");
    let j = faulty(
        &ws,
        FaultFs::before(Op::Rename, "", move || {
            std::fs::write(lib, "their write\n").unwrap()
        }),
    );
    let err = j.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(&err, Error::StaleSnapshot { paths, .. } if paths == &vec!["src/lib.rs".to_string()]),
        "{err:?}"
    );
    assert_eq!(ws.read("src/lib.rs"), b"their write\n");
    let mut expected = before;
    expected.insert(
        "src/lib.rs".into(),
        format!("{} 644", blake3::hash(b"their write\n").to_hex()),
    );
    assert_eq!(
        ws.tree(),
        expected,
        "src/a.rs must be back to its pre-image"
    );
    assert_eq!(ws.journal.show(p.tx, None).unwrap().state, TxState::Open);
}

#[test]
fn regression_a_damaged_blob_is_never_restored() {
    let original = b"ORIGINAL-PRECIOUS-CONTENT-0123456789\n".repeat(4);
    let (dir, tx) = with_damaged_blob(&original);
    let j = Journal::open(dir.path()).unwrap();
    let err = j.rollback(tx, RollbackOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Journal(JournalError::Corrupt {
                table: "blob_manifests",
                ..
            })
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read(dir.path().join("f.txt")).unwrap(), b"new\n");
    assert!(!j.verify().unwrap().ok);
}

#[test]
fn regression_needs_attention_settles_once_the_file_is_back_or_overwritten() {
    for overwrite in [false, true] {
        let ws = workspace();
        let p = ws.preview(
            r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h2"},
                         {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    9\n"}]}"#,
        );
        // Crash after the commit point and the first rename (2 temps + 1 rename).
        let j = faulty(&ws, FaultFs::crash_after(3));
        assert!(matches!(
            j.commit(p.tx, Default::default()),
            Err(Error::Journal(JournalError::Panicked { .. }))
        ));
        let pre_lib = ws.read("src/lib.rs");
        ws.write("src/lib.rs", b"foreign\n");
        let r = ws.journal.recover().unwrap();
        assert_eq!(r.needs_attention.len(), 1);
        // Retried on every recovery, without growing the journal while nothing changes.
        let events = |j: &Journal| {
            let mut n = 0;
            j.dump(Default::default(), |_| {
                n += 1;
                Ok(true)
            })
            .unwrap();
            n
        };
        let n = events(&ws.journal);
        assert_eq!(ws.journal.recover().unwrap().needs_attention.len(), 1);
        assert_eq!(events(&ws.journal), n);
        let r = if overwrite {
            ws.journal
                .recover_with(RecoverOptions::new().with_overwrite(true))
                .unwrap()
        } else {
            ws.write("src/lib.rs", &pre_lib);
            ws.journal.recover().unwrap()
        };
        assert_eq!(
            (r.completed.len(), r.needs_attention.len()),
            (1, 0),
            "overwrite={overwrite}"
        );
        assert_eq!(
            ws.read("src/lib.rs"),
            b"pub mod a;\npub mod b;\n\nfn helper() -> u32 {\n    9\n}\n"
        );
        assert_eq!(
            ws.journal.show(p.tx, None).unwrap().state,
            TxState::Committed
        );
        let log = ws.journal.log(None).unwrap();
        assert_eq!(log[0].batch_state, None);
        if overwrite {
            assert_eq!(r.actions[0].overwritten[0].path, "src/lib.rs");
            assert_eq!(
                ws.journal
                    .blob(&BlobHash::of(b"foreign\n"))
                    .unwrap()
                    .as_deref(),
                Some(&b"foreign\n"[..])
            );
        }
        assert!(ws.journal.verify().unwrap().ok);
    }
}

#[test]
fn regression_a_crash_before_the_commit_point_never_touches_a_file_someone_edited() {
    // A batch of an earlier version (whose intent was `Prepared`, its commit point a
    // later record) died after staging, before its commit point: it renamed nothing. A
    // human then edits one of its files. Recovery, even with `overwrite`, reverts the
    // batch and leaves the edit alone: it is not the batch's to undo, and nothing
    // needs attention.
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h2"},
                     {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    9\n"}]}"#,
    );
    assert_eq!(crate::recovery::legacy_batch(&ws, p.tx, &[], false), 2);
    ws.write("src/lib.rs", b"the human's edit\n");
    let r = ws
        .journal
        .recover_with(RecoverOptions::new().with_overwrite(true))
        .unwrap();
    assert_eq!((r.reverted.len(), r.needs_attention.len()), (1, 0), "{r:?}");
    assert!(r.actions[0].rewritten.is_empty() && r.actions[0].overwritten.is_empty());
    assert_eq!(r.temps_removed, 2);
    assert_eq!(ws.read("src/lib.rs"), b"the human's edit\n");
    assert!(ws.tree().keys().all(|k| !k.contains(".ue-")));
}

/// An abort does not wait for the commit lock (issue 32): it is one journal write that
/// checks the tx's state, as a commit's intent does, so the two never both happen —
/// a commit that comes second finds the tx aborted and writes nothing.
#[test]
fn regression_abort_does_not_wait_for_the_commit_lock() {
    use fs2::FileExt;
    let mut ws = workspace();
    let p = ws.preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#);
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path(".ultra-edit/commit.lock"))
        .unwrap();
    lock.lock_exclusive().unwrap();
    ws.journal
        .set_lock_timeout(std::time::Duration::from_millis(100));
    let aborted = ws.journal.abort(p.tx);
    FileExt::unlock(&lock).unwrap();
    assert_eq!(aborted.unwrap().record.state, TxState::Aborted);
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert_eq!(err.kind(), "wrong_state");
    assert!(ws.path("run.sh").exists());
}

#[test]
fn regression_a_file_and_a_path_under_it_in_one_plan_are_refused() {
    let ws = workspace();
    let err = ws
        .journal
        .preview(&plan(r#"{"edits":[{"op":"create_file","path":"d","content":""},{"op":"create_file","path":"d/x","content":""}]}"#))
        .unwrap_err();
    assert!(
        matches!(&err, Error::Path(PathError::WrongKind { path, .. }) if path == "d/x"),
        "{err:?}"
    );
    let err = ws
        .journal
        .preview(&plan(r#"{"edits":[{"op":"delete_file","path":"run.sh"},{"op":"create_file","path":"run.sh/x","content":""}]}"#))
        .unwrap_err();
    assert!(
        matches!(err, Error::Path(PathError::WrongKind { .. })),
        "{err:?}"
    );
}

#[test]
fn regression_a_failed_rollback_leaves_no_open_rollback_tx() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h2"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let j = faulty(&ws, FaultFs::fail(Op::Rename, "src/a.rs", 28));
    let err = j.rollback(p.tx, RollbackOptions::default()).unwrap_err();
    assert!(matches!(err, Error::CommitFailed { .. }), "{err:?}");
    let log = ws.journal.log(None).unwrap();
    assert_eq!(
        (log[0].rollback_of, log[0].state),
        (Some(p.tx), TxState::Aborted)
    );
    assert_eq!(log[1].state, TxState::Committed);
    // And the rollback can simply be run again.
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u32 {\n    crate::helper()\n}\n"
    );
    let _ = BatchState::Aborted;
}

#[test]
fn regression_a_directory_swapped_for_a_symlink_right_before_the_rename_cannot_escape() {
    // The swap happens after every check, just before z/victim.txt's rename: only the
    // confinement of the filesystem layer (walking from the root handle without
    // following links) stands between the write and the outside file.
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), b"same\n").unwrap();
    ws.write("a/f.txt", b"same\n");
    ws.write("z/victim.txt", b"same\n");
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"a/f.txt","old":"same","new":"PWNED"},
                     {"op":"replace_text","path":"z/victim.txt","old":"same","new":"PWNED"}]}"#,
    );
    let (z, moved, target) = (
        ws.path("z"),
        ws.path("z.orig"),
        outside.path().to_path_buf(),
    );
    let swap = move || {
        std::fs::rename(&z, &moved).unwrap();
        std::os::unix::fs::symlink(&target, &z).unwrap();
    };
    let j = faulty(&ws, FaultFs::before(Op::Rename, "z/victim.txt", swap));
    let err = j.commit(p.tx, Default::default()).unwrap_err();
    assert!(matches!(err, Error::CommitFailed { .. }), "{err:?}");
    // The temp staged in z/ went with the directory: named, since nothing can reach it.
    let Error::CommitFailed { temps_left, .. } = &err else {
        unreachable!()
    };
    let left: Vec<String> = std::fs::read_dir(ws.path("z.orig"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".ue-"))
        .map(|n| format!("z/{n}"))
        .collect();
    assert_eq!(temps_left, &left);
    assert_eq!(left.len(), 1);
    assert!(err.to_string().contains(&left[0]), "{err}");
    assert_eq!(
        std::fs::read(outside.path().join("victim.txt")).unwrap(),
        b"same\n"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        1,
        "nothing written outside"
    );
    assert_eq!(
        ws.read("a/f.txt"),
        b"same\n",
        "the installed file is reverted"
    );
    assert_eq!(ws.read("z.orig/victim.txt"), b"same\n");
}

/// `ultra-edit show 999 2>&1 | true`: standard error is a pipe nobody reads. Writing
/// the error there panicked (std's `eprintln!`), the panic's report panicked again,
/// and the process exited 101, whatever the error was. Found by the breaker.
#[test]
fn regression_an_error_into_a_closed_stderr_keeps_its_exit_code() {
    let ws = workspace();
    let cases: [(&[&str], i32); 3] = [
        (&["show", "999"], 1),
        (&["rollback", "1", "--lock-timeout", "-5"], 2),
        (&["--json", "show", "999"], 1),
    ];
    for (args, code) in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = ue_command(ws.root(), args).stderr(writer).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        if args[0] == "--json" {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["error"]["kind"], "unknown_tx", "{v}");
        }
    }
}

/// `ultra-edit help plan | head -1`: the reader stops early. `print!` panicked
/// ("internal failure (failed printing to stdout: Broken pipe)", exit 1); the page is
/// now written as every other output is, and the command exits 0. Found by the breaker.
#[test]
fn regression_help_plan_into_a_closed_pipe_exits_0_without_an_internal_failure() {
    let ws = workspace();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = ue_command(ws.root(), &["help", "plan"])
        .stdout(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `ultra-edit log --agent nobody` in a journal with transactions said "no
/// transactions yet; `ultra-edit preview --plan FILE` starts one". It names the
/// filter now. Found by the breaker.
#[test]
fn regression_log_of_an_agent_without_transactions_names_the_agent() {
    let ws = workspace();
    ws.preview(r#"{"agent":"bob","edits":[{"op":"append","path":"src/b.rs","text":"//\n"}]}"#);
    let out = cli(ws.root(), &["log", "--agent", "nobody"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "no transactions of agent \"nobody\"; `ultra-edit log` lists every agent's\n"
    );
    let out = cli(ws.root(), &["log", "--agent", "bob"], None);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.starts_with("tx 1 "), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

/// MCP refusals' examples must be calls that work: `edit_revert`'s named handles of a
/// made-up shape (`"ue1-…-1"`) instead of this journal's, and a wrong `limit` of
/// `journal_log` suggested `agent_id`, its filter's deprecated name. Found by the
/// breaker.
#[test]
fn regression_mcp_examples_name_this_journals_handles_and_journal_logs_filter() {
    use serde_json::json;
    let ws = workspace();
    let t = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let id = t
        .call(
            "edit_preview",
            json!({"agent_id": "me", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
        )
        .unwrap()["preview_id"]
        .as_str()
        .unwrap()
        .to_string();
    let journal = id.strip_suffix("-1").unwrap();
    let e = t
        .call("edit_revert", json!({"agent_id": "me", "txs": []}))
        .unwrap_err();
    assert_eq!(e.kind, "invalid_arguments");
    assert_eq!(
        e.to_json()["example"],
        json!({"tool": "edit_revert", "arguments": {"agent_id": "me", "txs": [
            format!("{journal}-1"), format!("{journal}-2")
        ]}})
    );
    let e = t.call("journal_log", json!({"limit": -1})).unwrap_err();
    assert_eq!(
        e.message,
        "journal_log: limit must be a non-negative integer, not -1"
    );
    assert_eq!(
        e.to_json()["example"],
        json!({"tool": "journal_log", "arguments": {"by_agent": "me", "limit": 20}})
    );
}

/// Found by the breaker: a journal refuses a state directory inside its own root, but
/// nothing stopped another root's state directory from lying inside this root. A
/// registry whose host directory is inside root `a` keeps root `b`'s journal at
/// `a/host/roots/<hex>/` (so does `ultra-edit --root b --state-dir a/st init`), and a
/// plan of `a` could then overwrite `b`'s `journal.redb`: `b`'s history and rollback
/// material were gone (its next command failed with "Not a redb database"). A directory
/// holding both `journal.redb` and `commit.lock` is now refused at any depth, and `b`'s
/// files keep their bytes.
#[test]
fn regression_a_plan_cannot_overwrite_another_roots_journal_inside_its_root() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let registry = ultra_edit::Registry::open(a.join("host")).unwrap();
    let ja = registry.open_or_create(&a).unwrap();
    let jb = registry.open_or_create(&b).unwrap();
    let state_of_b = jb
        .state_dir()
        .strip_prefix(&a)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let before = std::fs::read(jb.state_dir().join("journal.redb")).unwrap();
    for name in ["journal.redb", "commit.lock", "new.txt"] {
        let rel = format!("{state_of_b}/{name}");
        let err = ja
            .preview(&plan(&format!(
                r#"{{"edits":[{{"op":"write_file","path":"{rel}","content":"x"}}]}}"#
            )))
            .unwrap_err();
        assert_eq!(err.kind(), "path_refused", "{err}");
        match err {
            Error::Path(PathError::StateDirectory { path, dir }) => {
                assert_eq!(
                    (path.as_str(), dir.as_str()),
                    (rel.as_str(), state_of_b.as_str())
                );
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(ja.log(None).unwrap().is_empty());
    assert_eq!(
        std::fs::read(jb.state_dir().join("journal.redb")).unwrap(),
        before
    );
    assert!(!jb.state_dir().join("new.txt").exists());
    // A directory with only one of the two names is an ordinary directory.
    std::fs::create_dir_all(a.join("data")).unwrap();
    std::fs::write(a.join("data/journal.redb"), b"mine").unwrap();
    ja.preview(&plan(
        r#"{"edits":[{"op":"write_file","path":"data/journal.redb","content":"x"}]}"#,
    ))
    .unwrap();
}

/// The same through the CLI, with `--state-dir` placing `b`'s journal inside `a`.
#[test]
fn regression_the_cli_refuses_a_plan_into_another_roots_state_dir() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (a, b) = (base.join("a"), base.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let ue = env!("CARGO_BIN_EXE_ultra-edit");
    let run = |args: &[&str]| std::process::Command::new(ue).args(args).output().unwrap();
    let (a_s, b_s, st) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        a.join("st").to_str().unwrap().to_string(),
    );
    assert!(run(&["--root", a_s, "init"]).status.success());
    assert!(run(&["--root", b_s, "--state-dir", &st, "init"])
        .status
        .success());
    let plan_path = base.join("plan.json");
    std::fs::write(
        &plan_path,
        r#"{"edits":[{"op":"write_file","path":"st/journal.redb","content":"x"}]}"#,
    )
    .unwrap();
    let out = run(&[
        "--root",
        a_s,
        "--json",
        "preview",
        "--plan",
        plan_path.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "path_refused", "{v}");
    assert_eq!(
        v["error"]["message"],
        "path \"st/journal.redb\" is inside \"st\", the state directory of an ultra-edit journal, which ultra-edit never edits"
    );
    assert!(run(&["--root", b_s, "--state-dir", &st, "log"])
        .status
        .success());
}

/// MCP `timeout_secs` of 0 was taken as 1 s, silently, beside a schema saying
/// `"minimum": 1` and a CLI that refuses `--timeout 0`. Out of 1..=86400 it is now
/// refused before anything runs, for `edit_run` and for a `check`. Found by the breaker.
#[test]
fn regression_mcp_a_timeout_out_of_range_is_refused_and_runs_nothing() {
    use serde_json::json;
    let ws = workspace();
    let t = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()))
        .with_commands(true);
    for secs in [0u64, 86_401] {
        let e = t
            .call(
                "edit_run",
                json!({"agent_id": "a", "command": "echo x > x.txt", "timeout_secs": secs}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "invalid_arguments");
        assert_eq!(
            e.message,
            format!("edit_run: timeout_secs must be from 1 to 86400 seconds, not {secs}")
        );
        let e = t
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "n.txt", "new_content": "n\n",
                       "check": "echo y > y.txt", "timeout_secs": secs}),
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            format!("edit_preview: timeout_secs must be from 1 to 86400 seconds, not {secs}")
        );
    }
    assert!(ws.journal.log(None).unwrap().is_empty(), "nothing recorded");
    assert!(!ws.path("x.txt").exists() && !ws.path("n.txt").exists());
}

/// Found by the breaker: three CLI errors had no hint or a wrong one. `--root` naming a
/// missing path or a file, and a command run that changed nothing (with no ignored
/// path to blame) now say what to do; each still changes nothing.
#[test]
fn regression_root_errors_and_a_command_that_changed_nothing_have_hints() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ue = env!("CARGO_BIN_EXE_ultra-edit");
    let run = |args: &[&str]| std::process::Command::new(ue).args(args).output().unwrap();
    let hint = |out: &std::process::Output| -> (Option<i32>, serde_json::Value) {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v["error"]["hint"].clone())
    };
    let missing = base.join("nowhere");
    let out = run(&["--root", missing.to_str().unwrap(), "--json", "log"]);
    assert_eq!(
        hint(&out),
        (
            Some(1),
            serde_json::json!(format!(
                "there is no directory {}: give --root the workspace's root directory",
                missing.display()
            ))
        )
    );
    let file = base.join("file.txt");
    std::fs::write(&file, b"x").unwrap();
    let out = run(&["--root", file.to_str().unwrap(), "--json", "log"]);
    assert_eq!(
        hint(&out),
        (
            Some(1),
            serde_json::json!(format!(
                "{} is a file, not a directory: give --root the workspace's root directory",
                file.display()
            ))
        )
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    assert!(!missing.exists());
}

/// Reverting or rolling back an aborted tx is refused, and the hint no longer says
/// "preview again" (which would redo what the caller meant to undo): an aborted tx
/// never changed a file, and `log` shows what there is to undo. Nothing changes.
#[test]
fn regression_undoing_an_aborted_tx_says_it_never_changed_a_file() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    let out = cli(ws.root(), &["abort", &p.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let before = ws.tree();
    for (verb, words) in [("revert", "be reverted"), ("rollback", "be rolled back")] {
        let out = cli(ws.root(), &[verb, &p.tx.to_string()], None);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: tx {} is aborted; it never changed a file, so it cannot {words}\n\
                 hint: `ultra-edit log` lists the transactions\n",
                p.tx
            ),
            "{verb}"
        );
    }
    assert_eq!(ws.tree(), before);
}

/// The same through MCP: `edit_rollback` and `edit_revert` of an aborted preview are
/// `preview_aborted` with a hint to read the log, never "call edit_preview to start
/// again".
#[test]
fn regression_mcp_undoing_an_aborted_preview_points_to_the_log() {
    let ws = workspace();
    let tools =
        ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let p = tools
        .call(
            "edit_preview",
            serde_json::json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
        )
        .unwrap();
    let id = p["preview_id"].clone();
    tools
        .call(
            "edit_abort",
            serde_json::json!({"agent_id": "dev", "preview_id": id}),
        )
        .unwrap();
    let before = ws.tree();
    for (tool, args) in [
        (
            "edit_rollback",
            serde_json::json!({"agent_id": "dev", "preview_id": id}),
        ),
        (
            "edit_revert",
            serde_json::json!({"agent_id": "dev", "tx": id}),
        ),
    ] {
        let v = tools.call(tool, args).unwrap_err().to_json();
        assert_eq!(v["error"], "preview_aborted", "{tool}: {v}");
        assert_eq!(
            v["message"],
            "preview 1 was aborted and never changed a file, so there is nothing to undo",
            "{tool}"
        );
        assert_eq!(
            v["hint"], "call journal_log to see which transactions changed the files",
            "{tool}"
        );
        assert_eq!(v["example"]["tool"], "journal_log", "{tool}");
    }
    assert_eq!(ws.tree(), before);
}

/// Found by the breaker (hbreak2): `edit_rollback` given both `preview_id` and its old
/// name `tx`, naming two different transactions, rolled back the `preview_id` one and
/// ignored `tx` without a word. It is now refused (`invalid_arguments`, nothing
/// written); both keys naming the same transaction still roll it back.
#[test]
fn regression_mcp_rollback_refuses_preview_id_and_tx_naming_different_txs() {
    use serde_json::json;
    let ws = workspace();
    let t = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let mut ids = Vec::new();
    for (path, content) in [("src/b.rs", "pub fn b() {}\n"), ("src/lib.rs", "// lib\n")] {
        let id = t
            .call(
                "edit_preview",
                json!({"agent_id": "me", "file_path": path, "new_content": content}),
            )
            .unwrap()["preview_id"]
            .as_str()
            .unwrap()
            .to_string();
        t.call(
            "edit_commit",
            json!({"agent_id": "me", "preview_id": id, "confirm": true}),
        )
        .unwrap();
        ids.push(id);
    }
    let e = t
        .call(
            "edit_rollback",
            json!({"agent_id": "me", "preview_id": ids[1], "tx": ids[0]}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "invalid_arguments");
    assert_eq!(
        e.message,
        "edit_rollback: preview_id names tx 2 and tx (its old name) names tx 1: give preview_id alone"
    );
    assert_eq!(
        e.to_json()["example"],
        json!({"tool": "edit_rollback", "arguments": {"preview_id": ids[1], "agent_id": "me"}})
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\n");
    assert_eq!(ws.read("src/lib.rs"), b"// lib\n");
    let states: Vec<_> = ws
        .journal
        .log(None)
        .unwrap()
        .iter()
        .map(|e| (e.tx, e.state))
        .collect();
    assert_eq!(states, [(2, TxState::Committed), (1, TxState::Committed)]);
    let rb = t
        .call(
            "edit_rollback",
            json!({"agent_id": "me", "preview_id": ids[1], "tx": 2}),
        )
        .unwrap();
    assert_eq!(rb["rolled_back"], 2);
    assert_eq!(rb["tx"], 3);
}

/// Found by the breaker (hbreak2): `journal_dump` took `limit: 0` as 1 (one entry,
/// `truncated`), beside a schema that says `"minimum": 1`, and a wrong-typed argument's
/// example named `agent_id`, which journal_dump does not take. Both refusals now name
/// journal_dump's own arguments.
#[test]
fn regression_mcp_journal_dump_refuses_limit_0_and_its_examples_name_its_arguments() {
    use serde_json::json;
    let ws = workspace();
    let t = ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    t.call(
        "edit_preview",
        json!({"agent_id": "me", "file_path": "src/b.rs", "new_content": "pub fn b() {}\n"}),
    )
    .unwrap();
    let e = t
        .call("journal_dump", json!({"since_seq": 1, "limit": 0}))
        .unwrap_err();
    assert_eq!(e.kind, "invalid_arguments");
    assert_eq!(
        e.message,
        "journal_dump: limit must be at least 1 (entries per answer), not 0"
    );
    assert_eq!(
        e.to_json()["example"],
        json!({"tool": "journal_dump", "arguments": {"since_seq": 1, "limit": 200}})
    );
    let e = t
        .call("journal_dump", json!({"since_seq": -1}))
        .unwrap_err();
    assert_eq!(
        e.message,
        "journal_dump: since_seq must be a non-negative integer, not -1"
    );
    assert_eq!(
        e.to_json()["example"],
        json!({"tool": "journal_dump", "arguments": {"since_seq": 0, "limit": 200}})
    );
    let one = t.call("journal_dump", json!({"limit": 1})).unwrap();
    assert_eq!(
        (one["count"].as_u64(), one["truncated"].as_bool()),
        (Some(1), Some(true))
    );
}

/// Found by the breaker (hbreak2): in a modify/delete conflict the candidate keeps the
/// side that still has the file, but took the mode of a new file (0644): a rebase of
/// an edit of a 0755 script that someone deleted on disk, and a revert of a tx that
/// created a 0755 file someone changed since, both gave a 0644 candidate, so keeping
/// the conflict's candidate (as `resolve` says saving it unchanged does) dropped the
/// exec bit. The candidate now keeps that side's mode.
#[test]
fn regression_a_modify_delete_conflict_keeps_the_kept_sides_mode() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    // rebase: the candidate edited run.sh (0755), the disk deleted it.
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"run.sh","text":"echo more\n"}]}"#);
    std::fs::remove_file(ws.path("run.sh")).unwrap();
    let r = ws.journal.rebase(p.tx).unwrap();
    let f = r.files.iter().find(|f| f.path == "run.sh").unwrap();
    assert_eq!(f.candidate.mode(), Some(0o755));
    assert_eq!(
        ws.journal
            .blob(&f.candidate.hash().unwrap())
            .unwrap()
            .unwrap(),
        b"#!/bin/sh\necho hi\necho more\n"
    );
    assert_eq!(r.conflict_list.len(), 1);
    assert!(!ws.path("run.sh").exists());
    ws.journal.abort(r.tx).unwrap();
    // revert: tx created tool.sh 0755; someone appended to it since.
    let p = ws.preview(
        r##"{"edits":[{"op":"create_file","path":"tool.sh","content":"#!/bin/sh\n","mode":"0755"}]}"##,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.write("tool.sh", b"#!/bin/sh\necho later\n");
    std::fs::set_permissions(ws.path("tool.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = ws
        .journal
        .revert(&[p.tx.into()], ultra_edit::RevertOptions::new())
        .unwrap();
    // The candidate is the disk's file, bytes and mode: no change to list, only the
    // conflict (it listed `M tool.sh` with `new mode 100644` before).
    let listed: Vec<_> = r
        .files
        .iter()
        .map(|f| (f.path.to_string(), f.candidate.mode()))
        .collect();
    assert_eq!(listed, Vec::<(String, Option<u32>)>::new());
    assert!(!r.ready_to_commit);
    assert_eq!(r.conflict_list.len(), 1);
    assert_eq!(
        r.conflict_list[0].reason,
        format!(
            "reverting tx {}: deleted on the before tx side, changed on the disk side",
            p.tx
        )
    );
    assert_eq!(ws.mode("tool.sh"), 0o755);
}

/// Found by the breaker (hbreak2): an issue of the whole revision has an empty path,
/// and the commit's refusal printed it with a gap: "failed validation: no_changes : …"
/// (and "check_failed : check `exit 7` …" after a failed `--check`), where `show` and
/// `journal dump` print "no_changes: …".
#[test]
fn regression_a_commit_refusal_prints_a_revision_wide_issue_without_a_gap() {
    let ws = workspace();
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"src/b.rs","text":"// more\n"}]}"#);
    ws.journal
        .revise(
            p.tx,
            Default::default(),
            &plan(r#"{"edits":[{"op":"write_file","path":"src/b.rs","content":"pub fn b() -> u32 {\n    2\n}\n"}]}"#),
        )
        .unwrap();
    match ws.journal.commit(p.tx, Default::default()) {
        Err(Error::ValidationFailed { summary, .. }) => {
            assert_eq!(summary, ["no_changes: the revision changes nothing, so there is nothing to commit; revise the plan or abort the transaction"])
        }
        other => panic!("{other:?}"),
    }
}

/// Found by the breaker (hbreak2): `--check ''` (or `'  '`, as an unset variable in
/// `--check "$CHECK"` gives) ran `sh -c ''`, which runs nothing and exits 0, and the
/// revision was recorded with `check_passed`; `config check ''` was refused already.
/// Such a check is now `empty_command` (exit 1) with a hint, and nothing is recorded.
#[test]
fn regression_an_empty_check_is_refused_not_passed() {
    let ws = workspace();
    let before = ws.tree();
    for check in ["", "  "] {
        let out = cli(
            ws.root(),
            &["--json", "preview", "--check", check, "--plan", "-"],
            Some(r#"{"edits":[{"op":"append","path":"src/b.rs","text":"// more\n"}]}"#),
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert_eq!(
            json_of(&out),
            serde_json::json!({"error": {
                "kind": "empty_command",
                "exit_code": 1,
                "message": "the check is empty; give a command line (`sh -c` runs it)",
                "hint": "give the command as one quoted argument, e.g. --check 'cargo check --offline' or `ultra-edit config check 'cargo check --offline'`; --no-check runs no check",
            }})
        );
    }
    assert!(ws.journal.log(None).unwrap().is_empty(), "nothing recorded");
    assert_eq!(ws.tree(), before);
    let e = ws
        .journal
        .preview_checked(
            &plan(r#"{"edits":[{"op":"append","path":"src/b.rs","text":"// more\n"}]}"#),
            Default::default(),
            &ultra_edit::sandbox::CheckOptions::new(" "),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "empty_command");
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// Found by the breaker (hbreak2): an argument a tool does not take was ignored, so a
/// misspelt filter (`journal_log {"by_agnet": "x"}`) answered the whole log. Every
/// tool now refuses an argument its input schema does not list, naming the nearest
/// one it takes, and does nothing.
#[test]
fn regression_mcp_an_unknown_argument_is_refused_with_the_nearest_name() {
    let ws = workspace();
    let tools =
        ultra_edit::mcp::EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let v = tools
        .call("journal_log", serde_json::json!({"by_agnet": "x"}))
        .unwrap_err()
        .to_json();
    assert_eq!(v["error"], "invalid_arguments", "{v}");
    assert_eq!(
        v["message"],
        "journal_log: unknown argument \"by_agnet\" (did you mean \"by_agent\"?); it takes agent_id, by_agent, limit"
    );
    let before = ws.tree();
    let v = tools
        .call(
            "edit_preview",
            serde_json::json!({"agent_id": "dev", "file_path": "src/b.rs", "new_content": "x\n", "confrim": true}),
        )
        .unwrap_err()
        .to_json();
    assert_eq!(v["error"], "invalid_arguments", "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .starts_with("edit_preview: unknown argument \"confrim\"; it takes agent_id, allow, "),
        "{v}"
    );
    assert_eq!(ws.tree(), before);
    assert!(ws.journal.log(None).unwrap().is_empty(), "nothing recorded");
}

/// Found by the breaker (hbreak2): `run -- ''` and `preview --run ''` made the layers,
/// ran `sh -c ''` and answered `nothing_to_change`; an empty check was already
/// `empty_command`. A command of whitespace only is now `empty_command` too, before
/// anything is made, and nothing is recorded.
#[test]
fn regression_an_empty_command_is_refused_as_empty() {
    let ws = workspace();
    let before = ws.tree();
    for args in [
        &["--json", "run", "--", ""][..],
        &["--json", "preview", "--run", "  "],
    ] {
        let out = cli(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert_eq!(
            json_of(&out),
            serde_json::json!({"error": {
                "kind": "empty_command",
                "exit_code": 1,
                "message": "the command is empty; give a command line (`sh -c` runs it)",
                "hint": "give the command line as one quoted argument, e.g. `ultra-edit run -- 'cargo fmt'` or `ultra-edit preview --run 'cargo fmt'`",
            }}),
            "{args:?}"
        );
    }
    assert!(ws.journal.log(None).unwrap().is_empty(), "nothing recorded");
    assert_eq!(ws.tree(), before);
}

/// A rollback of a large file whose pre-image's changed chunk is damaged is refused
/// cleanly (exit 1, the file untouched), and its message names the pre-image alone —
/// it said "the post-image and pre-image", the label of the windowed diff's read,
/// which reads both (found by hbreak3): `rollback_revision` now streams each image
/// through its checks to name the damaged one.
#[test]
fn regression_a_damaged_pre_image_chunk_is_named_as_the_pre_image_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let original: Vec<u8> = (0..400_000u32)
        .flat_map(|i| format!("L{i:08} some text of the line {}\n", i * 7).into_bytes())
        .collect();
    std::fs::write(root.join("big.txt"), &original).unwrap();
    Journal::init(root).unwrap();
    let plan = r#"{"edits":[{"op":"replace_lines","path":"big.txt","start":200001,"end":200001,"content":"CHANGED LINE\n"}]}"#;
    assert_eq!(cli(root, &["preview"], Some(plan)).status.code(), Some(0));
    assert_eq!(run_ue(root, &["commit", "1"], None).status.code(), Some(0));
    let post = std::fs::read(root.join("big.txt")).unwrap();
    // Flip a byte of every copy of the replaced line in the journal: only the
    // pre-image's chunk holding line 200001 has it.
    let db = root.join(".ultra-edit/journal.redb");
    let mut bytes = std::fs::read(&db).unwrap();
    let needle = b"L00200000 some text of the line 1400000\n";
    let at: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| w == needle)
        .map(|(i, _)| i)
        .collect();
    assert!(!at.is_empty());
    for i in at {
        bytes[i + 1] ^= 1;
    }
    std::fs::write(&db, bytes).unwrap();
    let out = run_ue(root, &["rollback", "1"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(std::fs::read(root.join("big.txt")).unwrap(), post);
    assert!(
        stderr.contains("(it is the pre-image of big.txt in batch 1 of tx 1, which this rollback of tx 1 restores)"),
        "{stderr}"
    );
}

/// Shows (not fixed here: src/commit.rs `rollback_revision` is being changed by
/// another engineer): the rollback of an edit spread over a whole large file (an
/// `occurrence: all` replace of every third line of a 23 MB file) reads the pre-image
/// and the file whole and diffs them, at a peak RSS of 3.8x the file above that of
/// `log` (release CLI: 123 MB against `log`'s 34 MB, the commit 47 MB; this debug
/// build: 110 MiB above `log`, the target 60 MiB), where the
/// large-file target is 1.25x the file + 32 MiB (docs/benchmarks.md, "Large files and
/// large batches"; met for a one-line edit). Needs GNU time.
#[test]
#[ignore = "repro for the owner of src/commit.rs: a spread edit's rollback holds the file several times"]
fn regression_the_rollback_of_an_edit_spread_over_a_large_file_stays_within_the_memory_target() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let data: Vec<u8> = (0..1_000_000u32)
        .flat_map(|i| {
            let status = if i % 3 == 0 { "inactive" } else { "active" };
            format!("{i},user{},{status}\n", i % 5000).into_bytes()
        })
        .collect();
    assert_eq!(data.len(), 23_333_558);
    std::fs::write(root.join("data.csv"), &data).unwrap();
    Journal::init(root).unwrap();
    let plan = r#"{"edits":[{"op":"replace_text","path":"data.csv","old":"inactive","new":"INACTIVE","occurrence":"all"}]}"#;
    assert_eq!(cli(root, &["preview"], Some(plan)).status.code(), Some(0));
    assert_eq!(run_ue(root, &["commit", "1"], None).status.code(), Some(0));
    let peak_kib = |args: &[&str]| -> u64 {
        let out = std::process::Command::new("/usr/bin/time")
            .args(["-f", "UE_MAXRSS=%M", "--"])
            .arg(env!("CARGO_BIN_EXE_ultra-edit"))
            .arg("--root")
            .arg(root)
            .args(args)
            .env_remove("FAILPOINTS")
            .output()
            .expect("GNU time (`apt-get install time`)");
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.strip_prefix("UE_MAXRSS=")?.trim().parse().ok())
            .unwrap()
    };
    let log = peak_kib(&["log"]);
    let rollback = peak_kib(&["rollback", "1"]);
    assert_eq!(std::fs::read(root.join("data.csv")).unwrap(), data);
    let target_kib = (data.len() as u64 * 5 / 4 + (32 << 20)) / 1024;
    assert!(
        rollback.saturating_sub(log) <= target_kib,
        "rollback peak {rollback} KiB, log {log} KiB: {} KiB above log, target {target_kib} KiB",
        rollback.saturating_sub(log)
    );
}
