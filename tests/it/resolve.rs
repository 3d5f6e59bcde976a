//! `resolve TX [PATH]`: a scripted `$EDITOR` edits the candidates; the saved files
//! become a new revision, or nothing is recorded (editor failed, nothing changed,
//! conflict markers left without --force).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::*;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A workspace with tx 1 at revision 1: a rebase that conflicts in f.txt.
fn conflicted() -> (Ws, String) {
    let ws = workspace();
    ws.write("f.txt", numbered(6).as_bytes());
    let p = ws.preview(r#"{"edits":[{"op":"replace_lines","path":"f.txt","start":3,"end":4,"content":"agent 3\nagent 4\n"}]}"#);
    ws.write(
        "f.txt",
        numbered(6).replace("line 4\n", "human 4\n").as_bytes(),
    );
    let out = cli(ws.root(), &["rebase", &p.tx.to_string()], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    (ws, p.tx.to_string())
}

const CONFLICTED: &str = "line 1\nline 2\n<<<<<<< candidate\nagent 3\nagent 4\n||||||| snapshot\nline 3\nline 4\n=======\nline 3\nhuman 4\n>>>>>>> disk\nline 5\nline 6\n";

/// An executable shell script `name` in `dir` with `body`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `ultra-edit resolve` with `VISUAL`/`EDITOR` set as given, and a private `TMPDIR`
/// removed afterwards, so that the copies a refused resolution keeps do not pile up in
/// the system's temp dir.
fn resolve(
    ws: &Ws,
    args: &[&str],
    visual: Option<&Path>,
    editor: Option<&Path>,
) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = ue_command(ws.root(), &[&["resolve"], args].concat());
    cmd.env_remove("VISUAL")
        .env_remove("EDITOR")
        .env("TMPDIR", tmp.path())
        .env("NO_COLOR", "1");
    if let Some(v) = visual {
        cmd.env("VISUAL", v);
    }
    if let Some(e) = editor {
        cmd.env("EDITOR", e);
    }
    cmd.output().unwrap()
}

fn latest_revision(ws: &Ws, tx: &str) -> u64 {
    let out = cli(ws.root(), &["--json", "show", tx], None);
    json_of(&out)["revision"].as_u64().unwrap()
}

#[test]
fn saved_resolution_becomes_a_revision_and_commits() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let seen = tools.path().join("seen");
    // The editor records what it was given (its path and bytes), then saves a resolution.
    let editor = script(
        tools.path(),
        "editor",
        &format!(
            "printf '%s\\n' \"$#\" \"$1\" > '{seen}.args'\ncp \"$1\" '{seen}'\nprintf 'line 1\\nline 2\\nagent 3\\nhuman 4\\nline 5\\nline 6\\n' > \"$1\"\n",
            seen = seen.display()
        ),
    );
    // $VISUAL wins over $EDITOR, as in git.
    let never = script(tools.path(), "never", "exit 9\n");
    let out = resolve(&ws, &["--json", &tx], Some(&editor), Some(&never));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), CONFLICTED);
    let args = std::fs::read_to_string(seen.with_extension("args")).unwrap();
    let mut args = args.lines();
    assert_eq!(args.next(), Some("1"));
    assert!(args.next().unwrap().ends_with("/f.txt"), "{args:?}");
    let v = json_of(&out);
    assert_eq!(v["revision"], 2);
    assert_eq!(v["base"], 1);
    assert_eq!(v["ready_to_commit"], true);
    assert_eq!(v["conflict_list"], serde_json::json!([]));
    assert!(cli(ws.root(), &["commit", &tx], None).status.success());
    assert_eq!(
        String::from_utf8(ws.read("f.txt")).unwrap(),
        "line 1\nline 2\nagent 3\nhuman 4\nline 5\nline 6\n"
    );
}

#[test]
fn nothing_is_recorded_when_the_editor_fails_or_changes_nothing() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let failing = script(tools.path(), "failing", "printf 'x\\n' > \"$1\"\nexit 3\n");
    let out = resolve(&ws, &["--json", &tx], None, Some(&failing));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "editor_failed");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        "{v}"
    );
    let unchanged = script(tools.path(), "unchanged", "exit 0\n");
    let out = resolve(&ws, &["--json", &tx], None, Some(&unchanged));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(json_of(&out)["error"]["kind"], "nothing_resolved");
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
}

#[test]
fn markers_left_are_refused_unless_forced() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    // Changes a line but keeps the markers.
    let partial = script(
        tools.path(),
        "partial",
        "sed -i 's/agent 3/agent three/' \"$1\"\n",
    );
    let out = resolve(&ws, &["--json", &tx], None, Some(&partial));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "markers_remain");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("f.txt (line 3, 6, 9, 12)"),
        "{v}"
    );
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
    // Forced: recorded, and the revision fails validation as any with markers does.
    let out = resolve(
        &ws,
        &["--json", "--force", &tx, "f.txt"],
        None,
        Some(&partial),
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["revision"], 2);
    assert_eq!(v["ready_to_commit"], false);
    let codes: Vec<&str> = v["validation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["conflict_markers"]);
}

#[test]
fn a_path_outside_the_revision_is_refused() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let never = script(tools.path(), "never", "exit 9\n");
    let out = resolve(&ws, &["--json", &tx, "src/a.rs"], None, Some(&never));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "not_in_revision");
    assert_eq!(v["tx"], 1);
}

/// `resolve` with a private `TMPDIR`, so the test sees the editing directory it makes.
fn resolve_in(ws: &Ws, tmp: &Path, args: &[&str], editor: &Path) -> std::process::Output {
    let mut cmd = ue_command(ws.root(), &[&["resolve"], args].concat());
    cmd.env_remove("VISUAL")
        .env("EDITOR", editor)
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1");
    cmd.output().unwrap()
}

/// The editing directories left in `tmp`.
fn kept_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("ultra-edit-resolve-")
        })
        .collect()
}

#[test]
fn edits_that_are_not_recorded_are_kept_and_reopened_with_from() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // A first session: one side chosen on line 3, the markers left in.
    let partial = script(
        tools.path(),
        "partial",
        "sed -i 's/agent 3/agent three/' \"$1\"\n",
    );
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &partial);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let kept = kept_dirs(tmp.path());
    assert_eq!(kept.len(), 1, "the edited copies are kept");
    let dir = &kept[0];
    let copy = dir.join("f.txt");
    let edited = CONFLICTED.replace("agent 3", "agent three");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), edited);
    let note = format!(
        "your edited files are kept in {}; `ultra-edit resolve {tx} --from {}` opens them again",
        dir.display(),
        dir.display()
    );
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "markers_remain");
    assert_eq!(v["error"]["notes"], serde_json::json!([note]));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("note: {note}\n")),
        "{}",
        text(&out)
    );
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
    // The second session starts from the first one's work: it sees "agent three" and
    // keeps the candidate side around it.
    let finish = script(
        tools.path(),
        "finish",
        "grep -q 'agent three' \"$1\" || exit 7\nprintf 'line 1\\nline 2\\nagent three\\nagent 4\\nline 5\\nline 6\\n' > \"$1\"\n",
    );
    let dir_arg = dir.to_str().unwrap();
    let out = resolve_in(
        &ws,
        tmp.path(),
        &["--json", &tx, "--from", dir_arg],
        &finish,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["revision"], 2);
    assert!(!dir.exists(), "removed once recorded");
    assert!(kept_dirs(tmp.path()).is_empty());
    let shown = cli(ws.root(), &["--json", "show", &tx], None);
    assert_eq!(json_of(&shown)["revision"], 2);
}

#[test]
fn a_session_that_changed_nothing_or_failed_before_editing_leaves_no_directory() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let unchanged = script(tools.path(), "unchanged", "exit 0\n");
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &unchanged);
    assert_eq!(json_of(&out)["error"]["kind"], "nothing_resolved");
    assert_eq!(json_of(&out)["error"].get("notes"), None);
    let failing = script(tools.path(), "failing", "exit 3\n");
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &failing);
    assert_eq!(json_of(&out)["error"]["kind"], "editor_failed");
    assert!(kept_dirs(tmp.path()).is_empty());
    // An editor that saved a change and then failed (vi's `:cq`): the change is kept.
    let saved_then_failed = script(tools.path(), "cq", "printf 'x\\n' > \"$1\"\nexit 1\n");
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &saved_then_failed);
    assert_eq!(json_of(&out)["error"]["kind"], "editor_failed");
    let kept = kept_dirs(tmp.path());
    assert_eq!(kept.len(), 1);
    assert_eq!(std::fs::read(kept[0].join("f.txt")).unwrap(), b"x\n");
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
}

#[test]
fn from_refuses_a_directory_that_is_not_a_kept_one_or_is_of_an_older_revision() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let never = script(tools.path(), "never", "exit 9\n");
    let stranger = tempfile::tempdir().unwrap();
    let out = resolve_in(
        &ws,
        tmp.path(),
        &["--json", &tx, "--from", stranger.path().to_str().unwrap()],
        &never,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "kept_copies_unusable");
    assert_eq!(
        v["error"]["message"],
        format!(
            "tx {tx}: {} is not a directory kept by `ultra-edit resolve` (it has no .ultra-edit/resolve); nothing was recorded",
            stranger.path().display()
        )
    );
    // Kept from revision 1; then revision 2 is recorded another way: the copies are
    // not recorded over it.
    let partial = script(
        tools.path(),
        "partial",
        "sed -i 's/agent 3/agent three/' \"$1\"\n",
    );
    resolve_in(&ws, tmp.path(), &[&tx], &partial);
    let kept = kept_dirs(tmp.path());
    assert_eq!(kept.len(), 1);
    let fixed = script(tools.path(), "fixed", "printf 'line 1\\n' > \"$1\"\n");
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &fixed);
    assert_eq!(json_of(&out)["revision"], 2, "{}", text(&out));
    let out = resolve_in(
        &ws,
        tmp.path(),
        &["--json", &tx, "--from", kept[0].to_str().unwrap()],
        &never,
    );
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "kept_copies_unusable");
    assert_eq!(
        v["error"]["message"],
        format!(
            "tx {tx}: {} holds copies of revision 1, but the latest is revision 2: copy what you need from it and run `ultra-edit resolve {tx}` again; nothing was recorded",
            kept[0].display()
        )
    );
    assert_eq!(latest_revision(&ws, &tx), 2);
    assert!(kept[0].exists(), "a refused --from directory is left alone");
}

#[test]
fn a_copy_the_editor_replaced_with_a_symlink_is_not_followed() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let secret = tools.path().join("secret");
    std::fs::write(&secret, b"not for the journal\n").unwrap();
    let linker = script(
        tools.path(),
        "linker",
        &format!("ln -sf {} \"$1\"\n", secret.display()),
    );
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &linker);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "editor_failed");
    let kept = kept_dirs(tmp.path());
    assert_eq!(
        kept.len(),
        1,
        "the session is kept like any unrecorded edit"
    );
    assert_eq!(
        v["error"]["message"],
        format!(
            "the editor `{}` left {} as something other than a regular file (a symlink?); resolve records only the files it saved; nothing was recorded",
            linker.display(),
            kept[0].join("f.txt").display()
        )
    );
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
}

/// An editor that deletes its copy does not record a deletion (resolve records saved
/// files): a typed `editor_failed` that says how to delete the file, the session kept,
/// nothing recorded.
#[test]
fn a_copy_the_editor_deleted_is_refused_with_how_to_delete_the_file() {
    let (ws, tx) = conflicted();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let remover = script(tools.path(), "remover", "rm \"$1\"\n");
    let out = resolve_in(&ws, tmp.path(), &["--json", &tx], &remover);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "editor_failed");
    let kept = kept_dirs(tmp.path());
    assert_eq!(
        kept.len(),
        1,
        "the session is kept like any unrecorded edit"
    );
    assert_eq!(
        v["error"]["message"],
        format!(
            "the editor `{}` removed {}; resolve records the files the editor saves, never a deletion: save the file again, and to delete it, `ultra-edit revise 1` with a `delete_file` edit once the rest is resolved; nothing was recorded",
            remover.display(),
            kept[0].join("f.txt").display()
        )
    );
    assert_eq!(latest_revision(&ws, &tx), 1, "nothing recorded");
}

/// Without `$VISUAL`/`$EDITOR` and without a terminal (a script, an agent), `vi` is not
/// started (it would print escape codes and fail, or wait): refused before anything
/// is copied, naming what to set.
#[test]
fn without_an_editor_and_a_terminal_vi_is_not_started() {
    let (ws, tx) = conflicted();
    let tmp = tempfile::tempdir().unwrap();
    let out = resolve_in_without_editor(&ws, tmp.path(), &["--json", &tx]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(v["error"]["kind"], "editor_failed");
    assert_eq!(
        v["error"]["message"],
        "the editor `vi` was not started: $VISUAL and $EDITOR are unset and this is not a terminal; set EDITOR to an editor that waits for its window to close (EDITOR='code --wait'), or change the candidate with `ultra-edit revise` and a plan; nothing was recorded"
    );
    assert!(kept_dirs(tmp.path()).is_empty(), "nothing was copied");
    assert_eq!(latest_revision(&ws, &tx), 1);
}

fn resolve_in_without_editor(ws: &Ws, tmp: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = ue_command(ws.root(), &[&["resolve"], args].concat());
    cmd.env_remove("VISUAL")
        .env_remove("EDITOR")
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1");
    cmd.output().unwrap()
}

/// A file changed by the candidate and deleted on disk conflicts as a whole (no
/// markers): the message says the candidate is one side's whole file, and saving it
/// unchanged in `resolve` keeps it (recorded), after which it commits.
#[test]
fn saving_a_whole_file_conflict_unchanged_keeps_the_candidate() {
    let ws = workspace();
    ws.write("keep.md", b"notes\n");
    let p = ws.preview(r#"{"edits":[{"op":"append","path":"keep.md","text":"more\n"}]}"#);
    let tx = p.tx.to_string();
    std::fs::remove_file(ws.path("keep.md")).unwrap();
    let out = cli(ws.root(), &["--json", "rebase", &tx], None);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let v = json_of(&out);
    let issue = &v["validation"][0];
    assert_eq!(issue["code"], "merge_conflict");
    let message = issue["message"].as_str().unwrap();
    assert!(
        message.ends_with("; resolve it in an editor with `resolve` or with a `revise` plan (the candidate is one side's version of the whole file, without markers: saving it unchanged in `resolve` keeps it), or abort and preview again"),
        "{message}"
    );
    let tools = tempfile::tempdir().unwrap();
    let save_as_is = script(tools.path(), "save", "exit 0\n");
    let out = resolve(&ws, &["--json", &tx], None, Some(&save_as_is));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json_of(&out);
    assert_eq!(
        (v["revision"].clone(), v["ready_to_commit"].clone()),
        (2.into(), true.into())
    );
    assert_eq!(
        cli(ws.root(), &["commit", &tx], None).status.code(),
        Some(0)
    );
    assert_eq!(ws.read("keep.md"), b"notes\nmore\n");
}
