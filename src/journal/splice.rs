//! Writing a large post-image mostly from the file on disk: a [`Splice`] of a blob
//! (the *target*) against another blob (the *base*) whose bytes are the file now on
//! disk — the pre-image the commit gate has just found there (docs/commit-protocol.md,
//! step 4).
//!
//! Both blobs' chunk lists are read from their manifests (pages only, checked against
//! their keys), and lined up: a run of target chunks that are base chunks in the same
//! order is copied from the disk file, the other target chunks are read from the
//! journal (each checked against its key). Where each base chunk lies in the disk file
//! is found by running the chunker's boundary search (FastCDC, no hashing) over the
//! disk bytes as they stream by, up to the last base chunk the target needs from
//! before a journal run; after that, the rest of the file is copied as it comes. A
//! one-line edit of a 100 MB file reads one or two chunks from the journal instead of
//! 50,000 (the lookups were half of a commit's CPU, docs/benchmarks.md).
//!
//! Everything handed out is hashed as it goes and checked against the target's blake3
//! at [`Splice::finish`], before the caller syncs its temp: a disk file that is not the
//! base (changed after the gate) gives [`SpliceError::Mismatch`], never a wrong temp.
//! The caller then writes the image from the journal alone, and the install's last
//! check refuses the changed file as stale.
//!
//! The boundary search is a [`Cutter`] of its own, which a caller may run on the thread
//! that reads the file ([`crate::fs::FileSystem::read_file_with_pre`]) while the splice
//! writes and hashes on its own: the search is a fifth of a large commit's CPU, and the
//! splice's thread has the writing and hashing besides.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::mpsc;

use redb::{ReadOnlyTable, ReadableTable};

use super::blobs::{self, Manifest, MAX_CHUNK, MIN_CHUNK};
use crate::error::Result;
use crate::journal::records::BlobHash;

/// The chunk table, opened for the life of a [`Splice`].
type Chunks = ReadOnlyTable<&'static [u8; 32], &'static [u8]>;

/// Why a [`Splice`] stopped.
#[derive(Debug)]
pub(crate) enum SpliceError {
    /// The sink's own error (the temp could not be written).
    Sink(io::Error),
    /// The disk bytes are not the base's: too short, or what was handed out does not
    /// hash to the target. The caller discards what it wrote.
    Mismatch,
    /// A journal chunk is missing or damaged, or the journal could not be read (the
    /// caller's stream from the journal alone names the damage).
    Journal,
}

/// One step of a splice, in the target's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Base chunks `from..to`, copied from the disk file.
    Disk { from: usize, to: usize },
    /// Target chunks `from..to`, read from the journal.
    Journal { from: usize, to: usize },
}

/// The chunk lists of the target and the base lined up (see the module docs): the ops
/// in order. Greedy: a target chunk is taken from the disk when the base has the same
/// chunk at or after the last one used, the nearest such; any choice is correct, as a
/// chunk's bytes are its key's.
fn line_up(base: &[[u8; 32]], target: &[[u8; 32]]) -> Vec<Op> {
    let prefix = base.iter().zip(target).take_while(|(a, b)| a == b).count();
    let suffix = base[prefix..]
        .iter()
        .rev()
        .zip(target[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut ops = Vec::new();
    let mut push = |op: Op| match (ops.last_mut(), op) {
        (Some(Op::Disk { to, .. }), Op::Disk { from, to: t }) if *to == from => *to = t,
        (Some(Op::Journal { to, .. }), Op::Journal { from, to: t }) if *to == from => *to = t,
        _ => ops.push(op),
    };
    if prefix > 0 {
        push(Op::Disk {
            from: 0,
            to: prefix,
        });
    }
    // The middle: each base chunk's positions, ascending.
    let (base_mid_end, target_mid_end) = (base.len() - suffix, target.len() - suffix);
    let mut at: HashMap<&[u8; 32], Vec<usize>> = HashMap::new();
    for (i, k) in base.iter().enumerate().take(base_mid_end).skip(prefix) {
        at.entry(k).or_default().push(i);
    }
    let mut i = prefix;
    for (j, k) in target.iter().enumerate().take(target_mid_end).skip(prefix) {
        let found = at.get(k).and_then(|places| {
            let n = places.partition_point(|&p| p < i);
            places.get(n).copied()
        });
        match found {
            Some(p) => {
                push(Op::Disk { from: p, to: p + 1 });
                i = p + 1;
            }
            None => push(Op::Journal { from: j, to: j + 1 }),
        }
    }
    if suffix > 0 {
        push(Op::Disk {
            from: base_mid_end,
            to: base.len(),
        });
    }
    ops
}

/// A post-image being written from the disk file and the journal (see the module
/// docs): made by [`Splice::new`], fed the disk file's bytes in order
/// ([`Splice::feed`]), ended by [`Splice::finish`]. Memory: the two chunk lists (32
/// bytes a chunk), at most one disk piece plus a largest chunk, and one journal chunk.
pub(crate) struct Splice {
    chunks: Chunks,
    target: BlobHash,
    target_keys: Vec<[u8; 32]>,
    base_len: usize,
    base_keys: Vec<[u8; 32]>,
    ops: Vec<Op>,
    /// The op being done.
    op: usize,
    /// The base chunk that starts at `carry[0]`.
    base_at: usize,
    /// Disk bytes not yet cut into chunks (from the start of base chunk `base_at`).
    carry: Vec<u8>,
    hasher: blake3::Hasher,
    /// Journal chunks read so far (for tests and the benches' accounting).
    read_from_journal: usize,
    /// The tail op was reached: every further disk byte is handed out as it comes.
    tail: bool,
    /// The boundary search, while the splice runs it itself; `None` once
    /// [`Splice::take_cutter`] gave it to the reading thread.
    cutter: Option<Cutter>,
    /// The lengths of the base's chunks, in order, as the cutter finds them.
    cuts: mpsc::Receiver<usize>,
    /// Lengths received whose chunk's bytes have not all been fed yet.
    pending: VecDeque<usize>,
}

/// The chunker's boundary search over the disk file's bytes (see the module docs): fed
/// the bytes in order ([`Cutter::feed`], an empty slice at the end), it sends the length
/// of each base chunk it finds to its [`Splice`], up to the last chunk the splice
/// needs cut. The same cut, window for window, as the chunking that stored the blob:
/// a chunk is cut from at most [`MAX_CHUNK`] bytes, and from fewer only at the end.
/// Memory: at most [`MAX_CHUNK`] bytes of a chunk that spans two pieces.
pub(crate) struct Cutter {
    /// Chunks still to cut.
    left: usize,
    /// The start of the chunk being cut, from earlier pieces (fewer than [`MAX_CHUNK`]
    /// bytes between calls).
    rem: Vec<u8>,
    masks: (u64, u64),
    out: mpsc::Sender<usize>,
}

impl Cutter {
    /// The length of the chunk that starts `window` (at most [`MAX_CHUNK`] bytes; fewer
    /// only at the end of the file), at least 1.
    fn cut(&self, window: &[u8]) -> usize {
        let (_, len) = fastcdc::v2020::cut(
            window,
            MIN_CHUNK,
            blobs::AVG_CHUNK,
            MAX_CHUNK,
            self.masks.0,
            self.masks.1,
            self.masks.0 << 1,
            self.masks.1 << 1,
        );
        len.max(1)
    }

    /// Found: a chunk of `len` bytes. Whether to go on (more chunks wanted, and the
    /// splice still listening).
    fn found(&mut self, len: usize) -> bool {
        self.left = self.left.saturating_sub(1);
        self.out.send(len).is_ok() && self.left > 0
    }

    /// The next bytes of the disk file, in order; an empty `piece` says the file ended.
    pub(crate) fn feed(&mut self, mut piece: &[u8]) {
        let end = piece.is_empty();
        while self.left > 0 {
            if !self.rem.is_empty() {
                let take = piece.len().min(MAX_CHUNK - self.rem.len().min(MAX_CHUNK));
                let (head, rest) = piece.split_at(take);
                self.rem.extend_from_slice(head);
                piece = rest;
                if self.rem.len() < MAX_CHUNK && !end {
                    return;
                }
                let len = self.cut(&self.rem).min(self.rem.len());
                self.rem.drain(..len);
                if !self.found(len) {
                    return;
                }
            } else if piece.len() >= MAX_CHUNK || (end && !piece.is_empty()) {
                let window = piece.get(..piece.len().min(MAX_CHUNK)).unwrap_or_default();
                let len = self.cut(window).min(window.len());
                piece = piece.get(len..).unwrap_or_default();
                if !self.found(len) {
                    return;
                }
            } else {
                self.rem.extend_from_slice(piece);
                return;
            }
        }
    }
}

impl Splice {
    /// The splice of `target` against `base` (both stored blobs, `raw_*` their
    /// manifests), or `None` when it would not save reading the journal: either is
    /// inline, or they share no chunk. Pages are checked against their keys (damage is
    /// `JournalError::Corrupt`).
    pub(crate) fn new(
        chunks: Chunks,
        pages: &impl ReadableTable<&'static [u8; 32], &'static [u8]>,
        (target, raw_target): (&BlobHash, &[u8]),
        (base, raw_base): (&BlobHash, &[u8]),
    ) -> Result<Option<Splice>> {
        let t = super::codec::decode::<Manifest>("blob_manifests", raw_target)?;
        let b = super::codec::decode::<Manifest>("blob_manifests", raw_base)?;
        if matches!(t, Manifest::Inline(_)) || matches!(b, Manifest::Inline(_)) {
            return Ok(None);
        }
        let target_keys = blobs::resolve(pages, target, &t)?.chunks;
        let base_keys = blobs::resolve(pages, base, &b)?.chunks;
        let ops = line_up(&base_keys, &target_keys);
        if !ops.iter().any(|op| matches!(op, Op::Disk { .. })) {
            return Ok(None);
        }
        // How many base chunks are cut: up to the start of the tail op, or the end of
        // the last disk run.
        let cut_to = ops.iter().enumerate().fold(0, |n, (i, op)| match *op {
            Op::Disk { from, to } if i + 1 == ops.len() && to == base_keys.len() => n.max(from),
            Op::Disk { to, .. } => n.max(to),
            Op::Journal { .. } => n,
        });
        let (out, cuts) = mpsc::channel();
        let masks =
            fastcdc::v2020::select_masks(blobs::AVG_CHUNK, fastcdc::v2020::Normalization::Level1);
        Ok(Some(Splice {
            chunks,
            target: *target,
            target_keys,
            base_len: base_keys.len(),
            base_keys,
            ops,
            op: 0,
            base_at: 0,
            carry: Vec::new(),
            hasher: blake3::Hasher::new(),
            read_from_journal: 0,
            tail: false,
            cutter: Some(Cutter {
                left: cut_to,
                rem: Vec::new(),
                masks,
                out,
            }),
            cuts,
            pending: VecDeque::new(),
        }))
    }

    /// The boundary search, to be fed the same bytes as this splice on another thread
    /// (the one that reads the file), each piece before the splice gets it, and an
    /// empty slice at the end; dropped before [`Splice::finish`]. Without this call the
    /// splice runs it itself, piece by piece.
    pub(crate) fn take_cutter(&mut self) -> Option<Cutter> {
        self.cutter.take()
    }

    /// The length of the next base chunk, when the cutter has found it and its
    /// `available` bytes are at hand; else `None` (more bytes are needed).
    fn next_cut(&mut self, available: usize) -> Option<usize> {
        self.pending.extend(self.cuts.try_iter());
        match self.pending.front() {
            Some(&len) if len <= available => self.pending.pop_front(),
            _ => None,
        }
    }

    /// Whether op `n` is the last and copies the base's chunks to its end: done by
    /// copying the rest of the file, without cutting.
    fn is_tail(&self, n: usize) -> bool {
        n + 1 == self.ops.len()
            && matches!(self.ops.get(n), Some(Op::Disk { to, .. }) if *to == self.base_len)
    }

    /// Hand `bytes` to `sink`, hashing them.
    fn emit(
        hasher: &mut blake3::Hasher,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
        bytes: &[u8],
    ) -> std::result::Result<(), SpliceError> {
        if bytes.is_empty() {
            return Ok(());
        }
        hasher.update(bytes);
        sink(bytes).map_err(SpliceError::Sink)
    }

    /// Target chunks `from..to` from the journal, each checked against its key.
    fn journal_run(
        &mut self,
        from: usize,
        to: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> std::result::Result<(), SpliceError> {
        for key in self.target_keys.get(from..to).unwrap_or_default() {
            let piece = self
                .chunks
                .get(key)
                .map_err(|_| SpliceError::Journal)?
                .ok_or(SpliceError::Journal)?;
            let bytes = piece.value();
            if blake3::hash(bytes).as_bytes() != key {
                return Err(SpliceError::Journal);
            }
            self.read_from_journal += 1;
            Self::emit(&mut self.hasher, sink, bytes)?;
        }
        Ok(())
    }

    /// Do the ops that the bytes at hand and the chunk lengths found so far allow.
    fn run(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> std::result::Result<(), SpliceError> {
        let mut pos = 0;
        while let Some(&op) = self.ops.get(self.op) {
            match op {
                Op::Journal { from, to } => {
                    self.journal_run(from, to, sink)?;
                    self.op += 1;
                }
                // The last op, to the base's end, once at its start: the rest of
                // the file as it comes (checked by the hash at the end).
                Op::Disk { from, .. } if self.is_tail(self.op) && self.base_at == from => {
                    self.tail = true;
                    let rest = self.carry.get(pos..).unwrap_or_default();
                    Self::emit(&mut self.hasher, sink, rest)?;
                    pos = self.carry.len();
                    break;
                }
                Op::Disk { from, to } => {
                    // Cut base chunks until `to`, handing out those from `from`, in
                    // one slice per run of them.
                    let mut run_start = None;
                    let stop = if self.is_tail(self.op) { from } else { to };
                    while self.base_at < stop {
                        let Some(len) = self.next_cut(self.carry.len() - pos) else {
                            break;
                        };
                        // The first chunk of the file and of each run is hashed: a file
                        // that is not the base (or a base cut with other chunk sizes,
                        // an older schema's) stops here, before the rest is written.
                        if self.base_at == 0 || self.base_at == from {
                            let cut = self.carry.get(pos..pos + len).unwrap_or_default();
                            if Some(blake3::hash(cut).as_bytes())
                                != self.base_keys.get(self.base_at)
                            {
                                return Err(SpliceError::Mismatch);
                            }
                        }
                        if self.base_at >= from && run_start.is_none() {
                            run_start = Some(pos);
                        }
                        pos += len;
                        self.base_at += 1;
                    }
                    if let Some(start) = run_start {
                        let (carry, hasher) = (&self.carry, &mut self.hasher);
                        Self::emit(hasher, sink, &carry[start..pos])?;
                    }
                    if self.base_at < stop {
                        break;
                    }
                    if stop == to {
                        self.op += 1;
                    }
                }
            }
        }
        self.carry.drain(..pos);
        Ok(())
    }

    /// The next bytes of the disk file, in order. Hands out what they complete.
    pub(crate) fn feed(
        &mut self,
        piece: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> std::result::Result<(), SpliceError> {
        if self.op == self.ops.len() {
            return Ok(());
        }
        if self.tail {
            return Self::emit(&mut self.hasher, sink, piece);
        }
        if let Some(cutter) = &mut self.cutter {
            if !piece.is_empty() {
                cutter.feed(piece);
            }
        }
        self.carry.extend_from_slice(piece);
        self.run(sink)
    }

    /// The disk file has no more bytes: hand out the rest and check the whole against
    /// the target's hash ([`SpliceError::Mismatch`] when it differs, or when the disk
    /// file ended before the base's chunks did). Returns how many chunks were read from
    /// the journal.
    pub(crate) fn finish(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> std::result::Result<usize, SpliceError> {
        if let Some(cutter) = &mut self.cutter {
            cutter.feed(&[]);
        }
        self.run(sink)?;
        if self.op < self.ops.len() && !self.tail {
            return Err(SpliceError::Mismatch);
        }
        if BlobHash(*self.hasher.finalize().as_bytes()) != self.target {
            return Err(SpliceError::Mismatch);
        }
        Ok(self.read_from_journal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::blobs::{put, tests::lines, CHUNKS, MANIFESTS, PAGES};
    use redb::ReadableDatabase;

    /// `target` written by a splice against `base`, the disk holding `disk`, fed in
    /// pieces of `piece` bytes: the bytes handed out and the journal chunks read, or
    /// the error.
    fn splice(
        base: &[u8],
        target: &[u8],
        disk: &[u8],
        piece: usize,
        ahead: bool,
    ) -> (Vec<u8>, std::result::Result<usize, SpliceError>) {
        let db = redb::Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut m = txn.open_table(MANIFESTS).unwrap();
            let mut c = txn.open_table(CHUNKS).unwrap();
            let mut p = txn.open_table(PAGES).unwrap();
            put(&mut m, &mut c, &mut p, &BlobHash::of(base), base).unwrap();
            put(&mut m, &mut c, &mut p, &BlobHash::of(target), target).unwrap();
        }
        txn.commit().unwrap();
        let r = db.begin_read().unwrap();
        let m = r.open_table(MANIFESTS).unwrap();
        let p = r.open_table(PAGES).unwrap();
        let (th, bh) = (BlobHash::of(target), BlobHash::of(base));
        let raw_t = m.get(&th.0).unwrap().unwrap().value().to_vec();
        let raw_b = m.get(&bh.0).unwrap().unwrap().value().to_vec();
        let mut s = Splice::new(
            r.open_table(CHUNKS).unwrap(),
            &p,
            (&th, &raw_t),
            (&bh, &raw_b),
        )
        .unwrap()
        .expect("the blobs share chunks");
        let mut out = Vec::new();
        let mut sink = |b: &[u8]| {
            out.extend_from_slice(b);
            Ok(())
        };
        // The reading thread's cutter, run ahead over the whole file before the splice
        // gets its first piece: the farthest ahead it can be.
        if ahead {
            let mut cutter = s.take_cutter().expect("the splice's own cutter");
            for p in disk.chunks(piece) {
                cutter.feed(p);
            }
            cutter.feed(&[]);
        }
        for p in disk.chunks(piece) {
            if let Err(e) = s.feed(p, &mut sink) {
                return (out, Err(e));
            }
        }
        let done = s.finish(&mut sink);
        (out, done)
    }

    fn edited(base: &[u8], edits: &[(usize, usize, &[u8])]) -> Vec<u8> {
        let mut b = base.to_vec();
        // From the last, so earlier offsets stay the base's.
        for &(at, cut, text) in edits.iter().rev() {
            b.splice(at..at + cut, text.iter().copied());
        }
        b
    }

    /// Edits at the start, middle, end and two far apart, growing and shrinking, fed
    /// in pieces of several sizes: the bytes are the target's exactly and only the
    /// chunks around the edits come from the journal.
    #[test]
    fn a_splice_writes_the_target_exactly_reading_few_chunks_from_the_journal() {
        let base = lines(100_000); // 2.2 MB, ≈ 1000 chunks
        let n = base.len();
        type Edits<'a> = Vec<(usize, usize, &'a [u8])>;
        let cases: Vec<(&str, Edits)> = vec![
            ("start", vec![(0, 5, b"FIRST")]),
            ("middle", vec![(n / 2, 0, b"inserted line\n")]),
            ("end", vec![(n - 3, 3, b"")]),
            ("append", vec![(n, 0, b"appended\n")]),
            ("far apart", vec![(1000, 10, b"x"), (n - 5000, 0, b"y\n")]),
            (
                "three",
                vec![(10, 1, b""), (n / 3, 100, b"z"), (2 * n / 3, 0, b"w")],
            ),
        ];
        for (name, e) in cases {
            let target = edited(&base, &e);
            for (piece, ahead) in [
                (1 << 20, false),
                (4096, false),
                (777, false),
                (1 << 20, true),
                (777, true),
            ] {
                let (out, done) = splice(&base, &target, &base, piece, ahead);
                let read = done.unwrap_or_else(|err| panic!("{name}/{piece}/{ahead}: {err:?}"));
                assert_eq!(
                    blake3::hash(&out),
                    blake3::hash(&target),
                    "{name}/{piece}: other bytes"
                );
                assert_eq!(out.len(), target.len(), "{name}/{piece}");
                assert!(
                    (1..=3 * e.len()).contains(&read),
                    "{name}/{piece}: {read} chunks from the journal"
                );
            }
        }
    }

    /// A disk file that is not the base (changed after the gate: a byte flipped, cut
    /// short, grown) is a mismatch, whatever was handed out before.
    #[test]
    fn a_disk_file_that_is_not_the_base_is_a_mismatch() {
        let base = lines(50_000);
        let target = edited(&base, &[(base.len() / 2, 0, b"new\n")]);
        let mut flipped = base.clone();
        flipped[10] ^= 1;
        let mut late = base.clone();
        let at = base.len() - 100;
        late[at] ^= 1;
        let short = base[..base.len() / 3].to_vec();
        let mut long = base.clone();
        long.extend_from_slice(b"more\n");
        for (name, disk) in [
            ("flipped", flipped),
            ("late", late),
            ("short", short),
            ("long", long),
        ] {
            for ahead in [false, true] {
                let (_, done) = splice(&base, &target, &disk, 1 << 20, ahead);
                assert!(
                    matches!(done, Err(SpliceError::Mismatch)),
                    "{name}/{ahead}: {done:?}"
                );
            }
        }
    }

    #[test]
    fn lining_up_takes_shared_runs_from_the_disk() {
        let k = |i: u8| [i; 32];
        let base = [k(1), k(2), k(3), k(4), k(5), k(6)];
        let target = [k(1), k(2), k(9), k(4), k(5), k(8), k(6)];
        assert_eq!(
            line_up(&base, &target),
            vec![
                Op::Disk { from: 0, to: 2 },
                Op::Journal { from: 2, to: 3 },
                Op::Disk { from: 3, to: 5 },
                Op::Journal { from: 5, to: 6 },
                Op::Disk { from: 5, to: 6 },
            ]
        );
        // A chunk moved before one used: read from the journal.
        let target = [k(4), k(1), k(2)];
        assert_eq!(
            line_up(&base, &target),
            vec![Op::Disk { from: 3, to: 4 }, Op::Journal { from: 1, to: 3 }]
        );
    }
}
