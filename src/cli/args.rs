//! Arguments, as clap sees them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::color::ColorWhen;

/// Transactional file edits: preview, revise, commit, roll back — journaled and crash-safe.
#[derive(Parser, Debug)]
#[command(
    name = "ultra-edit",
    version,
    about,
    disable_help_subcommand = true,
    after_help = "`ultra-edit help plan` describes the edit plan format (ops, fields, examples)."
)]
pub struct Cli {
    /// Workspace root. Default: the nearest directory, from the current one upwards,
    /// that holds .ultra-edit/ (the current directory for `init`).
    #[arg(long, global = true)]
    pub root: Option<PathBuf>,
    /// Keep the journal and the commit lock in DIR instead of ROOT/.ultra-edit/ (where
    /// an embedder keeps them, OpenOptions::state_dir; docs/embedding.md). Needs
    /// --root; DIR serves that root only.
    #[arg(long, global = true, value_name = "DIR", requires = "root")]
    pub state_dir: Option<PathBuf>,
    /// Print one JSON object (JSON lines for `journal dump`) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Colour the text output: auto (on a terminal, unless NO_COLOR; CLICOLOR_FORCE
    /// forces it), always, or never. --json output is never coloured.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
    /// Do not page the output (by default, long text output on a terminal goes
    /// through $ULTRA_EDIT_PAGER, else $PAGER, else `less -FRX`).
    #[arg(long, global = true)]
    pub no_pager: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// A transaction: its number in the journal at hand, as printed in the `tx` field (`7`;
/// `tx-7` is accepted too), or its handle, as printed in the `handle` field
/// (`3f9a2c1b7d4e8a60-7`), which another journal refuses.
pub fn parse_tx(s: &str) -> Result<ultra_edit::TxRef, String> {
    s.parse().map_err(|_| {
        format!("{s:?} is not a transaction id (a number, as printed in the `tx` field, or a handle like 3f9a2c1b7d4e8a60-7, as printed in the `handle` field)")
    })
}

/// `--allow CODE`: only `syntax_error`; anything else is a usage error that says what
/// allows the rest.
pub fn parse_allow(s: &str) -> Result<String, String> {
    if s == "syntax_error" || s == "check_failed" {
        return Ok(s.into());
    }
    Err(
        "not a validation error --allow can allow; those are syntax_error and check_failed (a merge \
         conflict must be resolved; conflict markers and an empty revision must be fixed, \
         or allowed by a policy: the plan's own \"policy\" field, see `ultra-edit help \
         plan`, or the journal's)"
            .into(),
    )
}

/// `--timeout` of a command or a check: seconds, more than 0 and at most 86 400 (a
/// day). 0 is refused: it would kill the command before it starts and record nothing,
/// which no caller means (MCP's `timeout_secs` starts at 1 for the same reason).
pub fn parse_run_timeout(s: &str) -> Result<f64, String> {
    match parse_lock_timeout(s) {
        Ok(secs) if secs > 0.0 => Ok(secs),
        _ => Err(format!(
            "{s:?} is not a number of seconds above 0 and at most 86400 (e.g. 600 or 0.5)"
        )),
    }
}

/// `--lock-timeout`: seconds, a finite number from 0 to 86 400 (a day); anything else
/// (`nan`, `-5`, `inf`) is a usage error rather than a wait of some other length.
pub fn parse_lock_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(secs) if (0.0..=86_400.0).contains(&secs) => Ok(secs),
        _ => Err(format!(
            "{s:?} is not a number of seconds from 0 to 86400 (e.g. 10 or 0.5)"
        )),
    }
}

/// Where `journal dump --since` starts.
#[derive(Debug, Clone, Copy)]
pub enum Since {
    /// An event sequence number.
    Seq(u64),
    /// A time, in ms since the Unix epoch.
    Ms(u64),
}

/// `--since`: an event seq (digits); an RFC 3339 time (`2026-11-30T08:00:00Z`, or with a
/// space and no zone, read as UTC); a date (`2026-11-30`, its midnight UTC); or a
/// duration back from now in humantime's words (`10m`, `2h`, `3days`, `1week`, with or
/// without a trailing `ago`, as git's `--since=2.weeks` reads). Anything else is a usage
/// error that names the four forms.
pub fn parse_since(s: &str) -> Result<Since, String> {
    since_at(s, std::time::SystemTime::now())
}

/// `revert --since`: [`parse_since`]'s time forms, in ms since the Unix epoch (an
/// event seq is not a time here). Anything else, a bare number too, is refused with
/// one wording that names the accepted forms ([`not_a_time`]).
pub fn parse_since_time(s: &str) -> Result<u64, String> {
    since_time_at(s, std::time::SystemTime::now())
}

fn since_time_at(s: &str, now: std::time::SystemTime) -> Result<u64, String> {
    match since_at(s, now) {
        Ok(Since::Ms(ms)) => Ok(ms),
        Ok(Since::Seq(_)) | Err(_) => Err(not_a_time(s)),
    }
}

/// The refusal of a `revert --since` value: what is accepted, with examples.
fn not_a_time(s: &str) -> String {
    format!(
        "{s:?} is not a time: give an RFC 3339 time, a date (from its midnight UTC) or a duration ago with its unit (a bare number is none); e.g. 2026-11-30T08:00:00Z, 2026-11-30, 10m or 2h ago"
    )
}

fn since_at(s: &str, now: std::time::SystemTime) -> Result<Since, String> {
    if let Ok(seq) = s.parse::<u64>() {
        return Ok(Since::Seq(seq));
    }
    let t = humantime::parse_rfc3339_weak(s)
        .or_else(|_| humantime::parse_rfc3339_weak(&format!("{s} 00:00:00")))
        .ok()
        .or_else(|| {
            let ago = s.trim().trim_end_matches("ago").trim_end();
            now.checked_sub(humantime::parse_duration(ago).ok()?)
        })
        .ok_or_else(|| {
            format!("{s:?} is not an event seq, an RFC 3339 time, a date or a duration ago; e.g. 120, 2026-11-30T08:00:00Z, 2026-11-30 or 10m")
        })?;
    let ms = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    Ok(Since::Ms(ms))
}

/// The options of a command run on the root's overlay (`--run`, `run`) and of a check
/// (`--check`): docs/commands.md.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommandArgs {
    /// Run CMD on an overlay view of the disk with the new candidate applied and
    /// throw away what it writes: exit 0 records `check_passed`, anything else the
    /// validation error `check_failed`, which blocks `commit` (unless the revision
    /// was made with --allow check_failed: the verdict is recorded with it).
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// Run no check, not even the journal's default check (`ultra-edit config check`).
    #[arg(long, conflicts_with = "check")]
    pub no_check: bool,
    /// Seconds the command (and the check, each) may run before it is killed and
    /// nothing is recorded (default 600).
    #[arg(long, value_name = "SECS", value_parser = parse_run_timeout)]
    pub timeout: Option<f64>,
    /// Record what a command that exits non-zero wrote (default: nothing is
    /// recorded, error command_failed, exit 8).
    #[arg(long)]
    pub keep_on_failure: bool,
    /// Keep the paths the repository's .gitignore files and .git/info/exclude ignore
    /// (default: dropped and counted).
    #[arg(long)]
    pub include_ignored: bool,
    /// Refuse a command that wrote under .git/, .jj/, .hg/, .svn/ or the state
    /// directory (default: those writes are dropped with a warning).
    #[arg(long)]
    pub strict: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create .ultra-edit/ (journal, commit lock, a .gitignore inside).
    Init,
    /// Start a new transaction from an edit plan: revision 0. Exits 4 if the preview's
    /// validation has errors (the tx is still recorded), and 4 too, recording nothing,
    /// if the plan changes nothing (nothing_to_change). `ultra-edit help plan`
    /// describes the plan format.
    Preview {
        /// Edit plan JSON file, or - for standard input (default: standard input).
        #[arg(long, default_value = "-")]
        plan: String,
        /// A validation error this revision may have without blocking `commit` (recorded
        /// as a warning): `syntax_error` (the plan's policy `"syntax_errors": "allow"`)
        /// or `check_failed` (`"check_failed": "allow"`).
        #[arg(long = "allow", value_name = "CODE", value_parser = parse_allow)]
        allow: Vec<String>,
        /// Instead of a plan, run CMD (`sh -c CMD`) on a copy-on-write view of the
        /// root and preview what it wrote there (docs/commands.md). Writes outside
        /// the root are neither captured nor prevented.
        #[arg(long, value_name = "CMD", conflicts_with = "plan")]
        run: Option<String>,
        #[command(flatten)]
        cmd: CommandArgs,
    },
    /// Add a revision to TX: a plan applied to the latest revision's candidates
    /// (`ultra-edit help plan`). Prints what it changed since the previous revision;
    /// `show TX` prints the whole change.
    Revise {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// The revision the plan was written against (default: the latest). An older
        /// one is refused (exit 3) unless --rebase.
        #[arg(long)]
        base: Option<u32>,
        /// Apply a plan written against an older --base and merge it onto the latest.
        #[arg(long, requires = "base")]
        rebase: bool,
        /// Edit plan JSON file, or - for standard input.
        #[arg(long, default_value = "-")]
        plan: String,
        /// A validation error this revision may have without blocking `commit` (recorded
        /// as a warning): `syntax_error` or `check_failed`.
        #[arg(long = "allow", value_name = "CODE", value_parser = parse_allow)]
        allow: Vec<String>,
        /// Instead of a plan, run CMD (`sh -c CMD`) on a copy-on-write view of the
        /// root with the latest revision's candidates applied, and record what it
        /// changed as the next revision. Writes outside the root are neither captured
        /// nor prevented.
        #[arg(long, value_name = "CMD", conflicts_with_all = ["plan", "base", "rebase"])]
        run: Option<String>,
        #[command(flatten)]
        cmd: CommandArgs,
    },
    /// Show a revision: snapshots, candidate diff (the whole change against the
    /// snapshot), conflicts, validation. With --from/--to: the interdiff, what revision
    /// N changed relative to revision M.
    Show {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// Revision (default: the one committed, for a committed tx; else the latest).
        #[arg(long, conflicts_with_all = ["from", "to"])]
        revision: Option<u32>,
        /// Interdiff from revision M (default with --to N: N - 1).
        #[arg(long, value_name = "M")]
        from: Option<u32>,
        /// Interdiff to revision N (default with --from: the latest).
        #[arg(long, value_name = "N")]
        to: Option<u32>,
    },
    /// Apply a revision to the disk, all files or none; prints the receipt.
    Commit {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// Revision (default: the latest).
        #[arg(long)]
        revision: Option<u32>,
        /// Seconds to wait for the commit lock (0 to 86400; fractions allowed).
        #[arg(long, default_value_t = 10.0, value_parser = parse_lock_timeout)]
        lock_timeout: f64,
        /// Accept that files this process cannot give back their owner (when not root)
        /// get its owner instead.
        #[arg(long)]
        allow_owner_change: bool,
    },
    /// Rebase a stale preview onto the disk: a new revision whose snapshot is the disk
    /// and whose candidate is the three-way merge. Exits 4 if it conflicts.
    Rebase {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// Run CMD on the rebased candidate (see `preview --check`; default: the
        /// journal's default check, `ultra-edit config check`).
        #[arg(long, value_name = "CMD")]
        check: Option<String>,
        /// Run no check, not even the journal's default check.
        #[arg(long, conflicts_with = "check")]
        no_check: bool,
        /// Seconds the check may run (default 600).
        #[arg(long, value_name = "SECS", value_parser = parse_run_timeout)]
        timeout: Option<f64>,
    },
    /// Run CMD on a copy-on-write view of the root, preview what it wrote there and
    /// commit it in one step; prints the receipt (the tx rolls back as any other).
    /// One word after `--` is a command line as is; several are quoted for the shell
    /// and joined. Writes outside the root are neither captured nor prevented.
    /// Exits 8 if the command fails, 4 if the revision has validation errors (the
    /// tx stays open, uncommitted).
    Run {
        /// The command: `run -- 'sed -i s/a/b/ f'` or `run -- sed -i s/a/b/ f`.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
        #[command(flatten)]
        cmd: CommandArgs,
        /// A validation error the revision may have without blocking the commit:
        /// `syntax_error` or `check_failed`.
        #[arg(long = "allow", value_name = "CODE", value_parser = parse_allow)]
        allow: Vec<String>,
        /// Seconds to wait for the commit lock (0 to 86400; fractions allowed).
        #[arg(long, default_value_t = 10.0, value_parser = parse_lock_timeout)]
        lock_timeout: f64,
    },
    /// Edit TX's candidates in an editor ($VISUAL, else $EDITOR, else vi) and record
    /// the saved files as a new revision: PATH alone, else the files a rebase left
    /// conflict markers in, else every file the revision changes. Nothing is recorded
    /// if the editor fails or leaves the files unchanged, or while conflict markers
    /// remain (exit 4) unless --force; edited copies that were not recorded are kept,
    /// and a note says how to open them again (--from).
    Resolve {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// One file of the latest revision (root-relative).
        path: Option<String>,
        /// Record the files even if conflict markers remain (the revision then fails
        /// validation until a later one removes them).
        #[arg(long)]
        force: bool,
        /// Open the copies an earlier resolve kept in DIR (it says so when it records
        /// nothing although you edited): your edits, not the candidates again. DIR
        /// is removed once they are recorded.
        #[arg(long, value_name = "DIR")]
        from: Option<std::path::PathBuf>,
        /// Run CMD on the resolved candidate (see `preview --check`; default: the
        /// journal's default check, `ultra-edit config check`).
        #[arg(long, value_name = "CMD")]
        check: Option<String>,
        /// Run no check, not even the journal's default check.
        #[arg(long, conflicts_with = "check")]
        no_check: bool,
        /// Seconds the check may run (default 600).
        #[arg(long, value_name = "SECS", value_parser = parse_run_timeout)]
        timeout: Option<f64>,
    },
    /// Abort an open transaction (one aborted already: nothing changes, exit 0).
    Abort {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
    },
    /// Restore the exact pre-commit state of TX's files, as a new transaction.
    Rollback {
        /// Transaction id.
        #[arg(value_parser = parse_tx)]
        tx: ultra_edit::TxRef,
        /// Overwrite files changed since the commit (their bytes are kept in the journal).
        #[arg(long)]
        force: bool,
        /// Seconds to wait for the commit lock (0 to 86400; fractions allowed).
        #[arg(long, default_value_t = 10.0, value_parser = parse_lock_timeout)]
        lock_timeout: f64,
        /// Accept that files this process cannot give back their owner (when not root)
        /// get its owner instead.
        #[arg(long)]
        allow_owner_change: bool,
    },
    /// Undo committed transactions and keep everyone else's work: a new transaction (a
    /// preview) whose candidate removes TX's change from the files as they are now, by
    /// a three-way merge per file (base: what TX wrote; ours: the disk; theirs: what
    /// the file held before TX). Several TXs (or --agent) are reverted newest first
    /// into one candidate. Review it with `show`, fix conflicts with `resolve`, apply
    /// it with `commit`. Exits 4 if it conflicts.
    Revert {
        /// Transactions to revert (ids or handles).
        #[arg(value_parser = parse_tx, required_unless_present = "agent", conflicts_with_all = ["agent", "since", "last"])]
        txs: Vec<ultra_edit::TxRef>,
        /// Revert every committed transaction of this agent (rollbacks and reverts
        /// are not counted), newest first.
        #[arg(long, value_name = "A")]
        agent: Option<String>,
        /// With --agent: only transactions created at or after TIME (RFC 3339, e.g.
        /// 2026-11-30T08:00:00Z; a date, from midnight UTC; or a duration ago: 10m, 2h).
        #[arg(long, value_name = "TIME", requires = "agent", conflicts_with = "last", value_parser = parse_since_time)]
        since: Option<u64>,
        /// With --agent: only its N newest committed transactions.
        #[arg(long, value_name = "N", requires = "agent")]
        last: Option<usize>,
    },
    /// One line per transaction, newest first.
    Log {
        /// At most N transactions (0: none, as `git log -n 0`).
        #[arg(long, value_name = "N")]
        limit: Option<usize>,
        /// Only the transactions of this agent.
        #[arg(long, value_name = "A")]
        agent: Option<String>,
    },
    /// Run recovery now and report what it did.
    Recover {
        /// Settle batches that need attention by overwriting the foreign bytes (they are
        /// stored in the journal first).
        #[arg(long)]
        overwrite: bool,
    },
    /// The journal's settings: `config check CMD` stores a default check that
    /// preview, revise, rebase, resolve and run use when no --check is given
    /// (--no-check skips it); `config check --unset` removes it; `config show` prints
    /// the settings.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Inspect the journal.
    Journal {
        #[command(subcommand)]
        command: JournalCommand,
    },
    /// Help: `help plan` for the edit plan format (ops, fields, examples, the rules of
    /// bases and occurrences), `help COMMAND…` for a command.
    Help {
        /// `plan`, or a command (`preview`, `journal dump`, …).
        topic: Vec<String>,
    },
    /// MCP server on stdio (m1nd-compatible edit tools).
    Serve {
        /// Refuse to commit, revise or rebase a preview older than SECS (default: no
        /// limit, previews are durable).
        #[arg(long)]
        preview_ttl: Option<u64>,
        /// Let clients run shell commands in the workspace's sandbox: the edit_run
        /// tool and the check argument of edit_preview, edit_revise and edit_rebase
        /// (docs/commands.md). Without it they are not listed and a call is refused
        /// (commands_not_allowed). A command's writes outside the root are neither
        /// captured nor prevented.
        #[arg(long)]
        allow_commands: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Store CMD as the journal's default check (`sh -c CMD` on each new candidate,
    /// docs/commands.md), or remove it with --unset. Nothing is run now.
    Check {
        /// The check command line.
        #[arg(
            value_name = "CMD",
            required_unless_present = "unset",
            conflicts_with = "unset"
        )]
        command: Option<String>,
        /// Remove the default check.
        #[arg(long)]
        unset: bool,
    },
    /// Print the journal's settings (`check: …`, or `check: (none)`).
    Show,
}

#[derive(Subcommand, Debug)]
pub enum JournalCommand {
    /// Every record, in journal order.
    Dump {
        /// Only records about this transaction.
        #[arg(long, value_parser = parse_tx)]
        tx: Option<ultra_edit::TxRef>,
        /// Start at an event sequence number (e.g. 120), a time (RFC 3339, e.g.
        /// 2026-11-30T08:00:00Z; UTC), a date (2026-11-30, from midnight UTC) or a
        /// duration ago (10m, 2h, 3days).
        #[arg(long, value_parser = parse_since)]
        since: Option<Since>,
        /// Only events of these kinds (repeatable): tx_created, revision_recorded,
        /// blob_stored, batch_state, receipt_issued, tx_aborted, gc, recovery.
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(ultra_edit::EventKind::NAMES))]
        kind: Vec<String>,
        /// Print blob contents (text inline, binary as base64).
        #[arg(long)]
        with_blobs: bool,
        /// Print each revision's diffs in the text output (by default a revision shows
        /// its files and line counts; --json always carries the diffs).
        #[arg(long)]
        with_diffs: bool,
    },
    /// Check blobs, hashes, references and the batch state machine; non-zero on damage.
    Verify,
    /// Drop old revisions and the blobs only they need, then compact the file.
    /// A keep rule (--keep-last or --keep-days) is needed, --dry-run too: without
    /// one the command is refused with `invalid_policy`, naming the two rules.
    #[command(group(clap::ArgGroup::new("policy").multiple(true)))]
    Gc {
        /// Keep the N newest transactions (with --keep-days too, a transaction is kept
        /// when either keeps it).
        #[arg(long, group = "policy")]
        keep_last: Option<usize>,
        /// Keep transactions younger than D days.
        #[arg(long, group = "policy")]
        keep_days: Option<u64>,
        /// Also abort and prune open previews outside the kept range (by default an
        /// open preview is kept whatever its age).
        #[arg(long)]
        abort_open: bool,
        /// List what would be pruned (and which commits would lose their rollback) and
        /// change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Counts and sizes.
    Stats,
}

#[cfg(test)]
mod since_tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn ms(s: &str, now: std::time::SystemTime) -> Result<u64, String> {
        match since_at(s, now)? {
            Since::Ms(ms) => Ok(ms),
            Since::Seq(seq) => Err(format!("seq {seq}")),
        }
    }

    #[test]
    fn a_command_timeout_is_above_0_and_at_most_a_day() {
        assert_eq!(parse_run_timeout("0.5"), Ok(0.5));
        assert_eq!(parse_run_timeout("86400"), Ok(86_400.0));
        for bad in ["0", "0.0", "-1", "nan", "86401"] {
            assert_eq!(
                parse_run_timeout(bad),
                Err(format!(
                    "{bad:?} is not a number of seconds above 0 and at most 86400 (e.g. 600 or 0.5)"
                ))
            );
        }
    }

    #[test]
    fn lock_timeout_takes_seconds_from_0_to_a_day() {
        assert_eq!(parse_lock_timeout("0.5"), Ok(0.5));
        assert_eq!(parse_lock_timeout("0"), Ok(0.0));
        assert_eq!(parse_lock_timeout("86400"), Ok(86_400.0));
        for bad in ["nan", "NaN", "-5", "inf", "86401", "soon"] {
            assert_eq!(
                parse_lock_timeout(bad),
                Err(format!(
                    "{bad:?} is not a number of seconds from 0 to 86400 (e.g. 10 or 0.5)"
                )),
                "{bad}"
            );
        }
    }

    /// `revert --since` refuses a bare number and a word with the same wording, which
    /// names what it accepts (found by the breaker: two wordings, one naming an event
    /// seq that revert does not take).
    #[test]
    fn revert_since_refuses_every_non_time_with_one_wording() {
        let now = UNIX_EPOCH + Duration::from_millis(1_796_000_000_000);
        assert_eq!(since_time_at("2026-11-30", now), Ok(1_795_996_800_000));
        assert_eq!(since_time_at("10m", now), Ok(1_796_000_000_000 - 600_000));
        for bad in ["garbage", "120"] {
            assert_eq!(
                since_time_at(bad, now),
                Err(format!(
                    "{bad:?} is not a time: give an RFC 3339 time, a date (from its midnight UTC) or a duration ago with its unit (a bare number is none); e.g. 2026-11-30T08:00:00Z, 2026-11-30, 10m or 2h ago"
                ))
            );
        }
    }

    #[test]
    fn since_reads_a_seq_a_time_a_date_or_a_duration_ago() {
        let now = UNIX_EPOCH + Duration::from_millis(1_796_000_000_000);
        assert!(matches!(since_at("120", now), Ok(Since::Seq(120))));
        assert_eq!(ms("2026-11-30T08:00:00Z", now), Ok(1_796_025_600_000));
        assert_eq!(ms("2026-11-30 08:00:00", now), Ok(1_796_025_600_000));
        assert_eq!(ms("2026-11-30", now), Ok(1_795_996_800_000));
        assert_eq!(ms("10m", now), Ok(1_796_000_000_000 - 600_000));
        assert_eq!(ms("2h ago", now), Ok(1_796_000_000_000 - 7_200_000));
        assert_eq!(ms("3days", now), Ok(1_796_000_000_000 - 3 * 86_400_000));
        assert_eq!(
            since_at("yesterday-ish", now).err(),
            Some("\"yesterday-ish\" is not an event seq, an RFC 3339 time, a date or a duration ago; e.g. 120, 2026-11-30T08:00:00Z, 2026-11-30 or 10m".to_string())
        );
    }
}
