//! Commands as transactions (feature `sandbox`, docs/commands.md): a shell command run
//! on an overlay of the workspace becomes a revision; `--check` records a command's
//! outcome on the candidate. Every test runs as root and as a normal user (CI's
//! scripts/test-as-user.sh); where the sandbox cannot be set up, each checks the typed
//! `sandbox_unavailable` error instead.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use ultra_edit::sandbox::{CheckOptions, RunOptions};
use ultra_edit::{CommitOptions, Error, PreviewOptions, RollbackOptions, SandboxError, Severity};

use crate::support::*;

/// Whether the sandbox works here. Where it does not, the probe must fail with the
/// typed `sandbox_unavailable` error (naming a cause and a setting), never pass.
pub(crate) fn available(ws: &Ws) -> bool {
    match ws.journal.preview_run(&RunOptions::new("exit 0")) {
        Err(Error::Sandbox(SandboxError::NothingChanged { .. })) => true,
        Err(Error::Sandbox(e @ SandboxError::Unavailable { .. })) => {
            assert_eq!(e.kind(), "sandbox_unavailable");
            let SandboxError::Unavailable { cause, setting } = &e else {
                unreachable!()
            };
            assert!(!cause.is_empty() && !setting.is_empty(), "{e}");
            eprintln!("sandbox unavailable here, checked the typed error: {e}");
            false
        }
        other => panic!("the probe `exit 0` gave {other:?}"),
    }
}

/// Every file's modification time under the root (state directory excluded).
fn mtimes(ws: &Ws) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for rel in ws.tree().keys() {
        let m = std::fs::symlink_metadata(ws.path(rel)).unwrap();
        if m.is_file() {
            out.insert(rel.clone(), m.mtime_nsec() + m.mtime() * 1_000_000_000);
        }
    }
    out
}

fn committed(ws: &Ws, tx: u64) {
    ws.journal.commit(tx, CommitOptions::default()).unwrap();
}

#[test]
fn sed_on_several_files_leaves_the_tree_alone_until_commit_then_writes_exact_bytes() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let times = mtimes(&ws);
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new("sed -i 's/u32/u64/g' src/a.rs src/b.rs src/lib.rs && echo done")
                .with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    // The real tree: bytes, modes and mtimes unchanged.
    assert_eq!(ws.tree(), before);
    assert_eq!(mtimes(&ws), times);
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/a.rs", "src/b.rs", "src/lib.rs"]);
    let c = p.command.as_ref().expect("the command's origin");
    assert_eq!(
        c.command,
        "sed -i 's/u32/u64/g' src/a.rs src/b.rs src/lib.rs && echo done"
    );
    assert_eq!(c.status, Some(0));
    assert_eq!(c.output_tail, "done\n");
    assert!(p.ready_to_commit, "{:?}", p.validation);
    // show and the journal dump carry the origin too.
    assert_eq!(
        ws.journal.show(p.tx, None).unwrap().command.as_ref(),
        Some(c)
    );
    committed(&ws, p.tx);
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u64 {\n    crate::helper()\n}\n"
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u64 {\n    2\n}\n");
    assert_eq!(
        ws.read("src/lib.rs"),
        b"pub mod a;\npub mod b;\n\nfn helper() -> u64 {\n    1\n}\n"
    );
    assert_eq!(ws.mode("src/b.rs"), 0o600);
    // Nothing is left in the state directory.
    let runs = ws.root().join(".ultra-edit/sandbox");
    assert_eq!(std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0), 0);
}

#[test]
fn mv_rm_r_and_chmod_become_deletes_creates_and_mode_changes() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new("mv run.sh go.sh && rm -r src && chmod +x README.md")
                .with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    assert_eq!(ws.tree(), before);
    let got: Vec<(&str, Option<u32>, Option<u32>)> = p
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.snapshot.mode(), f.candidate.mode()))
        .collect();
    assert_eq!(
        got,
        [
            ("README.md", Some(0o644), Some(0o755)),
            ("go.sh", None, Some(0o755)),
            ("run.sh", Some(0o755), None),
            ("src/a.rs", Some(0o644), None),
            ("src/b.rs", Some(0o600), None),
            ("src/lib.rs", Some(0o644), None),
        ]
    );
    committed(&ws, p.tx);
    assert_eq!(ws.read("go.sh"), b"#!/bin/sh\necho hi\n");
    assert_eq!(ws.mode("go.sh"), 0o755);
    assert!(!ws.path("run.sh").exists());
    assert!(!ws.path("src/a.rs").exists() && !ws.path("src/lib.rs").exists());
    assert_eq!(ws.mode("README.md"), 0o755);
    assert_eq!(ws.read("README.md"), b"# sample\n\nNo trailing newline");
}

#[test]
fn a_python_script_rewriting_files_is_captured_byte_for_byte() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    if std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: no python3");
        return;
    }
    let script = r#"python3 -c '
import pathlib
for p in sorted(pathlib.Path("src").glob("*.rs")):
    p.write_bytes(p.read_bytes().replace(b"pub fn", b"pub(crate) fn") + b"// done\r\n")
pathlib.Path("bin.dat").write_bytes(bytes(range(256)))
'"#;
    let p = ws
        .journal
        .preview_run(&RunOptions::new(script).with_cwd(ws.root().to_path_buf()))
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["bin.dat", "src/a.rs", "src/b.rs", "src/lib.rs"]);
    committed(&ws, p.tx);
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub(crate) fn a() -> u32 {\n    crate::helper()\n}\n// done\r\n"
    );
    assert_eq!(ws.read("bin.dat"), (0..=255u8).collect::<Vec<u8>>());
}

#[test]
fn a_formatter_on_the_machine_is_captured() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let runs = std::process::Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("skipped: rustfmt cannot run for this user here");
        return;
    }
    ws.write("src/ugly.rs", b"fn  f( )->u32{ 1 }\n");
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new("rustfmt --edition 2021 src/ugly.rs")
                .with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    assert_eq!(ws.read("src/ugly.rs"), b"fn  f( )->u32{ 1 }\n");
    committed(&ws, p.tx);
    assert_eq!(ws.read("src/ugly.rs"), b"fn f() -> u32 {\n    1\n}\n");
}

#[test]
fn ignored_build_output_is_dropped_and_counted_unless_included() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    ws.write(".gitignore", b"target/\n*.pyc\n");
    let cmd = "mkdir -p target/debug sub && echo o > target/debug/out && echo c > sub/m.pyc && echo n > new.txt";
    let p = ws
        .journal
        .preview_run(&RunOptions::new(cmd).with_cwd(ws.root().to_path_buf()))
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["new.txt"]);
    assert_eq!(p.command.as_ref().unwrap().dropped_ignored, 2);
    let warned: Vec<&str> = p
        .validation
        .iter()
        .filter(|i| i.severity == Severity::Warning)
        .map(|i| i.code.as_str())
        .collect();
    assert_eq!(warned, ["ignored_dropped"]);
    assert!(!ws.path("target").exists());
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new(cmd)
                .with_cwd(ws.root().to_path_buf())
                .with_include_ignored(true),
        )
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["new.txt", "sub/m.pyc", "target/debug/out"]);
}

#[test]
fn writes_into_git_are_dropped_with_a_warning_and_refused_under_strict() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    ws.write(".git/HEAD", b"ref: refs/heads/main\n");
    let git_before = ws.read(".git/HEAD");
    let cmd = "echo junk > .git/HEAD && echo x >> .ultra-edit/junk; echo a > a.txt";
    let p = ws
        .journal
        .preview_run(&RunOptions::new(cmd).with_cwd(ws.root().to_path_buf()))
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["a.txt"]);
    assert_eq!(p.command.as_ref().unwrap().dropped_vcs, 2);
    assert!(p.validation.iter().any(|i| i.code == "out_of_scope_dropped"
        && i.severity == Severity::Warning
        && i.message.contains(".git/HEAD")));
    assert_eq!(ws.read(".git/HEAD"), git_before);
    let txs = ws.journal.log(None).unwrap().len();
    match ws.journal.preview_run(
        &RunOptions::new(cmd)
            .with_cwd(ws.root().to_path_buf())
            .with_strict(true),
    ) {
        Err(Error::Sandbox(SandboxError::OutOfScope { paths })) => {
            assert_eq!(paths, [".git/HEAD", ".ultra-edit/junk"])
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ws.journal.log(None).unwrap().len(), txs, "nothing recorded");
}

#[test]
fn a_failing_command_records_nothing_unless_kept() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let cmd = "echo partial > a.txt; echo oops; exit 3";
    match ws
        .journal
        .preview_run(&RunOptions::new(cmd).with_cwd(ws.root().to_path_buf()))
    {
        Err(e @ Error::Sandbox(SandboxError::CommandFailed { .. })) => {
            assert_eq!(e.kind(), "command_failed");
            assert_eq!(e.exit_code(), 8);
            let Error::Sandbox(SandboxError::CommandFailed {
                status,
                output_tail,
                ..
            }) = e
            else {
                unreachable!()
            };
            assert_eq!(status, Some(3));
            assert_eq!(output_tail, "oops\n");
        }
        other => panic!("{other:?}"),
    }
    assert!(ws.journal.log(None).unwrap().is_empty());
    assert_eq!(ws.tree(), before);
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new(cmd)
                .with_cwd(ws.root().to_path_buf())
                .with_keep_on_failure(true),
        )
        .unwrap();
    assert_eq!(p.command.as_ref().unwrap().status, Some(3));
    assert_eq!(p.files.len(), 1);
    assert_eq!(p.files[0].path.as_str(), "a.txt");
}

#[test]
fn made_symlinks_and_fifos_are_refused_by_name() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    match ws.journal.preview_run(
        &RunOptions::new("ln -s run.sh link && mkfifo pipe && ln src/a.rs hard")
            .with_cwd(ws.root().to_path_buf()),
    ) {
        Err(Error::Sandbox(SandboxError::Unrepresentable { paths })) => {
            let got: Vec<(&str, &str)> = paths
                .iter()
                .map(|p| (p.path.as_str(), p.kind.as_str()))
                .collect();
            // `ln` of a lower file copies it up first: both names are one inode.
            assert_eq!(
                got,
                [
                    ("hard", "hard_link"),
                    ("link", "symlink"),
                    ("pipe", "fifo"),
                    ("src/a.rs", "hard_link")
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// A file name that is not UTF-8 has its own typed refusal, `non_utf8_name`, naming
/// the path with its bytes escaped — made, and removed with its directory (found by
/// the breaker: it was `unrepresentable_files`, "it records regular files only", about
/// a regular file). Under an ignored directory it is dropped like any ignored path.
#[test]
fn non_utf8_file_names_are_refused_with_their_own_reason() {
    use std::os::unix::ffi::OsStrExt;
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let made = ws.journal.preview_run(
        &RunOptions::new(r#"printf x > "$(printf 'caf\351.txt')"; echo y > src/a.rs"#)
            .with_cwd(ws.root().to_path_buf()),
    );
    match made {
        Err(Error::Sandbox(e @ SandboxError::NonUtf8Names { .. })) => {
            assert_eq!(e.kind(), "non_utf8_name");
            assert_eq!(e.exit_code(), 1);
            assert_eq!(
                e,
                SandboxError::NonUtf8Names {
                    paths: vec![r"caf\xe9.txt".to_string()]
                }
            );
            assert_eq!(
                e.to_string(),
                r"the command made or removed a file whose name is not UTF-8 (caf\xe9.txt), which a transaction cannot name (its paths are UTF-8 text); nothing was recorded. Give them UTF-8 names in the command, or make or remove them outside ultra-edit"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ws.tree(), before);
    // Removed with its directory: refused too, never dropped.
    std::fs::create_dir(ws.path("d")).unwrap();
    std::fs::write(ws.path("d/ok.txt"), b"ok\n").unwrap();
    let name = std::ffi::OsStr::from_bytes(b"n\xff");
    std::fs::write(ws.path("d").join(name), b"n\n").unwrap();
    match ws
        .journal
        .preview_run(&RunOptions::new("rm -r d").with_cwd(ws.root().to_path_buf()))
    {
        Err(Error::Sandbox(SandboxError::NonUtf8Names { paths })) => {
            assert_eq!(paths, [r"d/n\xff"]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(ws.path("d").join(name)).unwrap(), b"n\n");
    // Under an ignored directory: dropped and counted like any ignored path.
    std::fs::write(ws.path(".gitignore"), b"out/\n").unwrap();
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new(r#"mkdir out; printf x > "out/$(printf '\351')"; echo z > z.txt"#)
                .with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["z.txt"]);
    assert_eq!(p.command.as_ref().unwrap().dropped_ignored, 1);
    // The CLI's kind.
    let out = cli(
        ws.root(),
        &[
            "--json",
            "preview",
            "--run",
            r#"printf x > "$(printf '\351')""#,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "non_utf8_name");
}

/// A path a command wrote that a transaction refuses (an ultra-edit temp file's name
/// form) has no plan to fix: the hint says the command wrote it (found by the
/// breaker: "fix that path in the plan and preview again").
#[test]
fn a_path_refused_in_a_command_run_says_to_change_the_command() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let out = cli(
        ws.root(),
        &["--json", "preview", "--run", "echo x > .ue-1.tmp"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "path_refused");
    assert_eq!(
        err["hint"],
        "names of the form .ue-*.tmp are ultra-edit's temp files: the command wrote that path: change the command so that it does not (or make that change outside ultra-edit), and run it again"
    );
    assert_eq!(ws.tree(), before);
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// A command that writes nothing a transaction keeps (here: only outside the root)
/// gets `nothing_to_change`, exit 4, with a hint that says where a command's writes
/// are kept (found by a breaker: it had no hint unless ignored paths were dropped).
#[test]
fn a_command_that_changed_nothing_says_where_writes_are_kept() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let before = ws.tree();
    let command = format!("echo x > {}/o.txt", outside.path().display());
    let out = cli(ws.root(), &["--json", "preview", "--run", &command], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = &json_of(&out)["error"];
    assert_eq!(err["kind"], "nothing_to_change");
    assert_eq!(
        err["hint"],
        "a transaction keeps the files a command writes under the workspace root: check that the command writes files there (writes outside the root are neither captured nor prevented, and a directory alone is not kept)"
    );
    assert_eq!(std::fs::read(outside.path().join("o.txt")).unwrap(), b"x\n");
    assert_eq!(ws.tree(), before);
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// Removing a symbolic link or a FIFO cannot be recorded by a plan: the whole run is
/// refused, by name, rather than committed without that removal (found by a breaker:
/// `rm lnk; echo new > new.txt` committed new.txt and kept lnk, exit 0).
#[test]
fn removed_symlinks_and_fifos_are_refused_by_name_not_dropped() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    std::os::unix::fs::symlink("run.sh", ws.path("lnk")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(ws.path("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    match ws.journal.preview_run(
        &RunOptions::new("rm lnk pipe; echo new > new.txt").with_cwd(ws.root().to_path_buf()),
    ) {
        Err(Error::Sandbox(SandboxError::Unrepresentable { paths })) => {
            let got: Vec<(&str, &str)> = paths
                .iter()
                .map(|p| (p.path.as_str(), p.kind.as_str()))
                .collect();
            assert_eq!(
                got,
                [("lnk", "removed_symlink"), ("pipe", "removed_special_file")]
            );
        }
        other => panic!("{other:?}"),
    }
    // (No `ws.tree()` here: reading the FIFO would block.)
    assert!(std::fs::symlink_metadata(ws.path("lnk"))
        .unwrap()
        .file_type()
        .is_symlink());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(ws.path("pipe"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(!ws.path("new.txt").exists());
    assert!(ws.journal.log(None).unwrap().is_empty());
}

#[test]
fn revise_run_works_on_the_plans_candidate() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let p = ws.preview(
        r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"crate::helper()","new":"crate::helper() + 1"},
                     {"op":"create_file","path":"src/c.rs","content":"pub fn c() {}\n"}]}"#,
    );
    let r = ws
        .journal
        .revise_run(
            p.tx,
            &RunOptions::new("sed -i 's/+ 1/+ 2/' src/a.rs && grep -q 'fn c' src/c.rs && echo '// c' >> src/c.rs").with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    assert_eq!(r.revision, 1);
    assert_eq!(r.base, Some(0));
    committed(&ws, p.tx);
    assert_eq!(
        ws.read("src/a.rs"),
        b"pub fn a() -> u32 {\n    crate::helper() + 2\n}\n"
    );
    assert_eq!(ws.read("src/c.rs"), b"pub fn c() {}\n// c\n");
}

/// A file that only the candidate holds (an earlier revision created it) lives only in
/// the overlay's upper layer; removing it there leaves no whiteout. `rm` of it must
/// still be a deletion, and `mv` a rename, not a copy.
#[test]
fn revise_run_deletes_and_moves_a_file_only_the_candidate_holds() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let run = |tx: u64, cmd: &str| {
        ws.journal
            .revise_run(tx, &RunOptions::new(cmd).with_cwd(ws.root().to_path_buf()))
            .unwrap()
    };
    let created =
        r#"{"edits":[{"op":"create_file","path":"src/c.rs","content":"pub fn c() {}\n"}]}"#;
    // rm: the candidate no longer has the file, so the tx changes nothing and says so.
    let p = ws.preview(created);
    match ws.journal.revise_run(
        p.tx,
        &RunOptions::new("rm src/c.rs").with_cwd(ws.root().to_path_buf()),
    ) {
        Ok(r) => {
            let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
            assert!(!paths.contains(&"src/c.rs"), "{paths:?}");
            assert!(r.files.is_empty(), "{:?}", r.files);
            assert_eq!(r.revision, 1);
        }
        Err(e) => panic!("rm of the candidate-only file: {e}"),
    }
    ws.journal.abort(p.tx).unwrap();
    assert!(!ws.path("src/c.rs").exists());
    // mv: a rename, not a copy.
    let p = ws.preview(created);
    let r = run(p.tx, "mv src/c.rs src/d.rs");
    let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/d.rs"]);
    committed(&ws, p.tx);
    assert!(!ws.path("src/c.rs").exists());
    assert_eq!(ws.read("src/d.rs"), b"pub fn c() {}\n");
}

#[test]
fn a_failing_check_blocks_the_commit_and_a_passing_one_is_noted() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let plan = plan(
        r#"{"edits":[{"op":"replace_text","path":"src/b.rs","old":"    2\n","new":"    NEW\n"}]}"#,
    );
    let check = |c: &str| CheckOptions::new(c).with_cwd(ws.root().to_path_buf());
    // The check sees the candidate, and what it writes is thrown away.
    let p = ws
        .journal
        .preview_checked(
            &plan,
            PreviewOptions::default(),
            &check("grep -q NEW src/b.rs && echo scratch > scratch.txt"),
        )
        .unwrap();
    let codes: Vec<(&str, Severity)> = p
        .validation
        .iter()
        .map(|i| (i.code.as_str(), i.severity))
        .collect();
    assert_eq!(codes, [("check_passed", Severity::Note)]);
    assert!(p.ready_to_commit);
    assert!(!ws.path("scratch.txt").exists());
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    ws.journal.abort(p.tx).unwrap();

    let p = ws
        .journal
        .preview_checked(
            &plan,
            PreviewOptions::default(),
            &check("echo failing; grep -q OLD src/b.rs"),
        )
        .unwrap();
    let failed = p
        .validation
        .iter()
        .find(|i| i.code == "check_failed")
        .unwrap();
    assert_eq!(failed.severity, Severity::Error);
    assert!(
        failed.message.contains("exited with status 1"),
        "{}",
        failed.message
    );
    assert!(failed.message.ends_with("failing\n"), "{}", failed.message);
    assert!(!p.ready_to_commit);
    match ws.journal.commit(p.tx, CommitOptions::default()) {
        Err(Error::ValidationFailed { .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    // The disk moves on; a rebase runs the check again on the merged candidate.
    ws.write("src/b.rs", b"// OLD\npub fn b() -> u32 {\n    2\n}\n");
    let r = ws
        .journal
        .rebase_checked(p.tx, &check("grep -q OLD src/b.rs && grep -q NEW src/b.rs"))
        .unwrap();
    let codes: Vec<&str> = r.validation.iter().map(|i| i.code.as_str()).collect();
    assert_eq!(codes, ["check_passed"]);
    assert!(r.ready_to_commit);
    committed(&ws, p.tx);
    assert_eq!(
        ws.read("src/b.rs"),
        b"// OLD\npub fn b() -> u32 {\n    NEW\n}\n"
    );
}

#[test]
fn a_committed_run_rolls_back_to_exact_bytes_and_modes_and_the_rollback_rolls_back() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let (p, receipt) = ws
        .journal
        .run(
            &RunOptions::new(
                "chmod 600 run.sh && printf 'x\\r\\n' >> crlf.txt && rm src/b.rs && echo n > n.txt",
            )
            .with_cwd(ws.root().to_path_buf()),
            CommitOptions::default(),
        )
        .unwrap();
    assert_eq!(receipt.tx, p.tx);
    let after = ws.tree();
    assert_eq!(ws.mode("run.sh"), 0o600);
    assert_eq!(ws.read("crlf.txt"), b"one\r\ntwo\r\nthree\r\nx\r\n");
    let undo = ws
        .journal
        .rollback(p.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.tree(), before);
    assert_eq!(ws.mode("src/b.rs"), 0o600);
    ws.journal
        .rollback(undo.tx, RollbackOptions::default())
        .unwrap();
    assert_eq!(ws.tree(), after);
}

/// `run --plan F` is `run`'s option misplaced, not a shell command: a usage error
/// (exit 2) that runs nothing and names where the options go (a new-user trial ran
/// `sh -c '--plan F'` and got exit 8).
#[test]
fn run_with_an_option_in_place_of_the_command_is_a_usage_error() {
    let ws = workspace();
    let before = ws.tree();
    let out = cli(ws.root(), &["--json", "run", "--plan", "p.json"], None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "usage");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("`--plan` is not an option of `run` here"),
        "{message}"
    );
    assert!(
        message.contains("ultra-edit run [OPTIONS] -- CMD"),
        "{message}"
    );
    assert_eq!(ws.tree(), before);
    assert!(ws.journal.log(None).unwrap().is_empty());
}

#[test]
fn cli_run_prints_the_receipt_and_show_log_and_dump_name_the_command() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let out = cli(
        ws.root(),
        &["run", "--", "sh", "-c", "echo it > it.txt"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("committed tx 1 revision 0"), "{stdout}");
    assert_eq!(ws.read("it.txt"), b"it\n");
    let show = cli(ws.root(), &["--json", "show", "1"], None);
    let v = json_of(&show);
    assert_eq!(v["command"]["command"], "sh -c 'echo it > it.txt'");
    assert_eq!(v["command"]["status"], 0);
    let log = cli(ws.root(), &["log"], None);
    assert!(String::from_utf8_lossy(&log.stdout).contains("$ sh -c 'echo it > it.txt'"));
    let dump = cli(ws.root(), &["journal", "dump", "--tx", "1"], None);
    assert!(
        String::from_utf8_lossy(&dump.stdout).contains("echo it > it.txt"),
        "{}",
        text(&dump)
    );
    // A failing command: exit 8, kind command_failed, nothing recorded.
    let out = cli(
        ws.root(),
        &["--json", "preview", "--run", "echo no; exit 2"],
        None,
    );
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "command_failed");
    assert_eq!(
        json_of(&cli(ws.root(), &["--json", "log"], None))["txs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn sigkill_during_the_command_leaves_the_tree_and_the_next_command_removes_the_residue() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    let mut child = ue_command(
        ws.root(),
        &["preview", "--run", "echo x > src/a.rs; rm run.sh; sleep 30"],
    )
    .current_dir(ws.root())
    .spawn()
    .unwrap();
    let runs = ws.root().join(".ultra-edit/sandbox");
    let started = Instant::now();
    // The command has run its writes once the upper directory holds them.
    loop {
        let written = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .is_some_and(|e| {
                e.map(|e| e.path().join("upper/run.sh").exists())
                    .unwrap_or(false)
            });
        if written {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never wrote"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(ws.tree(), before);
    assert_eq!(
        std::fs::read_dir(&runs).unwrap().count(),
        1,
        "the residue is there"
    );
    let out = cli(ws.root(), &["log"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_dir(&runs).unwrap().count(),
        0,
        "removed by the next command"
    );
    assert_eq!(ws.tree(), before);
}

mod mcp {
    use super::*;
    use serde_json::{json, Value};
    use std::sync::Arc;
    use ultra_edit::mcp::{tool_definitions_for, EditTools, EDIT_RUN, TOOL_NAMES};

    fn tools(ws: &Ws, allow: bool) -> EditTools {
        EditTools::new(Arc::new(ultra_edit::Journal::open(ws.root()).unwrap())).with_commands(allow)
    }

    /// MCP's twin of `a_path_refused_in_a_command_run_says_to_change_the_command`: the
    /// hint names the command, not a plan the agent never sent.
    #[test]
    fn a_path_refused_in_edit_run_says_to_change_the_command() {
        let ws = workspace();
        if !available(&ws) {
            return;
        }
        let before = ws.tree();
        let e = tools(&ws, true)
            .call(
                EDIT_RUN,
                json!({"agent_id": "a", "command": "echo x > .ue-1.tmp"}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "path_refused");
        assert_eq!(
            e.hint,
            "the command wrote that path: change the command so that it does not (or make that change outside ultra-edit), and call edit_run again; nothing was changed"
        );
        assert_eq!(ws.tree(), before);
        assert!(ws.journal.log(None).unwrap().is_empty());
    }

    #[test]
    fn without_the_opt_in_edit_run_and_check_are_absent_and_refused_by_name() {
        let ws = workspace();
        let names: Vec<&str> = tool_definitions_for(false).iter().map(|d| d.name).collect();
        assert_eq!(names, TOOL_NAMES);
        assert!(tool_definitions_for(false)
            .iter()
            .all(|d| !d.input_schema["properties"]
                .as_object()
                .unwrap()
                .contains_key("check")));
        let t = tools(&ws, false);
        let e = t
            .call(
                EDIT_RUN,
                json!({"agent_id": "a", "command": "echo x > x.txt"}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "commands_not_allowed");
        assert!(e.message.contains("--allow-commands"), "{}", e.message);
        let e = t
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "n.txt", "new_content": "n\n", "check": "true"}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "commands_not_allowed");
        assert!(ws.journal.log(None).unwrap().is_empty(), "nothing recorded");
        assert!(!ws.path("x.txt").exists());
    }

    #[test]
    fn with_the_opt_in_edit_run_previews_a_command_and_check_gates_the_commit() {
        let ws = workspace();
        if !available(&ws) {
            return;
        }
        let defs = tool_definitions_for(true);
        assert_eq!(defs.last().unwrap().name, EDIT_RUN);
        for name in ["edit_preview", "edit_revise", "edit_rebase"] {
            let d = defs.iter().find(|d| d.name == name).unwrap();
            assert!(d.input_schema["properties"]["check"].is_object(), "{name}");
        }
        let t = tools(&ws, true);
        let out = t
            .call(
                EDIT_RUN,
                json!({"agent_id": "a", "command": "sed -i 's/hi/bye/' run.sh && echo ran"}),
            )
            .unwrap();
        assert_eq!(
            out["command"]["command"],
            "sed -i 's/hi/bye/' run.sh && echo ran"
        );
        assert_eq!(out["command"]["status"], 0);
        assert_eq!(out["command"]["output_tail"], "ran\n");
        let id = out["preview_id"].clone();
        assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho hi\n");
        t.call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "a", "confirm": true}),
        )
        .unwrap();
        assert_eq!(ws.read("run.sh"), b"#!/bin/sh\necho bye\n");
        assert_eq!(ws.mode("run.sh"), 0o755);
        // A failing check: check_failed, and edit_commit is refused.
        let out = t
            .call(
                "edit_preview",
                json!({"agent_id": "a", "file_path": "n.txt", "new_content": "n\n", "check": "test ! -e n.txt"}),
            )
            .unwrap();
        let issues: Vec<Value> = out["validation_issues"].as_array().unwrap().clone();
        assert!(
            issues
                .iter()
                .any(|i| i["code"] == "check_failed" && i["severity"] == "error"),
            "{issues:?}"
        );
        let e = t
            .call(
                "edit_commit",
                json!({"preview_id": out["preview_id"], "agent_id": "a", "confirm": true}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "validation_failed", "{e:?}");
        assert!(!ws.path("n.txt").exists());
        // A failing command is typed, with its status and output tail.
        let e = t
            .call(
                EDIT_RUN,
                json!({"agent_id": "a", "command": "echo nope; exit 5"}),
            )
            .unwrap_err();
        assert_eq!(e.kind, "command_failed");
    }

    /// The served tool list, over stdio: `edit_run` only with `--allow-commands`.
    #[test]
    fn serve_lists_edit_run_only_when_started_with_allow_commands() {
        let ws = workspace();
        let list = |args: &[&str]| -> Vec<String> {
            let input = [
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            ]
            .iter()
            .map(|v| v.to_string() + "\n")
            .collect::<String>();
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ultra-edit"));
            cmd.arg("--root").arg(ws.root()).args(args);
            let out = output_with_stdin(cmd, &input);
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let reply = stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|v| v["id"] == 2)
                .unwrap_or_else(|| panic!("no tools/list reply: {}", text(&out)));
            reply["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .collect()
        };
        let plain = list(&["serve"]);
        assert_eq!(plain, TOOL_NAMES);
        let allowed = list(&["serve", "--allow-commands"]);
        assert_eq!(allowed.last().map(String::as_str), Some(EDIT_RUN));
        assert_eq!(
            allowed[allowed.len() - 2..],
            [ultra_edit::mcp::EDIT_CONFIG, EDIT_RUN]
        );
        assert_eq!(allowed.len(), TOOL_NAMES.len() + 2);
    }
}

#[test]
fn a_command_past_its_timeout_is_killed_and_records_nothing() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let started = Instant::now();
    match ws.journal.preview_run(
        &RunOptions::new("echo early > a.txt; echo waiting; sleep 20")
            .with_cwd(ws.root().to_path_buf())
            .with_timeout(Duration::from_millis(300)),
    ) {
        Err(e @ Error::Sandbox(SandboxError::TimedOut { .. })) => {
            assert_eq!(e.kind(), "command_timed_out");
            let Error::Sandbox(SandboxError::TimedOut {
                timeout_ms,
                output_tail,
                ..
            }) = e
            else {
                unreachable!()
            };
            assert_eq!((timeout_ms, output_tail.as_str()), (300, "waiting\n"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "killed, not waited for"
    );
    assert!(ws.journal.log(None).unwrap().is_empty());
    assert!(!ws.path("a.txt").exists());
    let runs = ws.root().join(".ultra-edit/sandbox");
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
}

#[test]
fn a_directory_removed_and_made_again_deletes_what_it_held() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    // The new src/ is an opaque directory in the upper layer: the lower's files under
    // it are gone even though no whiteout names them.
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new("rm -r src && mkdir src && printf 'pub fn n() {}\\n' > src/lib.rs")
                .with_cwd(ws.root().to_path_buf()),
        )
        .unwrap();
    let got: Vec<(&str, bool)> = p
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.candidate.exists()))
        .collect();
    assert_eq!(
        got,
        [
            ("src/a.rs", false),
            ("src/b.rs", false),
            ("src/lib.rs", true)
        ]
    );
    committed(&ws, p.tx);
    assert_eq!(ws.read("src/lib.rs"), b"pub fn n() {}\n");
    assert!(!ws.path("src/a.rs").exists() && !ws.path("src/b.rs").exists());
}

/// Found by the breaker: the command ran as PID 1 of its own PID namespace, and the
/// kernel never delivers to a namespace's init a signal it has no handler for when it
/// comes from inside the namespace. So `sh -c 'kill -TERM $$'` — a command ending
/// itself, as `raise(SIGTERM)` or a watchdog inside it would — was not killed: the
/// shell read on, exited 0, and what it wrote was recorded as a success. Run directly,
/// the shell dies by SIGTERM (status 143); so it must here: `command_failed` with
/// `signal: Some(15)`, nothing recorded (the namespace's first process is now a minimal
/// init and the command its child).
#[test]
fn a_command_that_kills_itself_by_a_signal_fails_and_records_nothing() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let cmd = "echo x > self.txt; kill -TERM $$; echo survived > after.txt";
    match ws
        .journal
        .preview_run(&RunOptions::new(cmd).with_cwd(ws.root().to_path_buf()))
    {
        Err(Error::Sandbox(SandboxError::CommandFailed { status, signal, .. })) => {
            assert_eq!((status, signal), (None, Some(15)));
        }
        other => panic!("{other:?}"),
    }
    assert!(ws.journal.log(None).unwrap().is_empty());
}
