//! POSIX ACLs are kept like `user.*` attributes (docs/on-disk-format.md, "What a file
//! state preserves"): a commit, a rollback and a redo give the new inode the file's
//! exact ACL and mode, an ACL changed after the preview is a stale snapshot, and a
//! filesystem that cannot store the ACL refuses the batch before anything is written.
//!
//! They need `setfacl`/`getfacl` (the `acl` package) and a filesystem with ACLs, and
//! are skipped, saying why, without them.

use std::process::Command;

use ultra_edit::{Error, RollbackOptions};

use crate::support::faultfs::FaultFs;
use crate::support::*;

/// Run `setfacl args… file`; `false` (and a printed reason) when ACLs cannot be used
/// here: no `setfacl`, or a filesystem without ACLs.
fn setfacl(ws: &Ws, args: &[&str], rel: &str) -> bool {
    let out = match Command::new("setfacl")
        .args(args)
        .arg(ws.path(rel))
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: no setfacl ({e}); install the `acl` package");
            return false;
        }
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("not supported") {
            eprintln!("skipped: this filesystem has no POSIX ACLs ({err})");
            return false;
        }
        panic!("setfacl {args:?} {rel}: {err}");
    }
    true
}

/// `getfacl -cpn`: the ACL's entries, numeric ids, without the header.
fn getfacl(ws: &Ws, rel: &str) -> String {
    let out = Command::new("getfacl")
        .args(["-cpn"])
        .arg(ws.path(rel))
        .output()
        .expect("getfacl");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The raw `system.posix_acl_access` attribute; `None` when the file has no ACL.
fn raw_acl(ws: &Ws, rel: &str) -> Option<Vec<u8>> {
    let mut value = vec![0u8; 4096];
    match rustix::fs::getxattr(ws.path(rel), "system.posix_acl_access", &mut value[..]) {
        Ok(n) => {
            value.truncate(n);
            Some(value)
        }
        Err(rustix::io::Errno::NODATA) => None,
        Err(e) => panic!("getxattr: {e}"),
    }
}

/// `user::rw-`, a named user with read, `group::---`, so the mode's group bits are
/// the mask's `r--`: mode 0o640, and the owning group has no access.
const PRIVATE_ACL: &str = "user::rw-\nuser:4242:r--\ngroup::---\nmask::r--\nother::---\n\n";

fn private_file(ws: &Ws, rel: &str) -> bool {
    ws.write(rel, b"secret\n");
    std::fs::set_permissions(
        ws.path(rel),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    if !setfacl(ws, &["-m", "u:4242:r"], rel) {
        return false;
    }
    assert_eq!(
        (getfacl(ws, rel), ws.mode(rel)),
        (PRIVATE_ACL.into(), 0o640)
    );
    true
}

#[test]
fn a_posix_acl_and_the_mode_are_kept_exactly_by_commit_rollback_and_redo() {
    let ws = workspace();
    if !private_file(&ws, "s.txt") {
        return;
    }
    let raw = raw_acl(&ws, "s.txt").expect("an ACL");
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"s.txt","text":"x\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let state = |ws: &Ws| {
        (
            ws.read("s.txt"),
            getfacl(ws, "s.txt"),
            ws.mode("s.txt"),
            raw_acl(ws, "s.txt"),
        )
    };
    let post = (
        b"secret\nx\n".to_vec(),
        PRIVATE_ACL.to_string(),
        0o640,
        Some(raw.clone()),
    );
    let pre = (
        b"secret\n".to_vec(),
        PRIVATE_ACL.to_string(),
        0o640,
        Some(raw),
    );
    assert_eq!(state(&ws), post);
    let undo = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap()
        .tx;
    ws.journal.flush().unwrap();
    assert_eq!(state(&ws), pre);
    ws.journal
        .rollback(undo, RollbackOptions::default())
        .unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(state(&ws), post);
    assert!(ws.journal.verify().unwrap().ok);
}

#[test]
fn a_plan_that_changes_the_mode_of_a_file_with_an_acl_changes_it_as_chmod_would() {
    let ws = workspace();
    if !private_file(&ws, "s.txt") {
        return;
    }
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_file","path":"s.txt","content":"secret\n","mode":"0750"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    // chmod 0750: the owner's entry is rwx, the mask r-x; the named user and the
    // owning group keep their own entries.
    assert_eq!(
        (getfacl(&ws, "s.txt"), ws.mode("s.txt")),
        (
            "user::rwx\nuser:4242:r--\ngroup::---\nmask::r-x\nother::---\n\n".to_string(),
            0o750
        )
    );
    // The ACL on disk is the one recorded: the rollback is not stale, and restores both.
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (getfacl(&ws, "s.txt"), ws.mode("s.txt")),
        (PRIVATE_ACL.to_string(), 0o640)
    );
}

#[test]
fn an_acl_changed_after_the_preview_is_a_stale_snapshot() {
    let ws = workspace();
    if !private_file(&ws, "s.txt") {
        return;
    }
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"s.txt","text":"x\n"}]}"#);
    assert!(setfacl(&ws, &["-m", "u:4243:r"], "s.txt"));
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(&err, Error::StaleSnapshot { paths, .. } if paths == &["s.txt"]),
        "{err:?}"
    );
    assert_eq!(
        (ws.read("s.txt"), getfacl(&ws, "s.txt")),
        (
            b"secret\n".to_vec(),
            "user::rw-\nuser:4242:r--\nuser:4243:r--\ngroup::---\nmask::r--\nother::---\n\n"
                .to_string()
        )
    );
    // Removing the ACL after the preview is a change too.
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"s.txt","text":"x\n"}]}"#);
    assert!(setfacl(&ws, &["-b"], "s.txt"));
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    assert!(matches!(&err, Error::StaleSnapshot { .. }), "{err:?}");
}

#[test]
fn a_file_without_an_acl_does_not_get_its_directorys_default_acl() {
    let ws = workspace();
    std::fs::create_dir(ws.path("shared")).unwrap();
    ws.write("shared/plain.txt", b"one\n");
    std::fs::set_permissions(
        ws.path("shared/plain.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    // The default ACL comes after the file: the file has none, a new inode would inherit one.
    if !setfacl(&ws, &["-d", "-m", "u:4242:rw"], "shared") {
        return;
    }
    let p = ws.preview(
        r#"{"edits":[{"op":"append","path":"shared/plain.txt","text":"two\n"},{"op":"create_file","path":"shared/new.txt","content":"n\n"}]}"#,
    );
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(
        (
            raw_acl(&ws, "shared/plain.txt"),
            ws.mode("shared/plain.txt")
        ),
        (None, 0o600)
    );
    // A file the batch creates inherits the default ACL, as any new file does.
    assert!(raw_acl(&ws, "shared/new.txt").is_some());
    ws.journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(
        (
            ws.read("shared/plain.txt"),
            raw_acl(&ws, "shared/plain.txt"),
            ws.mode("shared/plain.txt")
        ),
        (b"one\n".to_vec(), None, 0o600)
    );
}

/// Where a directory has a default ACL, open(2) ignores the umask: a new file's mode is
/// the asked `0666` within the ACL's permissions (acl(5)). A file a batch creates there
/// (also in a directory the batch creates, which inherits the default ACL) gets exactly
/// what `touch` would give it, so the collaborator the ACL lets write can write it.
#[test]
fn a_file_created_under_a_default_acl_gets_the_mode_and_mask_touch_gives() {
    let ws = workspace();
    std::fs::create_dir(ws.path("shared")).unwrap();
    if !setfacl(&ws, &["-d", "-m", "u:4242:rwx"], "shared") {
        return;
    }
    std::fs::File::create(ws.path("shared/by-touch.txt")).unwrap();
    // The umask (022 in the test process, or whatever it is) does not apply here.
    let p = ws.preview(
        r#"{"edits":[{"op":"create_file","path":"shared/new.txt","content":"n\n"},{"op":"create_file","path":"shared/sub/deep.txt","content":"d\n"}]}"#,
    );
    let modes: Vec<Option<u32>> = p.files.iter().map(|f| f.candidate.mode()).collect();
    assert_eq!(modes, [Some(0o664), Some(0o664)]);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    let by_touch = getfacl(&ws, "shared/by-touch.txt");
    assert!(
        by_touch.contains("user:4242:rwx") && by_touch.contains("mask::rw-"),
        "{by_touch}"
    );
    for rel in ["shared/new.txt", "shared/sub/deep.txt"] {
        assert_eq!(
            (ws.mode(rel), getfacl(&ws, rel)),
            (0o664, by_touch.clone()),
            "{rel}"
        );
    }
}

#[test]
fn a_filesystem_that_cannot_store_the_acl_refuses_the_commit_and_writes_nothing() {
    let ws = workspace();
    if !private_file(&ws, "s.txt") {
        return;
    }
    ws.write("other.txt", b"o\n");
    let p = ws.preview(
        r#"{"edits":[{"op":"append","path":"s.txt","text":"x\n"},{"op":"append","path":"other.txt","text":"x\n"}]}"#,
    );
    let before = ws.tree();
    let no_acls = faulty(&ws, FaultFs::without_acls());
    let err = no_acls.commit(p.tx, Default::default()).unwrap_err();
    assert!(
        matches!(&err, Error::AclNotKept { tx, paths } if *tx == p.tx && paths == &["s.txt"]),
        "{err:?}"
    );
    assert_eq!(
        (err.kind(), err.exit_code(), err.paths()),
        ("acl_not_kept", 1, vec!["s.txt".to_string()])
    );
    assert_eq!(ws.tree(), before);
    assert_eq!(
        (getfacl(&ws, "s.txt"), ws.mode("s.txt")),
        (PRIVATE_ACL.to_string(), 0o640)
    );
    // With ACLs the same preview commits.
    drop(no_acls);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    assert_eq!(getfacl(&ws, "s.txt"), PRIVATE_ACL);
}
