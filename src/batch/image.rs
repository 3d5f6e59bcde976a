//! Writing one image of a file — a post-image at commit, a pre- or post-image when a
//! batch is driven to one side (recovery, a revert) — from the journal's blob into a
//! temp, fsynced ([`crate::fs::FileSystem::write_synced`]). One path for both, so that
//! a large file is streamed and checked the same way whoever writes it.

use crate::engine::Ws;
use crate::error::{Error, IoContext, IoError};
use crate::fs::meta::{BlobHash, FileMeta, Xattrs};
use crate::fs::FileRead;
use crate::fs::RelPath;
use crate::journal::splice::SpliceError;
use crate::journal::Reader;

/// Images larger than this (bytes) are streamed from the journal to the temp chunk by
/// chunk ([`Reader::blob_stream`] into [`crate::fs::FileSystem::write_synced_from`]),
/// never whole in memory; smaller ones are read whole and written at once (one
/// `write`, and the commit's pool stages them concurrently).
pub(crate) const STREAM_ABOVE: u64 = 8 << 20;

/// Why [`write_image`] failed: the blob could not be read (missing, or damaged — then
/// the temp was removed before it was synced), or the temp could not be written.
#[derive(Debug)]
pub(crate) enum ImageError {
    /// A journal error reading the blob.
    Journal(Error),
    /// An I/O error on the temp (its absolute path named).
    Io(IoError),
}

/// Write the blob `hash` (`size` bytes) into a new file `tmp` with `meta` and `xattrs`,
/// fsynced. Above [`STREAM_ABOVE`] the bytes are streamed and checked against `hash`
/// before the file is synced: a damaged blob leaves no file. With `base` — a path and
/// the blob its file was just found to hold (the commit gate's pre-image) — a large
/// image is first spliced from that file and the journal ([`splice`]); when that
/// cannot be done (the file is not the base any more, the blobs share nothing), it is
/// streamed from the journal alone. Memory: a 1 MiB piece and a chunk above the
/// threshold, the whole image below it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_image(
    ws: &Ws,
    reader: &Reader,
    tmp: &RelPath,
    hash: &BlobHash,
    size: u64,
    meta: &FileMeta,
    xattrs: &Xattrs,
    base: Option<(&RelPath, &BlobHash)>,
) -> Result<(), ImageError> {
    if size > STREAM_ABOVE {
        if let Some(base) = base {
            if splice(ws, reader, tmp, hash, base, meta, xattrs)? {
                return Ok(());
            }
        }
        let mut journal = None;
        let wrote = ws.fs.write_synced_from(
            tmp,
            &mut |put| match reader.blob_stream(hash, put) {
                Ok(done) => done,
                Err(e) => {
                    journal = Some(e);
                    Err(std::io::Error::other("the image could not be read"))
                }
            },
            meta,
            xattrs,
        );
        if let Some(e) = journal {
            return Err(ImageError::Journal(e));
        }
        wrote
            .ctx_at("write temp", || ws.abs(tmp))
            .map_err(ImageError::Io)
    } else {
        let bytes = reader.blob_required(hash).map_err(ImageError::Journal)?;
        ws.fs
            .write_synced(tmp, &bytes, meta, xattrs)
            .ctx_at("write temp", || ws.abs(tmp))
            .map_err(ImageError::Io)
    }
}

/// Write the blob `hash` into the temp `tmp` from the file `path`, which the gate found
/// to hold the blob `base`, and from the journal where they differ
/// ([`crate::journal::splice`]); fsynced only once every byte written hashed to `hash`.
/// `Ok(false)`: not done, and no temp left — the blobs share nothing, the file is not
/// `base` any more (changed after the gate), or the journal could not be read this way;
/// the caller streams the image from the journal, and the install's last check of
/// the file against its pre-image refuses a changed file as stale. An error writing
/// the temp is returned as it is.
#[allow(clippy::too_many_arguments)]
fn splice(
    ws: &Ws,
    reader: &Reader,
    tmp: &RelPath,
    hash: &BlobHash,
    (path, base): (&RelPath, &BlobHash),
    meta: &FileMeta,
    xattrs: &Xattrs,
) -> Result<bool, ImageError> {
    let Ok(Some(mut splice)) = reader.blob_splice(hash, base) else {
        return Ok(false);
    };
    // Where a test changes the file between the gate and the temp write.
    #[cfg(feature = "failpoints")]
    fail::fail_point!("image::before_splice");
    // Whether the write stopped because the splice cannot be done (not the temp's error).
    let mut undone = false;
    let wrote = ws.fs.write_synced_from(
        tmp,
        &mut |put| {
            let mut stopped = None;
            // The boundary search runs on the thread that reads the file, beside the
            // writing and hashing here ([`crate::fs::FileSystem::read_file_with_pre`]).
            let mut cutter = splice.take_cutter();
            let read = ws.fs.read_file_with_pre(
                path,
                &mut |piece| {
                    if let Some(c) = &mut cutter {
                        c.feed(piece);
                    }
                },
                &mut |piece| {
                    if stopped.is_none() {
                        stopped = splice.feed(piece, put).err();
                    }
                },
            );
            drop(cutter);
            let end = match (read, stopped) {
                (_, Some(e)) => Err(e),
                (Ok(FileRead::File { .. }), None) => splice.finish(put).map(|_| ()),
                (_, None) => Err(SpliceError::Mismatch),
            };
            match end {
                Ok(()) => Ok(()),
                Err(SpliceError::Sink(e)) => Err(e),
                Err(SpliceError::Mismatch | SpliceError::Journal) => {
                    undone = true;
                    Err(std::io::Error::other("the image could not be spliced"))
                }
            }
        },
        meta,
        xattrs,
    );
    if undone {
        return Ok(false);
    }
    // Where a test counts the images written this way.
    #[cfg(feature = "failpoints")]
    if wrote.is_ok() {
        fail::fail_point!("image::spliced");
    }
    wrote
        .map(|()| true)
        .ctx_at("write temp", || ws.abs(tmp))
        .map_err(ImageError::Io)
}
