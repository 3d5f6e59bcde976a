//! Reading what a command wrote from the overlay's upper directory, at a cost that
//! follows the change, not the tree: the upper directory holds only what the command
//! created or modified (copied up whole: `metacopy=off`), a whiteout (a character device
//! 0/0) for each path it deleted, and an "opaque" directory (xattr
//! `trusted.overlay.opaque` or, with `userxattr`, `user.overlay.opaque` = `y`) for a
//! directory it removed and made again. Deleted directories are listed from the real
//! root (the lower layer), file by file.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use crate::error::{IoContext, IoError, RefusedPath};

/// A path's state after the command, as the upper directory records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// A regular file with these bytes and permission bits (`mode & 0o777`).
    File { bytes: Vec<u8>, mode: u32 },
    /// The path no longer exists.
    Deleted,
}

/// Everything the upper directory records, by root-relative path.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    pub changes: BTreeMap<String, Found>,
    /// What a plan cannot hold: symlinks, FIFOs, sockets, devices, hard links.
    pub refused: Vec<RefusedPath>,
    /// Paths whose last name is not UTF-8, made or removed by the command (a plan's
    /// paths are UTF-8 text): the name's bytes written with [`escaped`].
    pub non_utf8: Vec<String>,
}

/// A file name that is not UTF-8, as text: ASCII as it is, every other byte (and `\`,
/// quotes, control characters) as Rust's `escape_ascii` writes it (`caf\xe9.txt`).
pub(crate) fn escaped(name: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    name.as_bytes().escape_ascii().to_string()
}

/// Read `upper` (the upper directory of an overlay whose lower layer is `lower`).
pub(crate) fn scan(upper: &Path, lower: &Path) -> Result<Captured, IoError> {
    let mut c = Captured::default();
    walk(&mut c, upper, lower, "", 0)?;
    Ok(c)
}

fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        format!("{rel}/{name}")
    }
}

fn is_whiteout(m: &fs::Metadata) -> bool {
    m.file_type().is_char_device() && m.rdev() == 0
}

fn is_opaque(dir: &Path) -> bool {
    ["trusted.overlay.opaque", "user.overlay.opaque"]
        .iter()
        .any(|name| {
            let mut buf = [0u8; 8];
            matches!(rustix::fs::lgetxattr(dir, *name, &mut buf), Ok(n) if n >= 1 && buf[0] == b'y')
        })
}

/// Depth bound of the walk (a deeper tree is no workspace).
const MAX_DEPTH: usize = 4096;

fn walk(c: &mut Captured, up: &Path, lower: &Path, rel: &str, depth: usize) -> Result<(), IoError> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let mut entries: Vec<_> = fs::read_dir(up)
        .ctx("readdir", up)?
        .collect::<std::io::Result<Vec<_>>>()
        .ctx("readdir", up)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            c.non_utf8.push(join(rel, &escaped(&name)));
            continue;
        };
        let child_rel = join(rel, name);
        let child_up = e.path();
        let child_low = lower.join(&child_rel);
        let m = fs::symlink_metadata(&child_up).ctx("lstat", &child_up)?;
        let low = fs::symlink_metadata(&child_low).ok();
        let ft = m.file_type();
        if is_whiteout(&m) {
            deleted_below(c, lower, &child_rel, low.as_ref(), depth)?;
        } else if ft.is_dir() {
            if low.as_ref().is_some_and(|l| !l.is_dir()) {
                c.changes.insert(child_rel.clone(), Found::Deleted);
            } else if low.is_some() && is_opaque(&child_up) {
                // Made again after it was removed: what the lower layer has there and
                // the upper does not is gone.
                let rd = fs::read_dir(&child_low).ctx("readdir", &child_low)?;
                for le in rd.flatten() {
                    if fs::symlink_metadata(child_up.join(le.file_name())).is_err() {
                        match le.file_name().to_str() {
                            Some(n) => {
                                let r = join(&child_rel, n);
                                let lm = fs::symlink_metadata(lower.join(&r)).ok();
                                deleted_below(c, lower, &r, lm.as_ref(), depth + 1)?;
                            }
                            None => c.non_utf8.push(join(&child_rel, &escaped(&le.file_name()))),
                        }
                    }
                }
            }
            walk(c, &child_up, lower, &child_rel, depth + 1)?;
        } else if ft.is_file() {
            if m.nlink() > 1 {
                c.refused.push(RefusedPath {
                    path: child_rel,
                    kind: "hard_link".into(),
                });
                continue;
            }
            if low.as_ref().is_some_and(|l| l.is_dir()) {
                deleted_below(c, lower, &child_rel, low.as_ref(), depth)?;
            }
            let bytes = fs::read(&child_up).ctx("read", &child_up)?;
            c.changes.insert(
                child_rel,
                Found::File {
                    bytes,
                    mode: m.mode() & 0o777,
                },
            );
        } else {
            let kind = if ft.is_symlink() {
                "symlink"
            } else if ft.is_fifo() {
                "fifo"
            } else if ft.is_socket() {
                "socket"
            } else {
                "device"
            };
            c.refused.push(RefusedPath {
                path: child_rel,
                kind: kind.into(),
            });
        }
    }
    Ok(())
}

/// `rel` was deleted: a file, or every file under a directory of the lower layer.
fn deleted_below(
    c: &mut Captured,
    lower: &Path,
    rel: &str,
    low: Option<&fs::Metadata>,
    depth: usize,
) -> Result<(), IoError> {
    let Some(low) = low else { return Ok(()) };
    if !low.is_dir() {
        let ft = low.file_type();
        if ft.is_file() {
            c.changes.insert(rel.to_string(), Found::Deleted);
        } else {
            // A plan deletes regular files only: the removal of a symbolic link or a
            // special file cannot be recorded, and dropping it would commit part of
            // what the command did.
            c.refused.push(RefusedPath {
                path: rel.to_string(),
                kind: if ft.is_symlink() {
                    "removed_symlink"
                } else {
                    "removed_special_file"
                }
                .into(),
            });
        }
        return Ok(());
    }
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let dir = lower.join(rel);
    for e in fs::read_dir(&dir).ctx("readdir", &dir)?.flatten() {
        match e.file_name().to_str() {
            Some(n) => {
                let r = join(rel, n);
                let m = fs::symlink_metadata(lower.join(&r)).ok();
                deleted_below(c, lower, &r, m.as_ref(), depth + 1)?;
            }
            // Removed with its directory: a plan cannot name it to delete it, and
            // leaving it would commit part of what the command did.
            None => c.non_utf8.push(join(rel, &escaped(&e.file_name()))),
        }
    }
    Ok(())
}
