//! The window of two stored blobs around where they differ, read from their chunk
//! lists without assembling either blob: what a rollback of a large file diffs
//! (docs/benchmarks.md, "Peak memory").
//!
//! Two blobs chunked by the same FastCDC parameters share their chunks (by hash)
//! before the first edit and after the last one. The chunks they share at the start
//! and at the end are equal bytes; only the chunks between them differ. The window is
//! those chunks' bytes, widened on both sides to whole lines with
//! [`CONTEXT`] more lines of context each way, so a diff of the two windows has the
//! hunks of a diff of the two whole blobs (`edit::window_diff`). The shared start and
//! end are read once, chunk by chunk, for what the diff needs of them: the number of
//! lines before the window and whether they are UTF-8.

use redb::ReadableTable;

use crate::error::{JournalError, Result};
use crate::journal::blobs::{self, Manifest};
use crate::journal::codec;
use crate::journal::records::BlobHash;

/// Lines of context kept on each side of the differing chunks: one more than the
/// diff's 3, so a hunk's context never reaches past the window.
pub const CONTEXT: usize = 4;

/// Bytes at the start of a blob that decide whether it is binary (git's heuristic, as
/// `edit::diff::is_binary`).
const SNIFF: usize = 8000;

/// The part of two blobs around where they differ (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobWindow {
    /// The old blob's bytes from `start` to a line start (or its end).
    pub old: Vec<u8>,
    /// The new blob's bytes from `start` to the same suffix's start (or its end).
    pub new: Vec<u8>,
    /// Byte offset of the window in both blobs (a line start; the bytes before it are
    /// equal).
    pub start: u64,
    /// Lines before the window (newlines in the bytes before `start`).
    pub lines_before: usize,
    /// True when the bytes outside the window (equal in both blobs) are valid UTF-8.
    pub outside_utf8: bool,
    /// True when the first 8000 bytes of either blob hold a NUL byte.
    pub binary: bool,
    /// Each blob's whole size in bytes: (old, new).
    pub sizes: (u64, u64),
}

impl BlobWindow {
    /// The window as the diff reads it ([`crate::edit::window_diff`]), borrowing its
    /// bytes.
    pub fn as_diff_window(&self) -> crate::edit::DiffWindow<'_> {
        crate::edit::DiffWindow {
            old: &self.old,
            new: &self.new,
            lines_before: self.lines_before,
            outside_utf8: self.outside_utf8,
            binary: self.binary,
            sizes: self.sizes,
        }
    }
}

/// The window of `old` and `new` (see [`BlobWindow`]); `None` when either is stored
/// inline (small) or they are equal. A blob not stored is
/// [`JournalError::Missing`]; a missing chunk or page is [`JournalError::Corrupt`].
///
/// The window's own chunks are checked against their keys; the shared start and end
/// are only scanned (newlines, UTF-8), not hashed: they are counted, never shown.
///
/// With `disk` — a reader of a file that should hold `old` (it calls its argument with
/// the file's bytes in order, and returns whether it could read them) — the shared
/// start and end are scanned from the file instead of the journal ([`DiskScan`]), and
/// the whole file is hashed as it is read and must be `old`, else the journal is read
/// as without `disk` (a file that changed meanwhile never gives a wrong window). A
/// caller that reads the file anyway (a rollback's check of it) feeds the scan from
/// its own read instead: [`plan`], [`WindowPlan::disk_scan`], [`WindowPlan::finish`].
pub(crate) fn window(
    manifests: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    old: &BlobHash,
    new: &BlobHash,
    disk: Option<DiskRead<'_>>,
) -> Result<Option<BlobWindow>> {
    let Some(plan) = plan(manifests, chunks, pages, old, new)? else {
        return Ok(None);
    };
    let scanned = disk.and_then(|read| {
        let mut scan = plan.disk_scan();
        let mut hasher = blake3::Hasher::new();
        let ok = read(&mut |piece| {
            hasher.update(piece);
            scan.feed(piece);
        });
        scan.proven(ok, &BlobHash(*hasher.finalize().as_bytes()))
    });
    plan.finish(chunks, scanned).map(Some)
}

/// What [`window`] reads from the journal before the shared start and end are read:
/// both blobs' chunk lists, how many chunks they share at the start and at the end,
/// and the differing chunks' bytes (each checked against its key). Memory: the chunk
/// lists (32 bytes a chunk) and the differing chunks, not the blobs.
#[derive(Debug)]
pub(crate) struct WindowPlan {
    old: BlobHash,
    new: BlobHash,
    sizes: (u64, u64),
    old_keys: Vec<[u8; 32]>,
    new_keys: Vec<[u8; 32]>,
    head: usize,
    tail: usize,
    old_mid: Vec<u8>,
    new_mid: Vec<u8>,
}

/// The [`WindowPlan`] of `old` and `new`; `None` when either is stored inline or they
/// are equal (no window). Errors as [`window`]'s.
pub(crate) fn plan(
    manifests: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    old: &BlobHash,
    new: &BlobHash,
) -> Result<Option<WindowPlan>> {
    if old == new {
        return Ok(None);
    }
    let (Some((old_size, old_keys)), Some((new_size, new_keys))) = (
        chunk_list(manifests, pages, old)?,
        chunk_list(manifests, pages, new)?,
    ) else {
        return Ok(None);
    };
    let shortest = old_keys.len().min(new_keys.len());
    let head = old_keys
        .iter()
        .zip(&new_keys)
        .take_while(|(a, b)| a == b)
        .count();
    let tail = old_keys
        .iter()
        .rev()
        .zip(new_keys.iter().rev())
        .take(shortest - head)
        .take_while(|(a, b)| a == b)
        .count();
    // The differing chunks, each checked against its key.
    let mut old_mid = Vec::new();
    for key in &old_keys[head..old_keys.len() - tail] {
        old_mid.extend_from_slice(&read_chunk(chunks, old, key)?);
    }
    let mut new_mid = Vec::new();
    for key in &new_keys[head..new_keys.len() - tail] {
        new_mid.extend_from_slice(&read_chunk(chunks, new, key)?);
    }
    Ok(Some(WindowPlan {
        old: *old,
        new: *new,
        sizes: (old_size, new_size),
        old_keys,
        new_keys,
        head,
        tail,
        old_mid,
        new_mid,
    }))
}

impl WindowPlan {
    /// A scan of a file that should hold the old blob, to be fed its bytes in order
    /// ([`DiskScan::feed`]).
    pub(crate) fn disk_scan(&self) -> DiskScan {
        DiskScan::new(self.head, self.old_mid.len() as u64, self.old, self.sizes.0)
    }

    /// The window: the shared start and end from `scanned` (a file proven to hold the
    /// old blob, [`DiskScan::proven`], by a scan of this plan's), else read chunk by
    /// chunk from the journal.
    /// Errors: a missing chunk is [`JournalError::Corrupt`], and the journal's.
    pub(crate) fn finish(
        self,
        chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
        scanned: Option<Scanned>,
    ) -> Result<BlobWindow> {
        let WindowPlan {
            old,
            new,
            sizes,
            old_keys,
            new_keys,
            head,
            tail,
            old_mid,
            new_mid,
        } = self;
        let mine = |s: &Scanned| (s.old, s.head, s.mid) == (old, head, old_mid.len() as u64);
        let (before, after) = match scanned.filter(mine) {
            Some(Scanned { before, after, .. }) => (before, after),
            None => {
                // The shared start: counted, and its last lines kept.
                let mut before = Before::default();
                for key in &old_keys[..head] {
                    let bytes = chunks.get(key)?.ok_or_else(|| missing(&old, key))?;
                    before.push(bytes.value());
                }
                // The shared end: its first lines kept, the rest checked for UTF-8.
                let mut after = After::default();
                for key in &old_keys[old_keys.len() - tail..] {
                    let bytes = chunks.get(key)?.ok_or_else(|| missing(&old, key))?;
                    after.push(bytes.value());
                }
                (before, after)
            }
        };
        // The first 8000 bytes of each: shared when the shared start is that long.
        let binary = if before.sniffed.len() >= SNIFF {
            before.sniffed.contains(&0)
        } else {
            first_bytes(chunks, &old, &old_keys)?.contains(&0)
                || first_bytes(chunks, &new, &new_keys)?.contains(&0)
        };
        let mut old_window = before.kept.clone();
        old_window.extend_from_slice(&old_mid);
        old_window.extend_from_slice(&after.kept);
        let mut new_window = before.kept;
        new_window.extend_from_slice(&new_mid);
        new_window.extend_from_slice(&after.kept);
        Ok(BlobWindow {
            old: old_window,
            new: new_window,
            start: before.kept_from,
            lines_before: before.dropped_lines,
            outside_utf8: before.utf8.valid(true) && after.utf8.valid(false),
            binary,
            sizes,
        })
    }
}

/// A reader of a file on disk for [`window`]: calls its argument with the file's bytes
/// in order; returns whether it read the whole file (a regular file).
pub(crate) type DiskRead<'a> = &'a mut dyn FnMut(&mut dyn FnMut(&[u8])) -> bool;

/// The shared start and end of a [`WindowPlan`] scanned from a file proven to hold its
/// old blob ([`DiskScan::proven`]), for [`WindowPlan::finish`].
#[derive(Debug)]
pub(crate) struct Scanned {
    before: Before,
    after: After,
    /// The plan scanned for: its old blob, shared chunks at the start and differing
    /// bytes of the old blob (a scan stands only for its own plan).
    old: BlobHash,
    head: usize,
    mid: u64,
}

/// The shared start and end of [`window`] scanned from the file on disk, which should
/// hold the old blob: the first `head` chunks are cut from its bytes as they come
/// (FastCDC's boundary search, the parameters of `journal::blobs`) and go to
/// [`Before`]; once their end `a` is known, the bytes from `a + mid` (the differing
/// chunks' length) go to [`After`]. The scan does not hash: whoever reads the file
/// hashes the same bytes as it feeds them, and [`DiskScan::proven`] takes that hash.
/// Memory: a piece of the file and one chunk carried, the kept lines.
#[derive(Debug)]
pub(crate) struct DiskScan {
    head: usize,
    mid: u64,
    cut: usize,
    /// Bytes read but not yet cut, from offset `carry_at`.
    carry: Vec<u8>,
    carry_at: u64,
    /// Where the shared start ends, once found.
    a: Option<u64>,
    /// Bytes read so far.
    total: u64,
    before: Before,
    after: After,
    masks: (u64, u64),
    /// The blob the file should hold, and its size in bytes.
    old: BlobHash,
    size: u64,
}

impl DiskScan {
    fn new(head: usize, mid: u64, old: BlobHash, size: u64) -> DiskScan {
        DiskScan {
            head,
            mid,
            cut: 0,
            carry: Vec::new(),
            carry_at: 0,
            a: (head == 0).then_some(0),
            total: 0,
            before: Before::default(),
            after: After::default(),
            masks: fastcdc::v2020::select_masks(
                blobs::AVG_CHUNK,
                fastcdc::v2020::Normalization::Level1,
            ),
            old,
            size,
        }
    }

    /// `bytes` of the file at offset `at`, the shared start's end known: the part from
    /// the shared end's start goes to [`After`].
    fn route_after(after: &mut After, shared_end: u64, bytes: &[u8], at: u64) {
        let end = at + bytes.len() as u64;
        if end <= shared_end {
            return;
        }
        let skip = usize::try_from(shared_end.saturating_sub(at)).unwrap_or(usize::MAX);
        after.push(bytes.get(skip..).unwrap_or_default());
    }

    /// The next piece of the file, in order.
    pub(crate) fn feed(&mut self, piece: &[u8]) {
        self.feed_or_end(piece, false);
    }

    /// The next piece of the file (`end`: there is no more; `piece` is then empty).
    fn feed_or_end(&mut self, piece: &[u8], end: bool) {
        let at = self.total;
        self.total += piece.len() as u64;
        if let Some(a) = self.a {
            Self::route_after(&mut self.after, a + self.mid, piece, at);
            return;
        }
        self.carry.extend_from_slice(piece);
        let mut pos = 0;
        while self.cut < self.head {
            let left = self.carry.len() - pos;
            if left == 0 || (left < blobs::MAX_CHUNK && !end) {
                break;
            }
            let (_, len) = fastcdc::v2020::cut(
                &self.carry[pos..pos + left.min(blobs::MAX_CHUNK)],
                blobs::MIN_CHUNK,
                blobs::AVG_CHUNK,
                blobs::MAX_CHUNK,
                self.masks.0,
                self.masks.1,
                self.masks.0 << 1,
                self.masks.1 << 1,
            );
            pos += len.max(1);
            self.cut += 1;
        }
        self.before.push(&self.carry[..pos]);
        if self.cut == self.head {
            let a = self.carry_at + pos as u64;
            self.a = Some(a);
            Self::route_after(&mut self.after, a + self.mid, &self.carry[pos..], a);
            self.carry = Vec::new();
        } else {
            self.carry.drain(..pos);
            self.carry_at += pos as u64;
        }
    }

    /// The scanned shared start and end, once every byte of the file was fed: `read`,
    /// the file was read whole (a regular file); `hash`, the blake3 of exactly the
    /// bytes fed, which the caller computed as it fed them. `Some` only when the shared
    /// start was found and the bytes are the old blob (its hash and size); else `None`,
    /// and the window is read from the journal.
    pub(crate) fn proven(mut self, read: bool, hash: &BlobHash) -> Option<Scanned> {
        self.feed_or_end(&[], true);
        let whole = read && self.a.is_some() && self.total == self.size;
        (whole && *hash == self.old).then_some(Scanned {
            before: self.before,
            after: self.after,
            old: self.old,
            head: self.head,
            mid: self.mid,
        })
    }
}

/// The first [`SNIFF`] bytes (or fewer, all there are) of the blob `blob` whose chunks
/// are `keys`.
fn first_bytes(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    blob: &BlobHash,
    keys: &[[u8; 32]],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(SNIFF + blobs::MAX_CHUNK);
    for key in keys {
        if out.len() >= SNIFF {
            break;
        }
        out.extend_from_slice(&read_chunk(chunks, blob, key)?);
    }
    out.truncate(SNIFF);
    Ok(out)
}

/// A blob's size and chunk list; `None` for an inline blob.
fn chunk_list(
    manifests: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    hash: &BlobHash,
) -> Result<Option<(u64, Vec<[u8; 32]>)>> {
    let raw = manifests
        .get(&hash.0)?
        .ok_or_else(|| JournalError::Missing {
            what: format!("blob {hash}"),
        })?;
    let manifest = codec::decode::<Manifest>("blob_manifests", raw.value())?;
    let size = match &manifest {
        Manifest::Inline(_) => return Ok(None),
        Manifest::Chunked { size, .. } | Manifest::Tree { size, .. } => *size,
    };
    Ok(Some((size, blobs::resolve(pages, hash, &manifest)?.chunks)))
}

/// The chunk `key` of blob `blob`, checked against its key.
fn read_chunk(
    chunks: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
    blob: &BlobHash,
    key: &[u8; 32],
) -> Result<Vec<u8>> {
    let bytes = chunks
        .get(key)?
        .ok_or_else(|| missing(blob, key))?
        .value()
        .to_vec();
    let actual = BlobHash::of(&bytes);
    if actual.0 != *key {
        return Err(JournalError::Corrupt {
            table: "blob_chunks",
            message: format!(
                "chunk {} of blob {blob} holds bytes that hash to {actual}",
                BlobHash(*key)
            ),
        }
        .into());
    }
    Ok(bytes)
}

fn missing(blob: &BlobHash, key: &[u8; 32]) -> crate::Error {
    JournalError::Corrupt {
        table: "blob_chunks",
        message: format!(
            "blob {blob} needs chunk {} which is missing",
            BlobHash(*key)
        ),
    }
    .into()
}

/// UTF-8 validation of bytes that arrive in pieces: a character cut between two
/// pieces is carried into the next.
#[derive(Debug, Default)]
struct Utf8Stream {
    carry: Vec<u8>,
    invalid: bool,
}

impl Utf8Stream {
    fn push(&mut self, mut piece: &[u8]) {
        if self.invalid {
            return;
        }
        if !self.carry.is_empty() {
            // 1–3 bytes of a character were carried; complete it from the piece.
            let had = self.carry.len();
            let take = piece.len().min(4 - had);
            self.carry.extend_from_slice(&piece[..take]);
            let (valid, cut) = match std::str::from_utf8(&self.carry) {
                Ok(_) => (self.carry.len(), false),
                Err(e) => (e.valid_up_to(), e.error_len().is_none()),
            };
            if valid <= had {
                // Not complete: still cut (the piece was shorter than it), or broken.
                if !(cut && take == piece.len()) {
                    self.invalid = true;
                }
                return;
            }
            piece = &piece[valid - had..];
            self.carry.clear();
        }
        match std::str::from_utf8(piece) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                self.carry = piece[e.valid_up_to()..].to_vec();
            }
            Err(_) => self.invalid = true,
        }
    }

    /// Whether everything pushed was UTF-8; `cut_ok`: a character cut at the end
    /// counts as valid (the bytes after it are checked elsewhere).
    fn valid(&self, cut_ok: bool) -> bool {
        !self.invalid && (cut_ok || self.carry.is_empty())
    }
}

/// The shared start, chunk by chunk: its first 8000 bytes, its UTF-8, and its last
/// [`CONTEXT`] lines (from a line start) with the lines before them counted.
#[derive(Debug, Default)]
struct Before {
    sniffed: Vec<u8>,
    utf8: Utf8Stream,
    kept: Vec<u8>,
    /// Offset of `kept` in the blob.
    kept_from: u64,
    /// Newlines in `kept`.
    kept_lines: usize,
    /// Newlines before `kept`.
    dropped_lines: usize,
}

impl Before {
    fn push(&mut self, piece: &[u8]) {
        if self.sniffed.len() < SNIFF {
            let take = piece.len().min(SNIFF - self.sniffed.len());
            self.sniffed.extend_from_slice(&piece[..take]);
        }
        self.utf8.push(piece);
        self.kept.extend_from_slice(piece);
        self.kept_lines += memchr::memchr_iter(b'\n', piece).count();
        if self.kept_lines > CONTEXT {
            // Keep from just after the CONTEXT-th newline from the end.
            let cut = memchr::memrchr_iter(b'\n', &self.kept)
                .nth(CONTEXT)
                .map_or(0, |i| i + 1);
            self.kept.drain(..cut);
            self.kept_from += cut as u64;
            self.dropped_lines += self.kept_lines - CONTEXT;
            self.kept_lines = CONTEXT;
        }
    }
}

/// The shared end, chunk by chunk: its bytes up to and including the [`CONTEXT`]-th
/// newline (kept), then the UTF-8 of the rest.
#[derive(Debug, Default)]
struct After {
    kept: Vec<u8>,
    kept_lines: usize,
    utf8: Utf8Stream,
}

impl After {
    fn push(&mut self, mut piece: &[u8]) {
        if self.kept_lines < CONTEXT {
            let need = CONTEXT - self.kept_lines;
            match memchr::memchr_iter(b'\n', piece).nth(need - 1) {
                Some(i) => {
                    self.kept.extend_from_slice(&piece[..=i]);
                    self.kept_lines = CONTEXT;
                    piece = &piece[i + 1..];
                }
                None => {
                    self.kept_lines += memchr::memchr_iter(b'\n', piece).count();
                    self.kept.extend_from_slice(piece);
                    return;
                }
            }
        }
        self.utf8.push(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::blobs::tests::lines;
    use crate::journal::blobs::{put, CHUNKS, MANIFESTS, PAGES};

    /// The window diff of `a` and `b` stored as blobs, or `None` where the window
    /// cannot give it; and their whole diff.
    fn both_diffs(
        a: &[u8],
        b: &[u8],
    ) -> (
        Option<crate::edit::CandidateDiff>,
        crate::edit::CandidateDiff,
    ) {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        let mut m = txn.open_table(MANIFESTS).unwrap();
        let mut c = txn.open_table(CHUNKS).unwrap();
        let mut p = txn.open_table(PAGES).unwrap();
        let (ha, hb) = (BlobHash::of(a), BlobHash::of(b));
        put(&mut m, &mut c, &mut p, &ha, a).unwrap();
        put(&mut m, &mut c, &mut p, &hb, b).unwrap();
        let w = window(&m, &c, &p, &ha, &hb, None).unwrap().unwrap();
        // The shared start and end scanned from a file holding `a` (in pieces that cut
        // lines, chunks and characters) give the same window; a file that is not `a`
        // (a byte changed, a byte more) falls back to the journal: the same again.
        let mut changed = a.to_vec();
        changed[a.len() / 3] ^= 0x20;
        let mut longer = a.to_vec();
        longer.push(b'\n');
        for (disk, piece) in [
            (a, 65_537),
            (a, 1 << 20),
            (a, 999),
            (&changed[..], 65_537),
            (&longer[..], 4096),
        ] {
            let mut read = |sink: &mut dyn FnMut(&[u8])| {
                disk.chunks(piece).for_each(&mut *sink);
                true
            };
            let scanned = window(&m, &c, &p, &ha, &hb, Some(&mut read))
                .unwrap()
                .unwrap();
            assert_eq!(scanned, w, "read from a disk file in pieces of {piece}");
        }
        // Without the shared chunks in the journal, the file holding `a` still gives the
        // window (it was scanned from the file), and a changed file cannot (the journal
        // is read, and the chunks are missing).
        let keys = |h: &BlobHash| {
            let raw = m.get(&h.0).unwrap().unwrap().value().to_vec();
            let manifest = crate::journal::codec::decode("m", &raw).unwrap();
            crate::journal::blobs::resolve(&p, h, &manifest)
                .unwrap()
                .chunks
        };
        let (ka, kb) = (keys(&ha), keys(&hb));
        let head = ka.iter().zip(&kb).take_while(|(x, y)| x == y).count();
        let short = ka.len().min(kb.len());
        let tail = ka
            .iter()
            .rev()
            .zip(kb.iter().rev())
            .take(short - head)
            .take_while(|(x, y)| x == y)
            .count();
        let mid: std::collections::HashSet<_> = ka[head..ka.len() - tail]
            .iter()
            .chain(&kb[head..kb.len() - tail])
            .copied()
            .collect();
        let mut saved = Vec::new();
        // (The first 8 chunks, 8000 bytes or more, are kept: when the shared start is
        // shorter, the binary sniff reads them from the journal.)
        let sniffed: std::collections::HashSet<_> = ka.iter().chain(&kb).take(8).copied().collect();
        for k in ka[..head].iter().chain(&ka[ka.len() - tail..]) {
            if !mid.contains(k) && !sniffed.contains(k) {
                if let Some(v) = c.remove(k).unwrap() {
                    saved.push((*k, v.value().to_vec()));
                }
            }
        }
        if !saved.is_empty() {
            let mut read = |sink: &mut dyn FnMut(&[u8])| {
                a.chunks(70_001).for_each(&mut *sink);
                true
            };
            let scanned = window(&m, &c, &p, &ha, &hb, Some(&mut read));
            assert_eq!(scanned.unwrap().unwrap(), w, "scanned from the file");
            let mut read = |sink: &mut dyn FnMut(&[u8])| {
                sink(&changed);
                true
            };
            assert!(window(&m, &c, &p, &ha, &hb, Some(&mut read)).is_err());
        }
        for (k, v) in saved {
            c.insert(&k, v.as_slice()).unwrap();
        }
        assert_eq!(w.sizes, (a.len() as u64, b.len() as u64));
        let start = w.start as usize;
        assert_eq!(
            w.lines_before,
            memchr::memchr_iter(b'\n', &a[..start]).count()
        );
        assert_eq!(&a[start..start + w.old.len()], &w.old[..]);
        assert_eq!(&b[start..start + w.new.len()], &w.new[..]);
        assert_eq!(a[start + w.old.len()..], b[start + w.new.len()..]);
        // A window, not the file: the edits here lie within a few lines.
        assert!(w.old.len() < 64 << 10, "a window of {} bytes", w.old.len());
        let windowed = crate::edit::window_diff("f.txt", &w.as_diff_window());
        (
            windowed,
            crate::edit::candidate_diff("f.txt", Some(a), Some(b)),
        )
    }

    /// The diff of a window read from the chunks is the whole files' diff, byte for
    /// byte: edits at the start, the middle and the end, a line equal to its
    /// neighbours, CRLF, invalid UTF-8 inside and outside the window, a file without a
    /// final newline; and a NUL byte in the first 8000 bytes leaves it to the whole diff.
    #[test]
    fn a_window_of_the_chunks_gives_the_whole_files_diff() {
        let a = lines(60_000);
        let mid = a.len() / 2;
        let at_line = |n: usize| memchr::memchr_iter(b'\n', &a).nth(n - 1).unwrap() + 1;
        let mut cases: Vec<(&str, Vec<u8>, Vec<u8>)> = Vec::new();
        let mut edit = |name, base: &[u8], at: usize, cut: usize, text: &[u8]| {
            let mut b = base.to_vec();
            b.splice(at..at + cut, text.iter().copied());
            cases.push((name, base.to_vec(), b));
        };
        edit("one line", &a, at_line(30_000), 5, b"LINE");
        edit("inserted line", &a, mid, 0, b"inserted\n");
        edit("first line", &a, 0, 4, b"first");
        edit("line 2", &a, at_line(1), 22, b"two\n");
        edit("last line", &a, a.len() - 3, 3, b"END\n");
        edit("no final newline", &a, a.len() - 1, 1, b"");
        edit("crlf", &a, at_line(40_000) - 1, 0, b"\r");
        edit("invalid inside", &a, at_line(20_000), 0, b"\xff\n");
        let dup = &a[at_line(10_000)..at_line(10_001)];
        edit("a line equal to its neighbour", &a, at_line(10_000), 0, dup);
        let mut bad = a.clone();
        bad[at_line(100) + 2] = 0xc3;
        edit("invalid outside", &bad, at_line(50_000), 4, b"");
        let mut accented = a.clone();
        accented.splice(at_line(5)..at_line(5), "ééé ✓ 𝄞\n".bytes());
        edit(
            "utf-8 before",
            &accented,
            at_line(45_000),
            4,
            "é".as_bytes(),
        );
        edit("two places", &a, at_line(30_000), 0, b"x");
        let (windowed, whole) = {
            let mut b = a.clone();
            b[100] = 0;
            both_diffs(&a, &b)
        };
        assert!(whole.binary && windowed.is_none(), "{whole:?}");
        for (name, base, b) in &mut cases {
            if *name == "two places" {
                b.splice(at_line(30_010)..at_line(30_010), b"y\n".iter().copied());
            }
            let (windowed, whole) = both_diffs(base, b);
            assert!(!whole.unified.is_empty(), "{name}");
            assert_eq!(windowed.as_ref(), Some(&whole), "{name}");
        }
    }

    /// A scan fed a file proven to hold one plan's old blob stands only for that plan:
    /// handed to another plan's `finish`, it is not used (that window is read from the
    /// journal), and the plan's own scan gives the journal's window too.
    #[test]
    fn a_scan_stands_only_for_its_own_plan() {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        let mut m = txn.open_table(MANIFESTS).unwrap();
        let mut c = txn.open_table(CHUNKS).unwrap();
        let mut p = txn.open_table(PAGES).unwrap();
        let a = lines(40_000);
        let edit = |base: &[u8], at: usize| {
            let mut b = base.to_vec();
            b.splice(at..at, b"an inserted line\n".iter().copied());
            b
        };
        let at = |n: usize| memchr::memchr_iter(b'\n', &a).nth(n - 1).unwrap() + 1;
        let (b, a2) = (edit(&a, at(10_000)), edit(&a, at(30_000)));
        let b2 = edit(&a2, at(20_000));
        for x in [&a, &b, &a2, &b2] {
            put(&mut m, &mut c, &mut p, &BlobHash::of(x), x).unwrap();
        }
        let (ha, hb, ha2, hb2) = (
            BlobHash::of(&a),
            BlobHash::of(&b),
            BlobHash::of(&a2),
            BlobHash::of(&b2),
        );
        let scanned = |plan: &WindowPlan, file: &[u8]| {
            let mut scan = plan.disk_scan();
            file.chunks(1 << 20).for_each(|piece| scan.feed(piece));
            scan.proven(true, &BlobHash::of(file))
        };
        let plan1 = plan(&m, &c, &p, &ha, &hb).unwrap().unwrap();
        let plan2 = plan(&m, &c, &p, &ha2, &hb2).unwrap().unwrap();
        let from_a = scanned(&plan1, &a);
        assert!(from_a.is_some(), "the file holding a is proven");
        assert!(scanned(&plan1, &a2).is_none(), "a2 is not a");
        let want2 = window(&m, &c, &p, &ha2, &hb2, None).unwrap().unwrap();
        assert_eq!(plan2.finish(&c, from_a).unwrap(), want2);
        let want1 = window(&m, &c, &p, &ha, &hb, None).unwrap().unwrap();
        let plan1 = plan(&m, &c, &p, &ha, &hb).unwrap().unwrap();
        let own = scanned(&plan1, &a);
        assert_eq!(plan1.finish(&c, own).unwrap(), want1);
    }

    fn utf8_in_pieces(bytes: &[u8], size: usize) -> bool {
        let mut s = Utf8Stream::default();
        for piece in bytes.chunks(size) {
            s.push(piece);
        }
        s.valid(false)
    }

    #[test]
    fn utf8_checked_in_pieces_agrees_with_the_whole() {
        let cases: [&[u8]; 7] = [
            "héllo wörld ✓ 𝄞 end".as_bytes(),
            b"plain ascii",
            b"bad \xff byte",
            b"cut at end \xe2\x9c",
            b"\xe2\x9c\x93\xf0\x9d\x84\x9e\xc3\xa9",
            b"\xe2\x9c\x41",
            b"\xc3\xa9\xc3",
        ];
        for bytes in cases {
            let whole = std::str::from_utf8(bytes).is_ok();
            for size in 1..=6 {
                assert_eq!(utf8_in_pieces(bytes, size), whole, "{bytes:?} in {size}s");
            }
        }
    }

    #[test]
    fn the_start_keeps_its_last_lines_and_counts_the_others() {
        let text = b"1\n2\n3\n4\n5\n6\n7\nhalf";
        for size in 1..=5 {
            let mut b = Before::default();
            for piece in text.chunks(size) {
                b.push(piece);
            }
            assert_eq!(b.kept, b"4\n5\n6\n7\nhalf", "pieces of {size}");
            assert_eq!((b.kept_from, b.dropped_lines), (6, 3), "pieces of {size}");
        }
    }

    #[test]
    fn the_end_keeps_its_first_lines_and_checks_the_rest() {
        let text = b"tail\n1\n2\n3\n4\n\xff\n";
        for size in 1..=5 {
            let mut a = After::default();
            for piece in text.chunks(size) {
                a.push(piece);
            }
            assert_eq!(a.kept, b"tail\n1\n2\n3\n", "pieces of {size}");
            assert!(!a.utf8.valid(false), "pieces of {size}");
        }
    }
}
