//! Issue 33, items 5, 6, 7, 15 and 16: near misses named with their line or the
//! existing name, permissions seen at preview time, interdiffs after a rebase, and
//! conflicts that say what they are. Each test asserts exact values through the CLI
//! (`--json`) and, where the item concerns both, the MCP tools.

use std::sync::Arc;

use serde_json::{json, Value};
use ultra_edit::mcp::{EditTools, ToolError};
use ultra_edit::Journal;

use crate::support::*;

/// `--json` run of `args` with `stdin`: (exit code, the printed object).
fn run(ws: &Ws, args: &[&str], stdin: Option<&str>) -> (i32, Value) {
    let out = cli(ws.root(), args, stdin);
    (out.status.code().unwrap_or(-1), json_of(&out))
}

/// `--json preview` of `plan`.
fn preview(ws: &Ws, plan: &Value) -> (i32, Value) {
    run(ws, &["--json", "preview"], Some(&plan.to_string()))
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

/// The validation issue `code` of a revision printed as JSON (`validation`, or MCP's
/// `validation_issues`).
fn issue(v: &Value, code: &str) -> Value {
    let list = v["validation"]
        .as_array()
        .or_else(|| v["validation_issues"].as_array())
        .cloned()
        .unwrap_or_default();
    list.into_iter()
        .find(|i| i["code"] == code)
        .unwrap_or_else(|| panic!("no {code} issue in {v}"))
}

// ---- item 5: text not found, with a near match ------------------------------------

#[test]
fn not_found_names_tabs_against_spaces_and_trailing_whitespace_with_the_line() {
    let ws = workspace();
    ws.write("tabs.py", b"class A:\n\tdef f(self):\n\t\treturn 1\n");
    ws.write("trail.txt", b"a = 1\nb = 2  \nc = 3\n");
    let plan = json!({"edits": [
        {"op": "replace_text", "path": "tabs.py", "old": "    def f(self):\n        return 1\n", "new": "x\n"},
    ]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "target_not_found");
    let m = message(&v["error"]);
    assert!(
        m.contains(
            "the text matches the file at line 2 except for indentation (tabs against \
             spaces): the file indents line 2 with 1 tab (\"\\t\"), the text with 4 spaces \
             (\"    \")"
        ),
        "{m}"
    );
    let e = mcp_refused(&ws, plan["edits"].clone());
    assert_eq!(e.kind, "target_not_found");
    assert!(
        e.message.contains("at line 2 except for indentation"),
        "{e}"
    );

    let plan = json!({"edits": [
        {"op": "insert_after", "path": "trail.txt", "anchor": "b = 2\nc = 3\n", "text": "d = 4\n"},
    ]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 6, "{v}");
    let m = message(&v["error"]);
    assert!(
        m.contains(
            "the text matches the file at line 2 except for trailing whitespace: line 2 of \
             the file ends with 2 spaces (\"  \"), the text's line with no trailing whitespace"
        ),
        "{m}"
    );
    let e = mcp_refused(&ws, plan["edits"].clone());
    assert!(
        e.message.contains("line 2 of the file ends with 2 spaces"),
        "{e}"
    );
}

#[test]
fn not_found_names_a_target_spanning_an_earlier_edits_output_and_the_base() {
    let ws = workspace();
    // src/lib.rs is "pub mod a;\npub mod b;\n\nfn helper() …": edit #2's target starts
    // in edit #1's new text and ends in the file's own line 2.
    let edits = json!([
        {"op": "replace_text", "path": "src/lib.rs", "old": "pub mod a;\n", "new": "pub mod aa;\n"},
        {"op": "replace_text", "path": "src/lib.rs", "old": "mod aa;\npub mod b;", "new": "x"},
    ]);
    let (code, v) = preview(&ws, &json!({ "edits": edits }));
    assert_eq!(code, 6, "{v}");
    let m = message(&v["error"]);
    assert!(
        m.contains(
            "edit #1 of this plan inserts part of that text: the target spans its new text \
             and the file's text next to it, but all edits of a plan see the same base"
        ),
        "{m}"
    );
    assert!(m.contains("(edit #1 applies at line 1 of the file)"), "{m}");
    assert_eq!(v["error"]["failures"][0]["edit"], 2, "{v}");
    let e = mcp_refused(&ws, edits);
    assert!(e.message.contains("inserts part of that text"), "{e}");
}

// ---- item 15: interdiff after a rebase ----------------------------------------------

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn interdiff_after_a_rebase_shows_only_the_revisions_own_change() {
    let ws = workspace();
    ws.write("f.txt", numbered(10).as_bytes());
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_lines", "path": "f.txt", "start": 2, "end": 2, "content": "TWO\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    // The disk moves: line 9.
    ws.write(
        "f.txt",
        numbered(10).replace("line 9\n", "DISK 9\n").as_bytes(),
    );
    let (code, v) = run(&ws, &["--json", "rebase", &tx], None);
    assert_eq!(code, 0, "{v}");
    // Revision 1 is revision 0's change on the new disk: it changed nothing of its own.
    let (code, d) = run(
        &ws,
        &["--json", "show", &tx, "--from", "0", "--to", "1"],
        None,
    );
    assert_eq!(code, 0, "{d}");
    assert_eq!(d["files"], json!([]), "{d}");
    assert_eq!(
        (d["lines_added"].clone(), d["lines_removed"].clone()),
        (json!(0), json!(0))
    );
    // A revise after it: the interdiff 0 → 2 is line 5 alone, never the disk's line 9.
    let (code, v) = run(
        &ws,
        &["--json", "revise", &tx],
        Some(
            r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":5,"end":5,"content":"FIVE\n"}]}"#,
        ),
    );
    assert_eq!(code, 0, "{v}");
    let (_, d) = run(
        &ws,
        &["--json", "show", &tx, "--from", "0", "--to", "2"],
        None,
    );
    assert_eq!(d["files"][0]["rebased"], true, "{d}");
    assert_eq!(
        d["files"][0]["diff"]["unified"],
        "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n TWO\n line 3\n line 4\n-line 5\n+FIVE\n line 6\n line 7\n line 8\n",
        "{d}"
    );
    // MCP's edit_show with from_revision gives the same.
    let id = tools(&ws)
        .call("edit_show", json!({"agent_id": "cli", "preview_id": tx}))
        .map(|v| v["preview_id"].clone())
        .unwrap_or(json!(tx));
    let v = tools(&ws)
        .call(
            "edit_show",
            json!({"agent_id": "cli", "preview_id": id, "revision": 1, "from_revision": 0}),
        )
        .unwrap();
    assert_eq!(v["interdiff"]["files"], json!([]), "{v}");
}

// ---- item 16: conflicts say what they are -------------------------------------------

#[test]
fn a_binary_conflict_names_the_binary_side() {
    let ws = workspace();
    ws.write("data.txt", b"a\nb\n");
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "data.txt", "old": "a\n", "new": "A\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    ws.write("data.txt", b"\x00\x01binary\n");
    let (code, v) = run(&ws, &["--json", "rebase", &tx], None);
    assert_eq!(code, 4, "{v}");
    assert_eq!(
        v["conflict_list"][0]["reason"],
        "both sides changed the file and only the disk side is binary (candidate: text, \
         snapshot: text, disk: binary), so it is not merged line by line; the candidate \
         keeps its bytes (the candidate side's)",
        "{v}"
    );
    assert_eq!(v["conflict_list"][0]["path"], "data.txt");
    assert_eq!(v["conflict_list"][0]["lossy"], false);
}

#[test]
fn conflict_regions_of_text_that_is_not_utf8_are_marked_lossy() {
    let ws = workspace();
    ws.write("latin.txt", b"x\n\xe9t\xe9\ny\n");
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_lines", "path": "latin.txt", "start": 2, "end": 2, "content": "OURS\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    ws.write("latin.txt", b"x\nDISK \xe9\ny\n");
    let (code, v) = run(&ws, &["--json", "rebase", &tx], None);
    assert_eq!(code, 4, "{v}");
    let entry = &v["conflict_list"][0];
    assert_eq!(entry["lossy"], true, "{v}");
    assert_eq!(
        entry["reason"],
        "both sides changed the same lines; the text is not valid UTF-8, so the conflict's \
         ours/base/theirs text is lossy (U+FFFD stands for bytes that are not UTF-8); the \
         candidate holds the exact bytes between its markers (snapshot, disk not valid UTF-8)",
        "{v}"
    );
    assert_eq!(
        (entry["start_line"].clone(), entry["end_line"].clone()),
        (json!(2), json!(8))
    );
    assert_eq!(v["conflicts"][0]["regions"][0]["theirs"], "DISK \u{FFFD}\n");
    // MCP's edit_show gives the same list.
    let p = tools(&ws)
        .call("edit_show", json!({"agent_id": "cli", "preview_id": tx}))
        .unwrap();
    assert_eq!(p["conflict_list"][0]["lossy"], true, "{p}");
}

#[test]
fn a_rebase_onto_a_disk_that_holds_the_change_says_so_and_what_to_do() {
    let ws = workspace();
    ws.write("same.txt", b"a\nb\n");
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "replace_text", "path": "same.txt", "old": "a\n", "new": "A\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    let tx = v["tx"].as_u64().unwrap();
    // Someone made the same change on disk.
    ws.write("same.txt", b"A\nb\n");
    let out = cli(ws.root(), &["--json", "rebase", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    let nothing = issue(&v, "no_changes");
    assert_eq!(
        nothing["message"],
        format!(
            "the disk already holds this transaction's change: merged onto the disk, the \
             candidate equals what the files hold now (someone made the same change), so \
             there is nothing to commit; abort tx {tx} (`ultra-edit abort {tx}`, MCP \
             edit_abort) to close it, or leave it: an open tx writes nothing to the files"
        )
    );
    assert_eq!(nothing["severity"], "error");
    // The abort it names runs.
    let out = cli(ws.root(), &["abort", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Through MCP: the same issue on edit_rebase.
    ws.write("same.txt", b"a\nb\n");
    let t = tools(&ws);
    let p = t
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": "same.txt", "new_content": "A\nb\n"}),
        )
        .unwrap();
    ws.write("same.txt", b"A\nb\n");
    let r = t
        .call(
            "edit_rebase",
            json!({"agent_id": "a", "preview_id": p["preview_id"]}),
        )
        .unwrap();
    let nothing = issue(&r, "no_changes");
    assert!(
        nothing["message"]
            .as_str()
            .unwrap()
            .starts_with("the disk already holds this transaction's change"),
        "{r}"
    );
}

// ---- item 6: paths --------------------------------------------------------------------

/// The `failures[0]` of a refused `--json` preview of one edit of `path`.
fn missing(ws: &Ws, path: &str) -> Value {
    let (code, v) = preview(
        ws,
        &json!({"edits": [{"op": "replace_text", "path": path, "old": "a", "new": "b"}]}),
    );
    assert_eq!(code, 6, "{v}");
    assert_eq!(v["error"]["kind"], "file_not_found", "{v}");
    v["error"]["failures"][0].clone()
}

#[test]
fn a_missing_path_points_at_the_existing_name_it_nearly_matches() {
    let ws = workspace();
    // NFD on disk, NFC in the plan.
    ws.write("cafe\u{301}.txt", b"a\n");
    ws.write("notes.txt", b"a\n");
    let cases = [
        ("src/Lib.rs", "src/lib.rs", "only by case"),
        ("Src/lib.rs", "src/lib.rs", "only by case"),
        (
            "caf\u{e9}.txt",
            "cafe\u{301}.txt",
            "only by Unicode normalization (NFC against NFD)",
        ),
        ("notes.txt ", "notes.txt", "only by whitespace at the end"),
        ("src/lbi.rs", "src/lib.rs", "by 1 character"),
        ("READEM.md", "README.md", "by 1 character"),
    ];
    for (path, existing, differs) in cases {
        let f = missing(&ws, path);
        assert_eq!(
            f["near"],
            json!({"existing": existing, "differs": differs}),
            "{path:?}: {f}"
        );
        let m = message(&f);
        assert!(
            m.contains(&format!(
                "did you mean {existing:?}? It exists, and the names differ {differs} — write \
                 that name to edit it"
            )),
            "{path:?}: {m}"
        );
    }
    // The path is quoted where a trailing space would not show.
    let m = message(&missing(&ws, "notes.txt "));
    assert!(
        m.starts_with(
            "edit #1 (replace_text of \"notes.txt \"): \"notes.txt \" does not exist, and \
             replace_text needs an existing file; did you mean \"notes.txt\"?"
        ),
        "{m}"
    );
    // Nothing near: the message is as before.
    let f = missing(&ws, "zzz/none.rs");
    assert_eq!(f.get("near"), None, "{f}");
    // MCP says the same.
    let e = mcp_refused(
        &ws,
        json!([{"op": "replace_text", "path": "src/Lib.rs", "old": "a", "new": "b"}]),
    );
    assert_eq!(e.kind, "file_not_found");
    assert!(
        e.message
            .contains("did you mean \"src/lib.rs\"? It exists, and the names differ only by case"),
        "{e}"
    );
    assert_eq!(
        e.to_json()["failures"][0]["near"]["existing"],
        "src/lib.rs",
        "{}",
        e.to_json()
    );
}

#[test]
fn a_new_file_named_like_an_existing_one_is_previewed_with_a_warning() {
    let ws = workspace();
    let warned = |v: &Value| issue(v, "new_file_near_existing");
    // MCP's whole-file form: src/Lib.rs does not exist, src/lib.rs does.
    let t = tools(&ws);
    let v = t
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": "src/Lib.rs", "new_content": "x\n"}),
        )
        .unwrap();
    let w = warned(&v);
    assert_eq!(w["severity"], "warning");
    assert_eq!(w["path"], "src/Lib.rs");
    assert_eq!(
        w["message"],
        "\"src/Lib.rs\" is a new file, but \"src/lib.rs\" exists and the names differ only \
         by case: check that the plan means a new file — to edit the existing one, write \
         its name"
    );
    // The CLI's create_file, with a missing letter.
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "create_file", "path": "READM.md", "content": "x\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    assert!(
        warned(&v)["message"]
            .as_str()
            .unwrap()
            .contains("but \"README.md\" exists and the names differ by 1 character"),
        "{v}"
    );
    // A new file whose name differs by one substituted letter is not a near miss.
    let (code, v) = preview(
        &ws,
        &json!({"edits": [{"op": "create_file", "path": "src/c.rs", "content": "pub fn c() {}\n"}]}),
    );
    assert_eq!(code, 0, "{v}");
    assert!(
        !v["validation"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["code"] == "new_file_near_existing"),
        "{v}"
    );
}

// ---- item 7: permissions at preview time ----------------------------------------------

#[test]
fn a_file_without_write_bits_is_previewed_with_a_warning_a_policy_can_make_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    ws.write("locked.txt", b"old\n");
    std::fs::set_permissions(
        ws.path("locked.txt"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    let edit = json!({"op": "replace_text", "path": "locked.txt", "old": "old", "new": "new"});
    // Told from the mode bits: the same as root (whom the kernel lets write) and not.
    let (code, v) = preview(&ws, &json!({"edits": [edit.clone()]}));
    assert_eq!(code, 0, "{v}");
    let w = issue(&v, "read_only_file");
    assert_eq!(w["severity"], "warning");
    assert_eq!(w["path"], "locked.txt");
    assert_eq!(
        w["message"],
        "\"locked.txt\" has mode 444, without write bits: the commit replaces it all the \
         same (by rename, which the directory's permission allows, not the file's) and keeps \
         mode 444; check that this file is meant to change (a policy with \
         \"read_only_files\": \"refuse\" makes this an error)"
    );
    let tx = v["tx"].as_u64().unwrap().to_string();
    let out = cli(ws.root(), &["commit", &tx], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("locked.txt"), b"new\n");
    assert_eq!(ws.mode("locked.txt") & 0o7777, 0o444);
    // The plan's policy makes it an error.
    let (code, v) = preview(
        &ws,
        &json!({"policy": {"read_only_files": "refuse"},
                "edits": [{"op": "replace_text", "path": "locked.txt", "old": "new", "new": "newer"}]}),
    );
    assert_eq!(code, 4, "{v}");
    let e = issue(&v, "read_only_file");
    assert_eq!(e["severity"], "error");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .ends_with("(an error under the policy's \"read_only_files\": \"refuse\": the revision cannot be committed)"),
        "{e}"
    );
    // MCP: the same warning.
    let p = tools(&ws)
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": "locked.txt", "new_content": "mcp\n"}),
        )
        .unwrap();
    assert_eq!(issue(&p, "read_only_file")["severity"], "warning", "{p}");
}

/// Root passes `faccessat` whatever the mode bits, so this runs only as another user
/// (scripts/test-as-user.sh runs the suite as uid 65534); as root it says it skipped.
#[test]
fn a_directory_the_process_cannot_write_is_reported_by_the_preview() {
    use std::os::unix::fs::PermissionsExt;
    if rustix::process::geteuid().is_root() {
        eprintln!("skipped: root may write any directory; runs as a non-root user");
        return;
    }
    let ws = workspace();
    ws.write("shut/f.txt", b"old\n");
    let dir = ws.path("shut");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    struct Reopen(std::path::PathBuf);
    impl Drop for Reopen {
        fn drop(&mut self) {
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
    let _reopen = Reopen(dir);
    let plan = json!({"edits": [{"op": "replace_text", "path": "shut/f.txt", "old": "old", "new": "new"}]});
    let (code, v) = preview(&ws, &plan);
    assert_eq!(code, 4, "{v}");
    let e = issue(&v, "directory_not_writable");
    assert_eq!(e["severity"], "error");
    assert_eq!(e["path"], "shut/f.txt");
    let uid = rustix::process::geteuid().as_raw();
    assert_eq!(
        e["message"],
        format!(
            "\"shut\" (where \"shut/f.txt\" is) is not writable by this process (uid {uid}): \
             the directory must be writable: a commit replaces the file by rename (or \
             creates it there) — give the process write and search permission on it (chmod \
             u+wx, or run as its owner), then preview again"
        )
    );
    // Nothing was written, and MCP reports the same before any commit.
    assert_eq!(ws.read("shut/f.txt"), b"old\n");
    let p = tools(&ws)
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": "shut/f.txt", "new_content": "mcp\n"}),
        )
        .unwrap();
    assert_eq!(
        issue(&p, "directory_not_writable")["severity"],
        "error",
        "{p}"
    );
}
