//! The CLI's commit and rollback hand a large replaced file to a detached child process
//! to free (src/fs/release.rs, docs/commit-protocol.md step 7): the bytes and the
//! receipts are exact, and the failpoint `fs::release` (feature `failpoints`) names how
//! each release went — a child process other than the CLI's for a large file, in place
//! for a small one.

use std::path::Path;

use ultra_edit::Journal;

use crate::support::*;

/// Run the binary on `root` with `FAILPOINTS=fs::release=return`; its output and pid.
fn observed(root: &Path, args: &[&str]) -> (std::process::Output, u32) {
    let mut cmd = ue_command(root, args);
    cmd.env("FAILPOINTS", "fs::release=return");
    let child = cmd.spawn().expect("spawn ultra-edit");
    let pid = child.id();
    (child.wait_with_output().expect("wait ultra-edit"), pid)
}

/// The pid a `detached to process N` note names, checked against the note's exact text
/// and the CLI's own pid.
fn detached_pid(stderr: &str, inodes: usize, bytes: u64, cli_pid: u32) -> u32 {
    let prefix = format!(
        "ultra-edit: released {inodes} held inode(s) of {bytes} bytes detached to process "
    );
    let pid = stderr
        .strip_prefix(&prefix)
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{stderr:?}"));
    let pid: u32 = pid.parse().unwrap_or_else(|_| panic!("{stderr:?}"));
    assert_ne!(pid, cli_pid, "the child is another process");
    pid
}

/// A 12 MB file and a small one committed in one batch and rolled back through the
/// binary: both releases are detached (12,000,000 + 6 and 11,999,978 + 9 bytes held,
/// over the 8 MiB threshold), the files hold exactly the edited and then the original
/// bytes (blake3), the receipts name the batch and both files, and the journal verifies.
/// A commit of the small file alone releases in place.
#[test]
fn a_large_commit_and_rollback_release_detached_with_exact_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let original: Vec<u8> = (0..400_000u32)
        .flat_map(|i| format!("{i:08} line of the big file\n").into_bytes())
        .collect();
    assert_eq!(original.len(), 12_000_000);
    std::fs::write(root.join("big.txt"), &original).unwrap();
    std::fs::write(root.join("small.txt"), b"small\n").unwrap();
    Journal::init(&root).unwrap();
    let plan = r#"{"edits":[
        {"op":"replace_lines","path":"big.txt","start":200001,"end":200001,"content":"changed\n"},
        {"op":"replace_text","path":"small.txt","old":"small","new":"edited!!!"}]}"#;
    let out = cli(&root, &["preview"], Some(plan));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut edited = original.clone();
    edited.splice(200_000 * 30..200_001 * 30, b"changed\n".iter().copied());
    assert_eq!(edited.len(), 11_999_978);

    let (out, cli_pid) = observed(&root, &["--json", "commit", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    detached_pid(
        &String::from_utf8_lossy(&out.stderr),
        2,
        12_000_000 + 6,
        cli_pid,
    );
    let receipt = json_of(&out);
    assert_eq!(
        (&receipt["tx"], &receipt["batch"], &receipt["bytes_written"]),
        (&1.into(), &1.into(), &(11_999_978 + 10).into()),
        "{receipt}"
    );
    let paths: Vec<&str> = receipt["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["big.txt", "small.txt"]);
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&edited)
    );
    assert_eq!(
        std::fs::read(root.join("small.txt")).unwrap(),
        b"edited!!!\n"
    );

    let (out, cli_pid) = observed(&root, &["--json", "rollback", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    detached_pid(
        &String::from_utf8_lossy(&out.stderr),
        2,
        11_999_978 + 10,
        cli_pid,
    );
    let receipt = json_of(&out);
    assert_eq!(
        (&receipt["tx"], &receipt["batch"], &receipt["bytes_written"]),
        (&2.into(), &2.into(), &(12_000_000 + 6).into()),
        "{receipt}"
    );
    assert_eq!(receipt["kind"]["rollback"]["of"], 1);
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&original)
    );
    assert_eq!(std::fs::read(root.join("small.txt")).unwrap(), b"small\n");
    let out = run_ue(&root, &["journal", "verify"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A small file alone: released in place.
    let plan = r#"{"edits":[{"op":"replace_text","path":"small.txt","old":"small","new":"tiny"}]}"#;
    let out = cli(&root, &["--json", "preview"], Some(plan));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["tx"], 3, "the rollback was tx 2");
    let (out, _) = observed(&root, &["commit", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ultra-edit: released 1 held inode(s) of 6 bytes in place\n"
    );
    assert_eq!(std::fs::read(root.join("small.txt")).unwrap(), b"tiny\n");
}

/// Children of this process (every thread's `/proc/self/task/*/children`, zombies
/// included) whose name (`comm`) is one of `names`.
fn own_children_named(names: &[&str]) -> Vec<i32> {
    let mut pids = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let list = std::fs::read_to_string(task.unwrap().path().join("children")).unwrap();
        for pid in list.split_whitespace() {
            let pid: i32 = pid.parse().unwrap();
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if names.contains(&comm.trim_end()) {
                pids.push(pid);
            }
        }
    }
    pids.sort_unstable();
    pids
}

/// The library's default (an embedder such as m1nd, which never calls
/// `Journal::set_detached_release`) never forks: a commit and a rollback of a 9.6 MB file
/// through `Journal`, completion on its background thread (the default), leave no child
/// process named after the calling thread or the completion thread, and the bytes are
/// exact. The control: with the setter, the same commit leaves exactly one such child
/// (never reaped by the library), which exits 0 — unless the disk has not four times
/// the two files' 19.2 MB free, where the release is in place.
#[test]
fn the_library_default_never_forks_a_release_child() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let original: Vec<u8> = (0..300_000u32)
        .flat_map(|i| format!("{i:08} a line of a 9 MiB file\n").into_bytes())
        .collect();
    assert_eq!(original.len(), 300_000 * 32);
    std::fs::write(root.join("big.txt"), &original).unwrap();
    let me = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
    let names = [me.trim_end(), "ue-completion"];
    let before = own_children_named(&names);
    let plan_json = |n: u32| {
        format!(
            r#"{{"edits":[{{"op":"replace_lines","path":"big.txt","start":7,"end":7,"content":"v{n}\n"}}]}}"#
        )
    };

    let mut j = Journal::init(&root).unwrap();
    let p = j.preview(&plan(&plan_json(1))).unwrap();
    let receipt = j
        .commit(p.tx, ultra_edit::CommitOptions::default())
        .unwrap();
    j.flush().unwrap();
    let mut edited = original.clone();
    edited.splice(6 * 32..7 * 32, b"v1\n".iter().copied());
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&edited)
    );
    j.rollback(receipt.tx, ultra_edit::RollbackOptions::default())
        .unwrap();
    j.flush().unwrap();
    assert_eq!(
        blake3::hash(&std::fs::read(root.join("big.txt")).unwrap()),
        blake3::hash(&original)
    );
    assert_eq!(own_children_named(&names), before, "the default forked");

    // The control: detached, one child more, which this test reaps.
    j.set_detached_release(true);
    let st = rustix::fs::statvfs(&root).unwrap();
    let room = st.f_bavail * st.f_frsize;
    let p = j.preview(&plan(&plan_json(2))).unwrap();
    j.commit(p.tx, ultra_edit::CommitOptions::default())
        .unwrap();
    j.flush().unwrap();
    let after = own_children_named(&names);
    if room / 4 < 2 * original.len() as u64 {
        return; // a nearly full disk: released in place
    }
    let new: Vec<i32> = after.into_iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "{new:?}");
    let mut status = 0;
    // SAFETY: waits for this test's own child.
    assert_eq!(unsafe { libc::waitpid(new[0], &mut status, 0) }, new[0]);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status}"
    );
}
