//! The journal: a redb database at `<root>/.ultra-edit/journal.redb`.
//!
//! [`Store`] owns the database and gives typed access to its tables through [`Reader`]
//! (one read transaction) and [`Writer`] (one durable write transaction). Every write
//! transaction commits with `Durability::Immediate`: when [`Store::write`] returns, the
//! records are on disk. The database is opened in redb's `ConcurrencyMode::MultiWriter`
//! so other processes (an embedding server, `journal dump`, another agent's CLI) can
//! keep it open at the same time (design brief, "Journal").

pub(crate) mod blobs;
pub mod codec;
pub mod records;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;

use redb::{ConcurrencyMode, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::{Error, IoContext, JournalError, Result};
use records::*;

#[path = "../../migrations/mod.rs"]
mod migrations;
pub use migrations::SCHEMA_VERSION;

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const TXS: TableDefinition<u64, &[u8]> = TableDefinition::new("txs");
const REVISIONS: TableDefinition<(u64, u32), &[u8]> = TableDefinition::new("revisions");
const BATCHES: TableDefinition<u64, &[u8]> = TableDefinition::new("batches");
const INFLIGHT: TableDefinition<u64, ()> = TableDefinition::new("inflight");
const RECEIPTS: TableDefinition<u64, &[u8]> = TableDefinition::new("receipts");
const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");

/// What [`Writer::gc`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcCounts {
    /// Transactions whose revisions were dropped.
    pub txs_pruned: u64,
    /// Revision records dropped.
    pub revisions_dropped: u64,
    /// Blobs dropped.
    pub blobs_dropped: u64,
    /// Bytes of the blobs dropped.
    pub bytes_freed: u64,
    /// Open previews among the pruned transactions, which were aborted.
    pub previews_aborted: u64,
}

/// An event as stored (its seq is the key).
#[derive(Serialize, Deserialize)]
struct EventRecord {
    at_ms: u64,
    kind: EventKind,
}

/// The redb database of one workspace.
pub struct Store {
    db: redb::Database,
    /// The journal file (None on a custom backend).
    path: Option<std::path::PathBuf>,
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
    pub fn open(path: &Path, create: bool) -> Result<Store> {
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
            db,
            path: Some(path.to_path_buf()),
        };
        store.migrate(!backed_up)?;
        Ok(store)
    }

    /// Open (or create, when empty) a journal on a redb storage backend instead of the
    /// file: the power-cut tests run the journal on a backend that drops unsynced writes.
    pub fn open_backend(backend: Box<dyn redb::StorageBackend>) -> Result<Store> {
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

    fn with_db(db: redb::Database, path: Option<std::path::PathBuf>) -> Result<Store> {
        let store = Store { db, path };
        store.migrate(true)?;
        Ok(store)
    }

    fn migrate(&self, may_back_up: bool) -> Result<()> {
        let found = version_of(&self.db.begin_read()?)?;
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
        let txn = self.db.begin_write()?;
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
        match self.db.compact() {
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

    /// A consistent read view.
    pub fn read(&self) -> Result<Reader> {
        Ok(Reader {
            txn: self.db.begin_read()?,
        })
    }

    /// Run `f` in one write transaction and commit it durably (`Durability::Immediate`,
    /// redb's default). If `f` fails nothing is written.
    pub fn write<T>(&self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        let txn = self.db.begin_write()?;
        let next_seq = {
            let events = txn.open_table(EVENTS)?;
            let last = events.last()?.map(|(k, _)| k.value());
            last.unwrap_or(0) + 1
        };
        let mut w = Writer {
            txn,
            next_seq,
            now: now_ms(),
        };
        let out = f(&mut w)?;
        // With `failpoints`: `journal::commit=return(28)` fails this write as a full
        // disk would, before anything of it is durable.
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
}

fn get_rec<K: redb::Key + 'static, T: DeserializeOwned>(
    table: &impl ReadableTable<K, &'static [u8]>,
    name: &'static str,
    key: K::SelfType<'_>,
) -> Result<Option<T>> {
    match table.get(key)? {
        Some(v) => Ok(Some(codec::decode(name, v.value())?)),
        None => Ok(None),
    }
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
    std::fs::File::open(&backup)
        .and_then(|f| f.sync_all())
        .ctx("fsync", &backup)?;
    Ok(())
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

/// A read transaction of the journal.
pub struct Reader {
    txn: redb::ReadTransaction,
}

impl Reader {
    /// A transaction record.
    pub fn tx(&self, tx: u64) -> Result<Option<TxRecord>> {
        get_rec(&self.txn.open_table(TXS)?, "txs", tx)
    }

    /// A transaction record, or [`Error::UnknownTx`].
    pub fn tx_required(&self, tx: u64) -> Result<TxRecord> {
        self.tx(tx)?.ok_or(Error::UnknownTx { tx })
    }

    /// A revision record.
    pub fn revision(&self, tx: u64, revision: u32) -> Result<Option<RevisionRecord>> {
        get_rec(
            &self.txn.open_table(REVISIONS)?,
            "revisions",
            (tx, revision),
        )
    }

    /// Revision `n` of `tx` (default: its latest), or [`Error::UnknownRevision`].
    pub fn revision_of(&self, tx: &TxRecord, n: Option<u32>) -> Result<RevisionRecord> {
        let latest = tx.revisions.saturating_sub(1);
        let revision = n.unwrap_or(latest);
        self.revision(tx.tx, revision)?
            .ok_or(Error::UnknownRevision {
                tx: tx.tx,
                revision,
                latest,
            })
    }

    /// A blob's bytes, checked against their key: bytes that do not hash to it are
    /// [`JournalError::Corrupt`], never handed out (a rollback must not restore damaged
    /// bytes under a good hash).
    pub fn blob(&self, hash: &BlobHash) -> Result<Option<Vec<u8>>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let Some(raw) = manifests.get(&hash.0)? else {
            return Ok(None);
        };
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        blobs::assemble(&chunks, hash, raw.value()).map(Some)
    }

    /// A blob's bytes, or [`JournalError::Missing`].
    pub fn blob_required(&self, hash: &BlobHash) -> Result<Vec<u8>> {
        self.blob(hash)?.ok_or_else(|| {
            JournalError::Missing {
                what: format!("blob {hash}"),
            }
            .into()
        })
    }

    /// A batch record.
    pub fn batch(&self, batch: u64) -> Result<Option<BatchRecord>> {
        get_rec(&self.txn.open_table(BATCHES)?, "batches", batch)
    }

    /// A receipt.
    pub fn receipt(&self, batch: u64) -> Result<Option<Receipt>> {
        get_rec(&self.txn.open_table(RECEIPTS)?, "receipts", batch)
    }

    /// Ids of non-terminal batches, ascending.
    pub fn inflight(&self) -> Result<Vec<u64>> {
        let t = self.txn.open_table(INFLIGHT)?;
        let mut out = Vec::new();
        for item in t.iter()? {
            out.push(item?.0.value());
        }
        Ok(out)
    }

    /// Visit every blob in key order with its reassembled, hash-checked bytes (an
    /// `Err` for a blob that is damaged or misses a chunk), and the bytes its own
    /// manifest and new chunks occupy is not tracked here (see `journal stats`).
    pub fn scan_blobs(
        &self,
        mut f: impl FnMut(BlobHash, Result<Vec<u8>>) -> Result<()>,
    ) -> Result<()> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        for item in manifests.iter()? {
            let (k, v) = item?;
            let hash = BlobHash(*k.value());
            f(hash, blobs::assemble(&chunks, &hash, v.value()))?;
        }
        Ok(())
    }

    /// Bytes the blob store occupies: inline bytes plus every chunk once.
    pub fn stored_blob_bytes(&self) -> Result<u64> {
        let mut total = 0;
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        for item in manifests.iter()? {
            if let blobs::Manifest::Inline(b) = codec::decode("blob_manifests", item?.1.value())? {
                total += b.len() as u64;
            }
        }
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        for item in chunks.iter()? {
            total += item?.1.value().len() as u64;
        }
        Ok(total)
    }

    /// Visit every record of a `u64`-keyed table (`txs`, `batches`, `receipts`), decoded.
    fn scan_u64<T: DeserializeOwned>(
        &self,
        def: TableDefinition<u64, &[u8]>,
        name: &'static str,
        mut f: impl FnMut(u64, Result<T>) -> Result<()>,
    ) -> Result<()> {
        let t = self.txn.open_table(def)?;
        for item in t.iter()? {
            let (k, v) = item?;
            f(
                k.value(),
                codec::decode(name, v.value()).map_err(Into::into),
            )?;
        }
        Ok(())
    }

    /// Visit every tx record in id order; a record that does not decode is passed as Err.
    pub fn scan_txs(&self, f: impl FnMut(u64, Result<TxRecord>) -> Result<()>) -> Result<()> {
        self.scan_u64(TXS, "txs", f)
    }

    /// Visit every batch record in id order.
    pub fn scan_batches(
        &self,
        f: impl FnMut(u64, Result<BatchRecord>) -> Result<()>,
    ) -> Result<()> {
        self.scan_u64(BATCHES, "batches", f)
    }

    /// Visit every receipt in batch order.
    pub fn scan_receipts(&self, f: impl FnMut(u64, Result<Receipt>) -> Result<()>) -> Result<()> {
        self.scan_u64(RECEIPTS, "receipts", f)
    }

    /// Visit every revision record in (tx, revision) order.
    pub fn scan_revisions(
        &self,
        mut f: impl FnMut((u64, u32), Result<RevisionRecord>) -> Result<()>,
    ) -> Result<()> {
        let t = self.txn.open_table(REVISIONS)?;
        for item in t.iter()? {
            let (k, v) = item?;
            f(
                k.value(),
                codec::decode("revisions", v.value()).map_err(Into::into),
            )?;
        }
        Ok(())
    }

    /// Visit every raw event (seq, decoded or not) in order.
    pub fn scan_events(
        &self,
        mut f: impl FnMut(u64, Result<EventKind>) -> Result<()>,
    ) -> Result<()> {
        let t = self.txn.open_table(EVENTS)?;
        for item in t.iter()? {
            let (k, v) = item?;
            let rec: Result<EventRecord> = codec::decode("events", v.value()).map_err(Into::into);
            f(k.value(), rec.map(|r| r.kind))?;
        }
        Ok(())
    }

    /// Visit every tx, newest first; stop when `f` returns false.
    pub fn txs_newest_first(&self, mut f: impl FnMut(TxRecord) -> Result<bool>) -> Result<()> {
        let t = self.txn.open_table(TXS)?;
        for item in t.iter()?.rev() {
            let (_, v) = item?;
            if !f(codec::decode("txs", v.value())?)? {
                break;
            }
        }
        Ok(())
    }

    /// Visit every event from `from_seq` on, in order; stop when `f` returns false.
    pub fn events(&self, from_seq: u64, mut f: impl FnMut(Event) -> Result<bool>) -> Result<()> {
        let t = self.txn.open_table(EVENTS)?;
        for item in t.range(from_seq..)? {
            let (k, v) = item?;
            let rec: EventRecord = codec::decode("events", v.value())?;
            let ev = Event {
                seq: k.value(),
                at_ms: rec.at_ms,
                kind: rec.kind,
            };
            if !f(ev)? {
                break;
            }
        }
        Ok(())
    }
}

/// One write transaction of the journal. Every mutation appends its event.
pub struct Writer {
    txn: redb::WriteTransaction,
    next_seq: u64,
    now: u64,
}

impl Writer {
    /// The time of this write transaction (ms since epoch).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Append an event.
    pub fn event(&mut self, kind: EventKind) -> Result<()> {
        let rec = codec::encode(&EventRecord {
            at_ms: self.now,
            kind,
        })?;
        self.txn
            .open_table(EVENTS)?
            .insert(self.next_seq, rec.as_slice())?;
        self.next_seq += 1;
        Ok(())
    }

    /// Read a tx inside this write transaction.
    pub fn tx(&self, tx: u64) -> Result<TxRecord> {
        get_rec(&self.txn.open_table(TXS)?, "txs", tx)?.ok_or(Error::UnknownTx { tx })
    }

    /// The next tx id.
    pub fn next_tx_id(&self) -> Result<u64> {
        let t = self.txn.open_table(TXS)?;
        let last = t.last()?.map(|(k, _)| k.value());
        Ok(last.unwrap_or(0) + 1)
    }

    /// The next batch id.
    pub fn next_batch_id(&self) -> Result<u64> {
        let t = self.txn.open_table(BATCHES)?;
        let last = t.last()?.map(|(k, _)| k.value());
        Ok(last.unwrap_or(0) + 1)
    }

    /// Insert or update a tx record (no event; callers append the event that says why).
    pub fn put_tx(&mut self, rec: &TxRecord) -> Result<()> {
        let v = codec::encode(rec)?;
        self.txn.open_table(TXS)?.insert(rec.tx, v.as_slice())?;
        Ok(())
    }

    /// Insert a revision record and its `RevisionRecorded` event.
    pub fn put_revision(&mut self, rec: &RevisionRecord) -> Result<()> {
        let v = codec::encode(rec)?;
        self.txn
            .open_table(REVISIONS)?
            .insert((rec.tx, rec.revision), v.as_slice())?;
        self.event(EventKind::RevisionRecorded {
            tx: rec.tx,
            revision: rec.revision,
        })
    }

    /// Store `bytes` as a blob unless present (content addressed); returns its hash.
    pub fn put_blob(&mut self, bytes: &[u8]) -> Result<BlobHash> {
        self.put_blob_hashed(BlobHash::of(bytes), bytes)
    }

    /// [`Writer::put_blob`] for bytes whose hash the caller already computed (a
    /// `FileState` of them), so a large file is not hashed twice. A wrong `hash` cannot
    /// go unnoticed: reading a blob checks its bytes against its key
    /// (`blobs::assemble`), and debug builds check here.
    pub fn put_blob_hashed(&mut self, hash: BlobHash, bytes: &[u8]) -> Result<BlobHash> {
        debug_assert_eq!(hash, BlobHash::of(bytes), "put_blob_hashed: wrong hash");
        let inserted = {
            let mut manifests = self.txn.open_table(blobs::MANIFESTS)?;
            let mut chunks = self.txn.open_table(blobs::CHUNKS)?;
            blobs::put(&mut manifests, &mut chunks, &hash, bytes)?.is_some()
        };
        if inserted {
            self.event(EventKind::BlobStored {
                hash,
                size: bytes.len() as u64,
            })?;
        }
        Ok(hash)
    }

    /// Whether a blob is present.
    pub fn has_blob(&self, hash: &BlobHash) -> Result<bool> {
        Ok(self
            .txn
            .open_table(blobs::MANIFESTS)?
            .get(&hash.0)?
            .is_some())
    }

    /// Insert or update a batch record, keep the in-flight index in step with its state,
    /// and append a `BatchState` event for its latest state change.
    pub fn put_batch(&mut self, rec: &BatchRecord) -> Result<()> {
        let v = codec::encode(rec)?;
        self.txn
            .open_table(BATCHES)?
            .insert(rec.batch, v.as_slice())?;
        {
            let mut inflight = self.txn.open_table(INFLIGHT)?;
            if rec.state.is_terminal() {
                inflight.remove(rec.batch)?;
            } else {
                inflight.insert(rec.batch, ())?;
            }
        }
        let note = rec.history.last().and_then(|h| h.note.clone());
        self.event(EventKind::BatchState {
            batch: rec.batch,
            tx: rec.tx,
            state: rec.state,
            note,
        })
    }

    /// Insert a receipt and its `ReceiptIssued` event.
    pub fn put_receipt(&mut self, rec: &Receipt) -> Result<()> {
        let v = codec::encode(rec)?;
        self.txn
            .open_table(RECEIPTS)?
            .insert(rec.batch, v.as_slice())?;
        self.event(EventKind::ReceiptIssued {
            batch: rec.batch,
            tx: rec.tx,
        })
    }

    /// Whether a batch of `tx` is in flight (a commit or rollback under way or
    /// interrupted).
    pub fn has_inflight_batch(&self, tx: u64) -> Result<bool> {
        let inflight = self.txn.open_table(INFLIGHT)?;
        let batches = self.txn.open_table(BATCHES)?;
        for item in inflight.iter()? {
            let id = item?.0.value();
            if let Some(b) = get_rec::<u64, BatchRecord>(&batches, "batches", id)? {
                if b.tx == tx {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Garbage-collect inside this write transaction (so no other writer can start
    /// referencing a blob between the scan and the delete): every tx for which
    /// `retain` is false, and that has no batch in flight, loses its revisions and is
    /// marked `pruned` (an open one is also aborted); then every blob that no remaining
    /// revision, no batch of a retained tx and no in-flight batch references is deleted.
    pub fn gc(&mut self, retain: impl Fn(&TxRecord) -> bool) -> Result<GcCounts> {
        let mut counts = GcCounts::default();
        let inflight_txs = self.inflight_txs()?;
        let txs: Vec<TxRecord> = {
            let t = self.txn.open_table(TXS)?;
            let mut v = Vec::new();
            for item in t.iter()? {
                v.push(codec::decode("txs", item?.1.value())?);
            }
            v
        };
        let mut pruned = BTreeSet::new();
        for mut tx in txs {
            if tx.pruned || retain(&tx) || inflight_txs.contains(&tx.tx) {
                if tx.pruned {
                    pruned.insert(tx.tx);
                }
                continue;
            }
            let mut revs = self.txn.open_table(REVISIONS)?;
            for n in 0..tx.revisions {
                if revs.remove((tx.tx, n))?.is_some() {
                    counts.revisions_dropped += 1;
                }
            }
            drop(revs);
            if tx.state == TxState::Open {
                counts.previews_aborted += 1;
                tx.state = TxState::Aborted;
                self.event(EventKind::TxAborted { tx: tx.tx })?;
            }
            tx.pruned = true;
            self.put_tx(&tx)?;
            pruned.insert(tx.tx);
            counts.txs_pruned += 1;
        }
        let live = self.referenced_blobs(&pruned)?;
        let mut manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let mut dead = Vec::new();
        let mut live_chunks = BTreeSet::new();
        for item in manifests.iter()? {
            let (k, v) = item?;
            let m: blobs::Manifest = codec::decode("blob_manifests", v.value())?;
            if live.contains(&BlobHash(*k.value())) {
                live_chunks.extend(m.chunk_keys().iter().copied());
            } else {
                let inline = match &m {
                    blobs::Manifest::Inline(b) => b.len() as u64,
                    blobs::Manifest::Chunked { .. } => 0,
                };
                dead.push((*k.value(), inline));
            }
        }
        for (k, inline) in dead {
            manifests.remove(&k)?;
            counts.blobs_dropped += 1;
            counts.bytes_freed += inline;
        }
        drop(manifests);
        let mut chunks = self.txn.open_table(blobs::CHUNKS)?;
        let mut dead_chunks = Vec::new();
        for item in chunks.iter()? {
            let (k, v) = item?;
            if !live_chunks.contains(k.value()) {
                dead_chunks.push((*k.value(), v.value().len() as u64));
            }
        }
        for (k, size) in dead_chunks {
            chunks.remove(&k)?;
            counts.bytes_freed += size;
        }
        drop(chunks);
        self.event(EventKind::Gc {
            txs_pruned: counts.txs_pruned,
            blobs_dropped: counts.blobs_dropped,
            bytes_freed: counts.bytes_freed,
        })?;
        Ok(counts)
    }

    fn inflight_txs(&self) -> Result<BTreeSet<u64>> {
        let inflight = self.txn.open_table(INFLIGHT)?;
        let batches = self.txn.open_table(BATCHES)?;
        let mut out = BTreeSet::new();
        for item in inflight.iter()? {
            let id = item?.0.value();
            if let Some(b) = get_rec::<u64, BatchRecord>(&batches, "batches", id)? {
                out.insert(b.tx);
            }
        }
        Ok(out)
    }

    /// Blobs referenced by a revision, by a batch of a tx not in `pruned`, or by an
    /// in-flight batch (including the foreign bytes recovery kept).
    fn referenced_blobs(&self, pruned: &BTreeSet<u64>) -> Result<BTreeSet<BlobHash>> {
        let mut live = BTreeSet::new();
        let mut add = |s: &FileState| {
            if let Some(h) = s.hash.filter(|_| s.exists) {
                live.insert(h);
            }
        };
        let revs = self.txn.open_table(REVISIONS)?;
        for item in revs.iter()? {
            let rev: RevisionRecord = codec::decode("revisions", item?.1.value())?;
            for f in &rev.files {
                add(&f.snapshot);
                add(&f.candidate);
            }
        }
        let batches = self.txn.open_table(BATCHES)?;
        for item in batches.iter()? {
            let b: BatchRecord = codec::decode("batches", item?.1.value())?;
            if pruned.contains(&b.tx) && b.state.is_terminal() {
                continue;
            }
            for f in &b.files {
                add(&f.pre);
                add(&f.post);
            }
            for f in &b.foreign {
                add(&f.found);
            }
        }
        Ok(live)
    }

    /// Whether a receipt exists for `batch`.
    pub fn has_receipt(&self, batch: u64) -> Result<bool> {
        Ok(self.txn.open_table(RECEIPTS)?.get(batch)?.is_some())
    }
}
