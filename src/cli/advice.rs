//! The CLI's words for the library's next steps ([`NextStep`]): a command to run.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use ultra_edit::{Attention, Error, NextStep, PathError, StateReason};

/// Where the paths of a failed command came from: what a refused path's hint tells
/// the user to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathOrigin {
    /// An edit plan (`preview`, `revise`, `resolve`, ...): fix the plan.
    #[default]
    Plan,
    /// A command run on the overlay (`preview --run`, `revise --run`, `run`): it
    /// wrote the path; change the command.
    Command,
    /// A revert: the reverted transactions wrote the path, and the disk holds
    /// something else there now.
    Revert,
}

/// What to run next, as the CLI says it, for an error of a plan's command; `None`
/// where the message already says it ([`hint_for`] with [`PathOrigin::Plan`]).
#[cfg(test)]
pub fn hint(e: &Error) -> Option<String> {
    hint_for(e, PathOrigin::Plan)
}

/// What to run next, as the CLI says it; `None` where the message already says it. A
/// refused path's hint says what to fix where the path came from (`origin`).
pub fn hint_for(e: &Error, origin: PathOrigin) -> Option<String> {
    if let Error::Path(p) = e {
        if origin != PathOrigin::Plan {
            return Some(path_hint_elsewhere(p, origin));
        }
    }
    if let Some(h) = refusal_hint(e) {
        return Some(h);
    }
    let step = e.next_step()?;
    let command = command(&step).unwrap_or_default();
    Some(match step {
        NextStep::Init => match e {
            Error::NotInitialized {
                state_dir: Some(_), ..
            } => "run `ultra-edit init` to create it".into(),
            Error::NotInitialized { root, .. } if root.exists() && !root.is_dir() => format!(
                "{} is a file, not a directory: give --root the workspace's root directory",
                super::commands::shell_word(root)
            ),
            Error::NotInitialized {
                searched_up: false, ..
            } => "run `ultra-edit init` there, or give --root the directory that holds .ultra-edit/".into(),
            _ => "run `ultra-edit init` in the workspace's root directory, or pass --root DIR".into(),
        },
        NextStep::Log => match e {
            Error::ForeignHandle {
                original_root: Some(root),
                ..
            } => format!(
                "this journal is a copy of the one made at {} (a move to another filesystem copies it too, and cannot be told apart): if the original is still there, run the command there; here the same transactions have this journal's handles (the same tx numbers), which `ultra-edit log --json` lists",
                root.display()
            ),
            Error::ForeignHandle { .. } => "run the command on the journal that made the handle (its --root, and --state-dir if it has one); `ultra-edit log --json` lists this journal's handles".into(),
            _ => "`ultra-edit log` lists the transactions".into(),
        },
        NextStep::Show { .. } => match e {
            Error::WrongState {
                reason: StateReason::Committed { .. } | StateReason::OtherRevisionCommitted { .. },
                ..
            } => format!("`{command}` shows what landed; a further change is a new preview"),
            _ => format!("`{command}` shows it"),
        },
        NextStep::Rebase { .. } => {
            format!("run `{command}` (a three-way merge onto the disk), or preview again")
        }
        NextStep::ReviseOnLatest { tx, latest } => format!(
            "write the plan against revision {latest} (`ultra-edit show {tx}`), or pass --rebase to merge it onto revision {latest}"
        ),
        NextStep::Revise { .. } => format!("fix it with `{command}`"),
        NextStep::Resolve { tx } => format!(
            "run `ultra-edit resolve {tx}` to fix the conflicts in your editor (or `ultra-edit revise {tx}` with a plan)"
        ),
        NextStep::Commit { tx } => match e {
            // Rolling back an open tx: to undo a preview is to abort it.
            Error::WrongState {
                reason: StateReason::NotCommitted,
                ..
            } => format!(
                "commit it first (`ultra-edit commit {tx}`), or drop the preview with `ultra-edit abort {tx}`"
            ),
            _ => format!("run `{command}`"),
        },
        NextStep::Abort { .. } => format!(
            "there is nothing to commit (the files hold its candidate already): drop it with `{command}`, or revise it with a new plan"
        ),
        NextStep::RollBack { .. } => format!("`{command}` restores the files"),
        NextStep::Redo { .. } => format!("`{command}` redoes it"),
        NextStep::NothingToRedo { tx, by } => format!(
            "nothing redoes it now: tx {by}'s change is undone already, so the files tx {by} restored hold tx {tx}'s change again (`ultra-edit log` lists the transactions)"
        ),
        NextStep::ForceRollBack { tx } => {
            let revert = format!(
                "run `ultra-edit revert {tx}` to undo only tx {tx}'s change and keep what was written since, or "
            );
            match e {
                Error::StaleRollback { paths, absent, .. } if absent.len() == paths.len() => {
                    format!(
                        "{revert}`{command}` to re-create {}",
                        if absent.len() == 1 { "it" } else { "them" }
                    )
                }
                _ => match e.paths().len() {
                    1 => format!(
                        "{revert}`{command}` to overwrite it (its current bytes are kept in the journal first)"
                    ),
                    _ => format!(
                        "{revert}`{command}` to overwrite them (their current bytes are kept in the journal first)"
                    ),
                },
            }
        }
        NextStep::RollBackLaterFirst { later, tx } => {
            let revert = format!(
                "; `ultra-edit revert {tx}` undoes only tx {tx}'s change and keeps the later ones"
            );
            match e {
                // Several later txs: each is rolled back, newest first, before this one.
                Error::StaleRollback { changed_by, .. } if changed_by.len() > 1 => {
                    let rest: Vec<String> = changed_by
                        .iter()
                        .rev()
                        .skip(1)
                        .map(|t| format!("tx {t}"))
                        .collect();
                    let all: Vec<String> = changed_by.iter().map(u64::to_string).collect();
                    format!(
                        "roll back the later changes first, newest first (`{command}`, then {}), then tx {tx}; `ultra-edit rollback {tx} --force` would overwrite the file(s) instead, undoing the changes of txs {} there too (their current bytes are kept in the journal first){revert}",
                        rest.join(", then "),
                        all.join(", ")
                    )
                }
                _ => format!(
                    "roll back the later change first (`{command}`), then tx {tx}; `ultra-edit rollback {tx} --force` would overwrite the file(s) instead, undoing tx {later}'s change there too (their current bytes are kept in the journal first){revert}"
                ),
            }
        }
        NextStep::RollBackAgain { .. } => format!("run `{command}` again"),
        NextStep::PreviewAgain => "preview again (`ultra-edit preview --plan FILE`)".into(),
        NextStep::History { tx } => format!(
            "`ultra-edit log` and `ultra-edit journal dump --tx {tx}` still show its history"
        ),
        NextStep::Recover => match e {
            Error::NeedsAttention {
                attention: Attention::CommitPointUnknown { .. },
                ..
            } => "the next command (or `ultra-edit recover`) runs recovery, which completes the batch if its commit point reached the disk and reverts it otherwise; `ultra-edit log` then shows which".into(),
            Error::NeedsAttention {
                attention: Attention::RevertIncomplete { .. },
                ..
            } => "the next command (or `ultra-edit recover`) runs recovery, which finishes the revert; then commit again".into(),
            Error::NeedsAttention { .. } => "the next command (or `ultra-edit recover`) runs recovery, which completes the batch".into(),
            _ => "`ultra-edit recover` settles it (so does the next command, once the batch's process is gone)".into(),
        },
        NextStep::RecoverForeign => "put the file(s) back and run `ultra-edit recover`, or run `ultra-edit recover --overwrite` to overwrite them (their bytes are kept in the journal)".into(),
        NextStep::DecideByHand { tx, batch } => format!(
            "this needs a person: decide what the file(s) should hold. To keep the later commit's content, copy the file(s) aside first; to give them batch {batch}'s content, move them aside (or put back the bytes the batch found, which `ultra-edit journal dump --tx {tx}` lists) and run `ultra-edit recover --overwrite`"
        ),
        NextStep::Retry => match e.tx() {
            Some(tx) => format!(
                "run the command again (`{}`); `ultra-edit show {tx}` tells the tx's state",
                rerun()
            ),
            None => format!("run the command again (`{}`)", rerun()),
        },
        NextStep::WaitForLock => "retry later or raise --lock-timeout".into(),
        NextStep::AllowOwnerChange { .. } => "run it as the files' owner or as root, or run the same command again with --allow-owner-change to accept the change (the files then belong to this user)".into(),
        NextStep::RemountWritable => "remount the filesystem read-write (e.g. `mount -o remount,rw MOUNTPOINT`) and run the command again; `ultra-edit log`, `show` and `journal dump/verify/stats` work as it is".into(),
        NextStep::RunAsJournalOwner { owner } => format!(
            "run the command as the journal's owner (uid {owner}, e.g. `sudo -u '#{owner}' ultra-edit ...`), or have them (or root) give this user read, write and search access to the directory; `ultra-edit init` cannot help, the journal is already there"
        ),
        NextStep::RecoverAsOwner { uid } => format!(
            "run `ultra-edit recover` as root (e.g. `sudo ultra-edit recover`) or as the files' owner (uid {uid}); until then the batch stays in flight, and `ultra-edit log`, `show` and `journal dump` work"
        ),
        NextStep::MountWithAcls => "mount the filesystem with ACL support (e.g. `mount -o remount,acl MOUNTPOINT`) and run the command again, or remove the ACL (`setfacl -b FILE`) and preview again".into(),
        _ => return None,
    })
}

/// The command line of a next step that is one command, as a script runs it:
/// `ultra-edit rollback 3 --force` for [`NextStep::ForceRollBack`] (the library's
/// name of the step is not the CLI's command). `None` for a step that needs more than
/// a command (a new plan, a person, a remount).
pub fn command(step: &NextStep) -> Option<String> {
    Some(match step {
        NextStep::Init => "ultra-edit init".into(),
        NextStep::Log => "ultra-edit log".into(),
        NextStep::Show { tx } => format!("ultra-edit show {tx}"),
        NextStep::Rebase { tx } => format!("ultra-edit rebase {tx}"),
        NextStep::Revise { tx } => format!("ultra-edit revise {tx}"),
        NextStep::NothingToRedo { .. } => "ultra-edit log".into(),
        NextStep::Resolve { tx } => format!("ultra-edit resolve {tx}"),
        NextStep::Commit { tx } => format!("ultra-edit commit {tx}"),
        NextStep::Abort { tx } => format!("ultra-edit abort {tx}"),
        NextStep::RollBack { tx } => format!("ultra-edit rollback {tx}"),
        NextStep::Redo { by } => format!("ultra-edit rollback {by}"),
        NextStep::ForceRollBack { tx } => format!("ultra-edit rollback {tx} --force"),
        NextStep::RollBackLaterFirst { later, .. } => format!("ultra-edit rollback {later}"),
        NextStep::RollBackAgain { of } => format!("ultra-edit rollback {of}"),
        NextStep::History { tx } => format!("ultra-edit journal dump --tx {tx}"),
        NextStep::Recover => "ultra-edit recover".into(),
        _ => return None,
    })
}

/// The command line of a next step for this process: [`command`], and for
/// [`NextStep::Retry`] this process's own command line ([`rerun`]), which runs as it
/// did. `None` for a step that needs more than a command.
pub fn command_for(step: &NextStep) -> Option<String> {
    match step {
        NextStep::Retry | NextStep::WaitForLock => Some(rerun()),
        NextStep::AllowOwnerChange { .. } => Some(format!("{} --allow-owner-change", rerun())),
        _ => command(step),
    }
}

/// This process's command line as one a shell runs again: `ultra-edit` and each
/// argument as a shell word ([`super::commands::shell_word`]).
pub fn rerun() -> String {
    rerun_of(std::env::args_os().skip(1))
}

fn rerun_of(args: impl Iterator<Item = std::ffi::OsString>) -> String {
    std::iter::once("ultra-edit".to_string())
        .chain(args.map(|a| super::commands::shell_word(Path::new(&a))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The hint of an error that has no next step in the library but a fix the CLI can
/// name: a `--plan` file it could not read.
fn refusal_hint(e: &Error) -> Option<String> {
    use ultra_edit::SandboxError;
    match e {
        Error::Sandbox(SandboxError::CommandFailed { .. }) => Some(
            "fix the command, or pass --keep-on-failure to record what it wrote anyway".into(),
        ),
        Error::Sandbox(SandboxError::TimedOut { .. }) => {
            Some("pass a longer --timeout SECS (default 600)".into())
        }
        Error::Sandbox(SandboxError::EmptyCommand { what })
            if what == ultra_edit::sandbox::EMPTY_COMMAND =>
        {
            Some("give the command line as one quoted argument, e.g. `ultra-edit run -- 'cargo fmt'` or `ultra-edit preview --run 'cargo fmt'`".into())
        }
        Error::Sandbox(SandboxError::EmptyCommand { .. }) => Some(
            "give the command as one quoted argument, e.g. --check 'cargo check --offline' or `ultra-edit config check 'cargo check --offline'`; --no-check runs no check".into(),
        ),
        Error::Sandbox(SandboxError::OutOfScope { .. }) => Some(
            "without --strict those writes are dropped with a warning; or change the command".into(),
        ),
        Error::Sandbox(SandboxError::NothingChanged { dropped_ignored, .. })
            if *dropped_ignored > 0 =>
        {
            Some("pass --include-ignored to keep the paths the ignore rules dropped".into())
        }
        Error::Sandbox(SandboxError::NothingChanged { .. }) => Some(
            "a transaction keeps the files a command writes under the workspace root: check that the command writes files there (writes outside the root are neither captured nor prevented, and a directory alone is not kept)".into(),
        ),
        Error::Io(io) if io.op == "open workspace root" => Some(match io.source.kind() {
            std::io::ErrorKind::NotFound => format!(
                "there is no directory {}: give --root the workspace's root directory",
                super::commands::shell_word(&io.path)
            ),
            std::io::ErrorKind::NotADirectory => format!(
                "{} is not a directory: give --root the workspace's root directory",
                super::commands::shell_word(&io.path)
            ),
            _ => return None,
        }),
        Error::Io(io) if io.op == super::commands::READ_PLAN => {
            let stdin = "or `--plan -` to read the plan from standard input";
            Some(match io.source.kind() {
                std::io::ErrorKind::NotFound if io.path.is_relative() => {
                    let cwd = super::commands::current_dir()
                        .map(|d| format!(" {}", d.display()))
                        .unwrap_or_default();
                    format!(
                        "there is no {} in the current directory{cwd} (a relative --plan path is read from there, not from the workspace root): give --plan the plan file's path, {stdin}",
                        io.path.display()
                    )
                }
                _ => format!("give --plan the path of a readable plan file, {stdin}"),
            })
        }
        Error::Path(p) => path_hint(p),
        // A full disk (or quota) while a commit or rollback wrote a file: nothing
        // changed (the batch was reverted), and the same command works once there is
        // room for the temps, each a whole file beside its target (found by the
        // breaker: the error said what failed, not what to do).
        Error::CommitFailed { cause, .. }
            if matches!(cause.source.raw_os_error(), Some(28 | 122)) =>
        {
            let dir = cause.path.parent().unwrap_or(&cause.path);
            let dir = super::commands::shell_word(dir);
            Some(format!(
                "the filesystem of {dir} is full: free space there (`df -h {dir}` shows it; a commit writes each changed file whole, as a temp beside it, before its rename), then run the command again (`{}`)",
                rerun()
            ))
        }
        Error::InvalidPolicy { .. } => Some(
            "`ultra-edit journal gc --keep-last 100 --dry-run` lists what keeping the 100 newest transactions would prune, and changes nothing".into(),
        ),
        Error::NothingToChange { .. } => Some(
            "check that each edit changes its file (a `new` equal to its `old`, or a file written with the content it has, changes nothing); a plan with \"policy\": {\"identical_content\": \"allow\"} is recorded anyway".into(),
        ),
        _ => None,
    }
}

/// What to do about a path refused in a command run on the overlay or in a revert,
/// where there is no plan to fix: what wrote it, and what to change.
fn path_hint_elsewhere(p: &PathError, origin: PathOrigin) -> String {
    let word = |s: &str| super::commands::shell_word(Path::new(s));
    let fix = match origin {
        PathOrigin::Command => "the command wrote that path: change the command so that it does not (or make that change outside ultra-edit), and run it again",
        _ => "a reverted transaction wrote that path, and the disk holds something else there now: put a regular file back there (or remove what is there) outside ultra-edit and revert again, or revert without that transaction",
    };
    match p {
        PathError::IsSymlink { path } => {
            format!("{} is a symbolic link, and a transaction writes regular files only: {fix}", word(path))
        }
        PathError::SymlinkInPath { link, .. } => format!(
            "{} is a symbolic link, and a transaction does not write through links: {fix}",
            word(link)
        ),
        PathError::TempName { .. } => format!(
            "names of the form .ue-*.tmp are ultra-edit's temp files: {fix}"
        ),
        PathError::SetId { path, .. } => format!(
            "clear those bits first if the file should not have them (`chmod ug-s,o-t {}`), or {fix}",
            word(path)
        ),
        PathError::HardLinked { path, .. } => format!(
            "a commit renames a new file over the old one, which would leave the other links with the old bytes: give the file its own inode first (`cp -p {0} {0}.copy && mv {0}.copy {0}`), or {fix}",
            word(path)
        ),
        PathError::WrongKind { .. } => {
            format!("every directory above a file a transaction writes must be a directory: {fix}")
        }
        _ => fix.to_string(),
    }
}

/// What to do about a refused plan path ([`PathError`]); `None` where the message says
/// it. One refused path refuses the whole plan, so each ends with the plan to fix.
fn path_hint(p: &PathError) -> Option<String> {
    let word = |s: &str| super::commands::shell_word(Path::new(s));
    let fix = "fix that path in the plan and preview again";
    Some(match p {
        PathError::OutsideRoot { .. } => format!(
            "plan paths are relative to the workspace root (the directory that holds .ultra-edit/, or --root), or absolute inside it; a file outside it is edited from a workspace that contains it: {fix}"
        ),
        PathError::Reserved { area, .. } => {
            let owner = match *area {
                ".git" => "git's repository",
                ".jj" => "jj's repository",
                ".hg" => "Mercurial's repository",
                ".svn" => "Subversion's working copy",
                _ => "ultra-edit's journal, which changes only through ultra-edit's commands",
            };
            format!("{area}/ is {owner}: leave it to that tool, and remove the edit from the plan")
        }
        PathError::StateDirectory { dir, .. } => format!(
            "{} belongs to another workspace's journal, which changes only through ultra-edit's commands run for that workspace: remove the edit from the plan",
            word(dir)
        ),
        PathError::IsSymlink { path } => format!(
            "write the path of the file the link points to (`readlink -f {}` prints it; an absolute path inside the root is accepted): {fix}",
            word(path)
        ),
        PathError::SymlinkInPath { link, .. } => format!(
            "write the path through the directory the link points to (`readlink -f {}` prints it; an absolute path inside the root is accepted): {fix}",
            word(link)
        ),
        PathError::Invalid { .. } => {
            format!("give the path of a file relative to the workspace root, such as \"src/lib.rs\": {fix}")
        }
        PathError::TempName { .. } => format!(
            "names of the form .ue-*.tmp are ultra-edit's temp files: rename the file outside ultra-edit first, or {fix}"
        ),
        PathError::SetId { path, .. } => format!(
            "clear those bits first if the file should not have them (`chmod ug-s,o-t {}`), or edit it with another tool",
            word(path)
        ),
        PathError::HardLinked { path, .. } => format!(
            "a commit renames a new file over the old one, which would leave the other links with the old bytes: give the file its own inode first (`cp -p {0} {0}.copy && mv {0}.copy {0}`), or edit it with a tool that writes in place",
            word(path)
        ),
        PathError::WrongKind { .. } => {
            format!("a plan's path names a file, and every directory above it must be a directory: {fix}")
        }
        _ => return None,
    })
}

/// A plan path that is missing at the root but names a file relative to the current
/// directory: the plan was written as if paths were relative to where the CLI runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Misplaced {
    /// The path as written in the plan.
    pub path: String,
    /// The root-relative path of the file it names from the current directory.
    pub root_relative: String,
    /// The workspace root.
    #[serde(skip)]
    pub root: PathBuf,
    /// The current directory.
    #[serde(skip)]
    pub cwd: PathBuf,
}

/// For each missing file of `e` (`file_not_found`), the root-relative path it names
/// from the current directory, when the CLI runs in a subdirectory of `root` and that
/// file exists. Plan paths stay root-relative: this only says what to write instead.
pub fn misplaced(e: &Error, root: &Path) -> Vec<Misplaced> {
    let Error::Edit(edit) = e else {
        return Vec::new();
    };
    let Ok(cwd) = super::commands::current_dir() else {
        return Vec::new();
    };
    let (Ok(real_root), Ok(real_cwd)) = (root.canonicalize(), cwd.canonicalize()) else {
        return Vec::new();
    };
    let Ok(sub) = real_cwd.strip_prefix(&real_root) else {
        return Vec::new();
    };
    if sub.as_os_str().is_empty() {
        return Vec::new();
    }
    edit.failures()
        .into_iter()
        .filter(|f| f.kind == "file_not_found" && !Path::new(&f.path).is_absolute())
        .filter_map(|f| {
            let rel = lexical(&sub.join(&f.path))?;
            let named = real_root.join(&rel);
            let is_file = named.symlink_metadata().is_ok_and(|m| m.is_file());
            let rel = rel.to_str()?.to_string();
            (is_file && rel != f.path).then(|| Misplaced {
                path: f.path,
                root_relative: rel,
                root: root.to_path_buf(),
                cwd: cwd.clone(),
            })
        })
        .collect()
}

/// `p` (relative) with `.` and `..` resolved lexically; `None` if it leaves the root.
fn lexical(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The hint for [`Misplaced`] paths: what is where, and what to write.
pub fn misplaced_hint(m: &[Misplaced]) -> Option<String> {
    let first = m.first()?;
    let each: Vec<String> = m
        .iter()
        .map(|m| format!("{:?} (not {:?})", m.root_relative, m.path))
        .collect();
    Some(format!(
        "plan paths are relative to the workspace root {}, not to the current directory {}; {} missing at the root but found relative to the current directory: write {} in the plan",
        first.root.display(),
        first.cwd.display(),
        if m.len() == 1 { "this file is" } else { "these files are" },
        each.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every next step's command is a command line the CLI accepts, and names the
    /// CLI's command (`rollback`), not the library's step (`roll_back`).
    #[test]
    fn next_step_commands_are_real_command_lines() {
        let steps = [
            (NextStep::Init, Some("ultra-edit init")),
            (NextStep::Log, Some("ultra-edit log")),
            (NextStep::Show { tx: 3 }, Some("ultra-edit show 3")),
            (NextStep::Rebase { tx: 3 }, Some("ultra-edit rebase 3")),
            (NextStep::ReviseOnLatest { tx: 3, latest: 1 }, None),
            (
                NextStep::NothingToRedo { tx: 3, by: 4 },
                Some("ultra-edit log"),
            ),
            (NextStep::Resolve { tx: 3 }, Some("ultra-edit resolve 3")),
            (NextStep::Revise { tx: 3 }, Some("ultra-edit revise 3")),
            (NextStep::Commit { tx: 3 }, Some("ultra-edit commit 3")),
            (NextStep::RollBack { tx: 3 }, Some("ultra-edit rollback 3")),
            (NextStep::Redo { by: 4 }, Some("ultra-edit rollback 4")),
            (
                NextStep::ForceRollBack { tx: 3 },
                Some("ultra-edit rollback 3 --force"),
            ),
            (
                NextStep::RollBackAgain { of: 3 },
                Some("ultra-edit rollback 3"),
            ),
            (NextStep::PreviewAgain, None),
            (
                NextStep::History { tx: 3 },
                Some("ultra-edit journal dump --tx 3"),
            ),
            (NextStep::Recover, Some("ultra-edit recover")),
            (NextStep::RecoverForeign, None),
            (NextStep::DecideByHand { tx: 3, batch: 2 }, None),
            (NextStep::Retry, None),
            (NextStep::AllowOwnerChange { tx: 3 }, None),
            (NextStep::WaitForLock, None),
            (NextStep::RemountWritable, None),
            (NextStep::RepairJournal, None),
        ];
        for (step, want) in steps {
            let got = command(&step);
            assert_eq!(got.as_deref(), want, "{step:?}");
            if let Some(line) = got {
                let parsed = super::super::help::command()
                    .try_get_matches_from(line.split(' '))
                    .and_then(|m| {
                        <super::super::args::Cli as clap::FromArgMatches>::from_arg_matches(&m)
                    });
                assert!(parsed.is_ok(), "{line}: {parsed:?}");
            }
        }
    }

    /// Issue 33, item 9: every step that names a transaction, and every step that is
    /// "the same command again", has a command line for this process that the CLI
    /// parses; the steps without one need a person or a new plan (their hint says what).
    #[test]
    fn every_next_step_that_can_be_a_command_has_one_that_parses() {
        let with_command = [
            NextStep::Init,
            NextStep::Log,
            NextStep::Show { tx: 3 },
            NextStep::Rebase { tx: 3 },
            NextStep::Resolve { tx: 3 },
            NextStep::Revise { tx: 3 },
            NextStep::Commit { tx: 3 },
            NextStep::Abort { tx: 3 },
            NextStep::RollBack { tx: 3 },
            NextStep::Redo { by: 4 },
            NextStep::NothingToRedo { tx: 3, by: 4 },
            NextStep::ForceRollBack { tx: 3 },
            NextStep::RollBackLaterFirst { later: 4, tx: 3 },
            NextStep::RollBackAgain { of: 3 },
            NextStep::History { tx: 3 },
            NextStep::Recover,
            NextStep::Retry,
            NextStep::WaitForLock,
            NextStep::AllowOwnerChange { tx: 3 },
        ];
        let parses = |line: &str| {
            // The test binary's own arguments stand for the command line of a rerun:
            // only the steps that are one fixed command are parsed.
            super::super::help::command()
                .try_get_matches_from(line.split(' '))
                .and_then(|m| {
                    <super::super::args::Cli as clap::FromArgMatches>::from_arg_matches(&m)
                })
                .is_ok()
        };
        for step in with_command {
            let line = command_for(&step);
            assert!(line.is_some(), "{step:?} has no command");
            if let Some(fixed) = command(&step) {
                assert!(parses(&fixed), "{step:?}: {fixed}");
            }
        }
        assert_eq!(
            rerun_of(["commit", "3"].iter().map(Into::into)),
            "ultra-edit commit 3"
        );
        assert_eq!(
            rerun_of(["--root", "my dir", "rollback", "2"].iter().map(Into::into)),
            "ultra-edit --root 'my dir' rollback 2"
        );
        // A plan to write first (against the latest revision): the hint says which.
        for step in [
            NextStep::ReviseOnLatest { tx: 3, latest: 1 },
            NextStep::PreviewAgain,
            NextStep::RecoverForeign,
            NextStep::DecideByHand { tx: 3, batch: 2 },
            NextStep::RemountWritable,
            NextStep::RunAsJournalOwner { owner: 0 },
            NextStep::RecoverAsOwner { uid: 0 },
            NextStep::MountWithAcls,
            NextStep::RepairJournal,
        ] {
            assert_eq!(command_for(&step), None, "{step:?}");
        }
    }

    /// Every path refusal has a hint (a directory-like path's message has its own).
    #[test]
    fn path_refusals_have_hints() {
        let hint_of = |p: PathError| hint(&Error::Path(p));
        assert_eq!(
            hint_of(PathError::Reserved {
                path: ".git/x".into(),
                area: ".git"
            })
            .as_deref(),
            Some(".git/ is git's repository: leave it to that tool, and remove the edit from the plan")
        );
        assert_eq!(
            hint_of(PathError::Reserved {
                path: "a/.ultra-edit/journal.redb".into(),
                area: ".ultra-edit"
            })
            .as_deref(),
            Some(".ultra-edit/ is ultra-edit's journal, which changes only through ultra-edit's commands: leave it to that tool, and remove the edit from the plan")
        );
        assert_eq!(
            hint_of(PathError::OutsideRoot { path: "../x".into() }).as_deref(),
            Some("plan paths are relative to the workspace root (the directory that holds .ultra-edit/, or --root), or absolute inside it; a file outside it is edited from a workspace that contains it: fix that path in the plan and preview again")
        );
        assert_eq!(
            hint_of(PathError::IsSymlink { path: "my link".into() }).as_deref(),
            Some("write the path of the file the link points to (`readlink -f 'my link'` prints it; an absolute path inside the root is accepted): fix that path in the plan and preview again")
        );
        assert_eq!(
            hint_of(PathError::SymlinkInPath {
                path: "l/a.txt".into(),
                link: "l".into()
            })
            .as_deref(),
            Some("write the path through the directory the link points to (`readlink -f l` prints it; an absolute path inside the root is accepted): fix that path in the plan and preview again")
        );
        assert_eq!(
            hint_of(PathError::HardLinked {
                path: "h.txt".into(),
                links: 2
            })
            .as_deref(),
            Some("a commit renames a new file over the old one, which would leave the other links with the old bytes: give the file its own inode first (`cp -p h.txt h.txt.copy && mv h.txt.copy h.txt`), or edit it with a tool that writes in place")
        );
        for p in [
            PathError::Invalid {
                path: "".into(),
                why: "empty",
            },
            PathError::TempName {
                path: ".ue-1.tmp".into(),
            },
            PathError::SetId {
                path: "s".into(),
                mode: 0o4755,
            },
            PathError::WrongKind {
                path: "d".into(),
                why: "a directory".into(),
            },
        ] {
            assert!(hint_of(p.clone()).is_some(), "{p:?}");
        }
        let dir = PathError::NamesDirectory {
            path: "a/".into(),
            ending: "/",
        };
        assert_eq!(hint_of(dir), None);
    }

    /// A path refused in a revert or a command run has no plan to fix: the hint says
    /// what wrote it and what to change (found by the breaker: "fix that path in the
    /// plan" where no plan exists).
    #[test]
    fn path_hints_name_what_wrote_the_path() {
        let link = || {
            Error::Path(PathError::SymlinkInPath {
                path: "d/f.txt".into(),
                link: "d".into(),
            })
        };
        assert_eq!(
            hint_for(&link(), PathOrigin::Plan).as_deref(),
            Some("write the path through the directory the link points to (`readlink -f d` prints it; an absolute path inside the root is accepted): fix that path in the plan and preview again")
        );
        assert_eq!(
            hint_for(&link(), PathOrigin::Revert).as_deref(),
            Some("d is a symbolic link, and a transaction does not write through links: a reverted transaction wrote that path, and the disk holds something else there now: put a regular file back there (or remove what is there) outside ultra-edit and revert again, or revert without that transaction")
        );
        let temp = Error::Path(PathError::TempName {
            path: ".ue-1.tmp".into(),
        });
        assert_eq!(
            hint_for(&temp, PathOrigin::Command).as_deref(),
            Some("names of the form .ue-*.tmp are ultra-edit's temp files: the command wrote that path: change the command so that it does not (or make that change outside ultra-edit), and run it again")
        );
        for origin in [PathOrigin::Command, PathOrigin::Revert] {
            for p in [
                PathError::OutsideRoot {
                    path: "../x".into(),
                },
                PathError::IsSymlink { path: "l".into() },
                PathError::Invalid {
                    path: "".into(),
                    why: "empty",
                },
                PathError::WrongKind {
                    path: "d".into(),
                    why: "a directory".into(),
                },
            ] {
                let h = hint_for(&Error::Path(p.clone()), origin).unwrap();
                assert!(!h.contains("plan"), "{origin:?} {p:?}: {h}");
            }
        }
    }

    /// Several later txs wrote the file: the hint names each, newest first (found by
    /// the breaker: it named only the newest, and following it was refused again).
    #[test]
    fn a_stale_rollback_hint_names_every_later_tx_newest_first() {
        let e = Error::StaleRollback {
            tx: 1,
            paths: vec!["a".into()],
            changed_by: vec![2, 3],
            outside: Vec::new(),
            absent: Vec::new(),
        };
        assert_eq!(
            hint(&e).as_deref(),
            Some(
                "roll back the later changes first, newest first (`ultra-edit rollback 3`, then tx 2), then tx 1; `ultra-edit rollback 1 --force` would overwrite the file(s) instead, undoing the changes of txs 2, 3 there too (their current bytes are kept in the journal first); `ultra-edit revert 1` undoes only tx 1's change and keeps the later ones"
            )
        );
    }

    /// The hint names the command line of the step.
    #[test]
    fn hints_name_the_command() {
        let e = Error::StaleRollback {
            tx: 3,
            paths: vec!["a".into()],
            changed_by: Vec::new(),
            outside: Vec::new(),
            absent: Vec::new(),
        };
        assert_eq!(
            hint(&e).as_deref(),
            Some(
                "run `ultra-edit revert 3` to undo only tx 3's change and keep what was written since, or `ultra-edit rollback 3 --force` to overwrite it (its current bytes are kept in the journal first)"
            )
        );
        let e = Error::StaleRollback {
            tx: 3,
            paths: vec!["a".into(), "b".into()],
            changed_by: Vec::new(),
            outside: Vec::new(),
            absent: Vec::new(),
        };
        assert_eq!(
            hint(&e).as_deref(),
            Some(
                "run `ultra-edit revert 3` to undo only tx 3's change and keep what was written since, or `ultra-edit rollback 3 --force` to overwrite them (their current bytes are kept in the journal first)"
            )
        );
        let e = Error::StaleRollback {
            tx: 3,
            paths: vec!["a".into()],
            changed_by: Vec::new(),
            outside: Vec::new(),
            absent: vec!["a".into()],
        };
        assert_eq!(
            hint(&e).as_deref(),
            Some(
                "run `ultra-edit revert 3` to undo only tx 3's change and keep what was written since, or `ultra-edit rollback 3 --force` to re-create it"
            )
        );
    }
}
