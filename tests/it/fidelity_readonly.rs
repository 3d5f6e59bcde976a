//! Read-only media (README.md, "Read-only media, the lock, `init`"): on a filesystem remounted read-only, the
//! reading verbs (`log`, `show`, `journal dump/verify/stats`) work and print what they
//! printed before; a batch that would need recovery is reported, not attempted; every
//! writing verb fails with `read_only` (exit 1) and changes nothing.
//!
//! A real read-only mount: a tmpfs mounted in a temp dir and remounted `ro`. That
//! needs root (CAP_SYS_ADMIN); elsewhere the tests are skipped with a printed reason.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ultra_edit::{BatchState, Error, Journal, PendingBatch};

use crate::support::*;

/// A tmpfs mounted on a temp dir; unmounted on drop.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    /// `Err(reason)` where the machine cannot mount.
    fn tmpfs() -> Result<Mount, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("mounting a tmpfs needs root".into());
        }
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount(8) not runnable: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mount { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, mode: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{mode}")])
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "remount {mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

const READING: [&[&str]; 5] = [
    &["log"],
    &["show", "1"],
    &["journal", "dump"],
    &["journal", "verify"],
    &["journal", "stats"],
];

/// A workspace on the mount: `a.txt`, tx 1 committed, tx 2 open. The journal handle is
/// closed (a filesystem with a file open for writing cannot be remounted read-only).
fn workspace_on(m: &Mount) -> PathBuf {
    let root = m.path().join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), b"one\n").unwrap();
    let j = Journal::init(&root).unwrap();
    let p = j
        .preview(&plan(
            r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"two\n"}]}"#,
        ))
        .unwrap();
    j.commit(p.tx, Default::default()).unwrap();
    j.flush().unwrap();
    j.preview(&plan(
        r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"three\n"}]}"#,
    ))
    .unwrap();
    root.canonicalize().unwrap()
}

/// Every writing verb: exit 1, kind `read_only`, the journal's path in the message.
fn writing_verbs_are_refused(root: &Path) {
    let journal = root.join(".ultra-edit/journal.redb");
    let plan = r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"four\n"}]}"#;
    for (args, stdin) in [
        (&["--json", "commit", "2"][..], None),
        (&["--json", "preview"], Some(plan)),
        (&["--json", "revise", "2"], Some(plan)),
        (&["--json", "abort", "2"], None),
        (&["--json", "rollback", "1"], None),
        (&["--json", "recover"], None),
        (&["--json", "journal", "gc", "--keep-last", "1"], None),
    ] {
        let out = cli(root, args, stdin);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        let v = json_of(&out);
        assert_eq!(v["error"]["kind"], "read_only", "{args:?}: {v}");
        assert_eq!(
            v["error"]["message"],
            format!(
                "{} is on a read-only filesystem and this command writes to it; nothing was changed. Remount it read-write to do that; the history can be read as it is (the verbs that only read work)",
                journal.display()
            ),
            "{args:?}"
        );
        assert_eq!(v["error"]["next_step"]["step"], "remount_writable");
    }
    let out = cli(root, &["--json", "init"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "read_only");
}

#[test]
fn on_read_only_media_history_reads_and_writes_are_refused_plainly() {
    let m = match Mount::tmpfs() {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED on_read_only_media_history_reads…: {why}");
            return;
        }
    };
    let root = workspace_on(&m);
    let before: Vec<Output> = READING.iter().map(|a| cli(&root, a, None)).collect();
    let tree = tree_state(&root);
    let journal_bytes = fs::read(root.join(".ultra-edit/journal.redb")).unwrap();
    m.remount("ro");

    for (args, was) in READING.iter().zip(&before) {
        let out = cli(&root, args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        assert_eq!(out.stdout, was.stdout, "{args:?}");
        assert_eq!(out.stderr, b"", "{args:?}");
    }
    writing_verbs_are_refused(&root);

    // The library: opened read-only, nothing pending, a write refused as ReadOnly.
    let j = Journal::open(&root).unwrap();
    assert!(j.is_read_only());
    assert!(j.unrecovered().is_empty());
    match j.preview(&plan(
        r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"x\n"}]}"#,
    )) {
        Err(Error::ReadOnly { path, .. }) => {
            assert_eq!(path, root.join(".ultra-edit/journal.redb"))
        }
        other => panic!("expected ReadOnly, got {other:?}"),
    }
    assert_eq!(j.log(None).unwrap().len(), 2);
    drop(j);

    assert_eq!(tree_state(&root), tree);
    assert_eq!(
        fs::read(root.join(".ultra-edit/journal.redb")).unwrap(),
        journal_bytes
    );
    m.remount("rw");
    let out = cli(&root, &["commit", "2"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"three\n");
}

/// A batch interrupted between its intent and its commit point (the process aborted),
/// then the filesystem remounted read-only: reading works, the batch is reported, and
/// recovery waits for a writable filesystem.
#[cfg(feature = "failpoints")]
#[test]
fn on_read_only_media_an_interrupted_batch_is_reported_not_recovered() {
    let m = match Mount::tmpfs() {
        Ok(m) => m,
        Err(why) => {
            println!("SKIPPED on_read_only_media_an_interrupted_batch…: {why}");
            return;
        }
    };
    let root = workspace_on(&m);
    let out = run_ue(
        &root,
        &["commit", "2"],
        Some("batch::after_stage_file=return"),
    );
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let tree = tree_state(&root);
    m.remount("ro");

    let note = "ultra-edit: batch 2 of tx 2 (committing) was interrupted and needs recovery, which cannot run because the journal is on a read-only filesystem; until it runs, a.txt may hold old, new or mixed content. Remount read-write and run `ultra-edit recover`.\n";
    for args in READING {
        let out = cli(&root, args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        assert_eq!(String::from_utf8_lossy(&out.stderr), note, "{args:?}");
    }
    let out = cli(&root, &["log"], None);
    let log = String::from_utf8_lossy(&out.stdout);
    assert_eq!(log.lines().count(), 2, "{log}");
    assert!(log.lines().next().unwrap().starts_with("tx 2 "), "{log}");
    assert!(log.contains(" open "), "{log}");

    let j = Journal::open(&root).unwrap();
    let pending: Vec<_> = j
        .unrecovered()
        .iter()
        .map(|p: &PendingBatch| {
            (
                p.batch,
                p.tx,
                p.state,
                p.paths.clone(),
                p.recovery_failed.clone(),
            )
        })
        .collect();
    assert_eq!(
        pending,
        [(
            2,
            2,
            BatchState::Committing,
            vec!["a.txt".to_string()],
            None
        )]
    );
    assert!(j.recovery_on_open().is_none());
    drop(j);
    writing_verbs_are_refused(&root);
    // Nothing was attempted: the staged temp is still there.
    assert_eq!(tree_state(&root), tree);
    assert!(tree.keys().any(|k| k.starts_with(".ue-2-")), "{tree:?}");

    m.remount("rw");
    let out = cli(&root, &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Past its intent (the commit point), the batch is rolled forward.
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"three\n");
    assert!(!tree_state(&root).keys().any(|k| k.starts_with(".ue-")));
    let out = cli(&root, &["journal", "verify"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Found by the breaker: a commit that names a file on a read-only mount *inside* the
/// root fails at staging (EROFS), and its revert must not then fail on the temp that was
/// never created there (`unlink` says EROFS, not ENOENT, on a read-only mount). It ends
/// `CommitFailed`, nothing changed, and the workspace stays usable.
#[test]
fn a_read_only_mount_inside_the_root_fails_the_commit_plainly_and_leaves_the_workspace_usable() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    let ws = workspace();
    let ro = ws.path("ro");
    fs::create_dir(&ro).unwrap();
    let mount = |args: &[&str]| {
        Command::new("mount")
            .args(args)
            .arg(&ro)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !mount(&["-t", "tmpfs", "-o", "size=1m", "tmpfs"]) {
        eprintln!("skipped: mount -t tmpfs failed");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(ro.clone());
    fs::write(ro.join("r.txt"), b"ro\n").unwrap();
    let plan_both = r#"{"edits":[
            {"op":"replace_text","path":"src/b.rs","old":"    2","new":"    3"},
            {"op":"replace_text","path":"ro/r.txt","old":"ro","new":"RO"}]}"#;
    // Previewed while the mount is writable, so the commit meets the read-only mount
    // (a preview made after the remount reports it first: below).
    let p = ws.preview(plan_both);
    assert!(mount(&["-o", "remount,ro"]), "remount ro");
    let tree = ws.tree();
    let err = ws.journal.commit(p.tx, Default::default()).unwrap_err();
    match &err {
        Error::CommitFailed {
            cause, temps_left, ..
        } => {
            assert_eq!(cause.source.raw_os_error(), Some(30), "{err}");
            assert_eq!(temps_left, &Vec::<String>::new());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.exit_code(), 1);
    assert_eq!(ws.tree(), tree);
    assert_eq!(
        ws.journal.tx(p.tx).unwrap().state,
        ultra_edit::TxState::Open
    );
    // Previewed now, the read-only directory is an error of the preview itself
    // (issue 33 item 7), before any commit.
    let late = ws.preview(plan_both);
    assert!(!late.ready_to_commit);
    let codes: Vec<(&str, &str)> = late
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.path.as_str()))
        .collect();
    assert_eq!(codes, [("directory_not_writable", "ro/r.txt")]);
    // The workspace is usable: another preview, and a commit of it.
    let q = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2","new":"    4"}]}"#,
    );
    ws.journal.commit(q.tx, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    4\n}\n");
    let out = run_ue(ws.root(), &["--json", "recover"], None);
    assert_eq!(json_of(&out)["batches_found"], 0, "{}", text(&out));
}
