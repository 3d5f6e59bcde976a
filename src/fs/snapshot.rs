//! Reading the state of a workspace path: exists, blake3, size, mode (docs/design.md, "Lifecycle" › 1. Preview).

use std::path::Path;

use crate::error::{IoError, Result};
use crate::fs::meta::{BlobHash, FileMeta, FileState, Owner, Xattrs};
use crate::fs::{path, EntryKind, FileRead, FileSystem, RelPath};

/// The state of `rel` on disk and its bytes (`None` when absent). The path is checked
/// with [`path::check_on_disk`] first, so a symlink or hard-linked file is refused.
/// `root` is the filesystem's root, for error messages only. Also returns the blob of
/// the file's extended attributes ([`Xattrs::encode`]) when it has any, which a caller
/// that records the state stores (its hash is the state's `meta.xattrs`; a file with
/// none names [`Xattrs::empty_hash`], which needs no blob).
#[allow(clippy::type_complexity)]
pub(crate) fn read_state(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
) -> Result<(FileState, Option<Vec<u8>>, Option<Vec<u8>>)> {
    if path::checked_entry(fs, root, rel, rel)? == EntryKind::Absent {
        return Ok((FileState::ABSENT, None, None));
    }
    let read = fs.read_file(rel).map_err(|source| IoError {
        op: "read",
        path: rel.under(root),
        source,
    })?;
    match found(read, rel)? {
        Some((mode, uid, gid, bytes, xattrs)) => {
            let hash = BlobHash::of(&bytes);
            let (meta, blob) = meta_of(mode, uid, gid, &xattrs);
            Ok((
                FileState::File {
                    hash,
                    size: bytes.len() as u64,
                    meta,
                },
                Some(bytes),
                blob,
            ))
        }
        None => Ok((FileState::ABSENT, None, None)),
    }
}

/// [`read_state`] without the file's bytes: they are hashed as they are read, in
/// pieces ([`FileSystem::read_file_with`]), so checking a large file against a
/// recorded state (the commit gate, the install's last check) holds none of it. The
/// same path checks and errors; returns the state and the extended attributes' blob.
pub(crate) fn state_of(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
) -> Result<(FileState, Option<Vec<u8>>)> {
    state_of_with(fs, root, rel, &mut |_| {})
}

/// [`state_of`], also handing every piece of the file's bytes, in order, to `also`:
/// what else needs the file's bytes (a rollback's window scan) takes them from this
/// one read, and the state's hash is the hash of exactly the bytes `also` saw (and,
/// for a regular file, one empty piece after the last; nothing when the path holds no
/// regular file). `also` may run on the thread that reads the file, beside the hash
/// ([`FileSystem::read_file_with_pre`]).
pub(crate) fn state_of_with(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
    also: &mut (dyn FnMut(&[u8]) + Send),
) -> Result<(FileState, Option<Vec<u8>>)> {
    if path::checked_entry(fs, root, rel, rel)? == EntryKind::Absent {
        return Ok((FileState::ABSENT, None));
    }
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    let read = fs
        .read_file_with_pre(rel, also, &mut |piece| {
            hasher.update(piece);
            size += piece.len() as u64;
        })
        .map_err(|source| IoError {
            op: "read",
            path: rel.under(root),
            source,
        })?;
    match found(read, rel)? {
        Some((mode, uid, gid, _, xattrs)) => {
            let hash = BlobHash(*hasher.finalize().as_bytes());
            let (meta, blob) = meta_of(mode, uid, gid, &xattrs);
            Ok((FileState::File { hash, size, meta }, blob))
        }
        None => Ok((FileState::ABSENT, None)),
    }
}

/// What a read found: a regular file's mode, owner, group, bytes and attributes, or
/// `None` when it was removed in between. What the read's own descriptor found is
/// checked again: the lstat before it and the open are two system calls, and another
/// process may have put a symlink, a directory, a FIFO or a hard-linked file there
/// between them.
#[allow(clippy::type_complexity)]
fn found(read: FileRead, rel: &RelPath) -> Result<Option<(u32, u32, u32, Vec<u8>, Xattrs)>> {
    match read {
        FileRead::File {
            kind,
            bytes,
            xattrs,
        } => match path::check_final(kind, rel)? {
            EntryKind::File { mode, uid, gid, .. } => Ok(Some((mode, uid, gid, bytes, xattrs))),
            // `FileRead::File` holds a file.
            _ => Ok(None),
        },
        // Absent (removed in between) passes; any other kind is refused.
        FileRead::Not(other) => {
            path::check_final(other, rel)?;
            Ok(None)
        }
    }
}

/// The recorded metadata of a file, and the blob of its extended attributes when it
/// has any.
fn meta_of(mode: u32, uid: u32, gid: u32, xattrs: &Xattrs) -> (FileMeta, Option<Vec<u8>>) {
    let (hash, blob) = if xattrs.0.is_empty() {
        (Xattrs::empty_hash(), None)
    } else {
        let blob = xattrs.encode();
        (BlobHash::of(&blob), Some(blob))
    };
    let meta = FileMeta {
        mode,
        owner: Some(Owner { uid, gid }),
        xattrs: Some(hash),
    };
    (meta, blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, PathError};
    use crate::fs::StdFs;

    /// [`StdFs`] whose `lstat` of one path says "a regular file" whatever is there: the
    /// disk changed between the path check's `lstat` and the read's open.
    struct LateSwap {
        fs: StdFs,
        path: RelPath,
    }

    impl FileSystem for LateSwap {
        fn entry(&self, p: &RelPath) -> std::io::Result<EntryKind> {
            if *p == self.path {
                return Ok(EntryKind::File {
                    links: 1,
                    mode: 0o644,
                    uid: 0,
                    gid: 0,
                });
            }
            self.fs.entry(p)
        }
        fn read(&self, p: &RelPath) -> std::io::Result<Vec<u8>> {
            self.fs.read(p)
        }
        fn xattrs(&self, p: &RelPath) -> std::io::Result<Xattrs> {
            self.fs.xattrs(p)
        }
        fn read_file(&self, p: &RelPath) -> std::io::Result<FileRead> {
            self.fs.read_file(p)
        }
        fn write_synced(
            &self,
            p: &RelPath,
            bytes: &[u8],
            meta: &FileMeta,
            xattrs: &Xattrs,
        ) -> std::io::Result<()> {
            self.fs.write_synced(p, bytes, meta, xattrs)
        }
        fn rename(&self, from: &RelPath, to: &RelPath) -> std::io::Result<()> {
            self.fs.rename(from, to)
        }
        fn remove_file(&self, p: &RelPath) -> std::io::Result<()> {
            self.fs.remove_file(p)
        }
        fn create_dir(&self, p: &RelPath) -> std::io::Result<()> {
            self.fs.create_dir(p)
        }
        fn remove_dir(&self, p: &RelPath) -> std::io::Result<()> {
            self.fs.remove_dir(p)
        }
        fn sync_dir(&self, p: &RelPath) -> std::io::Result<()> {
            self.fs.sync_dir(p)
        }
    }

    type State = (FileState, Option<Vec<u8>>, Option<Vec<u8>>);

    /// `read_state` of `f.txt` after `make` put something there, with the `lstat`
    /// answering "a regular file", on a thread: `None` if it did not return within
    /// 10 s (it blocked).
    fn read_swapped(make: impl FnOnce(&Path)) -> Option<Result<State>> {
        let dir = tempfile::tempdir().unwrap();
        make(&dir.path().join("f.txt"));
        let fs = LateSwap {
            fs: StdFs::beneath(dir.path()).unwrap(),
            path: RelPath::parse("f.txt").unwrap(),
        };
        let root = dir.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let got = read_state(&fs, &root, &RelPath::parse("f.txt").unwrap());
            let _ = tx.send(got);
            drop(dir);
        });
        rx.recv_timeout(std::time::Duration::from_secs(10)).ok()
    }

    /// What took a file's place between the path check and the read is refused with
    /// the path check's own typed errors, and a FIFO is never waited on (it blocked
    /// the open, holding the commit lock, until a writer came).
    #[test]
    fn a_swap_between_the_check_and_the_read_is_refused_as_the_check_would() {
        let fifo = read_swapped(|p| {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                p,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap()
        })
        .expect("reading a FIFO blocked");
        assert!(
            matches!(&fifo, Err(Error::Path(PathError::WrongKind { why, .. })) if why == "f.txt is not a regular file"),
            "{fifo:?}"
        );
        let link = read_swapped(|p| std::os::unix::fs::symlink("/etc/passwd", p).unwrap()).unwrap();
        assert!(
            matches!(&link, Err(Error::Path(PathError::IsSymlink { .. }))),
            "{link:?}"
        );
        let dir = read_swapped(|p| std::fs::create_dir(p).unwrap()).unwrap();
        assert!(
            matches!(&dir, Err(Error::Path(PathError::WrongKind { why, .. })) if why == "is a directory, not a file"),
            "{dir:?}"
        );
        let linked = read_swapped(|p| {
            std::fs::write(p, b"x\n").unwrap();
            std::fs::hard_link(p, p.with_extension("2")).unwrap();
        })
        .unwrap();
        assert!(
            matches!(
                &linked,
                Err(Error::Path(PathError::HardLinked { links: 2, .. }))
            ),
            "{linked:?}"
        );
        let gone = read_swapped(|_| {}).unwrap().unwrap();
        assert_eq!(gone, (FileState::ABSENT, None, None));
        // The mode and owner are the read descriptor's: of the file whose bytes these are.
        let file = read_swapped(|p| {
            std::fs::write(p, b"x\n").unwrap();
            std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
        })
        .unwrap()
        .unwrap();
        let FileState::File { meta, .. } = file.0 else {
            panic!("{file:?}")
        };
        assert_eq!(meta.mode, 0o600);
        assert_eq!(file.1.as_deref(), Some(&b"x\n"[..]));
    }
}
