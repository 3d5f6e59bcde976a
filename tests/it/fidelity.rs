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
        r#"{"edits":[{"op":"replace_file","path":"src/b.rs","content":"x\n","mode":"0600"}]}"#,
    );
    let d = &p.files[0].diff.unified;
    assert!(
        d.starts_with("old mode 100640\nnew mode 100600\n--- a/src/b.rs\n+++ b/src/b.rs\n"),
        "{d}"
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
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
            &plan(r#"{"edits":[{"op":"create_file","path":"src/b.rs","content":"again\n"}]}"#),
        )
        .unwrap();
    assert_eq!(r.files[0].candidate.mode(), Some(0o640));
    ws.journal.commit(p.tx, Default::default()).unwrap();
    assert_eq!(
        (ws.mode("src/b.rs"), ws.read("src/b.rs")),
        (0o640, b"again\n".to_vec())
    );
}

/// The CLI in a child whose umask is `mask` (the umask is per process: a test must not
/// change its own, which every test thread shares).
fn ue_with_umask(ws: &Ws, mask: u32, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut cmd = ue_command(ws.root(), args);
    cmd.stdin(std::process::Stdio::piped());
    // SAFETY: umask(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::umask(rustix::fs::Mode::from_raw_mode(mask as _));
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
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
}
