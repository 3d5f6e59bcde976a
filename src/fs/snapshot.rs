//! Reading the state of a workspace path: exists, blake3, size, mode (docs/design.md, "Lifecycle" › 1. Preview).

use std::path::Path;

use crate::error::{IoContext, Result};
use crate::fs::{path, EntryKind, FileSystem, RelPath};
use crate::journal::records::{FileMeta, FileState, Owner};

/// The state of `rel` on disk and its bytes (`None` when absent). The path is checked
/// with [`path::check_on_disk`] first, so a symlink or hard-linked file is refused.
/// `root` is the filesystem's root, for error messages only.
pub(crate) fn read_state(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
) -> Result<(FileState, Option<Vec<u8>>)> {
    path::check_on_disk(fs, root, rel, rel)?;
    match fs.entry(rel).ctx("lstat", rel.under(root))? {
        EntryKind::File { mode, uid, gid, .. } => {
            let bytes = fs.read(rel).ctx("read", rel.under(root))?;
            let meta = FileMeta {
                mode,
                owner: Some(Owner { uid, gid }),
            };
            Ok((FileState::with_meta(&bytes, meta), Some(bytes)))
        }
        _ => Ok((FileState::ABSENT, None)),
    }
}
