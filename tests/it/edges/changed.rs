//! A path that changes between preview and commit: a file deleted, a file created where
//! `create_file` expected none, a file turned into a directory or a symlink.

use std::fs;

use ultra_edit::{Error, PathError};

use crate::support::*;

use super::*;

#[test]
fn file_deleted_after_preview_is_stale_and_nothing_changes() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h"},
                     {"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    fs::remove_file(ws.path("src/a.rs")).unwrap();
    let before = ws.tree();
    let out = ue(ws.root(), &["--json", "commit", &p.tx.to_string()]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "stale_snapshot", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("src/a.rs"),
        "{v}"
    );
    assert_eq!(ws.tree(), before, "a stale commit changed the tree");
    match ws.journal.commit(p.tx, Default::default()) {
        Err(Error::StaleSnapshot { paths, .. }) => assert_eq!(paths, ["src/a.rs"]),
        other => panic!("expected StaleSnapshot, got {other:?}"),
    }
    assert_eq!(ws.tree(), before);
}

#[test]
fn file_created_where_create_file_expected_none_is_stale_and_kept() {
    let ws = workspace();
    let p =
        ws.preview(r#"{"edits":[{"op":"create_file","path":"docs/late.md","content":"mine\n"}]}"#);
    ws.write("docs/late.md", b"theirs\n");
    let before = ws.tree();
    let out = ue(ws.root(), &["--json", "commit", &p.tx.to_string()]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_of(&out)["error"]["kind"], "stale_snapshot");
    assert_eq!(ws.read("docs/late.md"), b"theirs\n");
    assert_eq!(ws.tree(), before);
}

#[test]
fn a_path_that_changes_kind_after_preview_is_refused_and_nothing_changes() {
    // A file turned into a directory.
    let ws = workspace();
    let p = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h"}]}"#);
    fs::remove_file(ws.path("src/a.rs")).unwrap();
    fs::create_dir(ws.path("src/a.rs")).unwrap();
    fs::write(ws.path("src/a.rs/inner.txt"), "inner\n").unwrap();
    let before = ws.tree();
    let e = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(e, Error::Path(PathError::WrongKind { .. })),
        "a file turned into a directory: expected Path(WrongKind), got {e:?}"
    );
    assert_eq!(e.exit_code(), 1);
    assert_eq!(ws.tree(), before);

    // The parent of a file to create turned into a file.
    let ws = workspace();
    let p = ws.preview(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"create_file","path":"gen/x.rs","content":"x\n"}]}"#);
    ws.write("gen", b"now a file\n");
    let before = ws.tree();
    let e = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(e, Error::Path(PathError::WrongKind { .. })),
        "a parent turned into a file: expected Path(WrongKind), got {e:?}"
    );
    assert_eq!(ws.tree(), before);

    // The file replaced by a symlink (to a file outside the root).
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim"), "outside\n").unwrap();
    let p =
        ws.preview(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"replace_file","path":"src/b.rs","content":"pwned\n"}]}"#);
    fs::remove_file(ws.path("src/b.rs")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("victim"), ws.path("src/b.rs")).unwrap();
    let before = ws.tree();
    let e = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(e, Error::Path(PathError::IsSymlink { .. })),
        "a file swapped for a symlink: expected Path(IsSymlink), got {e:?}"
    );
    assert_eq!(ws.tree(), before);
    assert_eq!(
        fs::read(outside.path().join("victim")).unwrap(),
        b"outside\n"
    );

    // A parent directory swapped for a symlink to a directory outside the root (before
    // the commit takes the lock; the race inside the commit is the path tests' job).
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("a.rs"), "outside\n").unwrap();
    let p =
        ws.preview(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"replace_file","path":"src/a.rs","content":"pwned\n"}]}"#);
    fs::rename(ws.path("src"), ws.path("src.moved")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("src")).unwrap();
    let before = ws.tree();
    let e = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(e, Error::Path(PathError::SymlinkInPath { .. })),
        "a parent swapped for a symlink: expected Path(SymlinkInPath), got {e:?}"
    );
    assert_eq!(ws.tree(), before);
    assert_eq!(fs::read(outside.path().join("a.rs")).unwrap(), b"outside\n");
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        1,
        "temp left outside"
    );
}
