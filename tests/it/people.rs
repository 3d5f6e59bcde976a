//! `log` and `journal dump` for people: rollbacks and pruned txs said plainly,
//! revisions without their diffs unless `--with-diffs`.

use crate::support::*;

fn log_lines(ws: &Ws) -> Vec<String> {
    let out = cli(ws.root(), &["log"], None);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The part of a log line after the time column.
fn after_time(line: &str) -> &str {
    line.split_once("Z  ").map(|(_, rest)| rest).unwrap_or(line)
}

#[test]
fn log_says_what_rollbacks_and_pruned_txs_are() {
    let ws = workspace();
    let p = ws.preview(r#"{"description":"rename","edits":[{"op":"replace_text","path":"src/a.rs","old":"a()","new":"aa()"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.journal.rollback(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let lines = log_lines(&ws);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("tx 2     "), "{lines:?}");
    assert_eq!(
        after_time(&lines[0]),
        "committed   -          1 file(s) +1 -1  rollback of tx 1"
    );
    assert_eq!(
        after_time(&lines[1]),
        "rolled_back -          1 file(s) +1 -1  rename  [rolled back by tx 2]"
    );
    // Pruned: the line counts are gone, and the line does not pretend they were 0.
    let q = ws.preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#);
    ws.journal.commit(q.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let out = cli(ws.root(), &["journal", "gc", "--keep-last", "1"], None);
    assert!(out.status.success(), "{}", text(&out));
    let lines = log_lines(&ws);
    assert_eq!(
        after_time(&lines[0]),
        "committed   -          1 file(s) +0 -2",
        "no trailing blanks without a description"
    );
    assert_eq!(
        after_time(&lines[2]),
        "rolled_back -          1 file(s)  rename  [rolled back by tx 2, pruned by gc]"
    );
}

#[test]
fn dump_leaves_diffs_out_unless_asked() {
    let ws = workspace();
    ws.preview(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"a()","new":"aa()"}]}"#);
    let dump = |args: &[&str]| {
        let out = cli(ws.root(), &[&["journal", "dump"], args].concat(), None);
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let short = dump(&[]);
    assert!(short.contains("    M src/a.rs  snapshot "), "{short}");
    assert!(!short.contains("@@"), "{short}");
    let long = dump(&["--with-diffs"]);
    assert!(
        long.contains(
            "      @@ -1,3 +1,3 @@ a\n      -pub fn a() -> u32 {\n      +pub fn aa() -> u32 {\n"
        ),
        "{long}"
    );
    let diff_lines = ws.journal.show(1, None).unwrap().files[0]
        .diff
        .unified
        .lines()
        .count();
    assert_eq!(long.lines().count(), short.lines().count() + diff_lines);
    // --json always carries the diff.
    let json = dump(&["--json", "--kind", "revision_recorded"]);
    assert!(json.contains(r#"+pub fn aa() -> u32 {\n"#), "{json}");
}
