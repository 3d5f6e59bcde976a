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
        serde_json::json!({"txs": []}),
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
    let out = cli(ws.root(), &["help", "plan"], None);
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(
            "hard-linked files, anything\n  under a `.git/`, `.jj/`, `.hg/`, `.svn/` or \
             `.ultra-edit/` directory at any depth, and\n  file names of the form \
             `.ue-*.tmp` (ultra-edit's temp files). One bad path refuses\n  the whole plan.\n"
        ),
        "{page}"
    );
}
