//! The commit gate (docs/design.md, "Lifecycle" › 3. Commit gate): checks made under the
//! commit lock, before the intent.

use std::collections::BTreeSet;

use crate::engine::Ws;
use crate::error::{Error, IoContext, OwnedPath, Result, StaleWriter, Verb};
use crate::fs::{acl, snapshot, EntryKind, RelPath};
use crate::journal::records::{BatchFile, BatchState, FileState, Owner, Xattrs};

/// What [`stale_paths`] does with a path that is refused when read (no longer a
/// regular file of the workspace: a link, a FIFO).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// An error: the gate's "path safety under the lock".
    Fails,
    /// Stale, like any other change (a report, as `show`'s).
    IsStale,
}

/// Paths whose disk state (existence, blake3, mode, owner, kept attributes) differs
/// from `expected`, sorted. Reading each path runs the on-disk path-safety check again;
/// a refused path is handled as `refused` says.
pub(crate) fn stale_paths<'a>(
    ws: &Ws,
    expected: impl IntoIterator<Item = (&'a RelPath, &'a FileState)>,
    refused: Refused,
) -> Result<Vec<String>> {
    let mut stale = Vec::new();
    for (rel, want) in expected {
        match snapshot::state_of(ws.fs.as_ref(), &ws.root, rel) {
            Ok((found, _)) if want.matches(&found) => {}
            Ok(_) => stale.push(rel.to_string()),
            Err(Error::Path(_)) if refused == Refused::IsStale => stale.push(rel.to_string()),
            Err(e) => return Err(e),
        }
    }
    stale.sort();
    Ok(stale)
}

/// Who changed each of `stale` (the stale paths of tx `tx`, in order) since the
/// preview: the newest committed batch of another tx whose post-image of the path is
/// the disk's state now names that tx and its agent; else the writer was outside
/// ultra-edit ([`StaleWriter::tx`] `None`). One read of each file and one scan of the
/// batches; run under the commit lock.
pub(crate) fn writers(ws: &Ws, tx: u64, stale: &[String]) -> Result<Vec<StaleWriter>> {
    let mut now = Vec::with_capacity(stale.len());
    for path in stale {
        let state = RelPath::parse(path)
            .ok()
            .and_then(|rel| snapshot::state_of(ws.fs.as_ref(), &ws.root, &rel).ok())
            .map(|(found, _)| found);
        now.push(state);
    }
    let r = ws.store.read()?;
    // Per path: the newest batch (highest id) that left it as it is now.
    let mut found: Vec<Option<(u64, u64)>> = vec![None; stale.len()];
    r.scan_batches(|id, b| {
        let Ok(b) = b else { return Ok(()) };
        if b.tx == tx || b.state != BatchState::Committed {
            return Ok(());
        }
        for f in &b.files {
            for (i, path) in stale.iter().enumerate() {
                let written =
                    f.path.as_str() == path && now[i].as_ref().is_some_and(|n| f.post.matches(n));
                if written && found[i].is_none_or(|(batch, _)| batch < id) {
                    found[i] = Some((id, b.tx));
                }
            }
        }
        Ok(())
    })?;
    let mut out = Vec::with_capacity(stale.len());
    for (path, hit) in stale.iter().zip(found) {
        let tx = hit.map(|(_, tx)| tx);
        let agent = match tx {
            Some(t) => r.tx(t)?.and_then(|rec| rec.agent),
            None => None,
        };
        out.push(StaleWriter {
            path: path.clone(),
            tx,
            agent,
        });
    }
    Ok(out)
}

/// The rule of batches that need attention (docs/design.md, "Recovery"): a batch in
/// `NeedsAttention` owns its files until it is settled, because settling it (`recover`,
/// once the foreign bytes are gone, or `recover --overwrite`) writes them. So a verb that
/// would write any of `paths` — a commit, a rollback, a revert of tx `tx` — is refused
/// with [`Error::AttentionOwnsFiles`], naming the first such batch (by id), the files
/// both would write, all of its files and those that hold foreign bytes; `Ok(())` when
/// no batch that needs attention names any of `paths`. Reads the journal only; run it
/// under the commit lock, after recovery, so that no batch changes state meanwhile.
/// Previews are not checked: they write no file.
pub(crate) fn attention_owner<'a>(
    ws: &Ws,
    tx: u64,
    verb: Verb,
    paths: impl IntoIterator<Item = &'a RelPath>,
) -> Result<()> {
    let wanted: BTreeSet<&RelPath> = paths.into_iter().collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let r = ws.store.read()?;
    for id in r.inflight()? {
        let Some(rec) = r.batch(id)? else {
            continue;
        };
        if rec.state != BatchState::NeedsAttention {
            continue;
        }
        let mut shared: Vec<String> = rec
            .files
            .iter()
            .filter(|f| wanted.contains(&f.path))
            .map(|f| f.path.to_string())
            .collect();
        if shared.is_empty() {
            continue;
        }
        shared.sort();
        let mut files: Vec<String> = rec.files.iter().map(|f| f.path.to_string()).collect();
        files.sort();
        let mut foreign: Vec<String> = rec.foreign.iter().map(|f| f.path.to_string()).collect();
        foreign.sort();
        foreign.dedup();
        return Err(Error::AttentionOwnsFiles {
            tx,
            verb,
            batch: rec.batch,
            batch_tx: rec.tx,
            paths: shared,
            files,
            foreign,
        });
    }
    Ok(())
}

/// The owners this process may give a file it creates (chown(2)): root any; another
/// user its own uid with a group it belongs to, or with the group the file gets at its
/// creation anyway (a directory's set-group-ID group, which a chown may keep).
pub(crate) struct Chown {
    euid: u32,
    egid: u32,
    groups: Vec<u32>,
}

impl Chown {
    /// This process's ids.
    pub(crate) fn current() -> Chown {
        let owner = crate::fs::process_owner();
        let groups = if owner.uid == 0 {
            Vec::new()
        } else {
            rustix::process::getgroups()
                .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
                .unwrap_or_default()
        };
        Chown {
            euid: owner.uid,
            egid: owner.gid,
            groups,
        }
    }

    /// The effective uid.
    pub(crate) fn uid(&self) -> u32 {
        self.euid
    }

    /// Whether this process can give a new file in the directory of `rel` the owner
    /// `o`. Asks the filesystem only for a group outside the process's.
    pub(crate) fn can_give(&self, ws: &Ws, rel: &RelPath, o: &Owner) -> Result<bool> {
        if self.euid == 0 {
            return Ok(true);
        }
        if o.uid != self.euid {
            return Ok(false);
        }
        if o.gid == self.egid || self.groups.contains(&o.gid) {
            return Ok(true);
        }
        Ok(creation_owner(ws, rel)?.gid == o.gid)
    }
}

/// The owner a file created at `rel` gets ([`crate::fs::FileSystem::creation_owner`]
/// of its nearest existing directory: a directory the batch creates inherits the
/// set-group-ID group of the one it is created in).
pub(crate) fn creation_owner(ws: &Ws, rel: &RelPath) -> Result<Owner> {
    let dir = nearest_existing_dir(ws, rel)?;
    Ok(ws.fs.creation_owner(&dir).ctx("stat", ws.abs(&dir))?)
}

/// The nearest directory above `rel` that exists: what a file created at `rel` (and
/// each directory made for it) inherits from — a set-group-ID group, a default ACL.
pub(crate) fn nearest_existing_dir(ws: &Ws, rel: &RelPath) -> Result<RelPath> {
    Ok(match missing_parents(ws, rel)?.first() {
        Some(outermost) => outermost.parent(),
        None => rel.parent(),
    })
}

/// Make sure every file the batch writes keeps its recorded owner: a commit writes a new
/// inode, which gets the process's owner unless the process can give it the old one.
/// Root can; another user only its own uid and a group it belongs to (chown(2)). The
/// files it cannot keep are refused ([`Error::OwnerNotKept`], nothing written) unless
/// `allow_change`: then their post-images record no owner and they get the process's
/// ([`record_creation_owners`]).
pub(crate) fn keep_owners(
    ws: &Ws,
    tx: u64,
    files: &mut [BatchFile],
    allow_change: bool,
) -> Result<()> {
    let chown = Chown::current();
    if chown.uid() == 0 {
        return Ok(());
    }
    let mut refused = Vec::new();
    for f in files.iter_mut() {
        let FileState::File { meta, .. } = &mut f.post else {
            continue;
        };
        match meta.owner {
            Some(o) if !chown.can_give(ws, &f.path, &o)? => {
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
            uid: chown.uid(),
            files: refused,
        })
    }
}

/// Record the owner of every file the batch writes without a recorded owner — a file
/// it creates, or one whose owner change was accepted — as the owner this process gives
/// it ([`creation_owner`]), before the intent. The committer's owner is then part of the
/// batch, so a recovery run by another user (root, in a container) gives the file the
/// owner the commit would have, not its own (docs/commit-protocol.md, "Owners").
/// One `stat` per directory that holds such files.
pub(crate) fn record_creation_owners(ws: &Ws, files: &mut [BatchFile]) -> Result<()> {
    let mut known: std::collections::BTreeMap<RelPath, Owner> = Default::default();
    for f in files.iter_mut() {
        let FileState::File { meta, .. } = &mut f.post else {
            continue;
        };
        if meta.owner.is_some() {
            continue;
        }
        let dir = f.path.parent();
        let owner = match known.get(&dir) {
            Some(o) => *o,
            None => {
                let o = creation_owner(ws, &f.path)?;
                known.insert(dir, o);
                o
            }
        };
        meta.owner = Some(owner);
    }
    Ok(())
}

/// Make sure every file the batch writes with a POSIX ACL can get it: a file whose
/// recorded attributes hold an access ACL ([`acl::ACCESS`]) is refused
/// ([`Error::AclNotKept`], nothing written) when the filesystem of its nearest existing
/// directory answers `EOPNOTSUPP` for ACLs. Writing it without the ACL would keep the
/// mode's group bits, which are the ACL's mask, and so could give the owning group
/// access the ACL denied. Files without an ACL cost no system call.
pub(crate) fn keep_acls(ws: &Ws, tx: u64, files: &[BatchFile]) -> Result<()> {
    let mut refused = Vec::new();
    let mut reader = None;
    for f in files {
        let Some(x) = f.post.xattrs() else {
            continue;
        };
        if x == Xattrs::empty_hash() {
            continue;
        }
        let reader = match &mut reader {
            Some(r) => r,
            None => reader.insert(ws.store.read()?),
        };
        if !reader
            .xattrs(&f.post)?
            .0
            .iter()
            .any(|(n, _)| n == acl::ACCESS)
        {
            continue;
        }
        let mut dir = RelPath::root();
        for d in f.path.ancestors() {
            if ws.fs.entry(&d).ctx("lstat", ws.abs(&d))? != EntryKind::Dir {
                break;
            }
            dir = d;
        }
        if !ws.fs.acls_supported(&dir).ctx("getxattr", ws.abs(&dir))? {
            refused.push(f.path.to_string());
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    refused.sort();
    Err(Error::AclNotKept { tx, paths: refused })
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
