//! A real full disk: the workspace on a small tmpfs (the journal kept elsewhere, in a
//! state directory outside the root, so that only the workspace fills up). Needs mount
//! rights (root); skipped with a printed reason otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

use ultra_edit::{Error, Journal};

use crate::support::*;

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<(tempfile::TempDir, Tmpfs)> {
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .ok()?
            .status
            .success();
        ok.then(|| {
            let p = dir.path().to_path_buf();
            (dir, Tmpfs(p))
        })
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

#[test]
fn a_full_disk_fails_the_commit_cleanly_and_the_next_one_works() {
    let Some((_dir, fs)) = Tmpfs::mount("1m") else {
        println!("skipped: cannot mount a tmpfs here (needs root and mount rights)");
        return;
    };
    let root = fs.path();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(root.join("a.txt"), b"small\n").unwrap();
    std::fs::write(root.join("filler"), vec![7u8; 600 * 1024]).unwrap();
    let j = Journal::init_with(
        root,
        ultra_edit::OpenOptions::default().with_state_dir(state.path().join("state")),
    )
    .unwrap();
    // 600 KiB more than fits next to the 600 KiB filler on a 1 MiB disk.
    let big = "y".repeat(600 * 1024);
    let json = serde_json::json!({"edits":[
        {"op":"replace_text","path":"a.txt","old":"small","new":"edited"},
        {"op":"create_file","path":"big.txt","content":big}]})
    .to_string();
    let p = j.preview(&plan(&json)).unwrap();
    let before = tree_state(root);
    let err = j.commit(p.tx, Default::default()).unwrap_err();
    match &err {
        Error::CommitFailed { cause, .. } => assert_eq!(cause.raw_os_error(), Some(28), "{err}"),
        other => panic!("expected CommitFailed with ENOSPC, got {other:?}"),
    }
    assert_eq!(
        tree_state(root),
        before,
        "a full disk left the tree changed"
    );
    assert!(j.verify().unwrap().ok);
    // Room again: the same tx commits.
    std::fs::remove_file(root.join("filler")).unwrap();
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"edited\n");
    assert_eq!(
        std::fs::metadata(root.join("big.txt")).unwrap().len(),
        600 * 1024
    );
    drop(j);
}
