//! `init` is durable and repairs what it finds incomplete (README.md, "Read-only media, the lock, `init`").
//!
//! What it syncs, and in which order, is pinned by the unit test
//! `workspace::tests::init_syncs_everything_it_creates_then_the_directory_entries`;
//! here: a `.gitignore` left empty (as a power cut before its sync leaves it) or not
//! ignoring everything is rewritten by the next `init`, which keeps the journal.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::support::*;

#[test]
fn init_repairs_an_empty_or_wrong_gitignore_and_keeps_the_journal() {
    let ws = workspace();
    let tx = ws
        .preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#)
        .tx;
    let ignore = ws.path(".ultra-edit/.gitignore");
    for (found, after) in [
        (&b""[..], &b"*\n"[..]),
        (b"target/\n", b"*\n"),
        (b"*", b"*"),
        (b"# mine\n*\n", b"# mine\n*\n"),
    ] {
        fs::write(&ignore, found).unwrap();
        fs::set_permissions(ws.path(".ultra-edit"), fs::Permissions::from_mode(0o755)).unwrap();
        let out = cli(ws.root(), &["init"], None);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            fs::read(&ignore).unwrap(),
            after,
            "after init on {:?}",
            String::from_utf8_lossy(found)
        );
        assert!(!ws.path(".ultra-edit/.gitignore.new").exists());
        let mode = fs::metadata(ws.path(".ultra-edit"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
    // The journal was kept: the tx is still there.
    assert_eq!(ws.journal.show(tx, None).unwrap().tx, tx);
    assert!(ws.path(".ultra-edit/commit.lock").is_file());
}
