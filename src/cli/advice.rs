//! The CLI's words for the library's next steps ([`NextStep`]): a command to run.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use ultra_edit::{Attention, Error, NextStep, StateReason};

/// What to run next, as the CLI says it; `None` where the message already says it.
pub fn hint(e: &Error) -> Option<String> {
    let step = e.next_step()?;
    Some(match step {
        NextStep::Init => match e {
            Error::NotInitialized {
                state_dir: Some(_), ..
            } => "run `ultra-edit init` to create it".into(),
            Error::NotInitialized {
                searched_up: false, ..
            } => "run `ultra-edit init` there, or give --root the directory that holds .ultra-edit/".into(),
            _ => "run `ultra-edit init` in the workspace's root directory, or pass --root DIR".into(),
        },
        NextStep::Log => match e {
            Error::ForeignHandle { .. } => "run the command on the journal that made the handle (its --root, and --state-dir if it has one); `ultra-edit log --json` lists this journal's handles".into(),
            _ => "`ultra-edit log` lists the transactions".into(),
        },
        NextStep::Show { tx } => format!("`ultra-edit show {tx}` shows it"),
        NextStep::Rebase { tx } => format!(
            "run `ultra-edit rebase {tx}` (a three-way merge onto the disk), or preview again"
        ),
        NextStep::ReviseOnLatest { tx, latest } => format!(
            "write the plan against revision {latest} (`ultra-edit show {tx}`), or pass --rebase to merge it onto revision {latest}"
        ),
        NextStep::Revise { tx } => format!("fix it with `ultra-edit revise {tx}`"),
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
            _ => format!("run `ultra-edit commit {tx}`"),
        },
        NextStep::RollBack { tx } => format!("`ultra-edit rollback {tx}` restores the files"),
        NextStep::Redo { by } => format!("`ultra-edit rollback {by}` redoes it"),
        NextStep::ForceRollBack { tx } => format!(
            "run `ultra-edit rollback {tx} --force` to overwrite them (their current bytes are kept in the journal first)"
        ),
        NextStep::RollBackAgain { of } => format!("run `ultra-edit rollback {of}` again"),
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
        NextStep::Retry => "run the command again (`ultra-edit show` tells the tx's state)".into(),
        NextStep::WaitForLock => "retry later or raise --lock-timeout".into(),
        NextStep::AllowOwnerChange { tx } => format!(
            "run it as the files' owner or as root, or pass --allow-owner-change to `ultra-edit commit {tx}` / `ultra-edit rollback` to accept the change"
        ),
        NextStep::RemountWritable => "remount the filesystem read-write (e.g. `mount -o remount,rw MOUNTPOINT`) and run the command again; `ultra-edit log`, `show` and `journal dump/verify/stats` work as it is".into(),
        NextStep::RunAsJournalOwner { owner } => format!(
            "run the command as the journal's owner (uid {owner}, e.g. `sudo -u '#{owner}' ultra-edit ...`), or have them (or root) give this user read, write and search access to the directory; `ultra-edit init` cannot help, the journal is already there"
        ),
        NextStep::MountWithAcls => "mount the filesystem with ACL support (e.g. `mount -o remount,acl MOUNTPOINT`) and run the command again, or remove the ACL (`setfacl -b FILE`) and preview again".into(),
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
