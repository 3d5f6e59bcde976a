//! m1nd's output shapes (`m1nd-mcp/src/protocol/surgical.rs`: `SourceFileSnapshot`,
//! `CandidateDiffReport`, `PreviewValidationReport`, `EditPreviewOutput`, …) built from
//! the library's [`Preview`] and [`Receipt`], next to Ultra Edit's own fields.
//!
//! m1nd's top-level fields describe one file (its tools take one file); Ultra Edit's
//! `files` lists every file of the revision. Paths in m1nd fields are absolute, as m1nd
//! returns them; `path` fields are relative to the workspace root, as the journal keeps
//! them.

use std::path::Path;

use serde::Serialize;
use serde_json::{json, Value};

use crate::journal::records::{FileRevision, FileState, Receipt, TxState};
use crate::tx::Preview;
use crate::workspace::Journal;

/// m1nd's `SourceFileSnapshot`: the file as it was when the preview was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceFileSnapshot {
    /// Absolute path.
    pub file_path: String,
    /// Whether the file existed.
    pub file_exists: bool,
    /// blake3 of its bytes, 64 hex characters (`""` when absent).
    pub content_hash: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Number of lines (a last line without a newline counts).
    pub line_count: usize,
}

/// m1nd's `CandidateDiffReport`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CandidateDiffReport {
    /// git-style unified diff snapshot → candidate.
    pub unified_diff: String,
    /// Lines added.
    pub lines_added: usize,
    /// Lines removed.
    pub lines_removed: usize,
    /// Size of the candidate in bytes (what a commit writes).
    pub bytes_written: u64,
}

/// m1nd's `PreviewValidationReport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PreviewValidationReport {
    /// Some file of the preview differs on disk from its snapshot now: a commit would
    /// be refused as stale.
    pub source_changed: bool,
    /// The candidate is empty (or deletes the file).
    pub candidate_is_empty: bool,
    /// The candidate equals the snapshot: nothing to write.
    pub candidate_equals_source: bool,
    /// The preview is open, its validation has no error and its sources are fresh.
    pub ready_to_commit: bool,
}

/// Lines of `bytes`, counted as `str::lines` does.
pub fn line_count(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// `rel` under the workspace root, as a string.
pub fn abs(root: &Path, rel: &str) -> String {
    root.join(rel).to_string_lossy().into_owned()
}

/// The root-relative form of a path an agent gave (relative, or absolute inside the
/// root or the root as given), for matching against the journal's paths: the
/// library's own normalization ([`Journal::relative`]); a path it refuses is kept as
/// given (the preview then refuses it with the reason).
pub fn rel_of(journal: &Journal, given: &str) -> String {
    journal
        .relative(given)
        .map(String::from)
        .unwrap_or_else(|_| given.to_string())
}

/// The file on disk now: existence, hash and bytes, read as a preview reads it
/// ([`Journal::disk_state`]: no symbolic link followed, a FIFO or device never waited
/// on). What cannot be read as a file of the workspace counts as no file.
fn disk_state(j: &Journal, rel: &str) -> (FileState, Option<Vec<u8>>) {
    j.disk_state(rel).unwrap_or((FileState::ABSENT, None))
}

/// True if the file on disk differs from `snapshot` (bytes or existence; a path that
/// is no longer a regular file of the workspace differs).
pub fn source_changed(j: &Journal, rel: &str, snapshot: &FileState) -> bool {
    let (state, _) = disk_state(j, rel);
    state.hash() != snapshot.hash()
}

fn hex(state: &FileState) -> String {
    state.hash().map(|h| h.to_hex()).unwrap_or_default()
}

/// The snapshot of a recorded file; its line count comes from the preview's summary
/// (counted while the revision was built), else from the snapshot's blob.
fn snapshot_of(j: &Journal, p: &Preview, rel: &str, s: &FileState) -> SourceFileSnapshot {
    let counted = p
        .summary
        .iter()
        .find(|f| f.path == rel)
        .map(|f| f.snapshot.map_or(0, |size| size.lines as usize));
    let lines = match (counted, s.hash()) {
        (Some(lines), _) => lines,
        (None, Some(h)) => j
            .blob(&h)
            .ok()
            .flatten()
            .map(|b| line_count(&b))
            .unwrap_or(0),
        (None, None) => 0,
    };
    SourceFileSnapshot {
        file_path: abs(j.root(), rel),
        file_exists: s.exists(),
        content_hash: hex(s),
        bytes: s.size(),
        line_count: lines,
    }
}

/// The snapshot of a file the revision does not change, read from disk now.
fn snapshot_from_disk(j: &Journal, rel: &str) -> SourceFileSnapshot {
    let (state, bytes) = disk_state(j, rel);
    SourceFileSnapshot {
        file_path: abs(j.root(), rel),
        file_exists: state.exists(),
        content_hash: hex(&state),
        bytes: bytes.as_ref().map_or(0, |b| b.len() as u64),
        line_count: bytes.as_deref().map_or(0, line_count),
    }
}

fn diff_of(f: &FileRevision) -> CandidateDiffReport {
    CandidateDiffReport {
        unified_diff: f.diff.unified.clone(),
        lines_added: f.diff.lines_added,
        lines_removed: f.diff.lines_removed,
        bytes_written: f.candidate.size(),
    }
}

fn file_json(j: &Journal, p: &Preview, f: &FileRevision) -> Value {
    let mut snapshot =
        serde_json::to_value(snapshot_of(j, p, &f.path, &f.snapshot)).unwrap_or_default();
    snapshot["mode"] = json!(f.snapshot.mode().unwrap_or(0));
    let mut diff = serde_json::to_value(diff_of(f)).unwrap_or_default();
    diff["binary"] = json!(f.diff.binary);
    diff["lossy"] = json!(f.diff.lossy);
    json!({
        "path": f.path,
        "file_path": abs(j.root(), &f.path),
        "snapshot": snapshot,
        "candidate": {
            "exists": f.candidate.exists(),
            "content_hash": hex(&f.candidate),
            "bytes": f.candidate.size(),
            "mode": f.candidate.mode().unwrap_or(0),
        },
        "diff": diff,
        // `show` checked the disk already (and more than the bytes): no second read.
        "source_changed": match &p.stale_paths {
            Some(stale) => stale.iter().any(|s| *s == f.path.as_str()),
            None => source_changed(j, &f.path, &f.snapshot),
        },
    })
}

/// What a preview handle looks like to an agent: m1nd's `EditPreviewOutput` plus Ultra
/// Edit's revision, files, validation issues and the next step.
///
/// `focus` is the root-relative path m1nd's fields describe (default: the first file).
pub fn preview_json(j: &Journal, p: &Preview, focus: Option<&str>, elapsed_ms: f64) -> Value {
    let root = j.root();
    let focus = focus
        .map(str::to_string)
        .or_else(|| p.files.first().map(|f| f.path.to_string()))
        .unwrap_or_default();
    let files: Vec<Value> = p.files.iter().map(|f| file_json(j, p, f)).collect();
    let any_changed = files.iter().any(|f| f["source_changed"] == json!(true));
    let (snapshot, diff, empty, equal) = match p.files.iter().find(|f| f.path == focus) {
        Some(f) => (
            snapshot_of(j, p, &f.path, &f.snapshot),
            diff_of(f),
            !f.candidate.exists() || f.candidate.size() == 0,
            f.candidate.exists() == f.snapshot.exists() && f.candidate.hash() == f.snapshot.hash(),
        ),
        // Not in the revision: its candidate equals its snapshot.
        None => {
            let s = snapshot_from_disk(j, &focus);
            let d = CandidateDiffReport {
                unified_diff: String::new(),
                lines_added: 0,
                lines_removed: 0,
                bytes_written: s.bytes,
            };
            let empty = s.bytes == 0;
            (s, d, empty, true)
        }
    };
    let validation = PreviewValidationReport {
        source_changed: any_changed,
        candidate_is_empty: empty,
        candidate_equals_source: equal,
        ready_to_commit: p.ready_to_commit && !any_changed,
    };
    json!({
        "preview_id": p.handle.to_string(),
        "file_path": abs(root, &focus),
        "snapshot": snapshot,
        "diff": diff,
        "validation": validation,
        "elapsed_ms": elapsed_ms,
        "tx": p.tx,
        "revision": p.revision,
        "latest_revision": p.latest_revision,
        "base_revision": p.base,
        "state": p.state,
        "agent_id": p.agent,
        "description": p.description,
        "files": files,
        "lines_added": p.lines_added,
        "lines_removed": p.lines_removed,
        "validation_issues": p.validation,
        "conflicts": p.conflicts,
        "conflict_list": p.conflict_list,
        "command": p.command,
        "next_step": next_step(p, validation),
    })
}

/// The next call to make, as data (issue 33, item 11): `{"tool", "arguments",
/// "text"}` — the tool to call (`null` when the step is no call), the arguments that
/// identify what it acts on (`preview_id`, `agent_id` where known), and the step in
/// words. Every answer's and every error's `next_step` has this shape.
pub fn next_call(tool: Option<&str>, arguments: Value, text: impl Into<String>) -> Value {
    json!({"tool": tool, "arguments": arguments, "text": text.into()})
}

fn next_step(p: &Preview, v: PreviewValidationReport) -> Value {
    let id = p.handle;
    let on = |extra: Value| {
        let mut a = json!({"preview_id": id.to_string(), "agent_id": p.agent});
        if let (Some(a), Value::Object(extra)) = (a.as_object_mut(), extra) {
            a.extend(extra);
        }
        a
    };
    match p.state {
        TxState::Committed => next_call(
            Some("edit_rollback"),
            on(json!({})),
            format!("committed; edit_rollback with preview_id \"{id}\" undoes it"),
        ),
        TxState::Aborted => next_call(
            Some("edit_preview"),
            json!({"agent_id": p.agent}),
            "aborted; call edit_preview to start again",
        ),
        TxState::RolledBack => next_call(
            Some("edit_preview"),
            json!({"agent_id": p.agent}),
            "committed, then rolled back; call edit_preview for a new change",
        ),
        TxState::Open if v.source_changed => next_call(
            Some("edit_rebase"),
            on(json!({})),
            format!("a file changed on disk since the preview: call edit_rebase with preview_id \"{id}\" (or edit_preview again) before edit_commit"),
        ),
        TxState::Open if v.ready_to_commit => next_call(
            Some("edit_commit"),
            on(json!({"confirm": true})),
            format!("review the diff, then call edit_commit with preview_id \"{id}\" and confirm=true (or edit_revise to change the candidate, edit_abort to drop it)"),
        ),
        TxState::Open => next_call(
            Some("edit_revise"),
            on(json!({})),
            format!("validation_issues has errors: call edit_revise with preview_id \"{id}\" to fix them, or edit_abort"),
        ),
    }
}

/// m1nd's `EditCommitOutput` plus the receipt.
pub fn commit_json(
    j: &Journal,
    p: &Preview,
    r: &Receipt,
    focus: Option<&str>,
    reingested: bool,
    elapsed_ms: f64,
) -> Value {
    let focus = focus
        .map(str::to_string)
        .or_else(|| p.files.first().map(|f| f.path.to_string()))
        .unwrap_or_default();
    let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    json!({
        "preview_id": p.handle.to_string(),
        "file_path": abs(j.root(), &focus),
        "bytes_written": r.bytes_written,
        "lines_added": p.lines_added,
        "lines_removed": p.lines_removed,
        "reingested": reingested,
        "updated_node_ids": [],
        "elapsed_ms": elapsed_ms,
        "tx": r.tx,
        "revision": p.revision,
        "batch": r.batch,
        "files": paths,
        "receipt": r,
        "next_step": next_call(
            Some("edit_rollback"),
            json!({"preview_id": p.handle.to_string(), "agent_id": p.agent}),
            format!("done; edit_rollback with preview_id \"{}\" restores the previous bytes", p.handle),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_str_lines() {
        for s in ["", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\r\nb\r\n"] {
            assert_eq!(line_count(s.as_bytes()), s.lines().count(), "{s:?}");
        }
    }

    #[test]
    fn rel_of_strips_root_and_dot() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::init(dir.path()).unwrap();
        let abs = j.root().join("src/a.rs");
        assert_eq!(rel_of(&j, abs.to_str().unwrap()), "src/a.rs");
        assert_eq!(rel_of(&j, "./src/a.rs"), "src/a.rs");
        assert_eq!(rel_of(&j, "src/a.rs"), "src/a.rs");
        assert_eq!(rel_of(&j, "/elsewhere/a.rs"), "/elsewhere/a.rs");
    }
}
