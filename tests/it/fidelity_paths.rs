//! Path identity (docs/design.md, "Path safety").
//!
//! - A root given through a symlink (`ws-alias -> ws`) is the root: an absolute plan
//!   path under the alias is inside it, in the CLI (`--root ws-alias`, and a root
//!   discovered from `$PWD` inside the alias), the library and MCP.
//! - A path ending in `/`, `/.` or `/..` names a directory (POSIX) and is refused with
//!   `PathError::NamesDirectory`; nothing is recorded.
//! - Names are bytes: `café` in NFC and in NFD are two files, and the journal keeps
//!   them apart.
//! - In a subdirectory, a plan path missing at the root that exists relative to the
//!   current directory is named with the root and the root-relative path to write.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use serde_json::json;
use ultra_edit::mcp::EditTools;
use ultra_edit::{Error, Journal, PathError};

use crate::support::*;

const TOML: &[u8] = b"[server]\nport = 8080\n";
const TOML_AFTER: &[u8] = b"[server]\nport = 9090\n";

/// `<tmp>/ws` (initialized, with `shared/real.toml`) and `<tmp>/ws-alias -> ws`.
fn aliased() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    fs::create_dir_all(ws.join("shared")).unwrap();
    fs::write(ws.join("shared/real.toml"), TOML).unwrap();
    Journal::init(&ws).unwrap();
    let alias = tmp.path().join("ws-alias");
    std::os::unix::fs::symlink("ws", &alias).unwrap();
    (tmp, ws, alias)
}

fn port_plan(path: &Path) -> String {
    json!({"edits": [{"op": "replace_text", "path": path, "old": "8080", "new": "9090"}]})
        .to_string()
}

/// `ultra-edit` run in `cwd` (with `$PWD` set to it, as a shell does) and no `--root`.
fn ue_in(cwd: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .args(args)
        .current_dir(cwd)
        .env("PWD", cwd)
        .env_remove("FAILPOINTS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

#[test]
fn a_root_given_through_a_symlink_accepts_absolute_paths_under_it_in_the_cli() {
    let (_tmp, ws, alias) = aliased();
    let abs = alias.join("shared/real.toml");
    let root = alias.to_str().unwrap();
    let out = cli(
        Path::new(root),
        &["--json", "preview"],
        Some(&port_plan(&abs)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["files"][0]["path"], "shared/real.toml", "{v}");
    let tx = v["tx"].as_u64().unwrap().to_string();
    let out = cli(Path::new(root), &["commit", &tx], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(fs::read(ws.join("shared/real.toml")).unwrap(), TOML_AFTER);

    // A path outside both names of the root is still outside.
    let out = cli(
        Path::new(root),
        &["--json", "preview"],
        Some(&port_plan(&alias.parent().unwrap().join("other/real.toml"))),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "path_refused");

    // Discovered from `$PWD` inside the alias (no --root): the same.
    fs::write(ws.join("shared/real.toml"), TOML).unwrap();
    let out = ue_in(
        &alias.join("shared"),
        &["--json", "preview"],
        &port_plan(&abs),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["files"][0]["path"], "shared/real.toml");
}

#[test]
fn a_root_given_through_a_symlink_accepts_absolute_paths_in_the_library_and_mcp() {
    let (_tmp, ws, alias) = aliased();
    let abs = alias.join("shared/real.toml");
    let j = Journal::open(&alias).unwrap();
    assert_eq!(j.given_root(), Some(alias.as_path()));
    assert_eq!(j.root(), ws.canonicalize().unwrap());
    assert_eq!(
        j.relative(abs.to_str().unwrap()).unwrap(),
        "shared/real.toml"
    );
    let p = j.preview(&plan(&port_plan(&abs))).unwrap();
    assert_eq!(p.files[0].path, "shared/real.toml");
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(fs::read(ws.join("shared/real.toml")).unwrap(), TOML_AFTER);

    // MCP: m1nd's single-file edit by the alias path, previewed and committed.
    let tools = EditTools::new(Arc::new(Journal::open(&alias).unwrap()));
    let v = tools
        .call(
            "edit_preview",
            json!({"agent_id": "a", "file_path": abs, "new_content": "[server]\nport = 7070\n"}),
        )
        .unwrap_or_else(|e| panic!("edit_preview refused: {e:?}"));
    let id = v["preview_id"].as_str().unwrap().to_string();
    assert_eq!(
        v["diff"]["unified_diff"],
        "--- a/shared/real.toml\n+++ b/shared/real.toml\n@@ -1,2 +1,2 @@\n [server]\n-port = 9090\n+port = 7070\n",
        "{v}"
    );
    tools
        .call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
        .unwrap_or_else(|e| panic!("edit_commit refused: {e:?}"));
    assert_eq!(
        fs::read(ws.join("shared/real.toml")).unwrap(),
        b"[server]\nport = 7070\n"
    );
}

#[test]
fn a_path_ending_like_a_directory_is_refused_and_nothing_is_recorded() {
    let ws = workspace();
    ws.write("a.txt", b"one\n");
    for (raw, ending, message) in [
        (
            "a.txt/",
            "/",
            r#"path "a.txt/" ends with "/", which names a directory, not a file; to edit the file, write "a.txt""#,
        ),
        (
            "a.txt/.",
            "/.",
            r#"path "a.txt/." ends with "/.", which names a directory, not a file; to edit the file, write "a.txt""#,
        ),
        (
            "src/x/..",
            "/..",
            r#"path "src/x/.." ends with "/..", which names a directory, not a file; give the path of a file"#,
        ),
    ] {
        let json =
            json!({"edits": [{"op": "replace_file", "path": raw, "content": "two\n"}]}).to_string();
        match ws.journal.preview(&plan(&json)) {
            Err(Error::Path(e)) => {
                assert_eq!(
                    e,
                    PathError::NamesDirectory {
                        path: raw.into(),
                        ending
                    }
                );
                assert_eq!(e.to_string(), message);
            }
            other => panic!("{raw}: expected NamesDirectory, got {other:?}"),
        }
        let out = cli(ws.root(), &["--json", "preview"], Some(&json));
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let v = json_of(&out);
        assert_eq!(v["error"]["kind"], "path_refused", "{v}");
        assert_eq!(v["error"]["message"], message, "{v}");
    }
    assert_eq!(ws.read("a.txt"), b"one\n");
    assert!(ws.journal.log(None).unwrap().is_empty());
}

#[test]
fn names_that_differ_only_by_unicode_normalization_are_two_files() {
    let ws = workspace();
    let nfc = "caf\u{e9}.txt";
    let nfd = "cafe\u{301}.txt";
    ws.write(nfc, b"nfc\n");
    ws.write(nfd, b"nfd\n");
    // A plan naming the NFC file touches only it.
    let p = ws.preview(
        &json!({"edits": [{"op": "replace_text", "path": nfc, "old": "nfc", "new": "NFC"}]})
            .to_string(),
    );
    assert_eq!(p.files.len(), 1);
    assert_eq!(p.files[0].path, nfc);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read(nfc), b"NFC\n");
    assert_eq!(ws.read(nfd), b"nfd\n");
    // Both in one plan: two files, two paths in the journal, each restored by rollback.
    let p = ws.preview(
        &json!({"edits": [
            {"op": "replace_file", "path": nfc, "content": "one\n"},
            {"op": "replace_file", "path": nfd, "content": "two\n"},
        ]})
        .to_string(),
    );
    let mut paths: Vec<String> = p.files.iter().map(|f| f.path.to_string()).collect();
    paths.sort();
    let mut expect = vec![nfc.to_string(), nfd.to_string()];
    expect.sort();
    assert_eq!(paths, expect);
    let receipt = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read(nfc), b"one\n");
    assert_eq!(ws.read(nfd), b"two\n");
    ws.journal.rollback(receipt.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read(nfc), b"NFC\n");
    assert_eq!(ws.read(nfd), b"nfd\n");
    let dump = cli(
        ws.root(),
        &["journal", "dump", "--tx", &p.tx.to_string()],
        None,
    );
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains(nfc) && dump.contains(nfd), "{dump}");
    assert!(ws.journal.verify().unwrap().ok);
}

#[test]
fn a_plan_path_relative_to_the_current_directory_is_named_with_its_root_relative_path() {
    let ws = workspace();
    ws.write("json/tool.py", b"print('hi')\n");
    let sub = ws.root().join("json");
    let plan = r#"{"edits":[{"op":"replace_text","path":"tool.py","old":"hi","new":"hello"}]}"#;
    let root = ws.root().display().to_string();
    let hint = format!(
        "hint: plan paths are relative to the workspace root {root}, not to the current directory {root}/json; this file is missing at the root but found relative to the current directory: write \"json/tool.py\" (not \"tool.py\") in the plan"
    );

    let out = ue_in(&sub, &["preview"], plan);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!(
            "error: edit #1 (replace_text of tool.py): tool.py does not exist, and replace_text needs an existing file — use create_file (or write_file) to create it\n{hint}\n"
        )
    );

    let out = ue_in(&sub, &["--json", "preview"], plan);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "file_not_found", "{v}");
    assert_eq!(v["error"]["failures"][0]["edit"], 1, "{v}");
    assert_eq!(v["error"]["failures"][0]["path"], "tool.py", "{v}");
    assert_eq!(
        v["error"]["misplaced"],
        json!([{"path": "tool.py", "root_relative": "json/tool.py"}])
    );
    assert_eq!(
        v["error"]["hint"].as_str().unwrap(),
        hint.strip_prefix("hint: ").unwrap()
    );

    // At the root the plan's path is simply missing: no such hint.
    let out = ue_in(ws.root(), &["preview"], plan);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("relative to the workspace root"));
    // Nothing was recorded, and the file is as it was.
    assert!(ws.journal.log(None).unwrap().is_empty());
    assert_eq!(ws.read("json/tool.py"), b"print('hi')\n");
}
