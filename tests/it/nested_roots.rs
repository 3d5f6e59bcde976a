//! Nested roots (docs/embedding.md, "Nested roots"): a journal over `/a` and one over
//! `/a/b` never run batches at once, whichever came first; sibling roots do not wait
//! for each other. The other journal's batch runs in another process (the CLI,
//! paused inside its batch by a failpoint).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ultra_edit::{CommitOptions, Error, Journal, Plan};

/// A journal over `root` (created), with a 300 ms lock timeout.
fn journal(root: &Path) -> Journal {
    std::fs::create_dir_all(root).unwrap();
    let mut j = Journal::init(root).unwrap();
    j.set_lock_timeout(Duration::from_millis(300));
    j
}

/// The CLI committing `file` in `root`'s journal, paused after taking its commit lock
/// (for 30 s, or until killed); returns once it holds the lock.
fn paused_commit(root: &Path, file: &str) -> Child {
    let j = journal(root);
    let p = j.preview(&Plan::new().create_file(file, "cli\n")).unwrap();
    drop(j);
    let mut cli = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(root)
        .args(["commit", &p.handle.to_string()])
        .env("FAILPOINTS", "batch::after_lock=sleep(30000)")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = cli.id().to_string();
    let lock = root.join(".ultra-edit/commit.lock");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&lock).unwrap_or_default().trim() != pid {
        if Instant::now() >= deadline {
            let _ = cli.kill();
            let _ = cli.wait();
            panic!("the CLI never took its commit lock");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cli
}

fn stop(mut cli: Child) {
    let _ = cli.kill();
    let _ = cli.wait();
}

fn canonical_tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// Commit `file` in `j`'s root: what `commit` answered.
fn commit_new(j: &Journal, file: &str) -> ultra_edit::Result<ultra_edit::Receipt> {
    let p = j.preview(&Plan::new().create_file(file, "lib\n")).unwrap();
    let r = j.commit(p.handle, CommitOptions::default());
    if r.is_err() {
        j.abort(p.handle).unwrap();
    }
    r
}

fn assert_waited_for(r: ultra_edit::Result<ultra_edit::Receipt>, dir: &Path, pid: u32) {
    match r {
        Err(Error::LockTimeout { path, holder, .. }) => {
            assert_eq!(path, dir);
            assert_eq!(holder, Some(pid));
        }
        other => panic!("expected LockTimeout on {}, got {other:?}", dir.display()),
    }
}

#[cfg(feature = "failpoints")]
#[test]
fn a_commit_over_a_nested_root_waits_for_one_over_the_outer_root() {
    let (_dir, top) = canonical_tmp();
    let (outer, inner) = (top.join("a"), top.join("a/b"));
    std::fs::create_dir_all(&inner).unwrap();
    let cli = paused_commit(&outer, "b/from-outer.txt");
    let pid = cli.id();
    let j = journal(&inner);
    let r = commit_new(&j, "from-inner.txt");
    stop(cli);
    assert_waited_for(r, &outer, pid);
    assert!(!inner.join("from-inner.txt").exists());
    assert!(!inner.join("from-outer.txt").exists());
    // The outer batch gone, the inner commit goes through.
    let receipt = commit_new(&j, "from-inner.txt").unwrap();
    assert_eq!(receipt.files.len(), 1);
    assert_eq!(
        std::fs::read(inner.join("from-inner.txt")).unwrap(),
        b"lib\n"
    );
}

#[cfg(feature = "failpoints")]
#[test]
fn a_commit_over_the_outer_root_waits_for_one_over_a_nested_root() {
    let (_dir, top) = canonical_tmp();
    let (outer, inner) = (top.join("a"), top.join("a/b"));
    std::fs::create_dir_all(&inner).unwrap();
    let j = journal(&outer);
    let cli = paused_commit(&inner, "from-inner.txt");
    let pid = cli.id();
    let r = commit_new(&j, "b/from-outer.txt");
    stop(cli);
    // The outer root's own lock is the one the nested batch holds (shared).
    assert_waited_for(r, &outer, pid);
    assert!(!inner.join("from-outer.txt").exists());
    let receipt = commit_new(&j, "b/from-outer.txt").unwrap();
    assert_eq!(receipt.files.len(), 1);
    assert_eq!(
        std::fs::read(inner.join("from-outer.txt")).unwrap(),
        b"lib\n"
    );
}

#[cfg(feature = "failpoints")]
#[test]
fn sibling_roots_commit_side_by_side() {
    let (_dir, top) = canonical_tmp();
    let cli = paused_commit(&top.join("x"), "x.txt");
    let j = journal(&top.join("y"));
    let r = commit_new(&j, "y.txt");
    stop(cli);
    assert_eq!(r.unwrap().files.len(), 1);
    assert_eq!(std::fs::read(top.join("y/y.txt")).unwrap(), b"lib\n");
}
