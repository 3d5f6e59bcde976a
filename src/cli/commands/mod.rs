//! One function per subcommand: validated arguments → library call → render.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::time::Duration;

use ultra_edit::{
    CommitOptions, DumpFilter, EditError, Error, GcPolicy, IoError, Journal, JournalError,
    OpenOptions, Plan, Preview, RecoverOptions, Result, ReviseOptions, RollbackOptions, STATE_DIR,
};

use super::args::{Cli, Command, JournalCommand, Since};
use super::render::Out;

/// Run the command; `Ok` carries the exit code of a command that ran (0, or 4 for a
/// recorded revision that fails validation).
pub fn dispatch(cli: Cli) -> Result<i32> {
    let out = Out::new(cli.json);
    if let Command::Init = cli.command {
        let j = Journal::init(&cli.root.unwrap_or_else(|| PathBuf::from(".")))?;
        return out.init(j.root()).map(|()| 0);
    }
    let root = match cli.root {
        Some(root) => root,
        None => discover_root()?,
    };
    // `recover` runs recovery itself, to report it; every other command recovers on open.
    let recover_on_open = !matches!(cli.command, Command::Recover { .. });
    let opts = OpenOptions {
        recover: recover_on_open,
        ..Default::default()
    };
    let mut j = Journal::open_with(&root, opts)?;
    if let Some(report) = j.recovery_on_open() {
        out.recovered_on_open(report);
    }
    let done = match cli.command {
        Command::Init => Ok(()),
        Command::Preview { plan } => return previewed(&out, &j.preview(&read_plan(&plan)?)?),
        Command::Revise {
            tx,
            base,
            rebase,
            plan,
        } => {
            let opts = ReviseOptions { base, rebase };
            return previewed(&out, &j.revise(tx, opts, &read_plan(&plan)?)?);
        }
        Command::Rebase { tx } => return previewed(&out, &j.rebase(tx)?),
        Command::Show { tx, revision } => out.preview(&j.show(tx, revision)?),
        Command::Commit {
            tx,
            revision,
            lock_timeout,
        } => {
            j.set_lock_timeout(secs(lock_timeout));
            out.receipt(&j.commit(tx, CommitOptions { revision })?)
        }
        Command::Abort { tx } => out.aborted(&j.abort(tx)?),
        Command::Rollback {
            tx,
            force,
            lock_timeout,
        } => {
            j.set_lock_timeout(secs(lock_timeout));
            out.receipt(&j.rollback(tx, RollbackOptions { force })?)
        }
        Command::Log { limit } => out.log(&j.log(limit)?),
        Command::Recover { overwrite } => {
            let report = j.recover_with(RecoverOptions { overwrite })?;
            out.recovery(&report)?;
            if !report.needs_attention.is_empty() {
                eprintln!(
                    "ultra-edit: {} batch(es) need attention: put each listed file back as it was, or run `ultra-edit recover --overwrite` (the bytes found are kept in the journal)",
                    report.needs_attention.len()
                );
                return Ok(7);
            }
            Ok(())
        }
        Command::Serve { preview_ttl } => ultra_edit::mcp::serve(
            j,
            ultra_edit::mcp::ServeOptions {
                preview_ttl: preview_ttl.map(Duration::from_secs),
            },
        ),
        Command::Journal {
            command:
                JournalCommand::Dump {
                    tx,
                    since,
                    kind,
                    with_blobs,
                },
        } => {
            if let Some(tx) = tx {
                j.tx(tx)?; // an unknown tx is an error, not an empty dump
            }
            let (since_seq, since_ms) = match since {
                None => (0, None),
                Some(Since::Seq(seq)) => (seq, None),
                Some(Since::Ms(ms)) => (0, Some(ms)),
            };
            let filter = DumpFilter {
                tx,
                since_seq,
                since_ms,
                kinds: kind,
            };
            // A running count on a terminal's stderr while the dump goes to a file or a
            // pipe (indicatif draws nothing when stderr is not a terminal).
            let progress = (!std::io::stdout().is_terminal()).then(|| {
                indicatif::ProgressBar::new_spinner().with_message("journal dump: records written")
            });
            let done = j.dump(filter, |entry| {
                out.dump_entry(&entry, with_blobs.then_some(&j))?;
                if let Some(p) = &progress {
                    p.inc(1);
                }
                Ok(true)
            });
            if let Some(p) = progress {
                p.finish_and_clear();
            }
            done
        }
        Command::Journal {
            command:
                JournalCommand::Gc {
                    keep_last,
                    keep_days,
                    abort_open,
                },
        } => {
            let spinner = indicatif::ProgressBar::new_spinner()
                .with_message("journal gc: pruning, dropping unreferenced blobs, compacting");
            spinner.enable_steady_tick(Duration::from_millis(120));
            let report = j.gc(GcPolicy {
                keep_last,
                keep_days,
                abort_open,
            });
            spinner.finish_and_clear();
            let mut report = report?;
            // redb writes its allocator state when the handle closes, which can add a
            // few KiB: report the size a user will then see.
            drop(j);
            if let Ok(m) = std::fs::metadata(root.join(STATE_DIR).join("journal.redb")) {
                report.file_bytes_after = Some(m.len());
            }
            out.gc(&report)
        }
        Command::Journal {
            command: JournalCommand::Stats,
        } => out.stats(&j.stats()?),
        Command::Journal {
            command: JournalCommand::Verify,
        } => {
            let report = j.verify()?;
            out.verify(&report);
            match report.problems.len() {
                0 => Ok(()),
                problems => Err(JournalError::Damaged { problems }.into()),
            }
        }
    };
    done.map(|()| 0)
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
        .ok_or(Error::NotInitialized { root: cwd })
}

/// Print a new revision. It is recorded either way, but one whose validation has
/// errors exits 4 (validation failed) so that a script does not go on to commit it.
fn previewed(out: &Out, p: &Preview) -> Result<i32> {
    out.preview(p)?;
    if p.ready_to_commit {
        return Ok(0);
    }
    eprintln!(
        "ultra-edit: tx {} revision {} has validation errors; fix them with `ultra-edit revise {}`",
        p.tx, p.revision, p.tx
    );
    Ok(4)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.0, 86_400.0))
}

/// Read a plan from a file or `-` (standard input) and parse it.
fn read_plan(src: &str) -> Result<Plan> {
    if src == "-" && std::io::stdin().is_terminal() {
        return Err(EditError::InvalidPlan {
            message: "no edit plan: pass --plan FILE, or pipe the plan's JSON on standard input"
                .into(),
        }
        .into());
    }
    let mut bytes = Vec::new();
    let res = if src == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(src).map(|b| bytes = b)
    };
    res.map_err(|source| {
        Error::Io(IoError {
            op: "read plan",
            path: src.into(),
            source,
        })
    })?;
    Ok(Plan::from_json(&bytes)?)
}
