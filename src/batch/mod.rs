//! ApplyBatch: the on-disk application of a commit or a rollback (docs/design.md,
//! "Lifecycle" › 3. Commit gate and 4. Persistence; docs/commit-protocol.md).
//!
//! - [`gate`]: freshness by blake3 under the lock, directories to create.
//! - [`protocol`]: intent → stage → commit point → install → dir sync → complete.
//! - [`image`]: one image written from the journal's blob to a temp, streamed when
//!   large; shared by the staging and the drive.
//! - [`pool`]: the bounded thread pool the staging and the directory fsyncs run on.
//! - [`release`]: the install's held inodes freed on that pool, off the renames' thread.
//! - [`drive`]: bring every file of a batch to one side (pre or post) by hash; shared by
//!   the error path of the protocol and by recovery.

pub(crate) mod drive;
pub(crate) mod gate;
pub(crate) mod image;
pub(crate) mod machine;
pub(crate) mod pool;
pub(crate) mod protocol;
pub(crate) mod release;

#[cfg(test)]
mod completion_tests;

use crate::fs::RelPath;
use crate::journal::records::BatchRecord;

/// Name of the temp file of the `index`-th file of a batch, in the target's directory:
/// `.ue-<batch>-<index>-<nonce>.tmp`. Derived from the batch record, so recovery finds
/// it; the random nonce keeps it from naming any existing file; plans may not name
/// such files ([`crate::fs::path::normalize`]).
pub(crate) fn temp_path(rel: &RelPath, rec: &BatchRecord, index: usize) -> RelPath {
    rel.parent()
        .join(&format!(".ue-{}-{index}-{:016x}.tmp", rec.batch, rec.nonce))
}

/// A fresh random nonce for temp names (blake3 of time, pid and a counter).
pub(crate) fn new_nonce() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = blake3::Hasher::new();
    h.update(&t.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let mut out = [0u8; 8];
    out.copy_from_slice(&h.finalize().as_bytes()[..8]);
    u64::from_le_bytes(out)
}
