//! One function per subcommand: validated arguments → library call → render.
//!
//! [`dispatch`] opens the journal and hands each subcommand to its function:
//! the transaction verbs are in `tx.rs`, the `journal …` subcommands in `journal.rs`,
//! and `init`, `recover` and `serve` here. Each returns the exit code of a command
//! that ran.

mod config;
mod journal;
mod resolve;
mod sandbox;
mod tx;

pub use tx::READ_PLAN;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ultra_edit::{
    CommitOptions, Error, IoError, Journal, OpenOptions, RecoverOptions, Result, RollbackOptions,
    STATE_DIR,
};

use super::advice::PathOrigin;
use super::args::{Cli, Command, JournalCommand};
use super::pager::Pager;
use super::render::Out;

/// A command that failed: the library's error, and the workspace root the command ran
/// on when it got that far (for advice that depends on where the CLI runs).
pub struct Failed {
    /// The error.
    pub error: Error,
    /// The root (as given or discovered).
    pub root: Option<PathBuf>,
    /// How hints must start a command to reach the same journal: `ultra-edit`, plus
    /// `--root R --state-dir S` when the journal lives outside the root.
    pub invocation: String,
    /// Where the command's paths came from, for a refused path's hint.
    pub origin: PathOrigin,
}

impl From<Error> for Box<Failed> {
    fn from(error: Error) -> Box<Failed> {
        Box::new(Failed {
            error,
            root: None,
            invocation: "ultra-edit".into(),
            origin: PathOrigin::Plan,
        })
    }
}

/// Where `command`'s paths come from: a command run on the overlay (`--run`, `run`),
/// a revert, or a plan.
fn origin_of(command: &Command) -> PathOrigin {
    match command {
        Command::Preview { run: Some(_), .. }
        | Command::Revise { run: Some(_), .. }
        | Command::Run { .. } => PathOrigin::Command,
        Command::Revert { .. } => PathOrigin::Revert,
        _ => PathOrigin::Plan,
    }
}

/// Run the command; `Ok` carries the exit code of a command that ran (0, or 4 for a
/// recorded revision that fails validation).
pub fn dispatch(cli: Cli) -> std::result::Result<i32, Box<Failed>> {
    let out = Out::new(cli.json, cli.color);
    let invocation = invocation(&cli);
    let origin = origin_of(&cli.command);
    if let Command::Init = cli.command {
        return init(&out, cli.root, cli.state_dir).map_err(|error| {
            Box::new(Failed {
                error,
                root: None,
                invocation,
                origin,
            })
        });
    }
    let root = match cli.root.clone() {
        Some(root) => root,
        None => discover_root()?,
    };
    run(&out, cli, &root).map_err(|error| {
        Box::new(Failed {
            error,
            root: Some(root),
            invocation,
            origin,
        })
    })
}

/// `ultra-edit`, plus `--root R --state-dir S` when the command named a state directory
/// outside the root: a hint's command must reach the same journal (`--state-dir`
/// needs `--root`).
fn invocation(cli: &Cli) -> String {
    match (&cli.root, &cli.state_dir) {
        (Some(root), Some(dir)) => format!(
            "ultra-edit --root {} --state-dir {}",
            shell_word(root),
            shell_word(dir)
        ),
        _ => "ultra-edit".into(),
    }
}

/// A path as one POSIX shell word: as is when it holds only characters the shell
/// leaves alone, else in single quotes (a `'` in it written `'\''`).
pub fn shell_word(path: &Path) -> String {
    let s = path.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn run(out: &Out, cli: Cli, root: &Path) -> Result<i32> {
    // `serve` runs until its client goes away: a signal ends it as usual, and recovery
    // settles a batch it interrupts.
    let interrupt = match cli.command {
        Command::Serve { .. } => None,
        _ => super::signals::install(),
    };
    let requested = || interrupt.as_ref().is_some_and(|i| i.requested());
    let j = open(
        out,
        root,
        cli.state_dir.clone(),
        &cli.command,
        interrupt.clone(),
    )?;
    // What a command run on the overlay left behind when its process was killed
    // (docs/commands.md, "Safety"): a readdir when there is nothing.
    ultra_edit::sandbox::sweep(j.state_dir());
    if requested() {
        // The signal came while recovery on open settled a batch, which finished first.
        eprintln!("ultra-edit: interrupted (recovery on open finished first)");
        return Ok(130);
    }
    let pager = paged(&cli.command)
        .then(|| Pager::start(cli.json, cli.no_pager))
        .flatten();
    let code = run_command(out, cli, root, j);
    if let Some(pager) = pager {
        pager.finish();
    }
    if code.is_ok() && requested() {
        eprintln!(
            "ultra-edit: interrupt received while the batch was replacing files: it finished first, as a batch lands whole or not at all"
        );
    }
    code
}

/// The commands whose text output can be long: diffs, the log, the journal.
fn paged(command: &Command) -> bool {
    matches!(
        command,
        Command::Preview { .. }
            | Command::Revise { .. }
            | Command::Rebase { .. }
            | Command::Revert { .. }
            | Command::Show { .. }
            | Command::Log { .. }
            | Command::Journal {
                command: JournalCommand::Dump { .. }
            }
    )
}

fn run_command(out: &Out, cli: Cli, root: &Path, mut j: Journal) -> Result<i32> {
    match cli.command {
        Command::Init => Ok(0),
        Command::Preview {
            plan,
            allow,
            run,
            cmd,
        } => sandbox::preview(out, &j, &plan, allow, run, cmd),
        Command::Revise {
            tx,
            base,
            rebase,
            plan,
            allow,
            run,
            cmd,
        } => sandbox::revise(out, &j, tx, base, rebase, &plan, allow, run, cmd),
        Command::Rebase {
            tx,
            check,
            no_check,
            timeout,
        } => sandbox::rebase(out, &j, tx, check, no_check, timeout),
        Command::Run {
            command,
            cmd,
            allow,
            lock_timeout,
        } => sandbox::run(out, &mut j, command, cmd, allow, lock_timeout),
        Command::Show {
            tx,
            revision,
            from,
            to,
        } => tx::show(out, &j, tx, revision, from, to),
        Command::Commit {
            tx,
            revision,
            lock_timeout,
            allow_owner_change,
        } => tx::commit(
            out,
            &mut j,
            tx,
            {
                let mut opts = CommitOptions::new().with_allow_owner_change(allow_owner_change);
                opts.revision = revision;
                opts
            },
            lock_timeout,
        ),
        Command::Resolve {
            tx,
            path,
            force,
            from,
            check,
            no_check,
            timeout,
        } => {
            let check = sandbox::check_to_run(out, &j, check, no_check, timeout)?;
            resolve::resolve(
                out,
                &j,
                tx,
                path.as_deref(),
                force,
                from.as_deref(),
                check.as_ref(),
            )
        }
        Command::Abort { tx } => tx::abort(out, &j, tx),
        Command::Rollback {
            tx,
            force,
            lock_timeout,
            allow_owner_change,
        } => tx::rollback(
            out,
            &mut j,
            tx,
            RollbackOptions::new()
                .with_force(force)
                .with_allow_owner_change(allow_owner_change),
            lock_timeout,
        ),
        Command::Revert {
            txs,
            agent,
            since,
            last,
        } => tx::revert(out, &j, txs, agent, since, last),
        Command::Log { limit, agent } => tx::log(out, &j, limit, agent.as_deref()),
        Command::Recover { overwrite } => recover(out, &j, overwrite),
        Command::Serve {
            preview_ttl,
            allow_commands,
        } => serve(j, preview_ttl, allow_commands),
        // Handled before the journal is opened (`cli::run`).
        Command::Help { .. } => Ok(0),
        Command::Journal { command } => journal::dispatch(out, j, root, command),
        Command::Config { command } => config::dispatch(out, &j, command),
    }
}

/// `init`: create `.ultra-edit/` in `--root` (default: the current directory), or the
/// `--state-dir` given.
fn init(out: &Out, root: Option<PathBuf>, state_dir: Option<PathBuf>) -> Result<i32> {
    let mut opts = OpenOptions::default();
    opts.state_dir = state_dir;
    let root = root.unwrap_or_else(|| PathBuf::from("."));
    // Whether a journal was there already: `init` is idempotent, and says which it
    // did (as `git init` says "Reinitialized existing").
    let journal = |dir: Option<&PathBuf>| {
        dir.cloned()
            .unwrap_or_else(|| root.join(".ultra-edit"))
            .join("journal.redb")
    };
    let existed = journal(opts.state_dir.as_ref()).is_file();
    let j = Journal::init_with(&root, opts)?;
    // A half-made journal (a cut init's) was no journal: say where it went.
    let existed = existed && j.half_made_moved_aside().is_none();
    if let Some(aside) = j.half_made_moved_aside() {
        eprintln!(
            "ultra-edit: the journal there was half-made (an init cut before it finished; it held no history): moved aside to {}",
            aside.display()
        );
    }
    if !existed {
        // A journal in a directory above: the commands run below this root now find
        // this one instead (as git finds the nearest .git), which hides that history.
        if let Some(outer) = j.root().ancestors().skip(1).find(|d| holds_journal(d)) {
            eprintln!(
                "ultra-edit: note: {} already has a journal; this new one is separate, and commands run under {} now use it instead",
                outer.display(),
                j.root().display()
            );
        }
    }
    out.init(j.root(), j.state_dir(), !existed).map(|()| 0)
}

/// Open the journal for `command`, reporting a recovery that ran on open.
fn open(
    out: &Out,
    root: &Path,
    state_dir: Option<PathBuf>,
    command: &Command,
    interrupt: Option<std::sync::Arc<ultra_edit::Interrupt>>,
) -> Result<Journal> {
    // `recover` runs recovery itself, to report it; every other command recovers on open.
    let recover_on_open = !matches!(command, Command::Recover { .. });
    let mut opts = OpenOptions::default()
        .with_recover(recover_on_open)
        .with_for_reading(reads_only(command));
    opts.state_dir = state_dir;
    opts.interrupt = interrupt;
    let j = Journal::open_with(root, opts)?;
    if let Some(report) = j.recovery_on_open() {
        out.recovered_on_open(report);
    }
    out.unrecovered(j.unrecovered(), j.root());
    Ok(j)
}

/// Whether `command` only reads the journal: then it is opened read-only when nothing
/// needs writing, and the process syncs nothing.
fn reads_only(command: &Command) -> bool {
    use super::args::JournalCommand;
    match command {
        Command::Show { .. }
        | Command::Log { .. }
        | Command::Config {
            command: super::args::ConfigCommand::Show,
        } => true,
        Command::Journal { command } => matches!(
            command,
            JournalCommand::Dump { .. } | JournalCommand::Stats | JournalCommand::Verify
        ),
        _ => false,
    }
}

/// `recover`: run recovery now and report; exit 7 if a batch needs attention.
fn recover(out: &Out, j: &Journal, overwrite: bool) -> Result<i32> {
    let report = j.recover_with(RecoverOptions::new().with_overwrite(overwrite))?;
    out.recovery(&report)?;
    if !report.needs_attention.is_empty() {
        eprintln!(
            "ultra-edit: {} batch(es) need attention: `ultra-edit recover --overwrite` writes the batch's content over each file listed with foreign bytes (the bytes found are kept in the journal), or give each of them the batch's old or new content yourself and run `ultra-edit recover` again",
            report.needs_attention.len()
        );
        return Ok(7);
    }
    Ok(0)
}

/// `serve`: the MCP server on standard input/output, until the client goes away.
fn serve(j: Journal, preview_ttl: Option<u64>, allow_commands: bool) -> Result<i32> {
    ultra_edit::mcp::serve(j, {
        let mut opts = ultra_edit::mcp::ServeOptions::new().with_allow_commands(allow_commands);
        opts.preview_ttl = preview_ttl.map(Duration::from_secs);
        opts
    })
    .map(|()| 0)
}

/// The nearest directory from the current one upwards that holds a journal, as git
/// finds `.git`; one whose `.ultra-edit/` this user may not enter counts (opening it
/// then says so: [`Error::JournalUnreadable`]). Errors: [`Error::NotInitialized`]
/// naming the current directory.
///
/// Walks up the current directory as the shell names it (`$PWD`, when it is the
/// current directory), so a root reached through a symlink is found under that name
/// and absolute plan paths under it are inside the root.
fn discover_root() -> Result<PathBuf> {
    let cwd = current_dir()?;
    cwd.ancestors()
        .find(|d| holds_journal(d))
        .map(PathBuf::from)
        .ok_or(Error::NotInitialized {
            root: cwd,
            searched_up: true,
            state_dir: None,
        })
}

/// The current directory as the shell names it: `$PWD` when it is absolute and is the
/// current directory (it may go through a symlink), else `getcwd(3)`.
pub fn current_dir() -> Result<PathBuf> {
    let real = std::env::current_dir().map_err(|source| {
        Error::Io(IoError {
            op: "getcwd",
            path: ".".into(),
            source,
        })
    })?;
    let logical = std::env::var_os("PWD")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .filter(|p| p.canonicalize().is_ok_and(|c| c == real));
    Ok(logical.unwrap_or(real))
}

/// Whether `dir` holds a journal (`.ultra-edit/journal.redb`, one `stat`), counting one
/// this user may not reach (`EACCES`): opening it then says so
/// ([`ultra_edit::Error::JournalUnreadable`]) instead of looking further up.
fn holds_journal(dir: &Path) -> bool {
    match std::fs::metadata(dir.join(STATE_DIR).join("journal.redb")) {
        Ok(md) => md.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::PermissionDenied,
    }
}
