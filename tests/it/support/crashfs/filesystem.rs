//! [`CrashFs`]: the in-memory filesystem with volatile and durable views (see the
//! module docs of `crashfs`).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use ultra_edit::fs::{EntryKind, FileSystem, RelPath};
use ultra_edit::{FileMeta, Xattrs};

use super::*;

/// Mode of directories made by `create_dir` (what 0o777 & ~umask gives under the usual
/// umask 022; no umask is modelled).
pub const DIR_MODE: u32 = 0o755;

type Ino = u64;
const ROOT: Ino = 1;

/// A file's content and metadata.
#[derive(Debug, Clone)]
struct FileData {
    bytes: Arc<Vec<u8>>,
    mode: u32,
    /// (uid, gid).
    owner: (u32, u32),
    xattrs: Xattrs,
}

impl FileData {
    /// What `open(O_CREAT, 0o600)` makes: empty, the process's, no xattrs.
    fn fresh() -> FileData {
        FileData {
            bytes: Arc::new(Vec::new()),
            mode: 0o600,
            owner: process_owner(),
            xattrs: Xattrs::default(),
        }
    }
}

#[derive(Debug, Clone)]
enum Inode {
    /// `now` is what the running program sees; `synced` what the file's last `fsync`
    /// made durable — bytes *and* metadata: an owner, mode or xattr set after the fsync
    /// is lost by a power cut like unsynced bytes.
    File { now: FileData, synced: FileData },
    Dir {
        mode: u32,
        volatile: BTreeMap<String, Ino>,
        durable: BTreeMap<String, Ino>,
    },
}

#[derive(Debug, Clone)]
struct Model {
    inodes: BTreeMap<Ino, Inode>,
    next: Ino,
}

impl Model {
    fn new() -> Model {
        let mut inodes = BTreeMap::new();
        inodes.insert(
            ROOT,
            Inode::Dir {
                mode: DIR_MODE,
                volatile: BTreeMap::new(),
                durable: BTreeMap::new(),
            },
        );
        Model {
            inodes,
            next: ROOT + 1,
        }
    }

    fn alloc(&mut self, node: Inode) -> Ino {
        let ino = self.next;
        self.next += 1;
        self.inodes.insert(ino, node);
        ino
    }

    fn node(&self, ino: Ino) -> &Inode {
        &self.inodes[&ino]
    }

    fn entries(&self, dir: Ino) -> &BTreeMap<String, Ino> {
        match self.node(dir) {
            Inode::Dir { volatile, .. } => volatile,
            Inode::File { .. } => unreachable!("entries of a file"),
        }
    }

    fn entries_mut(&mut self, dir: Ino) -> &mut BTreeMap<String, Ino> {
        match self.inodes.get_mut(&dir).unwrap() {
            Inode::Dir { volatile, .. } => volatile,
            Inode::File { .. } => unreachable!("entries of a file"),
        }
    }

    fn is_dir(&self, ino: Ino) -> bool {
        matches!(self.node(ino), Inode::Dir { .. })
    }

    /// Walk `parts` through volatile entries: the inode, or ENOENT / ENOTDIR.
    fn lookup(&self, parts: &[String]) -> io::Result<Ino> {
        let mut at = ROOT;
        for p in parts {
            if !self.is_dir(at) {
                return Err(errno(ENOTDIR));
            }
            at = *self.entries(at).get(p).ok_or_else(|| errno(ENOENT))?;
        }
        Ok(at)
    }

    /// The directory holding the last of `parts`, and that name. The root has no parent.
    fn parent<'a>(&self, parts: &'a [String]) -> io::Result<(Ino, &'a str)> {
        let (name, dir) = parts.split_last().ok_or_else(|| errno(EBUSY))?;
        let ino = self.lookup(dir)?;
        if !self.is_dir(ino) {
            return Err(errno(ENOTDIR));
        }
        Ok((ino, name))
    }

    /// Hard links of `target` in the volatile tree.
    fn links(&self, target: Ino) -> u64 {
        let mut n = 0;
        let mut stack = vec![ROOT];
        while let Some(d) = stack.pop() {
            for &ino in self.entries(d).values() {
                if ino == target {
                    n += 1;
                }
                if self.is_dir(ino) {
                    stack.push(ino);
                }
            }
        }
        n
    }

    /// Every directory's durable entries := its volatile entries.
    fn sync_everything(&mut self) {
        for node in self.inodes.values_mut() {
            if let Inode::Dir {
                volatile, durable, ..
            } = node
            {
                *durable = volatile.clone();
            }
        }
    }

    /// The tree reached from the root through durable entries, with volatile = durable.
    /// Inode numbers are kept, so a file durably named twice stays one inode.
    fn durable_view(&self) -> Model {
        let mut out = Model {
            inodes: BTreeMap::new(),
            next: self.next,
        };
        let mut stack = vec![ROOT];
        while let Some(ino) = stack.pop() {
            if out.inodes.contains_key(&ino) {
                continue;
            }
            let node = match self.node(ino) {
                Inode::File { synced, .. } => Inode::File {
                    now: synced.clone(),
                    synced: synced.clone(),
                },
                Inode::Dir { mode, durable, .. } => {
                    stack.extend(durable.values().copied());
                    Inode::Dir {
                        mode: *mode,
                        volatile: durable.clone(),
                        durable: durable.clone(),
                    }
                }
            };
            out.inodes.insert(ino, node);
        }
        out
    }
}

/// One entry of a listed tree: a file with its bytes, mode, owner and xattrs.
#[derive(Clone, PartialEq, Eq)]
pub enum TreeEntry {
    File {
        bytes: Vec<u8>,
        mode: u32,
        owner: (u32, u32),
        xattrs: Xattrs,
    },
    Dir {
        mode: u32,
    },
}

impl fmt::Debug for TreeEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeEntry::File {
                bytes,
                mode,
                owner,
                xattrs,
            } => write!(
                f,
                "file {mode:o} {}:{} {:?} xattrs {:?}",
                owner.0,
                owner.1,
                String::from_utf8_lossy(bytes).as_ref(),
                xattrs.0
            ),
            TreeEntry::Dir { mode } => write!(f, "dir {mode:o}"),
        }
    }
}

/// A whole tree: root-relative `/`-separated path → entry (the root itself left out).
pub type Tree = BTreeMap<String, TreeEntry>;

/// An in-memory POSIX filesystem rooted at an absolute path, with volatile and durable
/// views (see the module docs).
pub struct CrashFs {
    root: PathBuf,
    power: Arc<PowerCut>,
    model: Mutex<Model>,
}

impl fmt::Debug for CrashFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrashFs")
            .field("root", &self.root)
            .field("tree", &self.tree())
            .finish()
    }
}

impl CrashFs {
    /// An empty filesystem at `root` (an absolute path; give the canonical one), with a
    /// fresh controller.
    pub fn new(root: &Path) -> CrashFs {
        CrashFs::with_power(root, PowerCut::new())
    }

    /// An empty filesystem at `root` on the controller `power`.
    pub fn with_power(root: &Path, power: Arc<PowerCut>) -> CrashFs {
        assert!(root.is_absolute(), "CrashFs root must be absolute");
        CrashFs {
            root: root.to_path_buf(),
            power,
            model: Mutex::new(Model::new()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The controller this filesystem counts its syncs on.
    pub fn power(&self) -> Arc<PowerCut> {
        self.power.clone()
    }

    fn model(&self) -> MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Set-up: put a file at root-relative `rel`, creating missing parents (mode
    /// [`DIR_MODE`]), owned by the process. Its name is volatile until
    /// [`CrashFs::sync_all`], its content durable; counts no sync.
    pub fn put_file(&self, rel: &str, bytes: &[u8], mode: u32) {
        self.put_file_owned(rel, bytes, mode, process_owner(), Xattrs::default());
    }

    /// [`CrashFs::put_file`] with the owner `(uid, gid)` and extended attributes.
    pub fn put_file_owned(
        &self,
        rel: &str,
        bytes: &[u8],
        mode: u32,
        owner: (u32, u32),
        xattrs: Xattrs,
    ) {
        let parts: Vec<String> = rel.split('/').map(str::to_string).collect();
        let (name, dirs) = parts.split_last().unwrap();
        let mut m = self.model();
        let mut at = ROOT;
        for d in dirs {
            at = match m.entries(at).get(d) {
                Some(&ino) => {
                    assert!(m.is_dir(ino), "{d} in {rel} is a file");
                    ino
                }
                None => {
                    let ino = m.alloc(Inode::Dir {
                        mode: DIR_MODE,
                        volatile: BTreeMap::new(),
                        durable: BTreeMap::new(),
                    });
                    m.entries_mut(at).insert(d.clone(), ino);
                    ino
                }
            };
        }
        let data = FileData {
            bytes: Arc::new(bytes.to_vec()),
            mode: mode & 0o7777,
            owner,
            xattrs,
        };
        let ino = m.alloc(Inode::File {
            now: data.clone(),
            synced: data,
        });
        m.entries_mut(at).insert(name.clone(), ino);
    }

    /// Set-up: make every directory entry durable (as a `sync` would), counting no sync.
    pub fn sync_all(&self) {
        self.model().sync_everything();
    }

    /// The volatile tree: what the running program sees.
    pub fn tree(&self) -> Tree {
        list(&self.model())
    }

    /// The durable tree: what a power cut now would leave.
    pub fn durable_tree(&self) -> Tree {
        list(&self.model().durable_view())
    }

    /// What survives a power cut now: a new filesystem whose volatile and durable views
    /// both equal this one's durable view, on a fresh, uncut controller (share it with
    /// the backend through [`CrashBackend::durable_image_on`] and [`CrashFs::power`]).
    pub fn durable_image(&self) -> CrashFs {
        CrashFs {
            root: self.root.clone(),
            power: PowerCut::new(),
            model: Mutex::new(self.model().durable_view()),
        }
    }

    /// `path` for a sync's label (`.` for the root), with the random nonce of a temp
    /// file name (`.ue-<batch>-<index>-<nonce>.tmp`) left out, so labels compare
    /// across runs.
    fn label(&self, path: &RelPath) -> String {
        let rel = if path.is_root() {
            ".".to_string()
        } else {
            path.to_string()
        };
        match (rel.rfind(".ue-"), rel.strip_suffix(".tmp")) {
            (Some(_), Some(stem)) => match stem.rfind('-') {
                Some(dash) => format!("{}-<nonce>.tmp", &stem[..dash]),
                None => rel,
            },
            _ => rel,
        }
    }

    /// `path`'s components.
    fn parts(&self, path: &RelPath) -> io::Result<Vec<String>> {
        Ok(path.components().map(str::to_string).collect())
    }
}

/// The owner a file this process creates gets (effective uid and gid).
fn process_owner() -> (u32, u32) {
    (
        rustix::process::geteuid().as_raw(),
        rustix::process::getegid().as_raw(),
    )
}

/// A file being created: every step changes `now`; `sync` (counted on the power
/// controller, and refused once the power is gone) copies it to `synced`.
struct CrashNewFile<'a> {
    now: FileData,
    synced: FileData,
    power: &'a PowerCut,
    label: String,
}

impl ultra_edit::fs::NewFile for CrashNewFile<'_> {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.power.alive()?;
        Arc::make_mut(&mut self.now.bytes).extend_from_slice(bytes);
        Ok(())
    }
    fn set_xattr(&mut self, name: &str, value: &[u8]) -> io::Result<()> {
        self.power.alive()?;
        let x = &mut self.now.xattrs.0;
        x.retain(|(n, _)| n != name);
        x.push((name.to_string(), value.to_vec()));
        x.sort();
        Ok(())
    }
    fn remove_xattr(&mut self, name: &str) -> io::Result<()> {
        self.power.alive()?;
        self.now.xattrs.0.retain(|(n, _)| n != name);
        Ok(())
    }
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()> {
        self.power.alive()?;
        self.now.owner = (uid, gid);
        Ok(())
    }
    fn set_mode(&mut self, mode: u32) -> io::Result<()> {
        self.power.alive()?;
        self.now.mode = mode & 0o7777;
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        let label = std::mem::take(&mut self.label);
        self.power.sync(|| label)?;
        self.synced = self.now.clone();
        Ok(())
    }
}

fn list(m: &Model) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![(ROOT, String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for (name, &ino) in m.entries(dir) {
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            match m.node(ino) {
                Inode::File { now, .. } => {
                    out.insert(
                        rel,
                        TreeEntry::File {
                            bytes: now.bytes.to_vec(),
                            mode: now.mode,
                            owner: now.owner,
                            xattrs: now.xattrs.clone(),
                        },
                    );
                }
                Inode::Dir { mode, .. } => {
                    out.insert(rel.clone(), TreeEntry::Dir { mode: *mode });
                    stack.push((ino, rel));
                }
            }
        }
    }
    out
}

impl FileSystem for CrashFs {
    fn entry(&self, path: &RelPath) -> io::Result<EntryKind> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let m = self.model();
        let ino = match m.lookup(&parts) {
            Ok(ino) => ino,
            // lstat: a missing name (or a missing parent) is Absent; a file used as a
            // directory is ENOTDIR, as the real call reports it.
            Err(e) if e.raw_os_error() == Some(ENOENT) => return Ok(EntryKind::Absent),
            Err(e) => return Err(e),
        };
        Ok(match m.node(ino) {
            Inode::File { now, .. } => EntryKind::File {
                links: m.links(ino),
                mode: now.mode,
                uid: now.owner.0,
                gid: now.owner.1,
            },
            Inode::Dir { .. } => EntryKind::Dir,
        })
    }

    fn read(&self, path: &RelPath) -> io::Result<Vec<u8>> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let m = self.model();
        match m.node(m.lookup(&parts)?) {
            Inode::File { now, .. } => Ok(now.bytes.to_vec()),
            Inode::Dir { .. } => Err(errno(EISDIR)),
        }
    }

    fn xattrs(&self, path: &RelPath) -> io::Result<Xattrs> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let m = self.model();
        match m.node(m.lookup(&parts)?) {
            Inode::File { now, .. } => Ok(now.xattrs.clone()),
            Inode::Dir { .. } => Err(errno(EISDIR)),
        }
    }

    fn write_synced(
        &self,
        path: &RelPath,
        bytes: &[u8],
        meta: &FileMeta,
        xattrs: &Xattrs,
    ) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let m = self.model();
        let (dir, name) = m.parent(&parts)?;
        if m.entries(dir).contains_key(name) {
            return Err(errno(EEXIST));
        }
        drop(m);
        // The library's own sequence of steps (`ultra_edit::fs::fill_and_sync`), on a
        // file whose metadata, like its bytes, is durable only once synced.
        let mut file = CrashNewFile {
            now: FileData::fresh(),
            synced: FileData::fresh(),
            power: &self.power,
            label: format!("fsync {}", self.label(path)),
        };
        let done = ultra_edit::fs::fill_and_sync(&mut file, bytes, meta, xattrs);
        let mut m = self.model();
        let ino = m.alloc(Inode::File {
            now: file.now,
            synced: file.synced,
        });
        m.entries_mut(dir).insert(name.to_string(), ino);
        done
    }

    fn rename(&self, from: &RelPath, to: &RelPath) -> io::Result<()> {
        self.power.alive()?;
        let (fparts, tparts) = (self.parts(from)?, self.parts(to)?);
        let mut m = self.model();
        let (fdir, fname) = m.parent(&fparts)?;
        let src = *m.entries(fdir).get(fname).ok_or_else(|| errno(ENOENT))?;
        let (tdir, tname) = m.parent(&tparts)?;
        let src_is_dir = m.is_dir(src);
        if src_is_dir && tparts.starts_with(&fparts) && tparts.len() > fparts.len() {
            return Err(errno(EINVAL)); // into its own subtree
        }
        if let Some(&dst) = m.entries(tdir).get(tname) {
            if dst == src {
                return Ok(()); // same inode: POSIX says do nothing
            }
            match (src_is_dir, m.is_dir(dst)) {
                (false, true) => return Err(errno(EISDIR)),
                (true, false) => return Err(errno(ENOTDIR)),
                (true, true) if !m.entries(dst).is_empty() => return Err(errno(ENOTEMPTY)),
                _ => {}
            }
        }
        m.entries_mut(fdir).remove(fname);
        m.entries_mut(tdir).insert(tname.to_string(), src);
        Ok(())
    }

    fn remove_file(&self, path: &RelPath) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let mut m = self.model();
        let (dir, name) = m.parent(&parts)?;
        let ino = *m.entries(dir).get(name).ok_or_else(|| errno(ENOENT))?;
        if m.is_dir(ino) {
            return Err(errno(EISDIR)); // Linux unlink(2) on a directory
        }
        m.entries_mut(dir).remove(name);
        Ok(())
    }

    fn create_dir(&self, path: &RelPath) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let mut m = self.model();
        if parts.is_empty() {
            return Err(errno(EEXIST));
        }
        let (dir, name) = m.parent(&parts)?;
        if m.entries(dir).contains_key(name) {
            return Err(errno(EEXIST));
        }
        let ino = m.alloc(Inode::Dir {
            mode: DIR_MODE,
            volatile: BTreeMap::new(),
            durable: BTreeMap::new(),
        });
        m.entries_mut(dir).insert(name.to_string(), ino);
        Ok(())
    }

    fn remove_dir(&self, path: &RelPath) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let mut m = self.model();
        let (dir, name) = m.parent(&parts)?; // the root: EBUSY
        let ino = *m.entries(dir).get(name).ok_or_else(|| errno(ENOENT))?;
        if !m.is_dir(ino) {
            return Err(errno(ENOTDIR));
        }
        if !m.entries(ino).is_empty() {
            return Err(errno(ENOTEMPTY));
        }
        m.entries_mut(dir).remove(name);
        Ok(())
    }

    fn sync_dir(&self, path: &RelPath) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let mut m = self.model();
        let ino = m.lookup(&parts)?;
        // open(2) + fsync(2): on a file it syncs the file, whose content is durable anyway.
        self.power
            .sync(|| format!("fsync dir {}", self.label(path)))?;
        if let Some(Inode::Dir {
            volatile, durable, ..
        }) = m.inodes.get_mut(&ino)
        {
            *durable = volatile.clone();
        }
        Ok(())
    }
}
