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

impl Hooked {
    /// A handle on `root`'s journal through this backend, with default options
    /// otherwise.
    pub fn open_journal(self, root: &Path) -> ultra_edit::Journal {
        ultra_edit::Journal::open_with(
            root,
            ultra_edit::OpenOptions::default().with_journal_backend(Box::new(self)),
        )
        .unwrap()
    }
}

/// A handle on `root`'s journal whose background completion waits at its first
/// journal sync until the returned gate is opened ([`Gate::set`]).
///
/// The sync, not the first write: redb writes a commit's header under its exclusive
/// header lock, a byte-range lock of the open file description, which every other
/// handle's read transaction takes shared — also another handle in this process. A gate
/// at that write would stall the test's own reads behind it (until the gate's 10 s
/// timeout), which happened whenever the completion's thread reached the header write
/// before the test's thread read. redb's first sync of a commit comes after that write
/// and outside the lock; at it the commit is not yet visible (the previous commit is
/// still the primary), and the completion's thread still holds the commit lock.
pub fn journal_with_completion_held(root: &Path) -> (ultra_edit::Journal, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let held = gate.clone();
    let backend = Hooked::on_journal_of(root, move |op| {
        if op == BackendOp::Sync && std::thread::current().name() == Some(COMPLETION_THREAD) {
            held.pass();
        }
        Ok(())
    });
    (backend.open_journal(root), gate)
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

/// The name the library gives the thread that writes a batch's completion in the
/// background (src/journal/pending.rs): a hook tells the completion's journal writes
/// from the caller's by it.
pub const COMPLETION_THREAD: &str = "ue-completion";

/// A gate a hook can hold the completion's thread at ([`Gate::pass`]) until the test
/// opens it.
#[derive(Default)]
pub struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    /// Open or close the gate.
    pub fn set(&self, open: bool) {
        *self.open.lock().unwrap() = open;
        self.opened.notify_all();
    }
    /// Wait until open, at most 10 s (a test that forgot to open it fails, not hangs).
    pub fn pass(&self) {
        let open = self.open.lock().unwrap();
        let (open, _) = self
            .opened
            .wait_timeout_while(open, std::time::Duration::from_secs(10), |o| !*o)
            .unwrap();
        assert!(*open, "the gate was never opened");
    }
}
