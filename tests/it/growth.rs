//! The journal grows with the edit, not with the file (docs/benchmarks.md, "Journal
//! growth"): 100 successive one-line commits to a 1 MiB file add at most 32 KiB each on
//! average to the journal's allocated bytes. The file's own size grows in jumps as
//! redb extends its regions (27.8 KiB or 44.6 KiB per commit over the same 100 commits,
//! depending on where a jump falls), so the used part is what is measured.

use crate::support::*;

#[test]
fn one_line_commits_to_a_1_mib_file_grow_the_journal_by_little() {
    let ws = workspace();
    let lines: Vec<String> = (0..36_000)
        .map(|i| format!("let value_{i:05} = compute({i});\n"))
        .collect();
    let file: String = lines.concat();
    assert!(file.len() >= 1 << 20);
    ws.write("big.rs", file.as_bytes());
    let allocated = || ws.journal.allocated_bytes().unwrap().unwrap();
    let commit_line = |i: usize| {
        let line = 1 + (i * 7919) % lines.len();
        let json = serde_json::json!({"edits":[{"op":"replace_lines","path":"big.rs","start":line,"end":line,"content":format!("// edited {i}\n")}]}).to_string();
        let p = ws.preview(&json);
        ws.journal.commit(p.tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
    };
    // The first commit stores the file once; growth is measured after it.
    commit_line(0);
    let before = allocated();
    for i in 1..=100 {
        commit_line(i);
    }
    let after = allocated();
    let per_commit = after.saturating_sub(before) / 100;
    println!(
        "journal growth: {} allocated bytes over 100 one-line commits to a {} byte file: {per_commit} bytes each",
        after - before,
        file.len()
    );
    assert!(per_commit <= 32 * 1024, "{per_commit} bytes per commit");
    // Still byte-exact: roll the last commit back.
    let last = ws.journal.log(Some(1)).unwrap()[0].tx;
    let committed = std::fs::read(ws.path("big.rs")).unwrap();
    ws.journal.rollback(last, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let restored = std::fs::read(ws.path("big.rs")).unwrap();
    assert_ne!(restored, committed);
    assert_eq!(
        restored.len() + "// edited 100\n".len(),
        committed.len() + lines[(100 * 7919) % lines.len()].len()
    );
    assert!(ws.journal.verify().unwrap().ok);
}
