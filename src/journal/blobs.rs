//! The blob store: content-addressed bytes, stored as content-defined chunks under a
//! tree of chunk lists (docs/on-disk-format.md, "Blobs").
//!
//! A blob is keyed by the blake3 hash of its bytes (table `blob_manifests`). Its
//! manifest is one of:
//!
//! - `Inline`: the bytes themselves, for blobs under [`INLINE_MAX`] bytes;
//! - `Tree` (schema v6): the blob's chunk-hash list, split into *manifest pages* stored
//!   content-addressed in `blob_pages` (a page is the concatenation of 32-byte hashes,
//!   keyed by its own blake3), level above level until at most [`TOP_MAX`] hashes are
//!   left: those are the manifest's `top`, and `levels` says how many page levels lie
//!   between it and the chunks (0: `top` lists the chunks themselves). Page boundaries
//!   are content-defined on the hash list (a hash ends a page when its first four bytes,
//!   little endian, are `PAGE_AVG - 1` modulo `PAGE_AVG`, and the page holds at least
//!   `PAGE_MIN` hashes; at most `PAGE_MAX`), so a new chunk changes the one page
//!   holding it and the pages above it, not every later page — the scheme of git's
//!   trees, bup's and restic's hash-split trees;
//! - `Chunked` (schemas v3–v5, still read, never written): the flat list of every
//!   chunk hash.
//!
//! The chunks live once each in `blob_chunks`, keyed by their own blake3 hash. Chunk
//! boundaries come from FastCDC (the `fastcdc` crate, 2020 variant) with a
//! [`MIN_CHUNK`] minimum, [`AVG_CHUNK`] average and [`MAX_CHUNK`] maximum, sizes chosen by
//! measurement against redb's 4 KiB pages (docs/benchmarks.md, "Journal growth"): a
//! one-line change to a 1 MiB file stores one or two new chunks, one or two new pages
//! and a top list of a few hundred bytes.
//!
//! Reading checks every page against its key and the whole blob against its own (and,
//! when the whole does not match, each chunk against its key to name the damaged one),
//! so damage is [`JournalError::Corrupt`], never wrong bytes.

use crate::bytes::{common_prefix_len, common_suffix_len};
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
/// Manifest pages (schema v6), keyed by the page's hash: concatenated 32-byte hashes.
pub(crate) const PAGES: TableDefinition<&[u8; 32], &[u8]> = TableDefinition::new("blob_pages");

/// Blobs shorter than this (bytes) are stored inline in their manifest.
pub const INLINE_MAX: usize = 4096;
/// Smallest chunk FastCDC cuts (bytes), but for a blob's last chunk.
pub const MIN_CHUNK: usize = 1024;
/// FastCDC's target average chunk size (bytes).
pub const AVG_CHUNK: usize = 2048;
/// Largest chunk (bytes): one chunk, its 32-byte key and redb's leaf header fit in one
/// 4 KiB page.
pub const MAX_CHUNK: usize = 4000;
/// Most hashes a manifest's `top` list holds; longer lists get a page level.
pub const TOP_MAX: usize = 32;
/// A hash ends a manifest page with probability `1 / PAGE_AVG`.
const PAGE_AVG: u32 = 16;
/// Fewest hashes in a page (but the last of a level): every level is at least halved.
const PAGE_MIN: usize = 2;
/// Most hashes in a page.
const PAGE_MAX: usize = 64;
const HASH: usize = 32;

/// How a blob is stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Manifest {
    /// The bytes themselves. Encoded and decoded as one byte string (`serde_bytes`):
    /// bincode writes a `Vec<u8>` and a byte string the same way (a length, then the
    /// bytes), so the stored shape is unchanged, but a byte string is decoded in one
    /// copy instead of one visitor call per byte (≈ 29 instructions a byte; most of a
    /// CLI commit's decoding, docs/benchmarks.md, "The CLI process").
    Inline(#[serde(with = "serde_bytes")] Vec<u8>),
    /// Schemas v3–v5: total size in bytes, and every chunk hash in order.
    Chunked {
        /// Bytes.
        size: u64,
        /// blake3 of each chunk.
        chunks: Vec<[u8; 32]>,
    },
    /// Schema v6: total size in bytes, and the top of the tree of chunk lists.
    Tree {
        /// Bytes.
        size: u64,
        /// Page levels between `top` and the chunks (0: `top` lists the chunks).
        levels: u8,
        /// blake3 of each page of the highest level (of each chunk when `levels` is 0).
        top: Vec<[u8; 32]>,
    },
}

/// Where a manifest's chunk list is: what [`resolve`] found.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// Every chunk hash, in order.
    pub chunks: Vec<[u8; 32]>,
    /// Every page the manifest reaches, with its length in bytes.
    pub pages: Vec<([u8; 32], u64)>,
}

/// Whether `h` may end a manifest page (see the module docs).
fn ends_page(h: &[u8; 32]) -> bool {
    u32::from_le_bytes([h[0], h[1], h[2], h[3]]) % PAGE_AVG == PAGE_AVG - 1
}

/// `list` cut into manifest pages (content-defined, see the module docs).
fn split_pages(list: &[[u8; 32]]) -> Vec<&[[u8; 32]]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, h) in list.iter().enumerate() {
        let n = i + 1 - start;
        if (n >= PAGE_MIN && ends_page(h)) || n == PAGE_MAX {
            out.push(&list[start..=i]);
            start = i + 1;
        }
    }
    if start < list.len() {
        out.push(&list[start..]);
    }
    out
}

/// Store `bytes` (whose hash is `hash`) unless present. Returns the number of bytes
/// newly written (inline bytes, new chunks, new manifest pages and the top list at 32
/// bytes a hash), or `None` if the blob was there.
pub(crate) fn put(
    manifests: &mut Table<&[u8; 32], &[u8]>,
    chunks: &mut Table<&[u8; 32], &[u8]>,
    pages: &mut Table<&[u8; 32], &[u8]>,
    hash: &BlobHash,
    bytes: &[u8],
) -> Result<Option<u64>> {
    Ok(put_like(manifests, chunks, pages, hash, bytes, None)?.map(|(written, _)| written))
}

/// A stored blob's chunks in order: each chunk's length in bytes and its key (empty
/// for an inline blob). What [`put_like`] reuses.
pub(crate) type Layout = Vec<(u32, [u8; 32])>;

/// One chunk of a blob being stored: its place in the bytes and, when it is a chunk of
/// a blob stored before (reused), its key.
struct Cut {
    start: usize,
    len: usize,
    key: Option<[u8; 32]>,
}

/// Store `bytes` (whose hash is `hash`) unless present, as [`put`], and return what was
/// written and the blob's [`Layout`]. With `like` — the bytes of a blob stored before
/// and its layout, e.g. the snapshot a candidate was made from — only the region
/// between their common start and common end is chunked and hashed: the chunks of
/// `like` that lie wholly in the common start are the blob's own first chunks, and once
/// a chunk cut in the changed region lands in the common end where `like` has a cut
/// too, the rest of `like`'s chunks follow (FastCDC decides a cut from the bytes since
/// the chunk's start and the bytes left, both equal there). The chunks, pages and
/// manifest are exactly those a [`put`] without `like` writes (tested); a one-line
/// edit of a 100 MB file hashes a few KiB instead of 100 MB.
pub(crate) fn put_like(
    manifests: &mut Table<&[u8; 32], &[u8]>,
    chunks: &mut Table<&[u8; 32], &[u8]>,
    pages: &mut Table<&[u8; 32], &[u8]>,
    hash: &BlobHash,
    bytes: &[u8],
    like: Option<(&[u8], &Layout)>,
) -> Result<Option<(u64, Layout)>> {
    if manifests.get(&hash.0)?.is_some() {
        return Ok(None);
    }
    if bytes.len() < INLINE_MAX {
        let manifest = Manifest::Inline(bytes.to_vec());
        manifests.insert(&hash.0, codec::encode(&manifest)?.as_slice())?;
        return Ok(Some((bytes.len() as u64, Vec::new())));
    }
    let cuts = match like {
        Some((old, layout)) if layout.len() > 1 => cuts_like(bytes, old, layout),
        _ => cuts_from(bytes, 0, Vec::new()),
    };
    store_cuts(
        manifests,
        chunks,
        pages,
        hash,
        bytes.len(),
        cuts,
        (bytes, 0),
    )
}

/// A blob's bytes given as `base` with `base[start..end]` replaced by `text` (a
/// candidate kept spliced on its snapshot, `edit::Spliced`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SplicedBytes<'a> {
    /// The bytes the splice applies to (the snapshot's, stored as a blob of `layout`).
    pub base: &'a [u8],
    /// First byte of `base` replaced.
    pub start: usize,
    /// First byte of `base` kept after the region.
    pub end: usize,
    /// The bytes in the region.
    pub text: &'a [u8],
}

impl SplicedBytes<'_> {
    /// The blob's length in bytes.
    pub fn len(&self) -> usize {
        self.base.len() - (self.end - self.start) + self.text.len()
    }

    /// The blob's bytes `from..to` (offsets in the blob), assembled.
    pub fn range(&self, from: usize, to: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        let text_end = self.start + self.text.len();
        let pieces = [
            (0, self.start, &self.base[..self.start]),
            (self.start, text_end, self.text),
            (text_end, self.len(), &self.base[self.end..]),
        ];
        for (lo, hi, bytes) in pieces {
            let (a, b) = (from.max(lo), to.min(hi));
            if a < b {
                out.extend_from_slice(&bytes[a - lo..b - lo]);
            }
        }
        out
    }
}

/// [`put_like`] of a blob given as its `like` blob's bytes with one region replaced
/// (`new.base` is `like`'s bytes, laid out as `layout`): the stored manifest, chunks and
/// pages are exactly those of [`put`] of the assembled bytes, but only the region and
/// the chunks FastCDC cuts around it (up to where its cuts meet the base's again) are
/// assembled, not the whole blob. Falls back to assembling it whole when the cuts do
/// not meet within 1 MiB past the region, for a blob under [`INLINE_MAX`], and for a
/// base of one chunk.
pub(crate) fn put_spliced(
    manifests: &mut Table<&[u8; 32], &[u8]>,
    chunks: &mut Table<&[u8; 32], &[u8]>,
    pages: &mut Table<&[u8; 32], &[u8]>,
    hash: &BlobHash,
    new: SplicedBytes<'_>,
    layout: &Layout,
) -> Result<Option<(u64, Layout)>> {
    if manifests.get(&hash.0)?.is_some() {
        return Ok(None);
    }
    let whole = |manifests: &mut Table<&[u8; 32], &[u8]>,
                 chunks: &mut Table<&[u8; 32], &[u8]>,
                 pages: &mut Table<&[u8; 32], &[u8]>| {
        let bytes = new.range(0, new.len());
        put_like(
            manifests,
            chunks,
            pages,
            hash,
            &bytes,
            Some((new.base, layout)),
        )
    };
    if new.len() < INLINE_MAX || layout.len() <= 1 {
        return whole(manifests, chunks, pages);
    }
    match cuts_spliced(&new, layout) {
        Some((cuts, region, at)) => store_cuts(
            manifests,
            chunks,
            pages,
            hash,
            new.len(),
            cuts,
            (&region, at),
        ),
        None => whole(manifests, chunks, pages),
    }
}

/// [`cuts_like`] of a spliced blob, with the bytes its fresh chunks are cut from (and
/// their offset in the blob); `None` when FastCDC's cuts do not meet the base's within
/// 1 MiB past the region (the caller assembles the blob).
fn cuts_spliced(new: &SplicedBytes<'_>, layout: &Layout) -> Option<(Vec<Cut>, Vec<u8>, usize)> {
    const PAST: usize = 1 << 20;
    let (old, len) = (new.base, new.len());
    // A common start and end no longer than the true ones (each only shortens what is
    // reused, never changes a cut: see `cuts_like`).
    let prefix =
        new.start + crate::bytes::common_prefix_len(new.text, old.get(new.start..new.end)?);
    let shorter = old.len().min(len);
    let suffix = (old.len() - new.end
        + crate::bytes::common_suffix_len(new.text, old.get(new.start..new.end)?))
    .min(shorter - prefix.min(shorter));
    let (mut out, at) = reused_start(layout, prefix, shorter);
    let ends = chunk_ends(layout);
    let common_end = len - suffix;
    let region_end = common_end.saturating_add(PAST).min(len);
    let region = new.range(at, region_end);
    for c in fastcdc::v2020::FastCDC::new(&region, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK) {
        // A cut is the whole blob's only where FastCDC saw as many bytes ahead as it
        // would in the whole (a largest chunk's worth, or the blob's end).
        if region_end < len && region.len() - c.offset < MAX_CHUNK {
            return None;
        }
        let start = at + c.offset;
        let end = start + c.length;
        out.push(Cut {
            start,
            len: c.length,
            key: None,
        });
        if end >= common_end && end < len && reuse_end(&mut out, layout, &ends, end, old.len(), len)
        {
            return Some((out, region, at));
        }
    }
    (region_end == len).then_some((out, region, at))
}

/// Store the chunks `cuts` of a blob of `size` bytes (hashing and inserting the fresh
/// ones, whose bytes `src.0` holds from blob offset `src.1`), its manifest pages and
/// its manifest under `hash`.
fn store_cuts(
    manifests: &mut Table<&[u8; 32], &[u8]>,
    chunks: &mut Table<&[u8; 32], &[u8]>,
    pages: &mut Table<&[u8; 32], &[u8]>,
    hash: &BlobHash,
    size: usize,
    cuts: Vec<Cut>,
    (src, offset): (&[u8], usize),
) -> Result<Option<(u64, Layout)>> {
    let bytes = src;
    let mut layout = Vec::with_capacity(cuts.len());
    // New chunks are looked up and inserted in key order: the keys are hashes, so in
    // the file's order every insert lands on a random leaf of the table, and once the
    // tree outgrows redb's page cache each one writes a page out and reads another in
    // (most of a 100 MB file's preview, measured). In key order each leaf is visited once.
    let mut fresh: Vec<([u8; 32], &[u8])> = Vec::new();
    for cut in cuts {
        let key = match cut.key {
            Some(key) => key,
            None => {
                let from = cut.start.saturating_sub(offset);
                let piece = bytes.get(from..from + cut.len).unwrap_or_default();
                let key = *blake3::hash(piece).as_bytes();
                fresh.push((key, piece));
                key
            }
        };
        layout.push((u32::try_from(cut.len).unwrap_or(u32::MAX), key));
    }
    let mut written = insert_sorted(chunks, fresh)?;
    let mut level: Vec<[u8; 32]> = layout.iter().map(|(_, k)| *k).collect();
    let mut levels = 0u8;
    while level.len() > TOP_MAX {
        let mut above = Vec::new();
        let mut raws = Vec::new();
        for page in split_pages(&level) {
            let raw = page.concat();
            above.push(*blake3::hash(&raw).as_bytes());
            raws.push(raw);
        }
        let fresh = above.iter().copied().zip(raws.iter().map(Vec::as_slice));
        written += insert_sorted(pages, fresh.collect())?;
        level = above;
        levels += 1;
    }
    written += (level.len() * HASH) as u64;
    let manifest = Manifest::Tree {
        size: size as u64,
        levels,
        top: level,
    };
    manifests.insert(&hash.0, codec::encode(&manifest)?.as_slice())?;
    Ok(Some((written, layout)))
}

/// Insert each `(key, value)` of `fresh` that `table` lacks, in key order (each key
/// once); returns the bytes inserted.
fn insert_sorted(
    table: &mut Table<&[u8; 32], &[u8]>,
    mut fresh: Vec<([u8; 32], &[u8])>,
) -> Result<u64> {
    fresh.sort_unstable_by_key(|a| a.0);
    fresh.dedup_by(|a, b| a.0 == b.0);
    let mut written = 0;
    for (key, value) in fresh {
        if table.get(&key)?.is_none() {
            table.insert(&key, value)?;
            written += value.len() as u64;
        }
    }
    Ok(written)
}

/// FastCDC's chunks of `bytes` from `from` (a cut) to the end, after `out`.
fn cuts_from(bytes: &[u8], from: usize, mut out: Vec<Cut>) -> Vec<Cut> {
    let rest = bytes.get(from..).unwrap_or_default();
    for c in fastcdc::v2020::FastCDC::new(rest, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK) {
        out.push(Cut {
            start: from + c.offset,
            len: c.length,
            key: None,
        });
    }
    out
}

/// The chunks of `new`, reusing those of `old` (laid out as `layout`, more than one
/// chunk) outside the region where they differ: see [`put_like`].
fn cuts_like(new: &[u8], old: &[u8], layout: &Layout) -> Vec<Cut> {
    let prefix = common_prefix_len(old, new);
    let shorter = old.len().min(new.len());
    let suffix = common_suffix_len(old, new).min(shorter - prefix);
    let (mut out, at) = reused_start(layout, prefix, shorter);
    let ends = chunk_ends(layout);
    let common_end = new.len() - suffix;
    let rest = new.get(at..).unwrap_or_default();
    for c in fastcdc::v2020::FastCDC::new(rest, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK) {
        let start = at + c.offset;
        let end = start + c.length;
        out.push(Cut {
            start,
            len: c.length,
            key: None,
        });
        if end >= common_end
            && end < new.len()
            && reuse_end(&mut out, layout, &ends, end, old.len(), new.len())
        {
            return out;
        }
    }
    out
}

/// The chunks of `old` (laid out as `layout`) that are chunks of the new blob at its
/// start, and the offset after them. A chunk of `old` is a chunk of the new blob when
/// every byte its cut looked at (up to and including the one after it) is in the
/// common start (`prefix` bytes), and both had more than a largest chunk left at its
/// start (FastCDC narrows its search near the end; `shorter` is the shorter length).
fn reused_start(layout: &Layout, prefix: usize, shorter: usize) -> (Vec<Cut>, usize) {
    let mut out = Vec::new();
    let mut at = 0;
    for &(len, key) in layout {
        let (start, end) = (at, at + len as usize);
        if end >= prefix || start + MAX_CHUNK >= shorter {
            break;
        }
        out.push(Cut {
            start,
            len: len as usize,
            key: Some(key),
        });
        at = end;
    }
    (out, at)
}

/// Where each chunk of `layout` but the last ends (the index of the chunk after).
fn chunk_ends(layout: &Layout) -> Vec<usize> {
    let mut ends = Vec::with_capacity(layout.len());
    let mut end = 0usize;
    for &(len, _) in layout.iter().take(layout.len().saturating_sub(1)) {
        end += len as usize;
        ends.push(end);
    }
    ends
}

/// When a fresh cut at `end` of the new blob (of `new_len` bytes, in the common end)
/// falls where a chunk of `old` (`old_len` bytes) ends too, the rest of `old`'s
/// chunks are the new blob's: pushed onto `out`, and `true`. `new[end..]` is
/// `old[end - (new_len - old_len)..]`.
fn reuse_end(
    out: &mut Vec<Cut>,
    layout: &Layout,
    ends: &[usize],
    end: usize,
    old_len: usize,
    new_len: usize,
) -> bool {
    let old_end = end + old_len - new_len;
    let Ok(i) = ends.binary_search(&old_end) else {
        return false;
    };
    let mut start = end;
    for &(len, key) in layout.get(i + 1..).unwrap_or_default() {
        out.push(Cut {
            start,
            len: len as usize,
            key: Some(key),
        });
        start += len as usize;
    }
    true
}

/// The [`Layout`] of the stored blob whose manifest is `manifest` (empty for an inline
/// blob): its chunk list, and each chunk's length from the chunk table.
pub(crate) fn layout_of(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    manifest: &Manifest,
) -> Result<Layout> {
    let keys = resolve(pages, hash, manifest)?.chunks;
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let len =
            chunks
                .get(&key)?
                .map(|c| c.value().len())
                .ok_or_else(|| JournalError::Corrupt {
                    table: "blob_chunks",
                    message: format!("blob {hash} needs chunk {} which is missing", BlobHash(key)),
                })?;
        out.push((u32::try_from(len).unwrap_or(u32::MAX), key));
    }
    Ok(out)
}

/// The chunk hashes of the blob `hash` whose manifest is `manifest`, and the pages that
/// list them, each page checked against its key. A missing or damaged page is
/// [`JournalError::Corrupt`].
pub(crate) fn resolve(
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    manifest: &Manifest,
) -> Result<Resolved> {
    let mut out = Resolved::default();
    match manifest {
        Manifest::Inline(_) => {}
        Manifest::Chunked { chunks, .. } => out.chunks.clone_from(chunks),
        Manifest::Tree { levels, top, .. } => {
            let mut level = top.clone();
            for _ in 0..*levels {
                let mut below = Vec::new();
                for key in &level {
                    let page = read_page(pages, hash, key)?;
                    out.pages.push((*key, page.len() as u64));
                    below.extend(
                        page.chunks_exact(HASH)
                            .map(|h| <[u8; 32]>::try_from(h).unwrap_or([0; 32])),
                    );
                }
                level = below;
            }
            out.chunks = level;
        }
    }
    Ok(out)
}

/// A manifest page of blob `hash`, checked against its key `key`.
fn read_page(
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    key: &[u8; 32],
) -> Result<Vec<u8>> {
    let corrupt = |message: String| JournalError::Corrupt {
        table: "blob_pages",
        message,
    };
    let page = pages.get(key)?.ok_or_else(|| {
        corrupt(format!(
            "blob {hash} needs manifest page {} which is missing",
            BlobHash(*key)
        ))
    })?;
    let page = page.value().to_vec();
    let actual = BlobHash::of(&page);
    if actual.0 != *key || page.len() % HASH != 0 {
        return Err(corrupt(format!(
            "manifest page {} of blob {hash} holds {} bytes that hash to {actual}",
            BlobHash(*key),
            page.len()
        ))
        .into());
    }
    Ok(page)
}

/// The bytes of the blob whose manifest is `raw`, checked against `hash`: every page
/// against its key, then the whole. A chunk is hashed on its own only when the whole
/// does not match, to name the damaged chunk: the whole's hash already proves every
/// byte, and hashing each chunk as well hashed every byte twice.
pub(crate) fn assemble(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    raw: &[u8],
) -> Result<Vec<u8>> {
    let manifest = codec::decode::<Manifest>("blob_manifests", raw)?;
    let mut keys = Vec::new();
    let bytes = match manifest {
        Manifest::Inline(b) => b,
        Manifest::Chunked { size, .. } | Manifest::Tree { size, .. } => {
            keys = resolve(pages, hash, &manifest)?.chunks;
            let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(1 << 30));
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
        return Err(damaged(chunks, hash, &keys, actual)?);
    }
    Ok(bytes)
}

/// Stream the bytes of the blob whose manifest is `raw` to `sink`, chunk by chunk, in
/// order, hashing them as they go; then check the whole against `hash` as [`assemble`]
/// does (a mismatch is [`JournalError::Corrupt`], naming the damaged chunk when one
/// is). Holds one chunk and the chunk list (32 bytes a chunk), never the whole blob:
/// a commit or rollback of a large file writes its temp this way. The sink has seen
/// bytes when this fails, so a caller must discard what it wrote (a temp that is
/// removed). The sink's own error stops the stream and is returned inside `Ok`.
pub(crate) fn stream(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    raw: &[u8],
    sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<std::io::Result<()>> {
    let manifest = codec::decode::<Manifest>("blob_manifests", raw)?;
    let mut hasher = blake3::Hasher::new();
    let keys = match &manifest {
        Manifest::Inline(b) => {
            hasher.update(b);
            if let Err(e) = sink(b) {
                return Ok(Err(e));
            }
            Vec::new()
        }
        Manifest::Chunked { .. } | Manifest::Tree { .. } => {
            let keys = resolve(pages, hash, &manifest)?.chunks;
            // Chunks are gathered into pieces of up to 1 MiB: blake3 hashes a long input
            // several of its 1 KiB blocks at a time (SIMD), a 2 KiB one block by block.
            const PIECE: usize = 1 << 20;
            let mut buf = Vec::with_capacity(PIECE + MAX_CHUNK);
            for key in &keys {
                let piece = chunks.get(key)?.ok_or_else(|| JournalError::Corrupt {
                    table: "blob_chunks",
                    message: format!(
                        "blob {hash} needs chunk {} which is missing",
                        BlobHash(*key)
                    ),
                })?;
                buf.extend_from_slice(piece.value());
                if buf.len() >= PIECE {
                    hasher.update(&buf);
                    if let Err(e) = sink(&buf) {
                        return Ok(Err(e));
                    }
                    buf.clear();
                }
            }
            hasher.update(&buf);
            if let Err(e) = sink(&buf) {
                return Ok(Err(e));
            }
            keys
        }
    };
    let actual = BlobHash(*hasher.finalize().as_bytes());
    if actual != *hash {
        return Err(damaged(chunks, hash, &keys, actual)?);
    }
    Ok(Ok(()))
}

/// The error for blob `hash` whose bytes hash to `actual`: the first of its chunks
/// `keys` whose bytes do not hash to its key, else the whole.
fn damaged(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
    keys: &[[u8; 32]],
    actual: BlobHash,
) -> Result<crate::Error> {
    for key in keys {
        if let Some(piece) = chunks.get(key)? {
            let actual = BlobHash::of(piece.value());
            if actual.0 != *key {
                return Ok(JournalError::Corrupt {
                    table: "blob_chunks",
                    message: format!(
                        "chunk {} of blob {hash} holds bytes that hash to {actual}",
                        BlobHash(*key)
                    ),
                }
                .into());
            }
        }
    }
    Ok(JournalError::Corrupt {
        table: "blob_manifests",
        message: format!("blob {hash} holds bytes that hash to {actual}"),
    }
    .into())
}

/// Bytes a manifest's own chunk list occupies (32 a hash; 0 for an inline blob), and
/// its inline bytes: what `journal stats` adds to the chunks and pages.
pub(crate) fn manifest_bytes(m: &Manifest) -> u64 {
    match m {
        Manifest::Inline(b) => b.len() as u64,
        Manifest::Chunked { chunks, .. } => (chunks.len() * HASH) as u64,
        Manifest::Tree { top, .. } => (top.len() * HASH) as u64,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `n` distinct lines of text (shared with `journal::window`'s tests).
    pub(crate) fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("line {i} of the file\n").into_bytes())
            .collect()
    }

    /// The manifest as schemas v3–v6 declared it before `Inline` was a byte string.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Declared {
        Inline(Vec<u8>),
        Chunked {
            size: u64,
            chunks: Vec<[u8; 32]>,
        },
        Tree {
            size: u64,
            levels: u8,
            top: Vec<[u8; 32]>,
        },
    }

    #[test]
    fn an_inline_manifest_is_stored_exactly_as_before_it_was_a_byte_string() {
        for bytes in [Vec::new(), vec![0u8, 255, 7], lines(150)] {
            let new = codec::encode(&Manifest::Inline(bytes.clone())).unwrap();
            let old = codec::encode(&Declared::Inline(bytes.clone())).unwrap();
            assert_eq!(new, old);
            assert_eq!(
                codec::decode::<Manifest>("blob_manifests", &old).unwrap(),
                Manifest::Inline(bytes.clone())
            );
            assert_eq!(
                codec::decode::<Declared>("blob_manifests", &new).unwrap(),
                Declared::Inline(bytes)
            );
        }
        let tree = Manifest::Tree {
            size: 9,
            levels: 0,
            top: vec![[3; 32]],
        };
        let declared = Declared::Tree {
            size: 9,
            levels: 0,
            top: vec![[3; 32]],
        };
        assert_eq!(
            codec::encode(&tree).unwrap(),
            codec::encode(&declared).unwrap()
        );
    }

    #[test]
    fn a_one_line_edit_to_a_large_blob_adds_few_bytes() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            let a = lines(50_000);
            let mut b = a.clone();
            let at = b.len() / 2;
            b.splice(at..at, b"inserted line\n".iter().copied());
            let first = put(&mut m, &mut c, &mut p, &BlobHash::of(&a), &a)
                .unwrap()
                .unwrap();
            assert!(first > a.len() as u64, "chunks plus the chunk lists");
            let second = put(&mut m, &mut c, &mut p, &BlobHash::of(&b), &b)
                .unwrap()
                .unwrap();
            // Two chunks, a page per level and the top list, at most.
            assert!(
                second <= (2 * MAX_CHUNK + 2 * 2 * PAGE_MAX * HASH + TOP_MAX * HASH) as u64,
                "{second} new bytes for a one-line edit"
            );
            assert_eq!(
                put(&mut m, &mut c, &mut p, &BlobHash::of(&b), &b).unwrap(),
                None
            );
            let raw = m
                .get(&BlobHash::of(&b).0)
                .unwrap()
                .unwrap()
                .value()
                .to_vec();
            let Manifest::Tree { levels, top, .. } = codec::decode("m", &raw).unwrap() else {
                panic!("a large blob is stored as a tree");
            };
            let r = resolve(&p, &BlobHash::of(&b), &codec::decode("m", &raw).unwrap()).unwrap();
            // 1.14 MB: 420 chunks (2.7 KiB on average), one level of 18 pages.
            assert_eq!(
                (b.len(), r.chunks.len(), r.pages.len(), levels, top.len()),
                (1_138_904, 420, 18, 1, 18)
            );
            assert_eq!(assemble(&c, &p, &BlobHash::of(&b), &raw).unwrap(), b);
            let small = b"tiny".to_vec();
            assert_eq!(
                put(&mut m, &mut c, &mut p, &BlobHash::of(&small), &small).unwrap(),
                Some(4)
            );
        }
        txn.commit().unwrap();
    }

    /// `put_like` stores exactly what `put` stores (the same manifest, so the same
    /// chunks and pages), for edits at the start, middle and end, growing and
    /// shrinking, and it chunks only around the edit: its layout is `put`'s.
    #[test]
    fn a_blob_stored_like_another_is_the_blob_stored_alone() {
        let a = lines(60_000);
        let mid = a.len() / 2;
        let mut edits: Vec<Vec<u8>> = Vec::new();
        for (at, cut, text) in [
            (mid, 0, &b"inserted line\n"[..]),
            (mid, 30, b"x"),
            (mid, 5000, b""),
            (0, 0, b"first\n"),
            (3, 1, b""),
            (a.len() - 1, 1, b"!"),
            (a.len(), 0, b"appended\n"),
            (a.len() - 9000, 9000, b""),
            (10, a.len() - 20, b"almost all replaced"),
        ] {
            let mut b = a.clone();
            b.splice(at..at + cut, text.iter().copied());
            edits.push(b);
        }
        let fresh = |bytes: &[u8]| {
            let db = redb::Database::builder()
                .create_with_backend(redb::backends::InMemoryBackend::new())
                .unwrap();
            let txn = db.begin_write().unwrap();
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            let h = BlobHash::of(bytes);
            let (_, layout) = put_like(&mut m, &mut c, &mut p, &h, bytes, None)
                .unwrap()
                .unwrap();
            let raw = m.get(&h.0).unwrap().unwrap().value().to_vec();
            (raw, layout)
        };
        let (_, layout_a) = fresh(&a);
        for (n, b) in edits.iter().enumerate() {
            let (raw_alone, layout_alone) = fresh(b);
            let db = redb::Database::builder()
                .create_with_backend(redb::backends::InMemoryBackend::new())
                .unwrap();
            let txn = db.begin_write().unwrap();
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            put(&mut m, &mut c, &mut p, &BlobHash::of(&a), &a).unwrap();
            let h = BlobHash::of(b);
            let (written, layout) = put_like(&mut m, &mut c, &mut p, &h, b, Some((&a, &layout_a)))
                .unwrap()
                .unwrap();
            let raw = m.get(&h.0).unwrap().unwrap().value().to_vec();
            assert_eq!(raw, raw_alone, "edit {n}: another manifest");
            assert_eq!(layout, layout_alone, "edit {n}: another layout");
            assert_eq!(assemble(&c, &p, &h, &raw).unwrap(), *b, "edit {n}");
            let m2: Manifest = codec::decode("m", &raw).unwrap();
            assert_eq!(layout_of(&c, &p, &h, &m2).unwrap(), layout, "edit {n}");
            if n < 3 {
                assert!(
                    written < 64 << 10,
                    "edit {n}: {written} bytes for a small edit"
                );
            }
        }
    }

    /// `put_spliced` (a candidate as its base with one region replaced) stores exactly
    /// what `put` of the assembled bytes stores — the same manifest, layout and bytes —
    /// for regions at the start, middle and end, growing, shrinking, and one that
    /// replaces almost all of the base (which falls back to assembling it).
    #[test]
    fn a_spliced_blob_is_the_blob_stored_alone() {
        let a = lines(60_000);
        let mid = a.len() / 2;
        let fresh_db = || {
            redb::Database::builder()
                .create_with_backend(redb::backends::InMemoryBackend::new())
                .unwrap()
        };
        let db = fresh_db();
        let txn = db.begin_write().unwrap();
        let layout_a = {
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            put_like(&mut m, &mut c, &mut p, &BlobHash::of(&a), &a, None)
                .unwrap()
                .unwrap()
                .1
        };
        drop(txn);
        for (n, (start, end, text)) in [
            (mid, mid, &b"inserted line\n"[..]),
            (mid, mid + 30, b"x"),
            (mid, mid + 5000, b""),
            (0, 0, b"first\n"),
            (3, 4, b""),
            (a.len() - 1, a.len(), b"!"),
            (a.len(), a.len(), b"appended\n"),
            (a.len() - 9000, a.len(), b""),
            (10, a.len() - 10, b"almost all replaced"),
            (mid, mid + 2, &[b'y'; 3 << 20][..]),
        ]
        .into_iter()
        .enumerate()
        {
            let spliced = SplicedBytes {
                base: &a,
                start,
                end,
                text,
            };
            let b = spliced.range(0, spliced.len());
            let mut want = a.clone();
            want.splice(start..end, text.iter().copied());
            assert_eq!(b, want, "edit {n}: range");
            assert_eq!(spliced.range(5, 17), want[5..17], "edit {n}: a piece");
            let h = BlobHash::of(&b);
            let alone = fresh_db();
            let txn = alone.begin_write().unwrap();
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            let (_, layout_alone) = put_like(&mut m, &mut c, &mut p, &h, &b, None)
                .unwrap()
                .unwrap();
            let raw_alone = m.get(&h.0).unwrap().unwrap().value().to_vec();
            let db = fresh_db();
            let txn = db.begin_write().unwrap();
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            put(&mut m, &mut c, &mut p, &BlobHash::of(&a), &a).unwrap();
            let (written, layout) = put_spliced(&mut m, &mut c, &mut p, &h, spliced, &layout_a)
                .unwrap()
                .unwrap();
            let raw = m.get(&h.0).unwrap().unwrap().value().to_vec();
            assert_eq!(raw, raw_alone, "edit {n}: another manifest");
            assert_eq!(layout, layout_alone, "edit {n}: another layout");
            assert_eq!(assemble(&c, &p, &h, &raw).unwrap(), b, "edit {n}");
            if n < 3 {
                assert!(
                    written < 64 << 10,
                    "edit {n}: {written} bytes for a small edit"
                );
            }
            // Stored once: a second store writes nothing.
            assert_eq!(
                put_spliced(&mut m, &mut c, &mut p, &h, spliced, &layout_a).unwrap(),
                None
            );
        }
    }

    #[test]
    fn pages_are_content_defined_bounded_and_cover_the_list() {
        let list: Vec<[u8; 32]> = (0u32..5000)
            .map(|i| *blake3::hash(&i.to_le_bytes()).as_bytes())
            .collect();
        let pages = split_pages(&list);
        assert_eq!(pages.concat(), list);
        let last = pages.len() - 1;
        for (i, p) in pages.iter().enumerate() {
            assert!(p.len() <= PAGE_MAX);
            assert!(i == last || p.len() >= PAGE_MIN);
        }
        // Replacing one hash in the middle changes the page holding it (and, when the
        // new hash moves a boundary, its neighbour), never the pages after those.
        let mut edited = list.clone();
        edited[2500] = *blake3::hash(b"new chunk").as_bytes();
        let after = split_pages(&edited);
        let old: std::collections::BTreeSet<_> = pages.iter().map(|p| p.to_vec()).collect();
        let new = after.iter().filter(|p| !old.contains(**p)).count();
        assert!((1..=2).contains(&new), "{new} new pages");
        // Even when every hash could end a page, a level at least halves.
        let all_ends: Vec<[u8; 32]> = (0u32..)
            .map(|i| *blake3::hash(&i.to_le_bytes()).as_bytes())
            .filter(ends_page)
            .take(100)
            .collect();
        assert_eq!(split_pages(&all_ends).len(), 50);
    }

    #[test]
    fn a_damaged_page_or_chunk_is_corrupt_never_wrong_bytes() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        let mut m = txn.open_table(MANIFESTS).unwrap();
        let mut c = txn.open_table(CHUNKS).unwrap();
        let mut p = txn.open_table(PAGES).unwrap();
        let a = lines(50_000);
        let h = BlobHash::of(&a);
        put(&mut m, &mut c, &mut p, &h, &a).unwrap();
        let raw = m.get(&h.0).unwrap().unwrap().value().to_vec();
        let manifest: Manifest = codec::decode("m", &raw).unwrap();
        let r = resolve(&p, &h, &manifest).unwrap();
        // Damage one page: its bytes no longer hash to its key.
        let (page, _) = r.pages[0];
        let mut bad = p.get(&page).unwrap().unwrap().value().to_vec();
        bad[0] ^= 1;
        p.insert(&page, bad.as_slice()).unwrap();
        let err = assemble(&c, &p, &h, &raw).unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::Journal(JournalError::Corrupt {
                    table: "blob_pages",
                    ..
                })
            ),
            "{err:?}"
        );
        bad[0] ^= 1;
        p.insert(&page, bad.as_slice()).unwrap();
        // Damage one chunk.
        let chunk = r.chunks[3];
        let mut bad = c.get(&chunk).unwrap().unwrap().value().to_vec();
        bad[0] ^= 1;
        c.insert(&chunk, bad.as_slice()).unwrap();
        let err = assemble(&c, &p, &h, &raw).unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::Journal(JournalError::Corrupt {
                    table: "blob_chunks",
                    ..
                })
            ),
            "{err:?}"
        );
        // A missing page.
        bad[0] ^= 1;
        c.insert(&chunk, bad.as_slice()).unwrap();
        p.remove(&page).unwrap();
        let err = assemble(&c, &p, &h, &raw).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
