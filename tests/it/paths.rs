use std::os::unix::fs::symlink;

use ultra_edit::{Error, PathError};

use crate::support::*;

fn refused(ws: &Ws, path: &str) -> PathError {
    let json = serde_json::json!({"edits":[
        {"op":"replace_text","path":"src/lib.rs","old":"    1","new":"    3"},
        {"op":"create_file","path":path,"content":"x"}]})
    .to_string();
    match ws.journal.preview(&plan(&json)) {
        Err(Error::Path(e)) => e,
        other => panic!("{path}: expected a path error, got {other:?}"),
    }
}

#[test]
fn path_escape_is_refused() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), ws.path("linkdir")).unwrap();
    symlink(ws.path("src/a.rs"), ws.path("link.rs")).unwrap();
    std::fs::hard_link(ws.path("src/b.rs"), ws.path("hard.rs")).unwrap();
    let before = ws.tree();
    let abs_outside = outside.path().join("x").to_string_lossy().into_owned();
    let e = refused(&ws, "../x");
    assert!(matches!(e, PathError::OutsideRoot { .. }), "{e:?}");
    assert!(matches!(
        refused(&ws, "a/../../x"),
        PathError::OutsideRoot { .. }
    ));
    assert!(matches!(
        refused(&ws, &abs_outside),
        PathError::OutsideRoot { .. }
    ));
    assert!(matches!(
        refused(&ws, "linkdir/x"),
        PathError::SymlinkInPath { .. }
    ));
    assert!(matches!(
        refused(&ws, ".git/config"),
        PathError::Reserved { area: ".git", .. }
    ));
    assert!(matches!(
        refused(&ws, ".ultra-edit/x"),
        PathError::Reserved { .. }
    ));
    assert!(matches!(
        refused(&ws, "src/b.rs/x"),
        PathError::WrongKind { .. }
    ));
    assert!(matches!(refused(&ws, "src"), PathError::WrongKind { .. }));
    // A link itself, and a hard-linked file, are refused for every op.
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[{"op":"replace_text","path":"link.rs","old":"a","new":"b"}]}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(err, Error::Path(PathError::IsSymlink { .. })),
        "{err:?}"
    );
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[{"op":"delete_file","path":"hard.rs"}]}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(err, Error::Path(PathError::HardLinked { links: 2, .. })),
        "{err:?}"
    );
    // Nothing was written anywhere, inside or outside.
    assert_eq!(ws.tree(), before);
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    // An absolute path inside the root is the same as the relative one.
    let abs = ws.path("src/lib.rs").to_string_lossy().into_owned();
    let p = ws.preview(&serde_json::json!({"edits":[{"op":"replace_text","path":abs,"old":"    1","new":"    3"}]}).to_string());
    assert_eq!(p.files[0].path, "src/lib.rs");
}

#[test]
fn a_directory_swapped_for_a_symlink_after_preview_is_refused_at_commit() {
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    let p = ws.preview(r#"{"edits":[{"op":"create_file","path":"out/x.txt","content":"x"}]}"#);
    symlink(outside.path(), ws.path("out")).unwrap();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::Path(PathError::SymlinkInPath { .. })),
        "{err:?}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// Paths no filesystem call should ever see, through the CLI from raw plan bytes: a NUL
/// byte, a component over 255 bytes, a path over 4096 bytes, invalid UTF-8 and a lone
/// UTF-16 surrogate escape. Each is refused with its typed error (exit 1) and changes
/// nothing: not the tree, not the journal (no tx is created).
#[test]
fn unrepresentable_paths_are_refused_and_change_nothing() {
    let ws = workspace();
    let plans = tempfile::tempdir().unwrap();
    let before = ws.tree();
    let edit = |path: &[u8]| -> Vec<u8> {
        [
            br#"{"edits":[{"op":"replace_text","path":"src/lib.rs","old":"    1","new":"    3"},{"op":"create_file","path":""#.as_slice(),
            path,
            br#"","content":"x"}]}"#.as_slice(),
        ]
        .concat()
    };
    let long_path = vec!["y".repeat(200); 21].join("/");
    let cases: [(&str, Vec<u8>, &str, &str); 6] = [
        (
            "nul",
            edit(br"a\u0000b.txt"),
            "path_refused",
            "contains a NUL byte",
        ),
        (
            "long component",
            edit(format!("d/{}", "x".repeat(256)).as_bytes()),
            "path_refused",
            "has a component longer than 255 bytes",
        ),
        (
            "long path",
            edit(long_path.as_bytes()),
            "path_refused",
            "longer than 4096 bytes",
        ),
        (
            "invalid utf-8",
            edit(b"b\xff\xfe.txt"),
            "invalid_plan",
            "invalid unicode code point",
        ),
        (
            "lone surrogate",
            edit(br"b\ud800.txt"),
            "invalid_plan",
            "hex escape at line 1 column",
        ),
        (
            "empty",
            edit(b""),
            "invalid_plan",
            "edit #2 (create_file): \"path\" is empty",
        ),
    ];
    for (what, bytes, kind, says) in cases {
        let file = plans.path().join("plan.json");
        std::fs::write(&file, &bytes).unwrap();
        let out = run_ue(
            ws.root(),
            &["--json", "preview", "--plan", &file.to_string_lossy()],
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        let err = &json_of(&out)["error"];
        assert_eq!(err["kind"], kind, "{what}: {err}");
        let message = err["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{what}: {message}");
        assert_eq!(ws.tree(), before, "{what} changed the tree");
    }
    let log = run_ue(ws.root(), &["--json", "log"], None);
    assert_eq!(
        json_of(&log),
        serde_json::json!({"txs": [], "needs_attention": []}),
        "a refused plan made a tx"
    );
}

/// Every directory the code refuses at any depth, and the temp-file name form, are
/// the ones `ultra-edit help plan` (docs/plan.md) lists.
#[test]
fn help_plan_lists_every_refused_area_and_the_temp_names() {
    let ws = workspace();
    for area in [".git", ".jj", ".hg", ".svn", ".ultra-edit"] {
        let e = refused(&ws, &format!("vendor/{area}/x"));
        assert!(
            matches!(e, PathError::Reserved { area: a, .. } if a == area),
            "{area}: {e:?}"
        );
    }
    let e = refused(&ws, "d/.ue-1-0.tmp");
    assert!(matches!(e, PathError::TempName { .. }), "{e:?}");
    let e = refused(&ws, "d/fake\n+++ b/x");
    assert!(matches!(e, PathError::Invalid { .. }), "{e:?}");
    let out = cli(ws.root(), &["help", "plan"], None);
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(
            "hard-linked files, anything\n  under a `.git/`, `.jj/`, `.hg/`, `.svn/` or \
             `.ultra-edit/` directory at any depth, and\n  file names of the form \
             `.ue-*.tmp` (ultra-edit's temp files), and names with a NUL\n  or another \
             control character (newline, carriage return, escape, C1 controls, Unicode\n  \
             line separators, bidirectional overrides and invisible characters such as a\n  \
             zero-width space: a diff could not show them safely; a tab is accepted, since it cannot\n  \
             start or hide a line and real trees have such names). One bad path refuses the whole plan (`path_refused`, exit 1); the\n  \
             CLI's `hint:` says what to write or do instead (for a symlink, how to find the path\n  \
             of its target).\n"
        ),
        "{page}"
    );
}

/// A refused path has a hint that says what to do about it (the CLI's `hint:` line,
/// and `hint` under `--json`), and nothing is recorded.
#[test]
fn refused_paths_have_a_hint() {
    let ws = workspace();
    std::fs::create_dir(ws.root().join(".git")).unwrap();
    std::fs::write(ws.root().join(".git/x"), b"x\n").unwrap();
    std::os::unix::fs::symlink("src/a.rs", ws.root().join("link.rs")).unwrap();
    let plan = |path: &str| {
        serde_json::json!({"edits": [{"op": "replace_file", "path": path, "content": "y\n"}]})
            .to_string()
    };
    for (path, message, hint) in [
        (
            ".git/x",
            "path \".git/x\" is inside a .git/ directory, which ultra-edit never edits",
            ".git/ is git's repository: leave it to that tool, and remove the edit from the plan",
        ),
        (
            "../x",
            "path \"../x\" is outside the workspace root; give a path relative to the root",
            "plan paths are relative to the workspace root (the directory that holds .ultra-edit/, or --root), or absolute inside it; a file outside it is edited from a workspace that contains it: fix that path in the plan and preview again",
        ),
        (
            "link.rs",
            "path \"link.rs\" is a symlink; ultra-edit never replaces a link, edit its target by its real path",
            "write the path of the file the link points to (`readlink -f link.rs` prints it; an absolute path inside the root is accepted): fix that path in the plan and preview again",
        ),
    ] {
        let out = cli(ws.root(), &["preview"], Some(&plan(path)));
        assert_eq!(out.status.code(), Some(1), "{path}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {message}\nhint: {hint}\n"),
            "{path}"
        );
        let out = cli(ws.root(), &["--json", "preview"], Some(&plan(path)));
        assert_eq!(
            json_of(&out),
            serde_json::json!({"error": {
                "kind": "path_refused", "message": message, "exit_code": 1, "hint": hint,
            }}),
            "{path}"
        );
    }
    let log = cli(ws.root(), &["--json", "log"], None);
    assert_eq!(
        json_of(&log),
        serde_json::json!({"txs": [], "needs_attention": []})
    );
}

/// A name with a tab is accepted (real trees have them), and the diff names it the way
/// git does, in double quotes with `\t`: unquoted, `patch` and `git apply` end the name
/// at the tab (a header's timestamp starts there). The diff `show` prints applies with
/// `git apply` and gives the candidate's exact bytes.
#[test]
fn a_diff_of_a_name_with_a_tab_quotes_it_and_applies_with_git() {
    let ws = workspace();
    std::fs::write(ws.path("notes\tdraft.txt"), "one\ntwo\n").unwrap();
    let plan =
        r#"{"edits":[{"op":"replace_text","path":"notes\tdraft.txt","old":"two","new":"2"}]}"#;
    let out = cli(ws.root(), &["preview"], Some(plan));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = cli(ws.root(), &["show", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let shown = String::from_utf8(out.stdout).unwrap();
    let diff = "diff --git \"a/notes\\tdraft.txt\" \"b/notes\\tdraft.txt\"\n\
                --- \"a/notes\\tdraft.txt\"\n+++ \"b/notes\\tdraft.txt\"\n\
                @@ -1,2 +1,2 @@\n one\n-two\n+2\n";
    assert!(shown.contains(diff), "{shown}");
    let Ok(git) = std::process::Command::new("git").arg("--version").output() else {
        eprintln!("git is not installed: the apply half is skipped");
        return;
    };
    assert!(git.status.success());
    let copy = tempfile::tempdir().unwrap();
    std::fs::write(copy.path().join("notes\tdraft.txt"), "one\ntwo\n").unwrap();
    let patch = copy.path().join("p.diff");
    std::fs::write(&patch, diff).unwrap();
    let applied = std::process::Command::new("git")
        .args(["apply", "--unsafe-paths", "p.diff"])
        .current_dir(copy.path())
        .output()
        .unwrap();
    assert!(applied.status.success(), "{applied:?}");
    assert_eq!(
        std::fs::read(copy.path().join("notes\tdraft.txt")).unwrap(),
        b"one\n2\n"
    );
}
