//! [`SandboxError`]: why a command run on the workspace's overlay (feature `sandbox`,
//! src/sandbox/, docs/commands.md) recorded nothing.

/// A path the command made that a plan cannot represent, and what it is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RefusedPath {
    /// Root-relative path.
    pub path: String,
    /// What the command made: `symlink`, `fifo`, `socket`, `device` or `hard_link`; or
    /// what it removed that a plan cannot delete:
    /// `removed_symlink`, `removed_special_file`.
    pub kind: String,
}

/// Why `preview --run`, `revise --run`, `run` or a `--check` recorded nothing. Every
/// variant means: no revision was recorded and the real tree was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The overlay cannot be set up here; the command was not run.
    #[error("the command sandbox is unavailable: {cause}; the command was not run. {setting}")]
    Unavailable {
        /// What failed (`unshare(CLONE_NEWUSER): Operation not permitted`, …).
        cause: String,
        /// The setting that would allow it, in words (a sysctl, a kernel option).
        setting: String,
    },
    /// The command exited non-zero (or was killed by a signal): nothing was recorded.
    #[error("the command `{command}` {}; nothing was recorded", exit_words(*status, *signal))]
    CommandFailed {
        /// The command line as given.
        command: String,
        /// Its exit status, if it exited.
        status: Option<i32>,
        /// The signal that ended it, if one did.
        signal: Option<i32>,
        /// The last 64 KiB of its standard output and error, interleaved as read.
        output_tail: String,
    },
    /// The command ran longer than its timeout and was killed with its process group.
    #[error("the command `{command}` ran longer than {timeout_ms} ms and was killed; nothing was recorded. Give it a longer timeout")]
    TimedOut {
        /// The command line.
        command: String,
        /// The timeout, in milliseconds.
        timeout_ms: u64,
        /// The last 64 KiB of its output.
        output_tail: String,
    },
    /// The command was stopped by an interrupt ([`crate::Interrupt::request`], the
    /// CLI's Ctrl-C): nothing was recorded.
    #[error("the command `{command}` was interrupted and killed; nothing was recorded")]
    Interrupted {
        /// The command line.
        command: String,
    },
    /// The command made symlinks, FIFOs, sockets, device files or hard links, or
    /// removed a symlink or special file, which the plan format cannot represent (it
    /// holds regular files with their bytes and permission bits only).
    #[error("the command made or removed {}, which a transaction cannot hold (it records regular files only); nothing was recorded. Make or remove them outside ultra-edit, or change the command", paths.iter().map(|p| format!("{} ({})", p.path, p.kind)).collect::<Vec<_>>().join(", "))]
    Unrepresentable {
        /// The paths, sorted, with their kinds.
        paths: Vec<RefusedPath>,
    },
    /// The command made or removed files whose names are not UTF-8: a plan's paths
    /// are UTF-8 text, so the transaction could not name them.
    #[error("the command made or removed {} whose name is not UTF-8 ({}), which a transaction cannot name (its paths are UTF-8 text); nothing was recorded. Give them UTF-8 names in the command, or make or remove them outside ultra-edit", if paths.len() == 1 { "a file" } else { "files" }, paths.join(", "))]
    NonUtf8Names {
        /// The root-relative paths, sorted; each name's bytes that are not printable
        /// ASCII written as `\xNN` (Rust's `escape_ascii`: `caf\xe9.txt`).
        paths: Vec<String>,
    },
    /// Under `--strict`: the command wrote where a transaction never reaches (`.git/`,
    /// `.jj/`, `.hg/`, `.svn/`, the state directory).
    #[error("the command wrote outside the transaction's scope: {}; nothing was recorded (unless asked to be strict, those changes are dropped with a warning)", paths.join(", "))]
    OutOfScope {
        /// The paths, sorted (at most 20; `…` notes more).
        paths: Vec<String>,
    },
    /// The command changed nothing inside the root that a transaction keeps (what it
    /// wrote, if anything, was dropped by the scope rules and counted here).
    #[error("the command `{command}` changed no file a transaction keeps ({dropped_vcs} change(s) under version-control or state directories and {dropped_ignored} ignored path(s) dropped); nothing was recorded")]
    NothingChanged {
        /// The command line.
        command: String,
        /// Changes dropped under `.git/`, `.jj/`, `.hg/`, `.svn/` or the state directory.
        dropped_vcs: u64,
        /// Changes dropped as ignored by the repository's ignore rules.
        dropped_ignored: u64,
    },
    /// A command line of whitespace only (a default check, say): nothing was run or
    /// stored.
    #[error("{what} is empty; give a command line (`sh -c` runs it)")]
    EmptyCommand {
        /// What was empty (`the default check`).
        what: String,
    },
    /// The MCP server was started without `--allow-commands` (or an embedder did not
    /// enable commands): no command runs.
    #[error("running commands is not allowed: {what} needs the server to be started with --allow-commands (an embedder: enable commands in the server options); nothing was run")]
    CommandsNotAllowed {
        /// The tool or argument refused (`edit_run`, `check`).
        what: String,
    },
}

fn exit_words(status: Option<i32>, signal: Option<i32>) -> String {
    match (status, signal) {
        (Some(s), _) => format!("exited with status {s}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => "failed".into(),
    }
}

impl SandboxError {
    /// The stable snake_case kind printed in `--json` and MCP errors.
    pub fn kind(&self) -> &'static str {
        match self {
            SandboxError::Unavailable { .. } => "sandbox_unavailable",
            SandboxError::CommandFailed { .. } => "command_failed",
            SandboxError::TimedOut { .. } => "command_timed_out",
            SandboxError::Interrupted { .. } => "command_interrupted",
            SandboxError::Unrepresentable { .. } => "unrepresentable_files",
            SandboxError::NonUtf8Names { .. } => "non_utf8_name",
            SandboxError::OutOfScope { .. } => "out_of_scope",
            SandboxError::CommandsNotAllowed { .. } => "commands_not_allowed",
            SandboxError::NothingChanged { .. } => "nothing_to_change",
            SandboxError::EmptyCommand { .. } => "empty_command",
        }
    }

    /// CLI exit code: 130 for an interrupted command (as a shell reports Ctrl-C), 8
    /// for a command that failed or timed out, 4 for one that changed nothing (as a
    /// preview that changes nothing), 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            SandboxError::NothingChanged { .. } => 4,
            SandboxError::Interrupted { .. } => 130,
            SandboxError::CommandFailed { .. } | SandboxError::TimedOut { .. } => 8,
            _ => 1,
        }
    }
}
