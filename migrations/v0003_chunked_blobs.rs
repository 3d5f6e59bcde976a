//! Schema v3: blobs are stored as content-defined chunks (`blob_manifests` +
//! `blob_chunks`, see `src/journal/blobs.rs`) instead of whole in `blobs`.
//!
//! The step re-stores every v2 blob through the chunking store (same key: the blake3
//! of the whole bytes, so every reference stays valid), then deletes the `blobs`
//! table — all inside the migration's single write transaction. The store it writes
//! through is today's, so a v2 journal's blobs get today's shape (since schema v6 a
//! tree of manifest pages in `blob_pages`, which this step therefore opens too).

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use crate::error::Result;
use crate::journal::blobs;
use crate::journal::records::BlobHash;

/// Move every blob into the chunk store and drop the old table.
pub fn run(txn: &WriteTransaction) -> Result<()> {
    let old = TableDefinition::<&[u8; 32], &[u8]>::new("blobs");
    {
        let table = txn.open_table(old)?;
        let mut manifests = txn.open_table(blobs::MANIFESTS)?;
        let mut chunks = txn.open_table(blobs::CHUNKS)?;
        let mut pages = txn.open_table(blobs::PAGES)?;
        for item in table.iter()? {
            let (k, v) = item?;
            let hash = BlobHash(*k.value());
            blobs::put(&mut manifests, &mut chunks, &mut pages, &hash, v.value())?;
        }
    }
    txn.delete_table(old)?;
    Ok(())
}
