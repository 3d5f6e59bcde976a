//! [`Ws`]: the engine's state — a workspace root, the filesystem confined to it, the
//! journal store and the commit lock's path — shared by the layers above the journal
//! and the filesystem (docs/architecture.md, "Layers"). The public handle
//! ([`crate::Journal`]) owns one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::PathError;
use crate::fs::{path, FileSystem, RelPath};
use crate::journal::Store;

/// Engine state shared by the batch protocol, recovery, the revision builder and the
/// verbs.
pub(crate) struct Ws {
    /// The canonical workspace root.
    pub root: PathBuf,
    /// The root as the user gave it, when that is another name for it (a symlinked
    /// alias): absolute plan paths under it are inside the root too.
    pub given_root: Option<PathBuf>,
    /// The filesystem confined to `root`.
    pub fs: Arc<dyn FileSystem>,
    /// The journal.
    pub store: Store,
    /// `<state dir>/commit.lock`.
    pub lock_path: PathBuf,
    /// The mode of a file a plan creates without a `mode`: `0o666 & !umask`, the umask
    /// read once when the journal is opened ([`umask`]).
    pub new_file_mode: u32,
    /// What stops a batch early, and marks where dying would leave files half-written
    /// ([`crate::OpenOptions::interrupt`]).
    pub interrupt: Option<Arc<crate::Interrupt>>,
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
    /// Whether [`crate::Interrupt::request`] was called on this handle's interrupt.
    pub fn interrupt_requested(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.requested())
    }

    /// Mark a batch's span (intent to durable completion) or a recovery pass as one a
    /// process should not die in ([`crate::Interrupt::guarding`]); `None` without an
    /// interrupt.
    pub fn guard(&self) -> Option<crate::interrupt::Guard> {
        self.interrupt.as_ref().map(|i| i.guard())
    }

    /// [`Ws::guard`] for a batch ([`crate::Interrupt::batch_began`]).
    pub fn batch_guard(&self) -> Option<crate::interrupt::Guard> {
        self.interrupt.as_ref().map(|i| i.batch_guard())
    }

    /// The absolute path of `rel` under the root, for messages.
    pub fn abs(&self, rel: &RelPath) -> PathBuf {
        rel.under(&self.root)
    }

    /// `Ok` unless the journal was opened read-only (it is on a read-only
    /// filesystem): then [`crate::Error::ReadOnly`], before anything is written.
    pub fn writable(&self) -> crate::Result<()> {
        if self.store.is_read_only() {
            return Err(crate::Error::ReadOnly {
                path: self.state_dir().join("journal.redb"),
                what: "this command writes to it",
            });
        }
        Ok(())
    }

    /// The state directory (`.ultra-edit/`), which holds the journal and the lock
    /// file: the parent of [`Ws::lock_path`].
    pub fn state_dir(&self) -> &Path {
        self.lock_path.parent().unwrap_or(&self.root)
    }

    /// `raw`, a plan's path, as a root-relative path ([`path::normalize`]): relative
    /// to the root, or absolute under the canonical root or the root as given.
    pub fn normalize(&self, raw: &str) -> Result<RelPath, PathError> {
        let mut roots: Vec<&Path> = vec![&self.root];
        roots.extend(self.given_root.as_deref());
        path::normalize(&roots, raw)
    }
}
