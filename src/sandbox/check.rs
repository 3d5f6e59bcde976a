//! `--check CMD`: run a command on an overlay view of the disk with a candidate
//! applied, throw away what it writes, and record its outcome in the revision's
//! validation: `check_passed` (a note) or `check_failed` (an error the commit gate
//! refuses, unless the policy's `check_failed` is `allow`).
//!
//! Everything the check writes stays in the overlay and is removed with it, build
//! artifacts too (`target/`, `node_modules/`): the real tree is never written. The
//! check sees the real tree's build directory through the overlay's lower layer, so it
//! is as warm as the user's last build and pays for copying up what it rewrites
//! (measured: docs/commands.md, "Checks").

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::layers::{self, Layers};
use super::ns::{self, Passthrough};
use crate::edit::{Issue, Plan, Severity};
use crate::error::{Result, SandboxError};
use crate::fs::RelPath;
use crate::revision::Working;
use crate::tx::{Preview, PreviewOptions, ReviseOptions};
use crate::workspace::Journal;

/// A check command ([`Journal::preview_checked`], [`super::RunOptions::check`]).
/// `#[non_exhaustive]`: start from [`CheckOptions::new`] and set fields with the
/// `with_*` methods (or assign them).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckOptions {
    /// The command line, run as `sh -c COMMAND`; exit 0 passes.
    pub command: String,
    /// How long it may run; a check still running then is killed and fails.
    /// Default [`super::DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// Where its output goes besides the kept tail (default: kept only).
    pub passthrough: Passthrough,
    /// Its working directory (default: this process's; the root when that one is
    /// outside the root).
    pub cwd: Option<PathBuf>,
}

impl CheckOptions {
    /// `command` with every default.
    pub fn new(command: impl Into<String>) -> CheckOptions {
        CheckOptions {
            command: command.into(),
            timeout: super::DEFAULT_TIMEOUT,
            passthrough: Passthrough::None,
            cwd: None,
        }
    }

    /// [`CheckOptions::timeout`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// [`CheckOptions::passthrough`].
    pub fn with_passthrough(mut self, passthrough: Passthrough) -> Self {
        self.passthrough = passthrough;
        self
    }
    /// [`CheckOptions::cwd`].
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
}

/// Bytes of a check's output quoted in its issue's message: the last 4 KiB.
pub const CHECK_TAIL_BYTES: usize = 4096;

fn last_bytes(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Run `check` on the disk with `files`' candidates applied; its outcome as an issue.
/// Errors: [`SandboxError::EmptyCommand`] for a command of whitespace only (`sh -c ''`
/// runs nothing and exits 0: it would be recorded as `check_passed`; nothing is run
/// or recorded), [`SandboxError::Unavailable`], [`SandboxError::Interrupted`] and I/O
/// errors of the layers; a failing or timed-out check is an issue, not an error.
pub(crate) fn run_check(
    journal: &Journal,
    check: &CheckOptions,
    files: &BTreeMap<RelPath, Working>,
) -> Result<Vec<Issue>> {
    if check.command.trim().is_empty() {
        return Err(SandboxError::EmptyCommand {
            what: "the check".into(),
        }
        .into());
    }
    let root = journal.ws.root.clone();
    let state_dir = journal.state_dir().to_path_buf();
    layers::sweep(&state_dir);
    let cwd = super::run::working_dir(check.cwd.as_deref(), &root);
    // A signal while the layers exist is a request (see `capture_command`): the
    // check is killed and its layers removed before the process ends.
    let guard = journal.ws.guard();
    let layers = Layers::create(&state_dir)?;
    let spec = ns::Spec {
        root: &root,
        cwd: &cwd,
        command: &check.command,
        prelude: super::run::prelude_of(&root, files)?,
        timeout: check.timeout,
        passthrough: check.passthrough,
        interrupt: journal.ws.interrupt.as_deref(),
    };
    let outcome = ns::run(spec, &layers.upper, &layers.work);
    drop(layers);
    drop(guard);
    if journal.ws.interrupt_requested() {
        return Err(SandboxError::Interrupted {
            command: check.command.clone(),
        }
        .into());
    }
    let (passed, how, tail) = match outcome {
        Ok(o) if o.success() => (true, format!("exited 0 in {} ms", o.duration_ms), o.tail),
        Ok(o) => (
            false,
            match (o.status, o.signal) {
                (Some(s), _) => format!("exited with status {s} after {} ms", o.duration_ms),
                (None, Some(sig)) => {
                    format!("was killed by signal {sig} after {} ms", o.duration_ms)
                }
                _ => "failed".into(),
            },
            o.tail,
        ),
        Err(crate::Error::Sandbox(SandboxError::TimedOut {
            timeout_ms,
            output_tail,
            ..
        })) => (
            false,
            format!("ran longer than {timeout_ms} ms and was killed"),
            output_tail,
        ),
        Err(e) => return Err(e),
    };
    let tail = last_bytes(&tail, CHECK_TAIL_BYTES);
    let message = if tail.is_empty() {
        format!("check `{}` {how} on the candidate", check.command)
    } else {
        format!(
            "check `{}` {how} on the candidate; its output ends with:\n{tail}",
            check.command
        )
    };
    Ok(vec![Issue {
        code: if passed {
            "check_passed"
        } else {
            "check_failed"
        }
        .into(),
        severity: if passed {
            Severity::Note
        } else {
            Severity::Error
        },
        path: String::new(),
        message,
    }])
}

impl Journal {
    /// [`Journal::preview_with`], then `check` run on the candidate before the
    /// revision is recorded: its outcome is in the validation (`check_passed`, or the
    /// error `check_failed` that the commit gate refuses unless the policy's
    /// [`crate::Policy::check_failed`] allows it). Errors: those of `preview_with`,
    /// and [`SandboxError::Unavailable`] / [`SandboxError::Interrupted`] (nothing
    /// recorded).
    pub fn preview_checked(
        &self,
        plan: &Plan,
        opts: PreviewOptions,
        check: &CheckOptions,
    ) -> Result<Preview> {
        let extra = |files: &BTreeMap<RelPath, Working>| run_check(self, check, files);
        self.preview_recorded(plan, opts, None, Some(&extra))
    }

    /// [`Journal::revise`] with `check` run on the new revision's candidate (see
    /// [`Journal::preview_checked`]).
    pub fn revise_checked(
        &self,
        tx: impl Into<crate::TxRef>,
        opts: ReviseOptions,
        plan: &Plan,
        check: &CheckOptions,
    ) -> Result<Preview> {
        let extra = |files: &BTreeMap<RelPath, Working>| run_check(self, check, files);
        self.revise_recorded(tx, opts, plan, None, Some(&extra))
    }

    /// [`Journal::resolve`] with `check` run on the resolved revision's candidate (see
    /// [`Journal::preview_checked`]). Errors: those of `resolve` and of the check.
    pub fn resolve_checked(
        &self,
        tx: impl Into<crate::TxRef>,
        on: u32,
        edited: &[(String, Vec<u8>)],
        opts: crate::ResolveOptions,
        check: &CheckOptions,
    ) -> Result<Preview> {
        let (tx, revise, plan) = self.resolved_plan(tx, on, edited, opts)?;
        self.revise_checked(tx, revise, &plan, check)
    }

    /// [`Journal::rebase`] with `check` run again on the rebased candidate (see
    /// [`Journal::preview_checked`]).
    pub fn rebase_checked(
        &self,
        tx: impl Into<crate::TxRef>,
        check: &CheckOptions,
    ) -> Result<Preview> {
        let extra = |files: &BTreeMap<RelPath, Working>| run_check(self, check, files);
        self.rebase_with(tx, Some(&extra))
    }
}
