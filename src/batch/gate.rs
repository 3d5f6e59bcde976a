//! The commit gate (docs/design.md, "Lifecycle" › 3. Commit gate): checks made under the
//! commit lock, before the intent.

use std::collections::BTreeSet;

use crate::engine::Ws;
use crate::error::{IoContext, Result};
use crate::fs::{snapshot, EntryKind, RelPath};
use crate::journal::records::{BatchFile, FileState};

/// Paths whose disk state (existence, blake3, mode) differs from `expected`, sorted.
/// Reading each path runs the on-disk path-safety check again (the gate's "path safety
/// under the lock"); a refused path is an error.
pub(crate) fn stale_paths<'a>(
    ws: &Ws,
    expected: impl IntoIterator<Item = (&'a RelPath, &'a FileState)>,
) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (rel, want) in expected {
        let (found, _) = snapshot::read_state(ws.fs.as_ref(), &ws.root, rel)?;
        if found != *want {
            stale.push(rel.to_string());
        }
    }
    stale.sort();
    Ok(stale)
}

/// Directories that must be created for the files a batch writes, parents first.
pub(crate) fn dirs_to_create(ws: &Ws, files: &[BatchFile]) -> Result<Vec<RelPath>> {
    let mut missing = BTreeSet::new();
    for f in files.iter().filter(|f| f.post.exists()) {
        missing.extend(missing_parents(ws, &f.path)?);
    }
    let mut dirs: Vec<RelPath> = missing.into_iter().collect();
    dirs.sort_by_key(|d| (d.components().count(), d.clone()));
    Ok(dirs)
}

/// The directories above `rel` that do not exist, outermost first.
pub(crate) fn missing_parents(ws: &Ws, rel: &RelPath) -> Result<Vec<RelPath>> {
    let mut missing = Vec::new();
    for dir in rel.ancestors() {
        if ws.fs.entry(&dir).ctx("lstat", ws.abs(&dir))? == EntryKind::Absent {
            missing.push(dir);
        }
    }
    Ok(missing)
}
