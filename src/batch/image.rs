//! Writing one image of a file — a post-image at commit, a pre- or post-image when a
//! batch is driven to one side (recovery, a revert) — from the journal's blob into a
//! temp, fsynced ([`crate::fs::FileSystem::write_synced`]). One path for both, so that
//! a large file is streamed and checked the same way whoever writes it.

use crate::engine::Ws;
use crate::error::{Error, IoContext, IoError};
use crate::fs::meta::{BlobHash, FileMeta, Xattrs};
use crate::fs::RelPath;
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
/// before the file is synced: a damaged blob leaves no file. Memory: one chunk above
/// the threshold, the whole image below it.
pub(crate) fn write_image(
    ws: &Ws,
    reader: &Reader,
    tmp: &RelPath,
    hash: &BlobHash,
    size: u64,
    meta: &FileMeta,
    xattrs: &Xattrs,
) -> Result<(), ImageError> {
    if size > STREAM_ABOVE {
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
