//! [`Store`]: the redb database of one workspace, its schema migration and its backup.

use std::ops::Bound;
use std::path::{Path, PathBuf};

use redb::{ConcurrencyMode, ReadableDatabase, ReadableTable};

use super::pending::Pending;
use super::{migrations, Reader, Writer, EVENTS, META, SCHEMA_VERSION};
use crate::error::{Error, IoContext, JournalError, Result};
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};

/// The redb database of one workspace.
pub struct Store {
    db: Db,
    /// The journal file (None on a custom backend).
    path: Option<PathBuf>,
    /// Where the time of every write comes from ([`Store::set_clock`]).
    clock: Arc<dyn Clock>,
    /// A batch's completion written in the background, which every access waits for
    /// ([`Pending`]).
    pending: Pending,
}

/// The journal opened for reading and writing, or, on a read-only filesystem, for
/// reading only.
enum Db {
    Rw(redb::Database),
    Ro(redb::ReadOnlyDatabase),
    /// A journal a crashed writer left unclean, repaired in memory ([`MemOverlay`]):
    /// read only, like `Ro`.
    Repaired(redb::Database),
}

/// Whether `path`'s filesystem is mounted read-only (`statvfs`, `ST_RDONLY`).
pub fn on_read_only_media(path: &Path) -> bool {
    rustix::fs::statvfs(path)
        .is_ok_and(|s| s.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY))
}

impl Store {
    /// Open (and with `create`, create) the journal file, then bring its schema to
    /// [`SCHEMA_VERSION`]. A newer schema is refused with
    /// [`JournalError::SchemaTooNew`] before anything is written.
    ///
    /// The version is first read through a read-only open, so a refused (newer) journal
    /// is not even opened for writing, and an older one is backed up byte for byte
    /// before redb opens it for writing. (A file that needs redb's crash repair cannot
    /// be opened read-only; it is then repaired by the read-write open and checked
    /// after.)
    ///
    /// On a read-only filesystem the journal is opened read-only
    /// ([`Store::is_read_only`]): reads work, every write is refused with
    /// [`Error::ReadOnly`], and nothing is written or synced.
    pub fn open(path: &Path, create: bool) -> Result<Store> {
        if on_read_only_media(path.parent().unwrap_or(path)) {
            return Self::open_read_only(path, create);
        }
        let builder = Self::builder();
        let mut backed_up = false;
        if path.is_file() && std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) > 0 {
            if let Ok(ro) = builder.open_read_only(path) {
                let found = version_of(&ro.begin_read()?)?;
                drop(ro);
                if found > SCHEMA_VERSION {
                    return Err(JournalError::SchemaTooNew {
                        found,
                        supported: SCHEMA_VERSION,
                    }
                    .into());
                }
                if found > 0 && found < SCHEMA_VERSION {
                    backup(path, found)?;
                    backed_up = true;
                }
            }
        }
        let db = if create {
            builder.create(path)?
        } else {
            builder.open(path)?
        };
        let store = Store {
            db: Db::Rw(db),
            path: Some(path.to_path_buf()),
            clock: Arc::new(SystemClock),
            pending: Pending::default(),
        };
        store.migrate(!backed_up)?;
        Ok(store)
    }

    /// Open an existing journal for reading only, when nothing about it needs writing:
    /// it is of this version's schema, no batch is in flight (recovery would write),
    /// and redb needs no crash repair of the file. `None` when any of these does not
    /// hold (or the read-only open fails): open it with [`Store::open`] instead.
    ///
    /// Why: redb's read-write open of a MultiWriter file syncs when it opens and when
    /// it closes (5 syncs for an `ultra-edit log` process), its read-only open syncs
    /// nothing. In MultiWriter mode a read-only handle shares the file with writers in
    /// other processes and sees their commits as they land (redb `Builder::
    /// open_read_only`). Every write through the store is refused with
    /// [`Error::ReadOnly`]: the reading verbs (`log`, `show`, `journal dump`,
    /// `journal stats`, `journal verify`) write nothing.
    pub fn open_settled_for_reading(path: &Path) -> Option<Store> {
        if !path.is_file() {
            return None;
        }
        let db = Self::builder().open_read_only(path).ok()?;
        let txn = db.begin_read().ok()?;
        if version_of(&txn).ok()? != SCHEMA_VERSION {
            return None;
        }
        let settled = Reader { txn }.inflight().ok()?.is_empty();
        settled.then(|| Store {
            db: Db::Ro(db),
            path: Some(path.to_path_buf()),
            clock: Arc::new(SystemClock),
            pending: Pending::default(),
        })
    }

    /// The journal on a read-only filesystem: opened without modifying it, if it
    /// exists, is of this version's schema, and needs no crash repair by redb.
    fn open_read_only(path: &Path, create: bool) -> Result<Store> {
        let read_only = |what| Error::ReadOnly {
            path: path.to_path_buf(),
            what,
        };
        if create && !path.is_file() {
            return Err(read_only("the journal would have to be created there"));
        }
        let db = match Self::builder().open_read_only(path) {
            Ok(db) => Db::Ro(db),
            // A writer crashed (the batch it ran is what recovery would settle): redb
            // repairs such a file on open, which writes. Repair it in memory instead.
            Err(redb::DatabaseError::RepairAborted) => {
                let file = std::fs::File::open(path).ctx("open", path)?;
                Db::Repaired(redb::Builder::new().create_with_backend(MemOverlay::new(file)?)?)
            }
            Err(e) => return Err(e.into()),
        };
        let txn = match &db {
            Db::Ro(d) => d.begin_read()?,
            Db::Rw(d) | Db::Repaired(d) => d.begin_read()?,
        };
        let found = version_of(&txn)?;
        drop(txn);
        if found > SCHEMA_VERSION {
            return Err(JournalError::SchemaTooNew {
                found,
                supported: SCHEMA_VERSION,
            }
            .into());
        }
        if found < SCHEMA_VERSION {
            return Err(read_only(
                "the journal was written by an older version and must be migrated, which writes to it",
            ));
        }
        Ok(Store {
            db,
            path: Some(path.to_path_buf()),
            clock: Arc::new(SystemClock),
            pending: Pending::default(),
        })
    }

    /// Whether the journal was opened read-only (it is on a read-only filesystem).
    pub fn is_read_only(&self) -> bool {
        !matches!(self.db, Db::Rw(_))
    }

    /// The database for a write: [`Error::ReadOnly`] when opened read-only.
    fn rw(&self) -> Result<&redb::Database> {
        match &self.db {
            Db::Rw(db) => Ok(db),
            Db::Ro(_) | Db::Repaired(_) => Err(self.read_only()),
        }
    }

    fn read_only(&self) -> Error {
        Error::ReadOnly {
            path: self.path.clone().unwrap_or_default(),
            what: "this command writes to it",
        }
    }

    /// Open (or create, when empty) a journal on a redb storage backend instead of the
    /// file: the power-cut tests run the journal on a backend that drops unsynced writes.
    /// A backend that holds a half-made journal ([`half_made`]: a creation cut before
    /// redb wrote its magic number, so no history) is made empty and created anew: a
    /// backend has no name to move it aside to, and it holds nothing.
    pub fn open_backend(backend: Box<dyn redb::StorageBackend>) -> Result<Store> {
        let len = backend.len().map_err(redb::StorageError::from)?;
        let mut head = [0u8; REDB_MAGIC.len()];
        let n = head.len().min(usize::try_from(len).unwrap_or(head.len()));
        backend
            .read(0, &mut head[..n])
            .map_err(redb::StorageError::from)?;
        if half_made(&head[..n], len) {
            backend.set_len(0).map_err(redb::StorageError::from)?;
        }
        Self::with_db(
            Self::builder().create_with_backend(BoxedBackend(backend))?,
            None,
        )
    }

    fn builder() -> redb::Builder {
        let mut builder = redb::Builder::new();
        builder
            .set_concurrency_mode(ConcurrencyMode::MultiWriter)
            .set_cache_size(16 * 1024 * 1024);
        builder
    }

    fn with_db(db: redb::Database, path: Option<PathBuf>) -> Result<Store> {
        let store = Store {
            db: Db::Rw(db),
            path,
            clock: Arc::new(SystemClock),
            pending: Pending::default(),
        };
        store.migrate(true)?;
        Ok(store)
    }

    fn migrate(&self, may_back_up: bool) -> Result<()> {
        let db = self.rw()?;
        let found = version_of(&db.begin_read()?)?;
        if found > SCHEMA_VERSION {
            return Err(JournalError::SchemaTooNew {
                found,
                supported: SCHEMA_VERSION,
            }
            .into());
        }
        if found == SCHEMA_VERSION {
            return Ok(());
        }
        if found > 0 && may_back_up {
            if let Some(path) = &self.path {
                backup(path, found)?;
            }
        }
        let txn = db.begin_write()?;
        // Re-read inside the write txn: another process may have migrated meanwhile.
        let current = txn
            .open_table(META)?
            .get("schema_version")?
            .map(|v| v.value())
            .unwrap_or(0);
        for step in migrations::STEPS.iter().filter(|s| s.from >= current) {
            (step.run)(&txn)?;
        }
        txn.open_table(META)?
            .insert("schema_version", SCHEMA_VERSION)?;
        txn.commit()?;
        Ok(())
    }

    /// Compact the file (redb compaction), giving freed pages back to the filesystem.
    /// Returns false when redb could not compact now (another process is using the
    /// journal): nothing is lost, the pages are reused by later writes.
    pub fn compact(&mut self) -> Result<bool> {
        self.pending.wait();
        let err = self.read_only();
        let Db::Rw(db) = &mut self.db else {
            return Err(err);
        };
        match db.compact() {
            Ok(done) => Ok(done),
            Err(
                redb::CompactionError::TransactionInProgress
                | redb::CompactionError::PersistentSavepointExists
                | redb::CompactionError::EphemeralSavepointExists,
            ) => Ok(false),
            Err(e) => Err(JournalError::Storage(e.to_string()).into()),
        }
    }

    /// The journal file's size in bytes (None on a custom backend).
    pub fn file_size(&self) -> Option<u64> {
        self.path
            .as_ref()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
    }

    /// Bytes in the pages redb has allocated: the used part of the journal file, which
    /// itself grows in jumps as redb extends its regions (`None` when opened
    /// read-only). Reads redb's statistics in a write transaction that is aborted:
    /// nothing is written or synced.
    pub fn allocated_bytes(&self) -> Result<Option<u64>> {
        self.pending.wait();
        let Db::Rw(db) = &self.db else {
            return Ok(None);
        };
        let txn = db.begin_write()?;
        let stats = txn.stats()?;
        let bytes = stats.allocated_pages() * stats.page_size() as u64;
        txn.abort()?;
        Ok(Some(bytes))
    }

    /// The background write of this handle in flight, if any ([`Pending`]): the
    /// barrier every access passes, and where a batch's completion is started.
    pub(crate) fn pending(&self) -> &Pending {
        &self.pending
    }

    /// Take the time of every later write from `clock` (default: the system clock).
    pub fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
    }

    /// Now, by the store's clock (ms since the Unix epoch).
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The journal's identity: its nonce (schema v5) and the root it was made for, if
    /// recorded yet.
    pub fn identity(&self) -> Result<Identity> {
        let r = self.read()?;
        let t = r.txn.open_table(migrations::v0005_journal_id::IDENTITY)?;
        let nonce =
            t.get("nonce")?
                .map(|v| v.value().to_vec())
                .ok_or_else(|| JournalError::Missing {
                    what: "the journal's nonce (table identity)".into(),
                })?;
        let made_for = t.get("root")?.map(|v| {
            use std::os::unix::ffi::OsStrExt;
            PathBuf::from(std::ffi::OsStr::from_bytes(v.value()))
        });
        let state_dir = t.get("state_dir")?.and_then(|v| dev_ino(v.value()));
        Ok(Identity {
            nonce,
            made_for,
            state_dir,
        })
    }

    /// Record `root` as the root the journal was made for, unless one is recorded:
    /// the first writable open of a journal does it. With `state_dir` (the state
    /// directory's device and inode, [`Identity::state_dir`]), record it too when the
    /// recorded root is `root` and another (or none) is recorded: a journal made by an
    /// earlier version gets it on its first writable open at its own root, and a backup
    /// restored in place (a new directory) on its first one after. Returns the recorded
    /// root. One write transaction; none when there is nothing to record.
    pub fn record_root(&self, root: &Path, state_dir: Option<(u64, u64)>) -> Result<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let txn = self.rw()?.begin_write()?;
        let recorded = {
            let mut t = txn.open_table(migrations::v0005_journal_id::IDENTITY)?;
            let existing = t.get("root")?.map(|v| v.value().to_vec());
            let recorded = match existing {
                Some(bytes) => PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)),
                None => {
                    t.insert("root", root.as_os_str().as_bytes())?;
                    root.to_path_buf()
                }
            };
            let stored = t.get("state_dir")?.and_then(|v| dev_ino(v.value()));
            if let (Some((dev, ino)), true) = (state_dir, recorded == root && stored != state_dir) {
                let mut v = dev.to_le_bytes().to_vec();
                v.extend_from_slice(&ino.to_le_bytes());
                t.insert("state_dir", v.as_slice())?;
            }
            recorded
        };
        txn.commit()?;
        Ok(recorded)
    }

    /// A consistent read view.
    pub fn read(&self) -> Result<Reader> {
        self.pending.wait();
        let txn = match &self.db {
            Db::Rw(db) | Db::Repaired(db) => db.begin_read()?,
            Db::Ro(db) => db.begin_read()?,
        };
        Ok(Reader { txn })
    }

    /// Run `f` in one write transaction and commit it durably (`Durability::Immediate`,
    /// redb's default). If `f` fails nothing is written.
    pub fn write<T>(&self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.pending.wait();
        let txn = self.rw()?.begin_write()?;
        let next_seq = {
            let events = txn.open_table(EVENTS)?;
            let last = events.last()?.map(|(k, _)| k.value());
            last.unwrap_or(0) + 1
        };
        let mut w = Writer {
            txn,
            next_seq,
            now: self.clock.now_ms(),
            last_layout: None,
        };
        let out = super::pending::in_write(|| f(&mut w))?;
        // With `failpoints`: `journal::commit=return(28)` fails this write as a full
        // disk would, before anything of it is durable.
        #[cfg(feature = "failpoints")]
        fail::fail_point!("journal::commit", |errno: Option<String>| {
            Err(JournalError::Storage(format!(
                "journal write failed: {}",
                crate::failpoint::injected_error(errno)
            ))
            .into())
        });
        w.txn.commit()?;
        Ok(out)
    }

    /// Run `f` in a write transaction and then abort it: what `f` returns, with nothing
    /// of it recorded (`journal gc --dry-run`).
    pub fn write_dry_run<T>(&self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.pending.wait();
        let txn = self.rw()?.begin_write()?;
        let mut w = Writer {
            txn,
            next_seq: 0,
            now: self.clock.now_ms(),
            last_layout: None,
        };
        let out = super::pending::in_write(|| f(&mut w))?;
        w.txn.abort()?;
        Ok(out)
    }
}

/// A journal's identity (schema v5; `migrations/v0005_journal_id.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// 16 random bytes drawn when the journal got its identity.
    pub nonce: Vec<u8>,
    /// The canonical root the journal was made for (its first writable open).
    pub made_for: Option<PathBuf>,
    /// The state directory's device and inode (`st_dev`, `st_ino`) recorded at that
    /// root: a move (`mv`, within one filesystem) keeps them, a copy does not. `None`
    /// for a journal not yet opened writable at its root by a version that records it.
    pub state_dir: Option<(u64, u64)>,
}

/// The (device, inode) of a recorded `state_dir` value (16 bytes, little-endian).
fn dev_ino(v: &[u8]) -> Option<(u64, u64)> {
    let dev = u64::from_le_bytes(v.get(..8)?.try_into().ok()?);
    let ino = u64::from_le_bytes(v.get(8..16)?.try_into().ok()?);
    Some((dev, ino))
}

/// The schema version recorded in `meta` (0 for a journal without tables).
fn version_of(txn: &redb::ReadTransaction) -> Result<u64> {
    match txn.open_table(META) {
        Ok(t) => Ok(t.get("schema_version")?.map(|v| v.value()).unwrap_or(0)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Copy the journal file to `journal.redb.v<version>.bak` and fsync the copy.
fn backup(path: &Path, version: u64) -> Result<()> {
    let backup = path.with_extension(format!("redb.v{version}.bak"));
    std::fs::copy(path, &backup).ctx("back up journal to", &backup)?;
    let f = std::fs::File::open(&backup).ctx("open", &backup)?;
    if let Some(dir) = backup.parent() {
        crate::fs::state_files::own_like_state_dir(dir, &f, &backup)?;
    }
    f.sync_all().ctx("fsync", &backup)?;
    Ok(())
}

/// The journal file as it is on disk, with every write kept in memory, page by page:
/// redb can repair (in memory) a file that a crashed writer left unclean, on a
/// filesystem where nothing may be written. Nothing reaches the disk; `sync_data` is a
/// no-op.
#[derive(Debug)]
struct MemOverlay {
    file: std::fs::File,
    len: std::sync::Mutex<u64>,
    pages: std::sync::Mutex<std::collections::HashMap<u64, Box<[u8]>>>,
}

const OVERLAY_PAGE: u64 = 4096;

impl MemOverlay {
    fn new(file: std::fs::File) -> Result<MemOverlay> {
        let len = file.metadata().ctx("stat", "journal.redb")?.len();
        Ok(MemOverlay {
            file,
            len: std::sync::Mutex::new(len),
            pages: Default::default(),
        })
    }

    /// Page `n` as the file has it (zeros past its end).
    fn file_page(&self, n: u64) -> std::io::Result<Box<[u8]>> {
        use std::os::unix::fs::FileExt;
        let mut page = vec![0u8; OVERLAY_PAGE as usize].into_boxed_slice();
        let mut done = 0;
        while done < page.len() {
            match self
                .file
                .read_at(&mut page[done..], n * OVERLAY_PAGE + done as u64)?
            {
                0 => break,
                k => done += k,
            }
        }
        Ok(page)
    }

    fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The first bytes of every redb file whose creation finished (redb 4.6's
/// `MAGICNUMBER`).
const REDB_MAGIC: [u8; 9] = [b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// Whether a journal of `len` bytes whose first bytes are `head` (up to 9) is
/// half-made: its creation was cut before it finished. redb writes its magic number
/// last, once the rest of the new file's header is durable (redb 4.6,
/// `TransactionalMemory::new`: "write the magic number only after the data structure is
/// initialized and written to disk"), so a non-empty file whose first 9 bytes are all
/// zero never held a commit: it holds no history. Any other first bytes that are not
/// the magic number are a damaged journal, which is never taken for a half-made one.
pub(crate) fn half_made(head: &[u8], len: u64) -> bool {
    len > 0 && head.iter().all(|b| *b == 0)
}

/// [`half_made`] of the file at `path`; `false` when it cannot be read (an open will
/// say why).
pub(crate) fn file_is_half_made(path: &Path) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = Vec::with_capacity(REDB_MAGIC.len());
    if f.by_ref()
        .take(REDB_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    half_made(&head, len)
}

impl redb::StorageBackend for MemOverlay {
    fn len(&self) -> Result<u64, std::io::Error> {
        Ok(*Self::lock(&self.len))
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        let pages = Self::lock(&self.pages);
        let mut at = 0usize;
        while at < out.len() {
            let pos = offset + at as u64;
            let (n, within) = (pos / OVERLAY_PAGE, (pos % OVERLAY_PAGE) as usize);
            let take = (OVERLAY_PAGE as usize - within).min(out.len() - at);
            match pages.get(&n) {
                Some(p) => out[at..at + take].copy_from_slice(&p[within..within + take]),
                None => {
                    out[at..at + take].copy_from_slice(&self.file_page(n)?[within..within + take])
                }
            }
            at += take;
        }
        Ok(())
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        *Self::lock(&self.len) = len;
        Ok(())
    }
    fn sync_data(&self) -> Result<(), std::io::Error> {
        Ok(())
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        let mut pages = Self::lock(&self.pages);
        let mut at = 0usize;
        while at < data.len() {
            let pos = offset + at as u64;
            let (n, within) = (pos / OVERLAY_PAGE, (pos % OVERLAY_PAGE) as usize);
            let take = (OVERLAY_PAGE as usize - within).min(data.len() - at);
            let page = match pages.entry(n) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => e.insert(self.file_page(n)?),
            };
            page[within..within + take].copy_from_slice(&data[at..at + take]);
            at += take;
        }
        let mut len = Self::lock(&self.len);
        *len = (*len).max(offset + data.len() as u64);
        Ok(())
    }
}

/// A boxed backend is a backend (redb implements the trait for concrete types only).
#[derive(Debug)]
struct BoxedBackend(Box<dyn redb::StorageBackend>);

impl redb::StorageBackend for BoxedBackend {
    fn len(&self) -> Result<u64, std::io::Error> {
        self.0.len()
    }
    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), std::io::Error> {
        self.0.read(offset, out)
    }
    fn set_len(&self, len: u64) -> Result<(), std::io::Error> {
        self.0.set_len(len)
    }
    fn sync_data(&self) -> Result<(), std::io::Error> {
        self.0.sync_data()
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), std::io::Error> {
        self.0.write(offset, data)
    }
    fn close(&self) -> Result<(), std::io::Error> {
        self.0.close()
    }
    // MultiWriter mode needs the byte-range locks; the defaults say "unsupported".
    fn try_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, redb::BackendError> {
        self.0.try_lock_range(s, e)
    }
    fn try_lock_shared_range(
        &self,
        s: Bound<u64>,
        e: Bound<u64>,
    ) -> Result<bool, redb::BackendError> {
        self.0.try_lock_shared_range(s, e)
    }
    fn lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), redb::BackendError> {
        self.0.lock_range(s, e)
    }
    fn lock_shared_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), redb::BackendError> {
        self.0.lock_shared_range(s, e)
    }
    fn unlock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<(), redb::BackendError> {
        self.0.unlock_range(s, e)
    }
    fn query_lock_range(&self, s: Bound<u64>, e: Bound<u64>) -> Result<bool, redb::BackendError> {
        self.0.query_lock_range(s, e)
    }
}
