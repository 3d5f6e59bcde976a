//! Owners across users: a batch interrupted in one user's process and settled by
//! another's (docs/commit-protocol.md, "Owners"). Root in a container settling a
//! user's batch gives the user's files the user's owner; a user settling root's batch
//! refuses instead of making root's files its own. Run as root (CI); skipped otherwise.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use crate::support::*;

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A workspace directory anyone may use (the tempdir itself is 0700 root's).
fn shared_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// `ultra-edit` as uid/gid 65534, `FAILPOINTS` set when given, `stdin` fed to it.
fn as_nobody(root: &Path, args: &[&str], stdin: &str, failpoints: Option<&str>) -> Output {
    let mut cmd = ue_command(root, args);
    cmd.uid(NOBODY).gid(NOBODY);
    if let Some(f) = failpoints {
        cmd.env("FAILPOINTS", f);
    }
    output_with_stdin(cmd, stdin)
}

fn owner(path: &Path) -> (u32, u32) {
    let md = std::fs::symlink_metadata(path).unwrap();
    (md.uid(), md.gid())
}

/// The names in `dir` (recursively, relative) that are Ultra Edit temps.
fn temps(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name == ".ultra-edit" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if name.starts_with(".ue-") {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}

#[cfg(feature = "failpoints")]
#[test]
fn root_settling_a_users_batch_gives_created_files_and_dirs_the_users_owner() {
    if !is_root() {
        eprintln!("skipped: the test drops to uid 65534 (CI runs as root)");
        return;
    }
    for point in ["batch::after_intent", "batch::after_stage_file"] {
        let dir = shared_dir();
        let w = dir.path();
        assert_eq!(as_nobody(w, &["init"], "", None).status.code(), Some(0));
        let plan = r#"{"edits":[{"op":"create_file","path":"new/deep/n.txt","content":"n\n"},{"op":"create_file","path":"top.txt","content":"t\n"}]}"#;
        let out = as_nobody(w, &["preview"], plan, None);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let out = as_nobody(w, &["commit", "1"], "", Some(&format!("{point}=return")));
        assert_eq!(out.status.code(), None, "{point}: aborted by the failpoint");
        // Root's reading command settles the batch (recovery runs on open).
        let out = run_ue(w, &["--json", "log"], None);
        assert_eq!(out.status.code(), Some(0), "{point}: {out:?}");
        for rel in ["new", "new/deep", "new/deep/n.txt", "top.txt"] {
            assert_eq!(owner(&w.join(rel)), (NOBODY, NOBODY), "{point}: {rel}");
        }
        assert_eq!(std::fs::read(w.join("new/deep/n.txt")).unwrap(), b"n\n");
        assert_eq!(temps(w), Vec::<String>::new(), "{point}");
        // The user goes on editing its own new file.
        let out = as_nobody(
            w,
            &["preview"],
            r#"{"edits":[{"op":"append","path":"new/deep/n.txt","text":"more\n"}]}"#,
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{point}: {out:?}");
        let out = as_nobody(w, &["commit", "2"], "", None);
        assert_eq!(out.status.code(), Some(0), "{point}: {out:?}");
        assert_eq!(
            std::fs::read(w.join("new/deep/n.txt")).unwrap(),
            b"n\nmore\n"
        );
    }
}

#[cfg(feature = "failpoints")]
#[test]
fn a_user_refuses_to_settle_a_batch_whose_owners_it_cannot_give() {
    if !is_root() {
        eprintln!("skipped: the test drops to uid 65534 (CI runs as root)");
        return;
    }
    let dir = shared_dir();
    let w = dir.path();
    assert_eq!(as_nobody(w, &["init"], "", None).status.code(), Some(0));
    // Root's files in the user's workspace, writable by all.
    for f in ["a.txt", "b.txt"] {
        std::fs::write(w.join(f), b"old\n").unwrap();
        std::fs::set_permissions(w.join(f), std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let plan = r#"{"edits":[{"op":"replace_file","path":"a.txt","content":"new\n"},{"op":"replace_file","path":"b.txt","content":"new\n"},{"op":"create_file","path":"c.txt","content":"c\n"}]}"#;
    assert_eq!(run_ue_stdin(w, &["preview"], plan).status.code(), Some(0));
    let out = run_ue(w, &["commit", "1"], Some("batch::after_stage=return"));
    assert_eq!(out.status.code(), None, "aborted by the failpoint");
    let staged = temps(w).len();
    assert_eq!(staged, 3, "the crash left the three staged temps");

    // The user's writing command refuses, typed, and writes nothing.
    let out = as_nobody(w, &["--json", "recover"], "", None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "recovery_needs_owner", "{v}");
    assert_eq!(
        v["error"]["message"],
        "batch 1 of tx 1 was interrupted and recovery must complete it, but it writes a.txt (0:0), b.txt (0:0), c.txt (0:0) and this process (uid 65534) cannot give them their owner; nothing was changed"
    );
    assert_eq!(
        v["error"]["hint"],
        "run `ultra-edit recover` as root (e.g. `sudo ultra-edit recover`) or as the files' owner (uid 0); until then the batch stays in flight, and `ultra-edit log`, `show` and `journal dump` work"
    );
    for f in ["a.txt", "b.txt"] {
        assert_eq!(std::fs::read(w.join(f)).unwrap(), b"old\n", "{f}");
    }
    assert!(!w.join("c.txt").exists());
    assert_eq!(temps(w).len(), staged, "the user touched no temp of root's");
    // Its reading commands still work.
    let out = as_nobody(w, &["--json", "log"], "", None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // Root settles it: every file new, root's, no temp left.
    let out = run_ue(w, &["recover"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for f in ["a.txt", "b.txt"] {
        assert_eq!(
            (std::fs::read(w.join(f)).unwrap(), owner(&w.join(f))),
            (b"new\n".to_vec(), (0, 0)),
            "{f}"
        );
    }
    assert_eq!(owner(&w.join("c.txt")), (0, 0));
    assert_eq!(temps(w), Vec::<String>::new());
}

/// A user's file in a set-group-ID directory of a group the user is not in: the user
/// may keep that group (chown(2) to the group a file already has), and a file it
/// creates there gets it, as any new file in the directory does.
#[test]
fn a_user_keeps_and_gives_the_group_of_a_set_group_id_directory() {
    if !is_root() {
        eprintln!("skipped: the test drops to uid 65534 (CI runs as root)");
        return;
    }
    const GROUP: u32 = 4242;
    let dir = shared_dir();
    let w = dir.path();
    assert_eq!(as_nobody(w, &["init"], "", None).status.code(), Some(0));
    let shared = w.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::os::unix::fs::chown(&shared, Some(NOBODY), Some(GROUP)).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o2775)).unwrap();
    std::fs::write(shared.join("a.txt"), b"old\n").unwrap();
    std::os::unix::fs::chown(shared.join("a.txt"), Some(NOBODY), Some(GROUP)).unwrap();
    let plan = r#"{"edits":[{"op":"replace_file","path":"shared/a.txt","content":"new\n"},{"op":"create_file","path":"shared/sub/b.txt","content":"b\n"}]}"#;
    let out = as_nobody(w, &["preview"], plan, None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = as_nobody(w, &["--json", "commit", "1"], "", None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for rel in ["shared/a.txt", "shared/sub", "shared/sub/b.txt"] {
        assert_eq!(owner(&w.join(rel)), (NOBODY, GROUP), "{rel}");
    }
    // The receipt records the created file's owner as its commit gave it.
    let out = run_ue(w, &["--json", "journal", "dump", "--tx", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let receipt = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find_map(|v| v["detail"].get("receipt").cloned())
        .unwrap();
    assert_eq!(receipt["files"][1]["path"], "shared/sub/b.txt");
    assert_eq!(
        receipt["files"][1]["post"]["owner"],
        serde_json::json!({"uid": NOBODY, "gid": GROUP})
    );
}

/// `ultra-edit` as root on `root` with `stdin` fed to it.
fn run_ue_stdin(root: &Path, args: &[&str], stdin: &str) -> Output {
    output_with_stdin(ue_command(root, args), stdin)
}
