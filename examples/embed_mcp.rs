//! The MCP tool layer embedded the way a host with its own MCP stack would: the tools
//! `ultra-edit serve` exposes, as JSON → JSON functions over one shared `Journal`
//! (`ultra_edit::mcp::EditTools`), with m1nd's argument and result shapes. Needs the
//! `mcp` feature (on by default); the slim library is `examples/embed.rs`.
//!
//! Runs on a temporary workspace and asserts every step; `cargo run --example embed_mcp`.

use std::fs;
use std::sync::{Arc, Mutex};

use serde_json::json;
use ultra_edit::mcp::EditTools;
use ultra_edit::Journal;

type Reingested = Arc<Mutex<Vec<Vec<String>>>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    fs::create_dir(dir.path().join("src"))?;
    let journal = Arc::new(Journal::init(dir.path())?);
    let tool_hook: Reingested = Arc::default();
    let seen = tool_hook.clone();
    let tools = EditTools::new(journal)
        .with_reingest_hook(move |paths| seen.lock().unwrap().push(paths.to_vec()));
    tools_cycle(&tools, &tool_hook)?;
    println!("embed_mcp: every step passed");
    Ok(())
}

/// The same cycle through the MCP tool layer, with m1nd's argument and result shapes.
fn tools_cycle(
    tools: &EditTools,
    reingested: &Reingested,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = tools.journal().root().to_path_buf();
    let preview = tools.call(
        "edit_preview",
        json!({"file_path": "src/new.py", "agent_id": "m1nd-agent", "new_content": "print('hi')\n"}),
    )?;
    assert_eq!(preview["snapshot"]["file_exists"], false);
    assert_eq!(preview["validation"]["ready_to_commit"], true);
    let id = preview["preview_id"].as_str().unwrap().to_string();

    let refused = tools
        .call(
            "edit_commit",
            json!({"preview_id": id, "agent_id": "m1nd-agent", "confirm": false}),
        )
        .unwrap_err();
    assert_eq!(refused.kind, "confirm_required");
    assert!(refused.text().contains("Hint:") && refused.text().contains("Example:"));

    let done = tools.call(
        "edit_commit",
        json!({"preview_id": id, "agent_id": "m1nd-agent", "confirm": true, "reingest": true}),
    )?;
    assert_eq!(done["reingested"], true);
    assert_eq!(done["bytes_written"], 12);
    assert_eq!(
        fs::read_to_string(root.join("src/new.py"))?,
        "print('hi')\n"
    );
    assert_eq!(
        *reingested.lock().unwrap(),
        vec![vec!["src/new.py".to_string()]]
    );

    // A retried commit (a lost answer) returns the same receipt, already: true, and
    // writes nothing.
    let again = tools.call(
        "edit_commit",
        json!({"preview_id": id, "agent_id": "m1nd-agent", "confirm": true}),
    )?;
    assert_eq!(again["already"], true);
    assert_eq!(again["receipt"], done["receipt"]);

    tools.call("edit_rollback", json!({"tx": id, "agent_id": "m1nd-agent"}))?;
    assert!(!root.join("src/new.py").exists());
    println!("tools: preview {id} committed through EditTools, then rolled back");
    Ok(())
}
