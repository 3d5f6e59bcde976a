//! The CLI's words for the library's next steps ([`NextStep`]): a command to run.

use ultra_edit::{Attention, Error, NextStep};

/// What to run next, as the CLI says it; `None` where the message already says it.
pub fn hint(e: &Error) -> Option<String> {
    let step = e.next_step()?;
    Some(match step {
        NextStep::Init => match e {
            Error::NotInitialized {
                searched_up: false, ..
            } => "run `ultra-edit init` there, or give --root the directory that holds .ultra-edit/".into(),
            _ => "run `ultra-edit init` in the workspace's root directory, or pass --root DIR".into(),
        },
        NextStep::Log => "`ultra-edit log` lists the transactions".into(),
        NextStep::Show { tx } => format!("`ultra-edit show {tx}` shows it"),
        NextStep::Rebase { tx } => format!(
            "run `ultra-edit rebase {tx}` (a three-way merge onto the disk), or preview again"
        ),
        NextStep::ReviseOnLatest { tx, latest } => format!(
            "write the plan against revision {latest} (`ultra-edit show {tx}`), or pass --rebase to merge it onto revision {latest}"
        ),
        NextStep::Revise { tx } => format!("fix it with `ultra-edit revise {tx}`"),
        NextStep::Commit { tx } => format!("run `ultra-edit commit {tx}`"),
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
        _ => return None,
    })
}
