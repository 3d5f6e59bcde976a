//! A file is more than its bytes: modes, the umask, and temps that a moved directory
//! takes along (README, "Edit plans"; docs/design.md, "Lifecycle" › 1. Preview).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use ultra_edit::{RollbackOptions, TxState};

use crate::support::*;

fn chmod(ws: &Ws, rel: &str, mode: u32) {
    std::fs::set_permissions(ws.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_mode_only_change_is_a_change_shown_committed_and_rolled_back() {
    let ws = workspace();
    ws.write("run2.sh", b"echo hi\n");
    chmod(&ws, "run2.sh", 0o600);
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"run2.sh","content":"echo hi\n","mode":"0755"}]}"#,
    );
    assert!(p.ready_to_commit, "{:?}", p.validation);
    assert!(p.validation.is_empty(), "{:?}", p.validation);
    assert_eq!(p.files.len(), 1);
    assert_eq!(
        (p.files[0].snapshot.mode(), p.files[0].candidate.mode()),
        (Some(0o600), Some(0o755))
    );
    assert_eq!(
        p.files[0].diff.unified,
        "old mode 100600\nnew mode 100755\n"
    );
    let r = ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(r.files.len(), 1);
    assert_eq!(
        (ws.mode("run2.sh"), ws.read("run2.sh")),
        (0o755, b"echo hi\n".to_vec())
    );
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        (ws.mode("run2.sh"), ws.read("run2.sh")),
        (0o600, b"echo hi\n".to_vec())
    );
    assert_eq!(ws.journal.tx(p.tx).unwrap().state, TxState::RolledBack);
}

#[test]
fn a_content_and_mode_change_shows_both() {
    let ws = workspace();
    chmod(&ws, "src/b.rs", 0o640);
    let p = ws.preview(
        r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"replace_file","path":"src/b.rs","content":"x\n","mode":"0600"}]}"#,
    );
    let d = &p.files[0].diff.unified;
    assert!(
        d.starts_with("old mode 100640\nnew mode 100600\n--- a/src/b.rs\n+++ b/src/b.rs\n"),
        "{d}"
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (ws.mode("src/b.rs"), ws.read("src/b.rs")),
        (0o600, b"x\n".to_vec())
    );
}

#[test]
fn a_file_deleted_then_recreated_in_a_later_revision_keeps_its_mode() {
    let ws = workspace();
    chmod(&ws, "src/b.rs", 0o640);
    let p = ws.preview(r#"{"edits":[{"op":"delete_file","path":"src/b.rs"}]}"#);
    let r = ws
        .journal
        .revise(
            p.tx,
            Default::default(),
            &plan(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"create_file","path":"src/b.rs","content":"again\n"}]}"#),
        )
        .unwrap();
    assert_eq!(r.files[0].candidate.mode(), Some(0o640));
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (ws.mode("src/b.rs"), ws.read("src/b.rs")),
        (0o640, b"again\n".to_vec())
    );
}

/// The CLI in a child whose umask is `mask` (the umask is per process: a test must not
/// change its own, which every test thread shares).
fn ue_with_umask(ws: &Ws, mask: u32, args: &[&str], stdin: &str) -> std::process::Output {
    let mut cmd = ue_command(ws.root(), args);
    // SAFETY: umask(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(mask as _));
            Ok(())
        });
    }
    output_with_stdin(cmd, stdin)
}

#[test]
fn new_files_take_their_mode_from_the_umask_unless_the_plan_names_one() {
    let ws = workspace();
    let plan = r#"{"edits":[{"op":"create_file","path":"private/secrets.env","content":"k=v\n"},
                            {"op":"create_file","path":"private/tool.sh","content":"x\n","mode":"0750"}]}"#;
    let out = ue_with_umask(&ws, 0o077, &["--json", "preview"], plan);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = ue_with_umask(&ws, 0o077, &["commit", "1"], "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // open(2) semantics: 0666 & ~umask; an explicit mode is exact.
    assert_eq!(ws.mode("private/secrets.env"), 0o600);
    assert_eq!(ws.mode("private/tool.sh"), 0o750);
    assert_eq!(ws.mode("private"), 0o700);
    // With a umask of 002, group-writable, as `touch` would make it.
    let out = ue_with_umask(
        &ws,
        0o002,
        &["preview"],
        r#"{"edits":[{"op":"create_file","path":"shared.txt","content":"s\n"}]}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        ue_with_umask(&ws, 0o002, &["commit", "2"], "")
            .status
            .code(),
        Some(0)
    );
    assert_eq!(ws.mode("shared.txt"), 0o664);
    // New directories too, as `mkdir -p` makes them: 0777 & ~umask, so a group-writable
    // umask gives group members a directory they can add files to.
    let out = ue_with_umask(
        &ws,
        0o002,
        &["preview"],
        r#"{"edits":[{"op":"create_file","path":"team/notes/a.txt","content":"a\n"}]}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        ue_with_umask(&ws, 0o002, &["commit", "3"], "")
            .status
            .code(),
        Some(0)
    );
    assert_eq!(ws.mode("team"), 0o775);
    assert_eq!(ws.mode("team/notes"), 0o775);
    assert_eq!(ws.mode("team/notes/a.txt"), 0o664);
}

fn owner_of(ws: &Ws, rel: &str) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(ws.path(rel)).unwrap();
    (md.uid(), md.gid())
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn owner_and_group_are_kept_by_commit_rollback_and_redo() {
    if !is_root() {
        eprintln!("skipped: giving a file another owner needs root (CI runs as root)");
        return;
    }
    let ws = workspace();
    ws.write("app.conf", b"owner=deploy\nport=8080\n");
    std::os::unix::fs::chown(ws.path("app.conf"), Some(1000), Some(1000)).unwrap();
    chmod(&ws, "app.conf", 0o664);
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"app.conf","old":"port=8080","new":"port=9090"}]}"#,
    );
    assert_eq!(
        p.files[0].candidate.owner(),
        Some(ultra_edit::Owner {
            uid: 1000,
            gid: 1000
        })
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let state = |ws: &Ws| {
        (
            ws.read("app.conf"),
            owner_of(ws, "app.conf"),
            ws.mode("app.conf"),
        )
    };
    assert_eq!(
        state(&ws),
        (b"owner=deploy\nport=9090\n".to_vec(), (1000, 1000), 0o664)
    );
    let undo = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap()
        .tx;
    assert_eq!(
        state(&ws),
        (b"owner=deploy\nport=8080\n".to_vec(), (1000, 1000), 0o664)
    );
    ws.journal
        .rollback(undo, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        state(&ws),
        (b"owner=deploy\nport=9090\n".to_vec(), (1000, 1000), 0o664)
    );
}

#[test]
fn an_owner_change_after_the_preview_is_a_stale_snapshot() {
    if !is_root() {
        eprintln!("skipped: changing a file's owner needs root (CI runs as root)");
        return;
    }
    let ws = workspace();
    let p = ws.preview(r#"{"policy":{"syntax_errors":"allow"},"edits":[{"op":"replace_file","path":"src/a.rs","content":"x\n"}]}"#);
    std::os::unix::fs::chown(ws.path("src/a.rs"), Some(1000), None).unwrap();
    let before = ws.read("src/a.rs");
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(&err, ultra_edit::Error::StaleSnapshot { paths, .. } if paths == &["src/a.rs"]),
        "{err:?}"
    );
    assert_eq!(ws.read("src/a.rs"), before);
}

#[test]
fn a_process_that_cannot_keep_the_owner_refuses_unless_told_to_accept() {
    if !is_root() {
        eprintln!("skipped: the test makes a file owned by another user and drops to uid 65534");
        return;
    }
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let file = dir.path().join("a.conf");
    std::fs::write(&file, b"v=1\n").unwrap();
    std::os::unix::fs::chown(&file, Some(1000), Some(1000)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let nobody = |args: &[&str], stdin: &str| {
        let mut cmd = ue_command(dir.path(), args);
        cmd.uid(65534).gid(65534);
        output_with_stdin(cmd, stdin)
    };
    assert_eq!(nobody(&["init"], "").status.code(), Some(0));
    let out = nobody(
        &["preview"],
        r#"{"edits":[{"op":"replace_file","path":"a.conf","content":"v=2\n"}]}"#,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = nobody(&["--json", "commit", "1"], "");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "owner_not_kept");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("a.conf (1000:1000)") && msg.contains("uid 65534"),
        "{msg}"
    );
    assert_eq!(
        v["error"]["hint"],
        "run it as the files' owner or as root, or run the same command again with --allow-owner-change to accept the change (the files then belong to this user)"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"v=1\n");
    let out = nobody(&["commit", "1", "--allow-owner-change"], "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(&file).unwrap();
    assert_eq!(
        (std::fs::read(&file).unwrap(), md.uid(), md.gid()),
        (b"v=2\n".to_vec(), 65534, 65534)
    );
}

#[cfg(feature = "failpoints")]
#[test]
fn recovery_gives_the_files_it_writes_their_owner() {
    if !is_root() {
        eprintln!("skipped: giving a file another owner needs root (CI runs as root)");
        return;
    }
    for point in ["batch::after_stage", "batch::after_install_file"] {
        let ws = workspace();
        for f in ["a.conf", "b.conf"] {
            ws.write(f, b"old\n");
            std::os::unix::fs::chown(ws.path(f), Some(1000), Some(1001)).unwrap();
        }
        let p = ws.preview(
            r#"{"edits":[{"op":"replace_file","path":"a.conf","content":"new\n"},{"op":"replace_file","path":"b.conf","content":"new\n"}]}"#,
        );
        let out = run_ue(
            ws.root(),
            &["commit", &p.tx.to_string()],
            Some(&format!("{point}=return")),
        );
        assert_eq!(out.status.code(), None, "{point}: aborted by the failpoint");
        assert_eq!(run_ue(ws.root(), &["recover"], None).status.code(), Some(0));
        for f in ["a.conf", "b.conf"] {
            assert_eq!(
                (ws.read(f), owner_of(&ws, f)),
                (b"new\n".to_vec(), (1000, 1001)),
                "{point}: {f}"
            );
        }
        // And a rollback that recovery completes, too.
        let out = run_ue(
            ws.root(),
            &["rollback", &p.tx.to_string()],
            Some(&format!("{point}=return")),
        );
        assert_eq!(
            out.status.code(),
            None,
            "{point}: rollback aborted by the failpoint"
        );
        assert_eq!(run_ue(ws.root(), &["recover"], None).status.code(), Some(0));
        for f in ["a.conf", "b.conf"] {
            assert_eq!(
                (ws.read(f), owner_of(&ws, f)),
                (b"old\n".to_vec(), (1000, 1001)),
                "{point}: {f} rolled back"
            );
        }
    }
}

/// The `user.*` attributes of `rel`, sorted.
fn user_xattrs(ws: &Ws, rel: &str) -> Vec<(String, Vec<u8>)> {
    let path = ws.path(rel);
    let mut list = vec![0u8; 4096];
    let n = rustix::fs::listxattr(&path, &mut list[..]).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = list[..n]
        .split(|b| *b == 0)
        .filter_map(|name| std::str::from_utf8(name).ok())
        .filter(|name| name.starts_with("user."))
        .map(|name| {
            let mut value = vec![0u8; 4096];
            let got = rustix::fs::getxattr(&path, name, &mut value[..]).unwrap();
            value.truncate(got);
            (name.to_string(), value)
        })
        .collect();
    out.sort();
    out
}

/// Set `user.<name>` on `rel`; false when the filesystem has no user attributes.
fn set_xattr(ws: &Ws, rel: &str, name: &str, value: &[u8]) -> bool {
    match rustix::fs::setxattr(
        ws.path(rel),
        format!("user.{name}").as_str(),
        value,
        rustix::fs::XattrFlags::empty(),
    ) {
        Ok(()) => true,
        Err(e) if e == rustix::io::Errno::NOTSUP => false,
        Err(e) => panic!("setxattr: {e}"),
    }
}

#[test]
fn user_extended_attributes_are_kept_and_a_change_to_them_is_stale() {
    let ws = workspace();
    ws.write("tagged.txt", b"one\n");
    if !set_xattr(&ws, "tagged.txt", "origin", b"https://example.test/x")
        || !set_xattr(&ws, "tagged.txt", "checksum", b"\x00\x01\xff")
    {
        eprintln!("skipped: this filesystem has no user extended attributes");
        return;
    }
    let want = vec![
        ("user.checksum".to_string(), b"\x00\x01\xff".to_vec()),
        (
            "user.origin".to_string(),
            b"https://example.test/x".to_vec(),
        ),
    ];
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"tagged.txt","old":"one","new":"two"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (ws.read("tagged.txt"), user_xattrs(&ws, "tagged.txt")),
        (b"two\n".to_vec(), want.clone())
    );
    let undo = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap()
        .tx;
    assert_eq!(
        (ws.read("tagged.txt"), user_xattrs(&ws, "tagged.txt")),
        (b"one\n".to_vec(), want.clone())
    );
    ws.journal
        .rollback(undo, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        (ws.read("tagged.txt"), user_xattrs(&ws, "tagged.txt")),
        (b"two\n".to_vec(), want)
    );
    assert!(ws.journal.verify().unwrap().ok);
    // An attribute set after the preview makes the snapshot stale, as a content change.
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"tagged.txt","old":"two","new":"three"}]}"#,
    );
    assert!(set_xattr(&ws, "tagged.txt", "reviewed", b"yes"));
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(&err, ultra_edit::Error::StaleSnapshot { paths, .. } if paths == &["tagged.txt"]),
        "{err:?}"
    );
    assert_eq!(ws.read("tagged.txt"), b"two\n");
}

#[cfg(feature = "failpoints")]
#[test]
fn recovery_gives_the_files_it_writes_their_extended_attributes() {
    let ws = workspace();
    ws.write("a.txt", b"old\n");
    ws.write("b.txt", b"old\n");
    if !set_xattr(&ws, "a.txt", "k", b"v") || !set_xattr(&ws, "b.txt", "k", b"w") {
        eprintln!("skipped: this filesystem has no user extended attributes");
        return;
    }
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"new\n"},{"op":"replace_file","path":"b.txt","content":"new\n"}]}"#,
    );
    let out = run_ue(
        ws.root(),
        &["commit", &p.tx.to_string()],
        Some("batch::after_stage=return"),
    );
    assert_eq!(out.status.code(), None, "aborted by the failpoint");
    assert_eq!(run_ue(ws.root(), &["recover"], None).status.code(), Some(0));
    for (f, v) in [("a.txt", b"v"), ("b.txt", b"w")] {
        assert_eq!(
            (ws.read(f), user_xattrs(&ws, f)),
            (b"new\n".to_vec(), vec![("user.k".to_string(), v.to_vec())]),
            "{f}"
        );
    }
}

#[test]
fn a_file_its_owner_cannot_write_is_replaced_and_keeps_its_mode() {
    // Decided (docs/on-disk-format.md): a read-only file in a writable directory is
    // replaced like any other — the rename needs only the directory, as for `sed -i`
    // and editors — and keeps its 0444.
    let ws = workspace();
    ws.write("locked.txt", b"frozen\n");
    chmod(&ws, "locked.txt", 0o444);
    let p =
        ws.preview(r#"{"edits":[{"op":"replace_file","path":"locked.txt","content":"thawed\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (ws.read("locked.txt"), ws.mode("locked.txt")),
        (b"thawed\n".to_vec(), 0o444)
    );
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        (ws.read("locked.txt"), ws.mode("locked.txt")),
        (b"frozen\n".to_vec(), 0o444)
    );
}
