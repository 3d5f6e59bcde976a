//! The command tools of the MCP server (feature `sandbox`, docs/commands.md):
//! `edit_run` and the `check` argument of `edit_preview`, `edit_revise` and
//! `edit_rebase`. A server runs shell commands for its clients only when it was
//! started with `--allow-commands` ([`super::ServeOptions::allow_commands`],
//! [`super::EditTools::with_commands`]); otherwise `edit_run` is not listed, and a
//! call of it, or a `check`, is refused with `commands_not_allowed`.

use serde_json::{json, Value};

use super::errors::ToolError;

/// The tool that runs a command.
pub const EDIT_RUN: &str = "edit_run";

pub(super) const EDIT_RUN_DESCRIPTION: &str = "Run a shell command (sh -c) on a copy-on-write view of the workspace and get what it wrote as a preview, without touching the disk: formatters, codemods (sed -i, perl -pi), mv, rm, code generators. Files it creates, modifies or deletes inside the workspace root become the preview's candidates (a rename is a delete plus a create); writes under .git/, .jj/, .hg/, .svn/ and the journal's directory are dropped with a warning (refused with strict=true), paths the repository's .gitignore ignores are dropped and counted unless include_ignored=true, and symlinks, FIFOs, devices and hard links it makes are refused. Writes outside the root are neither captured nor prevented. A command that exits non-zero records nothing (command_failed, with its status and output tail) unless keep_on_failure=true. Give preview_id to run it on top of that preview's latest candidate (a new revision). Returns edit_preview's shape plus command {command, status, duration_ms, output_tail, dropped_vcs, dropped_ignored}; check runs a second command on the candidate (check_passed / check_failed in validation_issues). Then edit_commit.";

/// The tool that shows or sets the journal's default check.
pub const EDIT_CONFIG: &str = "edit_config";

pub(super) const EDIT_CONFIG_DESCRIPTION: &str = "Show or set the workspace journal's default check: a shell command that edit_preview, edit_revise, edit_rebase and edit_run run on each new candidate when no check is given (no_check=true skips it), as `ultra-edit config check` sets it for the CLI. Without arguments it only reads. check=\"CMD\" stores CMD (nothing is run now); unset=true removes it. Returns {check} (null when none is set).";

/// The schema of a `check` argument.
pub(super) fn check_schema() -> Value {
    json!({"type": "string", "description": "A shell command run on a copy-on-write view of the disk with the candidate applied (its writes are thrown away): exit 0 records check_passed, anything else the validation error check_failed, which blocks edit_commit. Default: the journal's default check (edit_config), if one is set."})
}

/// The schema of a `no_check` argument.
pub(super) fn no_check_schema() -> Value {
    json!({"type": "boolean", "default": false, "description": "Run no check, not even the journal's default check (edit_config)."})
}

/// The schema of the `timeout_secs` a `check` runs under.
pub(super) fn check_timeout_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 86400, "default": 600, "description": "Kill the check after this many seconds (check_failed)."})
}

/// `edit_config`'s arguments.
pub(super) fn edit_config_schema() -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), json!("object"));
    m.insert(
        "properties".into(),
        json!({
            "agent_id": {"type": "string", "description": "Your agent id."},
            "check": {"type": "string", "description": "Store this command line as the default check (sh -c CMD)."},
            "unset": {"type": "boolean", "default": false, "description": "Remove the default check."}
        }),
    );
    m.insert("required".into(), json!(["agent_id"]));
    m
}

/// `edit_run`'s arguments.
pub(super) fn edit_run_schema() -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("type".into(), json!("object"));
    m.insert(
        "properties".into(),
        json!({
            "agent_id": {"type": "string", "description": "Your agent id, recorded with the preview."},
            "command": {"type": "string", "description": "The command line, run as sh -c COMMAND in the workspace root."},
            "preview_id": {"type": ["string", "integer"], "description": "Run on top of this open preview's latest candidate and record a new revision of it (default: a new preview)."},
            "check": check_schema(),
            "no_check": no_check_schema(),
            "timeout_secs": {"type": "integer", "minimum": 1, "maximum": 86400, "default": 600, "description": "Kill the command (and the check) after this many seconds; nothing is recorded."},
            "keep_on_failure": {"type": "boolean", "default": false},
            "include_ignored": {"type": "boolean", "default": false},
            "strict": {"type": "boolean", "default": false}
        }),
    );
    m.insert("required".into(), json!(["agent_id", "command"]));
    m
}

/// The refusal of a command when the server does not allow them.
pub(super) fn not_allowed(what: &str) -> ToolError {
    ToolError::new(
        "commands_not_allowed",
        format!("{what} runs a shell command, and this server was not started with --allow-commands; nothing was run"),
        "restart the server as `ultra-edit serve --allow-commands` to let clients run commands (an embedder: EditTools::with_commands(true)), or make the change with edit_preview's edits",
    )
}
