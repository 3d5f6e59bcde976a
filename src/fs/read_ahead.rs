//! Reading a large file on one thread while the caller consumes it on another: the
//! kernel's copy of each piece into our memory (`read(2)`) overlaps the caller's work on
//! the piece before it (a blake3 hash, a chunker's boundary search, a write). A commit of
//! a large file reads it three times and a rollback more (docs/commit-protocol.md), each
//! pass a read and a hash of the same size: on two cores the pass takes about as long
//! as the slower of the two instead of their sum (docs/benchmarks.md, "Large files and
//! large batches").
//!
//! The bytes, their order and their piece sizes are those of a plain read loop: pieces
//! of at most [`PIECE`] bytes, handed to the sink in file order on the calling thread.
//! Memory: [`BUFFERS`] pieces.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc;

/// Bytes one `read(2)` asks for, and the largest piece handed to the sink (1 MiB).
pub(super) const PIECE: usize = 1 << 20;

/// Pieces in flight: one being consumed, one read ahead, one being read.
const BUFFERS: usize = 3;

/// Read `file` from its current offset to its end, handing each piece to `sink` in
/// order on the calling thread while a second (scoped) thread reads the next ones and
/// calls `pre` on each before handing it over (and `pre(&[])` at the end of the file).
///
/// When the thread cannot be started (the process is at its thread limit,
/// `RLIMIT_NPROC`, or out of memory) the file is read on the calling thread alone
/// ([`read_inline`]): the same pieces, the same calls, only without the overlap — a
/// matter of speed, never an error (found by a breaker: at `ulimit -u 1` a commit
/// failed with "read …: Resource temporarily unavailable", which named the file,
/// not the thread).
///
/// Errors: the first error of a `read(2)` (`EINTR` is retried), the pieces before it
/// handed over.
pub(super) fn read_ahead(
    file: &mut File,
    pre: &mut (dyn FnMut(&[u8]) + Send),
    sink: &mut dyn FnMut(&[u8]),
) -> io::Result<()> {
    match read_threaded(file, pre, sink)? {
        Started::Yes => Ok(()),
        Started::No => read_inline(file, pre, sink, PIECE),
    }
}

/// Whether [`read_threaded`] could start its reading thread.
enum Started {
    Yes,
    /// No thread: nothing was read, `pre` and `sink` were not called.
    No,
}

/// [`read_ahead`] with its second thread; [`Started::No`] when the thread cannot be
/// started.
fn read_threaded(
    file: &mut File,
    pre: &mut (dyn FnMut(&[u8]) + Send),
    sink: &mut dyn FnMut(&[u8]),
) -> io::Result<Started> {
    // Reader → consumer: read pieces, then the end (the channel closed) or an error.
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(BUFFERS);
    // Consumer → reader: pieces handed over, to be read into again.
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    for _ in 0..BUFFERS {
        // Cannot fail: the receiver is alive.
        let _ = empty_tx.send(Vec::new());
    }
    std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("ue-read-ahead".into())
            .spawn_scoped(scope, move || {
                while let Ok(mut buf) = empty_rx.recv() {
                    buf.resize(PIECE, 0);
                    let read = loop {
                        match file.read(&mut buf) {
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            other => break other,
                        }
                    };
                    let sent = match read {
                        Ok(0) => {
                            pre(&[]);
                            return;
                        }
                        Ok(n) => {
                            buf.truncate(n);
                            pre(&buf);
                            full_tx.send(Ok(buf))
                        }
                        Err(e) => {
                            let _ = full_tx.send(Err(e));
                            return;
                        }
                    };
                    // The consumer stopped (its sink panicked): nothing more to read.
                    if sent.is_err() {
                        return;
                    }
                }
            });
        if reader.is_err() {
            // The closure, and with it the borrows of `file` and `pre`, was dropped.
            return Ok(Started::No);
        }
        // Both channel ends of this side are dropped when this closure returns, so the
        // reader ends (its send or its recv fails) before the scope joins it.
        let (full_rx, empty_tx) = (full_rx, empty_tx);
        for piece in full_rx {
            let piece = piece?;
            sink(&piece);
            let _ = empty_tx.send(piece);
        }
        Ok(Started::Yes)
    })
}

/// [`read_ahead`] on the calling thread alone, in reads of at most `buf_len` bytes
/// (a small file's reads are sized by the file, [`super::StdFs`]'s `read_file_with_pre`):
/// each piece to `pre`, then to `sink`, and `pre(&[])` at the end of the file. Errors
/// as [`read_ahead`]'s.
pub(super) fn read_inline(
    file: &mut File,
    pre: &mut (dyn FnMut(&[u8]) + Send),
    sink: &mut dyn FnMut(&[u8]),
    buf_len: usize,
) -> io::Result<()> {
    let mut buf = vec![0u8; buf_len.max(1)];
    loop {
        match file.read(&mut buf) {
            Ok(0) => {
                pre(&[]);
                return Ok(());
            }
            Ok(n) => {
                let piece = buf.get(..n).unwrap_or_default();
                pre(piece);
                sink(piece);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    type Read =
        fn(&mut File, &mut (dyn FnMut(&[u8]) + Send), &mut dyn FnMut(&[u8])) -> io::Result<()>;

    /// The two ways a file is read: with the reading thread, and on the calling
    /// thread alone (where the thread cannot be started).
    const WAYS: [(&str, Read); 2] = [("threaded", read_ahead), ("inline", inline)];

    fn inline(
        file: &mut File,
        pre: &mut (dyn FnMut(&[u8]) + Send),
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<()> {
        read_inline(file, pre, sink, PIECE)
    }

    fn pieces_of(bytes: &[u8], from: u64) -> (Vec<u8>, Vec<usize>) {
        let (got, sizes) = pieces_of_by(read_ahead, bytes, from);
        // Read on one thread: the same pieces, in the same order.
        assert_eq!(
            pieces_of_by(inline, bytes, from),
            (got.clone(), sizes.clone())
        );
        (got, sizes)
    }

    fn pieces_of_by(read: Read, bytes: &[u8], from: u64) -> (Vec<u8>, Vec<usize>) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f.seek(SeekFrom::Start(from)).unwrap();
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        let (mut seen, mut ended) = (0, 0);
        read(
            &mut f,
            &mut |p| {
                seen += p.len();
                ended += usize::from(p.is_empty());
            },
            &mut |p| {
                sizes.push(p.len());
                got.extend_from_slice(p);
            },
        )
        .unwrap();
        // `pre` saw every byte, then the end once.
        assert_eq!((seen, ended), (got.len(), 1));
        (got, sizes)
    }

    #[test]
    fn hands_over_every_byte_in_order_in_pieces_of_at_most_a_mib() {
        for size in [0, 1, PIECE - 1, PIECE, PIECE + 1, 5 * PIECE + 12_345] {
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let (got, sizes) = pieces_of(&bytes, 0);
            assert_eq!(blake3::hash(&got), blake3::hash(&bytes), "size {size}");
            assert_eq!(got.len(), size);
            assert!(
                sizes.iter().all(|&n| n > 0 && n <= PIECE),
                "size {size}: {sizes:?}"
            );
            // A regular file fills every read but the last.
            let full = size / PIECE;
            assert_eq!(
                sizes.len(),
                full + usize::from(size % PIECE != 0),
                "size {size}"
            );
        }
    }

    #[test]
    fn reads_from_the_current_offset() {
        let bytes: Vec<u8> = (0..3 * PIECE).map(|i| (i % 7) as u8).collect();
        let (got, _) = pieces_of(&bytes, 1000);
        assert_eq!(got, bytes[1000..]);
    }

    #[test]
    fn a_read_error_is_returned_after_the_pieces_before_it() {
        // A directory's descriptor: `read` fails with EISDIR.
        let dir = tempfile::tempdir().unwrap();
        for (way, read) in WAYS {
            let mut f = File::open(dir.path()).unwrap();
            let mut n = 0;
            let err = read(&mut f, &mut |_| {}, &mut |_| n += 1).unwrap_err();
            assert_eq!(err.raw_os_error(), Some(21), "{way}: {err}"); // EISDIR
            assert_eq!(n, 0, "{way}");
        }
    }
}
