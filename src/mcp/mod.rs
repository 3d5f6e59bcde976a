//! `ultra-edit serve`: a Model Context Protocol server with m1nd-compatible edit tools.
//!
//! m1nd exposes `edit_preview`, `edit_commit` and `apply_batch` with an in-memory preview
//! map and no durable history. These are the same tools, with m1nd's input and output
//! shapes, backed by the journal: a preview handle (`preview_id`) is a transaction's
//! handle (its journal's id and its tx number, `"3f9a2c1b7d4e8a60-7"`; another
//! workspace's journal refuses it), survives a restart, can be revised, rebased, shown and aborted, and every commit can
//! be rolled back. Errors are tool errors whose text names the problem and teaches the
//! next call (`Hint: …`, `Example: {…}`), as m1nd's do.
//!
//! Layers:
//! - [`EditTools`]: the tools as JSON → JSON functions over one shared [`Journal`]. No
//!   MCP types: an embedder with its own MCP stack (m1nd) can route its tool calls
//!   here, with [`tool_definitions`] for its `tools/list`.
//! - [`McpServer`]: an rmcp [`ServerHandler`] over `EditTools`.
//! - [`serve`]: the server on standard input/output, for the `serve` command.
//!
//! Journal verbs block (fsync), so each call runs on Tokio's blocking pool. The journal
//! stays open, shared with other processes (the CLI, other agents' servers), for the
//! server's lifetime; recovery ran when it was opened.

mod commands;
mod errors;
pub mod frame;
mod schemas;
mod shapes;
mod tools;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};

pub use commands::{EDIT_CONFIG, EDIT_RUN};
pub use errors::ToolError;
pub use schemas::{tool_definitions, tool_definitions_for, ToolDef, TOOL_NAMES};
pub use shapes::{CandidateDiffReport, PreviewValidationReport, SourceFileSnapshot};
pub use tools::{EditTools, ReingestFn, OLD_LOG_FILTER, OLD_ROLLBACK_KEY};

use crate::error::{Error, IoError, Result};
use crate::workspace::Journal;

const INSTRUCTIONS: &str = "Transactional file edits for this workspace, journaled and crash-safe. \
To change a file: edit_preview (m1nd's {file_path, agent_id, new_content}, or a plan of precise edits) \
returns a preview_id, a diff and a validation report without touching the disk; edit_commit \
{preview_id, agent_id, confirm: true} writes it (all files or none). edit_rollback {tx: preview_id} \
undoes a commit exactly; edit_revert {tx} (or {agent_id} alone: all your commits) undoes only its change \
and keeps what others wrote since, as a preview to commit. apply_batch writes several whole files at once. If a commit is refused \
because the file changed on disk (source_modified), call edit_rebase or edit_preview again. \
journal_log and journal_dump show the history.";

/// Options of [`serve`].
/// `#[non_exhaustive]`: start from [`ServeOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ServeOptions {
    /// Refuse previews older than this (default: none, previews are durable).
    pub preview_ttl: Option<Duration>,
    /// Let clients run shell commands: the `edit_run` tool and the `check` argument
    /// (feature `sandbox`; `serve --allow-commands`). Default `false`: `edit_run` is
    /// not listed and both are refused with `commands_not_allowed`.
    pub allow_commands: bool,
}

impl ServeOptions {
    /// Every default: previews never expire, commands are not allowed.
    pub fn new() -> ServeOptions {
        ServeOptions::default()
    }
    /// [`ServeOptions::preview_ttl`].
    pub fn with_preview_ttl(mut self, ttl: Duration) -> Self {
        self.preview_ttl = Some(ttl);
        self
    }
    /// [`ServeOptions::allow_commands`].
    pub fn with_allow_commands(mut self, allow: bool) -> Self {
        self.allow_commands = allow;
        self
    }
}

/// Builds the tools anew over a journal opened again ([`McpServer::with_reopen`]).
pub type ReopenFn = Arc<dyn Fn() -> Result<EditTools> + Send + Sync>;

/// The rmcp server: tools/list and tools/call over [`EditTools`].
#[derive(Clone)]
pub struct McpServer {
    tools: Arc<RwLock<Arc<EditTools>>>,
    reopen: Option<ReopenFn>,
}

impl McpServer {
    /// A server over `tools`.
    pub fn new(tools: EditTools) -> Self {
        McpServer {
            tools: Arc::new(RwLock::new(Arc::new(tools))),
            reopen: None,
        }
    }

    /// After a call fails with `journal_handle_failed` — redb refuses a handle for good
    /// once an I/O error hit one of its writes (docs/embedding.md, "Commit and the
    /// completion") — build the tools anew with `reopen` (a new journal handle, whose
    /// open runs recovery) for the calls that follow, instead of refusing every call
    /// until the server restarts. The failed call still answers its error, with a hint
    /// that says the journal was reopened; it is not retried (it may have been a write).
    pub fn with_reopen(
        mut self,
        reopen: impl Fn() -> Result<EditTools> + Send + Sync + 'static,
    ) -> Self {
        self.reopen = Some(Arc::new(reopen));
        self
    }

    /// The tools it serves now.
    pub fn tools(&self) -> Arc<EditTools> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Run tool `name` ([`EditTools::call`]) on the tools of the moment, and reopen
    /// them after a `journal_handle_failed` ([`McpServer::with_reopen`]).
    pub fn call(
        &self,
        name: &str,
        args: serde_json::Value,
    ) -> std::result::Result<serde_json::Value, ToolError> {
        let tools = self.tools();
        let (mut e, reopen) = match (tools.call(name, args), &self.reopen) {
            (Err(e), Some(reopen)) if e.kind == "journal_handle_failed" => (e, reopen),
            (outcome, _) => return outcome,
        };
        let mut current = self.tools.write().unwrap_or_else(|p| p.into_inner());
        if !Arc::ptr_eq(&current, &tools) {
            // A concurrent call already reopened it.
            e.hint = "the server has reopened its journal since: call again".into();
            return Err(e);
        }
        match reopen() {
            Ok(fresh) => {
                *current = Arc::new(fresh);
                e.hint = "the server reopened its journal (its open ran recovery, which settled what the failure left in flight): call again; if it fails the same way, the journal's disk needs attention".into();
            }
            Err(again) => {
                e.hint = format!("the server could not reopen its journal ({again}); the journal's disk needs attention, then restart the server");
            }
        }
        Err(e)
    }
}

/// The tool list as rmcp types, with annotations (read-only, destructive); with
/// `commands`, `edit_run` and the `check` arguments too ([`tool_definitions_for`]).
pub fn rmcp_tools(commands: bool) -> Vec<Tool> {
    tool_definitions_for(commands)
        .into_iter()
        .map(|d| {
            let annotations = ToolAnnotations::new()
                .read_only(d.read_only)
                .destructive(d.writes_files)
                .open_world(false);
            Tool::new(d.name, d.description, d.input_schema).with_annotations(annotations)
        })
        .collect()
}

/// A tool's outcome as an MCP result: structured content plus its JSON as text, or a
/// tool error (`isError`) whose text is the hint-bearing message.
fn to_result(outcome: std::result::Result<serde_json::Value, ToolError>) -> CallToolResult {
    match outcome {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => {
            let mut r = CallToolResult::structured_error(e.to_json());
            r.content = vec![ContentBlock::text(e.text())];
            r
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("ultra-edit", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(rmcp_tools(
            self.tools().commands_allowed(),
        )))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        rmcp_tools(self.tools().commands_allowed())
            .into_iter()
            .find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if name == frame::TOO_LARGE_TOOL {
            return Err(ErrorData::invalid_request(
                format!(
                    "the message was longer than {} MiB, this server's limit for one message, and was not read; nothing was changed: send less in one call (one file per edit_preview, apply_batch in parts)",
                    frame::MAX_MESSAGE_BYTES / (1024 * 1024)
                ),
                None,
            ));
        }
        // `edit_run` and `edit_config` are answered by the tools either way: a server that does not allow
        // commands refuses it with `commands_not_allowed`, naming the flag.
        if !TOOL_NAMES.contains(&name.as_str()) && name != EDIT_RUN && name != EDIT_CONFIG {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {name:?}; tools/list lists them: {}",
                    TOOL_NAMES.join(", ")
                ),
                None,
            ));
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let server = self.clone();
        let outcome = tokio::task::spawn_blocking(move || server.call(&name, args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool call failed: {e}"), None))?;
        Ok(to_result(outcome).into())
    }
}

/// Serve the tools over standard input/output until the client disconnects, holding
/// `journal` for the whole session. Nothing but MCP messages goes to standard output.
pub fn serve(journal: Journal, opts: ServeOptions) -> Result<()> {
    let root = journal.root().to_path_buf();
    let io_err = |op: &'static str, e: &dyn std::fmt::Display| {
        Error::Io(IoError {
            op,
            path: root.clone(),
            source: std::io::Error::other(e.to_string()),
        })
    };
    // A journal in its default place is opened again the same way; one in another
    // state directory (`--state-dir`) there.
    let state = journal.state_dir().to_path_buf();
    let state_dir = (state != root.join(".ultra-edit")).then_some(state);
    let tools = EditTools::new(Arc::new(journal))
        .with_preview_ttl(opts.preview_ttl)
        .with_commands(opts.allow_commands);
    let reopen_root = root.clone();
    let server = McpServer::new(tools).with_reopen(move || {
        let j = Journal::open_with(
            &reopen_root,
            crate::OpenOptions {
                state_dir: state_dir.clone(),
                ..Default::default()
            },
        )?;
        Ok(EditTools::new(Arc::new(j))
            .with_preview_ttl(opts.preview_ttl)
            .with_commands(opts.allow_commands))
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| io_err("start the MCP server's runtime", &e))?;
    runtime.block_on(async {
        // Messages over frame::MAX_MESSAGE_BYTES are answered with an error instead
        // of being dropped in silence (rmcp's own, smaller limit never sees them).
        let (stdin, stdout) = rmcp::transport::stdio();
        let transport = rmcp::transport::async_rw::AsyncRwTransport::<RoleServer, _, _>::new(
            frame::BoundedLines::new(stdin, frame::MAX_MESSAGE_BYTES),
            stdout,
        )
        .with_max_line_length(frame::MAX_MESSAGE_BYTES + 1024);
        let running = server
            .serve(transport)
            .await
            .map_err(|e| io_err("MCP handshake on stdio", &e))?;
        running
            .waiting()
            .await
            .map_err(|e| io_err("MCP server on stdio", &e))?;
        Ok(())
    })
}
