//! ApplyBatch: the on-disk application of a commit or a rollback (design brief,
//! "Commit protocol"; seed stages 3–4).
//!
//! - [`gate`]: freshness by blake3 under the lock, directories to create.
//! - [`protocol`]: intent → stage → commit point → install → dir sync → complete.
//! - [`drive`]: bring every file of a batch to one side (pre or post) by hash; shared by
//!   the error path of the protocol and by recovery.

pub(crate) mod drive;
pub(crate) mod gate;
pub(crate) mod protocol;

use std::path::{Path, PathBuf};

/// Name of the temp file of the `index`-th file of `batch`, in the target's directory.
/// Deterministic, so recovery finds it from the batch record; short, so a 255-byte file
/// name still leaves room.
pub(crate) fn temp_path(root: &Path, rel: &str, batch: u64, index: usize) -> PathBuf {
    let target = root.join(rel);
    let dir = target
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root.to_path_buf());
    dir.join(format!(".ue-{batch}-{index}.tmp"))
}

/// Parent directory of a root-relative path, as an absolute path.
pub(crate) fn parent_dir(root: &Path, rel: &str) -> PathBuf {
    match rel.rsplit_once('/') {
        Some((dir, _)) => root.join(dir),
        None => root.to_path_buf(),
    }
}
