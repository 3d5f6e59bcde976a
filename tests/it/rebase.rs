//! Preview iteration and explicit rebase (docs/design.md, "Lifecycle" › 2. Iteration).

use proptest::prelude::*;
use ultra_edit::{BlobHash, Error, Journal, ReviseOptions, TxState};

use crate::support::*;

fn candidate(j: &Journal, tx: u64, path: &str) -> Option<Vec<u8>> {
    let p = j.show(tx, None).unwrap();
    let f = p.files.iter().find(|f| f.path == path)?;
    f.candidate.hash().map(|h| j.blob(&h).unwrap().unwrap())
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// One revision's edits: disjoint `(start, end, replacement lines)` on the current lines.
fn apply_model(lines: &mut Vec<String>, edits: &[(usize, usize, Vec<String>)]) {
    let mut sorted = edits.to_vec();
    sorted.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (start, end, new) in sorted {
        lines.splice(start - 1..end, new);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random sequences of replace_lines edits, revision by revision, equal the same
    /// edits applied to a plain Vec<String> model: line numbers always refer to the
    /// latest candidate, never to the disk or an older revision.
    #[test]
    fn repeated_revisions_do_not_leak_stale_offsets(
        seeds in prop::collection::vec((0usize..1000, 0usize..1000, 0usize..4, any::<bool>()), 1..7)
    ) {
        let ws = workspace();
        ws.write("m.txt", numbered(12).as_bytes());
        let mut model: Vec<String> = numbered(12).lines().map(|l| format!("{l}\n")).collect();
        let mut tx = None;
        for (rev, (a, b, n_new, two)) in seeds.into_iter().enumerate() {
            let len = model.len().max(1);
            let start = a % len + 1;
            let end = (start + b % 3).min(model.len()).max(start);
            let mut edits = vec![(start, end, (0..n_new).map(|k| format!("r{rev} e0 {k}\n")).collect::<Vec<_>>())];
            // A second edit in the same revision, after the first (both against one base).
            if two && end + 1 < model.len() {
                let s2 = end + 1 + (a % (model.len() - end));
                let s2 = s2.min(model.len());
                edits.push((s2, s2, vec![format!("r{rev} e1\n")]));
            }
            if model.is_empty() {
                edits = vec![];
            }
            let json_edits: Vec<_> = edits.iter().map(|(s, e, new)| serde_json::json!({
                "op": "replace_lines", "path": "m.txt", "start": s, "end": e, "content": new.concat()
            })).collect();
            if json_edits.is_empty() { break; }
            let plan = plan(&serde_json::json!({ "edits": json_edits }).to_string());
            let p = match tx {
                None => ws.journal.preview(&plan).unwrap(),
                Some(t) => ws.journal.revise(t, ReviseOptions::default(), &plan).unwrap(),
            };
            tx = Some(p.tx);
            prop_assert_eq!(p.revision as usize, rev);
            apply_model(&mut model, &edits);
            let got = candidate(&ws.journal, p.tx, "m.txt").unwrap_or_default();
            prop_assert_eq!(String::from_utf8(got).unwrap(), model.concat());
        }
    }
}

#[test]
fn revise_against_old_base_is_refused() {
    let ws = workspace();
    ws.write("f.txt", numbered(8).as_bytes());
    let p0 = ws.preview(
        r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":2,"end":2,"content":"TWO\n"}]}"#,
    );
    let opts = ReviseOptions::default();
    ws.journal
        .revise(p0.tx, opts, &plan(r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":7,"end":7,"content":"SEVEN\n"}]}"#))
        .unwrap();
    // A plan written against revision 0 while the latest is 1.
    let old = plan(
        r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":4,"end":4,"content":"FOUR\n"}]}"#,
    );
    let err = ws
        .journal
        .revise(
            p0.tx,
            ReviseOptions::new().with_base(0).with_rebase(false),
            &old,
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::StaleRevision {
                base: 0,
                latest: 1,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.exit_code(), 3);
    assert_eq!(
        ws.journal.show(p0.tx, None).unwrap().revision,
        1,
        "nothing recorded"
    );
    // Asked explicitly, it is merged onto revision 1.
    let p2 = ws
        .journal
        .revise(
            p0.tx,
            ReviseOptions::new().with_base(0).with_rebase(true),
            &old,
        )
        .unwrap();
    assert_eq!((p2.revision, p2.base, p2.conflicts.len()), (2, Some(1), 0));
    assert_eq!(
        String::from_utf8(candidate(&ws.journal, p0.tx, "f.txt").unwrap()).unwrap(),
        "line 1\nTWO\nline 3\nFOUR\nline 5\nline 6\nSEVEN\nline 8\n"
    );
}

#[test]
fn rebase_clean_merge_commits() {
    let ws = workspace();
    ws.write("f.txt", numbered(10).as_bytes());
    let p = ws.preview(r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":2,"end":2,"content":"agent\n"}]}"#);
    ws.write(
        "f.txt",
        numbered(10).replace("line 8\n", "human\n").as_bytes(),
    );
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::StaleSnapshot { .. }) && err.to_string().contains("rebase"),
        "{err}"
    );
    let r = ws.journal.rebase(p.tx).unwrap();
    assert_eq!((r.tx, r.revision, r.base), (p.tx, 1, Some(0)));
    assert!(r.conflicts.is_empty() && r.ready_to_commit);
    let disk = numbered(10).replace("line 8\n", "human\n");
    assert_eq!(
        r.files[0].snapshot.hash(),
        Some(BlobHash::of(disk.as_bytes()))
    );
    let receipt = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(receipt.kind, ultra_edit::BatchKind::Commit { revision: 1 });
    assert_eq!(
        String::from_utf8(ws.read("f.txt")).unwrap(),
        numbered(10)
            .replace("line 2\n", "agent\n")
            .replace("line 8\n", "human\n")
    );
    // Nothing moved now: rebase says so instead of making an empty revision.
    let q = ws.preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#);
    assert!(matches!(
        ws.journal.rebase(q.tx),
        Err(Error::NothingToRebase { .. })
    ));
}

#[test]
fn rebase_conflict_is_reported_and_blocks_commit() {
    let ws = workspace();
    ws.write("f.txt", numbered(6).as_bytes());
    let p = ws.preview(r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":3,"end":4,"content":"agent 3\nagent 4\n"}]}"#);
    ws.write(
        "f.txt",
        numbered(6).replace("line 4\n", "human 4\n").as_bytes(),
    );
    let r = ws.journal.rebase(p.tx).unwrap();
    assert!(!r.ready_to_commit);
    assert_eq!(r.conflicts.len(), 1);
    let c = &r.conflicts[0];
    assert_eq!(c.path, "f.txt");
    assert_eq!(c.regions.len(), 1);
    let g = &c.regions[0];
    assert_eq!((g.merged_start, g.merged_lines), (3, 10));
    assert_eq!((g.base_start, g.base_lines), (3, 2));
    assert_eq!(
        (g.ours_start, g.ours_lines, g.ours.as_str()),
        (3, 2, "agent 3\nagent 4\n")
    );
    assert_eq!(
        (g.theirs_start, g.theirs_lines, g.theirs.as_str()),
        (3, 2, "line 3\nhuman 4\n")
    );
    assert_eq!(
        String::from_utf8(candidate(&ws.journal, p.tx, "f.txt").unwrap()).unwrap(),
        "line 1\nline 2\n<<<<<<< candidate\nagent 3\nagent 4\n||||||| snapshot\nline 3\nline 4\n=======\nline 3\nhuman 4\n>>>>>>> disk\nline 5\nline 6\n"
    );
    // The list for people: file, the marked lines, the labelled sides.
    assert_eq!(
        serde_json::to_value(&r.conflict_list).unwrap(),
        serde_json::json!([{
            "path": "f.txt", "start_line": 3, "end_line": 12,
            "sides": [
                {"label": "candidate", "lines": 2},
                {"label": "snapshot", "lines": 2},
                {"label": "disk", "lines": 2}
            ],
            "reason": "both sides changed the same lines",
            "lossy": false
        }])
    );
    assert!(r
        .validation
        .iter()
        .any(|i| i.code == "merge_conflict" && i.path == "f.txt"));
    let before = ws.tree();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::ValidationFailed { revision: 1, .. }),
        "{err:?}"
    );
    assert_eq!(ws.tree(), before);
    // While its conflicts stand, another rebase is refused: it would nest the markers.
    let theirs = ws.read("f.txt");
    ws.write(
        "f.txt",
        numbered(6).replace("line 6\n", "human 6\n").as_bytes(),
    );
    let err = ws.journal.rebase(p.tx).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::UnresolvedConflicts { tx, revision: 1, paths } if *tx == p.tx && paths == &["f.txt"]
        ),
        "{err:?}"
    );
    assert_eq!(ws.journal.show(p.tx, None).unwrap().revision, 1);
    let out = cli(ws.root(), &["--json", "rebase", &p.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(4));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "unresolved_conflicts", "{v}");
    assert_eq!(
        v["error"]["next_step"],
        serde_json::json!({"step": "resolve", "tx": p.tx})
    );
    assert_eq!(
        v["error"]["hint"],
        format!("run `ultra-edit resolve {0}` to fix the conflicts in your editor (or `ultra-edit revise {0}` with a plan)", p.tx)
    );
    assert_eq!(ws.journal.show(p.tx, None).unwrap().revision, 1);
    ws.write("f.txt", &theirs);
    // Resolving it in a revision makes it committable.
    let fix = ws
        .journal
        .revise(p.tx, ReviseOptions::default(), &plan(r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":3,"end":12,"content":"agent 3\nhuman 4\n"}]}"#))
        .unwrap();
    assert!(fix.ready_to_commit, "{:?}", fix.validation);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        String::from_utf8(ws.read("f.txt")).unwrap(),
        "line 1\nline 2\nagent 3\nhuman 4\nline 5\nline 6\n"
    );
}

#[test]
fn rebase_matches_git_merge_file() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipped: git is not installed");
        return;
    }
    let fixtures: &[(&str, &str, &str)] = &[
        ("a\nb\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nb\nc\nD\ne\n"),
        ("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n"),
        ("a\nb\nc\n", "a\nb\nc\nours\n", "a\nb\nc\ntheirs\n"),
        (
            "1\n2\n3\n4\n5\n6\n7\n8\n",
            "1\n2\nx\n4\n5\n6\n7\n8\n",
            "1\n2\n3\n4\n5\n6\ny\n8\n",
        ),
        ("k\n", "k\nl\n", "j\nk\n"),
        ("p\nq\nr\ns\n", "p\nQ\nR\ns\n", "p\nQ\nr\nS\n"),
        (
            "one\r\ntwo\r\nthree\r\n",
            "one\r\nTWO\r\nthree\r\n",
            "one\r\ntwo\r\nTHREE\r\n",
        ),
        ("no newline", "no newline at all", "no newline here"),
        ("a\nb\nc\nd\n", "a\nc\nd\n", "a\nb\nc\nd\ne\n"),
        // Both sides share a changed line: inside the markers in the diff3 style.
        ("a\nb\nc\nd\n", "a\nS\nX\nd\n", "a\nS\nY\nd\n"),
        // Two separate conflicts, the base without a final newline.
        (
            "1\n2\n3\n4\n5\n6\n7",
            "1\nA\n3\n4\n5\n6\nA7",
            "1\nB\n3\n4\n5\n6\nB7",
        ),
    ];
    for (i, (base, ours, theirs)) in fixtures.iter().enumerate() {
        let ws = workspace();
        ws.write("f.txt", base.as_bytes());
        let json =
            serde_json::json!({"edits":[{"op":"replace_file","path":"f.txt","content":ours}]})
                .to_string();
        let p = ws.preview(&json);
        ws.write("f.txt", theirs.as_bytes());
        let r = ws.journal.rebase(p.tx).unwrap();
        let ours_bytes = candidate(&ws.journal, p.tx, "f.txt").unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [("ours", ours), ("base", base), ("theirs", theirs)] {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        let out = std::process::Command::new("git")
            .args([
                "merge-file",
                "-p",
                "--diff3",
                "-L",
                "candidate",
                "-L",
                "snapshot",
                "-L",
                "disk",
                "ours",
                "base",
                "theirs",
            ])
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        let git_conflicts = out.status.code().unwrap();
        assert!(
            (0..128).contains(&git_conflicts),
            "fixture {i}: git merge-file failed"
        );
        assert_eq!(
            String::from_utf8_lossy(&ours_bytes),
            String::from_utf8_lossy(&out.stdout),
            "fixture {i}"
        );
        let ours_conflicts: usize = r.conflicts.iter().map(|c| c.regions.len()).sum();
        assert_eq!(
            ours_conflicts, git_conflicts as usize,
            "fixture {i}: conflict count"
        );
    }
}

#[test]
fn revision_can_add_and_drop_files() {
    let ws = workspace();
    let p0 = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"}]}"#,
    );
    // Revision 1 adds a file: it is snapshotted now, after a change made meanwhile.
    ws.write("src/b.rs", b"pub fn b() -> u32 {\n    20\n}\n");
    let p1 = ws
        .journal
        .revise(
            p0.tx,
            ReviseOptions::default(),
            &plan(r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"20","new":"21"}]}"#),
        )
        .unwrap();
    let paths: Vec<&str> = p1.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/a.rs", "src/b.rs"]);
    assert_eq!(
        p1.files[1].snapshot.hash(),
        Some(BlobHash::of(b"pub fn b() -> u32 {\n    20\n}\n"))
    );
    // Revision 2 restores src/a.rs to its snapshot: it leaves the candidate set.
    let p2 = ws
        .journal
        .revise(p0.tx, ReviseOptions::default(), &plan(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper2","new":"helper"}]}"#))
        .unwrap();
    let paths: Vec<&str> = p2.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/b.rs"]);
    assert!(p2
        .validation
        .iter()
        .any(|i| i.code == "candidate_equals_source" && i.path == "src/a.rs"));
    let r = ws.journal.commit(p0.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(r.files.len(), 1);
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u32 {\n    crate::helper()\n}\n"
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    21\n}\n");
    assert_eq!(
        ws.journal.show(p0.tx, None).unwrap().state,
        TxState::Committed
    );
    // Every revision is still in the journal.
    assert_eq!(ws.journal.show(p0.tx, Some(1)).unwrap().files.len(), 2);
}

#[test]
fn revise_rebase_conflicts_are_labelled_plan_base_latest() {
    let ws = workspace();
    ws.write("f.txt", numbered(4).as_bytes());
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":2,"end":2,"content":"TWO\n"}]}"#,
    );
    let line2 = |text: &str| {
        plan(&format!(
            r#"{{"edits":[{{"op":"replace_lines","path":"f.txt","start":2,"end":2,"content":"{text}\n"}}]}}"#
        ))
    };
    ws.journal
        .revise(p.tx, ReviseOptions::default(), &line2("two!"))
        .unwrap();
    let r = ws
        .journal
        .revise(
            p.tx,
            ReviseOptions::new().with_base(0).with_rebase(true),
            &line2("deux"),
        )
        .unwrap();
    assert_eq!(
        String::from_utf8(candidate(&ws.journal, p.tx, "f.txt").unwrap()).unwrap(),
        "line 1\n<<<<<<< plan\ndeux\n||||||| base\nTWO\n=======\ntwo!\n>>>>>>> latest\nline 3\nline 4\n"
    );
    let labels: Vec<&str> = r.conflict_list[0]
        .sides
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(labels, ["plan", "base", "latest"]);
    assert_eq!(
        (r.conflict_list[0].start_line, r.conflict_list[0].end_line),
        (Some(2), Some(8))
    );
}

/// Found by the breaker: the plan set mode 0755 while someone made the file private
/// (chmod 600) on disk. Rebase took "ours where ours changed it" and reported a clean
/// revision, so the commit silently made the private file world-readable. Both sides
/// changing the mode differently is a whole-file conflict (as in git's merge): the
/// commit is refused until a person decides, here with a revise that sets 0600.
#[test]
fn rebase_of_a_mode_changed_on_both_sides_is_a_conflict() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    ws.write("s.txt", b"secret\n");
    std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"s.txt","content":"secret v2\n","mode":"0755"}]}"#,
    );
    std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = ws.journal.rebase(p.tx).unwrap();
    assert!(!r.ready_to_commit);
    assert_eq!(
        serde_json::to_value(&r.conflict_list).unwrap(),
        serde_json::json!([{
            "path": "s.txt", "start_line": null, "end_line": null, "sides": null,
            "reason": "the mode changed on both sides (candidate 755, disk 600); the candidate keeps 755",
            "lossy": false
        }])
    );
    let tree = ws.tree();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::ValidationFailed { revision: 1, .. }),
        "{err:?}"
    );
    assert_eq!(ws.tree(), tree);
    assert_eq!(ws.mode("s.txt"), 0o600);
    // A revision of another file leaves the conflict standing (it has no markers that
    // would carry it; found by the breaker: the commit then made the file 0755).
    let other = plan(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"helper2"}]}"#,
    );
    let r = ws
        .journal
        .revise(p.tx, ReviseOptions::default(), &other)
        .unwrap();
    assert!(!r.ready_to_commit);
    assert_eq!(
        r.conflicts
            .iter()
            .map(|c| c.path.as_str())
            .collect::<Vec<_>>(),
        ["s.txt"]
    );
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(err, Error::ValidationFailed { revision: 2, .. }),
        "{err:?}"
    );
    assert_eq!(ws.mode("s.txt"), 0o600);
    // Decided: the new bytes, the disk's private mode.
    let fix = plan(
        r#"{"edits":[{"op":"replace_file","path":"s.txt","content":"secret v2\n","mode":"0600"}]}"#,
    );
    let r = ws
        .journal
        .revise(p.tx, ReviseOptions::default(), &fix)
        .unwrap();
    assert!(r.ready_to_commit, "{:?}", r.validation);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("s.txt"), b"secret v2\n");
    assert_eq!(ws.mode("s.txt"), 0o600);
}

/// Only one side changing the mode merges cleanly: the disk's chmod is kept when the
/// plan left the mode alone.
#[test]
fn rebase_keeps_a_mode_only_the_disk_changed() {
    use std::os::unix::fs::PermissionsExt;
    let ws = workspace();
    ws.write("s.txt", b"secret\n");
    std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let p =
        ws.preview(r#"{"edits":[{"op":"replace_file","path":"s.txt","content":"secret v2\n"}]}"#);
    std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = ws.journal.rebase(p.tx).unwrap();
    assert!(r.ready_to_commit, "{:?}", r.validation);
    assert!(r.conflicts.is_empty());
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.mode("s.txt"), 0o600);
}

/// One side deletes the file, the other changes only its mode: the bytes alone merge to
/// the deletion and the mode change would be lost without a word; like git's
/// modify/delete, it is a whole-file conflict (the candidate keeps the plan's side).
#[test]
fn rebase_of_a_delete_against_a_mode_change_is_a_conflict() {
    use std::os::unix::fs::PermissionsExt;
    // `s.txt` (0644) previewed with `plan`, then changed on disk by `disk`, then rebased:
    // the one conflict's reason; the commit is refused.
    let conflict_of = |plan: &str, disk: &dyn Fn(&Ws)| {
        let ws = workspace();
        ws.write("s.txt", b"secret\n");
        std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
        let p = ws.preview(plan);
        disk(&ws);
        let r = ws.journal.rebase(p.tx).unwrap();
        assert!(!r.ready_to_commit);
        assert!(ws.journal.commit(p.tx, Default::default()).is_err());
        let reasons: Vec<(String, String)> = r
            .conflicts
            .iter()
            .map(|c| (c.path.to_string(), c.reason.clone()))
            .collect();
        (ws, r, reasons)
    };
    // The plan deletes; the disk makes the file private.
    let (ws, r, reasons) = conflict_of(
        r#"{"edits":[{"op":"delete_file","path":"s.txt"}]}"#,
        &|ws| {
            std::fs::set_permissions(ws.path("s.txt"), std::fs::Permissions::from_mode(0o600))
                .unwrap()
        },
    );
    assert_eq!(
        reasons,
        [(
            "s.txt".to_string(),
            "the mode changed on the disk side, deleted on the candidate side".to_string()
        )]
    );
    assert!(!r.files[0].candidate.exists());
    assert_eq!(ws.mode("s.txt"), 0o600);
    // The plan changes only the mode; the disk deletes the file.
    let (ws, _, reasons) = conflict_of(
        r#"{"edits":[{"op":"replace_file","path":"s.txt","content":"secret\n","mode":"0600"}]}"#,
        &|ws| std::fs::remove_file(ws.path("s.txt")).unwrap(),
    );
    assert_eq!(
        reasons,
        [(
            "s.txt".to_string(),
            "deleted on the disk side, the mode changed on the candidate side".to_string()
        )]
    );
    assert!(!ws.path("s.txt").exists());
}
