//! The tools' names, descriptions and input schemas (JSON Schema, draft 2020-12 subset
//! that every MCP host accepts: objects, arrays, strings, integers, booleans, `anyOf`).
//!
//! Descriptions are written for the agent that reads `tools/list`: what the tool does,
//! what it returns, and which tool comes next.

use serde_json::{json, Map, Value};

/// One tool as listed by `tools/list`.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// Tool name, e.g. `edit_preview`.
    pub name: &'static str,
    /// One paragraph for the agent.
    pub description: &'static str,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Map<String, Value>,
    /// True for tools that never change the journal or the files.
    pub read_only: bool,
    /// True for tools that write files of the workspace.
    pub writes_files: bool,
}

/// Every tool, in the order `tools/list` gives them.
pub const TOOL_NAMES: [&str; 11] = [
    "edit_preview",
    "edit_revise",
    "edit_rebase",
    "edit_show",
    "edit_abort",
    "edit_commit",
    "edit_rollback",
    "edit_revert",
    "apply_batch",
    "journal_log",
    "journal_dump",
];

const EDIT_PREVIEW: &str = "Stage an edit in memory and get a durable preview handle, without touching the file. Give m1nd's shape {file_path, agent_id, new_content, description?} to replace a whole file (a file that does not exist yet is created on commit), or a plan {agent_id, description?, edits:[...]} of precise operations over one or many files (replace_text, replace_lines, insert_before, insert_after, prepend, append, replace_file, create_file, write_file, delete_file, replace_symbol, insert_before_symbol, insert_after_symbol, delete_symbol, replace_body, insert_field, insert_variant, replace_arm; m1nd items {file_path, new_content} are accepted in edits too). Returns preview_id (the transaction's handle, e.g. \"3f9a2c1b7d4e8a60-7\": pass it to edit_commit, edit_revise, edit_rebase, edit_show, edit_abort), file_path, snapshot {file_path, file_exists, content_hash, bytes, line_count} of the file as it is on disk now, diff {unified_diff, lines_added, lines_removed, bytes_written} of the candidate, validation {source_changed, candidate_is_empty, candidate_equals_source, ready_to_commit}, elapsed_ms, and Ultra Edit's revision, per-file files[] (snapshot, candidate, diff) and validation_issues. m1nd's top-level fields describe the first file; files[] lists all of them. Read the diff, then call edit_commit with confirm=true, or edit_revise to change the candidate first. Previews are journaled: they survive a restart of the server.";

const EDIT_REVISE: &str = "Change the candidate of an open preview before committing it: the edits (same forms as edit_preview's edits, or m1nd's {file_path, new_content} at top level) apply to the latest revision's candidate, not to the disk, so line numbers and matched text refer to what the last edit_preview/edit_revise returned. Returns the new revision in edit_preview's shape, under the same preview_id: its diff is the whole change against the disk, and interdiff {from, to, files[] (path, from, to, diff), lines_added, lines_removed} is what this revision changed relative to the previous one. Give base_revision if the edits were written against an older revision; add rebase=true to merge them onto the latest. Only the agent that made the preview can revise it.";

const EDIT_REBASE: &str = "Bring a stale preview up to date after someone changed its files on disk (edit_commit refused with source_modified): merges the disk's change and the candidate three-way, as git does, into a new revision whose snapshot is the disk as it is now. Returns the new revision in edit_preview's shape; if both sides changed the same lines the candidate holds diff3-style conflict markers (<<<<<<< candidate, ||||||| snapshot, =======, >>>>>>> disk, as git merge-file --diff3 writes them), conflict_list names each region (path, start_line, end_line, sides) and validation_issues has merge_conflict (fix it with edit_revise, or edit_abort and edit_preview again). Then call edit_commit.";

const EDIT_SHOW: &str = "Look at a preview: any revision (default: for a committed preview the revision committed, which is what reached the disk; else the latest) with the same fields as edit_preview returns, plus its state (open, committed, aborted, rolled_back), whether it has expired, and validation.source_changed computed against the disk now, so you can see whether edit_commit would be refused as stale before trying it. With from_revision, also interdiff {from, to, files[] (path, from, to, diff), lines_added, lines_removed}: what the revision shown changed relative to from_revision.";

const EDIT_ABORT: &str = "Discard an open preview: it accepts nothing further and can never be committed. Nothing on disk changes; the preview stays in the journal's history (journal_log, journal_dump). Only the agent that made the preview can abort it.";

const EDIT_COMMIT: &str = "Write a previewed edit to disk: every file of the preview or none, crash-safe, with exact rollback material stored in the journal first. Takes m1nd's {preview_id, agent_id, confirm, reingest?}; confirm must be true (it is your explicit go-ahead), and agent_id must be the agent that made the preview. Refused without writing anything when a file changed on disk since the preview (source_modified: call edit_rebase or edit_preview again), when the preview expired or is unknown (call edit_preview), A retry of a commit that landed already (after a timeout or a lost answer) is not refused: it returns that commit's receipt with already: true and writes nothing (a commit of another revision than the one committed, or of a preview rolled back since, is refused and says so). Returns m1nd's {preview_id, file_path, bytes_written, lines_added, lines_removed, reingested, updated_node_ids, elapsed_ms} plus the receipt (tx, batch, every file's hashes before and after) and already (false when this call wrote the files). To undo it later call edit_rollback with the same preview_id. If the files were written but the journal could not record the commit (a failing disk), the answer is still the commit, with journal_attention {kind, message, outcome: \"will_land\", hint}: do not retry it.";

const EDIT_ROLLBACK: &str = "Undo a committed edit: restores the exact previous bytes, mode and existence of every file it touched (created files are removed, deleted ones recreated), as a new transaction that is itself journaled and can be rolled back (redo). preview_id is the commit's preview_id, as in every other tool (or an earlier rollback's, to redo); the old name tx is still accepted, and the answer then carries a note. Refused with stale_rollback if a file changed since the commit: edit_revert then undoes only this edit and keeps the later changes, and force=true overwrites the file after storing its current bytes in the journal. Returns the new rollback tx and its receipt, and already: a retried rollback whose rollback landed already returns that rollback's tx and receipt with already: true and writes nothing; a forced rollback also returns overwritten[] {path, action (overwrote, recreated, deleted), kept_in, message, bring_back}: the tx that keeps each overwritten file's bytes and the edit_rollback call that brings them back.";

const EDIT_REVERT: &str = "Undo committed edits and keep everyone else's work: a new preview whose candidate removes the change of each transaction from the files as they are now, by a three-way merge per file (git's, as edit_rebase merges): lines others changed since are kept. Give tx (a preview_id you committed) or txs (several, reverted newest first into one preview); with neither, every committed transaction of agent_id is reverted (last: only the N newest; since_ms: only those made at or after that time, ms since the Unix epoch; rollbacks and reverts are not counted). A file the transaction created is deleted unless changed since; one it deleted is re-created while still absent; a mode it changed is changed back. Where someone changed the same lines, the candidate holds diff3 conflict markers (<<<<<<< disk, ||||||| tx, =======, >>>>>>> before tx, as git merge-file --diff3 writes them) and conflict_list names them: fix them with edit_revise. Returns edit_preview's shape (description \"revert of tx N\"); nothing is written until edit_commit. Refused with nothing_to_revert when there is nothing to undo.";

const APPLY_BATCH: &str = "Write several whole files in one call, m1nd's {agent_id, edits:[{file_path, new_content, description?}], atomic?, reingest?}, journaled like edit_preview + edit_commit. atomic=true (default) is one transaction: every file is written or none is (a failure on any file, even mid-write, restores the others). atomic=false commits each file as its own transaction and reports each. Returns m1nd's per-file results[] {file_path, success, diff, lines_added, lines_removed, error?} and totals {all_succeeded, files_written, files_total, total_bytes_written, reingested, elapsed_ms}, plus the tx and receipt of each transaction (roll one back with edit_rollback).";

const JOURNAL_LOG: &str = "List transactions, newest first: tx (= preview_id), agent, description, state (open, committed, aborted, rolled_back), files, line counts, revisions, and which tx rolled back which; needs_attention lists each batch that needs attention (batch, tx, files, foreign, rolls_forward), whose files no commit or rollback may write until it is settled. Use it to find your open previews and your commits. Filter with by_agent (agent_id, which means the caller in every other tool, is accepted as the filter too, with a note in the answer); limit defaults to 50.";

const JOURNAL_DUMP: &str = "Read the journal's full record in order: every transaction, revision (snapshots, candidates, diffs, validation), batch (pre- and post-image hashes), receipt and recovery, as JSON entries. Pass tx to see one transaction's whole history; page with since_seq (the next_since_seq of the previous call) and limit (default 200).";

fn schema(properties: Value, required: &[&str]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), json!("object"));
    m.insert("properties".into(), properties);
    m.insert("required".into(), json!(required));
    m
}

fn agent_id() -> Value {
    json!({"type": "string", "description": "Your agent id. Recorded in the journal; a preview can be committed, revised or aborted only by the agent that made it."})
}

fn preview_id() -> Value {
    json!({"type": ["string", "integer"], "description": "The preview_id returned by edit_preview (the transaction's handle, e.g. \"3f9a2c1b7d4e8a60-7\"; a bare tx number of this workspace's journal is accepted too)."})
}

fn reingest() -> Value {
    json!({"type": "boolean", "default": true, "description": "Re-ingest the written files into the host's index once, after the write (m1nd). Reported as reingested."})
}

/// The schema of one element of `edits`: an Ultra Edit op, or m1nd's whole-file item.
/// `expected_base` of a whole-file write (issue 29, item 7; docs/plan.md).
fn expected_base() -> Value {
    json!({"type": ["string", "object"],
           "description": "The base the content was made from: the blake3 hex of the file's content as you read it, or the snapshot object edit_preview reported for it ({\"content_hash\", \"bytes\"}; {\"file_exists\": false} for a file that did not exist). When given and the file now holds anything else (another agent or a person wrote it since you read it), the write is refused with source_modified and nothing is written: read the file again and send content based on it. Without it the write is not checked against a base (m1nd's behaviour) and the result says so (base_checked: false, unchecked_base).",
           "properties": {"content_hash": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}, "file_exists": {"type": "boolean"}}})
}

fn edit_item() -> Value {
    let path = json!({"type": "string", "description": "File path, relative to the workspace root (or absolute inside it)."});
    let occurrence = json!({"type": "integer", "minimum": 1, "description": "1-based match to use when the text occurs more than once."});
    let occurrence_or_all = json!({"anyOf": [{"type": "integer", "minimum": 1}, {"const": "all"}], "description": "1-based match to use when old occurs more than once, or \"all\" to replace every match."});
    let mode = json!({"type": ["integer", "string"], "description": "Unix mode, as an octal string like \"0755\"."});
    let symbol = json!({"type": "string", "description": "A definition: the names of its enclosing definitions and its own, joined with '.' (e.g. \"Config.load\")."});
    let position = json!({"anyOf": [{"enum": ["first", "last"]}, {"type": "object", "properties": {"after": {"type": "string"}}, "required": ["after"], "additionalProperties": false}], "description": "Where among the members: \"first\", \"last\" or {\"after\": \"NAME\"} (the member of that name)."});
    let symbol_occurrence = json!({"type": "integer", "minimum": 1, "description": "1-based definition (in file order) to use when symbol names several; the error lists each one's kind and lines."});
    json!({
        "anyOf": [
            {"type": "object", "description": "Replace the exact bytes of old (must match once, or pick occurrence; \"occurrence\": \"all\" replaces every non-overlapping match, left to right, and validation_issues reports how many as occurrences_replaced).",
             "properties": {"op": {"const": "replace_text"}, "path": path, "old": {"type": "string"}, "new": {"type": "string"}, "occurrence": occurrence_or_all},
             "required": ["op", "path", "old", "new"]},
            {"type": "object", "description": "Replace lines start..=end (1-based, inclusive) with content.",
             "properties": {"op": {"const": "replace_lines"}, "path": path, "start": {"type": "integer", "minimum": 1}, "end": {"type": "integer", "minimum": 1}, "content": {"type": "string"}},
             "required": ["op", "path", "start", "end", "content"]},
            {"type": "object", "description": "Insert text just before the exact text anchor.",
             "properties": {"op": {"const": "insert_before"}, "path": path, "anchor": {"type": "string"}, "text": {"type": "string"}, "occurrence": occurrence},
             "required": ["op", "path", "anchor", "text"]},
            {"type": "object", "description": "Insert text just after the exact text anchor.",
             "properties": {"op": {"const": "insert_after"}, "path": path, "anchor": {"type": "string"}, "text": {"type": "string"}, "occurrence": occurrence},
             "required": ["op", "path", "anchor", "text"]},
            {"type": "object", "description": "Insert text at the start of an existing file (an empty one too), after its UTF-8 byte-order mark if any.",
             "properties": {"op": {"const": "prepend"}, "path": path, "text": {"type": "string"}},
             "required": ["op", "path", "text"]},
            {"type": "object", "description": "Insert text at the end of an existing file (an empty one too), verbatim: start it with a newline if the file does not end with one.",
             "properties": {"op": {"const": "append"}, "path": path, "text": {"type": "string"}},
             "required": ["op", "path", "text"]},
            {"type": "object", "description": "Replace the whole content of an existing file (content, or content_base64 for binary or UTF-16/UTF-32 files, which text edits refuse).",
             "properties": {"op": {"const": "replace_file"}, "path": path, "content": {"type": "string"}, "content_base64": {"type": "string"}, "mode": mode, "expected_base": expected_base()},
             "required": ["op", "path"]},
            {"type": "object", "description": "Create a file that must not exist yet (parent directories are created).",
             "properties": {"op": {"const": "create_file"}, "path": path, "content": {"type": "string"}, "content_base64": {"type": "string"}, "mode": mode},
             "required": ["op", "path"]},
            {"type": "object", "description": "Write the whole content of a file whether or not it exists (replaced if it does, created if not); the commit is refused if the file appeared, disappeared or changed since the preview.",
             "properties": {"op": {"const": "write_file"}, "path": path, "content": {"type": "string"}, "content_base64": {"type": "string"}, "mode": mode, "expected_base": expected_base()},
             "required": ["op", "path"]},
            {"type": "object", "description": "Delete an existing file.",
             "properties": {"op": {"const": "delete_file"}, "path": path},
             "required": ["op", "path"]},
            {"type": "object", "description": "Replace a definition (function, method, class, …; Rust, Python, JavaScript, TypeScript/TSX, Go) from its signature line through its last line with content (whole lines; a missing final newline is added). Decorators, attributes and comments directly above it stay. symbol is the names of the enclosing definitions and its own joined with '.', e.g. \"Config.load\", \"History.render\", \"Journal.open\" (a method in an impl).",
             "properties": {"op": {"const": "replace_symbol"}, "path": path, "symbol": symbol, "content": {"type": "string"}, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "content"]},
            {"type": "object", "description": "Insert text (whole lines) right before a definition, above its decorators, attributes and comments.",
             "properties": {"op": {"const": "insert_before_symbol"}, "path": path, "symbol": symbol, "text": {"type": "string"}, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "text"]},
            {"type": "object", "description": "Insert text (whole lines) right after a definition's last line (a multi-line value included); blank lines around stay where they were.",
             "properties": {"op": {"const": "insert_after_symbol"}, "path": path, "symbol": symbol, "text": {"type": "string"}, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "text"]},
            {"type": "object", "description": "Delete a definition's lines with its decorators, attributes and the comments directly above it.",
             "properties": {"op": {"const": "delete_symbol"}, "path": path, "symbol": symbol, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol"]},
            {"type": "object", "description": "Replace the body of a function or method (Rust, Python, JavaScript, TypeScript/TSX, Go) and keep everything else byte for byte: signature, decorators, attributes, doc comment, a Python docstring (unless content starts with a string), the lines around. content is the body without its braces (Python: the indented block), whole lines, moved to the body's depth. A declaration without a body is refused (no_body).",
             "properties": {"op": {"const": "replace_body"}, "path": path, "symbol": symbol, "content": {"type": "string"}, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "content"]},
            {"type": "object", "description": "Insert a field (whole lines, moved to its siblings' depth) into a Rust struct or union, a Python class, a JavaScript/TypeScript class or interface, or a Go struct or interface. position is \"first\", \"last\" or {\"after\": \"NAME\"}; a comma is added where a Rust list needs one.",
             "properties": {"op": {"const": "insert_field"}, "path": path, "symbol": symbol, "text": {"type": "string"}, "position": position, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "text", "position"]},
            {"type": "object", "description": "Insert a variant (whole lines, moved to its siblings' depth) into a Rust enum or union or a TypeScript enum. position is \"first\", \"last\" or {\"after\": \"NAME\"}; commas are added where the list needs one (a trailing comma only where there was one).",
             "properties": {"op": {"const": "insert_variant"}, "path": path, "symbol": symbol, "text": {"type": "string"}, "position": position, "occurrence": symbol_occurrence},
             "required": ["op", "path", "symbol", "text", "position"]},
            {"type": "object", "description": "Replace one arm of a Rust match (or case of a Go switch) inside the function symbol. pattern is the arm's pattern exactly as written (Rust: the text before =>, guard included; Go: the text between case and :, or \"default\"); content is the whole new arm, pattern included. occurrence picks among arms with the same pattern.",
             "properties": {"op": {"const": "replace_arm"}, "path": path, "symbol": symbol, "pattern": {"type": "string"}, "content": {"type": "string"}, "occurrence": {"type": "integer", "minimum": 1, "description": "1-based arm (in file order) when pattern occurs several times in the function."}},
             "required": ["op", "path", "symbol", "pattern", "content"]},
            {"type": "object", "description": "m1nd's whole-file item: replace the file with new_content, or create it if it does not exist.",
             "properties": {"file_path": path, "new_content": {"type": "string"}, "description": {"type": "string"}, "expected_base": expected_base()},
             "required": ["file_path", "new_content"]}
        ]
    })
}

/// Every tool with its schema, as a server that does not run commands lists them.
pub fn tool_definitions() -> Vec<ToolDef> {
    tool_definitions_for(false)
}

/// Every tool with its schema; with `commands` (a server started with
/// `--allow-commands`, feature `sandbox`), `edit_config` and `edit_run` last, and
/// `check`, `no_check` and `timeout_secs` arguments on `edit_preview`, `edit_revise`
/// and `edit_rebase`.
pub fn tool_definitions_for(commands: bool) -> Vec<ToolDef> {
    let mut defs = base_definitions();
    if commands && cfg!(feature = "sandbox") {
        for d in &mut defs {
            if matches!(d.name, "edit_preview" | "edit_revise" | "edit_rebase") {
                if let Some(Value::Object(props)) = d.input_schema.get_mut("properties") {
                    props.insert("check".into(), super::commands::check_schema());
                    props.insert("no_check".into(), super::commands::no_check_schema());
                    props.insert(
                        "timeout_secs".into(),
                        super::commands::check_timeout_schema(),
                    );
                }
            }
        }
        defs.push(ToolDef {
            name: super::commands::EDIT_CONFIG,
            description: super::commands::EDIT_CONFIG_DESCRIPTION,
            input_schema: super::commands::edit_config_schema(),
            read_only: false,
            writes_files: false,
        });
        defs.push(ToolDef {
            name: super::commands::EDIT_RUN,
            description: super::commands::EDIT_RUN_DESCRIPTION,
            input_schema: super::commands::edit_run_schema(),
            read_only: false,
            writes_files: false,
        });
    }
    defs
}

fn base_definitions() -> Vec<ToolDef> {
    let edits = json!({"type": "array", "items": edit_item(), "description": "The edits, applied against one base (the disk for edit_preview, the latest candidate for edit_revise); overlapping edits are refused."});
    let description = json!({"type": "string", "description": "What the change is for; recorded in the journal."});
    let file_path = json!({"type": "string", "description": "m1nd shape: the file to replace (or create), relative to the workspace root or absolute inside it."});
    let new_content =
        json!({"type": "string", "description": "m1nd shape: the file's complete new content."});
    let revision = json!({"type": "integer", "minimum": 0, "description": "Revision number (default: for a committed preview the revision committed, else the latest)."});
    let allow = json!({"type": "array", "items": {"enum": ["syntax_error", "check_failed"]}, "description": "Validation errors this revision may have without blocking edit_commit (recorded as warnings): \"syntax_error\" (it sets the plan's policy \"syntax_errors\": \"allow\"), for a Rust/Python/JavaScript/TypeScript/Go file meant to stay unparsable for now, and \"check_failed\" (a check command that fails)."});
    let tx = json!({"type": ["string", "integer"], "description": "Old name of preview_id, still accepted (the answer then carries a note)."});
    vec![
        ToolDef {
            name: "edit_preview",
            description: EDIT_PREVIEW,
            input_schema: schema(
                json!({"agent_id": agent_id(), "file_path": file_path, "new_content": new_content,
                       "expected_base": expected_base(),
                       "description": description, "edits": edits, "allow": allow}),
                &["agent_id"],
            ),
            read_only: false,
            writes_files: false,
        },
        ToolDef {
            name: "edit_revise",
            description: EDIT_REVISE,
            input_schema: schema(
                json!({"preview_id": preview_id(), "agent_id": agent_id(), "edits": edits,
                       "file_path": file_path, "new_content": new_content, "expected_base": expected_base(), "allow": allow,
                       "base_revision": {"type": "integer", "minimum": 0, "description": "The revision the edits were written against (default: the latest)."},
                       "rebase": {"type": "boolean", "default": false, "description": "Merge edits written against an older base_revision onto the latest."}}),
                &["preview_id", "agent_id"],
            ),
            read_only: false,
            writes_files: false,
        },
        ToolDef {
            name: "edit_rebase",
            description: EDIT_REBASE,
            input_schema: schema(
                json!({"preview_id": preview_id(), "agent_id": agent_id()}),
                &["preview_id", "agent_id"],
            ),
            read_only: false,
            writes_files: false,
        },
        ToolDef {
            name: "edit_show",
            description: EDIT_SHOW,
            input_schema: schema(
                json!({"preview_id": preview_id(), "revision": revision, "agent_id": agent_id(),
                       "from_revision": {"type": "integer", "minimum": 0, "description": "Also return the interdiff from this revision to the one shown."}}),
                &["preview_id"],
            ),
            read_only: true,
            writes_files: false,
        },
        ToolDef {
            name: "edit_abort",
            description: EDIT_ABORT,
            input_schema: schema(
                json!({"preview_id": preview_id(), "agent_id": agent_id()}),
                &["preview_id", "agent_id"],
            ),
            read_only: false,
            writes_files: false,
        },
        ToolDef {
            name: "edit_commit",
            description: EDIT_COMMIT,
            input_schema: schema(
                json!({"preview_id": preview_id(), "agent_id": agent_id(),
                       "confirm": {"type": "boolean", "description": "Must be true: your explicit go-ahead to write the files."},
                       "reingest": reingest()}),
                &["preview_id", "agent_id", "confirm"],
            ),
            read_only: false,
            writes_files: true,
        },
        ToolDef {
            name: "edit_rollback",
            description: EDIT_ROLLBACK,
            input_schema: schema(
                json!({"preview_id": preview_id(), "tx": tx, "agent_id": agent_id(),
                       "force": {"type": "boolean", "default": false, "description": "Overwrite files changed since the commit (their current bytes are kept in the journal)."},
                       "reingest": reingest()}),
                &["agent_id"],
            ),
            read_only: false,
            writes_files: true,
        },
        ToolDef {
            name: "edit_revert",
            description: EDIT_REVERT,
            input_schema: schema(
                json!({"tx": {"type": ["string", "integer"], "description": "The preview_id of a committed edit to undo."},
                       "txs": {"type": "array", "items": {"type": ["string", "integer"]}, "description": "Several committed edits to undo, in one preview (reverted newest first)."},
                       "agent_id": agent_id(),
                       "last": {"type": "integer", "minimum": 0, "description": "Without tx/txs: only your N newest committed edits."},
                       "since_ms": {"type": "integer", "minimum": 0, "description": "Without tx/txs: only your committed edits made at or after this time (ms since the Unix epoch)."}}),
                &["agent_id"],
            ),
            read_only: false,
            writes_files: false,
        },
        ToolDef {
            name: "apply_batch",
            description: APPLY_BATCH,
            input_schema: schema(
                json!({"agent_id": agent_id(),
                       "edits": {"type": "array", "description": "The files to write, each replaced (or created) whole.",
                                 "items": {"type": "object",
                                           "properties": {"file_path": {"type": "string", "description": "Relative to the workspace root, or absolute inside it."},
                                                          "new_content": {"type": "string", "description": "The file's complete new content."},
                                                          "description": {"type": "string"},
                                                          "expected_base": expected_base()},
                                           "required": ["file_path", "new_content"]}},
                       "atomic": {"type": "boolean", "default": true, "description": "true: all files or none, one transaction. false: one transaction per file."},
                       "description": description,
                       "reingest": reingest()}),
                &["agent_id", "edits"],
            ),
            read_only: false,
            writes_files: true,
        },
        ToolDef {
            name: "journal_log",
            description: JOURNAL_LOG,
            input_schema: schema(
                json!({"limit": {"type": "integer", "minimum": 1, "default": 50},
                       "by_agent": {"type": "string", "description": "Only transactions made by this agent (agent_id means the caller in every other tool)."},
                       "agent_id": {"type": "string", "description": "Old name of by_agent, still accepted as the filter (the answer then carries a note)."}}),
                &[],
            ),
            read_only: true,
            writes_files: false,
        },
        ToolDef {
            name: "journal_dump",
            description: JOURNAL_DUMP,
            input_schema: schema(
                json!({"tx": {"type": ["string", "integer"], "description": "Only entries about this transaction."},
                       "agent_id": {"type": "string", "description": "Accepted, as every other tool takes it; the dump is the same for every agent."},
                       "since_seq": {"type": "integer", "minimum": 0, "default": 0, "description": "Start at this event sequence number."},
                       "limit": {"type": "integer", "minimum": 1, "default": 200}}),
                &[],
            ),
            read_only: true,
            writes_files: false,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_tool_has_an_object_schema() {
        let defs = tool_definitions();
        let names: Vec<&str> = defs.iter().map(|d| d.name).collect();
        assert_eq!(names, TOOL_NAMES);
        for d in &defs {
            assert_eq!(d.input_schema["type"], "object", "{}", d.name);
            assert!(!d.description.contains('\n'), "{}: one paragraph", d.name);
        }
    }
}
