//! The commit gate (docs/design.md, "Lifecycle" › 3. Commit gate): checks made under the
//! commit lock, before the intent.

use std::collections::BTreeSet;

use crate::engine::Ws;
use crate::error::{Error, IoContext, OwnedPath, Result};
use crate::fs::{snapshot, EntryKind, RelPath};
use crate::journal::records::{BatchFile, FileState, Owner};

/// Paths whose disk state (existence, blake3, mode) differs from `expected`, sorted.
/// Reading each path runs the on-disk path-safety check again (the gate's "path safety
/// under the lock"); a refused path is an error.
pub(crate) fn stale_paths<'a>(
    ws: &Ws,
    expected: impl IntoIterator<Item = (&'a RelPath, &'a FileState)>,
) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (rel, want) in expected {
        let (found, _, _) = snapshot::read_state(ws.fs.as_ref(), &ws.root, rel)?;
        if !want.matches(&found) {
            stale.push(rel.to_string());
        }
    }
    stale.sort();
    Ok(stale)
}

/// Make sure every file the batch writes keeps its recorded owner: a commit writes a new
/// inode, which gets the process's owner unless the process can give it the old one.
/// Root can; another user only its own uid and a group it belongs to (chown(2)). The
/// files it cannot keep are refused ([`Error::OwnerNotKept`], nothing written) unless
/// `allow_change`: then their post-images record no owner and they get the process's.
pub(crate) fn keep_owners(tx: u64, files: &mut [BatchFile], allow_change: bool) -> Result<()> {
    let euid = rustix::process::geteuid().as_raw();
    if euid == 0 {
        return Ok(());
    }
    let egid = rustix::process::getegid().as_raw();
    let groups: Vec<u32> = rustix::process::getgroups()
        .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
        .unwrap_or_default();
    let settable = |o: &Owner| o.uid == euid && (o.gid == egid || groups.contains(&o.gid));
    let mut refused = Vec::new();
    for f in files.iter_mut() {
        let FileState::File { meta, .. } = &mut f.post else {
            continue;
        };
        match meta.owner {
            Some(o) if !settable(&o) => {
                if allow_change {
                    meta.owner = None;
                } else {
                    refused.push(OwnedPath {
                        path: f.path.to_string(),
                        uid: o.uid,
                        gid: o.gid,
                    });
                }
            }
            _ => {}
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Error::OwnerNotKept {
            tx,
            uid: euid,
            files: refused,
        })
    }
}

/// Directories that must be created for the files a batch writes, parents first.
pub(crate) fn dirs_to_create(ws: &Ws, files: &[BatchFile]) -> Result<Vec<RelPath>> {
    let mut missing = BTreeSet::new();
    for f in files.iter().filter(|f| f.post.exists()) {
        missing.extend(missing_parents(ws, &f.path)?);
    }
    let mut dirs: Vec<RelPath> = missing.into_iter().collect();
    dirs.sort_by_key(|d| (d.components().count(), d.clone()));
    Ok(dirs)
}

/// The directories above `rel` that do not exist, outermost first.
pub(crate) fn missing_parents(ws: &Ws, rel: &RelPath) -> Result<Vec<RelPath>> {
    let mut missing = Vec::new();
    for dir in rel.ancestors() {
        if ws.fs.entry(&dir).ctx("lstat", ws.abs(&dir))? == EntryKind::Absent {
            missing.push(dir);
        }
    }
    Ok(missing)
}
