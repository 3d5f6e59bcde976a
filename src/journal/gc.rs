//! `journal gc` inside one write transaction: prune transactions, drop the blobs no
//! record references any more.

use std::collections::BTreeSet;

use redb::ReadableTable;
use serde::{Deserialize, Serialize};

use super::{blobs, codec, get_rec, Writer};
use super::{BATCHES, INFLIGHT, REVISIONS, TXS};
use crate::error::Result;
use crate::journal::records::*;

/// What [`Writer::gc`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcCounts {
    /// Transactions whose revisions were dropped.
    pub txs_pruned: u64,
    /// Revision records dropped.
    pub revisions_dropped: u64,
    /// Blobs dropped.
    pub blobs_dropped: u64,
    /// Bytes the blob store no longer holds, counted as `journal stats` counts
    /// `blob_bytes_unique`: inline bytes, chunks, manifest pages and the dropped
    /// manifests' own hash lists (32 bytes a hash).
    pub bytes_freed: u64,
    /// Open previews among the pruned transactions, which were aborted.
    pub previews_aborted: u64,
}

impl Writer {
    /// Garbage-collect inside this write transaction (so no other writer can start
    /// referencing a blob between the scan and the delete): every tx for which
    /// `retain` is false, and that has no batch in flight, loses its revisions and is
    /// marked `pruned` (an open one is also aborted); then every blob that no remaining
    /// revision, no batch of a retained tx and no in-flight batch references is deleted.
    /// `retain` is called only for txs that are neither pruned already nor in flight.
    pub fn gc(&mut self, retain: impl Fn(&TxRecord) -> bool) -> Result<GcCounts> {
        let mut counts = GcCounts::default();
        let pruned = self.prune_txs(retain, &mut counts)?;
        let live = self.referenced_blobs(&pruned)?;
        self.drop_blobs_but(&live, &mut counts)?;
        self.event(EventKind::Gc {
            txs_pruned: counts.txs_pruned,
            blobs_dropped: counts.blobs_dropped,
            bytes_freed: counts.bytes_freed,
        })?;
        Ok(counts)
    }

    /// Prune every tx `retain` does not keep (see [`Writer::gc`]); returns the ids of
    /// every pruned tx, those pruned before included.
    fn prune_txs(
        &mut self,
        retain: impl Fn(&TxRecord) -> bool,
        counts: &mut GcCounts,
    ) -> Result<BTreeSet<u64>> {
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
            // `retain` is asked only about txs that can be pruned, so its "no" answers
            // are exactly the txs pruned here.
            if tx.pruned || inflight_txs.contains(&tx.tx) || retain(&tx) {
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
            if self.prune_tx(&mut tx)? {
                counts.previews_aborted += 1;
            }
            pruned.insert(tx.tx);
            counts.txs_pruned += 1;
        }
        Ok(pruned)
    }

    /// Delete every blob not in `live`, then every manifest page and every chunk no
    /// live blob reaches (through its flat chunk list, or its tree of pages: schema v6).
    /// A live blob whose pages are missing or damaged stops gc with
    /// [`JournalError::Corrupt`](crate::error::JournalError::Corrupt) before anything
    /// is deleted: what it reaches is unknown, so nothing may be judged unreachable.
    fn drop_blobs_but(&mut self, live: &BTreeSet<BlobHash>, counts: &mut GcCounts) -> Result<()> {
        let mut manifests = self.txn.open_table(blobs::MANIFESTS)?;
        let mut dead = Vec::new();
        let mut live_chunks = BTreeSet::new();
        let mut live_pages = BTreeSet::new();
        {
            let pages = self.txn.open_table(blobs::PAGES)?;
            for item in manifests.iter()? {
                let (k, v) = item?;
                let hash = BlobHash(*k.value());
                let m: blobs::Manifest = codec::decode("blob_manifests", v.value())?;
                if live.contains(&hash) {
                    let r = blobs::resolve(&pages, &hash, &m)?;
                    live_chunks.extend(r.chunks);
                    live_pages.extend(r.pages.into_iter().map(|(k, _)| k));
                } else {
                    dead.push((*k.value(), blobs::manifest_bytes(&m)));
                }
            }
        }
        for (k, own) in dead {
            manifests.remove(&k)?;
            counts.blobs_dropped += 1;
            counts.bytes_freed += own;
        }
        drop(manifests);
        for (table, keep) in [(blobs::PAGES, &live_pages), (blobs::CHUNKS, &live_chunks)] {
            let mut t = self.txn.open_table(table)?;
            let mut unreachable = Vec::new();
            for item in t.iter()? {
                let (k, v) = item?;
                if !keep.contains(k.value()) {
                    unreachable.push((*k.value(), v.value().len() as u64));
                }
            }
            for (k, size) in unreachable {
                t.remove(&k)?;
                counts.bytes_freed += size;
            }
        }
        Ok(())
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
        let revs = self.txn.open_table(REVISIONS)?;
        for item in revs.iter()? {
            let rev: RevisionRecord = codec::decode("revisions", item?.1.value())?;
            live.extend(rev.blob_refs().iter().map(|r| r.hash));
        }
        let batches = self.txn.open_table(BATCHES)?;
        for item in batches.iter()? {
            let b: BatchRecord = codec::decode("batches", item?.1.value())?;
            if !gc_dropped_images(pruned.contains(&b.tx), &b) {
                live.extend(b.blob_refs().iter().map(|r| r.hash));
            }
        }
        Ok(live)
    }
}

/// Whether `journal gc` drops (or dropped) the images of batch `b`: a finished batch of
/// a pruned tx keeps its hashes as history, not its blobs. `journal verify` asks the
/// same question before it requires a batch's blobs.
pub(crate) fn gc_dropped_images(tx_pruned: bool, b: &BatchRecord) -> bool {
    tx_pruned && b.state.is_terminal()
}
