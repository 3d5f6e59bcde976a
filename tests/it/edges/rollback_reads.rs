//! How many times a rollback of a large file reads it (docs/benchmarks.md, "Large
//! files and large batches"), and that a file changed after the commit, or while the
//! rollback runs, is still refused with nothing written.
//!
//! The reads are counted at the filesystem layer: the journal is opened on a
//! [`FileSystem`] that hands every call to the real one and counts the whole-file reads
//! of one path: "streamed" (`read_file_with`, `read_file_with_pre`: in pieces, not
//! held) and "whole" (`read`, `read_file`: into memory). In process, with the
//! `failpoints` feature: the failpoint `rollback::after_check` is given a callback that
//! acts only for this test's thread (thread-local state), so other tests of the
//! process running meanwhile are not touched.

#![cfg(feature = "failpoints")]

use std::cell::RefCell;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ultra_edit::fs::{EntryKind, FileRead, FileSystem, Pieces, RelPath, StdFs};
use ultra_edit::{Error, FileMeta, Journal, OpenOptions, Owner, Xattrs};

use crate::support::*;

use super::edits;

thread_local! {
    /// A file this thread's next rollback finds changed right after its own check of
    /// the files, and what it then holds.
    static CHANGE: RefCell<Option<(PathBuf, Vec<u8>)>> = const { RefCell::new(None) };
}

fn hooks() {
    fail::cfg_callback("rollback::after_check", || {
        if let Some((path, bytes)) = CHANGE.with(|c| c.borrow_mut().take()) {
            fs::write(path, bytes).unwrap();
        }
    })
    .unwrap();
}

/// The real filesystem, with the whole-file reads of `watched` counted ("streamed" or
/// "whole").
struct CountingFs {
    inner: StdFs,
    watched: String,
    reads: Arc<Mutex<Vec<&'static str>>>,
}

impl CountingFs {
    fn count(&self, path: &RelPath, call: &'static str) {
        if path.as_str() == self.watched {
            self.reads.lock().unwrap().push(call);
        }
    }
}

impl FileSystem for CountingFs {
    fn entry(&self, path: &RelPath) -> io::Result<EntryKind> {
        self.inner.entry(path)
    }
    fn read(&self, path: &RelPath) -> io::Result<Vec<u8>> {
        self.count(path, "whole");
        self.inner.read(path)
    }
    fn xattrs(&self, path: &RelPath) -> io::Result<Xattrs> {
        self.inner.xattrs(path)
    }
    fn acls_supported(&self, dir: &RelPath) -> io::Result<bool> {
        self.inner.acls_supported(dir)
    }
    fn default_acl_permissions(&self, dir: &RelPath) -> io::Result<Option<u32>> {
        self.inner.default_acl_permissions(dir)
    }
    fn read_file(&self, path: &RelPath) -> io::Result<FileRead> {
        self.count(path, "whole");
        self.inner.read_file(path)
    }
    fn read_file_with(&self, path: &RelPath, sink: &mut dyn FnMut(&[u8])) -> io::Result<FileRead> {
        self.count(path, "streamed");
        self.inner.read_file_with(path, sink)
    }
    fn read_file_with_pre(
        &self,
        path: &RelPath,
        pre: &mut (dyn FnMut(&[u8]) + Send),
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<FileRead> {
        self.count(path, "streamed");
        self.inner.read_file_with_pre(path, pre, sink)
    }
    fn write_synced_from(
        &self,
        path: &RelPath,
        pieces: Pieces<'_>,
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.inner.write_synced_from(path, pieces, meta, xattrs)
    }
    fn write_synced(
        &self,
        path: &RelPath,
        bytes: &[u8],
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.inner.write_synced(path, bytes, meta, xattrs)
    }
    fn rename(&self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &RelPath) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn create_dir(&self, path: &RelPath) -> io::Result<()> {
        self.inner.create_dir(path)
    }
    fn creation_owner(&self, dir: &RelPath) -> io::Result<Owner> {
        self.inner.creation_owner(dir)
    }
    fn set_owner(&self, path: &RelPath, owner: Owner) -> io::Result<()> {
        self.inner.set_owner(path, owner)
    }
    fn remove_dir(&self, path: &RelPath) -> io::Result<()> {
        self.inner.remove_dir(path)
    }
    fn sync_dir(&self, path: &RelPath) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn hold(&self, path: &RelPath) -> io::Result<Option<OwnedFd>> {
        self.inner.hold(path)
    }
    fn list_dir(&self, dir: &RelPath) -> io::Result<Vec<String>> {
        self.inner.list_dir(dir)
    }
    fn dir_writable(&self, dir: &RelPath) -> io::Result<bool> {
        self.inner.dir_writable(dir)
    }
}

/// A journal on `root` whose whole-file reads of `watched` are counted in the
/// returned list.
fn counting_journal(root: &Path, watched: &str) -> (Journal, Arc<Mutex<Vec<&'static str>>>) {
    let reads = Arc::new(Mutex::new(Vec::new()));
    let fs = CountingFs {
        inner: StdFs::beneath(&root.canonicalize().unwrap()).unwrap(),
        watched: watched.to_string(),
        reads: reads.clone(),
    };
    let j = Journal::open_with(root, OpenOptions::default().with_fs(Arc::new(fs))).unwrap();
    (j, reads)
}

/// The reads counted since the last call, and the list emptied.
fn taken(reads: &Mutex<Vec<&'static str>>) -> Vec<&'static str> {
    std::mem::take(&mut *reads.lock().unwrap())
}

/// 400,000 numbered lines of 29 bytes and a last one without its newline: 11.6 MB,
/// over the 8 MiB above which a rollback does not read a file whole.
fn big() -> Vec<u8> {
    let mut out = Vec::with_capacity(11 << 20);
    for i in 0..400_000u32 {
        out.extend_from_slice(format!("{i:08} line of the file ..\n").as_bytes());
    }
    out.extend_from_slice(b"last line");
    out
}

/// A workspace holding `big.txt` ([`big`]) and a journal counting its reads, with
/// line 200,000 replaced and committed. Returns the directory, the journal, the read
/// list, the original bytes, the committed bytes and the commit's tx.
#[allow(clippy::type_complexity)]
fn committed() -> (
    tempfile::TempDir,
    Journal,
    Arc<Mutex<Vec<&'static str>>>,
    Vec<u8>,
    Vec<u8>,
    u64,
) {
    hooks();
    let dir = tempfile::tempdir().unwrap();
    let original = big();
    fs::write(dir.path().join("big.txt"), &original).unwrap();
    drop(Journal::init(dir.path()).unwrap());
    let (j, reads) = counting_journal(dir.path(), "big.txt");
    let list = [serde_json::json!({
        "op": "replace_lines", "path": "big.txt", "start": 200_000, "end": 200_000,
        "content": "the middle line, replaced\n"
    })];
    let p = j.preview(&plan(&edits(&list))).unwrap();
    assert!(p.ready_to_commit, "{:?}", p.validation);
    taken(&reads);
    let r = j.commit(p.tx, Default::default()).unwrap();
    // The commit's three passes: the gate's hash, the splice, the install's hash.
    assert_eq!(
        taken(&reads),
        vec!["streamed"; 3],
        "the commit's reads of the file"
    );
    let new = fs::read(dir.path().join("big.txt")).unwrap();
    let mut want = original.clone();
    let line = format!("{:08} line of the file ..\n", 199_999).into_bytes();
    let at = 199_999 * line.len();
    assert_eq!(&original[at..at + line.len()], &line[..]);
    want.splice(
        at..at + line.len(),
        b"the middle line, replaced\n".iter().copied(),
    );
    assert_eq!(
        blake3::hash(&new),
        blake3::hash(&want),
        "the commit's bytes"
    );
    (dir, j, reads, original, new, r.tx)
}

/// Files in the workspace's root but the journal's directory.
fn left_in(root: &Path) -> Vec<String> {
    let mut left: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".ultra-edit")
        .collect();
    left.sort();
    left
}

/// A rollback of a one-line edit in an 11.6 MB file reads the file three times — its
/// own check of the file (its gate, which also scans it for the diff's window), the
/// splice of the temp, the install's last check — and restores it exactly; its diff is
/// the whole files' diff. (Before the window scan was folded into the check: four, the
/// scan reading the file again.)
#[test]
fn a_large_rollback_reads_the_file_three_times_and_is_exact() {
    let (dir, j, reads, original, new, tx) = committed();
    let r = j.rollback(tx, Default::default()).unwrap();
    assert_eq!(
        taken(&reads),
        vec!["streamed"; 3],
        "the rollback's reads of the file"
    );
    let path = dir.path().join("big.txt");
    assert_eq!(
        blake3::hash(&fs::read(&path).unwrap()),
        blake3::hash(&original)
    );
    let shown = j.show(r.tx, None).unwrap();
    let whole = ultra_edit::edit::candidate_diff("big.txt", Some(&new), Some(&original));
    assert_eq!(shown.files[0].diff, whole, "the rollback's diff");
    assert_eq!(left_in(dir.path()), vec!["big.txt".to_string()]);
}

/// The txs of the journal, oldest first, with their states.
fn txs(j: &Journal) -> Vec<(u64, ultra_edit::TxState)> {
    let mut all: Vec<_> = j
        .log(None)
        .unwrap()
        .into_iter()
        .map(|e| (e.tx, e.state))
        .collect();
    all.sort_by_key(|(tx, _)| *tx);
    all
}

/// A large file written outside ultra-edit after the commit (one byte, far from the
/// edit, the size kept) is refused as `StaleRollback` naming it, nothing written and
/// no tx recorded: the rollback's check reads it (hashed, and scanned for the window),
/// finds it is not the commit's post-image, and reads it whole to say so (2 reads).
/// Forced, the rollback keeps those bytes and restores the original exactly.
#[test]
fn a_large_file_changed_after_the_commit_is_refused_as_a_stale_rollback() {
    let (dir, j, reads, original, new, tx) = committed();
    let path = dir.path().join("big.txt");
    let mut theirs = new.clone();
    theirs[3_000_000] = b'#';
    fs::write(&path, &theirs).unwrap();
    let before = txs(&j);
    let err = j.rollback(tx, Default::default()).unwrap_err();
    match &err {
        Error::StaleRollback {
            tx: t,
            paths,
            changed_by,
            outside,
            absent,
        } => {
            assert_eq!(*t, tx);
            assert_eq!(paths, &vec!["big.txt".to_string()]);
            assert!(changed_by.is_empty(), "{changed_by:?}");
            assert_eq!(outside, &vec!["big.txt".to_string()]);
            assert!(absent.is_empty(), "{absent:?}");
        }
        other => panic!("expected StaleRollback, got {other:?}"),
    }
    assert_eq!(
        taken(&reads),
        vec!["streamed", "whole"],
        "the refused rollback's reads of the file"
    );
    assert_eq!(
        blake3::hash(&fs::read(&path).unwrap()),
        blake3::hash(&theirs)
    );
    assert_eq!(txs(&j), before, "no tx recorded");
    assert_eq!(left_in(dir.path()), vec!["big.txt".to_string()]);
    let mut forced = ultra_edit::RollbackOptions::new();
    forced.force = true;
    let r = j.rollback(tx, forced).unwrap();
    assert_eq!(
        blake3::hash(&fs::read(&path).unwrap()),
        blake3::hash(&original)
    );
    let shown = j.show(r.tx, None).unwrap();
    let whole = ultra_edit::edit::candidate_diff("big.txt", Some(&theirs), Some(&original));
    assert_eq!(shown.files[0].diff, whole, "the forced rollback's diff");
}

/// A large file written outside ultra-edit right after the rollback's own check of
/// the files (the failpoint `rollback::after_check`), which is the rollback's gate:
/// the splice finds the bytes changed and writes the temp from the journal, and the
/// install's last check refuses the file — `StaleSnapshot` naming it, the batch
/// reverted (its tx aborted, the commit still live), no temp left, the file holding
/// the other writer's bytes.
#[test]
fn a_large_file_changed_right_after_the_rollbacks_check_is_refused_and_left_as_it_is() {
    let (dir, j, reads, _original, new, tx) = committed();
    let path = dir.path().join("big.txt");
    let mut theirs = new.clone();
    theirs[3_000_000] = b'#';
    CHANGE.with(|c| *c.borrow_mut() = Some((path.clone(), theirs.clone())));
    let before = txs(&j);
    let err = j.rollback(tx, Default::default()).unwrap_err();
    assert!(CHANGE.with(|c| c.borrow().is_none()), "the failpoint ran");
    let rollback_tx = before.last().unwrap().0 + 1;
    match &err {
        Error::StaleSnapshot { tx: t, paths, .. } => {
            assert_eq!(
                (*t, paths.clone()),
                (rollback_tx, vec!["big.txt".to_string()])
            );
        }
        other => panic!("expected StaleSnapshot, got {other:?}"),
    }
    assert_eq!(
        taken(&reads),
        vec!["streamed"; 3],
        "the check, the splice, the install's check"
    );
    assert_eq!(
        blake3::hash(&fs::read(&path).unwrap()),
        blake3::hash(&theirs)
    );
    let mut want = before.clone();
    want.push((rollback_tx, ultra_edit::TxState::Aborted));
    assert_eq!(
        txs(&j),
        want,
        "the rollback's tx aborted, tx {tx} still committed"
    );
    assert_eq!(left_in(dir.path()), vec!["big.txt".to_string()]);
}
