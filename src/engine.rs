//! [`Ws`]: the engine's state — a workspace root, the filesystem confined to it, the
//! journal store and the commit lock's path — shared by the layers above the journal
//! and the filesystem (docs/architecture.md, "Layers"). The public handle
//! ([`crate::Journal`]) owns one.

use std::path::PathBuf;
use std::sync::Arc;

use crate::fs::{FileSystem, RelPath};
use crate::journal::Store;

/// Engine state shared by the batch protocol, recovery, the revision builder and the
/// verbs.
pub(crate) struct Ws {
    /// The canonical workspace root.
    pub root: PathBuf,
    /// The filesystem confined to `root`.
    pub fs: Arc<dyn FileSystem>,
    /// The journal.
    pub store: Store,
    /// `<state dir>/commit.lock`.
    pub lock_path: PathBuf,
}

impl Ws {
    /// The absolute path of `rel` under the root, for messages.
    pub fn abs(&self, rel: &RelPath) -> PathBuf {
        rel.under(&self.root)
    }
}
