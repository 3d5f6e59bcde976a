use ultra_edit::{BlobHash, EditError, Error, Severity};

use crate::support::*;

#[test]
fn preview_handle_contains_snapshot_and_diff() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"agent":"dev-1","description":"bump","edits":[
        {"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    3\n"}]}"#,
    );
    assert_eq!(p.tx, 1);
    assert_eq!(p.revision, 0);
    assert_eq!(p.agent.as_deref(), Some("dev-1"));
    assert_eq!(p.files.len(), 1);
    let f = &p.files[0];
    assert_eq!(f.path, "src/b.rs");
    let before = b"pub fn b() -> u32 {\n    2\n}\n";
    let after = b"pub fn b() -> u32 {\n    3\n}\n";
    assert!(f.snapshot.exists());
    assert_eq!(f.snapshot.hash(), Some(BlobHash::of(before)));
    assert_eq!(f.snapshot.size(), before.len() as u64);
    assert_eq!(f.snapshot.mode(), Some(0o600));
    assert_eq!(f.candidate.hash(), Some(BlobHash::of(after)));
    assert_eq!(f.candidate.mode(), Some(0o600));
    // With the grammars (feature `syntax`) the hunk header names the function, as
    // git's function-name context does.
    let context = if cfg!(feature = "syntax") { " b" } else { "" };
    assert_eq!(
        f.diff.unified,
        format!("--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,3 +1,3 @@{context}\n pub fn b() -> u32 {{\n-    2\n+    3\n }}\n")
    );
    assert_eq!((f.diff.lines_added, f.diff.lines_removed), (1, 1));
    assert!(p.ready_to_commit);
    assert!(p.validation.is_empty());
    // The handle resolves from the journal alone, with the same content.
    // (`show` also checked the disk against the snapshot: nothing changed since.)
    let shown = ws.journal.show(p.tx, None).unwrap();
    assert_eq!(shown.stale_paths, Some(Vec::new()));
    let mut shown = shown;
    shown.stale_paths = None;
    assert_eq!(shown, p);
    assert_eq!(p.created_ms, ws.journal.tx(p.tx).unwrap().created_ms);
    // Both images are blobs of the journal.
    assert_eq!(
        ws.journal.blob(&BlobHash::of(before)).unwrap().unwrap(),
        before
    );
    assert_eq!(
        ws.journal.blob(&BlobHash::of(after)).unwrap().unwrap(),
        after
    );
}

#[test]
fn preview_creation_is_side_effect_free() {
    let ws = workspace();
    let before = ws.tree();
    ws.preview(
        r#"{"edits":[
        {"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"},
        {"op":"create_file","path":"new/deep/file.txt","content":"x"},
        {"op":"delete_file","path":"run.sh"},
        {"op":"replace_file","path":"crlf.txt","content_base64":"AAEC"}]}"#,
    );
    // A failing preview changes nothing either.
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"nope","new":"x"}]}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(err, Error::Edit(EditError::TargetNotFound { .. })),
        "{err}"
    );
    assert_eq!(ws.tree(), before);
}

#[test]
fn ambiguous_text_target_is_refused() {
    let ws = workspace();
    ws.write("dup.txt", b"x = 1\ny = 2\nx = 1\n\nx = 1\n");
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[{"op":"replace_text","path":"dup.txt","old":"x = 1","new":"x = 9"}]}"#,
        ))
        .unwrap_err();
    match &err {
        Error::Edit(EditError::AmbiguousTarget { count, lines, .. }) => {
            assert_eq!(*count, 3);
            assert_eq!(lines, &vec![1, 3, 5]);
        }
        other => panic!("expected AmbiguousTarget, got {other:?}"),
    }
    assert_eq!(err.exit_code(), 6);
    // With an occurrence it resolves, against that match only.
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"dup.txt","old":"x = 1","new":"x = 9","occurrence":2}]}"#,
    );
    let cand = ws
        .journal
        .blob(&p.files[0].candidate.hash().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(cand, b"x = 1\ny = 2\nx = 9\n\nx = 1\n");
}

#[test]
fn multi_edit_offsets_are_resolved_against_one_base() {
    let ws = workspace();
    // Every edit names text and lines of the *original* file; the first edit grows the
    // file, which must not shift where the later ones land.
    let p = ws.preview(
        r##"{"edits":[
        {"op":"replace_text","path":"src/lib.rs","old":"pub mod a;","new":"pub mod a;\npub mod a2;\npub mod a3;"},
        {"op":"replace_lines","path":"src/lib.rs","start":5,"end":5,"content":"    42"},
        {"op":"insert_after","path":"src/lib.rs","anchor":"pub mod b;\n","text":"pub mod c;\n"},
        {"op":"insert_before","path":"src/lib.rs","anchor":"fn helper","text":"#[inline]\n"}]}"##,
    );
    let cand = ws
        .journal
        .blob(&p.files[0].candidate.hash().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        String::from_utf8(cand).unwrap(),
        "pub mod a;\npub mod a2;\npub mod a3;\npub mod b;\npub mod c;\n\n#[inline]\nfn helper() -> u32 {\n    42\n}\n"
    );
    // Overlapping edits are refused with both indices.
    let err = ws
        .journal
        .preview(&plan(
            r#"{"edits":[
            {"op":"replace_text","path":"src/lib.rs","old":"pub mod a;\npub mod b;","new":"x"},
            {"op":"replace_lines","path":"src/lib.rs","start":2,"end":2,"content":"y"}]}"#,
        ))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Edit(EditError::OverlappingEdits {
                first: 0,
                second: 1,
                ..
            })
        ),
        "{err:?}"
    );
}

#[test]
fn bytes_outside_the_span_are_kept_exactly() {
    let ws = workspace();
    let original: &[u8] = b"\xEF\xBB\xBFfirst\r\nbad \xFF\xFE bytes\nmixed\r\nlast no newline";
    ws.write("odd.txt", original);
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"odd.txt","old":"mixed","new":"MIXED"},
                     {"op":"replace_lines","path":"crlf.txt","start":2,"end":2,"content":"TWO"}]}"#,
    );
    let odd = ws
        .journal
        .blob(&p.files[1].candidate.hash().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        odd,
        b"\xEF\xBB\xBFfirst\r\nbad \xFF\xFE bytes\nMIXED\r\nlast no newline"
    );
    assert!(p.files[1].diff.lossy);
    let crlf = ws
        .journal
        .blob(&p.files[0].candidate.hash().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(crlf, b"one\r\nTWO\r\nthree\r\n");
}

#[test]
fn validation_reports_conflict_markers_and_blocks_commit() {
    let ws = workspace();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"<<<<<<< ours\n    2\n=======\n    3\n>>>>>>> theirs\n"},
                     {"op":"replace_file","path":"src/a.rs","content":""}]}"#,
    );
    let codes: Vec<(&str, Severity, &str)> = p
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.severity, i.path.as_str()))
        .collect();
    // The markers also break the Rust syntax, but a file with new markers gets no
    // syntax check: the marker error is the one to act on (with or without grammars).
    let expected = vec![
        ("empty_candidate", Severity::Warning, "src/a.rs"),
        ("conflict_markers", Severity::Error, "src/b.rs"),
    ];
    assert_eq!(codes, expected);
    assert!(!p.ready_to_commit);
    let before = ws.tree();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::ValidationFailed { revision: 0, .. }),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 4);
    assert_eq!(ws.tree(), before);
}

#[test]
fn revise_builds_on_the_latest_candidate_and_keeps_the_tx() {
    let ws = workspace();
    let p0 = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#,
    );
    // Revision 1 matches text of revision 0's candidate, not of the disk.
    let p1 = ws
        .journal
        .revise(p0.tx, Default::default(), &plan(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    3","new":"    4"},
                                             {"op":"create_file","path":"src/c.rs","content":"// c\n"}]}"#))
        .unwrap();
    assert_eq!((p1.tx, p1.revision, p1.base), (p0.tx, 1, Some(0)));
    let b = ws
        .journal
        .blob(&p1.files[0].candidate.hash().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(b, b"pub fn b() -> u32 {\n    4\n}\n");
    assert_eq!(p1.files[0].snapshot, p0.files[0].snapshot);
    assert_eq!(
        p1.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
        ["src/b.rs", "src/c.rs"]
    );
    // Revision 0 is still there, unchanged.
    assert_eq!(ws.journal.show(p0.tx, Some(0)).unwrap().files, p0.files);
    // An aborted tx accepts nothing further.
    ws.journal.abort(p0.tx).unwrap();
    let err = ws
        .journal
        .revise(
            p0.tx,
            Default::default(),
            &plan(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#),
        )
        .unwrap_err();
    assert!(matches!(err, Error::WrongState { .. }), "{err:?}");
    assert!(matches!(
        ws.journal.commit(p0.tx, Default::default()),
        Err(Error::WrongState { .. })
    ));
}

/// `preview_with` and `refuse_nothing_to_change`: a plan that changes nothing is
/// `NothingToChange` (exit 4, kind `nothing_to_change`) naming its files, and the journal
/// gets no record at all; `preview` records it, not ready.
#[test]
fn preview_with_refuses_a_plan_that_changes_nothing() {
    let ws = workspace();
    let plan = ultra_edit::Plan::from_json(
        br#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    2"}]}"#,
    )
    .unwrap();
    let events = |ws: &Ws| {
        let mut n = 0;
        ws.journal
            .dump(ultra_edit::DumpFilter::default(), |_| {
                n += 1;
                Ok(true)
            })
            .unwrap();
        n
    };
    let before = events(&ws);
    let opts = ultra_edit::PreviewOptions::new().with_refuse_nothing_to_change(true);
    let e = ws.journal.preview_with(&plan, opts).unwrap_err();
    match &e {
        ultra_edit::Error::NothingToChange { paths } => assert_eq!(paths, &["src/b.rs"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        (e.kind(), e.exit_code(), e.tx()),
        ("nothing_to_change", 4, None)
    );
    assert_eq!(events(&ws), before, "a refused preview recorded something");
    assert!(ws.journal.log(None).unwrap().is_empty());
    let p = ws.journal.preview(&plan).unwrap();
    assert_eq!((p.tx, p.ready_to_commit), (1, false));
}

/// A codemod-sized preview (24 files, ~0.7 MiB: past the point where the diffs and
/// checks run on several threads, `revision::par_map`) reports exactly what file-by-file
/// work reports: each file's diff, in path order, and the one syntax error in the file
/// that the plan breaks, as the same plan previewed one file at a time does.
#[cfg(feature = "syntax")]
#[test]
fn a_large_preview_reports_each_file_in_order_as_one_file_previews_do() {
    let ws = workspace();
    let body: String = (0..900)
        .map(|i| format!("fn f{i}() -> u32 {{\n    {i}\n}}\n"))
        .collect();
    let mut edits = Vec::new();
    for n in 0..24 {
        let path = format!("m/f{n:02}.rs");
        ws.write(&path, body.as_bytes());
        // File 13 gets an unclosed brace, the others a harmless edit.
        let new = if n == 13 {
            "fn f5() -> u32 {\n    {5\n"
        } else {
            "fn f5() -> u32 {\n    55\n"
        };
        edits.push(serde_json::json!({
            "op": "replace_text", "path": path, "old": "fn f5() -> u32 {\n    5\n", "new": new
        }));
    }
    let whole = ws.preview(&serde_json::json!({ "edits": edits }).to_string());
    let errors: Vec<(&str, &str)> = whole
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.path.as_str()))
        .collect();
    assert_eq!(errors, [("syntax_error", "m/f13.rs")]);
    let paths: Vec<&str> = whole.files.iter().map(|f| f.path.as_str()).collect();
    let expected: Vec<String> = (0..24).map(|n| format!("m/f{n:02}.rs")).collect();
    assert_eq!(paths, expected);
    for (n, edit) in edits.iter().enumerate() {
        let one = ws.preview(&serde_json::json!({ "edits": [edit] }).to_string());
        assert_eq!(one.files[0].diff, whole.files[n].diff, "file {n}");
        let issues: Vec<_> = one
            .validation
            .iter()
            .map(|i| (&i.code, &i.message))
            .collect();
        let same: Vec<_> = whole
            .validation
            .iter()
            .filter(|i| one.files[0].path == i.path)
            .map(|i| (&i.code, &i.message))
            .collect();
        assert_eq!(issues, same, "file {n}");
    }
}
