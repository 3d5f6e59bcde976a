//! The CLI contract: `--json` objects whose `tx` the other commands accept, exit codes.

use crate::support::*;

#[test]
fn exit_codes_follow_the_contract() {
    let ws = workspace();
    let code = |args: &[&str], stdin: Option<&str>| cli(ws.root(), args, stdin).status.code();
    assert_eq!(
        code(
            &["--json", "preview"],
            Some(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"zzz","new":"x"}]}"#)
        ),
        Some(6)
    );
    assert_eq!(code(&["--json", "preview"], Some("{not json")), Some(1));
    assert_eq!(code(&["frobnicate"], None), Some(2));
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"}]}"#),
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    ws.write("src/b.rs", b"changed\n");
    let stale = cli(ws.root(), &["--json", "commit", &tx], None);
    assert_eq!(stale.status.code(), Some(3));
    let v = json_of(&stale);
    assert_eq!(v["error"]["kind"], "stale_snapshot");
    assert!(String::from_utf8_lossy(&stale.stderr).contains("rebase"));
    assert_eq!(code(&["show", "999"], None), Some(1));
    let fresh = tempfile::tempdir().unwrap();
    let out = cli(fresh.path(), &["log"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("init"));
}

#[test]
fn json_dump_lists_every_record_in_order() {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["--json", "preview"],
        Some(r#"{"agent":"a1","edits":[{"op":"create_file","path":"n.txt","content":"n\n"}]}"#),
    );
    let tx = json_of(&out)["tx"].as_u64().unwrap().to_string();
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    let dump = cli(
        ws.root(),
        &["--json", "journal", "dump", "--with-blobs"],
        None,
    );
    assert!(dump.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(dump.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            l["event"]["kind"]
                .as_object()
                .unwrap()
                .keys()
                .next()
                .unwrap()
                .clone()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tx_created",
            "blob_stored",
            "revision_recorded",
            "batch_state",
            "batch_state",
            "batch_state",
            "receipt_issued"
        ]
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| l["event"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=7).collect::<Vec<_>>());
    assert_eq!(lines[1]["blob"]["content"], "n\n");
    assert_eq!(lines[2]["detail"]["revision"]["files"][0]["path"], "n.txt");
    let states: Vec<&str> = lines[3..6]
        .iter()
        .map(|l| l["event"]["kind"]["batch_state"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["prepared", "committing", "committed"]);
}
