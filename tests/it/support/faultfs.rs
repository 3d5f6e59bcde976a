//! A [`FileSystem`] twin that fails or "crashes" at a chosen operation.
//!
//! - `fail`: the first call of an operation on a path ending with a suffix returns an
//!   OS error, as a full disk or a read-only file would; later calls succeed (the fault
//!   is transient, so the revert that follows can finish).
//! - `crash_after`: after `n` mutating operations, the next one panics. The panic
//!   unwinds out of the library while a batch is half done, and the journal is left as
//!   a dead process would leave it; the test then opens the workspace again with the real
//!   filesystem and recovery runs. (Unlike a power cut, page-cache writes survive.)

use std::io;
use std::path::Path;
use std::sync::Mutex;

use ultra_edit::fs::{EntryKind, FileSystem, StdFs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    WriteSynced,
    Rename,
    RemoveFile,
    CreateDir,
    RemoveDir,
    SyncDir,
}

#[derive(Default)]
struct State {
    fail: Option<(Op, String, i32)>,
    crash_after: Option<usize>,
    mutations: usize,
    log: Vec<(Op, String)>,
}

#[derive(Default)]
pub struct FaultFs {
    state: Mutex<State>,
}

impl FaultFs {
    /// Fail every `op` on a path ending with `suffix` with `errno`.
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
    /// Every mutating operation so far.
    pub fn log(&self) -> Vec<(Op, String)> {
        self.state.lock().unwrap().log.clone()
    }

    fn check(&self, op: Op, path: &Path) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        let p = path.to_string_lossy().into_owned();
        if let Some((fop, suffix, errno)) = &s.fail {
            if *fop == op && p.ends_with(suffix.as_str()) {
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
    fn entry(&self, path: &Path) -> io::Result<EntryKind> {
        StdFs.entry(path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        StdFs.read(path)
    }
    fn write_synced(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        self.check(Op::WriteSynced, path)?;
        StdFs.write_synced(path, bytes, mode)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(Op::Rename, to)?;
        StdFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(Op::RemoveFile, path)?;
        StdFs.remove_file(path)
    }
    fn create_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::CreateDir, path)?;
        StdFs.create_dir(path)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::RemoveDir, path)?;
        StdFs.remove_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::SyncDir, path)?;
        StdFs.sync_dir(path)
    }
}
