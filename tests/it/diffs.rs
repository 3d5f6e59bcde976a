//! What diffs show (the CLI's text with `--color never` and `--color always`, the
//! `--json` and MCP text): each file named first in the text by git's `diff --git a/PATH
//! b/PATH` line, mode changes and new/deleted file modes as git prints them,
//! `\ No newline at end of file`, a visible `␍` for a carriage return, binary changes
//! with sizes and hashes.

use crate::support::*;

/// A plan touching every kind of invisible change, previewed as tx 1.
fn every_kind() -> Ws {
    let ws = workspace();
    ws.write("img.bin", b"\0\x01\x02");
    let out = cli(
        ws.root(),
        &["preview"],
        Some(
            r##"{"edits":[
            {"op":"replace_file","path":"run.sh","content":"#!/bin/sh\necho hi\n","mode":"0644"},
            {"op":"replace_text","path":"crlf.txt","old":"two\r\n","new":"two\n"},
            {"op":"append","path":"README.md","text":"\n"},
            {"op":"create_file","path":"new.sh","content":"#!/bin/sh\n","mode":"0755"},
            {"op":"delete_file","path":"src/b.rs"},
            {"op":"replace_file","path":"img.bin","content_base64":"AAECAw=="}
        ]}"##,
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws
}

fn short(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..12].to_string()
}

#[test]
fn every_invisible_change_is_visible_without_colour() {
    let ws = every_kind();
    let out = cli(ws.root(), &["show", "1", "--color", "never"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let expected = format!(
        "tx 1 revision 0 (open) — ready to commit
  M README.md  +1 -1
  M crlf.txt  +1 -1
  M img.bin  +0 -0
  A new.sh  +1 -0
  M run.sh  +0 -0
  D src/b.rs  +0 -3
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,3 +1,3 @@
 # sample
 
-No trailing newline
\\ No newline at end of file
+No trailing newline
diff --git a/crlf.txt b/crlf.txt
--- a/crlf.txt
+++ b/crlf.txt
@@ -1,3 +1,3 @@
 one␍
-two␍
+two
 three␍
diff --git a/img.bin b/img.bin
Binary files a/img.bin and b/img.bin differ: 3 bytes (blake3 {}) -> 4 bytes (blake3 {})
diff --git a/new.sh b/new.sh
new file mode 100755
--- /dev/null
+++ b/new.sh
@@ -0,0 +1 @@
+#!/bin/sh
diff --git a/run.sh b/run.sh
old mode 100755
new mode 100644
diff --git a/src/b.rs b/src/b.rs
deleted file mode 100600
--- a/src/b.rs
+++ /dev/null
@@ -1,3 +0,0 @@ b
-pub fn b() -> u32 {{
-    2
-}}
warning: mixed_line_endings crlf.txt: crlf.txt: every line ended with CRLF (\\r\\n) before this revision, but line 2 of the candidate ends with LF (\\n); write the new text with CRLF (\\r\\n) line endings (symbol ops convert it themselves), or keep this if the mix is meant
",
        short(b"\0\x01\x02"),
        short(b"\0\x01\x02\x03")
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
    // NO_COLOR (set by the helper) and no terminal: the default is the same text.
    let auto = cli(ws.root(), &["show", "1"], None);
    assert_eq!(String::from_utf8(auto.stdout).unwrap(), expected);
}

#[test]
fn json_keeps_the_raw_bytes_and_the_headers() {
    let ws = every_kind();
    let v = json_of(&cli(ws.root(), &["--json", "show", "1"], None));
    let diff = |path: &str| {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap()["diff"]["unified"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        diff("crlf.txt"),
        "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n+two\n three\r\n"
    );
    assert_eq!(diff("run.sh"), "old mode 100755\nnew mode 100644\n");
    assert!(diff("new.sh").starts_with("new file mode 100755\n--- /dev/null\n"));
    assert!(diff("src/b.rs").starts_with("deleted file mode 100600\n--- a/src/b.rs\n"));
}

#[test]
fn colour_always_uses_gits_escape_sequences() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["preview"],
        Some(
            r#"{"edits":[{"op":"replace_text","path":"crlf.txt","old":"two\r\n","new":"2\r\n"}]}"#,
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // --color always wins over NO_COLOR and a pipe.
    let out = cli(ws.root(), &["show", "1", "--color", "always"], None);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "tx 1 revision 0 (open) — ready to commit\n  M crlf.txt  +1 -1\n\
         \x1b[1mdiff --git a/crlf.txt b/crlf.txt\x1b[0m\n\
         \x1b[1m--- a/crlf.txt\x1b[0m\n\
         \x1b[1m+++ b/crlf.txt\x1b[0m\n\
         \x1b[36m@@ -1,3 +1,3 @@\x1b[0m\n \
         one\x1b[7m␍\x1b[0m\n\
         \x1b[31m-two\x1b[0m\x1b[7m␍\x1b[0m\n\
         \x1b[32m+2\x1b[0m\x1b[7m␍\x1b[0m\n \
         three\x1b[7m␍\x1b[0m\n"
    );
    // --json is never coloured.
    let out = cli(
        ws.root(),
        &["--json", "show", "1", "--color", "always"],
        None,
    );
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\x1b'));
}

#[test]
fn colour_auto_follows_clicolor_force() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"a()","new":"aa()"}]}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let run = |env: &[(&str, &str)]| {
        let mut cmd = ue_command(ws.root(), &["show", "1"]);
        cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert!(!run(&[]).contains('\x1b'), "a pipe is not coloured");
    assert!(run(&[("CLICOLOR_FORCE", "1")]).contains("\x1b[31m-pub fn a() -> u32 {\x1b[0m\n"));
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'));
}
