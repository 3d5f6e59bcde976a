//! `journal dump`, `journal gc`, `journal stats` and `journal verify`.

use std::path::Path;
use std::time::Duration;

use ultra_edit::{DumpFilter, GcPolicy, Journal, JournalError, Result, STATE_DIR};

use crate::cli::args::{JournalCommand, Since};
use crate::cli::render::Out;

pub(super) fn dispatch(out: &Out, j: Journal, root: &Path, command: JournalCommand) -> Result<i32> {
    match command {
        JournalCommand::Dump {
            tx,
            since,
            kind,
            with_blobs,
            with_diffs,
        } => dump(out, &j, tx, since, kind, (with_blobs, with_diffs)),
        JournalCommand::Gc {
            keep_last,
            keep_days,
            abort_open,
            dry_run,
        } => gc(
            out,
            j,
            root,
            GcPolicy {
                keep_last,
                keep_days,
                abort_open,
                dry_run,
            },
        ),
        JournalCommand::Stats => out.stats(&j.stats()?).map(|()| 0),
        JournalCommand::Verify => verify(out, &j),
    }
}

/// Every record, in order, optionally of one tx, from a point in the log, of some kinds.
fn dump(
    out: &Out,
    j: &Journal,
    tx: Option<ultra_edit::TxRef>,
    since: Option<Since>,
    kinds: Vec<String>,
    (with_blobs, with_diffs): (bool, bool),
) -> Result<i32> {
    // An unknown tx is an error, not an empty dump.
    let tx = tx.map(|tx| j.tx(tx).map(|rec| rec.tx.into())).transpose()?;
    let (since_seq, since_ms) = match since {
        None => (0, None),
        Some(Since::Seq(seq)) => (seq, None),
        Some(Since::Ms(ms)) => (0, Some(ms)),
    };
    let mut filter = DumpFilter::new()
        .with_since_seq(since_seq)
        .with_kinds(kinds);
    filter.tx = tx;
    filter.since_ms = since_ms;
    // A running count on a terminal's stderr while the dump goes to a file or a
    // pipe (indicatif draws nothing when stderr is not a terminal).
    let progress = (!out.on_terminal()).then(|| {
        indicatif::ProgressBar::new_spinner().with_message("journal dump: records written")
    });
    let done = j.dump(filter, |entry| {
        out.dump_entry(&entry, with_blobs.then_some(j), with_diffs)?;
        if let Some(p) = &progress {
            p.inc(1);
        }
        Ok(true)
    });
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    done.map(|()| 0)
}

/// Prune by `policy`, then report the journal's size after the handle closed.
fn gc(out: &Out, mut j: Journal, root: &Path, policy: GcPolicy) -> Result<i32> {
    let spinner = indicatif::ProgressBar::new_spinner()
        .with_message("journal gc: pruning, dropping unreferenced blobs, compacting");
    spinner.enable_steady_tick(Duration::from_millis(120));
    let report = j.gc(policy);
    spinner.finish_and_clear();
    let mut report = report?;
    if report.dry_run {
        return out.gc(&report).map(|()| 0);
    }
    // redb writes its allocator state when the handle closes, which can add a
    // few KiB: report the size a user will then see.
    drop(j);
    if let Ok(m) = std::fs::metadata(root.join(STATE_DIR).join("journal.redb")) {
        report.file_bytes_after = Some(m.len());
    }
    out.gc(&report).map(|()| 0)
}

/// Print the report; any problem is an error (exit 1).
fn verify(out: &Out, j: &Journal) -> Result<i32> {
    let report = j.verify()?;
    out.verify(&report);
    match report.problems.len() {
        0 => Ok(0),
        problems => Err(JournalError::Damaged { problems }.into()),
    }
}
