//! The tools as plain functions, JSON arguments → JSON result, over one [`Journal`].
//!
//! Nothing here knows MCP: [`EditTools::call`] is what the rmcp server calls, and what
//! an embedder with its own MCP stack (m1nd) can route its `edit_*` tool calls to.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::errors::{self, ToolError};
use super::shapes::{self, rel_of};
use crate::commit::{CommitOptions, RollbackOptions};
use crate::dump::DumpFilter;
use crate::edit::{Edit, EditError, ExpectedBase, Plan};
use crate::error::Error;
use crate::journal::records::{Receipt, TxState};
use crate::tx::{Preview, ReviseOptions};
use crate::workspace::Journal;

/// Called once per successful write that asked for `reingest`, with the touched paths
/// (root-relative, sorted): the embedder's index refresh (m1nd's re-ingest).
pub type ReingestFn = Arc<dyn Fn(&[String]) + Send + Sync>;

/// The edit tools over one journal handle.
pub struct EditTools {
    journal: Arc<Journal>,
    preview_ttl: Option<Duration>,
    reingest: Option<ReingestFn>,
    policy: Option<crate::Policy>,
    allow_commands: bool,
}

/// What an agent's call resolved to.
type Outcome = Result<Value, ToolError>;

impl EditTools {
    /// Tools over `journal`, with no preview lifetime and no reingest hook.
    pub fn new(journal: Arc<Journal>) -> Self {
        EditTools {
            journal,
            preview_ttl: None,
            reingest: None,
            policy: None,
            allow_commands: false,
        }
    }

    /// Let clients run shell commands: `edit_run` and the `check` argument (feature
    /// `sandbox`, docs/commands.md). Default `false`: both are refused with
    /// `commands_not_allowed`, and [`super::tool_definitions_for`] leaves them out.
    /// Without the feature, `true` changes nothing.
    pub fn with_commands(mut self, allow: bool) -> Self {
        self.allow_commands = allow && cfg!(feature = "sandbox");
        self
    }

    /// Whether [`EditTools::with_commands`] allowed commands.
    pub fn commands_allowed(&self) -> bool {
        self.allow_commands
    }

    /// Refuse to continue (commit, revise, rebase) a preview made longer than `ttl`
    /// ago, by the journal's clock: the library's max preview age
    /// ([`crate::CommitOptions::max_preview_age`], [`Journal::check_preview_age`]),
    /// refused as `preview_expired`. Default: none, since previews are durable.
    pub fn with_preview_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.preview_ttl = ttl;
        self
    }

    /// Call `hook` after a write whose call asked for `reingest` (the default), with
    /// the touched paths; the result then reports `reingested: true`. Without a hook
    /// (the stand-alone server, which has no index) `reingested` is false.
    pub fn with_reingest_hook(mut self, hook: impl Fn(&[String]) + Send + Sync + 'static) -> Self {
        self.reingest = Some(Arc::new(hook));
        self
    }

    /// Give the plans the tools build this policy instead of the journal's (e.g.
    /// m1nd's last write wins for a path given twice to `apply_batch`:
    /// [`crate::SamePath::LastWriteWins`]). Default: the journal's.
    pub fn with_policy(mut self, policy: crate::Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The journal handle.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Run tool `name` with `args` (a JSON object). `Ok` is the tool's result; `Err` a
    /// tool error whose text teaches the next call.
    pub fn call(&self, name: &str, args: Value) -> Outcome {
        let start = Instant::now();
        let map = match args {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::invalid_args(
                    name,
                    format!("arguments must be a JSON object, not {other}"),
                    json!({"agent_id": "me"}),
                ))
            }
        };
        if let Some(e) = unknown_argument(name, &map) {
            return Err(e.in_journal(self.journal.id()));
        }
        let a = Args { tool: name, map };
        let id = self.journal.id();
        let outcome = match name {
            "edit_preview" => self.edit_preview(&a, start),
            "edit_revise" => self.edit_revise(&a, start),
            "edit_rebase" => self.edit_rebase(&a, start),
            "edit_show" => self.edit_show(&a, start),
            "edit_abort" => self.edit_abort(&a),
            "edit_commit" => self.edit_commit(&a, start),
            "edit_rollback" => self.edit_rollback(&a, start),
            "edit_revert" => self.edit_revert(&a, start),
            "apply_batch" => self.apply_batch(&a, start),
            "journal_log" => self.journal_log(&a),
            "journal_dump" => self.journal_dump(&a),
            super::commands::EDIT_RUN => self.edit_run(&a, start),
            super::commands::EDIT_CONFIG => self.edit_config(&a),
            _ => Err(ToolError::new(
                "unknown_tool",
                format!("there is no tool {name:?}"),
                format!(
                    "tools/list lists the tools: {}",
                    super::TOOL_NAMES.join(", ")
                ),
            )),
        };
        // Every error names its tx by handle, as every result does.
        outcome.map_err(|e| e.in_journal(id))
    }

    // ---- the tools ----------------------------------------------------------------

    fn edit_preview(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        let check = self.check(a)?;
        let (plan, focus) = self.plan(a, &agent)?;
        // A plan that changes nothing is refused and records nothing, as the CLI's
        // `preview` refuses it (issue 33, item 11): no open tx is left behind.
        let opts = crate::PreviewOptions::new().with_refuse_nothing_to_change(true);
        let p = match check {
            #[cfg(feature = "sandbox")]
            Some(check) => {
                self.engine(self.journal.preview_checked(&plan, opts, &check), &agent)?
            }
            _ => self.engine(self.journal.preview_with(&plan, opts), &agent)?,
        };
        Ok(with_base_check(
            self.preview_out(&p, focus.as_deref(), start),
            &p,
        ))
    }

    /// The check to run: the `check` argument (refused unless commands are allowed),
    /// else, when commands are allowed and `no_check` is not true, the journal's
    /// default check (`edit_config`); a server that does not allow commands runs no
    /// default check.
    #[cfg(feature = "sandbox")]
    fn check(&self, a: &Args) -> Result<Option<crate::sandbox::CheckOptions>, ToolError> {
        let given = a.str("check")?;
        if given.is_some() && !self.allow_commands {
            return Err(super::commands::not_allowed("the check argument"));
        }
        if !self.allow_commands || a.bool("no_check")?.unwrap_or(false) {
            return Ok(None);
        }
        let command = match given {
            Some(c) => c,
            None => match self.engine(self.journal.default_check(), "")? {
                Some(c) => c,
                None => return Ok(None),
            },
        };
        let mut c = crate::sandbox::CheckOptions::new(command);
        if let Some(timeout) = a.timeout()? {
            c.timeout = timeout;
        }
        Ok(Some(c))
    }

    /// The `check` argument: without the feature, refused whenever given.
    #[cfg(not(feature = "sandbox"))]
    fn check(&self, a: &Args) -> Result<Option<()>, ToolError> {
        match a.str("check")? {
            None => Ok(None),
            Some(_) => Err(super::commands::not_allowed("the check argument")),
        }
    }

    /// `edit_run`: a command's writes as a preview (or a revision of `preview_id`).
    #[cfg(feature = "sandbox")]
    fn edit_run(&self, a: &Args, start: Instant) -> Outcome {
        if !self.allow_commands {
            return Err(super::commands::not_allowed("edit_run"));
        }
        let agent = a.agent()?;
        let Some(command) = a.str("command")? else {
            return Err(ToolError::invalid_args(
                a.tool,
                "command is missing: the shell command line to run",
                json!({"agent_id": agent, "command": "sed -i 's/old/new/' src/lib.rs"}),
            ));
        };
        let mut opts = crate::sandbox::RunOptions::new(command);
        opts.check = self.check(a)?;
        if let Some(timeout) = a.timeout()? {
            opts.timeout = timeout;
        }
        opts.keep_on_failure = a.bool("keep_on_failure")?.unwrap_or(false);
        opts.include_ignored = a.bool("include_ignored")?.unwrap_or(false);
        opts.strict = a.bool("strict")?.unwrap_or(false);
        opts.agent = Some(agent.clone());
        opts.cwd = Some(self.journal.root().to_path_buf());
        opts.policy = self.policy;
        let p = if a.map.contains_key("preview_id") {
            let (tx, _) = self.open_handle(a, &agent, true)?;
            self.engine(self.journal.revise_run(tx, &opts), &agent)
                .map_err(|e| e.path_not_from_a_plan(true))?
        } else {
            self.engine(self.journal.preview_run(&opts), &agent)
                .map_err(|e| e.path_not_from_a_plan(true))?
        };
        Ok(self.preview_out(&p, None, start))
    }

    #[cfg(not(feature = "sandbox"))]
    fn edit_run(&self, _a: &Args, _start: Instant) -> Outcome {
        Err(super::commands::not_allowed("edit_run"))
    }

    /// `edit_config`: show the journal's default check, or set (`check`) or remove
    /// (`unset`) it; refused unless commands are allowed.
    #[cfg(feature = "sandbox")]
    fn edit_config(&self, a: &Args) -> Outcome {
        if !self.allow_commands {
            return Err(super::commands::not_allowed("edit_config"));
        }
        let agent = a.agent()?;
        let check = a.str("check")?;
        let unset = a.bool("unset")?.unwrap_or(false);
        if unset && check.is_some() {
            return Err(ToolError::invalid_args(
                a.tool,
                "give check or unset, not both",
                json!({"agent_id": agent, "unset": true}),
            ));
        }
        if unset || check.is_some() {
            self.engine(self.journal.set_default_check(check.as_deref()), &agent)?;
        }
        let check = self.engine(self.journal.default_check(), &agent)?;
        Ok(json!({"check": check}))
    }

    #[cfg(not(feature = "sandbox"))]
    fn edit_config(&self, _a: &Args) -> Outcome {
        Err(super::commands::not_allowed("edit_config"))
    }

    fn edit_revise(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        let (tx, _) = self.open_handle(a, &agent, true)?;
        let check = self.check(a)?;
        let (plan, focus) = self.plan(a, &agent)?;
        let mut opts = ReviseOptions::new().with_rebase(a.bool("rebase")?.unwrap_or(false));
        opts.base = a.u64("base_revision")?.map(|n| n as u32);
        let p = match check {
            #[cfg(feature = "sandbox")]
            Some(check) => {
                self.engine(self.journal.revise_checked(tx, opts, &plan, &check), &agent)?
            }
            _ => self.engine(self.journal.revise(tx, opts, &plan), &agent)?,
        };
        let interdiff = self.engine(
            self.journal
                .interdiff(tx, p.revision.saturating_sub(1), p.revision),
            &agent,
        )?;
        let mut out = with_base_check(self.preview_out(&p, focus.as_deref(), start), &p);
        out["interdiff"] = json!(interdiff);
        Ok(out)
    }

    fn edit_rebase(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        let (tx, _) = self.open_handle(a, &agent, true)?;
        let p = match self.check(a)? {
            #[cfg(feature = "sandbox")]
            Some(check) => self.engine(self.journal.rebase_checked(tx, &check), &agent)?,
            _ => self.engine(self.journal.rebase(tx), &agent)?,
        };
        Ok(self.preview_out(&p, None, start))
    }

    fn edit_show(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.str("agent_id")?.unwrap_or_default();
        let tx = self.handle(a, "preview_id", &agent)?;
        let revision = a.u64("revision")?.map(|n| n as u32);
        let p = self.show(tx, revision, &agent)?;
        let mut out = self.preview_out(&p, None, start);
        if let Some(from) = a.u64("from_revision")? {
            let from = u32::try_from(from).unwrap_or(u32::MAX);
            let interdiff = self.engine(self.journal.interdiff(tx, from, p.revision), &agent)?;
            out["interdiff"] = json!(interdiff);
        }
        if let Ok(age) = self.journal.preview_age(tx) {
            out["age_ms"] = json!(age);
        }
        out["expired"] = json!(p.state == TxState::Open && self.expired(tx).is_some());
        Ok(out)
    }

    fn edit_abort(&self, a: &Args) -> Outcome {
        let agent = a.agent()?;
        let (tx, _) = self.open_handle(a, &agent, false)?;
        let rec = self.engine(self.journal.abort(tx), &agent)?;
        Ok(json!({
            "preview_id": self.journal.handle(tx).to_string(),
            "tx": tx,
            "state": rec.record.state,
            "aborted": true,
            "next_step": shapes::next_call(
                Some("edit_preview"),
                json!({"agent_id": agent}),
                "the preview can no longer be committed; call edit_preview to start again",
            ),
        }))
    }

    fn edit_commit(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        // A retried commit that landed already answers with its receipt, `already`
        // (issue 29, item 3): never an error whose next step would undo it.
        if let Some(out) = self.committed_already(a, &agent, start)? {
            return Ok(out);
        }
        let (tx, p) = self.open_handle(a, &agent, true)?;
        if a.map.get("confirm") != Some(&Value::Bool(true)) {
            let files: Vec<&str> = p.files.iter().map(|f| f.path.as_str()).collect();
            return Err(ToolError::new(
                "confirm_required",
                format!(
                    "edit_commit writes files only with confirm=true; preview {tx} ({}) was not committed and nothing was written",
                    if files.is_empty() { "no file changes".to_string() } else { files.join(", ") }
                ),
                "review the preview's diff, then resend edit_commit with confirm=true",
            )
            .with_example(json!({"tool": "edit_commit", "preview_id": self.journal.handle(tx).to_string(), "agent_id": agent, "confirm": true}))
            .with_tx(Some(tx)));
        }
        let reingest = a.bool("reingest")?.unwrap_or(true);
        let mut opts = CommitOptions::new();
        opts.max_preview_age = self.preview_ttl;
        let report = self.engine(self.journal.commit_report(tx, opts), &agent)?;
        let receipt = report.receipt;
        let attention = self.recorded(&receipt);
        let reingested = self.reingest(reingest, &[&receipt]);
        let mut out = shapes::commit_json(&self.journal, &p, &receipt, None, reingested, ms(start));
        out["already"] = json!(report.already);
        if let Some(a) = attention {
            out["journal_attention"] = a;
        }
        Ok(out)
    }

    /// `edit_commit` of a preview that is committed already: `Some` (the commit's
    /// answer, from the journal's receipt, with `already: true` and nothing written)
    /// when the commit was of its latest revision; an error naming the committed
    /// revision when it was another; `None` when the preview is not committed (the
    /// commit goes on as usual). Checked for the agent and `confirm` as a commit is.
    fn committed_already(
        &self,
        a: &Args,
        agent: &str,
        start: Instant,
    ) -> Result<Option<Value>, ToolError> {
        let tx = self.handle(a, "preview_id", agent)?;
        let p = self.show(tx, None, agent)?;
        if p.state != TxState::Committed || a.map.get("confirm") != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        check_agent(&p, agent, "commit")?;
        let report = self.engine(
            self.journal.commit_report(tx, CommitOptions::default()),
            agent,
        )?;
        let mut out =
            shapes::commit_json(&self.journal, &p, &report.receipt, None, false, ms(start));
        out["already"] = json!(report.already);
        out["next_step"] = shapes::next_call(
            Some("edit_rollback"),
            json!({"preview_id": p.handle.to_string(), "agent_id": agent}),
            format!(
                "already committed: preview {} landed before this call (batch {}), and nothing was written now; edit_rollback with preview_id \"{}\" restores the previous bytes if you mean to undo it",
                p.handle, report.receipt.batch, p.handle
            ),
        );
        Ok(Some(out))
    }

    /// Wait until the journal has recorded the landed batch of `receipt` (its
    /// completion runs in the background: docs/commit-protocol.md, step 7), so the
    /// answer says whether it did. `None` when it did; else what the answer carries as
    /// `journal_attention`. The call still succeeded — every file holds its new content
    /// and the receipt stands; the next recovery records it with the same receipt — so
    /// it is not answered as an error, which an agent would read as "not written" and
    /// retry. Only this tx's failure is taken ([`Journal::flush_tx`]): on the shared
    /// handle another agent's failed completion is that agent's to hear.
    fn recorded(&self, receipt: &Receipt) -> Option<Value> {
        let e = self.journal.flush_tx(receipt.tx).err()?;
        Some(json!({
            "kind": e.kind(),
            "message": e.to_string(),
            "outcome": "will_land",
            "hint": "the files already hold the new content and the receipt stands; the journal records it at its next recovery (the next commit or rollback, or `ultra-edit recover`); if later calls fail with journal_handle_failed, the journal's disk needs attention",
        }))
    }

    fn edit_rollback(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        // `preview_id`, as every other tool names a transaction; `tx` is the old name
        // (issue 33, item 11), accepted with a note in the answer.
        let old_key = !a.map.contains_key("preview_id") && a.map.contains_key("tx");
        let key = if old_key { "tx" } else { "preview_id" };
        let tx = self.handle(a, key, &agent)?;
        // Both keys naming different transactions is a caller's mistake, never a
        // guess: which one to roll back is refused rather than picked (the breaker
        // found `tx` silently ignored beside `preview_id`).
        if !old_key && a.map.get("tx").is_some_and(|v| !v.is_null()) {
            let other = self.handle(a, "tx", &agent)?;
            if other != tx {
                return Err(ToolError::invalid_args(
                    a.tool,
                    format!("preview_id names tx {tx} and tx (its old name) names tx {other}: give preview_id alone"),
                    json!({"preview_id": self.journal.handle(tx).to_string(), "agent_id": agent}),
                ));
            }
        }
        let p = self.show(tx, None, &agent)?;
        check_agent(&p, &agent, "roll back")?;
        let opts = RollbackOptions::new().with_force(a.bool("force")?.unwrap_or(false));
        let report = self.engine(self.journal.rollback_report(tx, opts), &agent)?;
        let receipt = report.receipt;
        let attention = self.recorded(&receipt);
        let reingested = self.reingest(a.bool("reingest")?.unwrap_or(true), &[&receipt]);
        let paths: Vec<&str> = receipt.files.iter().map(|f| f.path.as_str()).collect();
        let mut out = json!({
            "tx": receipt.tx,
            "preview_id": self.journal.handle(receipt.tx).to_string(),
            "rolled_back": tx,
            "batch": receipt.batch,
            "files": paths,
            "bytes_written": receipt.bytes_written,
            "reingested": reingested,
            "updated_node_ids": [],
            "receipt": receipt,
            "elapsed_ms": ms(start),
            "already": report.already,
            "next_step": shapes::next_call(
                Some("edit_rollback"),
                json!({"preview_id": self.journal.handle(receipt.tx).to_string(), "agent_id": agent}),
                if report.already {
                    format!("already rolled back: tx {tx} was rolled back by tx {} before this call, and nothing was written now; edit_rollback with preview_id \"{}\" redoes it if you mean to", receipt.tx, self.journal.handle(receipt.tx))
                } else {
                    format!("tx {tx} is rolled back; edit_rollback with preview_id \"{}\" redoes it", self.journal.handle(receipt.tx))
                },
            ),
        });
        if old_key {
            out["note"] = json!(OLD_ROLLBACK_KEY);
        }
        // A forced rollback: what it did to each file changed since, and where the
        // bytes it overwrote are kept.
        let overwritten = self.engine(self.journal.overwritten(&receipt), &agent)?;
        if !overwritten.is_empty() {
            out["overwritten"] = Value::Array(
                overwritten
                    .iter()
                    .map(|o| {
                        let mut v = serde_json::to_value(o).unwrap_or_default();
                        v["message"] = Value::String(o.describe());
                        if let Some(k) = o.kept_in {
                            // The call that brings the bytes back.
                            v["bring_back"] = json!({"tool": "edit_rollback", "preview_id": self.journal.handle(k).to_string(), "agent_id": agent});
                        }
                        v
                    })
                    .collect(),
            );
        }
        if let Some(a) = attention {
            out["journal_attention"] = a;
        }
        Ok(out)
    }

    /// `edit_revert`: `tx` (one handle) or `txs` (several), each a commit of this
    /// agent (or of no agent); without either, every committed tx of `agent_id`
    /// (`last`, `since_ms` narrow it). A new preview owned by `agent_id`, in
    /// edit_preview's shape.
    fn edit_revert(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        let given = |k: &str| a.map.get(k).is_some_and(|v| !v.is_null());
        // Which txs is the caller's choice, never a guess: both keys, an empty list,
        // or a narrowing of the agent's txs beside named ones are refused, since each
        // would otherwise revert something other than what was asked.
        let refuse = |what: &str| {
            ToolError::invalid_args(
                a.tool,
                what,
                // This journal's handles, in the shape journal_log lists them (a
                // made-up "ue1-…-1" had a shape no handle has).
                json!({"agent_id": "me", "txs": [
                    self.journal.handle(1).to_string(),
                    self.journal.handle(2).to_string(),
                ]}),
            )
        };
        if given("tx") && given("txs") {
            return Err(refuse("give tx or txs, not both"));
        }
        if matches!(a.map.get("txs"), Some(Value::Array(items)) if items.is_empty()) {
            return Err(refuse(
                "txs is empty: name at least one transaction, or leave txs out to revert every committed transaction of agent_id",
            ));
        }
        if (given("tx") || given("txs")) && (given("last") || given("since_ms")) {
            return Err(refuse(
                "last and since_ms choose among agent_id's transactions: they cannot narrow tx or txs",
            ));
        }
        let mut txs = Vec::new();
        if a.map.get("tx").is_some_and(|v| !v.is_null()) {
            txs.push(self.handle(a, "tx", &agent)?);
        }
        if let Some(Value::Array(items)) = a.map.get("txs") {
            for (i, item) in items.iter().enumerate() {
                let one = Args {
                    tool: a.tool,
                    map: Map::from_iter([(String::from("tx"), item.clone())]),
                };
                txs.push(
                    self.handle(&one, "tx", &agent)
                        .map_err(|e| e.with_detail(json!({"txs_index": i})))?,
                );
            }
        } else if a.map.get("txs").is_some_and(|v| !v.is_null()) {
            return Err(a.wrong_type("txs", "an array of preview_ids"));
        }
        let opts = crate::RevertOptions {
            agent: Some(agent.clone()),
        };
        let p = if txs.is_empty() {
            let range = crate::AgentRange {
                since_ms: a.u64("since_ms")?,
                last: a
                    .u64("last")?
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            };
            self.engine(self.journal.revert_agent(&agent, range, opts), &agent)
                .map_err(|e| e.path_not_from_a_plan(false))?
        } else {
            for &tx in &txs {
                check_agent(&self.show(tx, None, &agent)?, &agent, "revert")?;
            }
            let refs: Vec<crate::TxRef> = txs.iter().map(|&t| t.into()).collect();
            self.engine(self.journal.revert(&refs, opts), &agent)
                .map_err(|e| e.path_not_from_a_plan(false))?
        };
        Ok(self.preview_out(&p, None, start))
    }

    fn apply_batch(&self, a: &Args, start: Instant) -> Outcome {
        let agent = a.agent()?;
        let items = batch_items(a, &agent)?;
        let atomic = a.bool("atomic")?.unwrap_or(true);
        let reingest = a.bool("reingest")?.unwrap_or(true);
        let description = a.str("description")?;
        let mut out = BatchOut::new(&items);
        if atomic && !items.is_empty() {
            self.batch_atomic(&items, &agent, description, &mut out);
        } else {
            for (i, item) in items.iter().enumerate() {
                let desc = item.description.clone().or_else(|| description.clone());
                self.batch_one(std::slice::from_ref(item), &[i], &agent, desc, &mut out);
            }
        }
        let receipts: Vec<&Receipt> = out.receipts.iter().collect();
        let reingested = self.reingest(reingest, &receipts);
        let value = out.to_json(atomic, reingested, ms(start));
        match out.failure {
            Some(e) if out.written == 0 => Err(ToolError::new(
                &e.kind,
                format!(
                    "apply_batch{}: no file was written: {}",
                    if atomic { " (atomic)" } else { "" },
                    e.message
                ),
                format!(
                    "{}; results lists each file's outcome. Fix or drop the failing file and call apply_batch again{}",
                    e.hint,
                    if atomic && items.len() > 1 { " (with atomic=false the other files are written on their own)" } else { "" }
                ),
            )
            .with_tx(e.tx)
            .with_detail(value)),
            _ => Ok(value),
        }
    }

    /// `journal_log`: `by_agent` filters by the agent that made each tx; `agent_id`
    /// (the caller, in every other tool) is its old name, taken as the filter with a
    /// note in the answer when `by_agent` is absent (issue 33, item 11).
    fn journal_log(&self, a: &Args) -> Outcome {
        let limit = a.u64("limit")?.unwrap_or(50) as usize;
        let by_agent = a.str("by_agent")?;
        let old = a.str("agent_id")?;
        let note = (by_agent.is_none() && old.is_some()).then_some(OLD_LOG_FILTER);
        let agent = by_agent.or(old);
        let entries = self.engine(self.journal.log(None), "")?;
        let picked: Vec<_> = entries
            .into_iter()
            .filter(|e| agent.is_none() || e.agent == agent)
            .take(limit)
            .collect();
        // Batches that need attention are data, not an error (docs/design.md).
        let attention = self.engine(self.journal.needs_attention(), "")?;
        let mut out =
            json!({"count": picked.len(), "entries": picked, "needs_attention": attention});
        if let Some(note) = note {
            out["note"] = json!(note);
        }
        Ok(out)
    }

    fn journal_dump(&self, a: &Args) -> Outcome {
        let tx = match a.map.get("tx") {
            Some(Value::Null) | None => None,
            Some(_) => {
                let tx = self.handle(a, "tx", "")?;
                self.show(tx, None, "")?;
                Some(tx)
            }
        };
        let since_seq = a.u64("since_seq")?.unwrap_or(0);
        // 0 was taken as 1, silently, beside a schema that says `"minimum": 1` (found
        // by the breaker, as `timeout_secs` was): a refusal says what was wrong.
        let limit = match a.u64("limit")? {
            None => 200,
            Some(0) => {
                return Err(ToolError::invalid_args(
                    a.tool,
                    "limit must be at least 1 (entries per answer), not 0",
                    json!({"since_seq": since_seq, "limit": 200}),
                ))
            }
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        };
        let mut entries = Vec::new();
        let mut next = None;
        self.engine(
            self.journal.dump(
                {
                    let mut filter = DumpFilter::new().with_since_seq(since_seq);
                    filter.tx = tx.map(Into::into);
                    filter
                },
                |entry| {
                    if entries.len() == limit {
                        next = Some(entry.event.seq);
                        return Ok(false);
                    }
                    entries.push(entry);
                    Ok(true)
                },
            ),
            "",
        )?;
        Ok(json!({
            "count": entries.len(),
            "truncated": next.is_some(),
            "next_since_seq": next,
            "entries": entries,
        }))
    }

    // ---- helpers ------------------------------------------------------------------

    fn engine<T>(&self, r: crate::Result<T>, agent: &str) -> Result<T, ToolError> {
        r.map_err(|e| ToolError::from_engine(&e, agent))
    }

    fn preview_out(&self, p: &Preview, focus: Option<&str>, start: Instant) -> Value {
        let mut out = shapes::preview_json(&self.journal, p, focus, ms(start));
        if let (Some(ttl), Ok(age)) = (self.preview_ttl, self.journal.preview_age(p.tx)) {
            let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
            out["expires_in_ms"] = json!(ttl_ms.saturating_sub(age));
        }
        out
    }

    /// The tx in argument `key`: a handle (`"3f9a2c1b7d4e8a60-7"`, refused as
    /// `foreign_handle` when it names another journal), or a tx number of this
    /// journal (`7`, `"7"`, `"tx-7"`).
    fn handle(&self, a: &Args, key: &str, agent: &str) -> Result<u64, ToolError> {
        match a.map.get(key) {
            None | Some(Value::Null) => Err(ToolError::invalid_args(
                a.tool,
                format!("{key} is missing; it is the preview_id that edit_preview returned"),
                json!({key: "7", "agent_id": if agent.is_empty() { "me" } else { agent }}),
            )),
            Some(Value::Number(n)) => n
                .as_u64()
                .ok_or_else(|| errors::not_found(&n.to_string(), agent)),
            Some(Value::String(s)) => {
                let r: crate::TxRef = s.parse().map_err(|_| errors::not_found(s, agent))?;
                self.journal
                    .tx_number(r)
                    .map_err(|e| ToolError::from_engine(&e, agent))
            }
            Some(other) => Err(errors::not_found(&other.to_string(), agent)),
        }
    }

    fn show(&self, tx: u64, revision: Option<u32>, agent: &str) -> Result<Preview, ToolError> {
        self.journal.show(tx, revision).map_err(|e| match e {
            Error::UnknownTx { .. } => errors::not_found(&tx.to_string(), agent),
            e => ToolError::from_engine(&e, agent),
        })
    }

    /// The open preview named by `preview_id`, checked for the agent and, when
    /// `ttl` is set, for its age.
    fn open_handle(&self, a: &Args, agent: &str, ttl: bool) -> Result<(u64, Preview), ToolError> {
        let tx = self.handle(a, "preview_id", agent)?;
        let p = self.show(tx, None, agent)?;
        if p.state != TxState::Open {
            return Err(errors::wrong_state(tx, p.state, None, None, agent));
        }
        if ttl {
            if let Some(err) = self.expired(tx) {
                return Err(err.with_example(
                    json!({"tool": "edit_preview", "file_path": "…", "agent_id": agent, "new_content": "…"}),
                ));
            }
        }
        check_agent(&p, agent, verb_of(a.tool))?;
        Ok((tx, p))
    }

    /// `Some(error)` if `tx` is older than the preview lifetime (the library's
    /// [`crate::Error::PreviewExpired`], as a tool error).
    fn expired(&self, tx: u64) -> Option<ToolError> {
        match self.journal.check_preview_age(tx, self.preview_ttl) {
            Err(e @ Error::PreviewExpired { .. }) => Some(ToolError::from_engine(&e, "")),
            _ => None,
        }
    }

    /// Call the reingest hook once with every path of `receipts`: true if it ran to its
    /// end. A panic of the hook (the embedder's code; the process's panic hook has
    /// reported it) is caught and answers false (`reingested: false`): the write landed
    /// and its receipt is the tool's answer, so the panic must not replace it.
    fn reingest(&self, wanted: bool, receipts: &[&Receipt]) -> bool {
        let mut paths: Vec<String> = receipts
            .iter()
            .flat_map(|r| r.files.iter().map(|f| f.path.to_string()))
            .collect();
        paths.sort();
        paths.dedup();
        match &self.reingest {
            Some(hook) if wanted && !paths.is_empty() => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&paths))).is_ok()
            }
            _ => false,
        }
    }

    /// The `allow` argument of edit_preview / edit_revise: `["syntax_error"]` sets
    /// [`crate::Policy::syntax_errors`] to allow in `plan`'s policy (the tools' policy,
    /// else the journal's); any other code is [`crate::edit::EditError::InvalidPlan`].
    fn allow(&self, a: &Args, agent: &str, plan: &mut Plan) -> Result<(), ToolError> {
        let codes = a.strings("allow")?;
        if let Some(code) = codes
            .iter()
            .find(|c| *c != "syntax_error" && *c != "check_failed")
        {
            let e = crate::edit::EditError::InvalidPlan {
                message: format!(
                    "\"allow\": {code:?} is not a validation error a plan may allow; those \
                     are \"syntax_error\" and \"check_failed\" (a merge conflict must be resolved; conflict \
                     markers and an empty revision must be fixed, unless the server's policy \
                     allows them: its host's, or the journal's)"
                ),
            };
            return Err(ToolError::from_engine(&Error::Edit(e), agent));
        }
        if !codes.is_empty() {
            let mut policy = plan.policy.unwrap_or(self.journal.policy());
            for c in &codes {
                match c.as_str() {
                    "syntax_error" => policy.syntax_errors = crate::SyntaxErrors::Allow,
                    _ => policy.check_failed = crate::Checks::Allow,
                }
            }
            plan.policy = Some(policy);
        }
        Ok(())
    }

    /// The plan of edit_preview / edit_revise: m1nd's single file, or `edits`.
    /// Returns it with the root-relative path m1nd's fields should describe.
    fn plan(&self, a: &Args, agent: &str) -> Result<(Plan, Option<String>), ToolError> {
        let single = a.map.contains_key("file_path") || a.map.contains_key("new_content");
        let example = json!({"file_path": "src/lib.rs", "agent_id": agent, "new_content": "…", "description": "…"});
        let (items, focus, mut descriptions) = match (single, a.map.get("edits")) {
            (true, Some(_)) => {
                return Err(ToolError::invalid_args(
                    a.tool,
                    "give either file_path + new_content (one whole file) or edits, not both",
                    example,
                ))
            }
            (true, None) => {
                let item = WholeFile {
                    file_path: a.str("file_path")?.ok_or_else(|| {
                        ToolError::invalid_args(
                            a.tool,
                            "file_path is missing (new_content is given)",
                            example.clone(),
                        )
                    })?,
                    new_content: a.str("new_content")?.ok_or_else(|| {
                        ToolError::invalid_args(
                            a.tool,
                            "new_content is missing (file_path is given)",
                            example.clone(),
                        )
                    })?,
                    description: None,
                    expected_base: expected_base_of(
                        a.tool,
                        "expected_base",
                        a.map.get("expected_base"),
                        &example,
                    )?,
                };
                let focus = rel_of(&self.journal, &item.file_path);
                (
                    vec![PlanItem::WholeFile(self.whole_file_op(&item))],
                    Some(focus),
                    Vec::new(),
                )
            }
            (false, Some(Value::Array(list))) => {
                let mut ops = Vec::with_capacity(list.len());
                let mut descriptions = Vec::new();
                for (i, e) in list.iter().enumerate() {
                    match e {
                        Value::Object(m) if m.contains_key("op") => ops.push(PlanItem::op(e)),
                        Value::Object(m) if m.contains_key("file_path") => {
                            let item = WholeFile::parse(a.tool, i, m, agent)?;
                            descriptions.extend(item.description.clone());
                            ops.push(PlanItem::WholeFile(self.whole_file_op(&item)));
                        }
                        _ => {
                            return Err(ToolError::invalid_args(
                                a.tool,
                                format!("edits[{i}] is neither an op object ({{\"op\": …, \"path\": …}}) nor m1nd's {{\"file_path\": …, \"new_content\": …}}"),
                                json!({"agent_id": agent, "edits": [{"op": "replace_text", "path": "src/lib.rs", "old": "fn a()", "new": "fn b()"}]}),
                            ))
                        }
                    }
                }
                (ops, None, descriptions)
            }
            (false, Some(_)) => {
                return Err(ToolError::invalid_args(
                    a.tool,
                    "edits must be an array",
                    example,
                ))
            }
            (false, None) => {
                return Err(ToolError::invalid_args(
                    a.tool,
                    "nothing to edit: give file_path + new_content (m1nd), or edits",
                    example,
                ))
            }
        };
        if let Some(d) = a.str("description")? {
            descriptions.insert(0, d);
        }
        let description = (!descriptions.is_empty()).then(|| descriptions.join("; "));
        let mut plan = PlanItem::plan(items, agent, description, self.policy)
            .map_err(|e| ToolError::from_engine(&Error::Edit(e), agent))?;
        self.allow(a, agent, &mut plan)?;
        Ok((plan, focus))
    }

    /// m1nd's whole-file item as an op: `write_file`, which replaces the file if the
    /// base (the disk, or the base revision's candidate when revising) has it and
    /// creates it if not — decided by the library against the snapshot it takes, so
    /// nothing here looks at the disk first.
    fn whole_file_op(&self, item: &WholeFile) -> Edit {
        Edit::WriteFile {
            path: item.file_path.clone(),
            content: Some(item.new_content.clone()),
            content_base64: None,
            mode: None,
            expected_base: item.expected_base.clone(),
        }
    }

    /// One transaction of all `items`: every file or none.
    fn batch_atomic(
        &self,
        items: &[WholeFile],
        agent: &str,
        description: Option<String>,
        out: &mut BatchOut,
    ) {
        let idx: Vec<usize> = (0..items.len()).collect();
        let mut descriptions: Vec<String> = description.into_iter().collect();
        descriptions.extend(items.iter().filter_map(|i| i.description.clone()));
        let desc = (!descriptions.is_empty()).then(|| descriptions.join("; "));
        self.batch_one(items, &idx, agent, desc, out);
    }

    /// Preview + commit of `items` (at `idx` in the request) as one transaction; the
    /// outcome goes into `out`. A failed transaction is aborted, so no open preview is
    /// left behind.
    fn batch_one(
        &self,
        items: &[WholeFile],
        idx: &[usize],
        agent: &str,
        description: Option<String>,
        out: &mut BatchOut,
    ) {
        let edits = items
            .iter()
            .map(|i| PlanItem::WholeFile(self.whole_file_op(i)))
            .collect();
        let plan = match PlanItem::plan(edits, agent, description, self.policy) {
            Ok(p) => p,
            Err(e) => {
                return out.fail(
                    idx,
                    items,
                    &self.journal,
                    ToolError::from_engine(&Error::Edit(e), agent),
                    None,
                )
            }
        };
        let p = match self.journal.preview(&plan) {
            Ok(p) => p,
            Err(e) => {
                return out.fail(
                    idx,
                    items,
                    &self.journal,
                    ToolError::from_engine(&e, agent),
                    None,
                )
            }
        };
        if p.files.is_empty() {
            // Every file already has this content: nothing to write.
            let _ = self.journal.abort(p.tx);
            return out.succeed(idx, items, &self.journal, &p, None);
        }
        match self.journal.commit(p.tx, CommitOptions::default()) {
            Ok(r) => {
                if let Some(a) = self.recorded(&r) {
                    out.attention.push(a);
                }
                out.succeed(idx, items, &self.journal, &p, Some(r))
            }
            Err(e) => {
                let err = ToolError::from_engine(&e, agent);
                let _ = self.journal.abort(p.tx);
                out.fail(idx, items, &self.journal, err, Some(p.tx));
            }
        }
    }
}

/// The `note` of a `journal_log` answer filtered by its old key, `agent_id`.
pub const OLD_LOG_FILTER: &str = "agent_id was taken as the filter by_agent (its old name); in every other tool agent_id names the caller, so pass the agent to list as by_agent";

/// The `note` of an `edit_rollback` answer that named the transaction by its old key,
/// `tx`.
pub const OLD_ROLLBACK_KEY: &str =
    "tx was taken as preview_id (its old name here); every tool names a transaction by preview_id";

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn verb_of(tool: &str) -> &'static str {
    match tool {
        "edit_commit" => "commit",
        "edit_revise" => "revise",
        "edit_rebase" => "rebase",
        "edit_abort" => "abort",
        _ => "use",
    }
}

/// A preview belongs to the agent that made it (previews made without an agent, from
/// the CLI, belong to anyone).
fn check_agent(p: &Preview, agent: &str, verb: &str) -> Result<(), ToolError> {
    match p.agent.as_deref() {
        Some(owner) if owner != agent => Err(ToolError::new(
            "agent_mismatch",
            format!("preview {} belongs to agent {owner:?}, not {agent:?}; nothing was changed", p.tx),
            format!("only the agent that made a preview can {verb} it: call edit_preview with your own agent_id for your own change, or let agent {owner:?} do it"),
        )
        .with_example(json!({"tool": "edit_preview", "file_path": "…", "agent_id": agent, "new_content": "…"}))
        .with_tx(Some(p.tx))),
        _ => Ok(()),
    }
}

/// One edit of the plan an edit tool builds: an op object as the agent sent it, or
/// m1nd's whole-file item made into a `replace_file` / `create_file` edit.
enum PlanItem<'a> {
    /// An op object (`{"op": …, "path": …}`) and, if it deserializes, its edit.
    Op(&'a Value, Option<Edit>),
    WholeFile(Edit),
}

impl<'a> PlanItem<'a> {
    fn op(value: &'a Value) -> Self {
        PlanItem::Op(value, Edit::deserialize(value).ok())
    }

    /// The plan of `items`, by `agent`, checked as [`Plan::from_json`] checks a plan.
    ///
    /// An op object that does not deserialize is reported with the message
    /// `Plan::from_json` gives for the whole plan as JSON (serde's, which names a line
    /// and column in that JSON), so only then is the plan written out and parsed.
    fn plan(
        items: Vec<PlanItem>,
        agent: &str,
        description: Option<String>,
        policy: Option<crate::Policy>,
    ) -> Result<Plan, EditError> {
        if items
            .iter()
            .any(|item| matches!(item, PlanItem::Op(_, None)))
        {
            return Err(Self::parse_error(&items, agent, description));
        }
        let edits = items
            .into_iter()
            .filter_map(|item| match item {
                PlanItem::Op(_, edit) => edit,
                PlanItem::WholeFile(edit) => Some(edit),
            })
            .collect();
        let plan = Plan {
            description,
            agent: Some(agent.to_string()),
            edits,
            policy,
        };
        plan.check()?;
        Ok(plan)
    }

    /// The error of [`Plan::from_json`] on the plan of `items` as JSON: `agent`,
    /// `description` if any, and `edits` with each op object as the agent sent it.
    fn parse_error(items: &[PlanItem], agent: &str, description: Option<String>) -> EditError {
        let mut plan = Map::new();
        plan.insert("agent".into(), json!(agent));
        if let Some(d) = description {
            plan.insert("description".into(), json!(d));
        }
        let edits = items
            .iter()
            .map(|item| match item {
                PlanItem::Op(value, _) => (*value).clone(),
                PlanItem::WholeFile(edit) => serde_json::to_value(edit).unwrap_or_default(),
            })
            .collect();
        plan.insert("edits".into(), Value::Array(edits));
        let bytes = serde_json::to_vec(&plan).unwrap_or_default();
        match Plan::from_json(&bytes) {
            Err(e) => e,
            Ok(_) => EditError::invalid_plan("an edit of the plan is not a valid op object"),
        }
    }
}

/// Each tool's argument names, from its input schema (with the command arguments, so
/// that a `check` sent to a server without `--allow-commands` gets its own refusal).
fn argument_names() -> &'static std::collections::BTreeMap<&'static str, Vec<String>> {
    static NAMES: std::sync::OnceLock<std::collections::BTreeMap<&'static str, Vec<String>>> =
        std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        super::schemas::tool_definitions_for(true)
            .into_iter()
            .map(|d| {
                let names = match d.input_schema.get("properties") {
                    Some(Value::Object(props)) => props.keys().cloned().collect(),
                    _ => Vec::new(),
                };
                (d.name, names)
            })
            .collect()
    })
}

/// A refusal of the first argument `tool`'s input schema does not list: a misspelt
/// key (`by_agnet`) was ignored, and a filter the caller meant silently did nothing —
/// `journal_log` answered the whole log. JSON Schema's `additionalProperties` is left
/// open in `tools/list` (hosts differ in what they accept), so the check is here. The
/// nearest listed name (edit distance ≤ 2) is suggested. `None` for an unknown tool,
/// which the dispatch refuses.
fn unknown_argument(tool: &str, map: &Map<String, Value>) -> Option<ToolError> {
    let names = argument_names().get(tool)?;
    let key = map.keys().find(|k| !names.iter().any(|n| n == *k))?;
    let near = names
        .iter()
        .map(|n| (crate::edit::edit_distance(key, n), n))
        .filter(|(d, _)| *d <= 2)
        .min();
    let what = match near {
        Some((_, n)) => format!("unknown argument {key:?} (did you mean {n:?}?)"),
        None => format!("unknown argument {key:?}"),
    };
    let mut example = Map::new();
    for n in names {
        if n == "agent_id" && tool != "journal_log" {
            example.insert(n.clone(), json!("me"));
        }
    }
    Some(ToolError::invalid_args(
        tool,
        format!("{what}; it takes {}", names.join(", ")),
        Value::Object(example),
    ))
}

/// The arguments of one call.
struct Args<'a> {
    tool: &'a str,
    map: Map<String, Value>,
}

impl Args<'_> {
    fn wrong_type(&self, key: &str, want: &str) -> ToolError {
        ToolError::invalid_args(
            self.tool,
            format!("{key} must be {want}, not {}", self.map[key]),
            match self.tool {
                // journal_log's filter is by_agent; agent_id there is its old name.
                "journal_log" => json!({"by_agent": "me", "limit": 20}),
                // journal_dump takes no agent_id: its own arguments.
                "journal_dump" => json!({"since_seq": 0, "limit": 200}),
                _ => json!({"agent_id": "me"}),
            },
        )
    }

    fn str(&self, key: &str) -> Result<Option<String>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.wrong_type(key, "a string")),
        }
    }

    /// An array of strings; empty when absent.
    fn strings(&self, key: &str) -> Result<Vec<String>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(self.wrong_type(key, "an array of strings")),
                })
                .collect(),
            Some(_) => Err(self.wrong_type(key, "an array of strings")),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.wrong_type(key, "true or false")),
        }
    }

    fn u64(&self, key: &str) -> Result<Option<u64>, ToolError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, "a non-negative integer")),
        }
    }

    /// `timeout_secs`: whole seconds from 1 to 86400, the range the CLI's `--timeout`
    /// takes (which allows fractions too). 0 was taken as 1 s, silently, beside a
    /// schema that says `"minimum": 1`; a refusal says what was wrong instead. Found by
    /// the breaker.
    #[cfg(feature = "sandbox")]
    fn timeout(&self) -> Result<Option<Duration>, ToolError> {
        match self.u64("timeout_secs")? {
            None => Ok(None),
            Some(secs) if (1..=86_400).contains(&secs) => Ok(Some(Duration::from_secs(secs))),
            Some(secs) => Err(ToolError::invalid_args(
                self.tool,
                format!("timeout_secs must be from 1 to 86400 seconds, not {secs}"),
                json!({"agent_id": "me", "command": "make test", "timeout_secs": 600}),
            )),
        }
    }

    /// `agent_id`, required by every tool that changes something (as in m1nd).
    fn agent(&self) -> Result<String, ToolError> {
        match self.str("agent_id")? {
            Some(a) if !a.trim().is_empty() => Ok(a),
            _ => Err(ToolError::invalid_args(
                self.tool,
                "agent_id is missing; every edit tool records which agent made the change",
                json!({"agent_id": "my-agent"}),
            )),
        }
    }
}

/// m1nd's whole-file item `{file_path, new_content, description?}`.
#[derive(Debug, Clone)]
struct WholeFile {
    file_path: String,
    new_content: String,
    description: Option<String>,
    /// The base the content was made from, if the caller gave one (issue 29, item 7):
    /// the blake3 hex of what it read, or `edit_preview`'s snapshot shape.
    expected_base: Option<ExpectedBase>,
}

/// `expected_base` of a whole-file item (`at` names it in errors): absent or null for
/// none; a string (blake3 hex) or an object ({content_hash, bytes}).
/// `out` (an `edit_preview` or `edit_revise` answer) with `unchecked_base`, the
/// whole-file writes of this call made without an `expected_base` (not checked against
/// the content they were made from: m1nd's behaviour, said), and `base_checked`, true
/// when there is none (issue 29, item 7).
fn with_base_check(mut out: Value, p: &Preview) -> Value {
    out["unchecked_base"] = json!(p.unchecked_base);
    out["base_checked"] = json!(p.unchecked_base.is_empty());
    out
}

fn expected_base_of(
    tool: &str,
    at: &str,
    v: Option<&Value>,
    example: &Value,
) -> Result<Option<ExpectedBase>, ToolError> {
    let bad = |why: String| ToolError::invalid_args(tool, format!("{at} {why}"), example.clone());
    let base = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(v @ (Value::String(_) | Value::Object(_))) => {
            serde_json::from_value::<ExpectedBase>(v.clone()).map_err(|e| bad(e.to_string()))?
        }
        Some(_) => {
            return Err(bad(
                "must be the blake3 hex of the content you read, or {\"content_hash\": …, \"bytes\": …} as edit_preview reports it".into(),
            ))
        }
    };
    base.expected().map_err(bad)?;
    Ok(Some(base))
}

impl WholeFile {
    fn parse(tool: &str, i: usize, m: &Map<String, Value>, agent: &str) -> Result<Self, ToolError> {
        let example =
            json!({"agent_id": agent, "edits": [{"file_path": "src/a.rs", "new_content": "…"}]});
        let field = |k: &str| match m.get(k) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            None | Some(Value::Null) => Ok(None),
            Some(_) => Err(ToolError::invalid_args(
                tool,
                format!("edits[{i}].{k} must be a string"),
                example.clone(),
            )),
        };
        let need = |k: &str| {
            field(k)?.ok_or_else(|| {
                ToolError::invalid_args(tool, format!("edits[{i}].{k} is missing"), example.clone())
            })
        };
        Ok(WholeFile {
            file_path: need("file_path")?,
            new_content: need("new_content")?,
            description: field("description")?,
            expected_base: expected_base_of(
                tool,
                &format!("edits[{i}].expected_base"),
                m.get("expected_base"),
                &example,
            )?,
        })
    }
}

fn batch_items(a: &Args, agent: &str) -> Result<Vec<WholeFile>, ToolError> {
    let example = json!({"agent_id": agent, "edits": [{"file_path": "src/a.rs", "new_content": "…"}], "atomic": true});
    match a.map.get("edits") {
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, e)| match e {
                Value::Object(m) => WholeFile::parse(a.tool, i, m, agent),
                _ => Err(ToolError::invalid_args(
                    a.tool,
                    format!("edits[{i}] must be an object"),
                    example.clone(),
                )),
            })
            .collect(),
        _ => Err(ToolError::invalid_args(
            a.tool,
            "edits must be an array of {file_path, new_content}",
            example,
        )),
    }
}

/// apply_batch's results as they come in.
struct BatchOut {
    results: Vec<Value>,
    receipts: Vec<Receipt>,
    txs: Vec<u64>,
    written: usize,
    bytes: u64,
    failure: Option<ToolError>,
    /// What the journal could not record of transactions that landed
    /// ([`EditTools::recorded`]).
    attention: Vec<Value>,
}

impl BatchOut {
    fn new(items: &[WholeFile]) -> Self {
        BatchOut {
            results: items
                .iter()
                // `base_checked`: whether the write was checked against the content it
                // was made from (`expected_base`); without one it is m1nd's unchecked
                // write (issue 29, item 7).
                .map(|i| json!({"file_path": i.file_path, "success": false, "diff": "", "lines_added": 0, "lines_removed": 0, "base_checked": i.expected_base.is_some()}))
                .collect(),
            receipts: Vec::new(),
            txs: Vec::new(),
            written: 0,
            bytes: 0,
            failure: None,
            attention: Vec::new(),
        }
    }

    fn succeed(
        &mut self,
        idx: &[usize],
        items: &[WholeFile],
        journal: &Journal,
        p: &Preview,
        r: Option<Receipt>,
    ) {
        self.txs.push(p.tx);
        let rels: Vec<String> = items
            .iter()
            .map(|item| rel_of(journal, &item.file_path))
            .collect();
        for (k, (&i, rel)) in idx.iter().zip(&rels).enumerate() {
            let res = &mut self.results[i];
            res["success"] = json!(true);
            res["tx"] = json!(p.tx);
            // A later item of the same path replaced this one (last write wins).
            if let Some(later) = rels[k + 1..].iter().position(|r| r == rel) {
                res["bytes_written"] = json!(0);
                res["superseded_by"] = json!(idx[k + 1 + later]);
                continue;
            }
            match p.files.iter().find(|f| f.path == *rel) {
                Some(f) => {
                    res["diff"] = json!(f.diff.unified);
                    res["lines_added"] = json!(f.diff.lines_added);
                    res["lines_removed"] = json!(f.diff.lines_removed);
                    res["bytes_written"] = json!(f.candidate.size());
                    self.written += 1;
                    self.bytes += f.candidate.size();
                }
                None => {
                    res["bytes_written"] = json!(0);
                    res["unchanged"] = json!(true);
                }
            }
        }
        self.receipts.extend(r);
    }

    fn fail(
        &mut self,
        idx: &[usize],
        items: &[WholeFile],
        journal: &Journal,
        err: ToolError,
        tx: Option<u64>,
    ) {
        let text = format!("{}: {} Hint: {}", err.kind, err.message, err.hint);
        let named: Vec<bool> = items
            .iter()
            .map(|i| mentions(&err.message, &rel_of(journal, &i.file_path)))
            .collect();
        let culprit: Vec<&str> = items
            .iter()
            .zip(&named)
            .filter(|(_, n)| **n)
            .map(|(i, _)| i.file_path.as_str())
            .collect();
        for ((&i, _), &is_culprit) in idx.iter().zip(items).zip(&named) {
            let res = &mut self.results[i];
            res["error"] = if is_culprit || culprit.is_empty() {
                json!(text)
            } else {
                json!(format!(
                    "not written: the atomic batch was refused because of {}",
                    culprit.join(", ")
                ))
            };
            if let Some(tx) = tx {
                res["tx"] = json!(tx);
            }
        }
        self.txs.extend(tx);
        if self.failure.is_none() {
            self.failure = Some(err.with_tx(tx));
        }
    }

    fn to_json(&self, atomic: bool, reingested: bool, elapsed_ms: f64) -> Value {
        let all = self.results.iter().all(|r| r["success"] == json!(true));
        let mut v = json!({
            "all_succeeded": all,
            "files_written": self.written,
            "files_total": self.results.len(),
            "results": self.results,
            "reingested": reingested,
            "total_bytes_written": self.bytes,
            "elapsed_ms": elapsed_ms,
            "atomic": atomic,
            "txs": self.txs,
            "receipts": self.receipts,
        });
        if atomic {
            v["tx"] = json!(self.txs.first());
            v["receipt"] = json!(self.receipts.first());
        }
        if !self.attention.is_empty() {
            v["journal_attention"] = json!(self.attention);
        }
        v
    }
}

/// Does an error message name `rel`?
fn mentions(message: &str, rel: &str) -> bool {
    message.contains(&format!("{rel:?}"))
        || message.starts_with(rel)
        || message.contains(&format!(" {rel}"))
        || message.contains(&format!("/{rel}"))
}
