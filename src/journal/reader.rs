//! [`Reader`]: typed access to the tables inside one redb read transaction.

use redb::{ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::de::DeserializeOwned;

use super::{blobs, codec, get_rec, EventRecord};
use super::{BATCHES, EVENTS, INFLIGHT, RECEIPTS, REVISIONS, TXS};
use crate::error::{Error, JournalError, Result};
use crate::journal::records::*;

/// A read transaction of the journal.
pub struct Reader {
    pub(super) txn: redb::ReadTransaction,
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
        let pages = self.txn.open_table(blobs::PAGES)?;
        blobs::assemble(&chunks, &pages, hash, raw.value()).map(Some)
    }

    /// Stream a blob's bytes to `sink` chunk by chunk, checked against their key as
    /// [`Reader::blob`] checks them, but only once all were handed out: the sink must
    /// discard what it got when this returns an error. A blob not stored is
    /// [`JournalError::Missing`]; damage is [`JournalError::Corrupt`]; an error of the
    /// sink stops the stream and comes back inside `Ok`. Memory: one chunk and the
    /// chunk list, whatever the blob's size.
    pub fn blob_stream(
        &self,
        hash: &BlobHash,
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> Result<std::io::Result<()>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let Some(raw) = manifests.get(&hash.0)? else {
            return Err(JournalError::Missing {
                what: format!("blob {hash}"),
            }
            .into());
        };
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        let pages = self.txn.open_table(blobs::PAGES)?;
        blobs::stream(&chunks, &pages, hash, raw.value(), sink)
    }

    /// A [`Splice`](super::splice::Splice) writing the blob `target` from the file on
    /// disk, which should hold the blob `base`, and from the journal where they differ.
    /// `None` when either blob is not stored, is inline, or they share no chunk (then
    /// stream the target with [`Reader::blob_stream`]). Errors: a damaged page or
    /// manifest is [`JournalError::Corrupt`], and the journal's.
    pub(crate) fn blob_splice(
        &self,
        target: &BlobHash,
        base: &BlobHash,
    ) -> Result<Option<super::splice::Splice>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let (Some(t), Some(b)) = (manifests.get(&target.0)?, manifests.get(&base.0)?) else {
            return Ok(None);
        };
        let pages = self.txn.open_table(blobs::PAGES)?;
        super::splice::Splice::new(
            self.txn.open_table(blobs::CHUNKS)?,
            &pages,
            (target, t.value()),
            (base, b.value()),
        )
    }

    /// The part of the blobs `old` and `new` around where they differ, read chunk by
    /// chunk: the differing chunks widened to whole lines and
    /// [`window::CONTEXT`](super::window::CONTEXT) lines of context, with the lines
    /// before it counted ([`BlobWindow`](super::window::BlobWindow)). `None` when a
    /// window cannot stand for the whole blobs (inline blobs, equal blobs). Memory: the
    /// window and the chunk lists, not the blobs.
    /// A blob not stored is [`JournalError::Missing`]; damage is
    /// [`JournalError::Corrupt`].
    pub(crate) fn blob_window(
        &self,
        old: &BlobHash,
        new: &BlobHash,
    ) -> Result<Option<super::window::BlobWindow>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        let pages = self.txn.open_table(blobs::PAGES)?;
        super::window::window(&manifests, &chunks, &pages, old, new, None)
    }

    /// The first half of [`Reader::blob_window`]: the chunk lists of `old` and `new` and
    /// their differing chunks ([`window::plan`](super::window::plan)), for a caller
    /// that reads a file which should hold `old` anyway and feeds its bytes to the
    /// plan's [`DiskScan`](super::window::DiskScan) as it reads them; the window is
    /// then [`Reader::blob_window_finish`]. `None` when there is no window (inline or
    /// equal blobs). The same errors.
    pub(crate) fn blob_window_plan(
        &self,
        old: &BlobHash,
        new: &BlobHash,
    ) -> Result<Option<super::window::WindowPlan>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let chunks = self.txn.open_table(blobs::CHUNKS)?;
        let pages = self.txn.open_table(blobs::PAGES)?;
        super::window::plan(&manifests, &chunks, &pages, old, new)
    }

    /// The window of `plan`, its shared start and end from `scanned` (the file proven
    /// to hold the old blob) or else read from the journal
    /// ([`WindowPlan::finish`](super::window::WindowPlan::finish)). The same errors.
    pub(crate) fn blob_window_finish(
        &self,
        plan: super::window::WindowPlan,
        scanned: Option<super::window::Scanned>,
    ) -> Result<super::window::BlobWindow> {
        plan.finish(&self.txn.open_table(blobs::CHUNKS)?, scanned)
    }

    /// Whether the blob `hash` is stored (its manifest is; its chunks are checked when
    /// it is read). Errors: the journal's.
    pub fn has_blob(&self, hash: &BlobHash) -> Result<bool> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        Ok(manifests.get(&hash.0)?.is_some())
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

    /// The extended attributes a file state records (none when it records none).
    pub fn xattrs(&self, state: &FileState) -> Result<Xattrs> {
        match state.xattrs().filter(|h| *h != Xattrs::empty_hash()) {
            Some(h) => Ok(Xattrs::decode(&self.blob_required(&h)?)?),
            None => Ok(Xattrs::default()),
        }
    }

    /// The in-flight batch of `tx`, if any (a commit or rollback under way, interrupted,
    /// or needing attention).
    pub fn inflight_batch_of(&self, tx: u64) -> Result<Option<BatchRecord>> {
        for id in self.inflight()? {
            if let Some(b) = self.batch(id)?.filter(|b| b.tx == tx) {
                return Ok(Some(b));
            }
        }
        Ok(None)
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
        let pages = self.txn.open_table(blobs::PAGES)?;
        for item in manifests.iter()? {
            let (k, v) = item?;
            let hash = BlobHash(*k.value());
            f(hash, blobs::assemble(&chunks, &pages, &hash, v.value()))?;
        }
        Ok(())
    }

    /// Blobs stored (manifests), counted without reading their bytes.
    pub fn blob_count(&self) -> Result<u64> {
        Ok(self.txn.open_table(blobs::MANIFESTS)?.len()?)
    }

    /// The blobs' full lengths, each distinct content once (what reassembling every
    /// blob would give; read from the manifests, no chunk is read).
    pub fn blob_content_bytes(&self) -> Result<u64> {
        let mut total = 0;
        for item in self.txn.open_table(blobs::MANIFESTS)?.iter()? {
            let m = codec::decode::<blobs::Manifest>("blob_manifests", item?.1.value())?;
            total += match m {
                blobs::Manifest::Inline(b) => b.len() as u64,
                blobs::Manifest::Chunked { size, .. } | blobs::Manifest::Tree { size, .. } => size,
            };
        }
        Ok(total)
    }

    /// Bytes the blob store holds, each distinct piece once: inline blobs, every chunk,
    /// every manifest page, and each manifest's own hash list (its `top`, or a v3–v5
    /// flat chunk list) at 32 bytes a hash. Not counted: redb's page overhead and
    /// the encoding bytes of a manifest record (a few bytes each).
    pub fn stored_blob_bytes(&self) -> Result<u64> {
        let mut total = 0;
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        for item in manifests.iter()? {
            let m = codec::decode::<blobs::Manifest>("blob_manifests", item?.1.value())?;
            total += blobs::manifest_bytes(&m);
        }
        for table in [blobs::CHUNKS, blobs::PAGES] {
            for item in self.txn.open_table(table)?.iter()? {
                total += item?.1.value().len() as u64;
            }
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
