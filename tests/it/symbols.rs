//! Symbol ops (docs/symbols.md) and syntax validation through the CLI (`--json`) and
//! the MCP tools: the failing inputs of agents' symbol-editing tools, with exact bytes.

use std::sync::Arc;

use serde_json::{json, Value};
use ultra_edit::mcp::EditTools;
use ultra_edit::Journal;

use crate::support::*;

/// `--json preview` of `plan`: (exit code, the printed object).
fn preview(ws: &Ws, plan: &Value) -> (i32, Value) {
    let out = cli(ws.root(), &["--json", "preview"], Some(&plan.to_string()));
    (out.status.code().unwrap_or(-1), json_of(&out))
}

/// Previews `edits` with the CLI and commits them; returns the preview's object.
fn cli_commit(ws: &Ws, edits: Value) -> Value {
    let (code, v) = preview(ws, &json!({"edits": edits}));
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"]
        .as_u64()
        .unwrap_or_else(|| panic!("no tx: {v}"))
        .to_string();
    let out = cli(ws.root(), &["--json", "commit", &tx], None);
    assert_eq!(out.status.code(), Some(0), "{}", json_of(&out));
    v
}

fn tools(ws: &Ws) -> EditTools {
    EditTools::new(Arc::new(Journal::open(ws.root()).unwrap()))
}

/// Previews `edits` through MCP and commits them; returns the preview's result.
fn mcp_commit(ws: &Ws, edits: Value) -> Value {
    let tools = tools(ws);
    let v = tools
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .unwrap_or_else(|e| panic!("edit_preview refused: {e:?}"));
    let id = v["preview_id"].as_str().unwrap_or_default().to_string();
    tools
        .call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
        .unwrap_or_else(|e| panic!("edit_commit refused: {e:?}"));
    v
}

/// Runs one case both ways, each in a fresh workspace holding `path` = `before`,
/// and checks the committed bytes.
fn both_ways(path: &str, before: &[u8], edits: Value, after: &[u8]) -> (Value, Value) {
    let ws = workspace();
    ws.write(path, before);
    let by_cli = cli_commit(&ws, edits.clone());
    assert_eq!(
        String::from_utf8_lossy(&ws.read(path)),
        String::from_utf8_lossy(after),
        "CLI"
    );
    let ws = workspace();
    ws.write(path, before);
    let by_mcp = mcp_commit(&ws, edits);
    assert_eq!(
        String::from_utf8_lossy(&ws.read(path)),
        String::from_utf8_lossy(after),
        "MCP"
    );
    (by_cli, by_mcp)
}

#[test]
fn python_decorator_is_kept_by_replace_symbol() {
    both_ways(
        "cache.py",
        b"@lru_cache(maxsize=8)\ndef load(path):\n    return read(path)\n\n\ndef save(path, data):\n    write(path, data)\n",
        json!([{"op": "replace_symbol", "path": "cache.py", "symbol": "load",
                "content": "def load(path):\n    return read(path) or {}\n"}]),
        b"@lru_cache(maxsize=8)\ndef load(path):\n    return read(path) or {}\n\n\ndef save(path, data):\n    write(path, data)\n",
    );
}

#[test]
fn python_multi_line_constant_is_not_split_by_insert_after_symbol() {
    both_ways(
        "settings.py",
        b"SOME_CONFIG = {\n    \"a\": {\n        \"v\": 1,\n    },\n}\n\n\ndef f():\n    return 1\n",
        json!([{"op": "insert_after_symbol", "path": "settings.py", "symbol": "SOME_CONFIG", "text": "NEW = 2\n"}]),
        b"SOME_CONFIG = {\n    \"a\": {\n        \"v\": 1,\n    },\n}\nNEW = 2\n\n\ndef f():\n    return 1\n",
    );
}

#[test]
fn tsx_nested_function_is_replaced_not_prepended() {
    let (by_cli, by_mcp) = both_ways(
        "History.tsx",
        b"export const History: FC = () => {\n  const render = () => {\n    return 'hello';\n  };\n\n  return <div>{render()}</div>;\n};\n",
        json!([{"op": "replace_symbol", "path": "History.tsx", "symbol": "History.render",
                "content": "  const render = () => {\n    return 'bye';\n  };\n"}]),
        b"export const History: FC = () => {\n  const render = () => {\n    return 'bye';\n  };\n\n  return <div>{render()}</div>;\n};\n",
    );
    // Only line 3 changes; the hunk header names the enclosing symbol.
    let diff = "--- a/History.tsx\n+++ b/History.tsx\n@@ -1,6 +1,6 @@ History.render\n export const History: FC = () => {\n   const render = () => {\n-    return 'hello';\n+    return 'bye';\n   };\n \n   return <div>{render()}</div>;\n";
    assert_eq!(by_cli["files"][0]["diff"]["unified"], diff, "{by_cli}");
    assert_eq!(by_mcp["diff"]["unified_diff"], diff, "{by_mcp}");
}

#[test]
fn rust_dropped_brace_is_a_syntax_error_and_commit_is_refused() {
    let ws = workspace();
    let before = b"fn main() {\n    if ready() {\n        go();\n    }\n}\n\nfn ready() -> bool {\n    true\n}\n";
    ws.write("src/main.rs", before);
    // The candidate drops the closing brace of the `if`.
    let plan = json!({"edits": [{"op": "replace_lines", "path": "src/main.rs", "start": 4, "end": 4, "content": ""}]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 4, "{v}");
    let issues: Vec<&Value> = v["validation"].as_array().unwrap().iter().collect();
    assert_eq!(issues.len(), 1, "{v}");
    assert_eq!(issues[0]["code"], "syntax_error");
    assert_eq!(issues[0]["severity"], "error");
    assert_eq!(issues[0]["path"], "src/main.rs");
    assert_eq!(
        issues[0]["message"],
        "src/main.rs line 1, column 1: the candidate does not parse as Rust (1 parse error, the \
         first from line 1 through line 8; the bracket at line 2, column 16 looks unclosed; \
         the file parsed cleanly before); fix the edit, or, if the file is meant to be broken \
         for now, allow it with the plan's \"policy\": {\"syntax_errors\": \"allow\"} (CLI: \
         --allow syntax_error)"
    );
    let tx = v["tx"].as_u64().unwrap().to_string();
    let out = cli(ws.root(), &["--json", "commit", &tx], None);
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(json_of(&out)["error"]["kind"], "validation_failed");
    assert_eq!(ws.read("src/main.rs"), before);
    // Through MCP the preview is not ready to commit, and the commit is refused.
    let tools = tools(&ws);
    let v = tools
        .call(
            "edit_preview",
            json!({"agent_id": "a", "edits": plan["edits"]}),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(v["validation"]["ready_to_commit"], false, "{v}");
    let id = v["preview_id"].as_str().unwrap_or_default().to_string();
    let e = tools
        .call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
        .err()
        .unwrap_or_else(|| panic!("commit of a broken candidate succeeded"));
    assert_eq!(e.kind, "validation_failed");
    assert_eq!(ws.read("src/main.rs"), before);
    // MCP's "allow" argument makes it a warning.
    let v = tools
        .call(
            "edit_preview",
            json!({"agent_id": "b", "edits": plan["edits"], "allow": ["syntax_error"]}),
        )
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(v["validation"]["ready_to_commit"], true, "{v}");
    assert_eq!(v["validation_issues"][0]["severity"], "warning", "{v}");
    let id = v["preview_id"].as_str().unwrap_or_default().to_string();
    tools
        .call("edit_abort", json!({"preview_id": id, "agent_id": "b"}))
        .unwrap_or_else(|e| panic!("{e:?}"));
    // A plan whose policy allows it gets a warning, and the commit goes through.
    let mut allowed = plan.clone();
    allowed["policy"] = json!({"syntax_errors": "allow"});
    let (code, v) = preview(&ws, &allowed);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["validation"][0]["code"], "syntax_error");
    assert_eq!(v["validation"][0]["severity"], "warning");
    let message = v["validation"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with(
            "(allowed by the policy's \"syntax_errors\": \"allow\", so it does not block a commit)"
        ),
        "{message}"
    );
    let tx = v["tx"].as_u64().unwrap().to_string();
    assert_eq!(
        cli(ws.root(), &["commit", &tx], None).status.code(),
        Some(0)
    );
    assert_eq!(
        ws.read("src/main.rs"),
        b"fn main() {\n    if ready() {\n        go();\n}\n\nfn ready() -> bool {\n    true\n}\n"
    );
    // The file is now broken: a further edit that adds an error is only a warning.
    let plan = json!({"edits": [{"op": "prepend", "path": "src/main.rs", "text": "struct ;\n"}]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["validation"][0]["code"], "syntax_errors_increased", "{v}");
    assert_eq!(v["validation"][0]["severity"], "warning");
    // The command's --allow does the same as the plan's policy.
    ws.write("src/ok.rs", b"fn ok() {}\n");
    let broken = json!({"edits": [{"op": "append", "path": "src/ok.rs", "text": "fn (\n"}]});
    let (code, _) = preview(&ws, &broken);
    assert_eq!(code, 4);
    let out = cli(
        ws.root(),
        &["--json", "preview", "--allow", "syntax_error"],
        Some(&broken.to_string()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", json_of(&out));
    let v = json_of(&out);
    assert_eq!(
        (&v["validation"][0]["code"], &v["validation"][0]["severity"]),
        (&json!("syntax_error"), &json!("warning")),
        "{v}"
    );
    // Any other code is a usage error (exit 2, as clap's), which says what else
    // allows the rest.
    let txs = ws.journal.log(None).unwrap().len();
    let out = cli(
        ws.root(),
        &["--json", "preview", "--allow", "no_changes"],
        Some(&plan.to_string()),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        json_of(&out)["error"],
        json!({
            "kind": "usage",
            "exit_code": 2,
            "message": "invalid value 'no_changes' for '--allow <CODE>': not a \
                validation error --allow can allow; those are syntax_error and check_failed (a merge \
                conflict must be resolved; conflict markers and an empty revision must be \
                fixed, or allowed by a policy: the plan's own \"policy\" field, see \
                `ultra-edit help plan`, or the journal's)",
            "hint": "`ultra-edit preview --help` describes its arguments"
        })
    );
    assert_eq!(ws.journal.log(None).unwrap().len(), txs, "nothing recorded");
    // The policy takes only "refuse" or "allow".
    let (code, v) = preview(
        &ws,
        &json!({"policy": {"syntax_errors": "warn"}, "edits": plan["edits"]}),
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (1, Some("invalid_plan")),
        "{v}"
    );
}

/// Files of other languages are not parsed: broken JSON-like text in a .txt file is
/// no syntax error.
#[test]
fn unknown_languages_are_not_parsed() {
    let ws = workspace();
    ws.write("notes.txt", b"fn main() {\n}\n");
    let plan = json!({"edits": [{"op": "replace_lines", "path": "notes.txt", "start": 2, "end": 2, "content": ""}]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["validation"], json!([]), "{v}");
}

#[test]
fn ambiguous_symbol_lists_candidates_through_cli_and_mcp() {
    let ws = workspace();
    ws.write(
        "o.ts",
        b"function f(a: string): void;\nfunction f(a: number): void;\nfunction f(a: any) {\n  return a;\n}\n",
    );
    let edits = json!([{"op": "delete_symbol", "path": "o.ts", "symbol": "f"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "ambiguous_symbol");
    let candidates = json!([
        {"kind": "function", "start_line": 1, "end_line": 1, "matched": "exact_path", "score": 100},
        {"kind": "function", "start_line": 2, "end_line": 2, "matched": "exact_path", "score": 100},
        {"kind": "function", "start_line": 3, "end_line": 5, "matched": "exact_path", "score": 100},
    ]);
    assert_eq!(v["error"]["failures"][0]["candidates"], candidates, "{v}");
    assert_eq!(v["error"]["failures"][0]["lines"], json!([1, 2, 3]));
    let e = tools(&ws)
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .err()
        .unwrap_or_else(|| panic!("ambiguous symbol accepted"));
    assert_eq!(e.kind, "ambiguous_symbol");
    assert_eq!(e.detail["failures"][0]["candidates"], candidates, "{e:?}");
    // occurrence picks the definition with the body.
    let edits = json!([{"op": "delete_symbol", "path": "o.ts", "symbol": "f", "occurrence": 3}]);
    cli_commit(&ws, edits);
    assert_eq!(
        ws.read("o.ts"),
        b"function f(a: string): void;\nfunction f(a: number): void;\n"
    );
}

/// The rules of item 1 through the CLI: trivia stays on replace, goes on delete,
/// insert_before goes above it; CRLF and BOM stay.
#[test]
fn rust_trivia_and_crlf_through_the_cli() {
    let before = "\u{feff}use std::fs;\r\n\r\n/// Opens the journal.\r\n#[inline]\r\npub fn open() -> u8 {\r\n    1\r\n}\r\n\r\nimpl Journal {\r\n    fn close(&self) {}\r\n}\r\n";
    both_ways(
        "j.rs",
        before.as_bytes(),
        json!([
            {"op": "replace_symbol", "path": "j.rs", "symbol": "open", "content": "pub fn open() -> u8 {\r\n    2\r\n}"},
            {"op": "insert_after_symbol", "path": "j.rs", "symbol": "Journal.close", "text": "    fn flush(&self) {}"},
        ]),
        "\u{feff}use std::fs;\r\n\r\n/// Opens the journal.\r\n#[inline]\r\npub fn open() -> u8 {\r\n    2\r\n}\r\n\r\nimpl Journal {\r\n    fn close(&self) {}\r\n    fn flush(&self) {}\r\n}\r\n".as_bytes(),
    );
    both_ways(
        "j.rs",
        before.as_bytes(),
        json!([
            {"op": "delete_symbol", "path": "j.rs", "symbol": "open"},
            {"op": "insert_before_symbol", "path": "j.rs", "symbol": "Journal", "text": "struct Journal;\r\n"},
        ]),
        "\u{feff}use std::fs;\r\n\r\n\r\nstruct Journal;\r\nimpl Journal {\r\n    fn close(&self) {}\r\n}\r\n".as_bytes(),
    );
}

#[test]
fn go_and_javascript_through_mcp() {
    both_ways(
        "j.go",
        b"package j\n\n// Open opens.\nfunc (j *Journal) Open() error {\n\treturn nil\n}\n\nfunc main() {}\n",
        json!([{"op": "replace_symbol", "path": "j.go", "symbol": "Journal.Open", "content": "func (j *Journal) Open() error {\n\treturn j.open()\n}\n"}]),
        b"package j\n\n// Open opens.\nfunc (j *Journal) Open() error {\n\treturn j.open()\n}\n\nfunc main() {}\n",
    );
    both_ways(
        "k.js",
        b"class K {\n  /** m */\n  m() {\n    return 1;\n  }\n\n  n() {}\n}\n",
        json!([{"op": "delete_symbol", "path": "k.js", "symbol": "K.m"}]),
        b"class K {\n\n  n() {}\n}\n",
    );
}

#[test]
fn symbol_errors_exit_with_their_kinds() {
    let ws = workspace();
    ws.write("a.rs", b"const A: u8 = 1; const B: u8 = 2;\n");
    ws.write("notes.txt", b"a\n");
    let cases = [
        (
            json!({"op": "delete_symbol", "path": "a.rs", "symbol": "B"}),
            6,
            "symbol_not_splicable",
        ),
        (
            json!({"op": "delete_symbol", "path": "a.rs", "symbol": "C"}),
            6,
            "symbol_not_found",
        ),
        (
            json!({"op": "delete_symbol", "path": "notes.txt", "symbol": "a"}),
            1,
            "unsupported_language",
        ),
        (
            json!({"op": "delete_symbol", "path": "a.rs", "symbol": "A..b"}),
            1,
            "invalid_plan",
        ),
        (
            json!({"op": "replace_symbol", "path": "a.rs", "symbol": "A", "content": ""}),
            1,
            "invalid_plan",
        ),
    ];
    for (edit, code, kind) in cases {
        let (got, v) = preview(&ws, &json!({"edits": [edit]}));
        assert_eq!(
            (got, v["error"]["kind"].as_str()),
            (code, Some(kind)),
            "{v}"
        );
    }
    assert_eq!(ws.read("a.rs"), b"const A: u8 = 1; const B: u8 = 2;\n");
}

// Issue 33 items 1-4 (symbol edits and line endings), through the CLI and MCP.

const PY_ACCOUNT: &[u8] = b"class Account:\n    def bump(self):\n        self.n += 1\n\n    def next(self):\n        return self.n\n";

/// Item 1: a method's content written at column 0 is moved to the method's depth; it
/// stays in its class, and the method after it stays a method.
#[test]
fn issue33_method_content_at_column_0_stays_in_its_class() {
    both_ways(
        "account.py",
        PY_ACCOUNT,
        json!([{"op": "replace_symbol", "path": "account.py", "symbol": "Account.bump",
                "content": "def bump(self):\n    self.n += 2\n"}]),
        b"class Account:\n    def bump(self):\n        self.n += 2\n\n    def next(self):\n        return self.n\n",
    );
}

/// Item 1: a result that moves a definition to another scope is refused
/// (`symbol_scope_changed`, exit 6), naming what moved, and nothing changes; Python
/// text at no one depth is `indentation_mismatch`; a misspelt member gets its class's
/// members.
#[test]
fn issue33_scope_changes_and_indentation_mismatches_are_refused() {
    let ws = workspace();
    let ts = b"class K {\n  m() {}\n  n() {}\n}\n";
    ws.write("k.ts", ts);
    let edits = json!([{"op": "replace_symbol", "path": "k.ts", "symbol": "K.m",
                        "content": "  m() {}\n}\nclass L {\n"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "symbol_scope_changed", "{v}");
    let failure = &v["error"]["failures"][0];
    assert_eq!(failure["kind"], "symbol_scope_changed");
    assert_eq!(failure["edit"], 1);
    assert_eq!(failure["lines"], json!([5]));
    let message = failure["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"K.n\" would become \"L.n\"; the new text's \"L\" would be in the top level, not in \"K\""),
        "{message}"
    );
    let e = tools(&ws)
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .err()
        .unwrap_or_else(|| panic!("scope change accepted"));
    assert_eq!(e.kind, "symbol_scope_changed");
    assert_eq!(e.detail["failures"][0]["lines"], json!([5]), "{e:?}");
    assert_eq!(ws.read("k.ts"), ts);

    ws.write("account.py", PY_ACCOUNT);
    let edits = json!([{"op": "replace_symbol", "path": "account.py", "symbol": "Account.bump",
                        "content": "    def bump(self):\n  x = 1\n"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "indentation_mismatch", "{v}");
    assert_eq!(v["error"]["failures"][0]["lines"], json!([2]), "{v}");
    let e = tools(&ws)
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .err()
        .unwrap_or_else(|| panic!("indentation mismatch accepted"));
    assert_eq!(e.kind, "indentation_mismatch");

    let edits = json!([{"op": "delete_symbol", "path": "account.py", "symbol": "Account.bmup"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "symbol_not_found", "{v}");
    let message = v["error"]["failures"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("did you mean \"Account.bump\"? the members of \"Account\" are \"Account.bump\", \"Account.next\""),
        "{message}"
    );
    assert_eq!(ws.read("account.py"), PY_ACCOUNT);
}

/// Item 2: deleting a class's only method leaves `pass`, which Python needs.
#[test]
fn issue33_deleting_the_only_method_leaves_pass() {
    both_ways(
        "a.py",
        b"class A:\n    def f(self):\n        pass\n\n\nx = 1\n",
        json!([{"op": "delete_symbol", "path": "a.py", "symbol": "A.f"}]),
        b"class A:\n    pass\n\n\nx = 1\n",
    );
}

/// Item 3: the comment on a block's first line goes with its definition; trailing
/// comment lines stay on replace.
#[test]
fn issue33_block_opening_and_trailing_comments() {
    both_ways(
        "a.py",
        b"if X:\n    # about f\n    def f():\n        pass\n    y = 1\n",
        json!([{"op": "delete_symbol", "path": "a.py", "symbol": "f"}]),
        b"if X:\n    y = 1\n",
    );
    both_ways(
        "b.py",
        b"def f():\n    x = 1\n    # trailing\ny = 2\n",
        json!([{"op": "replace_symbol", "path": "b.py", "symbol": "f",
                "content": "def f():\n    x = 2\n"}]),
        b"def f():\n    x = 2\n    # trailing\ny = 2\n",
    );
}

/// Item 4: symbol text takes a uniform file's line endings; a text op that mixes
/// them is previewed with the warning `mixed_line_endings`, naming the lines.
#[test]
fn issue33_line_endings_are_converted_or_warned() {
    both_ways(
        "x.rs",
        b"fn a() {}\r\nfn b() {}\r\n",
        json!([{"op": "replace_symbol", "path": "x.rs", "symbol": "b",
                "content": "fn b() {\n    1\n}\n"}]),
        b"fn a() {}\r\nfn b() {\r\n    1\r\n}\r\n",
    );
    let ws = workspace();
    ws.write("n.txt", b"one\r\ntwo\r\n");
    let edits =
        json!([{"op": "insert_after", "path": "n.txt", "anchor": "one\r\n", "text": "new\n"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 0, "{v}");
    let warning = json!({"code": "mixed_line_endings", "severity": "warning", "path": "n.txt",
        "message": "n.txt: every line ended with CRLF (\\r\\n) before this revision, but line 2 of the candidate ends with LF (\\n); write the new text with CRLF (\\r\\n) line endings (symbol ops convert it themselves), or keep this if the mix is meant"});
    assert_eq!(v["validation"], json!([warning.clone()]), "{v}");
    let r = tools(&ws)
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(r["validation_issues"], json!([warning]), "{r}");
}

/// The target ops (docs/symbols.md, "Target modes") in a plan, through the CLI and the
/// MCP plan form, each committed with exact bytes.
#[test]
fn target_ops_commit_through_cli_and_mcp() {
    let before = b"/// Loads.\n#[inline]\nfn load() -> u8 {\n    1\n}\n\nenum E {\n    A,\n    B\n}\n\nfn pick(e: E) -> u8 {\n    match e {\n        E::A => 1,\n        E::B => 2,\n    }\n}\n";
    let edits = json!([
        {"op": "replace_body", "path": "t.rs", "symbol": "load", "content": "let x = 2;\nx\n"},
        {"op": "insert_variant", "path": "t.rs", "symbol": "E", "text": "C", "position": "last"},
        {"op": "replace_arm", "path": "t.rs", "symbol": "pick", "pattern": "E::B", "content": "E::B => 3"}
    ]);
    let after = b"/// Loads.\n#[inline]\nfn load() -> u8 {\n    let x = 2;\n    x\n}\n\nenum E {\n    A,\n    B,\n    C\n}\n\nfn pick(e: E) -> u8 {\n    match e {\n        E::A => 1,\n        E::B => 3,\n    }\n}\n";
    both_ways("t.rs", before, edits, after);
    let before = b"class Point:\n    x: int = 0\n";
    let edits = json!([{"op": "insert_field", "path": "p.py", "symbol": "Point", "text": "y: int = 0", "position": {"after": "x"}}]);
    both_ways(
        "p.py",
        before,
        edits,
        b"class Point:\n    x: int = 0\n    y: int = 0\n",
    );
}

#[test]
fn target_op_refusals_are_typed_through_cli_and_mcp() {
    let ws = workspace();
    ws.write("t.rs", b"trait T {\n    fn m(&self);\n}\n");
    let edits = json!([{"op": "replace_body", "path": "t.rs", "symbol": "T.m", "content": "x()"}]);
    let (code, v) = preview(&ws, &json!({"edits": edits}));
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "no_body", "{v}");
    assert_eq!(v["error"]["failures"][0]["lines"], json!([2]), "{v}");
    let e = tools(&ws)
        .call("edit_preview", json!({"agent_id": "a", "edits": edits}))
        .err()
        .unwrap_or_else(|| panic!("bodiless replace_body accepted"));
    assert_eq!(e.kind, "no_body");
    assert_eq!(ws.read("t.rs"), b"trait T {\n    fn m(&self);\n}\n");
}
