//! One function per subcommand: validated arguments → library call → render.

use std::io::Read;
use std::time::Duration;

use ultra_edit::{
    CommitOptions, DumpFilter, Error, IoError, Journal, JournalError, OpenOptions, Plan, Result,
    RollbackOptions,
};

use super::args::{Cli, Command, JournalCommand};
use super::render::Out;

pub fn dispatch(cli: Cli) -> Result<()> {
    let out = Out::new(cli.json);
    let root = cli.root;
    if let Command::Init = cli.command {
        let j = Journal::init(&root)?;
        return out.init(j.root());
    }
    // `recover` runs recovery itself, to report it; every other command recovers on open.
    let recover_on_open = !matches!(cli.command, Command::Recover);
    let opts = OpenOptions {
        recover: recover_on_open,
        ..Default::default()
    };
    let mut j = Journal::open_with(&root, opts)?;
    if let Some(report) = j.recovery_on_open() {
        out.recovered_on_open(report);
    }
    match cli.command {
        Command::Init => Ok(()),
        Command::Preview { plan } => out.preview(&j.preview(&read_plan(&plan)?)?),
        Command::Revise { tx, base, plan } => {
            out.preview(&j.revise(tx, base, &read_plan(&plan)?)?)
        }
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
        Command::Recover => out.recovery(&j.recover()?),
        Command::Journal {
            command:
                JournalCommand::Dump {
                    tx,
                    since,
                    with_blobs,
                },
        } => {
            let filter = DumpFilter {
                tx,
                since_seq: since,
            };
            j.dump(filter, |entry| {
                out.dump_entry(&entry, with_blobs.then_some(&j))?;
                Ok(true)
            })
        }
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
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.0, 86_400.0))
}

/// Read a plan from a file or `-` (standard input) and parse it.
fn read_plan(src: &str) -> Result<Plan> {
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
