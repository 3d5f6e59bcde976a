//! File contents and names that must come through exactly: empty files, binary files
//! with NUL bytes, CRLF and mixed line endings, a BOM, no trailing newline, unicode
//! file names.

use std::fs;

use ultra_edit::{EditError, Error};

use crate::support::*;

use super::*;

#[test]
fn empty_files() {
    let ws = workspace();
    ws.write("empty.txt", b"");
    let before = ws.tree();
    // Text ops find nothing in an empty file: typed refusals.
    let e = preview_err(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"empty.txt","old":"x","new":"y"}]}"#,
    );
    assert!(
        matches!(e, Error::Edit(EditError::TargetNotFound { .. })),
        "{e:?}"
    );
    assert_eq!(e.exit_code(), 6);
    let e = preview_err(
        &ws,
        r#"{"edits":[{"op":"replace_lines","path":"empty.txt","start":1,"end":1,"content":"x"}]}"#,
    );
    assert!(
        matches!(
            e,
            Error::Edit(EditError::LineOutOfRange { line_count: 0, .. })
        ),
        "{e:?}"
    );
    let e = preview_err(
        &ws,
        r#"{"edits":[{"op":"insert_before","path":"empty.txt","anchor":"\n","text":"x"}]}"#,
    );
    assert!(
        matches!(e, Error::Edit(EditError::TargetNotFound { .. })),
        "{e:?}"
    );
    // Whole-file ops on and to empty files are exact.
    let r = commit(
        &ws,
        r#"{"edits":[
        {"op":"replace_file","path":"empty.txt","content":"now full\n"},
        {"op":"create_file","path":"new-empty.txt","content":""},
        {"op":"replace_file","path":"src/b.rs","content":""}]}"#,
    );
    assert_eq!(ws.read("empty.txt"), b"now full\n");
    assert_eq!(ws.read("new-empty.txt"), b"");
    assert_eq!(ws.mode("new-empty.txt"), 0o644);
    assert_eq!(ws.read("src/b.rs"), b"");
    assert_eq!(ws.mode("src/b.rs"), 0o600, "mode kept when emptied");
    rollback_to(&ws, &r, &before);
    // Deleting an empty file, and restoring it.
    let r = commit(
        &ws,
        r#"{"edits":[{"op":"delete_file","path":"empty.txt"}]}"#,
    );
    assert!(!ws.path("empty.txt").exists());
    rollback_to(&ws, &r, &before);
    assert_eq!(ws.read("empty.txt"), b"");
    // A plan that leaves an empty file empty changes nothing: refused at commit.
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"empty.txt","content":""}]}"#);
    assert!(!p.ready_to_commit);
    let e = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(matches!(e, Error::ValidationFailed { .. }), "{e:?}");
    assert_eq!(ws.tree(), before);
}

#[test]
fn binary_files_with_nul_bytes_are_exact() {
    let ws = workspace();
    let mut bin: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    bin.extend_from_slice(b"MARKER");
    bin.extend((0..=255u8).rev());
    ws.write("blob.bin", &bin);
    let before = ws.tree();
    // A text op on a binary file: applied as a byte splice, flagged with a warning.
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"blob.bin","old":"MARKER","new":"M\u0000RK"}]}"#,
    );
    assert!(p.ready_to_commit);
    assert!(
        p.validation
            .iter()
            .any(|i| i.code == "binary_content_edited"),
        "{:?}",
        p.validation
    );
    assert!(p.files[0].diff.binary);
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    let at = bin.windows(6).position(|w| w == b"MARKER").unwrap();
    let expect = [&bin[..at], b"M\0RK".as_slice(), &bin[at + 6..]].concat();
    assert_eq!(ws.read("blob.bin"), expect);
    rollback_to(&ws, &r, &before);
    // replace_file / create_file with base64: every byte value round-trips.
    use base64::Engine as _;
    let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&all);
    let r = commit(
        &ws,
        &edits(&[
            serde_json::json!({"op":"replace_file","path":"blob.bin","content_base64":b64}),
            serde_json::json!({"op":"create_file","path":"bin/new.bin","content_base64":b64,"mode":"0600"}),
        ]),
    );
    assert_eq!(ws.read("blob.bin"), all);
    assert_eq!(ws.read("bin/new.bin"), all);
    assert_eq!(ws.mode("bin/new.bin"), 0o600);
    rollback_to(&ws, &r, &before);
    // A needle with a NUL byte matches exactly.
    let r = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"blob.bin","old":"\u0000\u0001\u0002\u0003","new":"","occurrence":2}]}"#,
    );
    let second = 256; // the second run of 0,1,2,3
    let expect = [&bin[..second], &bin[second + 4..]].concat();
    assert_eq!(ws.read("blob.bin"), expect);
    rollback_to(&ws, &r, &before);
}

#[test]
fn crlf_mixed_endings_bom_and_no_trailing_newline_are_exact() {
    let ws = workspace();
    ws.write("mixed.txt", b"a\r\nb\nc\r\nd");
    ws.write("bom.txt", b"\xEF\xBB\xBFfirst\r\nsecond\n");
    let before = ws.tree();
    let r = commit(
        &ws,
        r#"{"edits":[
        {"op":"replace_lines","path":"mixed.txt","start":2,"end":2,"content":"B"},
        {"op":"replace_lines","path":"mixed.txt","start":3,"end":3,"content":"C"},
        {"op":"replace_lines","path":"mixed.txt","start":4,"end":4,"content":"D"},
        {"op":"insert_after","path":"mixed.txt","anchor":"a\r\n","text":"a2\r\n"},
        {"op":"replace_text","path":"bom.txt","old":"first","new":"1st"},
        {"op":"insert_after","path":"README.md","anchor":"newline","text":"!"},
        {"op":"replace_lines","path":"crlf.txt","start":2,"end":3,"content":"2\n3"}]}"#,
    );
    // replace_lines keeps each replaced line's own terminator (\r\n, \n, or none).
    assert_eq!(ws.read("mixed.txt"), b"a\r\na2\r\nB\nC\r\nD");
    // The BOM is outside the matched span: kept.
    assert_eq!(ws.read("bom.txt"), b"\xEF\xBB\xBF1st\r\nsecond\n");
    // No trailing newline stays without one.
    assert_eq!(ws.read("README.md"), b"# sample\n\nNo trailing newline!");
    // Content with its own (LF) line ends is taken as given, then the CRLF of the last
    // replaced line is added: "2\n3" + "\r\n".
    assert_eq!(ws.read("crlf.txt"), b"one\r\n2\n3\r\n");
    rollback_to(&ws, &r, &before);
    // replace_lines on line 1 keeps a UTF-8 BOM (README, "Edit plans": a BOM is kept): the content
    // replaces the line after it, unless the content starts with a BOM itself.
    let r = commit(
        &ws,
        r#"{"edits":[{"op":"replace_lines","path":"bom.txt","start":1,"end":1,"content":"X"},
                     {"op":"replace_lines","path":"README.md","start":3,"end":3,"content":"End"}]}"#,
    );
    assert_eq!(ws.read("bom.txt"), b"\xEF\xBB\xBFX\r\nsecond\n");
    assert_eq!(ws.read("README.md"), b"# sample\n\nEnd");
    rollback_to(&ws, &r, &before);
    // A needle spanning CRLF and a lone CR.
    ws.write("cr.txt", b"x\ry\r\nz");
    let before = ws.tree();
    let r = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"cr.txt","old":"\ry\r\n","new":"\n"}]}"#,
    );
    assert_eq!(ws.read("cr.txt"), b"x\nz");
    rollback_to(&ws, &r, &before);
}

#[test]
fn unicode_file_names_round_trip() {
    let ws = workspace();
    let names = [
        "café.txt",        // NFC é
        "cafe\u{301}.txt", // NFD e + combining acute: a different file
        "日本語/ファイル.md",
        "emoji 🚀/ok ✓.txt",
        "space and 'quote\".txt",
        "tab\there.txt",
        "ünï/cödé/ß.rs",
    ];
    let before = ws.tree();
    // A newline in a name could forge lines of the reviewed diff: refused, whole plan.
    let refused = ws.journal.preview(
        &ultra_edit::Plan::from_json(
            br#"{"edits":[{"op":"create_file","path":"new\nline.txt","content":"x\n"}]}"#,
        )
        .unwrap(),
    );
    assert!(
        matches!(
            refused,
            Err(ultra_edit::Error::Path(
                ultra_edit::PathError::Invalid { .. }
            ))
        ),
        "{refused:?}"
    );
    assert_eq!(ws.tree(), before);
    let list: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"op":"create_file","path":n,"content":format!("<{n}>\n")}))
        .collect();
    // `<ß.rs>` is no Rust: allow the syntax error the grammars (feature `syntax`) see.
    let plan = serde_json::json!({"edits": list, "policy": {"syntax_errors": "allow"}}).to_string();
    let r = commit(&ws, &plan);
    assert_eq!(r.files.len(), names.len());
    for n in names {
        assert_eq!(ws.read(n), format!("<{n}>\n").into_bytes(), "{n:?}");
    }
    // NFC and NFD names are two files, each named by its exact bytes.
    let listed: Vec<Vec<u8>> = fs::read_dir(ws.root())
        .unwrap()
        .map(|e| {
            use std::os::unix::ffi::OsStrExt;
            e.unwrap().file_name().as_bytes().to_vec()
        })
        .collect();
    assert!(listed.contains(&"café.txt".as_bytes().to_vec()));
    assert!(listed.contains(&"cafe\u{301}.txt".as_bytes().to_vec()));
    // Edit them by text op, then roll both back.
    let list: Vec<serde_json::Value> = names
        .iter()
        .map(|n| serde_json::json!({"op":"insert_before","path":n,"anchor":">\n","text":" ✎"}))
        .collect();
    let r2 = commit(&ws, &edits(&list));
    assert_eq!(
        ws.read("日本語/ファイル.md"),
        "<日本語/ファイル.md ✎>\n".as_bytes()
    );
    // The CLI prints the names exactly in JSON.
    let out = ue(ws.root(), &["--json", "log", "--limit", "1"]);
    assert!(out.status.success());
    let log = json_of(&out).to_string();
    assert!(
        log.contains("cafe\u{301}.txt") && log.contains("tab\\there.txt"),
        "{log}"
    );
    ws.journal.rollback(r2.tx, Default::default()).unwrap();
    rollback_to(&ws, &r, &before);
    assert!(
        !ws.path("日本語").exists(),
        "created directory left after rollback"
    );
}
