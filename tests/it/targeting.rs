//! Agents never guess: targeting that covers real edits, encodings refused
//! instead of garbled, and errors that name the real cause. Each test asserts the exit
//! code, the error kind and the key words of the message, through the CLI (`--json`)
//! and, where the item concerns edits, the MCP tools.

use std::sync::Arc;

use serde_json::{json, Value};
use ultra_edit::mcp::{EditTools, ToolError};
use ultra_edit::Journal;

use crate::support::*;

/// `--json preview` of `plan`: (exit code, the printed object).
fn preview(ws: &Ws, plan: &Value) -> (i32, Value) {
    let out = cli(ws.root(), &["--json", "preview"], Some(&plan.to_string()));
    (out.status.code().unwrap_or(-1), json_of(&out))
}

/// The `error` object of a refused `--json` command, after checking its exit code and kind.
fn refused(ws: &Ws, plan: &Value, code: i32, kind: &str) -> Value {
    let (got, v) = preview(ws, plan);
    assert_eq!(got, code, "{v}");
    assert_eq!(v["error"]["kind"], kind, "{v}");
    assert_eq!(v["error"]["exit_code"], code, "{v}");
    v["error"].clone()
}

/// The MCP tools over a second handle on `ws`'s journal.
fn tools(ws: &Ws) -> EditTools {
    EditTools::new(Arc::new(Journal::open(ws.root()).unwrap()))
}

/// `edit_preview` of `edits` through MCP, expected to be refused.
fn mcp_refused(ws: &Ws, edits: Value) -> ToolError {
    match tools(ws).call("edit_preview", json!({"agent_id": "a", "edits": edits})) {
        Err(e) => e,
        Ok(v) => panic!("expected a tool error, got {v}"),
    }
}

fn message(error: &Value) -> String {
    error["message"].as_str().unwrap_or_default().to_string()
}

#[test]
fn replace_all_replaces_every_match_and_reports_the_count() {
    let ws = workspace();
    ws.write("ids.rs", b"let aaa = old(old);\nold();\nfn oldest() {}\n");
    let plan = json!({"edits": [
        {"op": "replace_text", "path": "ids.rs", "old": "old", "new": "older", "occurrence": "all"},
        {"op": "replace_text", "path": "src/b.rs", "old": "aa", "new": "b", "occurrence": "all"},
        {"op": "replace_text", "path": "src/a.rs", "old": "a", "new": "aa", "occurrence": "all"},
    ]});
    ws.write("src/b.rs", b"aaa\n");
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 0, "{v}");
    let notes: Vec<&Value> = v["validation"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["code"] == "occurrences_replaced")
        .collect();
    assert_eq!(notes.len(), 3, "{v}");
    assert!(notes.iter().all(|n| n["severity"] == "warning"));
    let ids = notes.iter().find(|n| n["path"] == "ids.rs").unwrap();
    assert!(
        message(ids).contains("replaced 4 match(es) of \"old\" in ids.rs (lines 1, 1, 2, 3)"),
        "{ids}"
    );
    let tx = v["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    assert_eq!(
        ws.read("ids.rs"),
        b"let aaa = older(older);\nolder();\nfn olderest() {}\n"
    );
    // Non-overlapping, left to right: "aa" in "aaa" once; the replacement is not re-scanned.
    assert_eq!(ws.read("src/b.rs"), b"ba\n");
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn aa() -> u32 {\n    craate::helper()\n}\n"
    );

    // MCP: the schema offers "all", and the preview reports the count.
    let t = tools(&ws);
    let defs = ultra_edit::mcp::tool_definitions();
    let schema = serde_json::to_string(&defs[0].input_schema).unwrap();
    assert!(schema.contains(r#"{"const":"all"}"#), "{schema}");
    assert!(schema.contains(r#""const":"prepend""#) && schema.contains(r#""const":"append""#));
    let out = t
        .call(
            "edit_preview",
            json!({"agent_id": "a", "edits": [
                {"op": "replace_text", "path": "ids.rs", "old": "older", "new": "o", "occurrence": "all"}]}),
        )
        .unwrap();
    let issues = out["validation_issues"].to_string();
    assert!(
        issues.contains("occurrences_replaced") && issues.contains("replaced 4 match(es)"),
        "{issues}"
    );
}

#[test]
fn every_missing_or_ambiguous_target_is_reported_at_once() {
    let ws = workspace();
    let edits = json!([
        {"op": "replace_text", "path": "src/lib.rs", "old": "pub mod", "new": "mod"},
        {"op": "replace_text", "path": "src/lib.rs", "old": "fn helper", "new": "fn h"},
        {"op": "insert_after", "path": "src/a.rs", "anchor": "nowhere", "text": "x"},
        {"op": "replace_lines", "path": "src/b.rs", "start": 7, "end": 8, "content": "x"},
        {"op": "replace_text", "path": "gone.rs", "old": "x", "new": "y"},
    ]);
    let before = ws.tree();
    let e = refused(&ws, &json!({ "edits": edits }), 6, "unresolved_targets");
    let m = message(&e);
    assert!(
        m.starts_with("4 edits of the plan have no single target"),
        "{m}"
    );
    assert!(
        m.contains(
            "edit #1 (replace_text in src/lib.rs): \"pub mod\" matches 2 times (lines 1, 2)"
        ),
        "{m}"
    );
    assert!(
        m.contains("edit #3 (insert_after in src/a.rs): \"nowhere\" not found"),
        "{m}"
    );
    assert!(
        m.contains("edit #4 (replace_lines in src/b.rs): lines 7\u{2013}8 are past the end of the file, which has 3 lines; give lines between 1 and 3, or use prepend or append to add text at the start or end of the file"),
        "{m}"
    );
    assert!(
        m.contains("edit #5 (replace_text of gone.rs): gone.rs does not exist"),
        "{m}"
    );
    let failures = e["failures"].as_array().unwrap();
    let summary: Vec<(Value, Value, Value)> = failures
        .iter()
        .map(|f| (f["kind"].clone(), f["edit"].clone(), f["path"].clone()))
        .collect();
    assert_eq!(
        summary,
        [
            (json!("ambiguous_target"), json!(1), json!("src/lib.rs")),
            (json!("target_not_found"), json!(3), json!("src/a.rs")),
            (json!("line_out_of_range"), json!(4), json!("src/b.rs")),
            (json!("file_not_found"), json!(5), json!("gone.rs")),
        ]
    );
    assert_eq!(failures[0]["lines"], json!([1, 2]));
    assert_eq!(ws.tree(), before);

    let e = mcp_refused(&ws, edits);
    assert_eq!(e.kind, "unresolved_targets");
    assert_eq!(e.to_json()["failures"].as_array().map(Vec::len), Some(4));
    assert!(
        e.hint.contains("fix every edit listed in failures"),
        "{}",
        e.hint
    );
}

#[test]
fn empty_file_is_filled_by_prepend_or_append_and_hints_never_name_a_dead_end() {
    let ws = workspace();
    ws.write("e.txt", b"");
    // replace_lines cannot address a line of an empty file: say what can.
    let e = refused(
        &ws,
        &json!({"edits": [{"op": "replace_lines", "path": "e.txt", "start": 1, "end": 1, "content": "x"}]}),
        6,
        "line_out_of_range",
    );
    let m = message(&e);
    assert_eq!(
        m,
        "edit #1 (replace_lines in e.txt): the file is empty, so it has no line to replace: use append (or prepend) to add text to it, or replace_file"
    );
    // An empty anchor: the hint names prepend/append, not replace_lines.
    for op in ["insert_before", "insert_after"] {
        let e = refused(
            &ws,
            &json!({"edits": [{"op": op, "path": "e.txt", "anchor": "", "text": "x"}]}),
            1,
            "invalid_plan",
        );
        let m = message(&e);
        assert!(m.contains("use prepend or append"), "{m}");
        assert!(!m.contains("replace_lines"), "{m}");
    }
    // A text not found in an empty file: append, not replace_lines.
    let e = refused(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "e.txt", "old": "x", "new": "y"}]}),
        6,
        "target_not_found",
    );
    assert!(
        message(&e).contains("the file is empty — use append"),
        "{e}"
    );
    // prepend + append fill it; on a non-empty file they go at the start and the end.
    let (code, v) = preview(
        &ws,
        &json!({"edits": [
            {"op": "append", "path": "e.txt", "text": "body\n"},
            {"op": "prepend", "path": "e.txt", "text": "head\n"},
            {"op": "prepend", "path": "README.md", "text": "<!-- x -->\n"},
            {"op": "append", "path": "README.md", "text": "\nend\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    assert_eq!(ws.read("e.txt"), b"head\nbody\n");
    assert_eq!(
        ws.read("README.md"),
        b"<!-- x -->\n# sample\n\nNo trailing newline\nend\n"
    );
    // MCP takes the same ops.
    let out = tools(&ws).call(
        "edit_preview",
        json!({"agent_id": "a", "edits": [{"op": "append", "path": "e.txt", "text": "more\n"}]}),
    );
    assert!(out.is_ok(), "{out:?}");
}

#[test]
fn utf16_and_utf32_files_are_refused_by_text_ops_naming_the_encoding() {
    let ws = workspace();
    // "@{\r\n}\r\n" in UTF-16LE with a BOM, as in the issue.
    let utf16: Vec<u8> = b"\xFF\xFE@\x00{\x00\r\x00\n\x00}\x00\r\x00\n\x00".to_vec();
    ws.write("w16.txt", &utf16);
    // Without a BOM: told by its NUL bytes.
    ws.write(
        "w16be.txt",
        b"\x00h\x00i\x00\n\x00t\x00h\x00e\x00r\x00e\x00\n",
    );
    ws.write("w32.txt", b"\xFF\xFE\x00\x00h\x00\x00\x00\n\x00\x00\x00");
    let before = ws.tree();
    for (path, encoding, evidence) in [
        ("w16.txt", "UTF-16LE", "byte-order mark"),
        ("w16be.txt", "UTF-16BE", "detected from its NUL bytes"),
        ("w32.txt", "UTF-32LE", "byte-order mark"),
    ] {
        for edit in [
            json!({"op": "replace_text", "path": path, "old": "@", "new": "#"}),
            json!({"op": "replace_lines", "path": path, "start": 2, "end": 2, "content": "x"}),
            json!({"op": "append", "path": path, "text": "x"}),
        ] {
            let e = refused(&ws, &json!({ "edits": [edit] }), 1, "unsupported_encoding");
            let m = message(&e);
            assert!(
                m.contains(&format!("the file is {encoding} ({evidence})")),
                "{m}"
            );
            assert!(
                m.contains("would corrupt it") && m.contains("replace_file"),
                "{m}"
            );
            assert!(!m.contains("use replace_lines"), "{m}");
        }
    }
    assert_eq!(ws.tree(), before);
    let e = mcp_refused(
        &ws,
        json!([{"op": "replace_text", "path": "w16.txt", "old": "@", "new": "#"}]),
    );
    assert_eq!(e.kind, "unsupported_encoding");
    assert!(
        e.message.contains("UTF-16LE") && e.hint.contains("content_base64"),
        "{e}"
    );
    // replace_file is the way.
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_file", "path": "w16.txt", "content_base64": "//4jAA=="}]}),
    );
    assert_eq!(code, 0, "{v}");
}

#[test]
fn non_ascii_text_into_a_legacy_encoded_file_is_refused() {
    let ws = workspace();
    ws.write("latin1.txt", b"caf\xE9 = 1\n");
    let before = ws.tree();
    let e = refused(
        &ws,
        &json!({"edits": [{"op": "insert_after", "path": "latin1.txt", "anchor": "1", "text": " # déjà"}]}),
        1,
        "encoding_mismatch",
    );
    let m = message(&e);
    assert!(
        m.contains("edit #1 (insert_after in latin1.txt): the file is not UTF-8"),
        "{m}"
    );
    assert!(m.contains("two encodings") && m.contains("ASCII"), "{m}");
    assert_eq!(ws.tree(), before);
    let e = mcp_refused(
        &ws,
        json!([{"op": "replace_text", "path": "latin1.txt", "old": "1", "new": "ü"}]),
    );
    assert_eq!(e.kind, "encoding_mismatch");
    // ASCII text is fine: the other bytes stay as they are.
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "latin1.txt", "old": "1", "new": "2"}]}),
    );
    assert_eq!(code, 0, "{v}");
}

#[test]
fn a_utf8_bom_is_kept_by_replace_lines_on_line_one() {
    let ws = workspace();
    ws.write("bom.txt", b"\xEF\xBB\xBFfirst\nsecond\n");
    ws.write("bom2.txt", b"\xEF\xBB\xBFfirst\nsecond\n");
    let (code, v) = preview(
        &ws,
        &json!({"edits": [
            {"op": "replace_lines", "path": "bom.txt", "start": 1, "end": 1, "content": "1st"},
            {"op": "replace_lines", "path": "bom2.txt", "start": 1, "end": 2, "content": "\u{feff}only\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    assert_eq!(ws.read("bom.txt"), b"\xEF\xBB\xBF1st\nsecond\n");
    // Content that starts with a BOM brings its own: still one.
    assert_eq!(ws.read("bom2.txt"), b"\xEF\xBB\xBFonly\n");
}

#[test]
fn not_found_says_when_line_endings_or_the_final_newline_differ() {
    let ws = workspace();
    // crlf.txt is "one\r\ntwo\r\nthree\r\n"; README.md has no final newline.
    let e = refused(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "crlf.txt", "old": "one\ntwo\n", "new": "1\n2\n"}]}),
        6,
        "target_not_found",
    );
    let m = message(&e);
    assert!(
        m.contains("the file's lines end with CRLF (\\r\\n) but the text uses LF (\\n), and with \\r\\n it matches"),
        "{m}"
    );
    assert!(m.contains("write each line ending as \\r\\n"), "{m}");
    let e = refused(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "README.md", "old": "trailing newline\n", "new": "x\n"}]}),
        6,
        "target_not_found",
    );
    let m = message(&e);
    assert!(
        m.contains("the file has no final newline") && m.contains("drop the trailing \\n"),
        "{m}"
    );
    let e = mcp_refused(
        &ws,
        json!([{"op": "insert_after", "path": "crlf.txt", "anchor": "two\n", "text": "x"}]),
    );
    assert_eq!(e.kind, "target_not_found");
    assert!(e.message.contains("CRLF"), "{e}");
}

#[test]
fn not_found_names_the_shared_base_when_an_earlier_edit_creates_the_text() {
    let ws = workspace();
    let edits = json!([
        {"op": "insert_after", "path": "src/lib.rs", "anchor": "pub mod b;\n", "text": "pub mod c;\n"},
        {"op": "replace_text", "path": "src/lib.rs", "old": "pub mod c;", "new": "pub(crate) mod c;"},
    ]);
    let e = refused(&ws, &json!({ "edits": edits }), 6, "target_not_found");
    let m = message(&e);
    assert!(m.starts_with("edit #2 (replace_text in src/lib.rs)"), "{m}");
    assert!(
        m.contains(
            "edit #1 of this plan inserts that text, but all edits of a plan see the same base"
        ),
        "{m}"
    );
    assert!(m.contains("edit #2 cannot target it"), "{m}");
    assert_eq!(e["failures"][0]["edit"], 2);
    let e = mcp_refused(&ws, edits);
    assert_eq!(e.kind, "target_not_found");
    assert!(e.message.contains("same base"), "{e}");
    assert_eq!(e.to_json()["failures"][0]["edit"], 2);
}

#[test]
fn usage_errors_under_json_are_the_documented_error_object() {
    let ws = workspace();
    for args in [
        &["--json", "commit", "abc"][..],
        &["commit", "abc", "--json"],
        &["--json", "frobnicate"],
    ] {
        let out = cli(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = json_of(&out);
        assert_eq!(v["error"]["kind"], "usage", "{args:?}: {v}");
        assert_eq!(v["error"]["exit_code"], 2);
        assert!(!message(&v["error"]).is_empty());
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let v = json_of(&cli(ws.root(), &["--json", "commit", "abc"], None));
    assert!(
        message(&v["error"]).contains("\"abc\" is not a transaction id"),
        "{v}"
    );
    // Without --json: the message on stderr only.
    let out = cli(ws.root(), &["commit", "abc"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    // --help and --version still succeed.
    assert_eq!(
        cli(ws.root(), &["--json", "--version"], None).status.code(),
        Some(0)
    );
}

#[test]
fn gc_dry_run_lists_what_would_go_and_changes_nothing() {
    let ws = workspace();
    let mut txs = Vec::new();
    for n in 0..2 {
        let plan = json!({"agent": "ag", "description": format!("c{n}"), "edits": [
            {"op": "append", "path": "README.md", "text": format!("\n{n}")}]});
        let (code, v) = preview(&ws, &plan);
        assert_eq!(code, 0, "{v}");
        let tx = v["tx"].as_u64().unwrap();
        assert!(cli(ws.root(), &["commit", &tx.to_string()], None)
            .status
            .success());
        txs.push(tx);
    }
    std::thread::sleep(std::time::Duration::from_millis(5));
    let dump = || cli(ws.root(), &["--json", "journal", "dump"], None).stdout;
    let before = dump();
    let out = cli(
        ws.root(),
        &["--json", "journal", "gc", "--keep-days", "0", "--dry-run"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["removed"]["txs_pruned"], 2);
    assert_eq!(v["rollbacks_lost"], json!(txs));
    assert_eq!(v["pruned"][1]["description"], "c1");
    assert_eq!(v["pruned"][1]["loses_rollback"], true);
    assert_eq!(dump(), before, "a dry run records nothing");
    let text = cli(
        ws.root(),
        &["journal", "gc", "--keep-days", "0", "--dry-run"],
        None,
    );
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.contains(&format!(
            "would prune tx {} (committed, can no longer be rolled back) [ag] c1",
            txs[1]
        )),
        "{text}"
    );
    assert!(text.contains("nothing was changed"), "{text}");
    // The latest commit can still be rolled back; a real gc then says it no longer can.
    let out = cli(
        ws.root(),
        &["--json", "journal", "gc", "--keep-last", "1"],
        None,
    );
    let v = json_of(&out);
    assert_eq!(v["dry_run"], false);
    assert_eq!(v["rollbacks_lost"], json!([txs[0]]));
    assert!(cli(ws.root(), &["rollback", &txs[1].to_string()], None)
        .status
        .success());
}

#[cfg(feature = "failpoints")]
#[test]
fn recover_counts_every_temp_it_deletes() {
    let ws = workspace();
    let plan = json!({"edits": [
        {"op": "replace_text", "path": "src/lib.rs", "old": "    1\n", "new": "    11\n"},
        {"op": "replace_file", "path": "run.sh", "content": "#!/bin/sh\necho bye\n"},
        {"op": "create_file", "path": "gen/x.rs", "content": "// x\n"},
        {"op": "append", "path": "src/a.rs", "text": "// end\n"}]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    let out = run_ue(
        ws.root(),
        &["commit", &tx],
        Some("batch::after_stage=return"),
    );
    assert!(!out.status.success(), "the commit was meant to die");
    let temps = |dir: &std::path::Path| -> usize {
        walkdir(dir)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(".ue-") && n.ends_with(".tmp"))
            })
            .count()
    };
    let staged = temps(ws.root());
    assert_eq!(staged, 4, "one staged temp per written file");
    let out = run_ue(ws.root(), &["--json", "recover"], None);
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    assert_eq!(v["temps_removed"], staged, "{v}");
    assert_eq!(temps(ws.root()), 0);
    assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho bye\n");
}

/// Every file under `dir`, `.ultra-edit/` excluded.
#[cfg(feature = "failpoints")]
fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().is_some_and(|n| n == ".ultra-edit") {
            continue;
        }
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}
