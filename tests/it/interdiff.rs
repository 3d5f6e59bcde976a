//! Interdiff: what revision N changed relative to revision M (`show TX --from M --to N`,
//! `revise`'s text and `--json` output), while a revision's own diff stays the whole
//! change against the snapshot.

use crate::support::*;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// tx 1: revision 0 changes line 2 of f.txt; revision 1 changes line 9 and creates g.txt.
fn two_revisions(ws: &Ws) {
    ws.write("f.txt", numbered(10).as_bytes());
    let out = cli(
        ws.root(),
        &["preview"],
        Some(
            r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":2,"end":2,"content":"TWO\n"}]}"#,
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

const REVISE: &str = r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":9,"end":9,"content":"NINE\n"},{"op":"create_file","path":"g.txt","content":"g\n"}]}"#;

const INTERDIFF_0_1: &str = "--- a/f.txt\n+++ b/f.txt\n@@ -6,5 +6,5 @@\n line 6\n line 7\n line 8\n-line 9\n+NINE\n line 10\n";

#[test]
fn revise_prints_what_it_changed_and_show_the_whole_change() {
    let ws = workspace();
    two_revisions(&ws);
    let out = cli(ws.root(), &["revise", "1"], Some(REVISE));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A new file's mode comes from the umask (0644 under the usual 022).
    let new_mode = ws.journal.show(1, None).unwrap().files[1]
        .candidate
        .mode()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "tx 1 revision 1 (open, built on revision 0) — ready to commit\n  M f.txt  +2 -2\n  A g.txt  +1 -0\n\
             changes since revision 0 (the whole change: `ultra-edit show 1`):\n\
             diff --git a/f.txt b/f.txt\n{INTERDIFF_0_1}diff --git a/g.txt b/g.txt\nnew file mode 100644\n--- /dev/null\n+++ b/g.txt\n@@ -0,0 +1 @@\n+g\n"
        )
        .replace("new file mode 100644", &format!("new file mode {:o}", 0o100000 | new_mode))
    );
    // The whole change is still what `show` prints.
    let show = String::from_utf8(cli(ws.root(), &["show", "1"], None).stdout).unwrap();
    assert!(show.contains("-line 2\n+TWO\n"), "{show}");
    assert!(show.contains("-line 9\n+NINE\n"), "{show}");
}

#[test]
fn revise_json_carries_the_whole_change_and_the_interdiff() {
    let ws = workspace();
    two_revisions(&ws);
    let v = json_of(&cli(ws.root(), &["--json", "revise", "1"], Some(REVISE)));
    let whole = v["files"][0]["diff"]["unified"].as_str().unwrap();
    assert!(
        whole.contains("+TWO\n") && whole.contains("+NINE\n"),
        "{whole}"
    );
    assert_eq!(
        (
            v["interdiff"]["from"].as_u64(),
            v["interdiff"]["to"].as_u64()
        ),
        (Some(0), Some(1))
    );
    assert_eq!(v["interdiff"]["files"][0]["path"], "f.txt");
    assert_eq!(v["interdiff"]["files"][0]["diff"]["unified"], INTERDIFF_0_1);
    assert_eq!(v["interdiff"]["files"][1]["path"], "g.txt");
    assert_eq!(
        (
            v["interdiff"]["lines_added"].as_u64(),
            v["interdiff"]["lines_removed"].as_u64()
        ),
        (Some(2), Some(1))
    );
}

#[test]
fn show_from_to_in_both_directions() {
    let ws = workspace();
    two_revisions(&ws);
    assert!(cli(ws.root(), &["revise", "1"], Some(REVISE))
        .status
        .success());
    let d = ws.journal.interdiff(1, 0, 1).unwrap();
    assert_eq!(d.files[0].diff.unified, INTERDIFF_0_1);
    let back = ws.journal.interdiff(1, 1, 0).unwrap();
    assert_eq!(
        back.files[0].diff.unified,
        "--- a/f.txt\n+++ b/f.txt\n@@ -6,5 +6,5 @@\n line 6\n line 7\n line 8\n-NINE\n+line 9\n line 10\n"
    );
    // g.txt does not exist in revision 0 (its snapshot is absent): deleted going back.
    assert_eq!(back.files[1].path, "g.txt");
    assert!(!back.files[1].to.exists());
    // --from alone goes to the latest; the text names both revisions.
    let out = cli(
        ws.root(),
        &["show", "1", "--from", "0", "--color", "never"],
        None,
    );
    let text_out = String::from_utf8(out.stdout).unwrap();
    assert!(
        text_out.starts_with("tx 1: revision 0 -> revision 1, +2 -1\n  M f.txt  +1 -1\n  A g.txt  +1 -0\ndiff --git a/f.txt b/f.txt\n--- a/f.txt\n"),
        "{text_out}"
    );
    // A revision against itself — asked for, or what `--to 0` alone (no revision
    // before 0) and `--from` the latest alone come to: said in words, with the
    // command that shows the revision's whole change.
    for args in [
        &["show", "1", "--from", "1", "--to", "1"][..],
        &["show", "1", "--from", "1"],
    ] {
        let same = cli(ws.root(), args, None);
        assert_eq!(
            String::from_utf8(same.stdout).unwrap(),
            "tx 1: revision 1 -> revision 1, +0 -0\n  (revision 1 compared with itself: give --from and --to two revisions; `ultra-edit show 1 --revision 1` shows its whole change)\n",
            "{args:?}"
        );
    }
    let zero = cli(ws.root(), &["show", "1", "--to", "0"], None);
    assert_eq!(
        String::from_utf8(zero.stdout).unwrap(),
        "tx 1: revision 0 -> revision 0, +0 -0\n  (revision 0 compared with itself: give --from and --to two revisions; `ultra-edit show 1 --revision 0` shows its whole change)\n"
    );
    // An unknown revision is the usual error.
    let bad = cli(
        ws.root(),
        &["--json", "show", "1", "--from", "0", "--to", "7"],
        None,
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(json_of(&bad)["error"]["kind"], "unknown_revision");
    // --revision and --from do not go together.
    let usage = cli(
        ws.root(),
        &["show", "1", "--revision", "0", "--from", "0"],
        None,
    );
    assert_eq!(usage.status.code(), Some(2));
}
