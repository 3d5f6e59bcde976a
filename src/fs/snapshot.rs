//! Reading the state of a workspace path: exists, blake3, size, mode (docs/design.md, "Lifecycle" › 1. Preview).

use std::path::Path;

use crate::error::{IoError, Result};
use crate::fs::{path, EntryKind, FileSystem, RelPath};
use crate::journal::records::{BlobHash, FileMeta, FileState, Owner, Xattrs};

/// The state of `rel` on disk and its bytes (`None` when absent). The path is checked
/// with [`path::check_on_disk`] first, so a symlink or hard-linked file is refused.
/// `root` is the filesystem's root, for error messages only. Also returns the blob of
/// the file's extended attributes ([`Xattrs::encode`]) when it has any, which a caller
/// that records the state stores (its hash is the state's `meta.xattrs`; a file with
/// none names [`Xattrs::empty_hash`], which needs no blob).
#[allow(clippy::type_complexity)]
pub(crate) fn read_state(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
) -> Result<(FileState, Option<Vec<u8>>, Option<Vec<u8>>)> {
    let kind = path::checked_entry(fs, root, rel, rel)?;
    // The absolute path is built only for an error (the gate reads every file twice a
    // commit: building it eagerly was 3 allocations a read).
    let at = |op: &'static str| {
        move |source: std::io::Error| IoError {
            op,
            path: rel.under(root),
            source,
        }
    };
    match kind {
        EntryKind::File { mode, uid, gid, .. } => {
            let (bytes, xattrs) = fs.read_with_xattrs(rel).map_err(at("read"))?;
            let (hash, blob) = if xattrs.0.is_empty() {
                (Xattrs::empty_hash(), None)
            } else {
                let blob = xattrs.encode();
                (BlobHash::of(&blob), Some(blob))
            };
            let meta = FileMeta {
                mode,
                owner: Some(Owner { uid, gid }),
                xattrs: Some(hash),
            };
            Ok((FileState::with_meta(&bytes, meta), Some(bytes), blob))
        }
        _ => Ok((FileState::ABSENT, None, None)),
    }
}
