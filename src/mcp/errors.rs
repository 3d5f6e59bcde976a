//! Tool errors in m1nd's style: what went wrong, then `Hint: …` (the next call to make)
//! and, where it helps, `Example: {…}` (that call's arguments).
//!
//! They reach the agent as MCP tool errors (`isError: true`): the text block is the
//! message below, and the structured content carries the same fields as JSON.

use std::fmt;

use serde_json::{json, Map, Value};

use crate::error::{Error, Outcome, StateReason, Verb};
use crate::journal::records::{BatchState, TxState};

/// A refused tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// Stable snake_case code: m1nd's (`source_modified`, `preview_not_found`,
    /// `preview_expired`, `confirm_required`, …) or the library's [`Error::kind`].
    pub kind: String,
    /// What went wrong, naming the preview, files and state.
    pub message: String,
    /// The next step.
    pub hint: String,
    /// The call the hint names: `{"tool": …, argument: value, …}` (boxed: errors are
    /// returned by value on every path, so they stay small).
    pub example: Option<Box<Value>>,
    /// The transaction concerned.
    pub tx: Option<u64>,
    /// Extra structured fields (e.g. apply_batch's per-file results).
    pub detail: Map<String, Value>,
}

impl ToolError {
    /// An error of `kind`.
    pub fn new(kind: &str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ToolError {
            kind: kind.to_string(),
            message: message.into(),
            hint: hint.into(),
            example: None,
            tx: None,
            detail: Map::new(),
        }
    }

    /// Arguments of the call the hint names.
    pub fn with_example(mut self, example: Value) -> Self {
        self.example = Some(Box::new(example));
        self
    }

    /// The transaction concerned.
    pub fn with_tx(mut self, tx: Option<u64>) -> Self {
        self.tx = self.tx.or(tx);
        self
    }

    /// A `path_refused` error reworded for a path that no plan named: one a command
    /// wrote (`edit_run`, `by_command`) or a reverted transaction wrote (`edit_revert`).
    /// The plan hint of [`ToolError::from_engine`] would send the agent to fix a plan
    /// it never sent. Other kinds pass unchanged.
    pub fn path_not_from_a_plan(mut self, by_command: bool) -> Self {
        if self.kind == "path_refused" {
            self.hint = if by_command {
                "the command wrote that path: change the command so that it does not (or make that change outside ultra-edit), and call edit_run again; nothing was changed"
            } else {
                "a reverted transaction wrote that path, and the disk holds something else there now: put a regular file back there (or remove what is there) outside ultra-edit and revert again, or revert without that transaction; nothing was changed"
            }
            .to_string();
        }
        self
    }

    /// Merge the fields of `detail` (an object) into the structured content.
    pub fn with_detail(mut self, detail: Value) -> Self {
        if let Value::Object(m) = detail {
            self.detail.extend(m);
        }
        self
    }

    /// Name the transaction by its handle in journal `journal`: `preview_id` in the
    /// structured result, and in the example wherever it names the bare tx number.
    pub fn in_journal(mut self, journal: crate::JournalId) -> Self {
        let Some(tx) = self.tx else { return self };
        let handle = crate::TxHandle { journal, tx };
        self.detail
            .insert("preview_id".into(), json!(handle.to_string()));
        if let Some(Value::Object(m)) = self.example.as_deref_mut() {
            for key in ["preview_id", "tx"] {
                if m.get(key) == Some(&json!(tx.to_string())) || m.get(key) == Some(&json!(tx)) {
                    m.insert(key.into(), json!(handle.to_string()));
                }
            }
        }
        self
    }

    /// A malformed argument.
    pub fn invalid_args(tool: &str, what: impl fmt::Display, example: Value) -> Self {
        ToolError::new(
            "invalid_arguments",
            format!("{tool}: {what}"),
            format!("resend {tool} with the arguments its input schema lists"),
        )
        .with_example(with_tool(tool, example))
    }

    /// The tool the example calls (its `"tool"` key) and its arguments (the rest).
    fn example_parts(&self) -> Option<(Option<String>, Value)> {
        let mut args = *self.example.clone()?;
        let tool = args
            .as_object_mut()
            .and_then(|m| m.remove("tool"))
            .and_then(|t| t.as_str().map(str::to_string));
        Some((tool, args))
    }

    /// The text block of the tool result: `kind: message`, `Hint: …`, and
    /// `Example: tool {arguments}`.
    pub fn text(&self) -> String {
        let mut s = format!("{}: {}\nHint: {}", self.kind, self.message, self.hint);
        if let Some((tool, args)) = self.example_parts() {
            s.push_str("\nExample: ");
            if let Some(tool) = tool {
                s.push_str(&tool);
                s.push(' ');
            }
            s.push_str(&args.to_string());
        }
        s
    }

    /// The structured content of the tool result.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("error".into(), json!(self.kind));
        m.insert("message".into(), json!(self.message));
        m.insert("hint".into(), json!(self.hint));
        // The next step as data, as every answer carries it
        // ([`super::shapes::next_call`]): the example's call, and the hint in words.
        let (tool, arguments) = match self.example_parts() {
            Some((tool, arguments)) => {
                m.insert(
                    "example".into(),
                    json!({"tool": tool, "arguments": arguments}),
                );
                (tool, arguments)
            }
            None => (None, json!({})),
        };
        m.insert(
            "next_step".into(),
            super::shapes::next_call(tool.as_deref(), arguments, self.hint.clone()),
        );
        if let Some(tx) = self.tx {
            m.insert("tx".into(), json!(tx));
        }
        for (k, v) in &self.detail {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
    }

    /// Translate a library error into the next MCP call to make. `agent` fills the
    /// examples.
    pub fn from_engine(e: &Error, agent: &str) -> Self {
        let tx = e.tx();
        let id = tx.map(|t| t.to_string()).unwrap_or_default();
        let err = match e {
            Error::StaleSnapshot { tx, paths, writers } => ToolError::new(
                "source_modified",
                format!(
                    "{} changed on disk since preview {tx} was made (the content hash no longer matches the snapshot){}; nothing was written",
                    crate::error::and_list(paths),
                    crate::error::writers_note(writers)
                ),
                "call edit_rebase with this preview_id to merge the change on disk into the candidate (then edit_commit again), or call edit_preview again with content based on the file as it is now",
            )
            .with_example(json!({"tool": "edit_rebase", "preview_id": id, "agent_id": agent}))
            .with_detail(json!({"changed_by": writers})),
            // The same refusal as a stale preview's: the file moved on since the
            // content was made (here: since the writer read it), nothing was written.
            Error::BaseChanged { paths, found } => ToolError::new(
                "source_modified",
                format!(
                    "{} changed on disk since the content you sent was made from it ({}); nothing was written",
                    crate::error::and_list(paths),
                    found.join("; ")
                ),
                "read the file again (edit_preview reports its content_hash and bytes) and send content based on it as it is now, with that hash as expected_base; or call edit_rebase on a preview to merge the change on disk",
            )
            .with_example(json!({"tool": "edit_preview", "file_path": paths.first().cloned().unwrap_or_default(), "agent_id": agent, "new_content": "…", "expected_base": {"content_hash": "…", "bytes": 0}})),
            Error::StaleRollback {
                tx,
                paths,
                changed_by,
                outside,
                absent,
            } => ToolError::new(
                "stale_rollback",
                format!(
                    "{} changed since tx {tx} was committed{}{}; nothing was written",
                    crate::error::and_list(paths),
                    match changed_by.as_slice() {
                        [] => String::new(),
                        later => format!(
                            " (by tx {})",
                            later.iter().map(u64::to_string).collect::<Vec<_>>().join(", tx ")
                        ),
                    },
                    match absent.as_slice() {
                        [] => String::new(),
                        gone => format!(
                            "; {} {} absent now (deleted or moved), and a forced rollback re-creates {}",
                            crate::error::and_list(gone),
                            if gone.len() == 1 { "is" } else { "are" },
                            if gone.len() == 1 { "it" } else { "them" }
                        ),
                    }
                ),
                if changed_by.is_empty() || !outside.is_empty() {
                    format!("to undo only tx {tx}'s change and keep what was written since, call edit_revert with tx={tx} (a preview to review, then edit_commit); look at the files first (one was also written outside ultra-edit when the message says so); to restore the pre-commit bytes anyway, call edit_rollback again with force=true (the current bytes are stored in the journal first, so nothing is lost)")
                } else {
                    format!("to undo only tx {tx}'s change and keep the later ones, call edit_revert with tx={tx} (a preview to review, then edit_commit); or roll back the later transaction(s) first (edit_rollback of the newest), then this one; force=true would overwrite the files and undo the later change(s) there too (the current bytes are stored in the journal first)")
                },
            )
            .with_example(json!({"tool": "edit_revert", "tx": id, "agent_id": agent})),
            Error::StaleRevision { tx, base, latest } => ToolError::new(
                "stale_revision",
                format!("the edits were written against revision {base} of preview {tx}, but the latest revision is {latest}"),
                format!("call edit_show to read revision {latest} and write the edits against it, or resend edit_revise with rebase=true to merge them onto revision {latest}"),
            )
            .with_example(json!({"tool": "edit_revise", "preview_id": id, "agent_id": agent, "base_revision": base, "rebase": true, "edits": []})),
            Error::NothingToRebase { tx, revision, blocked } if blocked.is_empty() => ToolError::new(
                "nothing_to_rebase",
                format!("preview {tx}: every file on disk still matches the snapshot of revision {revision}"),
                "the preview is not stale; call edit_commit",
            )
            .with_example(json!({"tool": "edit_commit", "preview_id": id, "agent_id": agent, "confirm": true})),
            Error::NothingToRebase { tx, revision, blocked } => {
                let (hint, example) = if crate::error::summary_has(blocked, "no_changes") {
                    (
                        "revision changes nothing (the files hold its candidate already): there is nothing to commit; call edit_abort to drop the preview, or edit_revise with new edits",
                        json!({"tool": "edit_abort", "preview_id": id, "agent_id": agent}),
                    )
                } else {
                    (
                        "the preview is not stale but cannot be committed: call edit_show to read validation_issues, then edit_revise with corrected edits",
                        json!({"tool": "edit_show", "preview_id": id}),
                    )
                };
                ToolError::new(
                    "nothing_to_rebase",
                    format!("preview {tx}: every file on disk still matches the snapshot of revision {revision}, but revision {revision} cannot be committed: {}", blocked.join("; ")),
                    hint,
                )
                .with_example(example)
            }
            Error::ValidationFailed { tx, revision, summary } => ToolError::new(
                "validation_failed",
                format!("revision {revision} of preview {tx} has validation errors: {}; nothing was written", summary.join("; ")),
                "call edit_show to read validation_issues, then edit_revise with corrected edits (or edit_abort and start again with edit_preview)",
            )
            .with_example(json!({"tool": "edit_show", "preview_id": id})),
            Error::UnknownTx { tx } => not_found(&tx.to_string(), agent),
            Error::UnknownRevision { tx, revision, latest } => ToolError::new(
                "unknown_revision",
                format!("preview {tx} has no revision {revision} (the latest is {latest})"),
                "call edit_show without revision to see the latest",
            )
            .with_example(json!({"tool": "edit_show", "preview_id": id})),
            Error::WrongState {
                tx,
                state,
                reason,
                verb,
                ..
            } => wrong_state(*tx, *state, Some(reason), Some(*verb), agent),
            Error::LockTimeout { .. } => ToolError::new(
                "lock_timeout",
                e.to_string(),
                "another process is committing in this workspace; call the same tool again in a few seconds",
            ),
            Error::CommitFailed { .. } => ToolError::new(
                "commit_failed",
                e.to_string(),
                "the batch was reverted and every file is as before; fix the cause named above (permissions, an immutable directory, disk space), then call edit_commit again with the same preview_id, or edit_abort it",
            )
            .with_example(json!({"tool": "edit_commit", "preview_id": id, "agent_id": agent, "confirm": true})),
            Error::Interrupted {
                rollback_of: Some(of),
                ..
            } => ToolError::new(
                "interrupted",
                e.to_string(),
                "the server was asked to stop while the rollback's batch staged its files; it was reverted and every file is as before: call edit_rollback again for the same transaction",
            )
            .with_example(json!({"tool": "edit_rollback", "preview_id": of, "agent_id": agent, "confirm": true})),
            Error::Interrupted { .. } => ToolError::new(
                "interrupted",
                e.to_string(),
                "the server was asked to stop while the batch staged its files; it was reverted and every file is as before: call edit_commit again with the same preview_id",
            )
            .with_example(json!({"tool": "edit_commit", "preview_id": id, "agent_id": agent, "confirm": true})),
            Error::NeedsAttention { attention, .. } => {
                let hint = match attention.outcome() {
                    Outcome::NeedsAPerson => "someone else wrote the file(s) while the batch was settling; this needs a person: put the file(s) back and run `ultra-edit recover` in the workspace, or `ultra-edit recover --overwrite` (journal_dump shows the batch)",
                    Outcome::WillLand => "the change will land: recovery completes the batch (it runs before the next edit_commit or edit_rollback, and on `ultra-edit recover`); journal_log then shows it committed",
                    Outcome::WillRevert => "the change will not land: recovery finishes the revert (it runs before the next edit_commit or edit_rollback); then call edit_commit again with the same preview_id",
                    Outcome::MayLand => "recovery (before the next edit_commit or edit_rollback) completes the batch if its commit point reached the disk and reverts it otherwise; journal_log then shows which",
                };
                ToolError::new("needs_attention", e.to_string(), hint)
                    .with_example(json!({"tool": "journal_log", "agent_id": agent}))
                    .with_detail(json!({"attention": attention, "outcome": attention.outcome()}))
            }
            Error::RecoveryNeedsOwner { .. } => ToolError::new(
                "recovery_needs_owner",
                e.to_string(),
                "an interrupted batch must be settled by root or by its files' owner: run `ultra-edit recover` in the workspace as one of them (this server's user cannot); journal_log works meanwhile",
            )
            .with_example(json!({"tool": "journal_log", "agent_id": agent})),
            Error::Path(_) => ToolError::new(
                "path_refused",
                e.to_string(),
                "give paths relative to the workspace root (or absolute inside it), outside .git/, .jj/, .hg/, .svn/ and .ultra-edit/, not through symlinks; nothing was changed",
            ),
            Error::Edit(edit) => {
                let err = ToolError::new(edit.code(), e.to_string(), edit_hint(edit.code()));
                match edit.failures() {
                    f if f.is_empty() => err,
                    f => err.with_detail(json!({ "failures": f })),
                }
            }
            Error::ForeignHandle { .. } => ToolError::new(
                "foreign_handle",
                e.to_string(),
                "this preview_id was made by another workspace's journal (another root, or a copy of this one); send it to the server of that workspace, or call edit_preview here for a preview of this workspace",
            )
            .with_example(json!({"tool": "journal_log", "agent_id": agent})),
            Error::UnresolvedConflicts { .. } => ToolError::new(
                "unresolved_conflicts",
                e.to_string(),
                "call edit_show for the preview's conflict_list, then edit_revise with a plan that replaces each marked region with the resolved lines; rebase again after that if the disk moved on",
            ),
            Error::PreviewExpired { .. } => ToolError::new(
                "preview_expired",
                e.to_string(),
                "call edit_preview again to make a fresh preview (the file may have changed since)",
            )
            .with_example(json!({"tool": "edit_preview", "file_path": "…", "agent_id": agent, "new_content": "…"}))
            .with_detail(json!({"age_ms": match e { Error::PreviewExpired { age_ms, .. } => *age_ms, _ => 0 }, "max_age_ms": match e { Error::PreviewExpired { max_age_ms, .. } => *max_age_ms, _ => 0 }})),
            Error::NothingToChange { paths } => ToolError::new(
                "nothing_to_change",
                e.to_string(),
                "check that each edit changes its file (a new equal to its old, or a file written with the content it has, changes nothing); no preview was made, so there is nothing to abort; a plan with \"policy\": {\"identical_content\": \"allow\"} is recorded anyway",
            )
            .with_example(json!({"tool": "edit_preview", "file_path": paths.first().cloned().unwrap_or_default(), "agent_id": agent, "new_content": "…"})),
            _ => ToolError::new(e.kind(), e.to_string(), "nothing was changed by this call; journal_log shows the state of every transaction"),
        };
        // The library's own data, for a client that renders its own advice: kind,
        // subject and next step (docs/embedding.md, "Errors as data").
        let paths = e.paths();
        err.with_tx(tx).with_detail(json!({"library_error": {
            "kind": e.kind(),
            "tx": tx,
            "paths": paths,
            "next_step": e.next_step(),
        }}))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::error::Error for ToolError {}

/// `example` with `"tool": tool` added.
pub fn with_tool(tool: &str, mut example: Value) -> Value {
    if let Value::Object(m) = &mut example {
        m.insert("tool".into(), json!(tool));
    }
    example
}

/// `preview_id` names no preview.
pub fn not_found(preview_id: &str, agent: &str) -> ToolError {
    ToolError::new(
        "preview_not_found",
        format!("preview {preview_id:?} not found in this workspace's journal"),
        "call edit_preview to create a preview and use the preview_id it returns (journal_log lists existing previews)",
    )
    .with_example(json!({"tool": "edit_preview", "file_path": "src/lib.rs", "agent_id": agent, "new_content": "…"}))
}

/// The tx is not open (or `reason` says why `verb` does not fit it): say what can be
/// done with it instead, from the typed state, reason and verb, never from their
/// wording.
pub fn wrong_state(
    tx: u64,
    state: TxState,
    reason: Option<&StateReason>,
    verb: Option<Verb>,
    agent: &str,
) -> ToolError {
    let in_flight = |batch: u64, attention: bool| {
        let (message, hint) = if attention {
            (
                format!("preview {tx}'s commit (batch {batch}) needs attention: a file holds bytes that are neither its old nor its new content"),
                "this needs a person: put the file(s) back and run `ultra-edit recover` in the workspace, or `ultra-edit recover --overwrite` (journal_dump shows the batch)",
            )
        } else {
            (
                format!("preview {tx}'s commit (batch {batch}) is under way or was interrupted"),
                "another call is committing it, or it was interrupted: recovery settles it before the next edit_commit or edit_rollback; call journal_log to see its state",
            )
        };
        ToolError::new("batch_in_flight", message, hint)
            .with_example(json!({"tool": "journal_log", "agent_id": agent}))
            .with_tx(Some(tx))
    };
    match reason {
        Some(StateReason::BatchInFlight { batch, state: bs }) => {
            return in_flight(*batch, *bs == BatchState::NeedsAttention)
        }
        Some(StateReason::Pruned) => {
            return ToolError::new(
                "preview_pruned",
                format!("transaction {tx} was pruned by `journal gc`: its revisions and file images are gone"),
                "it can no longer be shown, committed or rolled back; journal_log still lists it; call edit_preview for a new change",
            )
            .with_example(json!({"tool": "journal_log", "agent_id": agent}))
            .with_tx(Some(tx))
        }
        Some(StateReason::ChangedMeanwhile) => {
            return ToolError::new(
                "preview_changed",
                format!("preview {tx} changed (another call revised, committed or aborted it) while this call ran"),
                "call edit_show to read its state, then call again",
            )
            .with_example(json!({"tool": "edit_show", "preview_id": tx.to_string()}))
            .with_tx(Some(tx))
        }
        // Never a rollback as the next step here: the caller did not ask to undo (a
        // rollback that already landed is answered with its receipt, `already`), and
        // an agent that retried a commit and followed "call edit_rollback" undid its
        // own work, or someone else's undo (issue 29, item 3).
        Some(StateReason::RolledBack { by, redo }) => {
            let hint = match redo {
                Some(_) => format!("its change is not on disk: transaction {by} undid it (journal_log shows the transactions); call edit_preview for a new change"),
                None => format!("nothing redoes it now: transaction {by}'s rollback is itself undone, so the files hold this preview's change again (journal_log shows the transactions); call edit_preview for a new change"),
            };
            return ToolError::new(
                "preview_rolled_back",
                format!("preview {tx} was committed and then rolled back by transaction {by}"),
                hint,
            )
            .with_example(json!({"tool": "journal_log", "agent_id": agent}))
            .with_tx(Some(tx));
        }
        Some(StateReason::OtherRevisionCommitted {
            revision,
            batch,
            asked,
        }) => {
            return ToolError::new(
                "preview_consumed",
                format!("preview {tx} revision {revision} was committed (batch {batch}), not revision {asked}: the disk holds revision {revision}'s change"),
                "call edit_show to see what landed; call edit_preview for a further change",
            )
            .with_example(json!({"tool": "edit_show", "preview_id": tx.to_string(), "revision": revision}))
            .with_tx(Some(tx));
        }
        Some(StateReason::Redone { undone_by, redo }) => {
            return ToolError::new(
                "wrong_state",
                format!("transaction {tx}'s change was rolled back by transaction {undone_by} and redone by transaction {redo}: the change is transaction {redo}'s now"),
                format!("to undo the change, call edit_rollback with tx = {redo}"),
            )
            .with_example(json!({"tool": "edit_rollback", "preview_id": redo.to_string(), "agent_id": agent}))
            .with_tx(Some(tx))
        }
        Some(StateReason::RollbackTx { of }) => {
            return ToolError::new(
                "wrong_state",
                format!("transaction {tx} is the rollback of transaction {of}; only edit_rollback applies it"),
                "call edit_rollback on the original transaction again",
            )
            .with_example(json!({"tool": "edit_rollback", "preview_id": of.to_string(), "agent_id": agent}))
            .with_tx(Some(tx))
        }
        _ => {}
    }
    let (kind, message, hint, example) = match state {
        TxState::Committed => (
            "preview_consumed",
            format!("preview {tx} was already committed and accepts no further revision"),
            "to change the files again call edit_preview for a new preview (edit_show shows what landed)",
            json!({"tool": "edit_preview", "file_path": "…", "agent_id": agent, "new_content": "…"}),
        ),
        // Undoing an aborted preview: nothing of it reached the disk, and "start
        // again" would redo what the caller meant to undo.
        TxState::Aborted if matches!(verb, Some(Verb::RollBack | Verb::Revert)) => (
            "preview_aborted",
            format!("preview {tx} was aborted and never changed a file, so there is nothing to undo"),
            "call journal_log to see which transactions changed the files",
            json!({"tool": "journal_log", "agent_id": agent}),
        ),
        TxState::Aborted => (
            "preview_aborted",
            format!("preview {tx} was aborted and accepts nothing further"),
            "call edit_preview to start again",
            json!({"tool": "edit_preview", "file_path": "…", "agent_id": agent, "new_content": "…"}),
        ),
        TxState::RolledBack => (
            "preview_rolled_back",
            format!("preview {tx} was committed and then rolled back"),
            "its change is not on disk: call edit_preview for a new change (journal_log shows the rollback as rolled_back_by)",
            json!({"tool": "journal_log", "agent_id": agent}),
        ),
        TxState::Open => (
            "wrong_state",
            format!("transaction {tx} is {state}"),
            "only a committed transaction can be rolled back: call edit_commit first",
            json!({"tool": "edit_commit", "preview_id": tx.to_string(), "agent_id": agent, "confirm": true}),
        ),
    };
    ToolError::new(kind, message, hint)
        .with_example(example)
        .with_tx(Some(tx))
}

fn edit_hint(code: &str) -> &'static str {
    match code {
        "invalid_plan" => "fix the edits: each is an op object such as {\"op\": \"replace_text\", \"path\": …, \"old\": …, \"new\": …} (see the input schema), or m1nd's {\"file_path\": …, \"new_content\": …}; nothing was changed",
        "target_not_found" => "old/anchor must match the current bytes exactly; read the file (or edit_show the candidate when revising) and copy the text, or replace the whole file with file_path + new_content",
        "ambiguous_target" => "add \"occurrence\": N (1-based) to the edit (or \"occurrence\": \"all\" to replace_text every match), or include more surrounding text so it matches once",
        "unresolved_targets" => "fix every edit listed in failures (each names its edit number, path and kind), then resend the whole plan; nothing was changed",
        "unsupported_encoding" => "text edits cannot change a UTF-16/UTF-32 file: send a replace_file edit with content_base64 holding the complete new file in its encoding (byte-order mark included); nothing was changed",
        "encoding_mismatch" => "the file is not UTF-8: insert ASCII text only, or send a replace_file edit with content_base64 holding the complete new file in its own encoding; nothing was changed",
        "occurrence_out_of_range" | "line_out_of_range" => "read the file (or edit_show the candidate when revising) for the current count, and resend",
        "overlapping_edits" => "merge the overlapping edits into one, or make the second one with edit_revise",
        "file_not_found" => "the file does not exist: use create_file (or m1nd's file_path + new_content, which creates it)",
        "file_exists" => "the file exists already: use replace_file or a text edit (m1nd's file_path + new_content replaces it)",
        "symbol_not_found" => "name the definition by its scope path joined with '.', e.g. \"Config.load\" (the error lists definitions of that name elsewhere, or the top-level ones); nothing was changed",
        "ambiguous_symbol" => "add \"occurrence\": N (1-based, in file order) to pick one of the definitions listed in candidates, with their kinds and lines",
        "symbol_not_splicable" => "symbol ops replace whole lines: edit this definition with replace_text or replace_lines instead; nothing was changed",
        "indentation_mismatch" => "indent every line of the content relative to its first line (it is moved as one block to the definition's depth), and resend; nothing was changed",
        "symbol_scope_changed" => "the content would move definitions to another scope (listed in the message): make it open and close its own blocks at one depth, and resend; nothing was changed",
        "no_body" => "the definition is a declaration without a body: give it one with replace_symbol, or name (occurrence) the definition that has one; nothing was changed",
        "wrong_kind" => "name a definition of a kind the op applies to (replace_body and replace_arm: a function or method; insert_field: a struct, union, class or interface; insert_variant: an enum or union), or use replace_symbol; nothing was changed",
        "unsupported_target" => "the op does not support this construct: make the edit with the text op the message names (replace_lines with the exact lines given, or replace_symbol); nothing was changed",
        "empty_block" => "give the block a statement (`pass` at least) in the content, or delete the enclosing definition instead; nothing was changed",
        "unsupported_language" => "symbol ops work in Rust, Python, JavaScript, TypeScript/TSX and Go files: use replace_text or replace_lines for this one; nothing was changed",
        "syntax_feature_disabled" => "this build has no grammars (Cargo feature `syntax`): use replace_text or replace_lines; nothing was changed",
        _ => "fix the edit and resend; nothing was changed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_has_kind_hint_and_example() {
        let e = ToolError::from_engine(
            &Error::StaleSnapshot {
                tx: 3,
                paths: vec!["a.txt".into()],
                writers: Vec::new(),
            },
            "me",
        );
        let t = e.text();
        assert!(
            t.starts_with("source_modified: a.txt changed on disk"),
            "{t}"
        );
        assert!(t.contains("\nHint: call edit_rebase"), "{t}");
        assert!(t.contains("edit_preview"), "{t}");
        assert!(
            t.contains("\nExample: edit_rebase {\"agent_id\":\"me\",\"preview_id\":\"3\"}"),
            "{t}"
        );
        assert_eq!(e.to_json()["tx"], 3);
    }

    #[test]
    fn committed_preview_is_consumed() {
        let e = ToolError::from_engine(
            &Error::WrongState {
                tx: 4,
                state: TxState::Committed,
                pruned: false,
                verb: crate::error::Verb::Commit,
                reason: StateReason::Committed {
                    revision: 0,
                    batch: 1,
                },
            },
            "me",
        );
        assert_eq!(e.kind, "preview_consumed");
        // Never a rollback unless the caller asked to undo (issue 29, item 3).
        assert!(!e.hint.contains("edit_rollback"), "{}", e.hint);
        assert_eq!(e.example.as_ref().unwrap()["tool"], "edit_preview");
    }

    #[test]
    fn needs_attention_says_as_data_whether_the_change_lands() {
        let e = ToolError::from_engine(
            &Error::NeedsAttention {
                tx: 2,
                batch: 3,
                attention: crate::error::Attention::RevertNotRecorded {
                    cause: "rename a.txt: EIO".into(),
                    journal: "disk full".into(),
                    installed: vec!["a.txt".into()],
                },
            },
            "me",
        );
        let v = e.to_json();
        assert_eq!(v["error"], "needs_attention");
        assert_eq!(v["outcome"], "will_land");
        assert_eq!(
            v["attention"]["revert_not_recorded"]["installed"],
            json!(["a.txt"])
        );
        assert!(e.hint.contains("the change will land"), "{}", e.hint);
        assert_eq!(v["tx"], 2);
    }
}
