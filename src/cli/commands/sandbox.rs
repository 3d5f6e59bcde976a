//! `preview --run`, `revise --run`, `run --`, and `--check` on preview, revise and
//! rebase: the CLI over `ultra_edit::sandbox` (docs/commands.md).

use std::time::Duration;

use ultra_edit::sandbox::{CheckOptions, Passthrough, RunOptions, DEFAULT_TIMEOUT};
use ultra_edit::{CommitOptions, Journal, PreviewOptions, Result, ReviseOptions};

use super::tx;
use crate::cli::args::CommandArgs;
use crate::cli::render::Out;

/// The command's output goes to this process's stdout and stderr; under `--json`
/// both go to stderr, so that stdout holds the JSON object alone.
fn passthrough(out: &Out) -> Passthrough {
    if out.json {
        Passthrough::Stderr
    } else {
        Passthrough::Both
    }
}

fn timeout(a: &CommandArgs) -> Duration {
    a.timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// The check to run: none under `--no-check`, else `--check CMD`, else the journal's
/// default check (`ultra-edit config check`), else none.
pub(super) fn check_to_run(
    out: &Out,
    j: &Journal,
    given: Option<String>,
    no_check: bool,
    secs: Option<f64>,
) -> Result<Option<CheckOptions>> {
    let command = match (no_check, given) {
        (true, _) => return Ok(None),
        (false, Some(c)) => c,
        (false, None) => match j.default_check()? {
            Some(c) => c,
            None => return Ok(None),
        },
    };
    Ok(Some(
        CheckOptions::new(command)
            .with_timeout(secs.map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64))
            .with_passthrough(passthrough(out)),
    ))
}

fn check_of(out: &Out, j: &Journal, a: &CommandArgs) -> Result<Option<CheckOptions>> {
    check_to_run(out, j, a.check.clone(), a.no_check, a.timeout)
}

fn run_options(
    out: &Out,
    j: &Journal,
    command: String,
    a: &CommandArgs,
    allow: &[String],
) -> Result<RunOptions> {
    let mut opts = RunOptions::new(command)
        .with_timeout(timeout(a))
        .with_keep_on_failure(a.keep_on_failure)
        .with_include_ignored(a.include_ignored)
        .with_strict(a.strict)
        .with_passthrough(passthrough(out));
    opts.check = check_of(out, j, a)?;
    opts.policy = tx::allowed(j, None, allow);
    Ok(opts)
}

/// `preview --run CMD`, or `preview --plan P --check CMD`.
pub(super) fn preview(
    out: &Out,
    j: &Journal,
    plan: &str,
    allow: Vec<String>,
    run: Option<String>,
    a: CommandArgs,
) -> Result<i32> {
    if let Some(command) = run {
        let p = j.preview_run(&run_options(out, j, command, &a, &allow)?)?;
        return tx::previewed_pub(out, &p);
    }
    match check_of(out, j, &a)? {
        Some(check) => {
            let plan = tx::read_plan_pub(j, plan, allow)?;
            let opts = PreviewOptions::new().with_refuse_nothing_to_change(true);
            tx::previewed_pub(out, &j.preview_checked(&plan, opts, &check)?)
        }
        None => tx::preview(out, j, plan, allow),
    }
}

/// `revise TX --run CMD`, or `revise TX --plan P --check CMD`.
#[allow(clippy::too_many_arguments)]
pub(super) fn revise(
    out: &Out,
    j: &Journal,
    txr: ultra_edit::TxRef,
    base: Option<u32>,
    rebase: bool,
    plan: &str,
    allow: Vec<String>,
    run: Option<String>,
    a: CommandArgs,
) -> Result<i32> {
    if let Some(command) = run {
        let p = j.revise_run(txr, &run_options(out, j, command, &a, &allow)?)?;
        return tx::revised(out, j, &p);
    }
    match check_of(out, j, &a)? {
        Some(check) => {
            let plan = tx::read_plan_pub(j, plan, allow)?;
            let p = {
                let mut opts = ReviseOptions::new().with_rebase(rebase);
                opts.base = base;
                j.revise_checked(txr, opts, &plan, &check)?
            };
            tx::revised(out, j, &p)
        }
        None => tx::revise(out, j, txr, base, rebase, plan, allow),
    }
}

/// `rebase TX --check CMD` (or with the journal's default check).
pub(super) fn rebase(
    out: &Out,
    j: &Journal,
    txr: ultra_edit::TxRef,
    check: Option<String>,
    no_check: bool,
    secs: Option<f64>,
) -> Result<i32> {
    match check_to_run(out, j, check, no_check, secs)? {
        Some(check) => tx::previewed_pub(out, &j.rebase_checked(txr, &check)?),
        None => tx::rebase(out, j, txr),
    }
}

/// A command line from `run -- WORDS`: one word as is, several quoted for `sh` and
/// joined with spaces.
pub fn command_line(words: &[String]) -> String {
    if let [one] = words {
        return one.clone();
    }
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `run -- CMD`: preview the command's writes and commit them; prints the receipt.
pub(super) fn run(
    out: &Out,
    j: &mut Journal,
    words: Vec<String>,
    a: CommandArgs,
    allow: Vec<String>,
    lock_timeout: f64,
) -> Result<i32> {
    j.set_lock_timeout(Duration::from_secs_f64(lock_timeout.clamp(0.0, 86_400.0)));
    j.set_completion_inline(true);
    j.set_detached_release(true);
    let opts = run_options(out, j, command_line(&words), &a, &allow)?;
    let p = j.preview_run(&opts)?;
    if !p.ready_to_commit {
        return tx::previewed_pub(out, &p);
    }
    let report = j.commit_report(p.tx, CommitOptions::default())?;
    j.flush()?;
    out.receipt(&report).map(|()| 0)
}
