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

/// Issue 33, item 12: a batch left in flight (the process died past its commit point)
/// on a disk that is full since: `log`, `show`, `journal verify` and `journal dump`
/// still answer, and each says the disk is full, how much to free and where, and
/// what to run then (not "run the command again").
#[test]
fn reads_with_a_batch_pending_on_a_full_disk_say_what_to_free() {
    let Some((_dir, fs)) = Tmpfs::mount("1m") else {
        println!("skipped: cannot mount a tmpfs here (needs root and mount rights)");
        return;
    };
    let root = fs.path();
    std::fs::write(root.join("a.txt"), b"small\n").unwrap();
    Journal::init(root).unwrap();
    let plan = r#"{"edits":[{"op":"replace_text","path":"a.txt","old":"small","new":"edited"}]}"#;
    assert_eq!(cli(root, &["preview"], Some(plan)).status.code(), Some(0));
    // The commit dies right after its commit point: the batch stays `committing`.
    let out = run_ue(
        root,
        &["commit", "1"],
        Some("batch::after_commit_point=return"),
    );
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    // Fill the disk.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(root.join("filler")).unwrap();
        let block = vec![7u8; 64 * 1024];
        for _ in 0..64 {
            if f.write_all(&block).is_err() {
                break;
            }
        }
        let _ = f.sync_all();
    }
    let fix = format!(
        "; until it runs, a.txt may hold old, new or mixed content. Free at least 7 byte(s) on the filesystem of {0} (`df -h {0}` shows its space; recovery writes that much file content there, each file as a temp before its rename), then run `ultra-edit recover`.\n",
        root.canonicalize().unwrap().display()
    );
    for args in [
        &["log"][..],
        &["show", "1"],
        &["journal", "verify"],
        &["journal", "dump"],
    ] {
        let out = run_ue(root, args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(
                "ultra-edit: batch 1 of tx 1 (committing) was interrupted and needs recovery, which failed here because the disk is full ("
            ),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("No space left on device (os error 28))"),
            "{stderr}"
        );
        assert!(stderr.ends_with(&fix), "{args:?}: {stderr}");
        assert!(!stderr.contains("run the command again"), "{stderr}");
    }
    // Room again: the next command settles the batch.
    std::fs::remove_file(root.join("filler")).unwrap();
    let out = run_ue(root, &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(root.join("a.txt")).unwrap(), b"edited\n");
}

/// A large file's temp (streamed, over 8 MiB) that does not fit: the CLI's commit and
/// rollback fail with `commit_failed`, change nothing, and say what to free and what
/// to run (they said only what failed; found by the breaker), the journal stays
/// `verify`-clean, and the same commands work once the space is freed.
#[test]
fn a_large_temp_on_a_full_disk_says_what_to_free_and_the_commands_work_after() {
    let Some((_dir, fs)) = Tmpfs::mount("40m") else {
        println!("skipped: cannot mount a tmpfs here (needs root and mount rights)");
        return;
    };
    let root = fs.path().canonicalize().unwrap();
    let original: Vec<u8> = (0..300_000u32)
        .flat_map(|i| format!("{i:08} line of the big file\n").into_bytes())
        .collect();
    assert_eq!(original.len(), 9_000_000);
    std::fs::write(root.join("big.txt"), &original).unwrap();
    Journal::init(&root).unwrap();
    let plan = r#"{"edits":[{"op":"replace_lines","path":"big.txt","start":150001,"end":150001,"content":"changed\n"}]}"#;
    assert_eq!(cli(&root, &["preview"], Some(plan)).status.code(), Some(0));
    let mut edited = original.clone();
    edited.splice(150_000 * 30..150_001 * 30, b"changed\n".iter().copied());
    // Leave about 2 MiB: less than the 9 MB temp.
    let fill = |root: &Path| {
        let st = rustix::fs::statvfs(root).unwrap();
        let free = st.f_bavail * st.f_frsize;
        std::fs::write(root.join("filler"), vec![7u8; (free - (2 << 20)) as usize]).unwrap();
    };
    let hint = |verb: &str| {
        format!(
            "hint: the filesystem of {0} is full: free space there (`df -h {0}` shows it; a commit writes each changed file whole, as a temp beside it, before its rename), then run the command again (`ultra-edit --root {0} {verb}`)\n",
            root.display()
        )
    };
    let listing = |root: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    fill(&root);
    let out = run_ue(&root, &["commit", "1"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let prefix = format!(
        "error: batch 1 of tx 1 failed and was reverted, no file changed: write temp {}/.ue-1-0-",
        root.display()
    );
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(
        stderr.ends_with(&format!(
            ".tmp: No space left on device (os error 28)\n{}",
            hint("commit 1")
        )),
        "{stderr}"
    );
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&original)
    );
    assert_eq!(listing(&root), [".ultra-edit", "big.txt", "filler"]);
    assert_eq!(
        run_ue(&root, &["journal", "verify"], None).status.code(),
        Some(0)
    );
    // --json: the same hint, and the kind.
    let out = run_ue(&root, &["--json", "commit", "1"], None);
    let j = json_of(&out);
    assert_eq!(j["error"]["kind"], "commit_failed");
    assert_eq!(
        j["error"]["hint"].as_str().unwrap(),
        hint("--json commit 1")
            .trim_start_matches("hint: ")
            .trim_end()
    );
    // Room again: the commit lands; then a full disk fails its rollback the same way.
    std::fs::remove_file(root.join("filler")).unwrap();
    let out = run_ue(&root, &["commit", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&edited)
    );
    fill(&root);
    let out = run_ue(&root, &["rollback", "1"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.ends_with(&hint("rollback 1")), "{stderr}");
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&edited)
    );
    assert_eq!(listing(&root), [".ultra-edit", "big.txt", "filler"]);
    assert_eq!(
        run_ue(&root, &["journal", "verify"], None).status.code(),
        Some(0)
    );
    std::fs::remove_file(root.join("filler")).unwrap();
    let out = run_ue(&root, &["rollback", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&original)
    );
    assert_eq!(
        run_ue(&root, &["journal", "verify"], None).status.code(),
        Some(0)
    );
}
