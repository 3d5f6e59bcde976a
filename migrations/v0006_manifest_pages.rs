//! Schema v6: a large blob's chunk list is no longer one flat list in its manifest but a
//! tree of content-addressed manifest pages, in the new table `blob_pages` (`[u8; 32]`
//! blake3 of the page → the page: concatenated 32-byte hashes); the manifest keeps only
//! the top of the tree (`Manifest::Tree`, src/journal/blobs.rs). A one-line change to a
//! large file then stores one or two pages and a short top list instead of the whole
//! list again (docs/on-disk-format.md, "Blobs").
//!
//! The step creates `blob_pages` and rewrites nothing: the blobs written by v3–v5
//! (`Manifest::Chunked`, flat lists, chunks of 2/8/32 KiB) stay as they are, read,
//! verified and collected by gc as before, so a journal's history needs no copy. New
//! blobs are written in the v6 shape with v6's chunk sizes; a v6 blob shares no chunk
//! with a v5 version of the same file, so the first commit of such a file after the
//! migration stores it once more in full. The version bump is what makes a v5 binary
//! refuse the journal (`JournalError::SchemaTooNew`) instead of misreading a tree.

use redb::WriteTransaction;

use crate::error::Result;
use crate::journal::blobs;

/// Create `blob_pages`.
pub fn run(txn: &WriteTransaction) -> Result<()> {
    txn.open_table(blobs::PAGES)?;
    Ok(())
}
