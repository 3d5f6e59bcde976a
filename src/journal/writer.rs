//! [`Writer`]: typed mutation of the tables inside one redb write transaction; every
//! mutation appends the event that records it.

use redb::ReadableTable;

use super::{blobs, codec, get_rec, EventRecord};
use super::{BATCHES, EVENTS, RECEIPTS, REVISIONS, TXS};
use crate::error::{Error, Result};
use crate::journal::records::*;

/// One write transaction of the journal. Every mutation appends its event.
pub struct Writer {
    pub(super) txn: redb::WriteTransaction,
    pub(super) next_seq: u64,
    pub(super) now: u64,
    /// The chunk layout of the last blob this transaction stored, for
    /// [`Writer::put_blob_like`] (a candidate stored right after its snapshot).
    pub(super) last_layout: Option<(BlobHash, blobs::Layout)>,
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

    /// Insert or update a tx record. Private to the journal: a tx changes only through
    /// the checked steps of `transitions.rs`, each written with its event.
    pub(super) fn put_tx(&mut self, rec: &TxRecord) -> Result<()> {
        let v = codec::encode(rec)?;
        self.txn.open_table(TXS)?.insert(rec.tx, v.as_slice())?;
        Ok(())
    }

    /// Insert a revision record and its `RevisionRecorded` event.
    pub(super) fn put_revision(&mut self, rec: &RevisionRecord) -> Result<()> {
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
        self.put_blob_like(hash, bytes, None)
    }

    /// [`Writer::put_blob_like`] of bytes given as the stored blob `base` (its hash) with
    /// one region replaced (`bytes.base` is its bytes): a large candidate kept spliced
    /// on its snapshot is stored without being assembled (`blobs::put_spliced`; the
    /// stored blob is the same as [`Writer::put_blob`] of the assembled bytes). A base
    /// that is not stored: the bytes are assembled and stored alone. Errors: the
    /// journal's.
    pub(crate) fn put_blob_spliced(
        &mut self,
        hash: BlobHash,
        base: BlobHash,
        bytes: blobs::SplicedBytes<'_>,
    ) -> Result<BlobHash> {
        let stored = {
            let mut manifests = self.txn.open_table(blobs::MANIFESTS)?;
            let mut chunks = self.txn.open_table(blobs::CHUNKS)?;
            let mut pages = self.txn.open_table(blobs::PAGES)?;
            if manifests.get(&hash.0)?.is_some() {
                None
            } else {
                let layout = match self.last_layout.take() {
                    Some((h, l)) if h == base => Some(l),
                    _ => match manifests.get(&base.0)? {
                        Some(raw) => {
                            let m = codec::decode("blob_manifests", raw.value())?;
                            Some(blobs::layout_of(&chunks, &pages, &base, &m)?)
                        }
                        None => None,
                    },
                };
                match layout {
                    Some(layout) => blobs::put_spliced(
                        &mut manifests,
                        &mut chunks,
                        &mut pages,
                        &hash,
                        bytes,
                        &layout,
                    )?,
                    None => {
                        let whole = bytes.range(0, bytes.len());
                        debug_assert_eq!(
                            hash,
                            BlobHash::of(&whole),
                            "put_blob_spliced: wrong hash"
                        );
                        blobs::put_like(
                            &mut manifests,
                            &mut chunks,
                            &mut pages,
                            &hash,
                            &whole,
                            None,
                        )?
                    }
                }
            }
        };
        if let Some((_, layout)) = stored {
            self.last_layout = Some((hash, layout));
            self.event(EventKind::BlobStored {
                hash,
                size: bytes.len() as u64,
            })?;
        }
        Ok(hash)
    }

    /// [`Writer::put_blob_hashed`] of bytes that differ from those of the stored blob
    /// `like` (its hash and bytes) in one region, e.g. a candidate and its snapshot:
    /// only that region is chunked and hashed, the rest reuses `like`'s chunks
    /// (`blobs::put_like`; the stored blob is the same as without `like`). `like`'s
    /// layout comes from this transaction when it stored `like` last, else from the
    /// journal (its chunk list and each chunk's length); a `like` that is not stored
    /// is ignored. Errors: the journal's.
    pub fn put_blob_like(
        &mut self,
        hash: BlobHash,
        bytes: &[u8],
        like: Option<(BlobHash, &[u8])>,
    ) -> Result<BlobHash> {
        debug_assert_eq!(hash, BlobHash::of(bytes), "put_blob_hashed: wrong hash");
        let stored = {
            let mut manifests = self.txn.open_table(blobs::MANIFESTS)?;
            let mut chunks = self.txn.open_table(blobs::CHUNKS)?;
            let mut pages = self.txn.open_table(blobs::PAGES)?;
            let mut layout = None;
            if let Some((like_hash, _)) = like {
                if manifests.get(&hash.0)?.is_none() {
                    layout = match self.last_layout.take() {
                        Some((h, l)) if h == like_hash => Some(l),
                        _ => match manifests.get(&like_hash.0)? {
                            Some(raw) => {
                                let m = codec::decode("blob_manifests", raw.value())?;
                                Some(blobs::layout_of(&chunks, &pages, &like_hash, &m)?)
                            }
                            None => None,
                        },
                    };
                }
            }
            let like = like.zip(layout.as_ref()).map(|((_, b), l)| (b, l));
            blobs::put_like(&mut manifests, &mut chunks, &mut pages, &hash, bytes, like)?
        };
        if let Some((_, layout)) = stored {
            self.last_layout = Some((hash, layout));
            self.event(EventKind::BlobStored {
                hash,
                size: bytes.len() as u64,
            })?;
        }
        Ok(hash)
    }

    /// The index (in `hashes`' order) of the first blob that is not present, if any
    /// (the manifest table opened once for all of them).
    pub fn first_missing_blob<'a>(
        &self,
        hashes: impl IntoIterator<Item = &'a BlobHash>,
    ) -> Result<Option<usize>> {
        let manifests = self.txn.open_table(blobs::MANIFESTS)?;
        for (i, hash) in hashes.into_iter().enumerate() {
            if manifests.get(&hash.0)?.is_none() {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Whether a receipt exists for `batch`.
    pub fn has_receipt(&self, batch: u64) -> Result<bool> {
        Ok(self.txn.open_table(RECEIPTS)?.get(batch)?.is_some())
    }
}
