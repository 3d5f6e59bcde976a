//! The pager: long text output on a terminal goes through one, as git and jj do.
//!
//! Used only when standard output is a terminal, the output is text (not `--json`)
//! and `--no-pager` is not given. The command is `$ULTRA_EDIT_PAGER`, else `$PAGER`,
//! else `less -FRX` (quit if it fits on one screen, pass colours through, leave the
//! screen as it is); an empty value or `cat` means no pager, as in git. It runs
//! through `sh -c`, with `LESS=FRX` and `LV=-c` set unless already set (git's
//! defaults). If it cannot be started the output goes to the terminal directly.
//!
//! How: the pager's standard input (a pipe) replaces file descriptor 1 for the rest of
//! the run, so everything the command prints goes through it; [`Pager::finish`] puts
//! the original standard output back, which closes the pipe, and waits for the pager
//! to exit (the person reading it quits it).

use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};

/// A running pager that receives standard output.
pub struct Pager {
    child: Child,
    /// The terminal's standard output, put back by [`Pager::finish`].
    original: OwnedFd,
}

/// The pager command, or `None` when paging is turned off by the environment.
fn command() -> Option<String> {
    let chosen = ["ULTRA_EDIT_PAGER", "PAGER"]
        .iter()
        .find_map(|name| std::env::var(name).ok())
        .unwrap_or_else(|| "less -FRX".into());
    let trimmed = chosen.trim();
    (!trimmed.is_empty() && trimmed != "cat").then(|| trimmed.to_string())
}

impl Pager {
    /// Start the pager if the output should be paged: text output (`json` false),
    /// `--no-pager` not given, standard output a terminal, a pager configured.
    pub fn start(json: bool, no_pager: bool) -> Option<Pager> {
        if json || no_pager || !std::io::stdout().is_terminal() {
            return None;
        }
        let pager = command()?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&pager).stdin(Stdio::piped());
        for (name, value) in [("LESS", "FRX"), ("LV", "-c")] {
            if std::env::var_os(name).is_none() {
                cmd.env(name, value);
            }
        }
        let original = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        let mut child = cmd.spawn().ok()?;
        let redirected = child
            .stdin
            .as_ref()
            .map(|pipe| rustix::stdio::dup2_stdout(pipe.as_fd()));
        // Our copy of the pipe is not needed once fd 1 is it (or if that failed).
        drop(child.stdin.take());
        if !matches!(redirected, Some(Ok(()))) {
            let _ = child.wait();
            return None;
        }
        Some(Pager { child, original })
    }

    /// Flush, give the pager its end of input, and wait for it to exit.
    pub fn finish(mut self) {
        let _ = std::io::stdout().flush();
        let _ = rustix::stdio::dup2_stdout(self.original.as_fd());
        let _ = self.child.wait();
    }
}
