//! The pager runs only when standard output is a terminal (a pseudo-terminal here, from
//! util-linux `script`), for text output, without `--no-pager`; `$ULTRA_EDIT_PAGER`
//! wins over `$PAGER`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::*;

/// Why `script(1)` cannot give a pseudo-terminal here, if it cannot.
fn script_missing() -> Option<String> {
    match Command::new("script").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("script --version failed: {:?}", o.status)),
        Err(e) => Some(format!("script(1) is not installed: {e}")),
    }
}

/// A fake pager that records that it ran, with its input and `$LESS`, in `dir/<name>.*`.
fn fake_pager(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let log = dir.join(format!("{name}.log"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$LESS\" > '{log}.env'\ncat > '{log}'\n",
            log = log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `ultra-edit --root ROOT ARGS` inside a pseudo-terminal, with `env` set.
fn on_terminal(root: &Path, args: &str, env: &[(&str, &Path)]) -> Output {
    let bin = env!("CARGO_BIN_EXE_ultra-edit");
    let line = format!("'{bin}' --root '{}' {args}", root.display());
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .env_remove("ULTRA_EDIT_PAGER")
        .env_remove("PAGER")
        .env_remove("LESS")
        .env("NO_COLOR", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn with_tx() -> Ws {
    let ws = workspace();
    let out = cli(
        ws.root(),
        &["preview"],
        Some(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"a()","new":"aa()"}]}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    ws
}

#[test]
fn the_pager_gets_the_output_only_on_a_terminal() {
    if let Some(why) = script_missing() {
        println!("skipped: {why}");
        return;
    }
    let ws = with_tx();
    let tools = tempfile::tempdir().unwrap();
    let pager = fake_pager(tools.path(), "pager");
    let log = tools.path().join("pager.log");
    let plain = String::from_utf8(cli(ws.root(), &["show", "1"], None).stdout).unwrap();
    assert!(plain.starts_with("tx 1 revision 0"), "{plain}");

    // Off a terminal (a pipe): no pager, even when one is configured.
    let mut piped = ue_command(ws.root(), &["show", "1"]);
    piped.env("ULTRA_EDIT_PAGER", &pager).env("NO_COLOR", "1");
    let out = piped.output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), plain);
    assert!(!log.exists(), "paged off a terminal");

    // On a terminal, --no-pager and --json keep the pager out.
    let out = on_terminal(
        ws.root(),
        "show 1 --no-pager",
        &[("ULTRA_EDIT_PAGER", &pager)],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("+pub fn aa() -> u32 {"));
    let out = on_terminal(ws.root(), "--json show 1", &[("ULTRA_EDIT_PAGER", &pager)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!log.exists(), "paged with --no-pager or --json");

    // On a terminal: the pager gets exactly the text, with git's LESS default.
    let out = on_terminal(ws.root(), "show 1", &[("ULTRA_EDIT_PAGER", &pager)]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), plain);
    assert_eq!(
        std::fs::read_to_string(tools.path().join("pager.log.env")).unwrap(),
        "FRX\n"
    );
}

#[test]
fn ultra_edit_pager_wins_over_pager() {
    if let Some(why) = script_missing() {
        println!("skipped: {why}");
        return;
    }
    let ws = with_tx();
    let tools = tempfile::tempdir().unwrap();
    let ours = fake_pager(tools.path(), "ours");
    let theirs = fake_pager(tools.path(), "theirs");
    let out = on_terminal(
        ws.root(),
        "log",
        &[("ULTRA_EDIT_PAGER", &ours), ("PAGER", &theirs)],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(tools.path().join("ours.log").exists());
    assert!(!tools.path().join("theirs.log").exists());
    let out = on_terminal(ws.root(), "log", &[("PAGER", &theirs)]);
    assert!(out.status.success(), "{}", text(&out));
    let paged = std::fs::read_to_string(tools.path().join("theirs.log")).unwrap();
    assert!(paged.starts_with("tx 1 "), "{paged}");
    // On a terminal the log tells times relative to now.
    assert!(paged.contains(" seconds ago"), "{paged}");
    // A command that is not paged (abort) never starts it.
    std::fs::remove_file(tools.path().join("theirs.log")).unwrap();
    let out = on_terminal(ws.root(), "abort 1", &[("PAGER", &theirs)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!tools.path().join("theirs.log").exists());
}
