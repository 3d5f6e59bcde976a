//! The blob store: content-addressed bytes, stored as content-defined chunks.
//!
//! A blob is keyed by the blake3 hash of its bytes (table `blob_manifests`). Its
//! manifest is either the bytes themselves (`Inline`, for blobs under
//! [`INLINE_MAX`] bytes) or the list of its chunks' hashes (`Chunked`); the chunks live
//! once each in `blob_chunks`, keyed by their own blake3 hash. Chunk boundaries come
//! from FastCDC (the `fastcdc` crate, 2020 variant) with a 2 KiB minimum, 8 KiB average
//! and 32 KiB maximum, so an edit moves at most a couple of boundaries: a one-line
//! change to a 1 MiB file stores one or two new chunks and a 4 KiB manifest instead of
//! a second megabyte (docs/on-disk-format.md, "Blobs"; schema v3).
//!
//! Reading reassembles the chunks and checks the whole blob against its key, so a
//! damaged chunk is [`JournalError::Corrupt`], never wrong bytes.

use redb::{ReadableTable, Table, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::error::{JournalError, Result};
use crate::journal::codec;
use crate::journal::records::BlobHash;

/// Manifests, keyed by the blob's hash.
pub(crate) const MANIFESTS: TableDefinition<&[u8; 32], &[u8]> =
    TableDefinition::new("blob_manifests");
/// Chunks, keyed by the chunk's hash.
pub(crate) const CHUNKS: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("blob_chunks");

/// Blobs shorter than this (bytes) are stored inline in their manifest.
pub const INLINE_MAX: usize = 4096;
const MIN_CHUNK: usize = 2048;
const AVG_CHUNK: usize = 8192;
const MAX_CHUNK: usize = 32768;

/// How a blob is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Manifest {
    /// The bytes themselves.
    Inline(Vec<u8>),
    /// Total size in bytes, and the chunk hashes in order.
    Chunked {
        /// Bytes.
        size: u64,
        /// blake3 of each chunk.
        chunks: Vec<[u8; 32]>,
    },
}

impl Manifest {
    /// The chunk hashes this manifest needs.
    pub fn chunk_keys(&self) -> &[[u8; 32]] {
        match self {
            Manifest::Inline(_) => &[],
            Manifest::Chunked { chunks, .. } => chunks,
        }
    }
}

/// Store `bytes` (whose hash is `hash`) unless present. Returns the number of bytes
/// newly written (inline bytes or new chunks), or `None` if the blob was there.
pub(crate) fn put(
    manifests: &mut Table<&[u8; 32], &[u8]>,
    chunks: &mut Table<&[u8; 32], &[u8]>,
    hash: &BlobHash,
    bytes: &[u8],
) -> Result<Option<u64>> {
    if manifests.get(&hash.0)?.is_some() {
        return Ok(None);
    }
    let (manifest, written) = if bytes.len() < INLINE_MAX {
        (Manifest::Inline(bytes.to_vec()), bytes.len() as u64)
    } else {
        let mut keys = Vec::new();
        let mut written = 0;
        for c in fastcdc::v2020::FastCDC::new(bytes, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK) {
            let piece = &bytes[c.offset..c.offset + c.length];
            let key = *blake3::hash(piece).as_bytes();
            if chunks.get(&key)?.is_none() {
                chunks.insert(&key, piece)?;
                written += piece.len() as u64;
            }
            keys.push(key);
        }
        let manifest = Manifest::Chunked {
            size: bytes.len() as u64,
            chunks: keys,
        };
        (manifest, written)
    };
    manifests.insert(&hash.0, codec::encode(&manifest)?.as_slice())?;
    Ok(Some(written))
}

/// The bytes of the blob whose manifest is `raw`, checked against `hash`.
pub(crate) fn assemble(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    raw: &[u8],
) -> Result<Vec<u8>> {
    let bytes = match codec::decode::<Manifest>("blob_manifests", raw)? {
        Manifest::Inline(b) => b,
        Manifest::Chunked { size, chunks: keys } => {
            let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            for key in &keys {
                let piece = chunks.get(key)?.ok_or_else(|| JournalError::Corrupt {
                    table: "blob_chunks",
                    message: format!(
                        "blob {hash} needs chunk {} which is missing",
                        BlobHash(*key)
                    ),
                })?;
                out.extend_from_slice(piece.value());
            }
            out
        }
    };
    let actual = BlobHash::of(&bytes);
    if actual != *hash {
        return Err(JournalError::Corrupt {
            table: "blob_manifests",
            message: format!("blob {hash} holds bytes that hash to {actual}"),
        }
        .into());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_line_edit_to_a_large_blob_adds_few_chunk_bytes() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let a: Vec<u8> = (0..40_000)
                .flat_map(|i| format!("line {i} of the file\n").into_bytes())
                .collect();
            let mut b = a.clone();
            let at = b.len() / 2;
            b.splice(at..at, b"inserted line\n".iter().copied());
            let first = put(&mut m, &mut c, &BlobHash::of(&a), &a).unwrap().unwrap();
            assert_eq!(first, a.len() as u64);
            let second = put(&mut m, &mut c, &BlobHash::of(&b), &b).unwrap().unwrap();
            assert!(
                second <= 2 * MAX_CHUNK as u64,
                "{second} new bytes for a one-line edit"
            );
            assert_eq!(put(&mut m, &mut c, &BlobHash::of(&b), &b).unwrap(), None);
            let raw = m
                .get(&BlobHash::of(&b).0)
                .unwrap()
                .unwrap()
                .value()
                .to_vec();
            assert_eq!(assemble(&c, &BlobHash::of(&b), &raw).unwrap(), b);
            let small = b"tiny".to_vec();
            assert_eq!(
                put(&mut m, &mut c, &BlobHash::of(&small), &small).unwrap(),
                Some(4)
            );
        }
        txn.commit().unwrap();
    }
}
