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

/// Root running commands in a user's workspace re-creates the state files it finds
/// missing (`commit.lock`, `.gitignore`) owned by the state directory's owner, not by
/// root: the user can still lock, commit and re-run `init` afterwards.
#[test]
fn root_gives_the_state_files_it_creates_the_owner_of_the_state_directory() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: the test runs as root in a workspace owned by uid 4242");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let user = |args: &[&str], stdin: &str| {
        let mut cmd = ue_command(root, args);
        cmd.uid(4242).gid(4242);
        output_with_stdin(cmd, stdin)
    };
    let owner = |rel: &str| {
        let md = fs::metadata(root.join(rel)).unwrap();
        (md.uid(), md.gid())
    };
    std::os::unix::fs::chown(root, Some(4242), Some(4242)).unwrap();
    fs::write(root.join("a.txt"), b"a\n").unwrap();
    std::os::unix::fs::chown(root.join("a.txt"), Some(4242), Some(4242)).unwrap();
    assert_eq!(user(&["init"], "").status.code(), Some(0));
    // `init` by root repairs a missing .gitignore and lock file.
    fs::remove_file(root.join(".ultra-edit/.gitignore")).unwrap();
    fs::remove_file(root.join(".ultra-edit/commit.lock")).unwrap();
    let out = cli(root, &["init"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for f in [".ultra-edit/.gitignore", ".ultra-edit/commit.lock"] {
        assert_eq!(owner(f), (4242, 4242), "{f}");
    }
    assert_eq!(
        fs::read(root.join(".ultra-edit/.gitignore")).unwrap(),
        b"*\n"
    );
    // A commit by root re-creates a missing lock file.
    fs::remove_file(root.join(".ultra-edit/commit.lock")).unwrap();
    let append =
        |text: &str| format!(r#"{{"edits":[{{"op":"append","path":"a.txt","text":"{text}\n"}}]}}"#);
    let out = cli(root, &["preview"], Some(&append("r")));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = cli(root, &["commit", "1"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        (
            owner(".ultra-edit/commit.lock"),
            owner(".ultra-edit/journal.redb"),
            owner("a.txt")
        ),
        ((4242, 4242), (4242, 4242), (4242, 4242))
    );
    // The user still works in their workspace.
    let out = user(&["preview"], &append("u"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = user(&["commit", "2"], "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(user(&["init"], "").status.code(), Some(0));
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a\nr\nu\n");
}

/// A user who may not enter another user's `.ultra-edit/` (0700) is told that the
/// journal exists and whose it is, not that the workspace is not initialized: with
/// `--root`, found from the current directory, and from `init` itself.
#[test]
fn a_journal_this_user_cannot_read_is_reported_as_unreadable_not_missing() {
    use std::os::unix::process::CommandExt;
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: the test makes a root-owned journal and drops to uid 4242");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    assert_eq!(cli(&root, &["init"], None).status.code(), Some(0));
    fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
    let before = fs::read(root.join(".ultra-edit/journal.redb")).unwrap();
    let state_dir = root.join(".ultra-edit");
    let want_msg = format!(
        "the ultra-edit journal in {} exists, but this user (uid 4242) cannot read it: the directory belongs to uid 0, group 0, mode 700; nothing was read or changed",
        state_dir.display()
    );
    let as_user = |with_root: bool, args: &[&str]| {
        let mut cmd = if with_root {
            ue_command(&root, args)
        } else {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ultra-edit"));
            c.args(args).current_dir(&root).env("PWD", &root);
            c
        };
        cmd.uid(4242).gid(4242);
        output_with_stdin(cmd, "")
    };
    for (with_root, args) in [
        (true, &["--json", "log"][..]),
        (false, &["--json", "log"][..]),
        (true, &["--json", "init"][..]),
    ] {
        let out = as_user(with_root, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let v = json_of(&out);
        assert_eq!(
            (
                v["error"]["kind"].as_str(),
                v["error"]["message"].as_str(),
                v["error"]["next_step"].clone(),
            ),
            (
                Some("journal_unreadable"),
                Some(want_msg.as_str()),
                serde_json::json!({"step": "run_as_journal_owner", "owner": 0})
            ),
            "{args:?} (--root: {with_root})"
        );
        let hint = v["error"]["hint"].as_str().unwrap();
        assert!(
            hint.starts_with("run the command as the journal's owner (uid 0"),
            "{hint}"
        );
    }
    // Nothing was changed by any of them.
    assert_eq!(
        fs::read(root.join(".ultra-edit/journal.redb")).unwrap(),
        before
    );
    assert_eq!(
        fs::metadata(&state_dir).unwrap().permissions().mode() & 0o7777,
        0o700
    );
}

/// The state directory and its files are never reached through a symbolic link (nor
/// the lock file through another hard link): a cloned repository can ship
/// `.ultra-edit/commit.lock -> ../../notes.txt` (git stores links), and a commit
/// truncates its lock file to write its pid. Refused before anything is written,
/// with what to remove (docs/threat-model.md, "The state directory").
#[test]
fn state_files_behind_links_are_refused_and_what_they_lead_to_is_untouched() {
    let outside = tempfile::tempdir().unwrap();
    let notes = outside.path().join("notes.txt");
    let lock_reason = "its commit.lock is not a regular file (a symbolic link, say, which a commit would truncate wherever it leads); remove it, a commit re-creates it";
    // A repository shipping a symlinked lock file: init refuses.
    let repo = tempfile::tempdir().unwrap();
    fs::write(&notes, b"my notes\n").unwrap();
    fs::create_dir(repo.path().join(".ultra-edit")).unwrap();
    std::os::unix::fs::symlink(&notes, repo.path().join(".ultra-edit/commit.lock")).unwrap();
    let out = cli(repo.path(), &["--json", "init"], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "invalid_state_dir");
    let dir = repo.path().canonicalize().unwrap().join(".ultra-edit");
    assert_eq!(
        v["error"]["message"],
        format!(
            "state directory {} cannot be used: {lock_reason}",
            dir.display()
        )
    );
    assert!(!dir.join("journal.redb").exists(), "nothing was created");

    // A workspace whose lock file became a link (or a hard link) after init: every
    // command refuses, the commit never truncates what the link leads to.
    let ws = workspace();
    ws.preview(r#"{"edits":[{"op":"delete_file","path":"run.sh"}]}"#);
    let lock = ws.path(".ultra-edit/commit.lock");
    fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(&notes, &lock).unwrap();
    for args in [&["--json", "commit", "1"][..], &["--json", "log"]] {
        let out = cli(ws.root(), args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert_eq!(
            json_of(&out)["error"]["kind"],
            "invalid_state_dir",
            "{args:?}"
        );
    }
    fs::remove_file(&lock).unwrap();
    fs::hard_link(&notes, &lock).unwrap();
    let out = cli(ws.root(), &["--json", "commit", "1"], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        json_of(&out)["error"]["message"],
        format!(
            "state directory {} cannot be used: its commit.lock has other hard links, and a commit truncates it (the links would lose their bytes too); remove it, a commit re-creates it",
            ws.path(".ultra-edit").display()
        )
    );
    assert_eq!(fs::read(&notes).unwrap(), b"my notes\n");
    assert!(ws.path("run.sh").exists(), "nothing was committed");
    // Removed, as the message says: the next commit re-creates it and lands.
    fs::remove_file(&lock).unwrap();
    assert_eq!(
        cli(ws.root(), &["commit", "1"], None).status.code(),
        Some(0)
    );
    assert!(!ws.path("run.sh").exists());

    // `.ultra-edit -> .`: init changes neither the root's .gitignore nor its mode.
    let repo2 = tempfile::tempdir().unwrap();
    fs::write(repo2.path().join(".gitignore"), b"target/\n").unwrap();
    fs::set_permissions(repo2.path(), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(".", repo2.path().join(".ultra-edit")).unwrap();
    let out = cli(repo2.path(), &["--json", "init"], None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(json_of(&out)["error"]["kind"], "invalid_state_dir");
    assert_eq!(
        fs::read(repo2.path().join(".gitignore")).unwrap(),
        b"target/\n"
    );
    assert_eq!(
        fs::metadata(repo2.path()).unwrap().permissions().mode() & 0o7777,
        0o755
    );
}

/// The journal an `init` cut by a power cut left behind (issue 29 item 2: 73,728 bytes,
/// the first ones zero, before redb wrote its magic number) is not taken for a damaged
/// journal with history: commands say it is half-made and name `init`, which moves it
/// aside (named, bytes kept) and makes a working journal.
#[test]
fn a_half_made_journal_is_moved_aside_by_init() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = run_ue(root, &["init"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let file = root.join(".ultra-edit/journal.redb");
    let mut half = vec![0u8; 73_728];
    half[4096] = 7; // something past the header: still no magic number
    std::fs::write(&file, &half).unwrap();
    let out = run_ue(root, &["--json", "log"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "half_made_journal");
    assert_eq!(v["error"]["next_step"], serde_json::json!({"step": "init"}));
    assert_eq!(std::fs::read(&file).unwrap(), half, "nothing was changed");
    let out = run_ue(root, &["init"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let aside = root.join(".ultra-edit/journal.redb.half-made");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "moved aside to {}",
            aside.canonicalize().unwrap().display()
        )),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("initialized "));
    assert_eq!(std::fs::read(&aside).unwrap(), half, "kept byte for byte");
    let out = run_ue(root, &["--json", "log"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["txs"], serde_json::json!([]));
    // A damaged journal (its first bytes are not zero) is never moved aside.
    let mut damaged = std::fs::read(&file).unwrap();
    damaged[0] ^= 0xff;
    std::fs::write(&file, &damaged).unwrap();
    let out = run_ue(root, &["init"], None);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read(&file).unwrap(), damaged);
    assert!(!root.join(".ultra-edit/journal.redb.half-made.1").exists());
}
