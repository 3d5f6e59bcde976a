//! `revert`: undo a committed tx by a three-way merge and keep everyone else's work
//! (docs/design.md, "Revert"). Every file-level case, with exact bytes and modes,
//! through the library and the CLI; conflicts against `git merge-file -p --diff3`.

use std::os::unix::fs::PermissionsExt;

use ultra_edit::{
    AgentRange, Error, Journal, Preview, RevertOptions, RollbackOptions, StateReason, TxState, Verb,
};

use crate::support::*;

/// What a case expects of one file of the revert's candidate: its bytes and mode, or
/// absent (`None`).
type Want = (&'static str, Option<(&'static [u8], u32)>);

/// One file-level case: a history made by `setup` (returns the tx to revert), the
/// candidate expected per file, and the conflict reason expected (a substring), if any.
pub(crate) struct Case {
    pub name: &'static str,
    pub setup: fn(&Ws) -> u64,
    pub want: &'static [Want],
    pub conflict: Option<&'static str>,
}

fn commit(ws: &Ws, json: &str) -> u64 {
    let p = ws.preview(json);
    assert!(p.ready_to_commit, "{p:?}");
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    p.tx
}

fn chmod(ws: &Ws, rel: &str, mode: u32) {
    std::fs::set_permissions(ws.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "a later edit of other lines is kept",
        setup: |ws| {
            ws.write("t.txt", b"1\n2\n3\n4\n5\n6\n7\n");
            let tx = commit(
                ws,
                r#"{"edits":[{"op":"replace_text","path":"t.txt","old":"2\n","new":"two\n"}]}"#,
            );
            ws.write("t.txt", b"1\ntwo\n3\n4\n5\nsix\n7\n");
            tx
        },
        want: &[("t.txt", Some((b"1\n2\n3\n4\n5\nsix\n7\n", 0o644)))],
        conflict: None,
    },
    Case {
        name: "a later edit of the same lines conflicts",
        setup: |ws| {
            ws.write("t.txt", b"1\n2\n3\n");
            let tx = commit(
                ws,
                r#"{"edits":[{"op":"replace_text","path":"t.txt","old":"2\n","new":"two\n"}]}"#,
            );
            ws.write("t.txt", b"1\nTWO\n3\n");
            tx
        },
        want: &[(
            "t.txt",
            Some((
                b"1\n<<<<<<< disk\nTWO\n||||||| tx\ntwo\n=======\n2\n>>>>>>> before tx\n3\n",
                0o644,
            )),
        )],
        conflict: Some("both sides changed the same lines"),
    },
    Case {
        name: "a file the tx created, unchanged since, is deleted",
        setup: |ws| {
            commit(
                ws,
                r#"{"edits":[{"op":"create_file","path":"made.txt","content":"new\n","mode":"0600"}]}"#,
            )
        },
        want: &[("made.txt", None)],
        conflict: None,
    },
    Case {
        name: "a file the tx created, changed since, is a modify/delete conflict",
        setup: |ws| {
            let tx = commit(
                ws,
                r#"{"edits":[{"op":"create_file","path":"made.txt","content":"new\n"}]}"#,
            );
            ws.write("made.txt", b"new\nmore\n");
            tx
        },
        want: &[("made.txt", Some((b"new\nmore\n", 0o644)))],
        conflict: Some("deleted on the before tx side, changed on the disk side"),
    },
    Case {
        name: "a file the tx deleted, still absent, is re-created",
        setup: |ws| commit(ws, r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#),
        want: &[("run.sh", Some((b"#!/bin/sh\necho hi\n", 0o755)))],
        conflict: None,
    },
    Case {
        name: "a file the tx deleted, present again, is a whole-file conflict",
        setup: |ws| {
            let tx = commit(ws, r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#);
            ws.write("run.sh", b"#!/bin/sh\necho other\n");
            tx
        },
        want: &[("run.sh", Some((b"#!/bin/sh\necho other\n", 0o644)))],
        conflict: Some("deleted it and it exists again with other bytes"),
    },
    Case {
        name: "a mode the tx changed is changed back",
        setup: |ws| {
            commit(
                ws,
                r##"{"edits":[{"op":"write_file","path":"run.sh","content":"#!/bin/sh\necho hi\n","mode":"0700"}]}"##,
            )
        },
        want: &[("run.sh", Some((b"#!/bin/sh\necho hi\n", 0o755)))],
        conflict: None,
    },
    Case {
        name: "a mode changed since by someone else is kept with the bytes reverted",
        setup: |ws| {
            let tx = commit(
                ws,
                r#"{"edits":[{"op":"replace_text","path":"run.sh","old":"hi","new":"ho"}]}"#,
            );
            chmod(ws, "run.sh", 0o700);
            tx
        },
        want: &[("run.sh", Some((b"#!/bin/sh\necho hi\n", 0o700)))],
        conflict: None,
    },
    Case {
        name: "a mode both changed is a whole-file conflict",
        setup: |ws| {
            let tx = commit(
                ws,
                r##"{"edits":[{"op":"write_file","path":"run.sh","content":"#!/bin/sh\necho hi\n","mode":"0700"}]}"##,
            );
            chmod(ws, "run.sh", 0o750);
            tx
        },
        want: &[("run.sh", Some((b"#!/bin/sh\necho hi\n", 0o750)))],
        conflict: Some("the mode changed on both sides (disk 750, before tx 755)"),
    },
    Case {
        name: "binary content unchanged since is restored",
        setup: |ws| {
            ws.write("b.bin", b"\x00\x01\x02");
            commit(
                ws,
                r#"{"edits":[{"op":"replace_file","path":"b.bin","content_base64":"AAkJ"}]}"#,
            )
        },
        want: &[("b.bin", Some((b"\x00\x01\x02", 0o644)))],
        conflict: None,
    },
    Case {
        name: "binary content changed since is a whole-file conflict",
        setup: |ws| {
            ws.write("b.bin", b"\x00\x01\x02");
            let tx = commit(
                ws,
                r#"{"edits":[{"op":"replace_file","path":"b.bin","content_base64":"AAkJ"}]}"#,
            );
            ws.write("b.bin", b"\x00\x07\x07");
            tx
        },
        want: &[("b.bin", Some((b"\x00\x07\x07", 0o644)))],
        conflict: Some("binary content changed on both sides"),
    },
];

/// The candidate of `p` for `path`: bytes and mode, `None` when absent; a file the
/// revision does not change is read from the disk.
fn candidate(ws: &Ws, p: &Preview, path: &str) -> Option<(Vec<u8>, u32)> {
    match p.files.iter().find(|f| f.path == path) {
        Some(f) => f.candidate.hash().map(|h| {
            (
                ws.journal.blob(&h).unwrap().unwrap(),
                f.candidate.mode().unwrap(),
            )
        }),
        None => ws
            .path(path)
            .exists()
            .then(|| (ws.read(path), ws.mode(path))),
    }
}

fn disk(ws: &Ws, path: &str) -> Option<(Vec<u8>, u32)> {
    ws.path(path)
        .exists()
        .then(|| (ws.read(path), ws.mode(path)))
}

fn owned(w: &Option<(&[u8], u32)>) -> Option<(Vec<u8>, u32)> {
    w.map(|(b, m)| (b.to_vec(), m))
}

#[test]
fn every_file_case_gives_the_exact_candidate_and_commits_it() {
    for case in CASES {
        let ws = workspace();
        let tx = (case.setup)(&ws);
        let p = ws
            .journal
            .revert(&[tx.into()], RevertOptions::new())
            .unwrap();
        assert_eq!(p.state, TxState::Open, "{}", case.name);
        assert_eq!(
            p.description.as_deref(),
            Some(format!("revert of tx {tx}").as_str())
        );
        for (path, want) in case.want {
            assert_eq!(
                candidate(&ws, &p, path),
                owned(want),
                "{}: {path}",
                case.name
            );
        }
        match case.conflict {
            Some(reason) => {
                assert_eq!(p.conflicts.len(), 1, "{}", case.name);
                assert!(
                    p.conflicts[0].reason.contains(reason),
                    "{}: {}",
                    case.name,
                    p.conflicts[0].reason
                );
                assert!(p.conflicts[0]
                    .reason
                    .starts_with(&format!("reverting tx {tx}: ")));
                assert!(!p.ready_to_commit, "{}", case.name);
                // A whole-file conflict keeps the disk's file on purpose: its only
                // issue is the conflict, no `candidate_equals_source` warning (found by
                // the breaker).
                let codes: Vec<(&str, &str)> = p
                    .validation
                    .iter()
                    .map(|i| (i.code.as_str(), i.path.as_str()))
                    .collect();
                let path = p.conflicts[0].path.as_str();
                // The candidate of a line conflict holds markers; every other kind
                // keeps the disk's file, so the revision changes nothing else.
                let want: [(&str, &str); 2] = if case.name.contains("same lines") {
                    [("conflict_markers", path), ("merge_conflict", path)]
                } else {
                    [("no_changes", ""), ("merge_conflict", path)]
                };
                assert_eq!(codes, want, "{}", case.name);
            }
            None => {
                assert_eq!(p.conflicts, [], "{}", case.name);
                assert!(p.ready_to_commit, "{}: {:?}", case.name, p.validation);
                ws.journal.commit(p.tx, Default::default()).unwrap();
                ws.journal.flush().unwrap();
                for (path, want) in case.want {
                    assert_eq!(
                        disk(&ws, path),
                        owned(want),
                        "{}: {path} on disk",
                        case.name
                    );
                }
            }
        }
    }
}

/// The same cases through the CLI: `revert --json` prints the candidate's states and
/// conflicts, exits 4 on a conflict, and `commit` writes the exact bytes and modes.
#[test]
fn every_file_case_through_the_cli() {
    for case in CASES {
        let ws = workspace();
        let tx = (case.setup)(&ws);
        let out = cli(ws.root(), &["--json", "revert", &tx.to_string()], None);
        let want_code = if case.conflict.is_some() { 4 } else { 0 };
        assert_eq!(
            out.status.code(),
            Some(want_code),
            "{}: {}",
            case.name,
            text(&out)
        );
        let v = json_of(&out);
        assert_eq!(
            v["description"],
            format!("revert of tx {tx}"),
            "{}",
            case.name
        );
        let rtx = v["tx"].as_u64().unwrap();
        for (path, want) in case.want {
            let f = v["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == *path);
            match (f, want) {
                (Some(f), Some((bytes, mode))) => {
                    assert_eq!(f["candidate"]["exists"], true, "{}", case.name);
                    assert_eq!(
                        f["candidate"]["hash"],
                        blake3::hash(bytes).to_hex().as_str(),
                        "{}",
                        case.name
                    );
                    assert_eq!(f["candidate"]["mode"], *mode, "{}", case.name);
                }
                (Some(f), None) => assert_eq!(f["candidate"]["exists"], false, "{}", case.name),
                (None, want) => assert_eq!(disk(&ws, path), owned(want), "{}", case.name),
            }
        }
        match case.conflict {
            Some(reason) => {
                let list = v["conflict_list"].as_array().unwrap();
                assert!(!list.is_empty(), "{}", case.name);
                assert!(
                    list[0]["reason"].as_str().unwrap().contains(reason),
                    "{}",
                    case.name
                );
            }
            None => {
                let out = cli(ws.root(), &["commit", &rtx.to_string()], None);
                assert_eq!(out.status.code(), Some(0), "{}: {}", case.name, text(&out));
                for (path, want) in case.want {
                    assert_eq!(
                        disk(&ws, path),
                        owned(want),
                        "{}: {path} on disk",
                        case.name
                    );
                }
            }
        }
        let log = cli(ws.root(), &["log"], None);
        let first = String::from_utf8_lossy(&log.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        assert!(
            first.starts_with(&format!("tx {rtx}"))
                && first.ends_with(&format!("revert of tx {tx}")),
            "{}: {first}",
            case.name
        );
    }
}

/// With nothing written since, the revert's candidate is exactly what a rollback
/// writes (bytes, modes, existence) for every file of a mixed commit.
#[test]
fn revert_equals_rollback_when_nothing_later_touched_the_files() {
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[
        {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
        {"op":"delete_file","path":"run.sh"},
        {"op":"create_file","path":"gen/out.bin","content_base64":"AP8AAQ==","mode":"0700"},
        {"op":"write_file","path":"src/b.rs","content":"fn b() {}\n","mode":"0644"},
        {"op":"replace_text","path":"crlf.txt","old":"two","new":"TWO"}]}"#,
    );
    let p = ws
        .journal
        .revert(&[tx.into()], RevertOptions::new())
        .unwrap();
    assert!(p.ready_to_commit);
    let paths = [
        "src/lib.rs",
        "run.sh",
        "gen/out.bin",
        "src/b.rs",
        "crlf.txt",
    ];
    let reverted: Vec<_> = paths.iter().map(|f| candidate(&ws, &p, f)).collect();
    ws.journal.abort(p.tx).unwrap();
    ws.journal.rollback(tx, RollbackOptions::default()).unwrap();
    ws.journal.flush().unwrap();
    let rolled: Vec<_> = paths.iter().map(|f| disk(&ws, f)).collect();
    assert_eq!(reverted, rolled);
    assert_eq!(rolled[1], Some((b"#!/bin/sh\necho hi\n".to_vec(), 0o755)));
    assert_eq!(rolled[2], None);
    assert_eq!(
        rolled[3],
        Some((b"pub fn b() -> u32 {\n    2\n}\n".to_vec(), 0o600))
    );
}

/// A revert removes the directories the reverted commit created and left empty, as a
/// rollback does (found by the breaker: they stayed, empty); one someone put a file in
/// since stays; rolling back the revert makes them again.
#[test]
fn a_committed_revert_removes_the_directories_its_tx_created_when_empty() {
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[
        {"op":"create_file","path":"gen/deep/out.txt","content":"o\n"},
        {"op":"create_file","path":"kept/x.txt","content":"x\n"}]}"#,
    );
    assert!(ws.path("gen/deep").is_dir());
    // Someone else's file in one created directory: that one is not empty after.
    ws.write("kept/mine.txt", b"mine\n");
    let p = ws
        .journal
        .revert(&[tx.into()], RevertOptions::new())
        .unwrap();
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(r.removed_dirs, ["gen/deep", "gen"]);
    assert!(!ws.path("gen").exists());
    assert_eq!(ws.read("kept/mine.txt"), b"mine\n");
    assert!(!ws.path("kept/x.txt").exists());
    // The rollback of the revert re-creates the file and its directories.
    let back = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(back.created_dirs, ["gen", "gen/deep"]);
    assert_eq!(ws.read("gen/deep/out.txt"), b"o\n");
    assert_eq!(ws.read("kept/x.txt"), b"x\n");
}

/// Several txs are reverted newest first into one candidate; a person's later edit
/// survives; the revert is itself rolled back like any commit.
#[test]
fn several_txs_newest_first_into_one_candidate_and_rolled_back() {
    let ws = workspace();
    ws.write("t.txt", b"a\nb\nc\nd\ne\nf\ng\nh\n");
    let t1 = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"t.txt","old":"b\n","new":"B1\n"}]}"#,
    );
    // t2 edits the line t1 wrote: reverting t1 alone would conflict, t2 then t1 does not.
    let t2 = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"t.txt","old":"B1\n","new":"B2\n"},{"op":"create_file","path":"n.txt","content":"n\n"}]}"#,
    );
    ws.write("t.txt", b"a\nB2\nc\nd\ne\nf\ng\nH by hand\n");
    let alone = ws
        .journal
        .revert(&[t1.into()], RevertOptions::new())
        .unwrap();
    assert_eq!(alone.conflicts.len(), 1);
    ws.journal.abort(alone.tx).unwrap();
    let p = ws
        .journal
        .revert(&[t1.into(), t2.into()], RevertOptions::new())
        .unwrap();
    assert_eq!(
        p.description.as_deref(),
        Some(format!("revert of txs {t2}, {t1}").as_str())
    );
    assert_eq!(p.conflicts, []);
    assert_eq!(
        candidate(&ws, &p, "t.txt"),
        Some((b"a\nb\nc\nd\ne\nf\ng\nH by hand\n".to_vec(), 0o644))
    );
    assert_eq!(candidate(&ws, &p, "n.txt"), None);
    let shown = ws.journal.show(p.tx, None).unwrap();
    assert_eq!(shown.files, p.files);
    let rev = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(rev.tx, p.tx);
    assert_eq!(ws.read("t.txt"), b"a\nb\nc\nd\ne\nf\ng\nH by hand\n");
    assert!(!ws.path("n.txt").exists());
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("t.txt"), b"a\nB2\nc\nd\ne\nf\ng\nH by hand\n");
    assert_eq!(ws.read("n.txt"), b"n\n");
}

/// A conflicted revert is resolved by a revision and then committed.
#[test]
fn a_conflicted_revert_is_resolved_by_a_revision_then_committed() {
    let ws = workspace();
    let tx = (CASES[1].setup)(&ws);
    let p = ws
        .journal
        .revert(&[tx.into()], RevertOptions::new())
        .unwrap();
    assert_eq!(p.conflict_list.len(), 1);
    let sides = p.conflict_list[0].sides.as_ref().unwrap();
    assert_eq!(
        [
            sides[0].label.as_str(),
            sides[1].label.as_str(),
            sides[2].label.as_str()
        ],
        ["disk", "tx", "before tx"]
    );
    assert_eq!(
        (p.conflict_list[0].start_line, p.conflict_list[0].end_line),
        (Some(2), Some(8))
    );
    assert!(matches!(
        ws.journal.commit(p.tx, Default::default()),
        Err(Error::ValidationFailed { .. })
    ));
    let fixed = ws
        .journal
        .revise(
            p.tx,
            Default::default(),
            &plan(
                r#"{"edits":[{"op":"replace_file","path":"t.txt","content":"1\n2 and TWO\n3\n"}]}"#,
            ),
        )
        .unwrap();
    assert!(fixed.ready_to_commit, "{:?}", fixed.validation);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("t.txt"), b"1\n2 and TWO\n3\n");
}

/// The conflict markers are byte for byte `git merge-file -p --diff3` of the same three
/// inputs (ours = disk, base = the tx's bytes, theirs = the bytes before it).
#[test]
fn conflicts_equal_git_merge_file_diff3() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: git is not installed");
        return;
    }
    let inputs: &[(&[u8], &[u8], &[u8])] = &[
        (
            b"1\n2\n3\n4\n5\n",
            b"1\n2x\n3\n4x\n5\n",
            b"1\n2y\n3\n4x\n5\n",
        ),
        (b"a\r\nb\r\nc\r\n", b"a\r\nB\r\nc\r\n", b"a\r\nbb\r\nc\r\n"),
        (b"x\ny\nz", b"x\nY\nz", b"x\nYY\nzz"),
        (
            b"}\n}\n}\nfn a\n}\n",
            b"}\nfn b\n}\n}\nfn a\n}\n",
            b"}\n}\nfn c\n}\nfn a\n}\n",
        ),
        (
            b"}\n}\n}\nfn a\n}\n",
            b"}\nfn b\n}\n}\nfn a\n}\n",
            b"}\nfn c\n}\n}\nfn a\n}\n",
        ),
    ];
    for (i, (before, tx_bytes, disk_bytes)) in inputs.iter().enumerate() {
        let ws = workspace();
        ws.write("f.txt", before);
        let edit = serde_json::json!({"edits": [{"op": "write_file", "path": "f.txt",
            "content": std::str::from_utf8(tx_bytes).unwrap()}]});
        let tx = ws.preview(&edit.to_string()).tx;
        ws.journal.commit(tx, Default::default()).unwrap();
        ws.journal.flush().unwrap();
        ws.write("f.txt", disk_bytes);
        let r = ws.journal.revert(&[tx.into()], RevertOptions::new());
        let ours = ws.root().join("ours");
        let base = ws.root().join("base");
        let theirs = ws.root().join("theirs");
        std::fs::write(&ours, disk_bytes).unwrap();
        std::fs::write(&base, tx_bytes).unwrap();
        std::fs::write(&theirs, before).unwrap();
        let git = std::process::Command::new("git")
            .args([
                "merge-file",
                "-p",
                "--diff3",
                "-L",
                "disk",
                "-L",
                "tx",
                "-L",
                "before tx",
            ])
            .args([&ours, &base, &theirs])
            .output()
            .unwrap();
        let r = match r {
            Ok(r) => r,
            // The disk lacks the tx's change already: git merges cleanly to the disk.
            Err(Error::NothingToRevert { .. }) => {
                assert_eq!(
                    (git.stdout.as_slice(), git.status.code()),
                    (*disk_bytes, Some(0)),
                    "case {i}"
                );
                continue;
            }
            Err(e) => panic!("case {i}: {e}"),
        };
        let (got, _) = candidate(&ws, &r, "f.txt").unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&git.stdout),
            "case {i}"
        );
        assert_eq!(got, git.stdout, "case {i}");
        // git's exit status is the number of conflicts.
        let regions: usize = r.conflicts.iter().map(|c| c.regions.len()).sum();
        assert_eq!(git.status.code(), Some(regions as i32), "case {i}");
    }
}

#[test]
fn refusals_are_typed_and_record_nothing() {
    let ws = workspace();
    let open = ws.preview(r#"{"edits":[{"op":"append","path":"run.sh","text":"x\n"}]}"#);
    let before = ws.journal.log(None).unwrap().len();
    match ws.journal.revert(&[open.tx.into()], RevertOptions::new()) {
        Err(Error::WrongState {
            tx,
            verb: Verb::Revert,
            reason: StateReason::NotCommitted,
            ..
        }) => assert_eq!(tx, open.tx),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ws.journal.revert(&[99.into()], RevertOptions::new()),
        Err(Error::UnknownTx { tx: 99 })
    ));
    // Already undone by hand: nothing to revert.
    ws.journal.commit(open.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    ws.write("run.sh", b"#!/bin/sh\necho hi\n");
    let e = ws
        .journal
        .revert(&[open.tx.into()], RevertOptions::new())
        .unwrap_err();
    assert_eq!(e.kind(), "nothing_to_revert");
    assert_eq!(
        e.to_string(),
        format!("nothing to revert: every file tx {} changed already holds what it held before; nothing was recorded", open.tx)
    );
    assert_eq!(ws.journal.log(None).unwrap().len(), before);
    // The CLI: exit 1, the kind, and the log as next step.
    let out = cli(ws.root(), &["--json", "revert", &open.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "nothing_to_revert", "{v}");
    let out = cli(ws.root(), &["revert"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// Used by the per-agent tests and the property test: commit `json` as `agent`.
pub(crate) fn commit_as(j: &Journal, agent: &str, edits: serde_json::Value) -> u64 {
    let plan = plan(&serde_json::json!({"agent": agent, "edits": edits}).to_string());
    let p = j.preview(&plan).unwrap();
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    p.tx
}

/// `resolve` works on a revert's conflict as on a rebase's: the editor gets the
/// candidate with the revert's markers, and its saved file becomes a revision.
#[test]
fn resolve_in_an_editor_fixes_a_reverts_conflict() {
    let ws = workspace();
    let tx = (CASES[1].setup)(&ws);
    let out = cli(ws.root(), &["revert", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let tools = tempfile::tempdir().unwrap();
    let seen = tools.path().join("seen");
    let editor = tools.path().join("editor");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\ncp \"$1\" '{}'\nprintf '1\\nfixed\\n3\\n' > \"$1\"\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rtx = (tx + 1).to_string();
    let tmp = tempfile::tempdir().unwrap();
    let out = ue_command(ws.root(), &["resolve", &rtx])
        .env_remove("VISUAL")
        .env("EDITOR", &editor)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read(&seen).unwrap(),
        b"1\n<<<<<<< disk\nTWO\n||||||| tx\ntwo\n=======\n2\n>>>>>>> before tx\n3\n"
    );
    let out = cli(ws.root(), &["commit", &rtx], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("t.txt"), b"1\nfixed\n3\n");
}

/// A rollback refused because a person edited the file since names `revert TX` beside
/// `--force` (library message, CLI hint); following it keeps the person's edit.
#[test]
fn a_stale_rollback_names_the_revert_that_keeps_the_later_edit() {
    let ws = workspace();
    let tx = (CASES[0].setup)(&ws);
    let e = ws
        .journal
        .rollback(tx, RollbackOptions::default())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("cannot roll back tx {tx}: t.txt changed (or was deleted) since it was committed (t.txt was written outside ultra-edit); a forced rollback overwrites it after keeping its current bytes in the journal; a revert of tx {tx} removes only its own change and keeps the later changes")
    );
    let out = cli(ws.root(), &["--json", "rollback", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(
        v["error"]["hint"],
        format!("run `ultra-edit revert {tx}` to undo only tx {tx}'s change and keep what was written since, or `ultra-edit rollback {tx} --force` to overwrite it (its current bytes are kept in the journal first)")
    );
    let out = cli(ws.root(), &["revert", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = cli(ws.root(), &["commit", &(tx + 1).to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("t.txt"), b"1\n2\n3\n4\n5\nsix\n7\n");
}

/// A file deleted (or moved) by hand since the commit: the refusal says it is absent
/// and that a forced rollback re-creates it.
#[test]
fn a_stale_rollback_of_an_absent_file_says_it_is_absent() {
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"run.sh","old":"hi","new":"ho"}]}"#,
    );
    std::fs::rename(ws.path("run.sh"), ws.path("moved.sh")).unwrap();
    let e = ws
        .journal
        .rollback(tx, RollbackOptions::default())
        .unwrap_err();
    assert!(
        matches!(&e, Error::StaleRollback { absent, .. } if absent == &["run.sh".to_string()]),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("cannot roll back tx {tx}: run.sh is absent (deleted or moved since it was committed) (run.sh was written outside ultra-edit); a forced rollback re-creates it; a revert of tx {tx} removes only its own change and keeps the later changes")
    );
    let out = cli(ws.root(), &["--json", "rollback", &tx.to_string()], None);
    assert_eq!(
        json_of(&out)["error"]["hint"],
        format!("run `ultra-edit revert {tx}` to undo only tx {tx}'s change and keep what was written since, or `ultra-edit rollback {tx} --force` to re-create it")
    );
}

/// Two agents commit interleaved changes to the same files; each reverts its own work
/// (library and CLI) and the other's stays, byte for byte. `log --agent` lists one
/// agent's txs; `--last` and `--since` narrow the range.
#[test]
fn two_agents_each_undo_their_own_interleaved_work() {
    let ws = workspace();
    ws.write("s.txt", b"1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    let j = &ws.journal;
    let a1 = commit_as(
        j,
        "alice",
        serde_json::json!([{"op":"replace_text","path":"s.txt","old":"1\n","new":"A1\n"}]),
    );
    let b1 = commit_as(
        j,
        "bob",
        serde_json::json!([{"op":"replace_text","path":"s.txt","old":"5\n","new":"B5\n"}]),
    );
    let a2 = commit_as(
        j,
        "alice",
        serde_json::json!([{"op":"replace_text","path":"s.txt","old":"9\n","new":"A9\n"},{"op":"create_file","path":"alice.txt","content":"a\n"}]),
    );
    let b2 = commit_as(
        j,
        "bob",
        serde_json::json!([{"op":"replace_text","path":"s.txt","old":"3\n","new":"B3\n"}]),
    );
    assert_eq!(ws.read("s.txt"), b"A1\n2\nB3\n4\nB5\n6\n7\n8\nA9\n");

    let log: Vec<u64> = j
        .log_of(None, Some("alice"))
        .unwrap()
        .iter()
        .map(|e| e.tx)
        .collect();
    assert_eq!(log, [a2, a1]);
    let out = cli(ws.root(), &["--json", "log", "--agent", "bob"], None);
    let txs: Vec<u64> = json_of(&out)["txs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tx"].as_u64().unwrap())
        .collect();
    assert_eq!(txs, [b2, b1]);

    // --last 1: only alice's newest.
    let last = j
        .revert_agent(
            "alice",
            AgentRange::all().with_last(Some(1)),
            RevertOptions::new(),
        )
        .unwrap();
    assert_eq!(
        last.description.as_deref(),
        Some(format!("revert of tx {a2}").as_str())
    );
    j.abort(last.tx).unwrap();
    // --since after every tx: none.
    let e = j
        .revert_agent(
            "alice",
            AgentRange::all().with_since_ms(Some(u64::MAX)),
            RevertOptions::new(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), "nothing_to_revert");
    assert_eq!(e.to_string(), "nothing to revert: agent \"alice\" has no committed transaction in the range asked (rolled-back transactions, rollbacks and reverts are not counted); nothing was recorded");

    // Alice undoes all of hers through the CLI; bob's edits stay.
    let out = cli(ws.root(), &["--json", "revert", "--agent", "alice"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["description"], format!("revert of txs {a2}, {a1}"));
    assert_eq!(v["agent"], "alice");
    let rtx = v["tx"].as_u64().unwrap();
    let out = cli(ws.root(), &["commit", &rtx.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(ws.read("s.txt"), b"1\n2\nB3\n4\nB5\n6\n7\n8\n9\n");
    assert!(!ws.path("alice.txt").exists());
    // Her revert is not counted as her work: reverting her again finds nothing.
    let e = j
        .revert_agent("alice", AgentRange::default(), RevertOptions::new())
        .unwrap_err();
    assert_eq!(e.kind(), "nothing_to_revert");

    // Bob undoes his through the library; the file is back to the original.
    let p = j
        .revert_agent("bob", AgentRange::default(), RevertOptions::new())
        .unwrap();
    assert_eq!(
        p.description.as_deref(),
        Some(format!("revert of txs {b2}, {b1}").as_str())
    );
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(ws.read("s.txt"), b"1\n2\n3\n4\n5\n6\n7\n8\n9\n");

    // Usage: --since and --last need --agent, and exclude each other.
    let out = cli(ws.root(), &["revert", "--last", "1"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = cli(
        ws.root(),
        &["revert", "--agent", "bob", "--last", "1", "--since", "10m"],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = cli(
        ws.root(),
        &["revert", "--agent", "bob", "--since", "120"],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// A forced rollback says, per file changed since, what it did and where the bytes
/// went (library, CLI text and JSON); rolling back the forced rollback's tx brings
/// them back, byte for byte.
#[test]
fn a_forced_rollback_says_where_the_overwritten_bytes_went() {
    use ultra_edit::{OverwriteAction, Overwritten};
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"crate::helper()","new":"7"},
        {"op":"replace_text","path":"run.sh","old":"hi","new":"ho"},
        {"op":"create_file","path":"made.txt","content":"new\n"}]}"#,
    );
    ws.write("src/a.rs", b"by hand\n");
    std::fs::remove_file(ws.path("run.sh")).unwrap();
    ws.write("made.txt", b"rewritten\n");
    let out = cli(ws.root(), &["rollback", &tx.to_string(), "--force"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = tx + 1;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = stdout.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(
        notes,
        [
            format!("note: made.txt, which tx {tx} created, was rewritten since: the rollback deleted it, and its bytes are kept in tx {r}; `ultra-edit rollback {r}` brings them back"),
            format!("note: run.sh was absent (deleted or moved since tx {tx}); the rollback re-created it"),
            format!("note: the bytes src/a.rs held (changed since tx {tx}) are kept in tx {r}; `ultra-edit rollback {r}` brings them back"),
        ]
    );
    assert!(!ws.path("made.txt").exists());
    assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho hi\n");
    assert_eq!(ws.mode("run.sh"), 0o755);
    let rb = ws.journal.tx(r).unwrap();
    assert_eq!(rb.rollback_of, Some(tx));
    // Rolling back the forced rollback brings the overwritten bytes back.
    let out = cli(ws.root(), &["--json", "rollback", &r.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out).get("overwritten"), None);
    assert_eq!(ws.read("src/a.rs"), b"by hand\n");
    assert_eq!(ws.read("made.txt"), b"rewritten\n");
    assert!(!ws.path("run.sh").exists());

    // JSON, on a fresh history: the receipt's fields plus `overwritten`.
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"replace_text","path":"run.sh","old":"hi","new":"ho"}]}"#,
    );
    ws.write("run.sh", b"mine\n");
    let receipt = ws
        .journal
        .rollback(tx, RollbackOptions::new().with_force(true))
        .unwrap();
    ws.journal.flush().unwrap();
    let o = ws.journal.overwritten(&receipt).unwrap();
    assert_eq!(
        o,
        [Overwritten {
            path: "run.sh".into(),
            action: OverwriteAction::Overwrote,
            kept_in: Some(receipt.tx),
            rolled_back: tx,
        }]
    );
    assert_eq!(
        o[0].describe(),
        format!("the bytes run.sh held (changed since tx {tx}) were overwritten and are kept in tx {}; rolling back tx {} brings them back", receipt.tx, receipt.tx)
    );
    // A rollback that was not forced reports nothing.
    let again = ws
        .journal
        .rollback(receipt.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.journal.overwritten(&again).unwrap(), []);
    assert_eq!(ws.read("run.sh"), b"mine\n");
    let tx2 = commit(
        &ws,
        r#"{"edits":[{"op":"append","path":"README.md","text":"\nmore"}]}"#,
    );
    ws.write("README.md", b"other");
    let out = cli(
        ws.root(),
        &["--json", "rollback", &tx2.to_string(), "--force"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["kind"]["rollback"]["forced"], true);
    assert_eq!(
        v["overwritten"],
        serde_json::json!([{"path": "README.md", "action": "overwrote", "kept_in": v["tx"], "rolled_back": tx2}])
    );
}

/// The same file cases through MCP (`edit_revert` then `edit_commit`): the candidate's
/// hash and mode per file, the conflict list, and the committed bytes and modes.
#[test]
fn every_file_case_through_mcp() {
    use ultra_edit::mcp::EditTools;
    for case in CASES {
        let ws = workspace();
        let tx = (case.setup)(&ws);
        let tools = EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
        let v = tools
            .call(
                "edit_revert",
                serde_json::json!({"agent_id": "me", "tx": tx}),
            )
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
        assert_eq!(
            v["description"],
            format!("revert of tx {tx}"),
            "{}",
            case.name
        );
        for (path, want) in case.want {
            let f = v["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == *path);
            match (f, want) {
                (Some(f), Some((bytes, mode))) => {
                    assert_eq!(f["candidate"]["exists"], true, "{}", case.name);
                    assert_eq!(
                        f["candidate"]["content_hash"],
                        blake3::hash(bytes).to_hex().as_str(),
                        "{}",
                        case.name
                    );
                    assert_eq!(f["candidate"]["mode"], *mode, "{}", case.name);
                }
                (Some(f), None) => assert_eq!(f["candidate"]["exists"], false, "{}", case.name),
                (None, want) => assert_eq!(disk(&ws, path), owned(want), "{}", case.name),
            }
        }
        match case.conflict {
            Some(reason) => {
                let list = v["conflict_list"].as_array().unwrap();
                assert!(
                    list[0]["reason"].as_str().unwrap().contains(reason),
                    "{}: {v}",
                    case.name
                );
                let e = tools
                    .call("edit_commit", serde_json::json!({"agent_id": "me", "preview_id": v["preview_id"], "confirm": true}))
                    .unwrap_err();
                assert_eq!(e.kind, "validation_failed", "{}", case.name);
            }
            None => {
                tools
                    .call("edit_commit", serde_json::json!({"agent_id": "me", "preview_id": v["preview_id"], "confirm": true}))
                    .unwrap_or_else(|e| panic!("{}: {e:?}", case.name));
                for (path, want) in case.want {
                    assert_eq!(
                        disk(&ws, path),
                        owned(want),
                        "{}: {path} on disk",
                        case.name
                    );
                }
            }
        }
    }
}

/// MCP per agent: each agent reverts its own work through `agent_id` alone; a tx of
/// another agent is refused; a stale rollback names edit_revert; a forced rollback
/// lists what it overwrote and the call that brings it back.
#[test]
fn mcp_agents_revert_their_own_work_and_rollbacks_say_where_bytes_went() {
    use ultra_edit::mcp::EditTools;
    let ws = workspace();
    ws.write("s.txt", b"1\n2\n3\n4\n5\n6\n7\n");
    let tools = EditTools::new(std::sync::Arc::new(Journal::open(ws.root()).unwrap()));
    let commit = |agent: &str, old: &str, new: &str| -> serde_json::Value {
        let p = tools
            .call("edit_preview", serde_json::json!({"agent_id": agent, "edits": [{"op": "replace_text", "path": "s.txt", "old": old, "new": new}]}))
            .unwrap();
        tools
            .call("edit_commit", serde_json::json!({"agent_id": agent, "preview_id": p["preview_id"], "confirm": true}))
            .unwrap();
        p["preview_id"].clone()
    };
    let a1 = commit("alice", "1\n", "A1\n");
    let _b1 = commit("bob", "4\n", "B4\n");
    let _a2 = commit("alice", "7\n", "A7\n");
    // Bob may not revert alice's tx.
    let e = tools
        .call(
            "edit_revert",
            serde_json::json!({"agent_id": "bob", "tx": a1}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "agent_mismatch");
    let v = tools
        .call("edit_revert", serde_json::json!({"agent_id": "alice"}))
        .unwrap();
    assert_eq!(v["agent_id"], "alice", "{v}");
    tools
        .call("edit_commit", serde_json::json!({"agent_id": "alice", "preview_id": v["preview_id"], "confirm": true}))
        .unwrap();
    assert_eq!(ws.read("s.txt"), b"1\n2\n3\nB4\n5\n6\n7\n");
    let e = tools
        .call("edit_revert", serde_json::json!({"agent_id": "alice"}))
        .unwrap_err();
    assert_eq!(e.kind, "nothing_to_revert");

    // A stale rollback of bob's tx names edit_revert.
    let b2 = commit("bob", "2\n", "B2\n");
    ws.write("s.txt", b"1\nB2\n3\nB4\n5\nsix\n7\n");
    let e = tools
        .call(
            "edit_rollback",
            serde_json::json!({"agent_id": "bob", "tx": b2}),
        )
        .unwrap_err();
    assert_eq!(e.kind, "stale_rollback");
    assert!(e.hint.contains("call edit_revert with tx="), "{}", e.hint);
    assert_eq!(e.example.as_deref().unwrap()["tool"], "edit_revert");
    let v = tools
        .call(
            "edit_rollback",
            serde_json::json!({"agent_id": "bob", "tx": b2, "force": true}),
        )
        .unwrap();
    let r = v["tx"].as_u64().unwrap();
    assert_eq!(v["overwritten"][0]["path"], "s.txt");
    assert_eq!(v["overwritten"][0]["action"], "overwrote");
    assert_eq!(v["overwritten"][0]["kept_in"], r);
    assert_eq!(v["overwritten"][0]["bring_back"]["tool"], "edit_rollback");
    assert_eq!(
        v["overwritten"][0]["message"],
        format!("the bytes s.txt held (changed since tx {}) were overwritten and are kept in tx {r}; rolling back tx {r} brings them back", b2.as_str().unwrap().rsplit('-').next().unwrap())
    );
    tools
        .call(
            "edit_rollback",
            serde_json::json!({"agent_id": "bob", "preview_id": v["overwritten"][0]["bring_back"]["preview_id"]}),
        )
        .unwrap();
    assert_eq!(ws.read("s.txt"), b"1\nB2\n3\nB4\n5\nsix\n7\n");
}

/// An agent's successive commits to the same lines, another agent's commit between
/// them: reverting the agent is one merge per file (hbreak). Merged tx by tx, the
/// newer tx's conflict with a person's edit was merged again by the older tx, which
/// nested its markers; and reverting the agent a second time conflicted instead of
/// finding nothing to revert.
#[test]
fn an_agents_successive_commits_to_the_same_lines_revert_as_one_merge() {
    let ws = workspace();
    ws.write(
        "f.txt",
        b"1
2
3
4
5
6
7
8
9
",
    );
    let j = &ws.journal;
    let a1 = commit_as(
        j,
        "a",
        serde_json::json!([{"op":"replace_text","path":"f.txt","old":"2\n","new":"A2\n"}]),
    );
    commit_as(
        j,
        "b",
        serde_json::json!([{"op":"replace_text","path":"f.txt","old":"5\n","new":"B5\n"}]),
    );
    let a2 = commit_as(
        j,
        "a",
        serde_json::json!([{"op":"replace_text","path":"f.txt","old":"A2\n","new":"AA2\n"},
                           {"op":"replace_text","path":"f.txt","old":"8\n","new":"A8\n"}]),
    );
    // Clean: a's lines come back, b's stay.
    let p = j
        .revert_agent("a", AgentRange::default(), RevertOptions::new())
        .unwrap();
    assert_eq!(p.conflicts, []);
    assert_eq!(
        candidate(&ws, &p, "f.txt"),
        Some((b"1\n2\n3\n4\nB5\n6\n7\n8\n9\n".to_vec(), 0o644))
    );
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    // Reverted already: nothing to revert, nothing recorded.
    let before = j.log(None).unwrap().len();
    let e = j
        .revert_agent("a", AgentRange::default(), RevertOptions::new())
        .unwrap_err();
    assert_eq!(e.kind(), "nothing_to_revert");
    assert_eq!(j.log(None).unwrap().len(), before);
    j.rollback(p.tx, RollbackOptions::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(ws.read("f.txt"), b"1\nAA2\n3\n4\nB5\n6\n7\nA8\n9\n");

    // A person changed a's line since: one conflict, git's markers, not nested.
    ws.write("f.txt", b"1\nP2\n3\n4\nB5\n6\n7\nA8\n9\n");
    let p = j
        .revert_agent("a", AgentRange::default(), RevertOptions::new())
        .unwrap();
    assert_eq!(
        candidate(&ws, &p, "f.txt"),
        Some((
            b"1\n<<<<<<< disk\nP2\n||||||| tx\nAA2\n=======\n2\n>>>>>>> before tx\n3\n4\nB5\n6\n7\n8\n9\n"
                .to_vec(),
            0o644
        ))
    );
    assert_eq!(p.conflicts.len(), 1);
    assert_eq!(p.conflicts[0].path.as_str(), "f.txt");
    assert_eq!(p.conflicts[0].regions.len(), 1);
    assert!(
        p.conflicts[0]
            .reason
            .starts_with(&format!("reverting txs {a2}, {a1}: ")),
        "{}",
        p.conflicts[0].reason
    );
    assert!(!p.ready_to_commit);
}

/// Txs that wrote a file one after the other, nothing else in between, compose to
/// the oldest's pre-image even where the newer rewrote the older's lines and a
/// person changed them since: the conflict shows the person's lines against the
/// first tx's pre-image, once.
#[test]
fn back_to_back_txs_of_one_file_conflict_once_against_the_oldest_pre_image() {
    let ws = workspace();
    ws.write("f.txt", b"a\nb\nc\n");
    let j = &ws.journal;
    let t1 = commit_as(
        j,
        "x",
        serde_json::json!([{"op":"replace_text","path":"f.txt","old":"b\n","new":"B1\n"}]),
    );
    let t2 = commit_as(
        j,
        "y",
        serde_json::json!([{"op":"replace_text","path":"f.txt","old":"B1\n","new":"B2\n"}]),
    );
    ws.write("f.txt", b"a\nP\nc\n");
    let p = j
        .revert(&[t1.into(), t2.into()], RevertOptions::new())
        .unwrap();
    assert_eq!(
        candidate(&ws, &p, "f.txt"),
        Some((
            b"a\n<<<<<<< disk\nP\n||||||| tx\nB2\n=======\nb\n>>>>>>> before tx\nc\n".to_vec(),
            0o644
        ))
    );
    assert_eq!(p.conflicts.len(), 1);
    assert_eq!(
        p.conflicts[0].reason,
        format!("reverting txs {t2}, {t1}: both sides changed the same lines")
    );
}

/// Joining a tx that deleted a file with a newer one that wrote it again is done
/// only when nothing came between: re-created by someone else in between, the file
/// is the whole-file conflict of a single revert ("exists again with other bytes"),
/// not a silent merge against an empty base.
#[test]
fn a_file_deleted_then_recreated_by_someone_else_is_not_joined_across() {
    let ws = workspace();
    ws.write("d.txt", b"x\n");
    let t1 = commit(&ws, r#"{"edits":[{"op":"delete_file","path":"d.txt"}]}"#);
    ws.write("d.txt", b"");
    let t2 = commit(
        &ws,
        r#"{"edits":[{"op":"write_file","path":"d.txt","content":"y\n"}]}"#,
    );
    let p = ws
        .journal
        .revert(&[t1.into(), t2.into()], RevertOptions::new())
        .unwrap();
    assert_eq!(candidate(&ws, &p, "d.txt"), Some((Vec::new(), 0o644)));
    assert_eq!(p.conflicts.len(), 1);
    assert_eq!(
        p.conflicts[0].reason,
        format!("reverting tx {t1}: tx {t1} deleted it and it exists again with other bytes; the candidate keeps the file on disk")
    );
    assert!(!p.ready_to_commit);
}

/// A file whose change was undone by hand already is left out of the revert's
/// revision (hbreak): no `candidate_equals_source` warning about edits nobody wrote,
/// and a file the tx created that is gone again is not listed either.
#[test]
fn files_the_revert_leaves_unchanged_are_not_in_its_revision() {
    let ws = workspace();
    ws.write("f.txt", b"f\n");
    ws.write("g.txt", b"g\n");
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"write_file","path":"f.txt","content":"F\n"},{"op":"write_file","path":"g.txt","content":"G\n"},{"op":"create_file","path":"n.txt","content":"n\n"}]}"#,
    );
    ws.write("g.txt", b"g\n");
    std::fs::remove_file(ws.path("n.txt")).unwrap();
    let p = ws
        .journal
        .revert(&[tx.into()], RevertOptions::new())
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["f.txt"]);
    let codes: Vec<(&str, &str)> = p
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.path.as_str()))
        .collect();
    assert_eq!(codes, []);
    assert!(p.ready_to_commit);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("f.txt"), b"f\n");
    assert_eq!(ws.read("g.txt"), b"g\n");
    assert!(!ws.path("n.txt").exists());
}

mod property {
    use proptest::prelude::*;
    use ultra_edit::{AgentRange, RevertOptions};

    use super::commit_as;
    use crate::support::*;

    const FILES: usize = 3;
    /// Editable slots per file; each sits between two lines nobody edits, so two
    /// agents' edits never overlap or touch (git would call touching hunks a conflict).
    const SLOTS: usize = 5;

    fn original(slot_text: &[Vec<String>], f: usize) -> String {
        let mut s = format!("f{f} head\n");
        for (k, t) in slot_text[f].iter().enumerate() {
            s += t;
            s += &format!("f{f} fixed {k}\n");
        }
        s
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, ..ProptestConfig::default() })]

        /// Two agents commit interleaved, non-overlapping edits to the same files;
        /// reverting all of agent a's txs gives exactly b's changes applied to the
        /// original files, without a conflict, and commits to those bytes.
        #[test]
        fn reverting_one_agent_leaves_exactly_the_others_changes(
            owners in prop::collection::vec(any::<bool>(), FILES * SLOTS),
            steps in prop::collection::vec(
                (any::<bool>(), prop::collection::vec((0..FILES * SLOTS, 0usize..3), 1..3)),
                1..8,
            ),
        ) {
            let ws = workspace();
            let start: Vec<Vec<String>> = (0..FILES)
                .map(|f| (0..SLOTS).map(|k| format!("f{f} slot {k}\n")).collect())
                .collect();
            for f in 0..FILES {
                ws.write(&format!("s{f}.txt"), original(&start, f).as_bytes());
            }
            // What the disk holds, and what it would hold with only b's edits.
            let mut now = start.clone();
            let mut only_b = start.clone();
            let mut a_txs = 0;
            for (step, (is_a, edits)) in steps.iter().enumerate() {
                let agent = if *is_a { "a" } else { "b" };
                let mut json = Vec::new();
                let mut used = std::collections::BTreeSet::new();
                for (slot, n) in edits {
                    // The agent edits only its own slots, once per tx, and not a
                    // slot it emptied (nothing left to match).
                    let (f, k) = (slot / SLOTS, slot % SLOTS);
                    if owners[*slot] != *is_a || now[f][k].is_empty() || !used.insert(*slot) {
                        continue;
                    }
                    let new: String = (0..*n).map(|i| format!("{agent} {step} {f}.{k}.{i}\n")).collect();
                    json.push(serde_json::json!({"op": "replace_text", "path": format!("s{f}.txt"), "old": now[f][k], "new": new}));
                    now[f][k] = new.clone();
                    if !*is_a {
                        only_b[f][k] = new;
                    }
                }
                if json.is_empty() {
                    continue;
                }
                commit_as(&ws.journal, agent, serde_json::Value::Array(json));
                a_txs += usize::from(*is_a);
            }
            for f in 0..FILES {
                prop_assert_eq!(ws.read(&format!("s{f}.txt")), original(&now, f).into_bytes());
            }
            let res = ws.journal.revert_agent("a", AgentRange::default(), RevertOptions::new());
            if a_txs == 0 {
                prop_assert_eq!(res.unwrap_err().kind(), "nothing_to_revert");
                return Ok(());
            }
            let p = match res {
                Ok(p) => p,
                // a's edits cancelled out (e.g. a slot changed and changed back).
                Err(e) if e.kind() == "nothing_to_revert" => {
                    prop_assert_eq!(&now, &only_b);
                    return Ok(());
                }
                Err(e) => panic!("{e}"),
            };
            prop_assert_eq!(&p.conflicts, &[]);
            prop_assert!(p.ready_to_commit, "{:?}", p.validation);
            ws.journal.commit(p.tx, Default::default()).unwrap();
            ws.journal.flush().unwrap();
            for f in 0..FILES {
                prop_assert_eq!(
                    String::from_utf8(ws.read(&format!("s{f}.txt"))).unwrap(),
                    original(&only_b, f)
                );
            }
        }
    }
}

/// MCP `edit_revert` reverts what was named and nothing else: `tx` with `txs`, an
/// empty `txs`, or `last`/`since_ms` beside named txs are refused as invalid
/// arguments, and no preview is made (the log keeps its one entry).
#[test]
fn mcp_revert_refuses_an_empty_or_doubled_choice_of_txs() {
    use ultra_edit::mcp::EditTools;
    let ws = workspace();
    ws.write("s.txt", b"1\n2\n");
    let journal = std::sync::Arc::new(Journal::open(ws.root()).unwrap());
    let tools = EditTools::new(journal.clone());
    let p = tools
        .call("edit_preview", serde_json::json!({"agent_id": "a", "edits": [{"op": "replace_text", "path": "s.txt", "old": "1\n", "new": "one\n"}]}))
        .unwrap();
    tools
        .call(
            "edit_commit",
            serde_json::json!({"agent_id": "a", "preview_id": p["preview_id"], "confirm": true}),
        )
        .unwrap();
    let id = p["preview_id"].clone();
    for (args, says) in [
        (serde_json::json!({"agent_id": "a", "txs": []}), "edit_revert: txs is empty: name at least one transaction, or leave txs out to revert every committed transaction of agent_id"),
        (serde_json::json!({"agent_id": "a", "tx": id, "txs": [id]}), "edit_revert: give tx or txs, not both"),
        (serde_json::json!({"agent_id": "a", "tx": id, "last": 1}), "edit_revert: last and since_ms choose among agent_id's transactions: they cannot narrow tx or txs"),
        (serde_json::json!({"agent_id": "a", "txs": [id], "since_ms": 0}), "edit_revert: last and since_ms choose among agent_id's transactions: they cannot narrow tx or txs"),
    ] {
        let e = tools.call("edit_revert", args.clone()).unwrap_err();
        assert_eq!((e.kind.as_str(), e.message.as_str()), ("invalid_arguments", says), "{args}");
    }
    assert_eq!(journal.log(None).unwrap().len(), 1);
    assert_eq!(ws.read("s.txt"), b"one\n2\n");
}

/// CLI: `--since` and `--last` narrow `--agent`'s transactions, so beside named txs
/// they are a usage error (exit 2) naming the clash, and nothing is recorded.
#[test]
fn cli_revert_refuses_since_and_last_beside_named_txs() {
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"append","path":"run.sh","text":"x\n"}]}"#,
    );
    let before = ws.journal.log(None).unwrap().len();
    for (flag, value) in [("--last", "1"), ("--since", "2h")] {
        let out = crate::support::cli(ws.root(), &["revert", &tx.to_string(), flag, value], None);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let names = match flag {
            "--last" => "'--last <N>'",
            _ => "'--since <TIME>'",
        };
        assert!(
            err.starts_with(&format!(
                "error: the argument '[TXS]...' cannot be used with {names}"
            )),
            "{err}"
        );
    }
    assert_eq!(ws.journal.log(None).unwrap().len(), before);
}

/// A path refused in a revert has no plan to fix: the hint says a reverted tx wrote it
/// and what to do (found by the breaker: "fix that path in the plan and preview
/// again"). Here the directory the tx wrote into is a symbolic link now.
#[test]
fn a_path_refused_in_a_revert_says_what_to_fix_without_a_plan() {
    let ws = workspace();
    let tx = commit(
        &ws,
        r#"{"edits":[{"op":"create_file","path":"d/f.txt","content":"f\n"}]}"#,
    );
    std::fs::rename(ws.path("d"), ws.path("real")).unwrap();
    std::os::unix::fs::symlink("real", ws.path("d")).unwrap();
    let out = crate::support::cli(ws.root(), &["--json", "revert", &tx.to_string()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "path_refused");
    assert_eq!(
        err["hint"],
        "d is a symbolic link, and a transaction does not write through links: a reverted transaction wrote that path, and the disk holds something else there now: put a regular file back there (or remove what is there) outside ultra-edit and revert again, or revert without that transaction"
    );
    assert_eq!(ws.journal.log(None).unwrap().len(), 1);
}

/// `revert --since` refuses a bare number and a word with one wording that says what
/// it accepts (found by the breaker: two wordings).
#[test]
fn cli_revert_since_refuses_a_number_and_a_word_alike() {
    let ws = workspace();
    for bad in ["120", "garbage"] {
        let out = crate::support::cli(ws.root(), &["revert", "--agent", "a", "--since", bad], None);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!(
            "error: invalid value '{bad}' for '--since <TIME>': \"{bad}\" is not a time: give an RFC 3339 time, a date (from its midnight UTC) or a duration ago with its unit (a bare number is none); e.g. 2026-11-30T08:00:00Z, 2026-11-30, 10m or 2h ago"
        );
        assert!(err.starts_with(&want), "{err}");
    }
}
