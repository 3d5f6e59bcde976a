//! `config check CMD`, `config check --unset`, `config show`: the journal's settings
//! (docs/commands.md, "The default check").

use serde_json::json;
use ultra_edit::{Journal, Result};

use crate::cli::args::ConfigCommand;
use crate::cli::render::{emit, emit_json, Out};

pub(super) fn dispatch(out: &Out, j: &Journal, command: ConfigCommand) -> Result<i32> {
    match command {
        ConfigCommand::Check { command, unset } => {
            let command = if unset { None } else { command };
            j.set_default_check(command.as_deref())?;
            if out.is_json() {
                emit_json(&json!({"check": command}));
            } else {
                match &command {
                    Some(c) => emit(&format!(
                        "default check: `{c}` (preview, revise, rebase, resolve and run run it when no --check is given; --no-check skips it)\n"
                    )),
                    None => emit("default check removed\n"),
                }
            }
        }
        ConfigCommand::Show => {
            let config = j.config()?;
            if out.is_json() {
                emit_json(&config);
            } else {
                match &config.check {
                    Some(c) => emit(&format!("check: {c}\n")),
                    None => emit("check: (none)\n"),
                }
            }
        }
    }
    Ok(0)
}
