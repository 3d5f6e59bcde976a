//! Ownership and special mode bits: set-id files and private files.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::support::*;

/// The new file of a commit is created by the committing user, so its owner is the
/// committer, not the file's owner (a documented residual risk). Together with a
/// set-user-ID bit carried over from the old file, a commit run as root turns a
/// user's own set-user-ID file into a set-user-ID-root file whose content the plan
/// chose. Needs root (to own the file by someone else); skipped otherwise.
#[test]
fn a_commit_never_makes_a_set_id_file_owned_by_someone_else() {
    use std::os::unix::fs::MetadataExt;
    if running_as_root() {
        let ws = workspace();
        ws.write("tool.sh", b"#!/bin/sh\necho user tool\n");
        std::os::unix::fs::chown(ws.path("tool.sh"), Some(65534), Some(65534)).unwrap();
        fs::set_permissions(ws.path("tool.sh"), fs::Permissions::from_mode(0o6755)).unwrap();
        let before = fs::metadata(ws.path("tool.sh")).unwrap();
        assert_eq!(before.mode() & 0o7777, 0o6755);
        // Set-id files are refused outright (PathError::SetId), before anything is
        // written; the checks below then hold trivially for the untouched file.
        let err = ws
            .journal
            .preview(&plan(
                r#"{"edits":[{"op":"replace_text","path":"tool.sh","old":"user tool","new":"edited tool"}]}"#,
            ))
            .unwrap_err();
        assert!(
            matches!(
                err,
                ultra_edit::Error::Path(ultra_edit::PathError::SetId { mode: 0o6755, .. })
            ),
            "{err:?}"
        );
        let after = fs::metadata(ws.path("tool.sh")).unwrap();
        println!(
            "setuid file: owner {}:{} mode {:o} -> owner {}:{} mode {:o}",
            before.uid(),
            before.gid(),
            before.mode() & 0o7777,
            after.uid(),
            after.gid(),
            after.mode() & 0o7777
        );
        assert!(
            after.mode() & 0o4000 == 0 || after.uid() == before.uid(),
            "the edited file is set-user-ID for uid {} (it was the set-user-ID file of uid {})",
            after.uid(),
            before.uid()
        );
        assert!(
            after.mode() & 0o2000 == 0 || after.gid() == before.gid(),
            "the edited file is set-group-ID for gid {} (it was gid {}'s)",
            after.gid(),
            before.gid()
        );
    } else {
        println!("SKIPPED a_commit_never_makes_a_set_id_file…: not running as root");
    }
}

/// True when this process runs as root (uid 0), from /proc (no libc binding needed).
fn running_as_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The journal keeps the bytes of every previewed file, so it must be no more readable
/// than the most private of them. A 0600 file previewed under the usual umask (022)
/// ends up as a blob in a 0644 journal in a 0755 directory: any local user can read it.
#[test]
fn a_private_file_is_not_readable_by_others_through_the_journal() {
    use std::os::unix::fs::MetadataExt;
    let ws = workspace();
    ws.write("secret.env", b"TOKEN=hunter2\n");
    fs::set_permissions(ws.path("secret.env"), fs::Permissions::from_mode(0o600)).unwrap();
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"secret.env","old":"hunter2","new":"hunter3"}]}"#,
    );
    assert!(p.ready_to_commit);
    let journal = fs::read(ws.path(".ultra-edit/journal.redb")).unwrap();
    assert!(
        journal.windows(7).any(|w| w == b"hunter2"),
        "the secret is in the journal (as its pre-image blob)"
    );
    let dir_mode = fs::metadata(ws.path(".ultra-edit")).unwrap().mode() & 0o777;
    let file_mode = fs::metadata(ws.path(".ultra-edit/journal.redb"))
        .unwrap()
        .mode()
        & 0o777;
    let others_can_read = dir_mode & 0o001 != 0 && file_mode & 0o004 != 0;
    let group_can_read = dir_mode & 0o010 != 0 && file_mode & 0o040 != 0;
    assert!(
        !others_can_read && !group_can_read,
        "a 0600 file's bytes sit in a journal that others can read: .ultra-edit/ is {dir_mode:o}, \
         journal.redb is {file_mode:o}"
    );
}
