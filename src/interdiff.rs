//! Interdiff: what revision `to` of a transaction changed relative to revision `from`
//! (like `jj interdiff` / `jj evolog -p`, or `git range-diff` for one change): per
//! file, the diff from `from`'s candidate to `to`'s candidate. A revision's own diff
//! is always the whole change against the snapshot; an interdiff is what a reader
//! iterating on a change wants to read next.
//!
//! After a rebase (the snapshot moved between the two revisions), the older side is
//! the older revision's change merged onto the newer snapshot, so the interdiff shows
//! what the newer revision itself changed, not what the disk did meanwhile.

use serde::{Deserialize, Serialize};

use crate::conflicts::DISK_LABELS;
use crate::edit::{self, CandidateDiff};
use crate::error::Result;
use crate::fs::RelPath;
use crate::journal::records::{FileRevision, FileState};
use crate::tx::Preview;
use crate::workspace::Journal;

/// What revision `to` changed relative to revision `from` ([`Journal::interdiff`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interdiff {
    /// Transaction id.
    pub tx: u64,
    /// The older side.
    pub from: u32,
    /// The newer side.
    pub to: u32,
    /// The files whose candidate differs between the two, sorted by path.
    pub files: Vec<InterdiffFile>,
    /// Sum of the files' added lines.
    pub lines_added: usize,
    /// Sum of the files' removed lines.
    pub lines_removed: usize,
}

/// One file of an [`Interdiff`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterdiffFile {
    /// Path relative to the root.
    pub path: String,
    /// The file in revision `from` (its candidate; its snapshot when `from` leaves it
    /// unchanged; replayed on `to`'s snapshot when [`InterdiffFile::rebased`]).
    pub from: FileState,
    /// The file in revision `to`, likewise.
    pub to: FileState,
    /// Diff `from` → `to`: unified text with git's headers (mode lines included) and
    /// line counts, as a revision's diff.
    pub diff: CandidateDiff,
    /// True when the file's snapshot moved between the two revisions (a rebase onto
    /// the disk) and `from` is revision `from`'s change merged onto revision `to`'s
    /// snapshot, as a rebase merges it: the diff then shows only what revision `to`
    /// changed, never the disk's change. False when the snapshot did not move, or the
    /// merge conflicts (`from` is then revision `from`'s candidate as recorded).
    pub rebased: bool,
}

impl Journal {
    /// The interdiff of `tx` from revision `from` to revision `to` (either order; `from`
    /// is shown as the old side).
    ///
    /// A file that one revision leaves unchanged is taken at its snapshot there, as
    /// the other revision recorded it (the disk when the file joined the transaction).
    ///
    /// Errors: those of [`Journal::show`] ([`crate::Error::UnknownTx`],
    /// [`crate::Error::UnknownRevision`], a pruned tx), and reading blobs.
    pub fn interdiff(&self, tx: impl Into<crate::TxRef>, from: u32, to: u32) -> Result<Interdiff> {
        let tx = self.tx_number(tx)?;
        let old = self.show(tx, Some(from))?;
        let new = self.show(tx, Some(to))?;
        let mut paths: Vec<&str> = old
            .files
            .iter()
            .chain(&new.files)
            .map(|f| f.path.as_str())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let mut files = Vec::new();
        let bytes = |s: &FileState| -> Result<Option<Vec<u8>>> {
            match s.hash() {
                Some(h) => Ok(Some(self.blob(&h)?.unwrap_or_default())),
                None => Ok(None),
            }
        };
        for path in paths {
            let (a, b) = (side(&old, &new, path), side(&new, &old, path));
            let (Some(mut a), Some(b)) = (a, b) else {
                continue;
            };
            let mut a_bytes = None;
            // The disk moved between the two (a rebase): `from`'s change replayed on
            // `to`'s snapshot, so the disk's change is not shown as the revision's.
            let mut rebased = false;
            if let Some((base, disk)) = moved_snapshot(&old, &new, path) {
                let (base_bytes, disk_bytes) = (bytes(&base)?, bytes(&disk)?);
                let ours = bytes(&a)?;
                if let Ok(rel) = RelPath::parse(path) {
                    let (state, merged, conflict) = crate::rebase::merge_file(
                        &rel,
                        (&base, base_bytes.as_deref()),
                        (&a, ours.as_deref()),
                        (&disk, disk_bytes.as_deref()),
                        &DISK_LABELS,
                    );
                    if conflict.is_none() {
                        (a, a_bytes, rebased) = (state, Some(merged), true);
                    }
                }
                if !rebased {
                    a_bytes = Some(ours);
                }
            }
            if a == b {
                continue;
            }
            // Two large blobs are diffed from the journal's chunks around where they
            // differ (`Reader::blob_window`, as a rollback's diff): neither is read
            // whole. Where a window cannot stand for the whole, both are read.
            let windowed = match (&a_bytes, a.hash(), b.hash()) {
                (None, Some(ha), Some(hb)) => self
                    .ws
                    .store
                    .read()?
                    .blob_window(&ha, &hb)?
                    .and_then(|w| edit::window_diff(path, &w.as_diff_window())),
                _ => None,
            };
            let diff = match windowed {
                Some(diff) => diff,
                None => {
                    let a_bytes = match a_bytes {
                        Some(loaded) => loaded,
                        None => bytes(&a)?,
                    };
                    let b_bytes = bytes(&b)?;
                    edit::candidate_diff(path, a_bytes.as_deref(), b_bytes.as_deref())
                }
            };
            let diff = crate::revision::with_mode_lines(diff, &a, &b);
            files.push(InterdiffFile {
                path: path.to_string(),
                from: a,
                to: b,
                diff,
                rebased,
            });
        }
        Ok(Interdiff {
            tx,
            from,
            to,
            lines_added: files.iter().map(|f| f.diff.lines_added).sum(),
            lines_removed: files.iter().map(|f| f.diff.lines_removed).sum(),
            files,
        })
    }
}

/// The snapshots of `path` in `from` and in `to` when both revisions record the file
/// and its snapshot's bytes or mode differ between them (the disk moved: a rebase).
fn moved_snapshot(from: &Preview, to: &Preview, path: &str) -> Option<(FileState, FileState)> {
    let find = |p: &Preview| p.files.iter().find(|f| f.path == path).map(|f| f.snapshot);
    let (a, b) = (find(from)?, find(to)?);
    // The bytes or the mode moved; a record that differs only in what it noted (an
    // owner, xattrs) is the same disk.
    (a.hash() != b.hash() || a.mode() != b.mode()).then_some((a, b))
}

/// The state of `path` in revision `this`: its candidate, or (not in `this`) its
/// snapshot as `other` recorded it; `None` if neither has the file.
fn side(this: &Preview, other: &Preview, path: &str) -> Option<FileState> {
    let find =
        |p: &Preview| -> Option<FileRevision> { p.files.iter().find(|f| f.path == path).cloned() };
    match find(this) {
        Some(f) => Some(f.candidate),
        None => find(other).map(|f| f.snapshot),
    }
}
