//! Output: human text (diffs coloured as `git diff` colours them, per `--color`,
//! [`super::color`]), or one JSON object per command (JSON lines for `journal dump`)
//! with `--json`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine;
use serde::Serialize;

use super::color::{ColorWhen, Palette, Role};
use super::diffview;
use serde_json::json;
use ultra_edit::{
    AbortReport, BatchKind, BatchRecord, CommitReport, DumpDetail, DumpEntry, Error, EventKind,
    FileState, GcReport, Interdiff, Issue, Journal, JournalStats, LogEntry, Preview, Receipt,
    RecoveryReport, Result, RevisionRecord, Severity, TxRecord, TxState, VerifyReport,
};

pub struct Out {
    pub json: bool,
    palette: Palette,
    /// Standard output was a terminal when the command started (before a pager took it).
    terminal: bool,
}

/// Write to stdout, ignoring a closed pipe (`ultra-edit log | head`).
/// A plan's free text (`agent`, `description`) as one line that shows what it holds: a
/// control character (newline, carriage return, escape…), a Unicode line separator or
/// a bidirectional or invisible format character is written as an escape (`\n`,
/// `\u{202e}`), so an agent's text cannot forge a line of `log` or drive the terminal,
/// as paths cannot (docs/plan.md). Found by the breaker.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(ultra_edit::fs::path::hidden_in_a_listing) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if ultra_edit::fs::path::hidden_in_a_listing(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

pub(crate) fn emit(s: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes());
    let _ = o.flush();
}

pub(crate) fn emit_json(v: &impl Serialize) {
    emit(&format!(
        "{}\n",
        serde_json::to_string(v).unwrap_or_default()
    ));
}

/// RFC 3339 UTC; a time humantime cannot print (past year 9999, e.g. from a damaged
/// record) is printed as its raw milliseconds.
fn time(ms: u64) -> String {
    const YEAR_10000_MS: u64 = 253_402_300_800_000;
    if ms >= YEAR_10000_MS {
        return format!("{ms}ms");
    }
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// Milliseconds since the Unix epoch, now.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// How long before `now_ms` the time `ms` was, as git's relative dates say it: "12
/// seconds ago", "3 minutes ago", "5 hours ago", "2 days ago", "3 weeks ago"; from 60
/// days the date (YYYY-MM-DD); "in the future" for a clock set back.
pub fn relative_time(now_ms: u64, ms: u64) -> String {
    let Some(secs) = now_ms.checked_sub(ms).map(|d| d / 1000) else {
        return "in the future".into();
    };
    let (n, unit) = match secs {
        0..=89 => (secs, "second"),
        90..=5399 => ((secs + 30) / 60, "minute"),
        5400..=129_599 => ((secs + 1800) / 3600, "hour"),
        129_600..=1_209_599 => ((secs + 43_200) / 86_400, "day"),
        1_209_600..=5_183_999 => ((secs + 302_400) / 604_800, "week"),
        _ => return time(ms).get(..10).unwrap_or_default().to_string(),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

fn state(s: &FileState) -> String {
    match s {
        FileState::File { hash, size, meta } => {
            format!("{} ({size} B, {:o})", hash.short(), meta.mode)
        }
        FileState::Absent => "absent".into(),
    }
}

/// One-letter change kind: A added, D deleted, M modified, = unchanged.
fn change(before: &FileState, after: &FileState) -> char {
    match (before.exists(), after.exists()) {
        (false, true) => 'A',
        (true, false) => 'D',
        _ if before == after => '=',
        _ => 'M',
    }
}

impl Out {
    /// Output for `--json` or text, coloured per `color` (never under `--json`).
    pub fn new(json: bool, color: ColorWhen) -> Out {
        Out {
            json,
            palette: Palette::new(super::color::enabled(color, json)),
            terminal: std::io::stdout().is_terminal(),
        }
    }

    /// True if standard output was a terminal when the command started (a pager may
    /// have taken it since).
    pub fn on_terminal(&self) -> bool {
        self.terminal
    }

    /// True under `--json`.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// `init`'s answer: `created` false when the journal was there already (`init` is
    /// idempotent and changed nothing then).
    pub fn init(&self, root: &Path, state_dir: &Path, created: bool) -> Result<()> {
        if self.json {
            emit_json(
                &json!({"root": root, "journal": state_dir.join("journal.redb"), "created": created}),
            );
        } else if created {
            emit(&format!("initialized {}\n", state_dir.display()));
        } else {
            emit(&format!(
                "already initialized {} (its journal was kept as it was)\n",
                state_dir.display()
            ));
        }
        Ok(())
    }

    pub fn recovered_on_open(&self, r: &RecoveryReport) {
        eprintln!(
            "ultra-edit: recovery on open: {} batch(es) found, {} completed, {} reverted, {} need attention",
            r.batches_found,
            r.completed.len(),
            r.reverted.len(),
            r.needs_attention.len()
        );
        for a in r.actions.iter().filter(|a| !a.foreign.is_empty()) {
            eprintln!("ultra-edit: {}", attention_words(a));
        }
    }

    /// Batches that recovery could not settle on open (read-only media, or a recovery
    /// that failed under a reading verb): on standard error, so that `--json` output
    /// stays one object.
    ///
    /// A full disk is named as such, with what to free: the bytes recovery writes, on
    /// the filesystem of `root` (issue 33, item 12).
    pub fn unrecovered(&self, pending: &[ultra_edit::PendingBatch], root: &Path) {
        for b in pending {
            let (why, fix) = match &b.recovery_failed {
                None => (
                    "cannot run because the journal is on a read-only filesystem".to_string(),
                    "Remount read-write and run `ultra-edit recover`.".to_string(),
                ),
                Some(e) if b.disk_full => (
                    format!("failed here because the disk is full ({e})"),
                    format!(
                        "Free at least {} byte(s) on the filesystem of {} (`df -h {}` shows its space; recovery writes that much file content there, each file as a temp before its rename), then run `ultra-edit recover`.",
                        b.bytes_to_write,
                        root.display(),
                        super::commands::shell_word(root)
                    ),
                ),
                Some(e) => (
                    format!("failed here ({e})"),
                    "Fix that (free space, or run it as the files' owner or root) and run `ultra-edit recover`.".to_string(),
                ),
            };
            eprintln!(
                "ultra-edit: batch {} of tx {} ({}) was interrupted and needs recovery, which {why}; until it runs, {} may hold old, new or mixed content. {fix}",
                b.batch,
                b.tx,
                b.state,
                b.paths.join(", ")
            );
        }
    }

    /// `show`: a recorded revision, its validation errors included (a report, not an
    /// error of the command).
    pub fn preview(&self, p: &Preview) -> Result<()> {
        self.revision(p, true, None)
    }

    /// A revision the command just made (`preview`, `rebase`, `resolve`): as `show`
    /// prints it, but without its validation errors, which go to standard error with
    /// the command's own error ([`validation_errors`]). `error`: the command's
    /// `--json` error object when the revision is not ready (exit 4,
    /// [`error_object`]), printed as the object's `error` field.
    pub fn made(&self, p: &Preview, error: Option<serde_json::Value>) -> Result<()> {
        self.revision(p, false, error)
    }

    fn revision(
        &self,
        p: &Preview,
        with_errors: bool,
        error: Option<serde_json::Value>,
    ) -> Result<()> {
        if self.json {
            // Without an error the revision is written as it is (no JSON tree of a
            // large file's diff is built).
            match error {
                None => emit_json(p),
                error => emit_json(&with_error(p, error)),
            }
            return Ok(());
        }
        let mut s = preview_head(p);
        for f in &p.files {
            s += &self.file_diff(&f.path, &f.diff);
        }
        s += &self.preview_tail(p, with_errors);
        emit(&s);
        Ok(())
    }

    /// A revision made by `revise`: the whole change's file list, then what it changed
    /// relative to the previous revision (`interdiff`), the conflicts and validation.
    /// `--json`: the revision's object with an `interdiff` field, and an `error` field
    /// when it is not ready (as [`Out::made`]).
    pub fn revised(
        &self,
        p: &Preview,
        interdiff: &Interdiff,
        error: Option<serde_json::Value>,
    ) -> Result<()> {
        if self.json {
            let mut v = with_error(p, error);
            if let Some(obj) = v.as_object_mut() {
                obj.insert(
                    "interdiff".into(),
                    serde_json::to_value(interdiff).unwrap_or_default(),
                );
            }
            emit_json(&v);
            return Ok(());
        }
        let mut s = preview_head(p);
        s += &format!(
            "changes since revision {} (the whole change: `ultra-edit show {}`):\n",
            interdiff.from, p.tx
        );
        s += &self.interdiff_body(interdiff);
        s += &self.preview_tail(p, false);
        emit(&s);
        Ok(())
    }

    /// `show TX --from M --to N`.
    pub fn interdiff(&self, d: &Interdiff) -> Result<()> {
        if self.json {
            emit_json(d);
            return Ok(());
        }
        let mut s = format!(
            "tx {}: revision {} -> revision {}, +{} -{}\n",
            d.tx, d.from, d.to, d.lines_added, d.lines_removed
        );
        for f in &d.files {
            s += &format!(
                "  {} {}  +{} -{}\n",
                change(&f.from, &f.to),
                f.path,
                f.diff.lines_added,
                f.diff.lines_removed
            );
        }
        s += &self.interdiff_body(d);
        emit(&s);
        Ok(())
    }

    fn interdiff_body(&self, d: &Interdiff) -> String {
        if d.from == d.to {
            // `--to 0` alone (there is no revision before 0), or `--from` the latest.
            return format!(
                "  (revision {} compared with itself: give --from and --to two revisions; `ultra-edit show {} --revision {}` shows its whole change)\n",
                d.to, d.tx, d.to
            );
        }
        if d.files.is_empty() {
            return format!(
                "  (no difference: revision {} has the same candidates as revision {})\n",
                d.to, d.from
            );
        }
        d.files
            .iter()
            .map(|f| self.file_diff(&f.path, &f.diff))
            .collect()
    }

    /// One file's diff, named first as git names it (`diff --git a/PATH b/PATH`): a
    /// change of mode alone has no `---`/`+++` lines to name the file.
    fn file_diff(&self, path: &str, d: &ultra_edit::edit::CandidateDiff) -> String {
        if d.unified.is_empty() {
            return String::new();
        }
        let mut s = diffview::render(&diffview::git_header(path), "", &self.palette);
        s += &diffview::render(&d.unified, "", &self.palette);
        if d.lossy {
            s += "  (diff display is lossy: a side is not valid UTF-8; the candidate bytes are exact)\n";
        }
        s
    }

    /// The validation errors of a revision the command just made, one `error: CODE
    /// PATH: MESSAGE` line each, for standard error (uncoloured, as every error there
    /// is): the command failed with them (exit 4), and the text of one failure goes to
    /// one stream. Empty under `--json`, whose object holds them.
    pub fn validation_errors(&self, p: &Preview) -> String {
        if self.json {
            return String::new();
        }
        p.validation
            .iter()
            .filter(|i| i.severity == Severity::Error)
            .map(|i| {
                let at = if i.path.is_empty() {
                    String::new()
                } else {
                    format!(" {}", i.path)
                };
                format!("error: {}{at}: {}\n", i.code, i.message)
            })
            .collect()
    }

    /// The conflict list and the validation report of a revision (its errors only
    /// `with_errors`).
    fn preview_tail(&self, p: &Preview, with_errors: bool) -> String {
        let mut s = conflict_list(p, &self.palette);
        for i in &p.validation {
            if i.severity == Severity::Error && !with_errors {
                continue;
            }
            let at = if i.path.is_empty() {
                String::new()
            } else {
                format!(" {}", i.path)
            };
            let word = severity(i.severity);
            let word = match i.severity {
                Severity::Error => self.palette.paint(Role::Error, word),
                Severity::Warning => self.palette.paint(Role::Warning, word),
                Severity::Note => word.to_string(),
            };
            s += &format!("{word}: {}{at}: {}\n", i.code, i.message);
        }
        s
    }

    /// `commit` and `rollback`: the receipt (JSON: its fields and `already`). A change
    /// that had landed before says so first ("already committed", "already rolled
    /// back"), then its receipt from the journal; nothing was written by this call.
    pub fn receipt(&self, report: &CommitReport) -> Result<()> {
        if self.json {
            emit_json(report);
            return Ok(());
        }
        let r = &report.receipt;
        let what = match (r.kind, report.already) {
            (BatchKind::Commit { revision }, false) => {
                format!("committed tx {} revision {revision}", r.tx)
            }
            (BatchKind::Commit { revision }, true) => {
                format!("already committed: tx {} revision {revision}", r.tx)
            }
            (BatchKind::Rollback { of, forced }, already) => format!(
                "{}rolled back tx {of} as tx {}{}",
                if already { "already " } else { "" },
                r.tx,
                if forced { " (forced)" } else { "" }
            ),
        };
        let mut s = format!(
            "{what} (batch {}): {} file(s), {} bytes written{}\n",
            r.batch,
            r.files.len(),
            r.bytes_written,
            if report.already {
                " then; nothing written now"
            } else {
                ""
            }
        );
        for f in &r.files {
            s += &format!(
                "  {} {}  {} -> {}\n",
                change(&f.pre, &f.post),
                f.path,
                state(&f.pre),
                state(&f.post)
            );
        }
        for d in &r.created_dirs {
            s += &format!("  + dir {d}/\n");
        }
        for d in &r.removed_dirs {
            s += &format!("  - dir {d}/\n");
        }
        emit(&s);
        Ok(())
    }

    /// A rollback's receipt and, for a forced one, what it did to each file changed
    /// since the commit and where its bytes are kept (`--json`: the receipt's fields
    /// plus `overwritten: [{path, action, kept_in, rolled_back}]`, present when not
    /// empty).
    pub fn rollback(
        &self,
        r: &CommitReport,
        overwritten: &[ultra_edit::Overwritten],
    ) -> Result<()> {
        if overwritten.is_empty() {
            return self.receipt(r);
        }
        if self.json {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            v["overwritten"] = serde_json::to_value(overwritten).unwrap_or_default();
            emit_json(&v);
            return Ok(());
        }
        self.receipt(r)?;
        let mut s = String::new();
        for o in overwritten {
            s += &format!("note: {}\n", overwritten_note(o));
        }
        emit(&s);
        Ok(())
    }

    pub fn aborted(&self, a: &AbortReport) -> Result<()> {
        if self.json {
            emit_json(a);
        } else if a.already {
            emit(&format!(
                "tx {} was already aborted; nothing changed\n",
                a.record.tx
            ));
        } else {
            emit(&format!("aborted tx {}\n", a.record.tx));
        }
        Ok(())
    }

    /// `log`; `limit` as given (`Some(0)` asked for none: nothing is printed, not
    /// "no transactions yet"); `agent` the `--agent` filter, which an empty list names
    /// (the journal may hold other agents' transactions).
    /// `attention`: the batches that need attention (`needs_attention` in `--json`,
    /// always present; in text, each tx's line says `[batch needs_attention]`).
    pub fn log(
        &self,
        entries: &[LogEntry],
        attention: &[ultra_edit::AttentionEntry],
        limit: Option<usize>,
        agent: Option<&str>,
    ) -> Result<()> {
        if self.json {
            emit_json(&json!({ "txs": entries, "needs_attention": attention }));
            return Ok(());
        }
        let mut s = String::new();
        if entries.is_empty() && limit != Some(0) {
            match agent {
                Some(a) => {
                    s += &format!(
                        "no transactions of agent \"{}\"; `ultra-edit log` lists every agent's\n",
                        shown(a)
                    )
                }
                None => s += "no transactions yet; `ultra-edit preview --plan FILE` starts one\n",
            }
        }
        let now = now_ms();
        for e in entries {
            let mut extra = Vec::new();
            // A rollback's description says what it rolled back; its single revision
            // needs no "revision 0 committed".
            if let (None, Some(c)) = (e.rollback_of, e.committed) {
                if e.revisions > 1 {
                    extra.push(format!("revision {} committed", c.revision));
                }
            }
            if let Some(by) = e.rolled_back_by {
                extra.push(format!("rolled back by tx {by}"));
            }
            if e.pruned {
                extra.push("pruned by gc".into());
            }
            if let Some(b) = e.batch_state {
                extra.push(format!("batch {b}"));
            }
            // A pruned tx kept no line counts: say so rather than print +0 -0.
            let counts = if e.pruned {
                String::new()
            } else {
                format!(" +{} -{}", e.lines_added, e.lines_removed)
            };
            let when = if self.terminal {
                format!("{:<16}", relative_time(now, e.created_ms))
            } else {
                time(e.created_ms)
            };
            // No trailing blanks when the description and the notes are empty.
            let line = format!(
                "{} {}  {:<11} {:<10} {} file(s){counts}  {}{}",
                self.palette.paint(Role::Id, &format!("tx {:<5}", e.tx)),
                when,
                e.state.to_string(),
                shown(e.agent.as_deref().unwrap_or("-")),
                e.files.len(),
                shown(e.description.as_deref().unwrap_or("")),
                if extra.is_empty() {
                    String::new()
                } else {
                    format!("  [{}]", extra.join(", "))
                }
            );
            s += line.trim_end();
            s += "\n";
        }
        emit(&s);
        Ok(())
    }

    pub fn recovery(&self, r: &RecoveryReport) -> Result<()> {
        if self.json {
            emit_json(r);
            return Ok(());
        }
        let mut s = format!(
            "recovery: {} batch(es) found, {} completed, {} reverted, {} need attention, {} temp file(s) removed\n",
            r.batches_found,
            r.completed.len(),
            r.reverted.len(),
            r.needs_attention.len(),
            r.temps_removed
        );
        for a in &r.actions {
            s += &format!(
                "  batch {} (tx {}): {} -> {}; rewrote {:?}\n",
                a.batch, a.tx, a.found, a.result, a.rewritten
            );
            for f in &a.overwritten {
                s += &format!(
                    "    overwrote foreign bytes in {}: {} ({})\n",
                    f.path,
                    state(&f.found),
                    f.note
                );
            }
            for f in &a.foreign {
                s += &format!(
                    "    foreign bytes in {}: {} ({})\n",
                    f.path,
                    state(&f.found),
                    f.note
                );
            }
            if !a.foreign.is_empty() {
                s += &format!("  {}\n", attention_words(a));
            }
        }
        emit(&s);
        Ok(())
    }

    pub fn verify(&self, v: &VerifyReport) {
        if self.json {
            emit_json(v);
            return;
        }
        let mut s = format!(
            "journal {}: {} tx(s), {} revision(s), {} blob(s) holding {} bytes of file content (each distinct content once, at its full length) stored in {} bytes (each distinct chunk, inline blob, manifest page and hash list once), {} batch(es), {} receipt(s), {} event(s)\n",
            if v.ok { "ok" } else { "DAMAGED" },
            v.txs, v.revisions, v.blobs, v.blob_bytes_content, v.blob_bytes_unique, v.batches, v.receipts, v.events
        );
        for p in &v.problems {
            s += &format!("  problem: {p}\n");
        }
        emit(&s);
    }

    pub fn gc(&self, g: &GcReport) -> Result<()> {
        if self.json {
            emit_json(g);
            return Ok(());
        }
        let size = |b: Option<u64>| {
            b.map(|b| format!("{b} bytes"))
                .unwrap_or_else(|| "-".into())
        };
        let mut text = String::new();
        let verb = if g.dry_run { "would prune" } else { "pruned" };
        for p in &g.pruned {
            text.push_str(&format!(
                "{verb} tx {} ({}{}){}{}\n",
                p.tx,
                p.state,
                if p.loses_rollback {
                    ", can no longer be rolled back"
                } else {
                    ""
                },
                p.agent
                    .as_deref()
                    .map(|a| format!(" [{}]", shown(a)))
                    .unwrap_or_default(),
                p.description
                    .as_deref()
                    .map(|d| format!(" {}", shown(d)))
                    .unwrap_or_default(),
            ));
        }
        let (head, aborted, dropped, lost, tail) = if g.dry_run {
            (
                "gc --dry-run: would prune",
                "which would be aborted",
                "drop",
                "would lose",
                "nothing was changed".to_string(),
            )
        } else {
            (
                "gc: pruned",
                "now aborted",
                "dropped",
                "lost",
                format!(
                    "file {} -> {}{}",
                    size(g.file_bytes_before),
                    size(g.file_bytes_after),
                    if g.compacted {
                        ""
                    } else {
                        " (not compacted: the journal is in use)"
                    }
                ),
            )
        };
        text.push_str(&format!(
            "{head} {} tx(s) ({} of them open previews, {aborted}), {dropped} {} revision(s) and {} blob(s) ({} bytes); {} committed tx(s) {lost} their rollback{}; {tail}\n",
            g.removed.txs_pruned,
            g.removed.previews_aborted,
            g.removed.revisions_dropped,
            g.removed.blobs_dropped,
            g.removed.bytes_freed,
            g.rollbacks_lost.len(),
            tx_list(&g.rollbacks_lost),
        ));
        emit(&text);
        Ok(())
    }

    pub fn stats(&self, s: &JournalStats) -> Result<()> {
        if self.json {
            emit_json(s);
            return Ok(());
        }
        // The three sizes, each with what it counts (the JSON names them by field).
        let file = match s.file_bytes {
            Some(b) => format!("{b} bytes (the length of journal.redb, unused pages included)"),
            None => "size unknown".into(),
        };
        emit(&format!(
            "schema v{}\ntxs {} ({} pruned)\nrevisions {}\nblobs {}\n  content     {} bytes (the blobs' full lengths, each distinct content once: what journal verify reports as file content)\n  stored      {} bytes (what the blob tables hold: each distinct chunk, inline blob, manifest page and hash list once, without redb's page overhead)\n  referenced  {} bytes (the file contents the revisions and batches refer to, every reference counted: the size without content addressing)\nbatches {}\nreceipts {}\nevents {}\njournal file {file}\n",
            s.schema_version,
            s.txs,
            s.txs_pruned,
            s.revisions,
            s.blobs,
            s.blob_bytes_content,
            s.blob_bytes_unique,
            s.blob_bytes_referenced,
            s.batches,
            s.receipts,
            s.events,
        ));
        Ok(())
    }

    /// One record of `journal dump`; a revision's diffs only `with_diffs` (text).
    pub fn dump_entry(
        &self,
        e: &DumpEntry,
        blobs: Option<&Journal>,
        with_diffs: bool,
    ) -> Result<()> {
        let blob_text = blob_text(e, blobs)?;
        if self.json {
            let mut v = serde_json::to_value(e).unwrap_or_default();
            if let (Some((enc, text)), Some(obj)) = (blob_text, v.as_object_mut()) {
                obj.insert("blob".into(), json!({"encoding": enc, "content": text}));
            }
            emit(&format!("{v}\n"));
            return Ok(());
        }
        let mut s = dump_header(e);
        match &e.detail {
            Some(DumpDetail::Revision(r)) => s += &self.dump_revision(r, with_diffs),
            Some(DumpDetail::Batch(b)) => s += &dump_batch(b),
            Some(DumpDetail::Receipt(r)) => s += &dump_receipt(r),
            Some(DumpDetail::Tx(t)) => s += &dump_tx(t),
            None => {}
        }
        if let Some((enc, text)) = blob_text {
            s += &dump_blob(enc, &text);
        }
        emit(&s);
        Ok(())
    }

    /// A revision's files (with their diffs, indented, when `with_diffs`) and
    /// validation issues.
    fn dump_revision(&self, r: &RevisionRecord, with_diffs: bool) -> String {
        let mut s = String::new();
        for f in &r.files {
            s += &format!(
                "    {} {}  snapshot {} -> candidate {}  +{} -{}\n",
                change(&f.snapshot, &f.candidate),
                f.path,
                state(&f.snapshot),
                state(&f.candidate),
                f.diff.lines_added,
                f.diff.lines_removed
            );
            if with_diffs {
                s += &diffview::render(&f.diff.unified, "      ", &self.palette);
            }
        }
        for i in &r.validation {
            s += &dump_issue(i);
        }
        s
    }
}

/// One validation issue of a revision in `journal dump`: `    validation SEVERITY CODE
/// PATH: MESSAGE`, without the path (and its space) for an issue of the whole revision
/// (`check_failed`, `no_changes`), as `show` prints it.
fn dump_issue(i: &Issue) -> String {
    let at = if i.path.is_empty() {
        String::new()
    } else {
        format!(" {}", i.path)
    };
    format!(
        "    validation {} {}{at}: {}\n",
        severity(i.severity),
        i.code,
        i.message
    )
}

/// With `--with-blobs`, the content of a `blob_stored` event: text, or base64 for bytes
/// that are not UTF-8 or hold a NUL.
fn blob_text(e: &DumpEntry, blobs: Option<&Journal>) -> Result<Option<(&'static str, String)>> {
    let (EventKind::BlobStored { hash, .. }, Some(j)) = (&e.event.kind, blobs) else {
        return Ok(None);
    };
    Ok(j.blob(hash)?.map(|b| match std::str::from_utf8(&b) {
        Ok(t) if !t.contains('\0') => ("text", t.to_string()),
        _ => (
            "base64",
            base64::engine::general_purpose::STANDARD.encode(&b),
        ),
    }))
}

/// `#seq time kind {fields}`: the event itself.
fn dump_header(e: &DumpEntry) -> String {
    let kind = serde_json::to_value(&e.event.kind).unwrap_or_default();
    let (name, fields) = kind
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.to_string()))
        .unwrap_or_default();
    format!(
        "#{} {} {} {}\n",
        e.event.seq,
        time(e.event.at_ms),
        name,
        fields
    )
}

/// A batch's files (pre- and post-images) and foreign writes it met.
fn dump_batch(b: &BatchRecord) -> String {
    let mut s = String::new();
    for f in &b.files {
        s += &format!(
            "    {} pre {} post {}\n",
            f.path,
            state(&f.pre),
            state(&f.post)
        );
    }
    for f in &b.foreign {
        s += &format!("    foreign {} {} ({})\n", f.path, state(&f.found), f.note);
    }
    s
}

fn dump_receipt(r: &Receipt) -> String {
    format!(
        "    receipt: {} file(s), {} bytes written\n",
        r.files.len(),
        r.bytes_written
    )
}

fn dump_tx(t: &TxRecord) -> String {
    format!(
        "    agent {} description {:?}\n",
        shown(t.agent.as_deref().unwrap_or("-")),
        t.description.as_deref().unwrap_or("")
    )
}

/// A blob's content, indented, one line per line.
fn dump_blob(enc: &str, text: &str) -> String {
    let mut s = format!("    blob ({enc}):\n");
    for line in text.lines() {
        s += &format!("      {line}\n");
    }
    s
}

/// A revision's first lines: tx, revision, state, the revision it was built on, where
/// it stands (see [`standing`]), and one line per file with the whole change's counts.
fn preview_head(p: &Preview) -> String {
    let mut s = format!(
        "tx {} revision {} ({}{}) — {}\n",
        p.tx,
        p.revision,
        p.state,
        p.base
            .map(|b| format!(", built on revision {b}"))
            .unwrap_or_default(),
        standing(p)
    );
    if let Some(c) = &p.command {
        s += &command_line(c);
    }
    if let Some(b) = p.needs_attention {
        s += &format!("  batch {b} needs attention: a file holds bytes that are neither its old nor its new content; put it back and run `ultra-edit recover`, or run `ultra-edit recover --overwrite`\n");
    }
    for f in &p.files {
        s += &format!(
            "  {} {}  +{} -{}\n",
            change(&f.snapshot, &f.candidate),
            f.path,
            f.diff.lines_added,
            f.diff.lines_removed
        );
    }
    s
}

/// The origin of a revision a command made: `  command: `CMD` exited 0 in 12 ms`, and
/// what the scope rules dropped.
fn command_line(c: &ultra_edit::CommandOrigin) -> String {
    let how = match c.status {
        Some(s) => format!("exited {s}"),
        None => "was killed by a signal".into(),
    };
    let mut s = format!(
        "  command: `{}` {how} in {} ms\n",
        shown(&c.command),
        c.duration_ms
    );
    if c.dropped_vcs > 0 || c.dropped_ignored > 0 {
        s += &format!(
            "  dropped: {} path(s) under .git/ .jj/ .hg/ .svn/ or the state directory, {} ignored path(s)\n",
            c.dropped_vcs, c.dropped_ignored
        );
    }
    s
}

/// Where a revision stands: for an open tx, whether it can be committed; for a tx a
/// commit applied, whether this is the revision that reached the disk (and, when it
/// is, whether later revisions were left out).
fn standing(p: &Preview) -> String {
    let committed = match (p.state, p.committed) {
        (TxState::Committed | TxState::RolledBack, Some(c)) => c,
        (TxState::Open, _) if p.needs_attention.is_some() => {
            return "its batch needs attention".into()
        }
        (TxState::Open, _) if p.stale_paths.as_ref().is_some_and(|s| !s.is_empty()) => {
            return format!(
                "NOT ready to commit: {} changed on disk since the snapshot (`ultra-edit rebase {}` brings the revision onto it)",
                p.stale_paths.as_deref().unwrap_or_default().join(", "),
                p.tx
            )
        }
        (TxState::Open, _) if p.ready_to_commit => return "ready to commit".into(),
        (TxState::Open, _) => return "NOT ready to commit".into(),
        _ => return "not open".into(),
    };
    let undone = if p.state == TxState::RolledBack {
        ", then rolled back"
    } else {
        ""
    };
    if committed.revision != p.revision {
        return format!(
            "not committed: revision {} was (batch {}){undone}",
            committed.revision, committed.batch
        );
    }
    let mut s = format!(
        "this revision was committed (batch {}){undone}",
        committed.batch
    );
    if p.latest_revision != p.revision {
        s += &format!("; the latest, revision {}, was not", p.latest_revision);
    }
    s
}

/// The conflict list: a heading naming the next step, then one line per conflict,
/// `path:start-end  label N line(s) | label N line(s) | label N line(s)` (the
/// candidate's side, the base, the other side), or `path  reason` for a whole file.
fn conflict_list(p: &Preview, palette: &Palette) -> String {
    if p.conflict_list.is_empty() {
        return String::new();
    }
    let heading = format!(
        "{} conflict(s): edit the candidate with `ultra-edit resolve {}` (or revise it with a plan), then commit",
        p.conflict_list.len(),
        p.tx
    );
    let mut s = palette.paint(Role::Warning, &heading) + "\n";
    for c in &p.conflict_list {
        match (c.start_line, c.end_line, &c.sides) {
            (Some(start), Some(end), Some(sides)) => {
                let sides: Vec<String> = sides
                    .iter()
                    .map(|side| format!("{} {} line(s)", side.label, side.lines))
                    .collect();
                s += &format!("  {}:{start}-{end}  {}\n", c.path, sides.join(" | "));
            }
            _ => s += &format!("  {}  {}\n", c.path, c.reason),
        }
    }
    s
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Warning => "warning",
        Severity::Error => "error",
        Severity::Note => "note",
    }
}

/// Print an error: `error: …` and, when there is a next step, `hint: …` on standard
/// error; with `--json` also `{"error": {kind, message, exit_code, hint?, next_step?,
/// outcome?}, "tx"?}` on standard output (`next_step` and `outcome` are the library's
/// data, `hint` the CLI's words for the next step).
///
/// `misplaced` are plan paths missing at the root that exist relative to the current
/// directory: their hint comes first, and `--json` lists them as `misplaced`.
/// `invocation` is how a hint's command starts (`ultra-edit`, plus `--root` and
/// `--state-dir` when the journal lives outside the root). `origin` is where the
/// command's paths came from (a plan, a command run, a revert): a refused path's hint
/// says what to fix there.
pub fn error(
    e: &Error,
    json: bool,
    misplaced: &[super::advice::Misplaced],
    invocation: &str,
    origin: super::advice::PathOrigin,
) {
    // Every plan error points at the plan format, unless the fix is a path to write.
    let hint = super::advice::misplaced_hint(misplaced)
        .or_else(|| match (e, super::advice::hint_for(e, origin)) {
            (Error::Edit(_), Some(h)) => {
                Some(format!("{h}; `ultra-edit help plan` describes plans"))
            }
            (Error::Edit(_), None) => {
                Some("`ultra-edit help plan` describes the plan format, op by op".to_string())
            }
            (_, hint) => hint,
        })
        .map(|h| {
            if invocation == "ultra-edit" {
                h
            } else {
                h.replace("`ultra-edit ", &format!("`{invocation} "))
            }
        });
    let notes = std::mem::take(&mut *NOTES.lock().unwrap_or_else(|p| p.into_inner()));
    if json {
        let mut err = error_object(e, hint.as_deref(), invocation);
        if !notes.is_empty() {
            err["notes"] = json!(notes);
        }
        if !misplaced.is_empty() {
            err["misplaced"] = json!(misplaced);
        }
        let mut v = json!({ "error": err });
        if let (Some(tx), Some(obj)) = (e.tx(), v.as_object_mut()) {
            obj.insert("tx".into(), tx.into());
        }
        emit_json(&v);
    }
    eprintln!("error: {e}");
    if let Some(h) = hint {
        eprintln!("hint: {h}");
    }
    for n in &notes {
        eprintln!("note: {n}");
    }
}

/// A revision's `--json` object, with `error` (and its `exit_code` at the top, as a
/// failed command's object has `tx`) when the command fails with it.
fn with_error(p: &Preview, error: Option<serde_json::Value>) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap_or_default();
    if let (Some(err), Some(obj)) = (error, v.as_object_mut()) {
        obj.insert("error".into(), err);
    }
    v
}

/// The `--json` error object of `e`: `{kind, message, exit_code, hint?, command?,
/// next_step?, attention?, outcome?, owner?, paths?, batch?, later?, failures?}`.
/// `hint` is the CLI's words for the next step; `next_step` the library's step as data
/// (`{"step": "commit", "tx": 3}`), and `command` the command line that takes it, when
/// it is one, starting with `invocation`. Used for a failed command ([`error`]) and for
/// a recorded revision that is not ready (`preview`, `revise`, `rebase` at exit 4:
/// the `error` field of the revision's object).
pub fn error_object(e: &Error, hint: Option<&str>, invocation: &str) -> serde_json::Value {
    let mut err = json!({"kind": e.kind(), "message": e.to_string(), "exit_code": e.exit_code()});
    if let Some(h) = hint {
        err["hint"] = json!(h);
    }
    if let Some(step) = e.next_step() {
        // The command line that takes that step, when it is one (the step's name is
        // the library's: `roll_back` is `ultra-edit rollback`).
        if let Some(command) = super::advice::command_for(&step) {
            err["command"] = json!(command.replacen("ultra-edit", invocation, 1));
        }
        err["next_step"] = json!(step);
    }
    if let Error::NeedsAttention { attention, .. } = e {
        err["attention"] = json!(attention);
        err["outcome"] = json!(attention.outcome());
    }
    // The batch that needs attention, as data: which one, its files, what blocks it.
    match e {
        // Who changed each stale file: a tx of this journal (and its agent), or
        // `"tx": null` for a writer outside ultra-edit.
        Error::StaleSnapshot { writers, .. } if !writers.is_empty() => {
            err["changed_by"] = json!(writers);
        }
        Error::AttentionOwnsFiles {
            batch,
            batch_tx,
            paths,
            files,
            foreign,
            ..
        } => {
            err["owner"] =
                json!({"batch": batch, "tx": batch_tx, "files": files, "foreign": foreign});
            err["paths"] = json!(paths);
        }
        Error::OverwriteUndoesCommit {
            batch,
            paths,
            later,
            ..
        } => {
            err["batch"] = json!(batch);
            err["paths"] = json!(paths);
            err["later"] = json!(later);
            err["outcome"] = json!(ultra_edit::Outcome::NeedsAPerson);
        }
        _ => {}
    }
    // Each missing or ambiguous target of the plan: edit (1-based), path, lines.
    if let Error::Edit(edit) = e {
        let failures = edit.failures();
        if !failures.is_empty() {
            err["failures"] = json!(failures);
        }
    }
    err
}

/// Notes a command leaves for the error it is about to return (`resolve`: where the
/// edited copies are kept); [`error`] prints them after the error and its hint, and
/// lists them as `notes` under `--json`. One command runs per process, so a process-wide
/// list is the command's.
static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Add a note to the error the command returns ([`error`] prints it).
pub fn note_after_error(note: String) {
    NOTES.lock().unwrap_or_else(|p| p.into_inner()).push(note);
}

/// A usage error (clap's message, `code` 2): `{"error": {"kind": "usage", "message",
/// "exit_code", "hint"?, "usage"?}}` on stdout under `--json` ([`Usage::of`]), and
/// clap's whole text on stderr.
///
/// `command` is the command line's subcommand (`ultra-edit journal gc`), for the hint
/// when clap's text has no usage line to take it from.
pub fn usage_error(message: &str, code: i32, json: bool, command: &str) {
    let message = message.trim_end();
    if json {
        let u = Usage::of(message, command);
        let mut err = json!({"kind": "usage", "message": u.message, "exit_code": code});
        if let Some(h) = u.hint {
            err["hint"] = json!(h);
        }
        if let Some(usage) = u.usage {
            err["usage"] = json!(usage);
        }
        emit_json(&json!({ "error": err }));
    }
    eprintln!("{message}");
}

/// clap's text of a usage error, taken apart for a `--json` error object.
#[derive(Debug, PartialEq, Eq)]
struct Usage {
    /// What was wrong, on one line, as the other errors' `message` says it: the first
    /// paragraph without `error: ` (its indented lines, such as the missing arguments,
    /// joined to it).
    message: String,
    /// clap's tips, then where the command's help is.
    hint: Option<String>,
    /// The command's usage line, without `Usage: `.
    usage: Option<String>,
}

impl Usage {
    fn of(text: &str, command: &str) -> Usage {
        let text = strip_ansi(text);
        let mut message: Vec<String> = Vec::new();
        let mut tips: Vec<String> = Vec::new();
        let mut usage: Option<String> = None;
        let mut more_help = false;
        for (n, para) in text.split("\n\n").enumerate() {
            let para = para.trim();
            if let Some(u) = para.strip_prefix("Usage:") {
                let lines: Vec<&str> = u.lines().map(str::trim).collect();
                usage = Some(lines.join(" "));
            } else if para.starts_with("For more information") {
                more_help = true;
            } else if let Some(tip) = para.strip_prefix("tip:") {
                tips.push(tip.trim().to_string());
            } else if n == 0 {
                let first = para.strip_prefix("error:").unwrap_or(para);
                message.extend(first.lines().map(|l| l.trim().to_string()));
            }
        }
        let message = message.join(" ").trim().to_string();
        if more_help {
            // The command's words: the usage line up to its first option or argument.
            let command = usage
                .as_deref()
                .map(|u| {
                    u.split_whitespace()
                        .take_while(|w| !w.starts_with(['[', '<', '-']))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| command.to_string());
            tips.push(format!("`{command} --help` describes its arguments"));
        }
        Usage {
            message,
            hint: (!tips.is_empty()).then(|| tips.join("; ")),
            usage,
        }
    }
}

/// `s` without ANSI escape sequences (CSI: `ESC [` … a final byte in `@`..=`~`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// ` (tx 3, 4)` for a non-empty list of tx ids, else nothing.
fn tx_list(txs: &[u64]) -> String {
    if txs.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = txs.iter().map(u64::to_string).collect();
    format!(" (tx {})", ids.join(", "))
}

/// What a batch with foreign bytes did and what it needs, in words: how many files
/// recovery wrote, which ones it left, and what `recover --overwrite` writes there.
fn attention_words(a: &ultra_edit::RecoveryAction) -> String {
    let content = if a.rolls_forward { "new" } else { "old" };
    let paths: Vec<&str> = a.foreign.iter().map(|f| f.path.as_str()).collect();
    format!(
        "batch {} (tx {}): recovery wrote {} file(s) with tx {}'s {content} content and left {} that someone else wrote meanwhile ({}); `ultra-edit recover --overwrite` writes tx {}'s {content} content there too, keeping the bytes found in the journal (`ultra-edit journal dump --tx {}` lists them)",
        a.batch,
        a.tx,
        a.rewritten.len(),
        a.tx,
        paths.len(),
        paths.join(", "),
        a.tx,
        a.tx
    )
}

/// One line about a file a forced rollback overwrote, re-created or deleted, with the
/// command that brings its bytes back.
fn overwritten_note(o: &ultra_edit::Overwritten) -> String {
    use ultra_edit::OverwriteAction as A;
    let (path, of) = (shown(&o.path), o.rolled_back);
    match (o.action, o.kept_in) {
        (A::Recreated, _) | (_, None) => {
            format!("{path} was absent (deleted or moved since tx {of}); the rollback re-created it")
        }
        (A::Overwrote, Some(k)) => format!(
            "the bytes {path} held (changed since tx {of}) are kept in tx {k}; `ultra-edit rollback {k}` brings them back"
        ),
        (A::Deleted, Some(k)) => format!(
            "{path}, which tx {of} created, was rewritten since: the rollback deleted it, and its bytes are kept in tx {k}; `ultra-edit rollback {k}` brings them back"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A usage error's `--json` message is the error alone, on one line; the usage line
    /// and clap's tips have their own fields.
    #[test]
    fn usage_errors_are_taken_apart() {
        let u = |s: &str| {
            let u = Usage::of(s, "ultra-edit log");
            (u.message, u.hint, u.usage)
        };
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            u("error: the following required arguments were not provided:\n  <TX>\n\nUsage: ultra-edit commit <TX>\n\nFor more information, try '--help'.\n"),
            (
                "the following required arguments were not provided: <TX>".into(),
                some("`ultra-edit commit --help` describes its arguments"),
                some("ultra-edit commit <TX>"),
            )
        );
        assert_eq!(
            u("\u{1b}[1m\u{1b}[31merror:\u{1b}[0m unexpected argument '\u{1b}[33m--plann\u{1b}[0m' found\n\n  \u{1b}[32mtip:\u{1b}[0m a similar argument exists: '--plan'\n\nUsage: ultra-edit preview --plan <PLAN>\n\nFor more information, try '--help'."),
            (
                "unexpected argument '--plann' found".into(),
                some("a similar argument exists: '--plan'; `ultra-edit preview --help` describes its arguments"),
                some("ultra-edit preview --plan <PLAN>"),
            )
        );
        assert_eq!(
            u("error: invalid value 'bogus' for '--color <WHEN>'\n  [possible values: auto, always, never]\n\nFor more information, try '--help'."),
            (
                "invalid value 'bogus' for '--color <WHEN>' [possible values: auto, always, never]".into(),
                some("`ultra-edit log --help` describes its arguments"),
                None,
            )
        );
        assert_eq!(
            u("error: no help topic \"nope\"; topics: plan"),
            ("no help topic \"nope\"; topics: plan".into(), None, None)
        );
    }

    /// An issue of the whole revision has no path: its dump line has no gap before the
    /// colon (found by the new-user trial: `validation error check_failed : check …`).
    #[test]
    fn dump_issue_lines_skip_an_empty_path() {
        let issue = |path: &str| Issue {
            code: "check_failed".into(),
            severity: Severity::Error,
            path: path.into(),
            message: "check `exit 7` exited with status 7".into(),
        };
        assert_eq!(
            dump_issue(&issue("")),
            "    validation error check_failed: check `exit 7` exited with status 7\n"
        );
        assert_eq!(
            dump_issue(&issue("a.txt")),
            "    validation error check_failed a.txt: check `exit 7` exited with status 7\n"
        );
    }

    #[test]
    fn relative_times_read_like_gits() {
        let now = 1_800_000_000_000;
        let ago = |secs: u64| relative_time(now, now - secs * 1000);
        assert_eq!(ago(0), "0 seconds ago");
        assert_eq!(ago(1), "1 second ago");
        assert_eq!(ago(89), "89 seconds ago");
        assert_eq!(ago(90), "2 minutes ago");
        assert_eq!(ago(3 * 60), "3 minutes ago");
        assert_eq!(ago(5 * 3600), "5 hours ago");
        assert_eq!(ago(36 * 3600), "2 days ago");
        assert_eq!(ago(21 * 86_400), "3 weeks ago");
        assert_eq!(ago(90 * 86_400), "2026-10-17");
        assert_eq!(relative_time(now, now + 5000), "in the future");
    }
}
