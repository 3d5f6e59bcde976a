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
    /// The mode of a file a plan creates without a `mode`: `0o666 & !umask`, the umask
    /// read once when the journal is opened ([`umask`]).
    pub new_file_mode: u32,
}

/// The process's umask, read without changing it: the `Umask:` line of
/// `/proc/self/status` (Linux ≥ 4.7; proc(5)). Setting the umask to read it back, as
/// `umask(2)` alone can, would race with other threads of an embedder that create
/// files. Where the line is missing, 0o022 (the usual default).
pub(crate) fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

impl Ws {
    /// The absolute path of `rel` under the root, for messages.
    pub fn abs(&self, rel: &RelPath) -> PathBuf {
        rel.under(&self.root)
    }
}
