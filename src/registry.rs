//! A registry of workspaces for a long-lived host with several roots (an MCP server
//! such as m1nd): one host state directory, one journal per root, handles routed to
//! their journal by journal id (docs/embedding.md, "A registry of roots").
//!
//! Layout of the host directory `H` (created 0700 if missing):
//!
//! - `H/index.json`: the roots the registry knows, each with its state directory and
//!   its journal id: `{"version":1,"roots":[{"root":"/srv/a","state_dir":"H/roots/…",
//!   "journal":"3f9a2c1b7d4e8a60"}]}`. Written whole to `H/index.json.new`, synced and
//!   renamed over it (then `H` synced), under an exclusive `flock` of `H/index.lock`,
//!   so two hosts sharing `H` never lose each other's entries. A damaged index is
//!   rebuilt from `H/roots/` on its first read (`Registry::rebuild_locked`).
//! - `H/roots/<hex>/`: the state directory of a root (journal, commit lock), where
//!   `<hex>` is the blake3 of the canonical root path's bytes, as 64 lowercase hex
//!   digits (`printf '%s' /srv/a | b3sum`): a rule fixed by this crate, the same on
//!   every Rust release and every run, unlike `std`'s `DefaultHasher`.
//!
//! Which state directory a root gets, the first time the registry opens it:
//!
//! 1. the root's own `<root>/.ultra-edit/` when it already holds a journal (one root,
//!    one journal: the CLI's journal and the host's are then the same);
//! 2. `<root>/.ultra-edit/` when `H` is inside the root (a state directory inside the
//!    root would be refused: plans write there);
//! 3. `H/roots/<hex>/` otherwise.
//!
//! Once recorded in the index, a root keeps the state directory it was given.
//!
//! Nothing below this module uses it: it stands on [`crate::Journal`] alone.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fs2::FileExt;
use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::handle::{JournalId, TxHandle};
use crate::workspace::{Journal, OpenOptions, STATE_DIR};

/// The index file's name in the host directory.
pub const INDEX_FILE: &str = "index.json";
/// The directory under the host directory that holds the per-root state directories.
pub const ROOTS_DIR: &str = "roots";
/// The version of `index.json` this crate writes and reads.
const INDEX_VERSION: u32 = 1;

/// A root the registry knows ([`Registry::roots`]): an entry of its index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KnownRoot {
    /// The canonical root.
    pub root: PathBuf,
    /// Its state directory (journal and commit lock).
    pub state_dir: PathBuf,
    /// Its journal's id: the first part of the handles it makes.
    pub journal: JournalId,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Index {
    version: u32,
    roots: Vec<KnownRoot>,
}

/// Makes the [`OpenOptions`] of each journal the registry opens; the registry sets
/// `state_dir` itself.
type MakeOptions = Box<dyn Fn() -> OpenOptions + Send + Sync>;

/// A registry of workspaces in a host state directory: open a root's journal on
/// first use, route a [`TxHandle`] to its journal, list the roots. `Send + Sync`:
/// share it with `Arc`. Journals it opened stay open (shared as `Arc<Journal>`) for
/// the registry's lifetime.
pub struct Registry {
    dir: PathBuf,
    make_options: MakeOptions,
    open: Mutex<HashMap<PathBuf, Arc<Journal>>>,
    /// Each root path as a caller gave it, with the canonical root it resolved to and
    /// that directory's identity when it did ([`Registry::resolved`]).
    given: Mutex<HashMap<PathBuf, Resolved>>,
    notes: Mutex<Vec<String>>,
}

/// A root path as given, resolved: the canonical root and the (device, inode) of the
/// directory the given path named then.
#[derive(Clone)]
struct Resolved {
    canonical: PathBuf,
    id: (u64, u64),
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("dir", &self.dir).finish()
    }
}

impl Registry {
    /// The registry in host directory `dir` (created, private to its owner, when
    /// missing), opening journals with [`OpenOptions::default`]. Errors: the
    /// directory's creation or resolution ([`Error::Io`]), a path there that is not a
    /// directory ([`Error::Registry`]).
    pub fn open(dir: impl AsRef<Path>) -> Result<Registry> {
        Self::with_options(dir, OpenOptions::default)
    }

    /// [`Registry::open`] with the options of every journal it opens made by `options`
    /// (a clock, a max preview age, a policy, a lock timeout); its `state_dir` is
    /// replaced by the registry's choice (module docs).
    pub fn with_options(
        dir: impl AsRef<Path>,
        options: impl Fn() -> OpenOptions + Send + Sync + 'static,
    ) -> Result<Registry> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = dir.as_ref();
        if !dir.exists() {
            fs::DirBuilder::new()
                .mode(0o700)
                .recursive(true)
                .create(dir)
                .ctx("mkdir", dir)?;
        }
        let dir = dir.canonicalize().ctx("resolve registry directory", dir)?;
        if !dir.is_dir() {
            return Err(Error::Registry {
                path: dir,
                reason: "it is not a directory; give a directory for the registry".into(),
            });
        }
        Ok(Registry {
            dir,
            make_options: Box::new(options),
            open: Mutex::new(HashMap::new()),
            given: Mutex::new(HashMap::new()),
            notes: Mutex::new(Vec::new()),
        })
    }

    /// The host directory (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `H/roots/<hex>`: the state directory the rule derives for the canonical root
    /// `root` (module docs), whether or not it exists or is used.
    pub fn derived_state_dir(&self, root: &Path) -> PathBuf {
        self.dir.join(ROOTS_DIR).join(root_key(root))
    }

    /// The journal of `root`, opened (and created if it has none) on first use, then
    /// shared. Its state directory is the one the index records for it, else chosen
    /// by the module's rule and recorded. Errors: those of [`Journal::init_with`] /
    /// [`Journal::open_with`] (a missing root is [`Error::Io`]), and of the index
    /// ([`Error::Registry`]).
    pub fn open_or_create(&self, root: impl AsRef<Path>) -> Result<Arc<Journal>> {
        let root = root.as_ref();
        self.get(root, true)?.ok_or_else(|| Error::Registry {
            path: root.to_path_buf(),
            reason: "its journal could not be created".into(),
        })
    }

    /// The journal of the root among `roots` that holds `path` — the deepest one when
    /// roots nest — opened or created as [`Registry::open_or_create`]: what a host with
    /// several ingest roots calls with a file an agent named. `path` and `roots` are
    /// compared component by component as given (absolute paths, not resolved), so
    /// give both in the same form. Errors: [`Error::Registry`] naming `path` when no
    /// root holds it (nothing is opened); those of [`Registry::open_or_create`].
    pub fn open_or_create_for<R: AsRef<Path>>(
        &self,
        path: impl AsRef<Path>,
        roots: impl IntoIterator<Item = R>,
    ) -> Result<Arc<Journal>> {
        let path = path.as_ref();
        let root = roots
            .into_iter()
            .filter(|r| path.starts_with(r.as_ref()))
            .max_by_key(|r| r.as_ref().components().count())
            .ok_or_else(|| Error::Registry {
                path: path.to_path_buf(),
                reason: "it is in none of the roots given; name a file inside one of them, or add its root".into(),
            })?;
        self.open_or_create(root)
    }

    /// The journal of `root` if it has one — in the index, or in the state directory
    /// the rule would give it — opened on first use; `None` when it has none (nothing
    /// is created). Errors: as [`Registry::open_or_create`].
    pub fn open_if_exists(&self, root: impl AsRef<Path>) -> Result<Option<Arc<Journal>>> {
        self.get(root.as_ref(), false)
    }

    /// The journal that made `handle`: one already open, else the root the index
    /// records with that journal id, opened (never created). Roots whose journal the
    /// handle does not name are not opened. Errors: [`Error::UnknownJournal`] when no
    /// known root has that journal (or its journal was re-created since, with another
    /// id); those of [`Journal::open_with`].
    pub fn journal_of(&self, handle: &TxHandle) -> Result<Arc<Journal>> {
        if let Some(j) = self.lock_open().values().find(|j| j.id() == handle.journal) {
            return Ok(Arc::clone(j));
        }
        let unknown = || Error::UnknownJournal {
            handle: *handle,
            registry: self.dir.clone(),
        };
        let index = self.read_index()?;
        let entry = index
            .roots
            .iter()
            .find(|e| e.journal == handle.journal)
            .ok_or_else(unknown)?;
        let j = self.get(&entry.root, false)?.ok_or_else(unknown)?;
        if j.id() != handle.journal {
            return Err(unknown());
        }
        Ok(j)
    }

    /// The roots in the index, sorted by root: every root this registry (or another
    /// host sharing its directory) has opened. Errors: a damaged index
    /// ([`Error::Registry`]).
    pub fn roots(&self) -> Result<Vec<KnownRoot>> {
        let mut roots = self.read_index()?.roots;
        roots.sort_by(|a, b| a.root.cmp(&b.root));
        Ok(roots)
    }

    /// What this registry value repaired, oldest first, in words for a log: today, a
    /// damaged index rebuilt from `H/roots/` (which file the damaged one was moved to,
    /// how many roots were found, which state directories were skipped and why).
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The canonical roots whose journal this registry value holds open, sorted.
    pub fn opened(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self.lock_open().keys().cloned().collect();
        roots.sort();
        roots
    }

    fn lock_open(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Journal>>> {
        // A panic while the map was locked leaves it whole (inserts are single calls).
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The canonical form of the root path `given`. Resolved once per path as given,
    /// then re-checked on each call with one `stat` of `given` (not the `readlink` of
    /// each component that resolving costs): while it names the same directory
    /// (device and inode) the canonical root resolved before is kept; when it names
    /// another (a symlink retargeted, the root renamed away and another directory put
    /// in its place) or nothing, it is resolved again, as on the first call.
    fn resolved(&self, given: &Path) -> Result<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| fs::metadata(p).map(|m| (m.dev(), m.ino()));
        let known = self.lock_given().get(given).cloned();
        if let (Some(known), Ok(now)) = (known, id(given)) {
            if known.id == now {
                return Ok(known.canonical);
            }
        }
        let canonical = given.canonicalize().ctx("open workspace root", given)?;
        // The identity of the directory the canonical path names (it has no symlink
        // left to retarget), so a later `stat` of `given` is compared with it.
        if let Ok(id) = id(&canonical) {
            let resolved = Resolved {
                canonical: canonical.clone(),
                id,
            };
            self.lock_given().insert(given.to_path_buf(), resolved);
        }
        Ok(canonical)
    }

    fn lock_given(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Resolved>> {
        // A panic while the map was locked leaves it whole (inserts are single calls).
        self.given.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, root: &Path, create: bool) -> Result<Option<Arc<Journal>>> {
        let root = self.resolved(root)?;
        if root.to_str().is_none() {
            return Err(Error::Registry {
                path: root,
                reason: "the root's path is not UTF-8, and the registry's index records roots as text; open it with Journal::open_with and a state directory of your own".into(),
            });
        }
        if let Some(j) = self.lock_open().get(&root) {
            return Ok(Some(Arc::clone(j)));
        }
        let recorded = self
            .read_index()?
            .roots
            .into_iter()
            .find(|e| e.root == root);
        let own = root.join(STATE_DIR);
        let state_dir = match &recorded {
            Some(e) => e.state_dir.clone(),
            None if own.join("journal.redb").is_file() || self.dir.starts_with(&root) => own,
            None => self.derived_state_dir(&root),
        };
        let exists = state_dir.join("journal.redb").is_file();
        if !exists && !create {
            return Ok(None);
        }
        let mut opts = (self.make_options)();
        opts.state_dir = (state_dir != root.join(STATE_DIR)).then(|| state_dir.clone());
        let journal = if exists {
            Journal::open_with(&root, opts)?
        } else {
            Journal::init_with(&root, opts)?
        };
        if recorded.as_ref().map(|e| e.journal) != Some(journal.id()) {
            self.record(KnownRoot {
                root: root.clone(),
                state_dir: journal.state_dir().to_path_buf(),
                journal: journal.id(),
            })?;
        }
        let mut open = self.lock_open();
        // Another thread may have opened it meanwhile: keep the first.
        let j = open.entry(root).or_insert_with(|| Arc::new(journal));
        Ok(Some(Arc::clone(j)))
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    fn read_index(&self) -> Result<Index> {
        match self.read_index_raw()? {
            Ok(index) => Ok(index),
            Err(_) => {
                let lock = self.lock_index()?;
                // Another host sharing the directory may have rebuilt it meanwhile.
                let index = match self.read_index_raw()? {
                    Ok(index) => index,
                    Err(why) => self.rebuild_locked(&why)?,
                };
                let _ = FileExt::unlock(&lock);
                Ok(index)
            }
        }
    }

    /// The index as stored: `Ok(Err(why))` when its bytes are not a valid index (the
    /// caller rebuilds it); an index of another version is an error, not rebuilt (a
    /// newer ultra-edit wrote it, and rebuilding would drop what that one recorded).
    fn read_index_raw(&self) -> Result<std::result::Result<Index, String>> {
        let path = self.index_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Ok(Index::default())),
            Err(source) => {
                return Err(crate::error::IoError {
                    op: "read",
                    path,
                    source,
                }
                .into())
            }
        };
        let index: Index = match serde_json::from_slice(&bytes) {
            Ok(index) => index,
            Err(e) => return Ok(Err(e.to_string())),
        };
        if index.version != INDEX_VERSION {
            return Err(Error::Registry {
                path,
                reason: format!(
                    "its index is version {}, and this version reads version {INDEX_VERSION}; use the version of ultra-edit that wrote it",
                    index.version
                ),
            });
        }
        Ok(Ok(index))
    }

    /// The index lock (`H/index.lock`), held exclusively until the file is dropped.
    fn lock_index(&self) -> Result<fs::File> {
        let lock_path = self.dir.join("index.lock");
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .ctx("open", &lock_path)?;
        lock.lock_exclusive().ctx("flock", &lock_path)?;
        Ok(lock)
    }

    /// Rebuild a damaged index (`why`: what is wrong with it) from `H/roots/`, under
    /// the index lock: the damaged file is kept as `H/index.json.damaged`, and each
    /// `H/roots/<hex>/` holding a journal whose recorded root's key is `<hex>` becomes
    /// an entry again (its journal id derived from the journal's identity, so handles
    /// it made route again). A root whose state directory is its own
    /// `<root>/.ultra-edit/` is not under `H/roots/`: it is recorded again when it is
    /// next opened. What was done is kept in [`Registry::notes`].
    fn rebuild_locked(&self, why: &str) -> Result<Index> {
        let path = self.index_path();
        let damaged = self.dir.join("index.json.damaged");
        fs::rename(&path, &damaged).ctx("rename", &damaged)?;
        let mut index = Index {
            version: INDEX_VERSION,
            roots: Vec::new(),
        };
        let mut skipped = Vec::new();
        let roots_dir = self.dir.join(ROOTS_DIR);
        let entries = match fs::read_dir(&roots_dir) {
            Ok(e) => e
                .collect::<std::io::Result<Vec<_>>>()
                .ctx("read dir", &roots_dir)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(crate::error::IoError {
                    op: "read dir",
                    path: roots_dir,
                    source,
                }
                .into())
            }
        };
        let mut dirs: Vec<PathBuf> = entries.into_iter().map(|e| e.path()).collect();
        dirs.sort();
        for state_dir in dirs {
            let file = state_dir.join("journal.redb");
            if !file.is_file() {
                continue;
            }
            let found =
                crate::journal::Store::open_for_reading(&file).and_then(|store| store.identity());
            let identity = match found {
                Ok(identity) => identity,
                Err(e) => {
                    skipped.push(format!("{}: {e}", state_dir.display()));
                    continue;
                }
            };
            let Some(root) = identity.made_for else {
                skipped.push(format!(
                    "{}: its journal records no root",
                    state_dir.display()
                ));
                continue;
            };
            if state_dir.file_name() != Some(std::ffi::OsStr::new(&root_key(&root))) {
                skipped.push(format!(
                    "{}: its journal was made for {}, whose directory is another",
                    state_dir.display(),
                    root.display()
                ));
                continue;
            }
            index.roots.push(KnownRoot {
                journal: JournalId::derive(&identity.nonce, &root),
                root,
                state_dir,
            });
        }
        index.roots.sort_by(|a, b| a.root.cmp(&b.root));
        self.write_index_locked(&index)?;
        let mut note = format!(
            "the registry's index {} was damaged ({why}): moved to {} and rebuilt from {} with {} root(s); roots whose journal is in their own .ultra-edit/ are recorded again when next opened",
            path.display(),
            damaged.display(),
            self.dir.join(ROOTS_DIR).display(),
            index.roots.len()
        );
        if !skipped.is_empty() {
            note += &format!("; skipped: {}", skipped.join("; "));
        }
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(note);
        Ok(index)
    }

    /// Put `entry` in the index (replacing the root's old entry), atomically, under the
    /// index lock.
    fn record(&self, entry: KnownRoot) -> Result<()> {
        let lock = self.lock_index()?;
        let mut index = match self.read_index_raw()? {
            Ok(index) => index,
            Err(why) => self.rebuild_locked(&why)?,
        };
        index.version = INDEX_VERSION;
        index.roots.retain(|e| e.root != entry.root);
        index.roots.push(entry);
        index.roots.sort_by(|a, b| a.root.cmp(&b.root));
        self.write_index_locked(&index)?;
        let _ = FileExt::unlock(&lock);
        Ok(())
    }

    /// Write `index` whole to `H/index.json.new`, sync it, rename it over the index
    /// and sync `H`. The caller holds the index lock.
    fn write_index_locked(&self, index: &Index) -> Result<()> {
        let path = self.index_path();
        let tmp = self.dir.join("index.json.new");
        let mut bytes = serde_json::to_vec_pretty(index).map_err(|e| Error::Registry {
            path: path.clone(),
            reason: format!("its index could not be encoded ({e})"),
        })?;
        bytes.push(b'\n');
        let mut f = fs::File::create(&tmp).ctx("create", &tmp)?;
        f.write_all(&bytes).ctx("write", &tmp)?;
        f.sync_all().ctx("fsync", &tmp)?;
        fs::rename(&tmp, &path).ctx("rename", &path)?;
        fs::File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .ctx("fsync dir", &self.dir)?;
        Ok(())
    }
}

/// The key of a canonical root in the host directory: blake3 of its path's bytes, as
/// 64 lowercase hex digits.
fn root_key(root: &Path) -> String {
    blake3::hash(root.as_os_str().as_bytes())
        .to_hex()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_key_is_blake3_of_the_path_bytes_in_hex() {
        // Pinned: the state directory of a root must not move between versions.
        assert_eq!(
            root_key(Path::new("/srv/a")),
            blake3::hash(b"/srv/a").to_hex().to_string()
        );
        assert_eq!(root_key(Path::new("/srv/a")), KEY_SRV_A);
        assert_eq!(root_key(Path::new("/srv/a")).len(), 64);
    }

    const KEY_SRV_A: &str = "80b340da354bc84bd5df32d3fa6c65a05403c36a51aaed04ff5c4b3594b2fd3d";
}
