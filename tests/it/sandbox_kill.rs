//! What outlives a command run on the overlay (docs/commands.md, "Safety"): nothing.
//! A SIGKILL of the CLI during the command or during the capture, and Ctrl-C (SIGINT
//! to the CLI's process group), leave the tree untouched, record nothing, and leave
//! no overlay residue after the next command; the command's background children,
//! `setsid` escapees included, end with it (its own PID namespace).

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ultra_edit::sandbox::RunOptions;

use crate::sandbox::available;
use crate::support::*;

/// A shell loop that writes the time to `file` every 50 ms, forever.
fn heartbeat(file: &Path) -> String {
    format!(
        "while :; do date +%s%N > {}; sleep 0.05; done",
        file.display()
    )
}

/// Wait (at most 30 s) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let started = Instant::now();
    while !cond() {
        assert!(started.elapsed() < Duration::from_secs(30), "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True when `file` stops changing: the same bytes before and after 500 ms (ten
/// heartbeats), read after a first 300 ms for the kill to land.
fn stopped(file: &Path) -> bool {
    std::thread::sleep(Duration::from_millis(300));
    let a = std::fs::read(file).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    a == std::fs::read(file).unwrap()
}

fn runs_dir(ws: &Ws) -> PathBuf {
    ws.root().join(".ultra-edit/sandbox")
}

fn residue(ws: &Ws) -> usize {
    std::fs::read_dir(runs_dir(ws)).map_or(0, |d| d.count())
}

/// The next command removes the residue; nothing was recorded.
fn next_command_cleans_up(ws: &Ws) {
    let out = cli(ws.root(), &["--json", "log"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(json_of(&out)["txs"], serde_json::json!([]));
    assert_eq!(residue(ws), 0, "removed by the next command");
}

#[test]
fn a_killed_cli_takes_the_commands_background_children_with_it() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let beat = outside.path().join("beat");
    let before = ws.tree();
    let command = format!("echo x > src/a.rs; ({}) & sleep 30", heartbeat(&beat));
    let mut child = ue_command(ws.root(), &["preview", "--run", &command])
        .current_dir(ws.root())
        .spawn()
        .unwrap();
    wait_for("the background child beats", || beat.exists());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        stopped(&beat),
        "the background child outlived the killed CLI"
    );
    assert_eq!(ws.tree(), before);
    assert_eq!(residue(&ws), 1, "the residue is there");
    next_command_cleans_up(&ws);
    assert_eq!(ws.tree(), before);
}

#[test]
fn background_jobs_and_setsid_escapees_end_with_the_command() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let (bg, escaped) = (outside.path().join("bg"), outside.path().join("escaped"));
    let command = format!(
        "({}) & setsid sh -c '{}' & while [ ! -e {} ] || [ ! -e {} ]; do sleep 0.02; done; echo x > new.txt",
        heartbeat(&bg),
        heartbeat(&escaped),
        bg.display(),
        escaped.display()
    );
    let p = ws
        .journal
        .preview_run(
            &RunOptions::new(command)
                .with_cwd(ws.root().to_path_buf())
                .with_timeout(Duration::from_secs(60)),
        )
        .unwrap();
    let paths: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["new.txt"]);
    assert!(stopped(&bg), "a background job outlived the command");
    assert!(stopped(&escaped), "a setsid escapee outlived the command");
    assert!(!ws.path("new.txt").exists());
}

#[test]
fn ctrl_c_stops_the_command_and_records_nothing() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let beat = outside.path().join("beat");
    let before = ws.tree();
    let command = format!(
        "echo x > src/a.rs; rm run.sh; ({}) & sleep 30",
        heartbeat(&beat)
    );
    // The CLI in a process group of its own, as a shell puts a foreground job; Ctrl-C
    // is SIGINT to that group.
    let child = ue_command(ws.root(), &["preview", "--run", &command])
        .current_dir(ws.root())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_for("the command wrote and its child beats", || beat.exists());
    let pgid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process_group(pgid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    // The CLI kills the command, removes its run directory, then exits 130 with the
    // typed error (found by the breaker: it died on the signal and left the directory
    // until the next command).
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "error: the command `{command}` was interrupted and killed; nothing was recorded"
        )),
        "{}",
        text(&out)
    );
    assert_eq!(
        residue(&ws),
        0,
        "the run directory is removed before the CLI exits"
    );
    assert!(stopped(&beat), "the command outlived Ctrl-C");
    assert_eq!(ws.tree(), before);
    next_command_cleans_up(&ws);
    assert_eq!(ws.tree(), before);
}

/// SIGTERM to the CLI alone (`kill PID`) during `preview --run`: the same as Ctrl-C —
/// the command stopped, nothing recorded, the run directory removed before it exits.
#[test]
fn sigterm_removes_the_run_directory_before_the_cli_exits() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let beat = outside.path().join("beat");
    let before = ws.tree();
    let command = format!("echo x > src/a.rs; ({}) & sleep 30", heartbeat(&beat));
    let child = ue_command(ws.root(), &["preview", "--run", &command])
        .current_dir(ws.root())
        .spawn()
        .unwrap();
    wait_for("the command's child beats", || beat.exists());
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_eq!(
        residue(&ws),
        0,
        "the run directory is removed before the CLI exits"
    );
    assert!(stopped(&beat), "the command outlived SIGTERM");
    assert_eq!(ws.tree(), before);
    assert!(ws.journal.log(None).unwrap().is_empty());
}

/// SIGKILL-like deaths (an abort at a failpoint) right after the command ran and
/// right after the upper directory was read: the tree untouched, nothing recorded,
/// the residue removed by the next command.
#[cfg(feature = "failpoints")]
#[test]
fn a_death_during_the_capture_leaves_the_tree_and_no_residue_after_the_next_command() {
    let ws = workspace();
    if !available(&ws) {
        return;
    }
    let before = ws.tree();
    for point in ["sandbox::after_command", "sandbox::after_scan"] {
        let out = ue_command(
            ws.root(),
            &[
                "preview",
                "--run",
                "echo x > src/a.rs; rm run.sh; echo n > new.txt",
            ],
        )
        .current_dir(ws.root())
        .env("FAILPOINTS", format!("{point}=return"))
        .output()
        .unwrap();
        assert_eq!(out.status.signal(), Some(6), "{point}: {}", text(&out));
        assert_eq!(ws.tree(), before, "{point}");
        assert_eq!(residue(&ws), 1, "{point}: the residue is there");
        next_command_cleans_up(&ws);
        assert_eq!(ws.tree(), before, "{point}");
    }
}
