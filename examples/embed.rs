//! Embedding the slim library the way m1nd does: `ultra-edit` with
//! `default-features = false` (the journal and the edit engine, no CLI, no MCP stack).
//!
//! - one `Journal` per ingest root, kept for the server's lifetime, with its journal in
//!   the host's own runtime directory (`OpenOptions::state_dir`), not in the user's repo;
//! - previews named by handles (`"<journal id>-<tx>"`), which the host hands to agents
//!   as strings and which another root's journal refuses;
//! - `write_file`, m1nd's `new_content`: no check of the disk first, no race;
//! - a five-minute max preview age, and a sweep of expired previews;
//! - errors as data (`kind`, `tx`, `paths`, `next_step`), rendered by the host;
//! - the receipt's touched paths, re-ingested with the host's own state at hand.
//!
//! Runs on temporary directories and asserts every step:
//! `cargo run --no-default-features --example embed`.

use std::fs;
use std::path::Path;
use std::time::Duration;

use ultra_edit::edit::Edit;
use ultra_edit::{CommitOptions, Journal, NextStep, OpenOptions, Plan, RollbackOptions, TxHandle};

/// m1nd's preview lifetime.
const TTL: Duration = Duration::from_secs(5 * 60);

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo_a = tempfile::tempdir()?;
    let repo_b = tempfile::tempdir()?;
    let runtime = tempfile::tempdir()?;
    fs::write(
        repo_a.path().join("hello.py"),
        "def hello():\n    return 42\n",
    )?;
    fs::write(repo_b.path().join("hello.py"), "print('b')\n")?;

    // One journal per root, in the host's runtime directory.
    let open = |root: &Path, name: &str| {
        Journal::init_with(
            root,
            OpenOptions::default()
                .with_state_dir(runtime.path().join(name))
                .with_max_preview_age(TTL),
        )
    };
    let a = open(repo_a.path(), "root-a")?;
    let b = open(repo_b.path(), "root-b")?;
    assert!(!repo_a.path().join(".ultra-edit").exists());

    // edit_preview: m1nd's {file_path, new_content} is one write_file edit.
    let file_path = a.root().join("hello.py");
    let preview = a.preview(&write_file(&file_path, "def hello():\n    return 99\n"))?;
    let preview_id = preview.handle.to_string(); // what the agent gets back
    let summary = &preview.summary[0];
    assert_eq!(summary.snapshot.map(|s| (s.bytes, s.lines)), Some((27, 2)));
    assert_eq!(summary.candidate.map(|s| (s.bytes, s.lines)), Some((27, 2)));
    assert_eq!((preview.lines_added, preview.lines_removed), (1, 1));
    assert!(preview.ready_to_commit);
    println!(
        "preview {preview_id}: {}",
        preview.files[0].diff.unified.trim_end()
    );

    // Both roots mint tx 1; the handles tell them apart.
    let other = b.preview(&write_file(&b.root().join("hello.py"), "print('B')\n"))?;
    assert_eq!((preview.tx, other.tx), (1, 1));
    let handle: TxHandle = preview_id.parse()?;
    let err = b.commit(handle, CommitOptions::default()).unwrap_err();
    assert_eq!(err.kind(), "foreign_handle");
    assert_eq!(
        fs::read_to_string(b.root().join("hello.py"))?,
        "print('b')\n"
    );

    // edit_commit: by handle; then re-ingest what the receipt touched.
    let receipt = a.commit(handle, CommitOptions::default())?;
    let touched = a.touched(&receipt);
    assert_eq!(touched[0].path, "hello.py");
    assert_eq!(touched[0].absolute, file_path);
    assert_eq!(
        fs::read_to_string(&file_path)?,
        "def hello():\n    return 99\n"
    );

    // A file changed after its preview: refused, as data the host renders itself.
    let stale = a.preview(&write_file(&file_path, "def hello():\n    return 7\n"))?;
    fs::write(&file_path, "# edited by a person\n")?;
    let err = a
        .commit(stale.handle, CommitOptions::default())
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.tx(), err.paths(), err.next_step()),
        (
            "stale_snapshot",
            Some(stale.tx),
            vec!["hello.py".to_string()],
            Some(NextStep::Rebase { tx: stale.tx })
        )
    );
    println!("refused: {err}");
    assert_eq!(fs::read_to_string(&file_path)?, "# edited by a person\n");

    // The expiry sweep m1nd runs before a commit: nothing is older than five minutes
    // yet, and the sweep never waits for the commit lock.
    assert!(a.abort_expired(TTL)?.is_empty());
    a.abort(stale.handle)?;

    // Every commit rolls back to the exact previous bytes.
    fs::write(&file_path, "def hello():\n    return 99\n")?;
    let undo = a.rollback(handle, RollbackOptions::default())?;
    assert_eq!(
        fs::read_to_string(&file_path)?,
        "def hello():\n    return 42\n"
    );
    println!(
        "committed {preview_id}, rolled back by {}",
        a.handle(undo.tx)
    );
    println!("embed: every step passed");
    Ok(())
}

/// m1nd's `new_content` for `path`: one `write_file` edit, whether or not it exists.
fn write_file(path: &Path, content: &str) -> Plan {
    Plan {
        description: None,
        agent: Some("m1nd-agent".into()),
        edits: vec![Edit::WriteFile {
            path: path.display().to_string(),
            content: Some(content.into()),
            content_base64: None,
            mode: None,
            expected_base: None,
        }],
        policy: None,
    }
}
