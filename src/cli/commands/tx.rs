//! The transaction verbs: preview, revise, rebase, show, commit, abort, rollback,
//! revert, log.

use std::io::{IsTerminal, Read};
use std::time::Duration;

use ultra_edit::{
    AgentRange, CommitOptions, EditError, Error, IoError, Journal, Plan, Preview, PreviewOptions,
    Result, RevertOptions, ReviseOptions, RollbackOptions,
};

use crate::cli::progress;
use crate::cli::render::Out;

/// `preview`: a plan that changes nothing is refused and records nothing
/// ([`Error::NothingToChange`], exit 4), as `git commit` refuses an empty commit.
pub(super) fn preview(out: &Out, j: &Journal, plan: &str, allow: Vec<String>) -> Result<i32> {
    let opts = PreviewOptions::new().with_refuse_nothing_to_change(true);
    let plan = read_plan(j, plan, allow)?;
    let p = progress::with(
        format!("preview: building {} edit(s)", plan.edits.len()),
        || j.preview_with(&plan, opts),
    )?;
    previewed(out, &p)
}

pub(super) fn revise(
    out: &Out,
    j: &Journal,
    tx: ultra_edit::TxRef,
    base: Option<u32>,
    rebase: bool,
    plan: &str,
    allow: Vec<String>,
) -> Result<i32> {
    let mut opts = ReviseOptions::new().with_rebase(rebase);
    opts.base = base;
    let plan = read_plan(j, plan, allow)?;
    let p = progress::with(format!("revise tx {tx}: building the revision"), || {
        j.revise(tx, opts, &plan)
    })?;
    // What this revision changed relative to the one before it.
    let d = j.interdiff(tx, p.revision.saturating_sub(1), p.revision)?;
    let failed = not_ready(&p);
    out.revised(&p, &d, json_error(&failed))?;
    exit_for(out, &p, failed)
}

pub(super) fn rebase(out: &Out, j: &Journal, tx: ultra_edit::TxRef) -> Result<i32> {
    previewed(out, &j.rebase(tx)?)
}

/// `show TX [--revision N]` (default: the committed revision of a committed tx, else
/// the latest), or with `--from`/`--to` the interdiff (`--from` alone: to the latest;
/// `--to` alone: from the revision before it).
pub(super) fn show(
    out: &Out,
    j: &Journal,
    tx: ultra_edit::TxRef,
    revision: Option<u32>,
    from: Option<u32>,
    to: Option<u32>,
) -> Result<i32> {
    if from.is_none() && to.is_none() {
        return out.preview(&j.show(tx, revision)?).map(|()| 0);
    }
    let to = match to {
        Some(to) => to,
        None => j.show(tx, None)?.latest_revision,
    };
    let from = from.unwrap_or(to.saturating_sub(1));
    out.interdiff(&j.interdiff(tx, from, to)?).map(|()| 0)
}

pub(super) fn commit(
    out: &Out,
    j: &mut Journal,
    tx: ultra_edit::TxRef,
    opts: CommitOptions,
    lock_timeout: f64,
) -> Result<i32> {
    j.set_lock_timeout(secs(lock_timeout));
    // It flushes right after: no thread for the completion; and exits right after:
    // a large replaced file is freed by a detached child, not before the receipt.
    j.set_completion_inline(true);
    j.set_detached_release(true);
    let report = progress::with(format!("commit tx {tx}: writing the files"), || {
        let report = j.commit_report(tx, opts)?;
        // The completion is written in the background: the receipt is printed only
        // once it is durable (docs/commit-protocol.md, step 7).
        j.flush()?;
        Ok::<_, Error>(report)
    })?;
    out.receipt(&report).map(|()| 0)
}

pub(super) fn abort(out: &Out, j: &Journal, tx: ultra_edit::TxRef) -> Result<i32> {
    out.aborted(&j.abort(tx)?).map(|()| 0)
}

pub(super) fn rollback(
    out: &Out,
    j: &mut Journal,
    tx: ultra_edit::TxRef,
    opts: RollbackOptions,
    lock_timeout: f64,
) -> Result<i32> {
    j.set_lock_timeout(secs(lock_timeout));
    // It flushes right after: no thread for the completion; and exits right after:
    // a large replaced file is freed by a detached child, not before the receipt.
    j.set_completion_inline(true);
    j.set_detached_release(true);
    let report = progress::with(format!("rollback tx {tx}: restoring the files"), || {
        let report = j.rollback_report(tx, opts)?;
        j.flush()?;
        Ok::<_, Error>(report)
    })?;
    let overwritten = j.overwritten(&report.receipt)?;
    out.rollback(&report, &overwritten).map(|()| 0)
}

/// `log [--agent A]`: exit 0 whenever the history was listed; batches that need
/// attention are data (`needs_attention` in `--json`, `[batch needs_attention]` on the
/// tx's line), not an exit code (docs/design.md, "CLI contract").
pub(super) fn log(
    out: &Out,
    j: &Journal,
    limit: Option<usize>,
    agent: Option<&str>,
) -> Result<i32> {
    out.log(
        &j.log_of(limit, agent)?,
        &j.needs_attention()?,
        limit,
        agent,
    )
    .map(|()| 0)
}

/// `revert TX…` or `revert --agent A [--since TIME | --last N]`: the new tx's revision
/// 0, printed as `preview` prints one (exit 4 when it conflicts).
pub(super) fn revert(
    out: &Out,
    j: &Journal,
    txs: Vec<ultra_edit::TxRef>,
    agent: Option<String>,
    since_ms: Option<u64>,
    last: Option<usize>,
) -> Result<i32> {
    let p = match agent {
        Some(a) => j.revert_agent(
            &a,
            AgentRange::all().with_since_ms(since_ms).with_last(last),
            RevertOptions::new(),
        )?,
        None => j.revert(&txs, RevertOptions::default())?,
    };
    previewed(out, &p)
}

/// Print a new revision. It is recorded either way, but one whose validation has
/// errors exits 4 (validation failed) so that a script does not go on to commit it.
pub(super) fn previewed_pub(out: &Out, p: &Preview) -> Result<i32> {
    previewed(out, p)
}

pub(super) fn revised(out: &Out, j: &Journal, p: &Preview) -> Result<i32> {
    let d = j.interdiff(p.tx, p.revision.saturating_sub(1), p.revision)?;
    let failed = not_ready(p);
    out.revised(p, &d, json_error(&failed))?;
    exit_for(out, p, failed)
}

pub(super) fn previewed(out: &Out, p: &Preview) -> Result<i32> {
    let failed = not_ready(p);
    out.made(p, json_error(&failed))?;
    exit_for(out, p, failed)
}

/// A revision that is not ready: the error a commit would be refused with
/// ([`Error::ValidationFailed`]) and the sentence that says what to do, which goes to
/// standard error and, under `--json`, is the error object's `hint`.
struct NotReady {
    error: Error,
    hint: String,
}

fn json_error(failed: &Option<NotReady>) -> Option<serde_json::Value> {
    failed
        .as_ref()
        .map(|f| crate::cli::render::error_object(&f.error, Some(&f.hint), "ultra-edit"))
}

fn not_ready(p: &Preview) -> Option<NotReady> {
    if p.ready_to_commit {
        return None;
    }
    let error = p.validation_error().unwrap_or(Error::ValidationFailed {
        tx: p.tx,
        revision: p.revision,
        summary: Vec::new(),
    });
    let check_failed = p
        .validation
        .iter()
        .any(|i| i.code == "check_failed" && i.severity == ultra_edit::Severity::Error);
    let how = if check_failed {
        // A check's verdict is recorded with the revision, so the step that runs is a
        // new revision: one that changes the candidate and checks it again, or one
        // made with the failure allowed (the commit then lets it through).
        format!(
            "`ultra-edit revise {tx} --plan FIX.json --check CMD` (or `--run CMD --check CMD`) to change the candidate and check it again; to commit despite the failing check, make the revision with `--allow check_failed`",
            tx = p.tx
        )
    } else if p.conflict_list.is_empty() {
        format!("`ultra-edit revise {}`", p.tx)
    } else {
        format!(
            "`ultra-edit resolve {}` (in an editor) or `ultra-edit revise {}`",
            p.tx, p.tx
        )
    };
    let changes_nothing = p
        .validation
        .iter()
        .any(|i| i.code == "no_changes" && i.severity == ultra_edit::Severity::Error);
    let hint = if changes_nothing {
        // Not "fix and commit": there is nothing to commit (issue 29, item 8).
        format!(
            "tx {} revision {} changes nothing (the files hold its candidate already), so there is nothing to commit; drop it with `ultra-edit abort {}`, or revise it with a new plan",
            p.tx, p.revision, p.tx
        )
    } else {
        format!(
            "tx {} revision {} has validation errors; fix them with {how}",
            p.tx, p.revision
        )
    };
    Some(NotReady { error, hint })
}

/// 0 for a revision ready to commit; else 4, with its validation errors (text output)
/// and the next step on standard error.
fn exit_for(out: &Out, p: &Preview, failed: Option<NotReady>) -> Result<i32> {
    let Some(failed) = failed else {
        return Ok(0);
    };
    eprint!("{}", out.validation_errors(p));
    eprintln!("ultra-edit: {}", failed.hint);
    Ok(4)
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.0, 86_400.0))
}

/// The [`IoError::op`] of a plan file that cannot be read (its hint:
/// [`crate::cli::advice::hint`]).
pub const READ_PLAN: &str = "read plan";

/// Read a plan from a file or `-` (standard input) and parse it. `allow` (the
/// command's `--allow` codes, which clap checked are `syntax_error`,
/// [`crate::cli::args::parse_allow`]) sets [`ultra_edit::Policy::syntax_errors`] to
/// allow in the plan's policy (the plan's own `"policy"`, else the journal's).
pub(super) fn read_plan_pub(j: &Journal, src: &str, allow: Vec<String>) -> Result<Plan> {
    read_plan(j, src, allow)
}

fn read_plan(j: &Journal, src: &str, allow: Vec<String>) -> Result<Plan> {
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
            op: READ_PLAN,
            path: src.into(),
            source,
        })
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        // serde_json would say "EOF while parsing a value at line 1 column 0".
        return Err(EditError::InvalidPlan {
            message: format!(
                "the plan is empty: {} held no JSON",
                if src == "-" { "standard input" } else { src }
            ),
        }
        .into());
    }
    let mut plan = Plan::from_json(&bytes)?;
    plan.policy = allowed(j, plan.policy, &allow);
    Ok(plan)
}

/// The policy with the `--allow` codes set to allow (`syntax_error`, `check_failed`);
/// `given` unchanged when there are none.
pub(super) fn allowed(
    j: &Journal,
    given: Option<ultra_edit::Policy>,
    allow: &[String],
) -> Option<ultra_edit::Policy> {
    if allow.is_empty() {
        return given;
    }
    let mut policy = given.unwrap_or(j.policy());
    for a in allow {
        match a.as_str() {
            "syntax_error" => policy.syntax_errors = ultra_edit::SyntaxErrors::Allow,
            "check_failed" => policy.check_failed = ultra_edit::Checks::Allow,
            _ => {}
        }
    }
    Some(policy)
}
