//! A [`FileSystem`] twin that fails or "crashes" at a chosen operation.
//!
//! - `fail`: the first call of an operation on a path containing a string returns an
//!   OS error, as a full disk or a read-only file would; later calls succeed (the fault
//!   is transient, so the revert that follows can finish).
//! - `crash_after`: after `n` mutating operations, the next one panics. The panic
//!   unwinds out of the library while a batch is half done, and the journal is left as
//!   a dead process would leave it; the test then opens the workspace again with the real
//!   filesystem and recovery runs. (Unlike a power cut, page-cache writes survive.)

use std::io;
use std::path::Path;
use std::sync::Mutex;

use std::sync::OnceLock;

use ultra_edit::fs::{EntryKind, FileSystem, RelPath, StdFs};
use ultra_edit::{FileMeta, Owner, Xattrs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    WriteSynced,
    Rename,
    RemoveFile,
    CreateDir,
    RemoveDir,
    SyncDir,
}

/// Something to do just before an operation, once.
type Hook = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    fail: Option<(Op, String, i32)>,
    before: Option<(Op, String, Hook)>,
    crash_after: Option<usize>,
    mutations: usize,
    log: Vec<(Op, String)>,
}

#[derive(Default)]
pub struct FaultFs {
    state: Mutex<State>,
    /// The real filesystem underneath, confined to the workspace root ([`FaultFs::beneath`]).
    inner: OnceLock<StdFs>,
    /// Say that no directory can hold POSIX ACLs (a filesystem mounted `noacl`).
    no_acls: bool,
}

impl FaultFs {
    /// Fail the first `op` on a path containing `suffix` with `errno`.
    pub fn fail(op: Op, suffix: &str, errno: i32) -> Self {
        let fs = FaultFs::default();
        fs.state.lock().unwrap().fail = Some((op, suffix.to_string(), errno));
        fs
    }
    /// Panic on the mutating operation after the first `n`.
    pub fn crash_after(n: usize) -> Self {
        let fs = FaultFs::default();
        fs.state.lock().unwrap().crash_after = Some(n);
        fs
    }
    /// A filesystem that says it cannot store POSIX ACLs
    /// ([`FileSystem::acls_supported`] is `false`) and otherwise works.
    pub fn without_acls() -> Self {
        FaultFs {
            no_acls: true,
            ..FaultFs::default()
        }
    }
    /// Run `hook` just before the first `op` on a path containing `substring` (e.g.
    /// another process writing a file between two steps of a batch).
    pub fn before(op: Op, substring: &str, hook: impl FnOnce() + Send + 'static) -> Self {
        let fs = FaultFs::default();
        fs.state.lock().unwrap().before = Some((op, substring.to_string(), Box::new(hook)));
        fs
    }

    /// Work on the real filesystem of `root` (every twin must be given its root before
    /// the journal opens it; [`super::faulty`] does).
    pub fn beneath(self, root: &Path) -> Self {
        let fs = StdFs::beneath(&root.canonicalize().expect("canonical root")).expect("open root");
        let _ = self.inner.set(fs);
        self
    }

    fn std_fs(&self) -> &StdFs {
        self.inner
            .get()
            .expect("FaultFs used before FaultFs::beneath(root)")
    }

    /// Every mutating operation so far.
    pub fn log(&self) -> Vec<(Op, String)> {
        self.state.lock().unwrap().log.clone()
    }

    fn check(&self, op: Op, path: &RelPath) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        // Matched as a root-anchored path (`/src/a.rs`), so a pattern can say "/src".
        let here = format!("/{path}");
        if s.before
            .as_ref()
            .is_some_and(|(o, sub, _)| *o == op && here.contains(sub.as_str()))
        {
            if let Some((_, _, hook)) = s.before.take() {
                drop(s);
                hook();
                s = self.state.lock().unwrap();
            }
        }
        let p = here.clone();
        if let Some((fop, suffix, errno)) = &s.fail {
            if *fop == op && p.contains(suffix.as_str()) {
                let err = io::Error::from_raw_os_error(*errno);
                s.fail = None;
                return Err(err);
            }
        }
        if let Some(n) = s.crash_after {
            if s.mutations >= n {
                drop(s);
                panic!("simulated crash before {op:?} {p}");
            }
        }
        s.mutations += 1;
        s.log.push((op, p));
        Ok(())
    }
}

impl FileSystem for FaultFs {
    fn entry(&self, path: &RelPath) -> io::Result<EntryKind> {
        self.std_fs().entry(path)
    }
    fn read(&self, path: &RelPath) -> io::Result<Vec<u8>> {
        self.std_fs().read(path)
    }
    fn xattrs(&self, path: &RelPath) -> io::Result<Xattrs> {
        self.std_fs().xattrs(path)
    }
    fn acls_supported(&self, dir: &RelPath) -> io::Result<bool> {
        if self.no_acls {
            return Ok(false);
        }
        self.std_fs().acls_supported(dir)
    }
    fn write_synced(
        &self,
        path: &RelPath,
        bytes: &[u8],
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.check(Op::WriteSynced, path)?;
        self.std_fs().write_synced(path, bytes, meta, xattrs)
    }
    fn rename(&self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        self.check(Op::Rename, to)?;
        self.std_fs().rename(from, to)
    }
    fn remove_file(&self, path: &RelPath) -> io::Result<()> {
        self.check(Op::RemoveFile, path)?;
        self.std_fs().remove_file(path)
    }
    fn create_dir(&self, path: &RelPath) -> io::Result<()> {
        self.check(Op::CreateDir, path)?;
        self.std_fs().create_dir(path)
    }
    fn creation_owner(&self, dir: &RelPath) -> io::Result<Owner> {
        self.std_fs().creation_owner(dir)
    }
    fn set_owner(&self, path: &RelPath, owner: Owner) -> io::Result<()> {
        self.std_fs().set_owner(path, owner)
    }
    fn remove_dir(&self, path: &RelPath) -> io::Result<()> {
        self.check(Op::RemoveDir, path)?;
        self.std_fs().remove_dir(path)
    }
    fn sync_dir(&self, path: &RelPath) -> io::Result<()> {
        self.check(Op::SyncDir, path)?;
        self.std_fs().sync_dir(path)
    }
}
