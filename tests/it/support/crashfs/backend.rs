//! [`CrashBackend`]: the redb storage backend whose unsynced writes a power cut drops.

use std::io;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use redb::BackendError;

use super::*;

#[derive(Debug, Default)]
struct Bytes {
    volatile: Vec<u8>,
    durable: Vec<u8>,
}

/// A byte-range lock held by one backend instance: `[lo, hi)`, shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RangeLock {
    owner: u64,
    lo: u128,
    hi: u128,
    shared: bool,
}

fn lock_bounds(start: Bound<u64>, end: Bound<u64>) -> (u128, u128) {
    let lo = match start {
        Bound::Unbounded => 0,
        Bound::Included(s) => s as u128,
        Bound::Excluded(s) => s as u128 + 1,
    };
    let hi = match end {
        Bound::Unbounded => u128::MAX,
        Bound::Included(e) => e as u128 + 1,
        Bound::Excluded(e) => e as u128,
    };
    (lo, hi)
}

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A redb [`StorageBackend`](redb::StorageBackend) whose unsynced writes are lost in a
/// power cut: `write`/`set_len` change the volatile bytes, `sync_data` copies them to the
/// durable bytes and counts as one sync on the shared [`PowerCut`]. A clone shares the
/// bytes (keep one to take the image after handing the other to redb) but is another
/// backend *instance* for byte-range locks, which it implements fully (redb's
/// `ConcurrencyMode::MultiWriter`, the journal's mode, refuses a backend without them):
/// locks of one instance conflict with those of the other instances on the same bytes.
#[derive(Debug)]
pub struct CrashBackend {
    power: Arc<PowerCut>,
    bytes: Arc<Mutex<Bytes>>,
    locks: Arc<Mutex<Vec<RangeLock>>>,
    owner: u64,
}

impl Clone for CrashBackend {
    fn clone(&self) -> Self {
        CrashBackend {
            power: self.power.clone(),
            bytes: self.bytes.clone(),
            locks: self.locks.clone(),
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl CrashBackend {
    /// An empty backend on the controller `power`.
    pub fn new(power: Arc<PowerCut>) -> CrashBackend {
        CrashBackend::with_bytes(power, Bytes::default())
    }

    fn with_bytes(power: Arc<PowerCut>, bytes: Bytes) -> CrashBackend {
        CrashBackend {
            power,
            bytes: Arc::new(Mutex::new(bytes)),
            locks: Arc::default(),
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }

    fn bytes(&self) -> MutexGuard<'_, Bytes> {
        self.bytes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn locks(&self) -> MutexGuard<'_, Vec<RangeLock>> {
        self.locks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What survives a power cut now: a new backend holding the durable bytes (and no
    /// locks: the machine rebooted), on the controller `power` (normally the image
    /// filesystem's, [`CrashFs::power`]).
    pub fn durable_image_on(&self, power: Arc<PowerCut>) -> CrashBackend {
        let durable = self.bytes().durable.clone();
        CrashBackend::with_bytes(
            power,
            Bytes {
                volatile: durable.clone(),
                durable,
            },
        )
    }

    /// [`CrashBackend::durable_image_on`] a fresh controller.
    pub fn durable_image(&self) -> CrashBackend {
        self.durable_image_on(PowerCut::new())
    }

    /// Length of the durable bytes.
    pub fn durable_len(&self) -> usize {
        self.bytes().durable.len()
    }

    fn try_lock(&self, start: Bound<u64>, end: Bound<u64>, shared: bool) -> io::Result<bool> {
        self.power.alive()?;
        let (lo, hi) = lock_bounds(start, end);
        if lo >= hi {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty lock range",
            ));
        }
        let mut locks = self.locks();
        let conflict = locks
            .iter()
            .any(|l| l.owner != self.owner && l.lo < hi && lo < l.hi && !(l.shared && shared));
        if conflict {
            return Ok(false);
        }
        locks.push(RangeLock {
            owner: self.owner,
            lo,
            hi,
            shared,
        });
        Ok(true)
    }

    fn lock_waiting(&self, start: Bound<u64>, end: Bound<u64>, shared: bool) -> io::Result<()> {
        // Only one live instance takes locks in these tests; a conflict would be a test bug,
        // so wait a bounded time rather than hang.
        for _ in 0..5000 {
            if self.try_lock(start, end, shared)? {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "CrashBackend: lock conflict for 5 s",
        ))
    }
}

impl redb::StorageBackend for CrashBackend {
    fn len(&self) -> Result<u64, io::Error> {
        self.power.alive()?;
        Ok(self.bytes().volatile.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        self.power.alive()?;
        let b = self.bytes();
        let start = usize::try_from(offset).map_err(|_| errno(EINVAL))?;
        let end = start
            .checked_add(out.len())
            .filter(|&e| e <= b.volatile.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(&b.volatile[start..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        self.power.alive()?;
        let len = usize::try_from(len).map_err(|_| errno(EINVAL))?;
        self.bytes().volatile.resize(len, 0);
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        let mut b = self.bytes();
        self.power.sync(|| "journal sync_data".to_string())?;
        b.durable = b.volatile.clone();
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.power.alive()?;
        let mut b = self.bytes();
        let start = usize::try_from(offset).map_err(|_| errno(EINVAL))?;
        let end = start + data.len();
        if end > b.volatile.len() {
            b.volatile.resize(end, 0);
        }
        b.volatile[start..end].copy_from_slice(data);
        Ok(())
    }

    fn close(&self) -> Result<(), io::Error> {
        // A closed (or dead) instance holds no locks.
        self.locks().retain(|l| l.owner != self.owner);
        self.power.alive()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        Ok(self.try_lock(start, end, false)?)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        Ok(self.try_lock(start, end, true)?)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        Ok(self.lock_waiting(start, end, false)?)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        Ok(self.lock_waiting(start, end, true)?)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        let (lo, hi) = lock_bounds(start, end);
        let mut locks = self.locks();
        let at = locks
            .iter()
            .position(|l| l.owner == self.owner && l.lo == lo && l.hi == hi)
            .ok_or_else(|| {
                BackendError::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "CrashBackend: unlock of a range not locked",
                ))
            })?;
        locks.remove(at);
        Ok(())
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.power.alive()?;
        let (lo, hi) = lock_bounds(start, end);
        Ok(self
            .locks()
            .iter()
            .any(|l| l.owner != self.owner && l.lo < hi && lo < l.hi))
    }
}
