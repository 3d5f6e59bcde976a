//! One function per subcommand: validated arguments → library call → render.
//!
//! [`dispatch`] opens the journal and hands each subcommand to its function:
//! the transaction verbs are in `tx.rs`, the `journal …` subcommands in `journal.rs`,
//! and `init`, `recover` and `serve` here. Each returns the exit code of a command
//! that ran.

mod journal;
mod tx;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ultra_edit::{Error, IoError, Journal, OpenOptions, RecoverOptions, Result, STATE_DIR};

use super::args::{Cli, Command};
use super::render::Out;

/// Run the command; `Ok` carries the exit code of a command that ran (0, or 4 for a
/// recorded revision that fails validation).
pub fn dispatch(cli: Cli) -> Result<i32> {
    let out = Out::new(cli.json);
    if let Command::Init = cli.command {
        return init(&out, cli.root);
    }
    let root = match cli.root {
        Some(root) => root,
        None => discover_root()?,
    };
    let mut j = open(&out, &root, &cli.command)?;
    match cli.command {
        Command::Init => Ok(0),
        Command::Preview { plan } => tx::preview(&out, &j, &plan),
        Command::Revise {
            tx,
            base,
            rebase,
            plan,
        } => tx::revise(&out, &j, tx, base, rebase, &plan),
        Command::Rebase { tx } => tx::rebase(&out, &j, tx),
        Command::Show { tx, revision } => tx::show(&out, &j, tx, revision),
        Command::Commit {
            tx,
            revision,
            lock_timeout,
        } => tx::commit(&out, &mut j, tx, revision, lock_timeout),
        Command::Abort { tx } => tx::abort(&out, &j, tx),
        Command::Rollback {
            tx,
            force,
            lock_timeout,
        } => tx::rollback(&out, &mut j, tx, force, lock_timeout),
        Command::Log { limit } => tx::log(&out, &j, limit),
        Command::Recover { overwrite } => recover(&out, &j, overwrite),
        Command::Serve { preview_ttl } => serve(j, preview_ttl),
        Command::Journal { command } => journal::dispatch(&out, j, &root, command),
    }
}

/// `init`: create `.ultra-edit/` in `--root` (default: the current directory).
fn init(out: &Out, root: Option<PathBuf>) -> Result<i32> {
    let j = Journal::init(&root.unwrap_or_else(|| PathBuf::from(".")))?;
    out.init(j.root()).map(|()| 0)
}

/// Open the journal for `command`, reporting a recovery that ran on open.
fn open(out: &Out, root: &Path, command: &Command) -> Result<Journal> {
    // `recover` runs recovery itself, to report it; every other command recovers on open.
    let recover_on_open = !matches!(command, Command::Recover { .. });
    let opts = OpenOptions {
        recover: recover_on_open,
        ..Default::default()
    };
    let j = Journal::open_with(root, opts)?;
    if let Some(report) = j.recovery_on_open() {
        out.recovered_on_open(report);
    }
    Ok(j)
}

/// `recover`: run recovery now and report; exit 7 if a batch needs attention.
fn recover(out: &Out, j: &Journal, overwrite: bool) -> Result<i32> {
    let report = j.recover_with(RecoverOptions { overwrite })?;
    out.recovery(&report)?;
    if !report.needs_attention.is_empty() {
        eprintln!(
            "ultra-edit: {} batch(es) need attention: put each listed file back as it was, or run `ultra-edit recover --overwrite` (the bytes found are kept in the journal)",
            report.needs_attention.len()
        );
        return Ok(7);
    }
    Ok(0)
}

/// `serve`: the MCP server on standard input/output, until the client goes away.
fn serve(j: Journal, preview_ttl: Option<u64>) -> Result<i32> {
    ultra_edit::mcp::serve(
        j,
        ultra_edit::mcp::ServeOptions {
            preview_ttl: preview_ttl.map(Duration::from_secs),
        },
    )
    .map(|()| 0)
}

/// The nearest directory from the current one upwards that holds a journal, as git
/// finds `.git`. Errors: [`Error::NotInitialized`] naming the current directory.
fn discover_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().map_err(|source| {
        Error::Io(IoError {
            op: "getcwd",
            path: ".".into(),
            source,
        })
    })?;
    cwd.ancestors()
        .find(|d| d.join(STATE_DIR).join("journal.redb").is_file())
        .map(PathBuf::from)
        .ok_or(Error::NotInitialized {
            root: cwd,
            searched_up: true,
        })
}
