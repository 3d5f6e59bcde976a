//! Embedding Ultra Edit the way m1nd does: one `Journal` handle for the server's
//! lifetime, a reingest callback that refreshes the host's index once per write, and
//! the preview → commit → rollback cycle behind m1nd's `edit_preview` / `edit_commit`
//! tools — first through the library's verbs, then through `ultra_edit::mcp::EditTools`,
//! the same tools `ultra-edit serve` exposes, for a host with its own MCP stack.
//!
//! Runs on a temporary workspace and asserts every step; `cargo run --example embed`.

use std::fs;
use std::sync::{Arc, Mutex};

use serde_json::json;
use ultra_edit::{CommitOptions, Journal, Plan, RollbackOptions};

type Reingested = Arc<Mutex<Vec<Vec<String>>>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    fs::create_dir(root.join("src"))?;
    fs::write(root.join("src/hello.py"), "def hello():\n    return 42\n")?;

    // One handle for the host's lifetime; recovery ran inside `init`/`open`.
    let mut journal = Journal::init(root)?;
    let reingested: Reingested = Arc::default();
    let seen = reingested.clone();
    journal.set_reingest_hook(move |paths| seen.lock().unwrap().push(paths.to_vec()));

    library_cycle(&journal, &reingested)?;
    stale_preview_is_refused(&journal)?;

    println!("embed: every step passed");
    Ok(())
}

/// m1nd's edit_preview → edit_commit, then a rollback, with the library's verbs.
fn library_cycle(
    journal: &Journal,
    reingested: &Reingested,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = journal.root().to_path_buf();
    let plan = Plan::from_json(
        json!({"agent": "m1nd-agent", "description": "bump return value", "edits": [
            {"op": "replace_file", "path": "src/hello.py", "content": "def hello():\n    return 99\n"}
        ]})
        .to_string()
        .as_bytes(),
    )?;
    let preview = journal.preview(&plan)?;
    assert!(preview.ready_to_commit);
    assert_eq!(preview.files.len(), 1);
    assert_eq!((preview.lines_added, preview.lines_removed), (1, 1));
    assert!(preview.files[0].diff.unified.contains("+    return 99"));
    // A preview writes nothing.
    assert_eq!(
        fs::read_to_string(root.join("src/hello.py"))?,
        "def hello():\n    return 42\n"
    );
    assert!(reingested.lock().unwrap().is_empty());

    let receipt = journal.commit(preview.tx, CommitOptions::default())?;
    assert_eq!(receipt.tx, preview.tx);
    assert_eq!(
        fs::read_to_string(root.join("src/hello.py"))?,
        "def hello():\n    return 99\n"
    );
    // The hook ran once, with the touched paths.
    assert_eq!(
        *reingested.lock().unwrap(),
        vec![vec!["src/hello.py".to_string()]]
    );

    let undo = journal.rollback(receipt.tx, RollbackOptions::default())?;
    assert_ne!(undo.tx, receipt.tx);
    assert_eq!(
        fs::read_to_string(root.join("src/hello.py"))?,
        "def hello():\n    return 42\n"
    );
    assert_eq!(reingested.lock().unwrap().len(), 2);
    println!(
        "library: preview tx {}, commit batch {}, rollback tx {}",
        preview.tx, receipt.batch, undo.tx
    );
    Ok(())
}

/// A file changed after the preview: the commit is refused and writes nothing; an
/// explicit rebase merges the change, then the commit goes through.
fn stale_preview_is_refused(journal: &Journal) -> Result<(), Box<dyn std::error::Error>> {
    let path = journal.root().join("notes.txt");
    fs::write(&path, "one\ntwo\nthree\nfour\nfive\n")?;
    let plan = Plan::from_json(
        br#"{"agent": "m1nd-agent", "edits": [{"op": "replace_text", "path": "notes.txt", "old": "one", "new": "ONE"}]}"#,
    )?;
    let preview = journal.preview(&plan)?;
    fs::write(&path, "one\ntwo\nthree\nfour\nFIVE\n")?;
    let err = journal
        .commit(preview.tx, CommitOptions::default())
        .unwrap_err();
    assert_eq!(err.kind(), "stale_snapshot");
    assert_eq!(err.tx(), Some(preview.tx));
    assert_eq!(fs::read_to_string(&path)?, "one\ntwo\nthree\nfour\nFIVE\n");
    let rebased = journal.rebase(preview.tx)?;
    assert!(rebased.ready_to_commit && rebased.conflicts.is_empty());
    journal.commit(preview.tx, CommitOptions::default())?;
    assert_eq!(fs::read_to_string(&path)?, "ONE\ntwo\nthree\nfour\nFIVE\n");
    println!(
        "library: stale preview {} refused, rebased, committed",
        preview.tx
    );
    Ok(())
}
