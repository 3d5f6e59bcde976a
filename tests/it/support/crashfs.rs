//! A power cut, simulated: an in-memory POSIX filesystem ([`CrashFs`]) and a redb storage
//! backend ([`CrashBackend`]) that keep what the running program sees (*volatile*) apart
//! from what survives losing power (*durable*), and share one [`PowerCut`] controller.
//!
//! Unlike `faultfs` (a panic that unwinds out of the library, after which the page cache
//! still holds every write), a power cut drops everything not yet synced, so a missing
//! `fsync` shows. In the spirit of redb's own `tests/crash_consistency.rs`.
//!
//! The model:
//! - An inode is a file (bytes + mode) or a directory (mode + entries). A directory has
//!   two entry maps: volatile (what `lstat`, `read`, … see) and durable (what its last
//!   `fsync` recorded).
//! - `write_synced` creates a new file inode and fsyncs it: its bytes and mode are durable
//!   at once, but the *name* pointing at it lives only in the parent's volatile entries
//!   until the parent directory is synced. Files are never changed in place (the
//!   `FileSystem` trait has no such operation), so a file inode has one content.
//! - `rename`, `remove_file`, `create_dir`, `remove_dir` change volatile entries only.
//! - `sync_dir(d)`: d's durable entries := its volatile entries. A new directory's own
//!   name becomes durable only when its parent is synced.
//! - The durable view is the tree reached from the root through durable entries only.
//! - Every fsync (file or directory) and every `sync_data` of the backend counts on the
//!   shared [`PowerCut`]. `cut_at(k)` makes the k-th sync not happen: it and every later
//!   operation of either side fail with EIO, as on a machine whose power is gone.
//!
//! Paths given to [`CrashFs`] are absolute and must lie under its root (the library joins
//! every path to the canonical root); it never touches the real disk.
//!
//! The model is the pessimistic one: *nothing* unsynced survives (no unsynced rename or
//! journal page ever reaches the disk early). The opposite extreme, everything survives,
//! is what the kill tests (`crash.rs`, `recovery.rs`) cover.

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::ops::Bound;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use redb::BackendError;

use ultra_edit::fs::{EntryKind, FileSystem};

// Linux errno values (the crate is unix-only; these tests run on Linux).
const ENOENT: i32 = 2;
const EIO: i32 = 5;
const EEXIST: i32 = 17;
const ENOTDIR: i32 = 20;
const EISDIR: i32 = 21;
const EINVAL: i32 = 22;
const EBUSY: i32 = 16;
const ENOTEMPTY: i32 = 39;

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

/// Mode of directories made by `create_dir` (0o755 before a umask; none is modelled).
pub const DIR_MODE: u32 = 0o755;

// ---------------------------------------------------------------------------------------
// The controller
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct PowerState {
    /// Syncs that happened.
    syncs: u64,
    /// The 1-based sync that does not happen.
    cut_at: Option<u64>,
    /// Power is gone.
    cut: bool,
    /// One label per sync that happened, then the one that was cut.
    log: Vec<String>,
}

/// The power switch shared by a [`CrashFs`] and a [`CrashBackend`]: counts their syncs
/// and cuts the power at a chosen one.
#[derive(Debug, Default)]
pub struct PowerCut {
    state: Mutex<PowerState>,
}

impl PowerCut {
    pub fn new() -> Arc<PowerCut> {
        Arc::new(PowerCut::default())
    }

    /// Cut the power at the `k`-th sync (1-based, counted from the start): that sync does
    /// not happen and every later operation fails with EIO.
    pub fn cut_at(&self, k: u64) {
        let mut s = self.lock();
        assert!(
            k > s.syncs,
            "sync {k} already happened ({} so far)",
            s.syncs
        );
        s.cut_at = Some(k);
    }

    /// How many syncs happened.
    pub fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Whether the power is gone.
    pub fn is_cut(&self) -> bool {
        self.lock().cut
    }

    /// What each sync so far was (`fsync <path>`, `fsync dir <path>` with root-relative
    /// paths, `journal sync_data`), in order; after a cut the last label is the sync that
    /// did not happen, marked ` (CUT)`.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }

    fn lock(&self) -> MutexGuard<'_, PowerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Any operation: fails once the power is gone.
    fn alive(&self) -> io::Result<()> {
        if self.lock().cut {
            Err(errno(EIO))
        } else {
            Ok(())
        }
    }

    /// A sync: happens (and is counted) unless it is the cut one or the power is gone.
    fn sync(&self, label: impl FnOnce() -> String) -> io::Result<()> {
        let mut s = self.lock();
        if s.cut {
            return Err(errno(EIO));
        }
        if s.cut_at == Some(s.syncs + 1) {
            s.cut = true;
            s.log.push(format!("{} (CUT)", label()));
            return Err(errno(EIO));
        }
        s.syncs += 1;
        s.log.push(label());
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The filesystem
// ---------------------------------------------------------------------------------------

type Ino = u64;
const ROOT: Ino = 1;

#[derive(Debug, Clone)]
enum Inode {
    File {
        bytes: Arc<Vec<u8>>,
        mode: u32,
    },
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
                Inode::File { bytes, mode } => Inode::File {
                    bytes: bytes.clone(),
                    mode: *mode,
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

/// One entry of a listed tree.
#[derive(Clone, PartialEq, Eq)]
pub enum TreeEntry {
    File { bytes: Vec<u8>, mode: u32 },
    Dir { mode: u32 },
}

impl fmt::Debug for TreeEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TreeEntry::File { bytes, mode } => write!(
                f,
                "file {mode:o} {:?}",
                String::from_utf8_lossy(bytes).as_ref()
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
    /// [`DIR_MODE`]). Volatile only until [`CrashFs::sync_all`]; counts no sync.
    pub fn put_file(&self, rel: &str, bytes: &[u8], mode: u32) {
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
        let ino = m.alloc(Inode::File {
            bytes: Arc::new(bytes.to_vec()),
            mode: mode & 0o7777,
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

    /// `path` root-relative for a sync's label (`.` for the root), with the random
    /// nonce of a temp file name (`.ue-<batch>-<index>-<nonce>.tmp`) left out, so
    /// labels compare across runs.
    fn label(&self, path: &Path) -> String {
        let rel = match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        };
        match (rel.rfind(".ue-"), rel.strip_suffix(".tmp")) {
            (Some(_), Some(stem)) => match stem.rfind('-') {
                Some(dash) => format!("{}-<nonce>.tmp", &stem[..dash]),
                None => rel,
            },
            _ => rel,
        }
    }

    /// `path` (absolute, under the root) as root-relative components.
    fn parts(&self, path: &Path) -> io::Result<Vec<String>> {
        let rel = path.strip_prefix(&self.root).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "CrashFs: {} is not under the root {}",
                    path.display(),
                    self.root.display()
                ),
            )
        })?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("CrashFs: unsupported path {}", path.display()),
                    ))
                }
            }
        }
        Ok(parts)
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
                Inode::File { bytes, mode } => {
                    out.insert(
                        rel,
                        TreeEntry::File {
                            bytes: bytes.to_vec(),
                            mode: *mode,
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
    fn entry(&self, path: &Path) -> io::Result<EntryKind> {
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
            Inode::File { mode, .. } => EntryKind::File {
                links: m.links(ino),
                mode: *mode,
            },
            Inode::Dir { .. } => EntryKind::Dir,
        })
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let m = self.model();
        match m.node(m.lookup(&parts)?) {
            Inode::File { bytes, .. } => Ok(bytes.to_vec()),
            Inode::Dir { .. } => Err(errno(EISDIR)),
        }
    }

    fn write_synced(&self, path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
        self.power.alive()?;
        let parts = self.parts(path)?;
        let mut m = self.model();
        let (dir, name) = m.parent(&parts)?;
        if m.entries(dir).contains_key(name) {
            return Err(errno(EEXIST));
        }
        // The fsync of the file: if it is the cut one, nothing after matters.
        self.power.sync(|| format!("fsync {}", self.label(path)))?;
        let ino = m.alloc(Inode::File {
            bytes: Arc::new(bytes.to_vec()),
            mode: mode & 0o7777,
        });
        m.entries_mut(dir).insert(name.to_string(), ino);
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
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

    fn remove_file(&self, path: &Path) -> io::Result<()> {
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

    fn create_dir(&self, path: &Path) -> io::Result<()> {
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

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
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

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
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

// ---------------------------------------------------------------------------------------
// The redb backend
// ---------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct Bytes {
    volatile: Vec<u8>,
    durable: Vec<u8>,
}

/// A byte-range lock held by one backend instance: `[lo, hi)`, shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RangeLock {
    owner: u64,
    lo: u128,
    hi: u128,
    shared: bool,
}

fn lock_bounds(start: Bound<u64>, end: Bound<u64>) -> (u128, u128) {
    let lo = match start {
        Bound::Unbounded => 0,
        Bound::Included(s) => s as u128,
        Bound::Excluded(s) => s as u128 + 1,
    };
    let hi = match end {
        Bound::Unbounded => u128::MAX,
        Bound::Included(e) => e as u128 + 1,
        Bound::Excluded(e) => e as u128,
    };
    (lo, hi)
}

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A redb [`StorageBackend`](redb::StorageBackend) whose unsynced writes are lost in a
/// power cut: `write`/`set_len` change the volatile bytes, `sync_data` copies them to the
/// durable bytes and counts as one sync on the shared [`PowerCut`]. A clone shares the
/// bytes (keep one to take the image after handing the other to redb) but is another
/// backend *instance* for byte-range locks, which it implements fully (redb's
/// `ConcurrencyMode::MultiWriter`, the journal's mode, refuses a backend without them):
/// locks of one instance conflict with those of the other instances on the same bytes.
#[derive(Debug)]
pub struct CrashBackend {
    power: Arc<PowerCut>,
    bytes: Arc<Mutex<Bytes>>,
    locks: Arc<Mutex<Vec<RangeLock>>>,
    owner: u64,
}

impl Clone for CrashBackend {
    fn clone(&self) -> Self {
        CrashBackend {
            power: self.power.clone(),
            bytes: self.bytes.clone(),
            locks: self.locks.clone(),
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl CrashBackend {
    /// An empty backend on the controller `power`.
    pub fn new(power: Arc<PowerCut>) -> CrashBackend {
        CrashBackend::with_bytes(power, Bytes::default())
    }

    fn with_bytes(power: Arc<PowerCut>, bytes: Bytes) -> CrashBackend {
        CrashBackend {
            power,
            bytes: Arc::new(Mutex::new(bytes)),
            locks: Arc::default(),
            owner: NEXT_OWNER.fetch_add(1, Ordering::Relaxed),
        }
    }

    fn bytes(&self) -> MutexGuard<'_, Bytes> {
        self.bytes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn locks(&self) -> MutexGuard<'_, Vec<RangeLock>> {
        self.locks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What survives a power cut now: a new backend holding the durable bytes (and no
    /// locks: the machine rebooted), on the controller `power` (normally the image
    /// filesystem's, [`CrashFs::power`]).
    pub fn durable_image_on(&self, power: Arc<PowerCut>) -> CrashBackend {
        let durable = self.bytes().durable.clone();
        CrashBackend::with_bytes(
            power,
            Bytes {
                volatile: durable.clone(),
                durable,
            },
        )
    }

    /// [`CrashBackend::durable_image_on`] a fresh controller.
    pub fn durable_image(&self) -> CrashBackend {
        self.durable_image_on(PowerCut::new())
    }

    /// Length of the durable bytes.
    pub fn durable_len(&self) -> usize {
        self.bytes().durable.len()
    }

    fn try_lock(&self, start: Bound<u64>, end: Bound<u64>, shared: bool) -> io::Result<bool> {
        self.power.alive()?;
        let (lo, hi) = lock_bounds(start, end);
        if lo >= hi {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty lock range",
            ));
        }
        let mut locks = self.locks();
        let conflict = locks
            .iter()
            .any(|l| l.owner != self.owner && l.lo < hi && lo < l.hi && !(l.shared && shared));
        if conflict {
            return Ok(false);
        }
        locks.push(RangeLock {
            owner: self.owner,
            lo,
            hi,
            shared,
        });
        Ok(true)
    }

    fn lock_waiting(&self, start: Bound<u64>, end: Bound<u64>, shared: bool) -> io::Result<()> {
        // Only one live instance takes locks in these tests; a conflict would be a test bug,
        // so wait a bounded time rather than hang.
        for _ in 0..5000 {
            if self.try_lock(start, end, shared)? {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "CrashBackend: lock conflict for 5 s",
        ))
    }
}

impl redb::StorageBackend for CrashBackend {
    fn len(&self) -> Result<u64, io::Error> {
        self.power.alive()?;
        Ok(self.bytes().volatile.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        self.power.alive()?;
        let b = self.bytes();
        let start = usize::try_from(offset).map_err(|_| errno(EINVAL))?;
        let end = start
            .checked_add(out.len())
            .filter(|&e| e <= b.volatile.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(&b.volatile[start..end]);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        self.power.alive()?;
        let len = usize::try_from(len).map_err(|_| errno(EINVAL))?;
        self.bytes().volatile.resize(len, 0);
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        let mut b = self.bytes();
        self.power.sync(|| "journal sync_data".to_string())?;
        b.durable = b.volatile.clone();
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        self.power.alive()?;
        let mut b = self.bytes();
        let start = usize::try_from(offset).map_err(|_| errno(EINVAL))?;
        let end = start + data.len();
        if end > b.volatile.len() {
            b.volatile.resize(end, 0);
        }
        b.volatile[start..end].copy_from_slice(data);
        Ok(())
    }

    fn close(&self) -> Result<(), io::Error> {
        // A closed (or dead) instance holds no locks.
        self.locks().retain(|l| l.owner != self.owner);
        self.power.alive()
    }

    fn try_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        Ok(self.try_lock(start, end, false)?)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, BackendError> {
        Ok(self.try_lock(start, end, true)?)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        Ok(self.lock_waiting(start, end, false)?)
    }

    fn lock_shared_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        Ok(self.lock_waiting(start, end, true)?)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), BackendError> {
        let (lo, hi) = lock_bounds(start, end);
        let mut locks = self.locks();
        let at = locks
            .iter()
            .position(|l| l.owner == self.owner && l.lo == lo && l.hi == hi)
            .ok_or_else(|| {
                BackendError::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "CrashBackend: unlock of a range not locked",
                ))
            })?;
        locks.remove(at);
        Ok(())
    }

    fn query_lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<bool, BackendError> {
        self.power.alive()?;
        let (lo, hi) = lock_bounds(start, end);
        Ok(self
            .locks()
            .iter()
            .any(|l| l.owner != self.owner && l.lo < hi && lo < l.hi))
    }
}

/// The durable images of a filesystem and its journal backend, sharing one fresh, uncut
/// controller: the machine as it boots after the power cut.
pub fn durable_images(fs: &CrashFs, backend: &CrashBackend) -> (CrashFs, CrashBackend) {
    let fs2 = fs.durable_image();
    let backend2 = backend.durable_image_on(fs2.power());
    (fs2, backend2)
}
