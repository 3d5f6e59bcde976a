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
