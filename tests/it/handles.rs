//! Transaction handles (src/handle.rs): a handle names its journal, round-trips as a
//! string, works in every verb, the CLI and JSON; another journal's handle is refused
//! with `ForeignHandle` and changes nothing; a copy of `.ultra-edit/` restored in place
//! keeps its handles, a copy under another root does not; a state directory outside
//! the root works like `.ultra-edit/` and refuses another root.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use ultra_edit::{Error, Journal, OpenOptions, TxHandle, TxRef, TxState};

use crate::support::{cli, json_of, plan, workspace, Ws};

fn replace(ws: &Ws, path: &str, content: &str) -> ultra_edit::Preview {
    ws.preview(&format!(
        r#"{{"edits":[{{"op":"replace_file","path":"{path}","content":{}}}]}}"#,
        serde_json::to_string(content).unwrap()
    ))
}

#[test]
fn a_handle_names_its_journal_and_every_verb_takes_it() {
    let ws = workspace();
    let p = replace(&ws, "src/b.rs", "pub fn b() {}\n");
    assert_eq!(p.handle.journal, ws.journal.id());
    assert_eq!(p.handle.tx, p.tx);
    assert_eq!(
        p.handle.to_string(),
        format!("{}-{}", ws.journal.id(), p.tx)
    );
    let parsed: TxHandle = p.handle.to_string().parse().unwrap();
    assert_eq!(parsed, p.handle);
    // show, revise, commit, rollback, tx and log by handle.
    assert_eq!(ws.journal.show(parsed, None).unwrap().tx, p.tx);
    let r = ws
        .journal
        .revise(
            parsed,
            Default::default(),
            &plan(r#"{"edits":[{"op":"append","path":"src/b.rs","text":"pub fn c() {}\n"}]}"#),
        )
        .unwrap();
    assert_eq!((r.handle, r.revision), (p.handle, 1));
    let receipt = ws.journal.commit(parsed, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\npub fn c() {}\n");
    let undo = ws.journal.rollback(parsed, Default::default()).unwrap();
    ws.journal.flush().unwrap();
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    assert_eq!(ws.journal.tx(parsed).unwrap().state, TxState::RolledBack);
    let log = ws.journal.log(Some(1)).unwrap();
    assert_eq!(log[0].handle, ws.journal.handle(undo.tx));
    assert_eq!(receipt.tx, p.tx);
    // The id is stable across reopening the same journal at the same root.
    let id = ws.journal.id();
    let again = Journal::open(ws.root()).unwrap();
    assert_eq!(again.id(), id);
    assert_eq!(again.copied_from(), None);
}

#[test]
fn another_journals_handle_is_refused_and_changes_nothing() {
    // Two roots, each with its own journal: both mint tx 1.
    let a = workspace();
    let b = workspace();
    let pa = replace(&a, "src/b.rs", "pub fn from_a() {}\n");
    let pb = replace(&b, "src/b.rs", "pub fn from_b() {}\n");
    assert_eq!((pa.tx, pb.tx), (1, 1));
    assert_ne!(a.journal.id(), b.journal.id());
    let before = (a.tree(), b.tree());
    // b's handle given to a: refused by every verb, nothing read or written.
    for result in [
        a.journal.commit(pb.handle, Default::default()).map(|_| ()),
        a.journal.show(pb.handle, None).map(|_| ()),
        a.journal.abort(pb.handle).map(|_| ()),
        a.journal
            .rollback(pb.handle, Default::default())
            .map(|_| ()),
        a.journal.rebase(pb.handle).map(|_| ()),
        a.journal.tx(pb.handle).map(|_| ()),
        a.journal
            .dump(ultra_edit::DumpFilter::new().with_tx(pb.handle), |_| {
                Ok(true)
            }),
    ] {
        match result {
            Err(Error::ForeignHandle {
                handle,
                journal,
                original_root,
            }) => {
                assert_eq!(handle, pb.handle);
                assert_eq!(journal, a.journal.id());
                assert_eq!(original_root, None);
            }
            other => panic!("expected ForeignHandle, got {other:?}"),
        }
    }
    let e = a.journal.commit(pb.handle, Default::default()).unwrap_err();
    assert_eq!(
        (e.kind(), e.exit_code(), e.tx()),
        ("foreign_handle", 1, None)
    );
    assert_eq!((a.tree(), b.tree()), before);
    assert_eq!(a.journal.tx(1).unwrap().state, TxState::Open);
    // Each handle commits in its own journal only.
    b.journal.commit(pb.handle, Default::default()).unwrap();
    b.journal.flush().unwrap();
    a.journal.commit(pa.handle, Default::default()).unwrap();
    a.journal.flush().unwrap();
    assert_eq!(a.read("src/b.rs"), b"pub fn from_a() {}\n");
    assert_eq!(b.read("src/b.rs"), b"pub fn from_b() {}\n");
}

#[test]
fn a_backup_restored_in_place_keeps_its_handles_and_a_copy_elsewhere_does_not() {
    let ws = workspace();
    let p = replace(&ws, "src/b.rs", "pub fn b() {}\n");
    let id = ws.journal.id();
    let backup = tempfile::tempdir().unwrap();
    crate::support::copy_dir(&ws.path(".ultra-edit"), backup.path());
    let Ws { dir, journal } = ws;
    drop(journal);

    // The whole tree, journal included, copied under another root: another history.
    let copy = tempfile::tempdir().unwrap();
    crate::support::copy_dir(dir.path(), copy.path());
    let c = Journal::open(copy.path()).unwrap();
    assert_ne!(c.id(), id);
    assert_eq!(
        c.copied_from(),
        Some(dir.path().canonicalize().unwrap().as_path())
    );
    match c.commit(p.handle, Default::default()) {
        Err(Error::ForeignHandle { original_root, .. }) => {
            assert_eq!(original_root, Some(dir.path().canonicalize().unwrap()));
        }
        other => panic!("expected ForeignHandle, got {other:?}"),
    }
    let msg = c
        .commit(p.handle, Default::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("this copy of it is another history"), "{msg}");
    assert_eq!(
        fs::read(copy.path().join("src/b.rs")).unwrap(),
        b"pub fn b() -> u32 {\n    2\n}\n"
    );
    // Its own handles work in the copy.
    c.commit(c.handle(p.tx), Default::default()).unwrap();
    c.flush().unwrap();
    assert_eq!(
        fs::read(copy.path().join("src/b.rs")).unwrap(),
        b"pub fn b() {}\n"
    );
    drop(c);

    // The backup restored in place: the same history, the same handles.
    fs::remove_dir_all(dir.path().join(".ultra-edit")).unwrap();
    fs::create_dir(dir.path().join(".ultra-edit")).unwrap();
    crate::support::copy_dir(backup.path(), &dir.path().join(".ultra-edit"));
    let j = Journal::open(dir.path()).unwrap();
    assert_eq!((j.id(), j.copied_from()), (id, None));
    j.commit(p.handle, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(
        fs::read(dir.path().join("src/b.rs")).unwrap(),
        b"pub fn b() {}\n"
    );
}

#[test]
fn the_cli_takes_handles_and_bare_numbers_and_refuses_a_foreign_handle() {
    let ws = workspace();
    let p = replace(&ws, "src/b.rs", "pub fn b() {}\n");
    let q = replace(&ws, "src/a.rs", "pub fn a() {}\n");
    let shown = json_of(&cli(
        ws.root(),
        &["--json", "show", &p.handle.to_string()],
        None,
    ));
    assert_eq!(shown["handle"], p.handle.to_string());
    assert_eq!(shown["tx"], p.tx);
    let foreign = format!("0123456789abcdef-{}", p.tx);
    let out = cli(ws.root(), &["--json", "commit", &foreign], None);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "foreign_handle", "{v}");
    assert_eq!(v["error"]["next_step"], json!({"step": "log"}), "{v}");
    assert_eq!(
        v["error"]["hint"],
        "run the command on the journal that made the handle (its --root, and --state-dir if it has one); `ultra-edit log --json` lists this journal's handles",
        "{v}"
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() -> u32 {\n    2\n}\n");
    let out = cli(ws.root(), &["commit", &p.handle.to_string()], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ws.read("src/b.rs"), b"pub fn b() {}\n");
    // A bare number still names a tx of the journal at hand.
    let out = cli(ws.root(), &["commit", &q.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ws.read("src/a.rs"), b"pub fn a() {}\n");
    assert_eq!(format!("{}", TxRef::from(q.handle)), q.handle.to_string());
}

#[test]
fn a_state_dir_outside_the_root_holds_the_journal_and_serves_one_root() {
    let root = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().join("m1nd/ultra-edit");
    fs::write(root.path().join("f.txt"), "old\n").unwrap();
    let opts = || OpenOptions::default().with_state_dir(dir.clone());
    let j = Journal::init_with(root.path(), opts()).unwrap();
    assert!(!root.path().join(".ultra-edit").exists());
    assert!(dir.join("journal.redb").is_file() && dir.join("commit.lock").is_file());
    assert_eq!(j.state_dir(), dir.canonicalize().unwrap());
    let p = j
        .preview(&plan(
            r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"new\n"}]}"#,
        ))
        .unwrap();
    drop(j);
    // Reopened from the state dir: the preview survived; the commit works as usual.
    let j = Journal::open_with(root.path(), opts()).unwrap();
    j.commit(p.handle, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(fs::read(root.path().join("f.txt")).unwrap(), b"new\n");
    // Without the option the root has no journal.
    assert!(matches!(
        Journal::open(root.path()),
        Err(Error::NotInitialized { .. })
    ));
    drop(j);
    // The same state dir for another root is refused, before anything is written.
    match Journal::open_with(other.path(), opts()) {
        Err(Error::StateDirOfOtherRoot {
            made_for, root: r, ..
        }) => {
            assert_eq!(made_for, root.path().canonicalize().unwrap());
            assert_eq!(r, other.path().canonicalize().unwrap());
        }
        Err(e) => panic!("expected StateDirOfOtherRoot, got {e:?}"),
        Ok(_) => panic!("expected StateDirOfOtherRoot, got a journal"),
    }
    // A state dir inside the root is refused: plans write there.
    let inside = OpenOptions::default().with_state_dir(root.path().join("state"));
    let e = Journal::init_with(root.path(), inside).err().unwrap();
    assert_eq!(e.kind(), "invalid_state_dir");
    assert!(!root.path().join("state").exists());
}

/// Found by the breaker: `--state-dir ..` from a repository's subdirectory was taken
/// as outside the root, and init replaced the repository's `.gitignore` with `*` and
/// made it 0700; any existing directory (`/tmp`, a project) was taken over the same
/// way. A state directory above the root, or one that already holds other files, is
/// refused before anything is written; `..` beside the root is fine.
#[test]
fn init_refuses_a_state_dir_above_the_root_or_holding_other_files() {
    use std::os::unix::fs::PermissionsExt;
    let base = tempfile::tempdir().unwrap();
    let repo = base.path().join("repo");
    let app = repo.join("app");
    fs::create_dir_all(&app).unwrap();
    fs::write(repo.join(".gitignore"), "target/\n").unwrap();
    fs::set_permissions(&repo, fs::Permissions::from_mode(0o755)).unwrap();
    let other = base.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("keep.txt"), "mine\n").unwrap();
    let init = |dir: PathBuf| Journal::init_with(&app, OpenOptions::default().with_state_dir(dir));
    let canonical = |p: &Path| p.canonicalize().unwrap();
    match init(app.join("..")) {
        Err(Error::InvalidStateDir { state_dir, reason }) => {
            assert_eq!(state_dir, canonical(&repo));
            assert_eq!(reason, "it holds the workspace root; put it beside the root, not above it (or use the root's own .ultra-edit/)");
        }
        other => panic!("{:?}", other.err()),
    }
    match init(other.clone()) {
        Err(Error::InvalidStateDir { state_dir, reason }) => {
            assert_eq!(state_dir, canonical(&other));
            assert_eq!(reason, "it already holds other files, and init would make it private (0700) and ignore everything in it for git; give a new or empty directory");
        }
        other => panic!("{:?}", other.err()),
    }
    assert_eq!(fs::read(repo.join(".gitignore")).unwrap(), b"target/\n");
    assert_eq!(
        fs::metadata(&repo).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(fs::read_dir(&other).unwrap().count(), 1);
    // Beside the root (through `..`), a new directory: fine, and again (idempotent).
    for _ in 0..2 {
        let j = init(app.join("../../state")).unwrap();
        assert_eq!(j.state_dir(), canonical(&base.path().join("state")));
    }
}

#[test]
fn the_lock_of_an_outside_state_dir_is_the_same_lock() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(root.path().join("f.txt"), "old\n").unwrap();
    let opts = OpenOptions::default()
        .with_state_dir(state.path().to_path_buf())
        .with_lock_timeout(std::time::Duration::from_millis(200));
    let j = Journal::init_with(root.path(), opts).unwrap();
    let p = j
        .preview(&plan(
            r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"new\n"}]}"#,
        ))
        .unwrap();
    // Someone holds the state dir's lock (as `flock DIR` would).
    let held = fs::File::open(state.path()).unwrap();
    fs2::FileExt::lock_exclusive(&held).unwrap();
    let e = j.commit(p.handle, Default::default()).unwrap_err();
    assert_eq!(e.kind(), "lock_timeout");
    assert_eq!(fs::read(root.path().join("f.txt")).unwrap(), b"old\n");
    fs2::FileExt::unlock(&held).unwrap();
    j.commit(p.handle, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(fs::read(root.path().join("f.txt")).unwrap(), b"new\n");
}

#[test]
fn the_cli_uses_an_embedders_state_dir_with_state_dir() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(root.path().join("f.txt"), "old\n").unwrap();
    let dir = state.path().join("ue");
    let sd = dir.to_str().unwrap();
    // The embedder's journal, made by the library.
    let j = Journal::init_with(
        root.path(),
        OpenOptions::default().with_state_dir(dir.clone()),
    )
    .unwrap();
    let p = j
        .preview(&plan(
            r#"{"agent":"m1nd","edits":[{"op":"write_file","path":"f.txt","content":"new\n"}]}"#,
        ))
        .unwrap();
    drop(j);
    // The CLI sees it with --state-dir, and commits it by handle.
    let log = json_of(&cli(
        root.path(),
        &["--json", "--state-dir", sd, "log"],
        None,
    ));
    assert_eq!(log["txs"][0]["handle"], p.handle.to_string(), "{log}");
    let out = cli(
        root.path(),
        &["--state-dir", sd, "commit", &p.handle.to_string()],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read(root.path().join("f.txt")).unwrap(), b"new\n");
    // Without it the root has no journal; the state dir of another root is refused.
    let out = cli(root.path(), &["--json", "log"], None);
    assert_eq!(json_of(&out)["error"]["kind"], "not_initialized");
    let other = tempfile::tempdir().unwrap();
    let out = cli(other.path(), &["--json", "--state-dir", sd, "log"], None);
    assert_eq!(json_of(&out)["error"]["kind"], "state_dir_of_other_root");
    // `init --state-dir` makes one for the CLI itself, outside the root.
    let out = cli(
        other.path(),
        &[
            "--json",
            "--state-dir",
            state.path().join("other").to_str().unwrap(),
            "init",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json_of(&out)["journal"],
        state
            .path()
            .join("other/journal.redb")
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
    );
    assert!(!other.path().join(".ultra-edit").exists());
}

#[test]
fn hints_under_a_state_dir_repeat_the_root_and_the_state_dir() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    fs::write(root.path().join("f.txt"), "old\n").unwrap();
    let dir = state.path().join("ue");
    let sd = dir.to_str().unwrap();
    let r = root.path().to_str().unwrap();
    // Before init: the error names the state directory, and the hint's command makes it.
    let out = cli(root.path(), &["--json", "--state-dir", sd, "log"], None);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "not_initialized", "{v}");
    assert_eq!(
        v["error"]["message"],
        format!("no ultra-edit journal in the state directory {sd} (for the root {r})"),
        "{v}"
    );
    assert_eq!(
        v["error"]["hint"],
        format!("run `ultra-edit --root {r} --state-dir {sd} init` to create it"),
        "{v}"
    );
    assert!(!dir.exists() && !root.path().join(".ultra-edit").exists());
    // After init, a stale commit's hint reaches the same journal.
    let out = cli(root.path(), &["--state-dir", sd, "init"], None);
    assert_eq!(out.status.code(), Some(0));
    let plan = r#"{"edits":[{"op":"write_file","path":"f.txt","content":"new\n"}]}"#;
    let out = cli(
        root.path(),
        &["--json", "--state-dir", sd, "preview"],
        Some(plan),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::write(root.path().join("f.txt"), "outside\n").unwrap();
    let out = cli(
        root.path(),
        &["--json", "--state-dir", sd, "commit", "1"],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    let v = json_of(&out);
    assert_eq!(
        v["error"]["hint"],
        format!("run `ultra-edit --root {r} --state-dir {sd} rebase 1` (a three-way merge onto the disk), or preview again"),
        "{v}"
    );
    assert_eq!(fs::read(root.path().join("f.txt")).unwrap(), b"outside\n");
}

/// Issue 29 item 5: `mv ws ws2` keeps the history's identity (the state directory is the
/// same directory: its device and inode, recorded in the journal, are unchanged), so
/// handles made before the move work after it, in the library and the CLI; a copy used
/// beside it is still another history (a new directory) and refuses them; moved back,
/// it is what it was.
#[test]
fn a_moved_workspace_keeps_its_handles_and_a_copy_beside_it_does_not() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let (ws, ws2, ws3) = (
        base_path.join("ws"),
        base_path.join("ws2"),
        base_path.join("ws3"),
    );
    fs::create_dir(&ws).unwrap();
    fs::write(ws.join("f.txt"), b"a\n").unwrap();
    fs::write(ws.join("g.txt"), b"g\n").unwrap();
    let j = Journal::init(&ws).unwrap();
    let id = j.id();
    let prev = |path: &str, content: &str| {
        j.preview(&plan(&format!(
            r#"{{"edits":[{{"op":"replace_file","path":"{path}","content":"{content}"}}]}}"#
        )))
        .unwrap()
    };
    let p = prev("f.txt", "moved\\n");
    let q = prev("g.txt", "by the cli\\n");
    drop(j);

    fs::rename(&ws, &ws2).unwrap();
    let j = Journal::open(&ws2).unwrap();
    assert_eq!(j.id(), id, "a move keeps the id");
    assert_eq!(j.copied_from(), None);
    assert_eq!(j.moved_from(), Some(ws.as_path()));
    assert_eq!(j.handle(p.tx), p.handle);
    j.commit(p.handle, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(fs::read(ws2.join("f.txt")).unwrap(), b"moved\n");
    drop(j);
    let out = cli(&ws2, &["--json", "commit", &q.handle.to_string()], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json_of(&out)["tx"], q.tx);
    assert_eq!(fs::read(ws2.join("g.txt")).unwrap(), b"by the cli\n");
    let out = cli(&ws2, &["--json", "log"], None);
    assert_eq!(
        json_of(&out)["txs"][0]["handle"],
        json!(q.handle.to_string()),
        "log prints the same handles"
    );

    // A copy beside it: another history; the moved original's handles are refused there.
    fs::create_dir(&ws3).unwrap();
    crate::support::copy_dir(&ws2, &ws3);
    let c = Journal::open(&ws3).unwrap();
    assert_ne!(c.id(), id);
    assert_eq!(c.copied_from(), Some(ws.as_path()));
    assert_eq!(c.moved_from(), None);
    assert!(matches!(
        c.rollback(p.handle, Default::default()),
        Err(Error::ForeignHandle { .. })
    ));
    drop(c);
    let out = cli(&ws3, &["--json", "rollback", &p.handle.to_string()], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["error"]["kind"], "foreign_handle");
    assert_eq!(fs::read(ws3.join("f.txt")).unwrap(), b"moved\n");

    // Moved back: as it was.
    fs::rename(&ws2, &ws).unwrap();
    let j = Journal::open(&ws).unwrap();
    assert_eq!((j.id(), j.copied_from(), j.moved_from()), (id, None, None));
    j.rollback(p.handle, Default::default()).unwrap();
    j.flush().unwrap();
    assert_eq!(fs::read(ws.join("f.txt")).unwrap(), b"a\n");
}
