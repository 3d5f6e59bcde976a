//! The real journal file under redb, with a hook run before each mutating operation:
//! the tests count syncs through it, or make the disk fill up at the n-th write.

use std::fmt;
use std::io;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use redb::backends::FileBackend;
use redb::{BackendError, StorageBackend};

/// A mutating operation of the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendOp {
    Write,
    SetLen,
    Sync,
}

type Hook = Arc<dyn Fn(BackendOp) -> io::Result<()> + Send + Sync>;

/// `FileBackend` on `.ultra-edit/journal.redb`, running `hook` before every write,
/// `set_len` and `sync_data` (an `Err` from the hook fails the operation).
pub struct Hooked {
    inner: FileBackend,
    hook: Hook,
}

impl Hooked {
    pub fn on_journal_of(
        root: &Path,
        hook: impl Fn(BackendOp) -> io::Result<()> + Send + Sync + 'static,
    ) -> Self {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(root.join(".ultra-edit/journal.redb"))
            .unwrap();
        Hooked {
            inner: FileBackend::new(file).unwrap(),
            hook: Arc::new(hook),
        }
    }
}

impl fmt::Debug for Hooked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooked")
            .field("inner", &self.inner)
            .finish()
    }
}

impl StorageBackend for Hooked {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read(offset, out)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        (self.hook)(BackendOp::SetLen)?;
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        (self.hook)(BackendOp::Sync)?;
        self.inner.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        (self.hook)(BackendOp::Write)?;
        self.inner.write(offset, data)
    }
    fn close(&self) -> io::Result<()> {
        self.inner.close()
    }
    // MultiWriter mode needs the byte-range locks; the defaults say "unsupported".
    fn try_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_range(s, e)
    }
    fn try_lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.try_lock_shared_range(s, e)
    }
    fn lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_range(s, e)
    }
    fn lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.lock_shared_range(s, e)
    }
    fn unlock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), BackendError> {
        self.inner.unlock_range(s, e)
    }
    fn query_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, BackendError> {
        self.inner.query_lock_range(s, e)
    }
}
