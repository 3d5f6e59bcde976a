//! The public handle: [`Journal`], one workspace root and its journal.

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::Clock;
use crate::engine::Ws;
use crate::error::{Error, IoContext, Result};
use crate::fs::state_files::{no_follow, own_like_state_dir};
use crate::fs::{FileSystem, StdFs};
use crate::handle::{JournalId, TxHandle, TxRef};
use crate::journal::Store;
use crate::lock::Locked;
use crate::recovery::{self, RecoveryReport};

/// Name of the journal directory under the root.
pub const STATE_DIR: &str = ".ultra-edit";
/// Default wait for the commit lock: 10 seconds.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// Called once per finished commit or rollback with the touched paths (root-relative,
/// sorted), once every file holds its new content durably — the journal's completion
/// record may still be being written in the background, and any call on the journal
/// handle waits for it (docs/commit-protocol.md, steps 6–7): the embedder's reingest (docs/design.md, "Lifecycle" › 4. Persistence,
/// "reingest once"). A panic in the hook is caught: the commit or rollback still
/// returns its receipt ([`Journal::commit`]).
pub type ReingestHook = Box<dyn Fn(&[String]) + Send + Sync>;

/// A path a commit or rollback touched ([`Journal::touched`]): what an embedder
/// re-ingests, in both of the forms it may index by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Touched {
    /// Root-relative, as the journal records it.
    pub path: String,
    /// Absolute: the canonical root joined with `path`.
    pub absolute: PathBuf,
}

/// Options of [`Journal::recover_with`].
/// `#[non_exhaustive]`: start from [`RecoverOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct RecoverOptions {
    /// Overwrite files that hold foreign bytes (they are stored in the journal first).
    pub overwrite: bool,
}

impl RecoverOptions {
    /// Every default: files with foreign bytes are left alone and reported.
    pub fn new() -> RecoverOptions {
        RecoverOptions::default()
    }
    /// [`RecoverOptions::overwrite`].
    pub fn with_overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }
}

/// How to open a [`Journal`].
/// `#[non_exhaustive]`: start from
/// [`OpenOptions::default`] and set fields with the `with_*` methods (or assign them),
/// so a field added later does not break a host's code.
#[non_exhaustive]
pub struct OpenOptions {
    /// The filesystem layer (default: [`StdFs`] confined to the root). Tests inject
    /// faults through it.
    pub fs: Option<Arc<dyn FileSystem>>,
    /// How long a commit or rollback waits for the commit lock.
    pub lock_timeout: Duration,
    /// Run recovery on open (default: true). `ultra-edit recover` turns it off to run
    /// (and report) recovery itself.
    pub recover: bool,
    /// Run the journal on this redb storage backend instead of
    /// `.ultra-edit/journal.redb` (default: `None`, the file). For tests that cut power.
    pub journal_backend: Option<Box<dyn redb::StorageBackend>>,
    /// Keep the journal and the commit lock in this directory instead of
    /// `<root>/.ultra-edit/` (default: `None`, the root's). It must be outside the root
    /// (a plan could otherwise write into it), and it serves one root: opened for
    /// another root than the one it was made for, it is refused with
    /// [`Error::StateDirOfOtherRoot`]. The lock, recovery and every verb work the same
    /// as in `.ultra-edit/` (docs/embedding.md, "State directory").
    pub state_dir: Option<PathBuf>,
    /// Where the journal's time comes from (default: the system clock). Tests inject a
    /// [`crate::ManualClock`] to age previews without sleeping.
    pub clock: Option<Arc<dyn Clock>>,
    /// The max age of a preview that [`Journal::commit`] accepts (default: `None`, no
    /// limit: previews are durable). A commit of an older preview is refused with
    /// [`Error::PreviewExpired`]; [`crate::CommitOptions::max_preview_age`] overrides it
    /// per call. Age = the journal clock's now − the tx's `created_ms`.
    pub max_preview_age: Option<Duration>,
    /// The journal's default policy for plans that do not set their own
    /// ([`crate::Policy`]; default: the strict one the CLI uses).
    pub policy: crate::Policy,
    /// Open for reading only when nothing needs writing (default: false): when the
    /// journal is of this version's schema and no batch is in flight, it is opened
    /// read-only, which syncs nothing, and every verb that writes fails with
    /// [`Error::ReadOnly`]; otherwise it opens as usual (migration, recovery). The
    /// CLI's reading verbs (`log`, `show`, `journal dump|stats|verify`) use it, so they
    /// sync nothing (docs/commit-protocol.md, "Syncs of a CLI process").
    pub for_reading: bool,
    /// What stops a batch early (default: `None`, nothing does): a commit or rollback
    /// still staging its temps when [`crate::Interrupt::request`] is called reverts and
    /// fails with [`Error::Interrupted`]; one already replacing files finishes. While a
    /// batch is past its intent, [`crate::Interrupt::guarding`] is true, so a signal
    /// handler can defer the signal (the CLI's does: docs/commit-protocol.md,
    /// "Interrupts").
    pub interrupt: Option<Arc<crate::Interrupt>>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            fs: None,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            recover: true,
            journal_backend: None,
            state_dir: None,
            clock: None,
            max_preview_age: None,
            policy: crate::Policy::default(),
            for_reading: false,
            interrupt: None,
        }
    }
}

impl OpenOptions {
    /// [`OpenOptions::fs`]: the filesystem layer.
    pub fn with_fs(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = Some(fs);
        self
    }
    /// [`OpenOptions::lock_timeout`].
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }
    /// [`OpenOptions::recover`].
    pub fn with_recover(mut self, recover: bool) -> Self {
        self.recover = recover;
        self
    }
    /// [`OpenOptions::journal_backend`].
    pub fn with_journal_backend(mut self, backend: Box<dyn redb::StorageBackend>) -> Self {
        self.journal_backend = Some(backend);
        self
    }
    /// [`OpenOptions::state_dir`].
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }
    /// [`OpenOptions::clock`].
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }
    /// [`OpenOptions::max_preview_age`].
    pub fn with_max_preview_age(mut self, age: Duration) -> Self {
        self.max_preview_age = Some(age);
        self
    }
    /// [`OpenOptions::policy`].
    pub fn with_policy(mut self, policy: crate::Policy) -> Self {
        self.policy = policy;
        self
    }
    /// [`OpenOptions::for_reading`].
    pub fn with_for_reading(mut self, for_reading: bool) -> Self {
        self.for_reading = for_reading;
        self
    }
    /// [`OpenOptions::interrupt`].
    pub fn with_interrupt(mut self, interrupt: Arc<crate::Interrupt>) -> Self {
        self.interrupt = Some(interrupt);
        self
    }
}

/// A workspace and its journal: the handle an embedder (m1nd) keeps for its lifetime.
///
/// `Journal` is `Send + Sync`: share it across threads with `Arc`. Verbs from several
/// threads or processes are serialized by redb (one write transaction at a time) and by
/// the commit lock (one batch at a time per workspace).
pub struct Journal {
    /// Shared with the thread that writes a batch's completion in the background
    /// ([`Journal::flush`]).
    pub(crate) ws: Arc<Ws>,
    pub(crate) lock_timeout: Duration,
    pub(crate) reingest: Option<ReingestHook>,
    opened_recovery: Option<RecoveryReport>,
    unrecovered: Vec<PendingBatch>,
    /// This journal's id at this root (src/handle.rs).
    id: JournalId,
    /// The journal's nonce, to tell a handle of its original root from a foreign one.
    nonce: Vec<u8>,
    /// The root the journal was made for, when that is not [`Journal::root`] (a copy).
    copied_from: Option<PathBuf>,
    pub(crate) max_preview_age: Option<Duration>,
    pub(crate) policy: crate::Policy,
    /// Write a batch's completion before `commit`/`rollback` return
    /// ([`Journal::set_completion_inline`]).
    completion_inline: bool,
    /// How a commit or rollback lets go of the inodes it held
    /// ([`Journal::set_detached_release`]).
    release: crate::fs::release::Release,
    /// Where `init` moved a half-made journal ([`Journal::half_made_moved_aside`]).
    half_made_aside: Option<PathBuf>,
    /// The root the journal was made for, when the workspace was moved from there
    /// ([`Journal::moved_from`]).
    moved_from: Option<PathBuf>,
}

/// A batch in flight that recovery could not settle on open because the journal is on
/// a read-only filesystem ([`Journal::unrecovered`]): the files it names may hold
/// their old content, their new content or a mix, until recovery runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct PendingBatch {
    /// The batch.
    pub batch: u64,
    /// Its transaction.
    pub tx: u64,
    /// Its state: recovery completes a `committing` batch and reverts a `prepared` one
    /// (written only by earlier versions).
    pub state: crate::BatchState,
    /// The files it names, root-relative.
    pub paths: Vec<String>,
    /// Why recovery did not settle it, when it ran and failed (a full disk, a file this
    /// user may not write); `None` when it was not attempted (read-only media).
    pub recovery_failed: Option<String>,
    /// Recovery failed because a disk is full (`ENOSPC`): what to free is
    /// [`PendingBatch::bytes_to_write`] on the filesystem of the workspace (or of the
    /// journal).
    #[serde(default)]
    pub disk_full: bool,
    /// Bytes of file content recovery writes to settle the batch: the new content of
    /// each file a `committing` batch completes, the old content of each file a
    /// `prepared` or `reverting` batch reverts (each written as a temp, then renamed).
    #[serde(default)]
    pub bytes_to_write: u64,
}

/// Whether `e` is a full disk (`ENOSPC`, errno 28): an I/O error of a file, of a
/// batch, or of the journal's storage.
fn is_disk_full(e: &Error) -> bool {
    match e {
        Error::Io(io) => io.source.raw_os_error() == Some(28),
        Error::CommitFailed { cause, .. } => cause.source.raw_os_error() == Some(28),
        Error::Journal(crate::JournalError::Storage(s))
        | Error::Journal(crate::JournalError::HandleFailed { cause: s }) => {
            s.contains("os error 28") || s.contains("No space left on device")
        }
        _ => e.to_string().contains("(os error 28)"),
    }
}

/// The batches in flight in `store`, for [`Journal::unrecovered`]; `failed` is why
/// recovery did not settle them (`None`: it was not attempted, read-only media).
fn pending_batches(store: &Store, failed: Option<&Error>) -> Result<Vec<PendingBatch>> {
    let r = store.read()?;
    let mut pending = Vec::new();
    for batch in r.inflight()? {
        if let Some(b) = r.batch(batch)? {
            let completes = b.state == crate::BatchState::Committing;
            pending.push(PendingBatch {
                batch,
                tx: b.tx,
                state: b.state,
                paths: b.files.iter().map(|f| f.path.to_string()).collect(),
                recovery_failed: failed.map(Error::to_string),
                disk_full: failed.is_some_and(is_disk_full),
                bytes_to_write: b
                    .files
                    .iter()
                    .map(|f| {
                        if completes {
                            f.post.size()
                        } else {
                            f.pre.size()
                        }
                    })
                    .sum(),
            });
        }
    }
    Ok(pending)
}

impl Journal {
    /// Create `<root>/.ultra-edit/` (journal, commit lock, a `.gitignore` ignoring
    /// everything inside) if absent, then open it. Idempotent.
    pub fn init(root: &Path) -> Result<Journal> {
        Self::init_with(root, OpenOptions::default())
    }

    /// [`Journal::init`] with options.
    pub fn init_with(root: &Path, opts: OpenOptions) -> Result<Journal> {
        crate::workspace::guarded(|| {
            let dir = opts
                .state_dir
                .clone()
                .unwrap_or_else(|| root.join(STATE_DIR));
            let probe = if dir.is_dir() {
                dir.as_path()
            } else {
                dir.ancestors().find(|a| a.is_dir()).unwrap_or(root)
            };
            if crate::journal::on_read_only_media(probe) {
                return Err(Error::ReadOnly {
                    path: dir,
                    what: "init creates or repairs the journal's directory there",
                });
            }
            Self::init_synced(root, opts, &mut Fsync)
        })
    }

    /// `init`, with every sync going through `sync` (tests record them).
    ///
    /// Everything it creates is durable before it returns: `.ultra-edit/`, its
    /// `.gitignore`, `commit.lock` and the journal are fsynced, then the directory
    /// entries (`.ultra-edit/` itself, and the root that holds it). What it finds
    /// incomplete it repairs: a `.gitignore` that does not ignore everything (empty
    /// after a power cut, say) is rewritten, through a synced temp and a rename.
    fn init_synced(root: &Path, opts: OpenOptions, sync: &mut dyn Syncer) -> Result<Journal> {
        let (root, given) = roots(root)?;
        let external = opts.state_dir.is_some();
        let dir = state_dir_for(&root, opts.state_dir.as_deref())?;
        check_state_dir_access(&dir)?;
        check_state_files(&dir)?;
        if external {
            check_state_dir_is_its_own(&dir)?;
        }
        prepare_state_dir(&dir, external, sync)?;
        let dir = state_dir_for(&root, Some(&dir))?;
        let aside = if opts.journal_backend.is_none() {
            build_journal_file(&dir, sync)?
        } else {
            None
        };
        let mut journal = Self::open_inner(root.clone(), given, dir.clone(), opts, true)?;
        journal.half_made_aside = aside;
        let file = dir.join("journal.redb");
        if file.is_file() {
            let f = fs::OpenOptions::new()
                .read(true)
                .custom_flags(no_follow())
                .open(&file)
                .ctx("open", &file)?;
            own_like_state_dir(&dir, &f, &file)?;
            sync.file(&f, &file).ctx("fsync", &file)?;
        }
        sync.dir(&dir).ctx("fsync dir", &dir)?;
        let parent = if external {
            dir.parent().unwrap_or(&root).to_path_buf()
        } else {
            root.clone()
        };
        sync.dir(&parent).ctx("fsync dir", &parent)?;
        Ok(journal)
    }

    /// Where `init` moved a half-made journal it found (one whose creation a power cut
    /// or a crash interrupted before redb wrote its magic number, so it holds no
    /// history: docs/commit-protocol.md, "init and power cuts") before making a new one:
    /// `<state dir>/journal.redb.half-made` (`.1`, `.2`, … when taken). `None` when it
    /// found none, and for a journal opened with [`Journal::open`].
    pub fn half_made_moved_aside(&self) -> Option<&Path> {
        self.half_made_aside.as_deref()
    }

    /// Open the journal of an initialized workspace and run recovery if a batch is in
    /// flight. Errors: [`Error::NotInitialized`], journal errors (a newer schema is
    /// refused without being modified).
    pub fn open(root: &Path) -> Result<Journal> {
        Self::open_with(root, OpenOptions::default())
    }

    /// [`Journal::open`] with options.
    pub fn open_with(root: &Path, opts: OpenOptions) -> Result<Journal> {
        crate::workspace::guarded(|| {
            let (root, given) = roots(root)?;
            let dir = match &opts.state_dir {
                Some(d) => d.canonicalize().unwrap_or_else(|_| d.clone()),
                None => root.join(STATE_DIR),
            };
            if opts.journal_backend.is_none() {
                check_state_files(&dir)?;
            }
            let file = dir.join("journal.redb");
            if opts.journal_backend.is_none()
                && file.is_file()
                && crate::journal::file_is_half_made(&file)
            {
                return Err(Error::HalfMadeJournal { path: file });
            }
            if opts.journal_backend.is_none() && !dir.join("journal.redb").is_file() {
                // Not found, or not reachable by this user: which, only on this path
                // (the check lists the directory, which an open that works need not).
                check_state_dir_access(&dir)?;
                return Err(Error::NotInitialized {
                    root,
                    searched_up: false,
                    state_dir: opts.state_dir.is_some().then_some(dir),
                });
            }
            let dir = state_dir_for(
                &root,
                Some(dir.as_path()).filter(|_| opts.state_dir.is_some()),
            )?;
            Self::open_inner(root, given, dir, opts, false)
        })
    }

    fn open_inner(
        root: PathBuf,
        given_root: Option<PathBuf>,
        dir: PathBuf,
        opts: OpenOptions,
        create: bool,
    ) -> Result<Journal> {
        let external = opts.state_dir.is_some();
        let fs: Arc<dyn FileSystem> = match opts.fs {
            Some(fs) => fs,
            None => Arc::new(StdFs::beneath(&root).ctx("open workspace root", &root)?),
        };
        let file = dir.join("journal.redb");
        let mut store = match opts.journal_backend {
            Some(backend) => Store::open_backend(backend)?,
            None => match opts
                .for_reading
                .then(|| Store::open_settled_for_reading(&file))
                .flatten()
            {
                Some(store) => store,
                None => Store::open(&file, create)?,
            },
        };
        if let Some(clock) = opts.clock {
            store.set_clock(clock);
        }
        let identity = store.identity()?;
        // The state directory's device and inode: a move keeps them, a copy does not.
        let here = fs::metadata(&dir).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        });
        let made_for = match identity.made_for {
            // A journal made by an earlier version learns its state directory at its root.
            // So does one restored in place from a backup (a new directory).
            Some(r)
                if r == root
                    && identity.state_dir != here
                    && here.is_some()
                    && !store.is_read_only() =>
            {
                Some(store.record_root(&root, here)?)
            }
            Some(r) => Some(r),
            None if !store.is_read_only() => Some(store.record_root(&root, here)?),
            None => None,
        };
        // Opened at another root: moved (the same state directory: the history keeps
        // its identity and its handles) or copied (another directory: another history).
        // Without a recorded state directory the two cannot be told apart: a copy.
        // (A state directory outside the root does not travel with the tree: the same
        // directory given for another root is another workspace, refused below.)
        let moved = match (&made_for, identity.state_dir, here) {
            (Some(m), Some(recorded), Some(now)) => !external && *m != root && recorded == now,
            _ => false,
        };
        let copied_from = made_for.clone().filter(|m| *m != root && !moved);
        let moved_from = made_for.clone().filter(|_| moved);
        if let (true, Some(made_for)) = (external, &copied_from) {
            // A state directory outside the root does not travel with the tree: one
            // made for another root is another workspace's history.
            return Err(Error::StateDirOfOtherRoot {
                state_dir: dir,
                made_for: made_for.clone(),
                root,
            });
        }
        let root_for_id = root.clone();
        let mut j = Journal {
            ws: Arc::new(Ws {
                new_file_mode: 0o666 & !crate::engine::umask(),
                lock_path: dir.join("commit.lock"),
                root,
                given_root,
                fs,
                store,
                interrupt: opts.interrupt,
            }),
            lock_timeout: opts.lock_timeout,
            reingest: None,
            opened_recovery: None,
            unrecovered: Vec::new(),
            // A moved journal keeps the id of the root it was made for.
            id: JournalId::derive(
                &identity.nonce,
                moved_from.as_deref().unwrap_or(&root_for_id),
            ),
            nonce: identity.nonce,
            copied_from,
            max_preview_age: opts.max_preview_age,
            policy: opts.policy,
            completion_inline: false,
            release: crate::fs::release::Release::InPlace,
            half_made_aside: None,
            moved_from,
        };
        if j.ws.store.is_read_only() {
            // Recovery writes; on read-only media it is reported, not attempted.
            j.unrecovered = pending_batches(&j.ws.store, None)?;
        } else if opts.recover && !j.ws.store.read()?.inflight()?.is_empty() {
            // A live holder of the lock owns its in-flight batch: leave it alone.
            if let Some(locked) = Locked::try_acquire(&j.ws)? {
                match recovery::recover(&locked, false) {
                    Ok(report) => j.opened_recovery = Some(report),
                    // A reader is not stopped by a recovery that cannot run here (a
                    // full disk, a file owned by another user): it reads the journal as
                    // it is and is told which batches wait, and why.
                    Err(e) if opts.for_reading => {
                        j.unrecovered = pending_batches(&j.ws.store, Some(&e))?;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(j)
    }

    /// The policy of this journal's verbs for a plan without its own
    /// ([`crate::OpenOptions::policy`]; default [`crate::Policy::default`]).
    pub fn policy(&self) -> crate::Policy {
        self.policy
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.ws.root
    }

    /// The file at `path` (relative to the root, or absolute inside it) as it is on disk
    /// now, read as a preview reads it: the path checked on disk (no symbolic link
    /// followed, nothing outside the root or in a reserved directory), a FIFO or device
    /// refused without being opened for a blocking read. Its state ([`crate::FileState::ABSENT`]
    /// when there is nothing) and its bytes. For a front end that compares the disk
    /// with a recorded snapshot (the MCP server's `source_changed`). Errors: the path's
    /// refusal ([`Error::Path`]) or the read's I/O error.
    pub fn disk_state(&self, path: &str) -> Result<(crate::FileState, Option<Vec<u8>>)> {
        crate::workspace::guarded(|| {
            let rel = self.ws.normalize(path)?;
            let (state, bytes, _) =
                crate::fs::snapshot::read_state(self.ws.fs.as_ref(), &self.ws.root, &rel)?;
            Ok((state, bytes))
        })
    }

    /// The directory that holds the journal and the commit lock: `<root>/.ultra-edit/`
    /// or [`OpenOptions::state_dir`].
    pub fn state_dir(&self) -> &Path {
        self.ws.state_dir()
    }

    /// This journal's id at this root: the first part of its [`TxHandle`]s.
    pub fn id(&self) -> JournalId {
        self.id
    }

    /// The handle of transaction `tx` of this journal (whether or not it exists).
    pub fn handle(&self, tx: u64) -> TxHandle {
        TxHandle {
            journal: self.id,
            tx,
        }
    }

    /// The root the journal was made for, when it is not [`Journal::root`]: the
    /// `.ultra-edit/` directory was copied (or moved) with its tree to another place.
    /// Such a journal is another history from then on: its id differs from the
    /// original's, so the original's handles are refused here (docs/embedding.md,
    /// "Handles"). `None` for a journal at the root it was made for.
    pub fn copied_from(&self) -> Option<&Path> {
        self.copied_from.as_deref()
    }

    /// The root the journal was made for, when the workspace was moved from there to
    /// [`Journal::root`] (`mv`, within one filesystem): the state directory is the same
    /// directory (its device and inode, recorded in the journal, are unchanged), so the
    /// history keeps its identity: [`Journal::id`] is the one its handles were made
    /// with, and they work here. `None` at the root it was made for, and for a copy
    /// ([`Journal::copied_from`]). A move across filesystems copies the directory, and
    /// is a copy here (docs/embedding.md, "Handles").
    pub fn moved_from(&self) -> Option<&Path> {
        self.moved_from.as_deref()
    }

    /// The tx number `tx` names in this journal: a bare number as is, a handle if it
    /// names this journal. Errors: [`Error::ForeignHandle`] (nothing read or written).
    pub fn tx_number(&self, tx: impl Into<TxRef>) -> Result<u64> {
        match tx.into() {
            TxRef::Number(n) => Ok(n),
            TxRef::Handle(h) if h.journal == self.id => Ok(h.tx),
            TxRef::Handle(h) => {
                let original = self
                    .copied_from
                    .as_deref()
                    .filter(|made_for| JournalId::derive(&self.nonce, made_for) == h.journal);
                Err(Error::ForeignHandle {
                    handle: h,
                    journal: self.id,
                    original_root: original.map(Path::to_path_buf),
                })
            }
        }
    }

    /// The root as it was given to [`Journal::open`], when that is another name for
    /// it (a symlink to the root, or a path through one): absolute plan paths under it
    /// are inside the root as well as those under [`Journal::root`].
    pub fn given_root(&self) -> Option<&Path> {
        self.ws.given_root.as_deref()
    }

    /// A plan's path as the root-relative path the journal records: relative to the
    /// root, or absolute under the root or the root as given. Lexical only: the disk
    /// checks (symlinks, kinds) run when a plan is previewed. Errors: the path-safety
    /// refusals of [`crate::PathError`].
    pub fn relative(&self, raw: &str) -> Result<crate::fs::RelPath, crate::PathError> {
        self.ws.normalize(raw)
    }

    /// What the recovery run by the open did, if it ran.
    pub fn recovery_on_open(&self) -> Option<&RecoveryReport> {
        self.opened_recovery.as_ref()
    }

    /// Whether the journal was opened read-only, because it is on a read-only
    /// filesystem: reading verbs (`log`, `show`, `dump`, `verify`, `stats`) work, and
    /// every verb that writes fails with [`Error::ReadOnly`] before changing anything.
    pub fn is_read_only(&self) -> bool {
        self.ws.store.is_read_only()
    }

    /// The batches in flight that recovery did not settle on open: because the journal
    /// is read-only, or, for a journal opened [`OpenOptions::for_reading`], because
    /// recovery failed ([`PendingBatch::recovery_failed`] says why; a journal opened
    /// to write returns that error instead). Empty otherwise.
    pub fn unrecovered(&self) -> &[PendingBatch] {
        &self.unrecovered
    }

    /// The paths `receipt` touched, sorted, root-relative and absolute: what a
    /// caller re-ingests after [`Journal::commit`] or [`Journal::rollback`] returns,
    /// with its own state at hand (the alternative to a [`ReingestHook`], which cannot
    /// borrow the caller's state). Files only; the directories a batch created or
    /// removed are in the receipt.
    pub fn touched(&self, receipt: &crate::Receipt) -> Vec<Touched> {
        receipt
            .files
            .iter()
            .map(|f| Touched {
                path: f.path.to_string(),
                absolute: self.ws.abs(&f.path),
            })
            .collect()
    }

    /// Set the reingest hook (see [`ReingestHook`]).
    pub fn set_reingest_hook(&mut self, hook: impl Fn(&[String]) + Send + Sync + 'static) {
        self.reingest = Some(Box::new(hook));
    }

    /// Write the completion of a commit or rollback (docs/commit-protocol.md, step 7)
    /// on the calling thread, before [`Journal::commit`] or [`Journal::rollback`]
    /// returns, instead of in the background (default: `false`). The receipt is the same
    /// and its completion is durable when the call returns; an error of the completion
    /// is reported by the next [`Journal::flush`] (or call on the handle) as in the
    /// background case. For a caller that calls [`Journal::flush`] right after anyway,
    /// as the CLI does: it saves starting and joining a thread per commit.
    pub fn set_completion_inline(&mut self, inline: bool) {
        self.completion_inline = inline;
    }

    /// Let a commit or rollback hand the files it replaced to a detached child process
    /// to free, when they are large (default: `false`, freed on the completion's
    /// thread). A batch holds each replaced file's inode across its rename and lets go
    /// after the completion (docs/commit-protocol.md, steps 5 and 7); letting go of the
    /// last reference makes the kernel free the file's blocks, ≈ 40-55 ms for a 100 MB
    /// file on ext4. With this set, when the held files total 8 MiB or more
    /// ([`crate::fs::release::DETACH_FROM`]), their filesystem has four times that
    /// free, and the kernel has `close_range(2)` or the descriptor limit is at most
    /// [`crate::fs::release::CLOSE_LOOP_MAX`], a forked child (`fork(2)`, closing every other descriptor) holds them and
    /// frees them, so that the call returns, and the process can exit, without waiting
    /// for the free. The receipt and everything durable are the same either way; if the
    /// fork fails the files are freed in place.
    ///
    /// For a process that exits soon after, as the CLI does: the child is never waited
    /// for, so it stays a zombie until this process exits (or reaps it with a
    /// `waitpid`). A long-running embedder should leave this off.
    pub fn set_detached_release(&mut self, detached: bool) {
        self.release = if detached {
            crate::fs::release::Release::Detached
        } else {
            crate::fs::release::Release::InPlace
        };
    }

    /// Set how long commits and rollbacks wait for the commit lock.
    pub fn set_lock_timeout(&mut self, timeout: Duration) {
        self.lock_timeout = timeout;
    }

    /// Run recovery now, under the commit lock (waiting up to the lock timeout).
    /// Foreign bytes are left alone and reported (`NeedsAttention`).
    pub fn recover(&self) -> Result<RecoveryReport> {
        self.recover_with(RecoverOptions::default())
    }

    /// [`Journal::recover`] with options: `overwrite` settles `NeedsAttention` batches
    /// by overwriting the foreign bytes, after storing them in the journal.
    pub fn recover_with(&self, opts: RecoverOptions) -> Result<RecoveryReport> {
        crate::workspace::guarded(|| recovery::recover(&self.lock()?, opts.overwrite))
    }

    /// Take the commit lock (waiting up to the lock timeout): the token the batch
    /// protocol and recovery require.
    pub(crate) fn lock(&self) -> Result<Locked<'_>> {
        // This handle's own completion in flight holds the lock: wait for it rather
        // than poll (its error, if it failed, is for `flush`).
        self.ws.store.pending().wait();
        Locked::acquire(&self.ws, self.lock_timeout)
    }

    /// Hand a landed batch's completion (docs/commit-protocol.md, steps 6–7) to a
    /// background thread, together with the commit lock: the lock is released only
    /// once the completion is durable, so no other process recovers the batch
    /// meanwhile, and every later call on this handle waits for it first. On this
    /// thread instead, before returning, when [`Journal::set_completion_inline`] is set.
    /// Returns the landed batch's receipt.
    pub(crate) fn complete_landed(
        &self,
        locked: Locked<'_>,
        landed: crate::batch::protocol::Landed,
    ) -> crate::journal::records::Receipt {
        let receipt = landed.receipt.clone();
        let tx = receipt.tx;
        let landed = landed.release_with(self.release);
        if self.completion_inline {
            self.ws
                .store
                .pending()
                .run_here(tx, || crate::batch::protocol::complete(&locked, landed));
            return receipt;
        }
        let lock = locked.into_lock();
        let ws = Arc::clone(&self.ws);
        self.ws.store.pending().start(tx, move || {
            let l = Locked::resume(&ws, lock);
            crate::batch::protocol::complete(&l, landed)
        });
        receipt
    }

    /// Wait until the journal write this handle runs in the background is durable —
    /// the completion of its last commit or rollback, which returned its receipt
    /// before that write (docs/commit-protocol.md, steps 6–7) — and return that write's
    /// error if it failed: [`Error::NeedsAttention`] with
    /// [`crate::Attention::CompletionNotRecorded`] (the batch landed; the next
    /// recovery records its completion, with the same receipt). Each such error is
    /// returned once, by this (the oldest not yet reported) or by
    /// [`Journal::flush_tx`] of its tx; no other call returns it, so on a handle shared
    /// by several callers one caller's failed completion never becomes another
    /// caller's error.
    ///
    /// Every call on the handle (reads too) waits the same way before it runs, so the
    /// handle always shows its own commits as committed, and dropping the handle waits
    /// too (discarding the error). Call it where the process must know the commit is
    /// recorded before it goes on — the CLI calls it before printing a receipt, so its
    /// process exits only after the completion is durable. Immediate when nothing is
    /// pending.
    pub fn flush(&self) -> Result<()> {
        self.ws.store.pending().take_failure(None)
    }

    /// [`Journal::flush`] for one caller of a shared handle: wait the same way, and
    /// return the error of a failed completion of `tx` only, leaving other txs' errors
    /// for their own callers. `tx` is a handle like every other verb's (the preview's
    /// `handle`), or the receipt's tx number. The MCP tools use it (docs/embedding.md,
    /// "Commit and the completion"). When a host must call it: before it tells a
    /// caller that reads the journal from another process (or after this one exits)
    /// that the commit is recorded; a commit's receipt alone means the files hold the
    /// new content. Errors also: [`Error::ForeignHandle`].
    pub fn flush_tx(&self, tx: impl Into<TxRef>) -> Result<()> {
        let tx = self.tx_number(tx)?;
        self.ws.store.pending().take_failure(Some(tx))
    }

    /// Call the reingest hook, if any. The batch has landed and its receipt is the
    /// caller's answer: a panic of the hook (the embedder's code, already reported by
    /// the process's panic hook) is caught here and does not turn the commit or
    /// rollback into an error — else the caller would lose the receipt of a change
    /// that is on disk, and might retry it.
    pub(crate) fn reingest(&self, paths: &[String]) {
        if let Some(hook) = &self.reingest {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(paths)));
        }
    }
}

impl Drop for Journal {
    /// Wait for the completion in flight, if any ([`Journal::flush`]): the handle's
    /// commit lock and journal are released only after it. Its error is dropped; the
    /// batch it concerns stays `committing` and the next recovery completes it.
    fn drop(&mut self) {
        self.ws.store.pending().wait();
    }
}

/// The canonical root, and the root as given when that is another name for it: made
/// absolute (against the current directory) without resolving symlinks, `.` dropped.
/// A given root with `..` is not kept: `..` after a symlink leaves the link's target,
/// not the directory the text names, so only the canonical root is trusted then.
/// The syncs `init` makes durable with ([`Fsync`]; tests record them).
trait Syncer {
    /// Make `file` (at `path`) durable.
    fn file(&mut self, file: &fs::File, path: &Path) -> std::io::Result<()>;
    /// Make the entries of the directory `path` durable.
    fn dir(&mut self, path: &Path) -> std::io::Result<()>;
}

/// `fsync(2)`.
struct Fsync;

impl Syncer for Fsync {
    fn file(&mut self, file: &fs::File, _: &Path) -> std::io::Result<()> {
        file.sync_all()
    }
    fn dir(&mut self, path: &Path) -> std::io::Result<()> {
        fs::File::open(path)?.sync_all()
    }
}

/// [`Error::JournalUnreadable`] when the state directory `dir` exists but this process
/// may not list it or look up its journal (`EACCES`); `Ok` otherwise, including when it
/// is absent (the callers then say it is not initialized, or create it).
fn check_state_dir_access(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let denied =
        |r: std::io::Result<()>| r.is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
    let Ok(md) = fs::metadata(dir) else {
        return Ok(());
    };
    if !md.is_dir()
        || !(denied(fs::read_dir(dir).map(drop))
            || denied(fs::symlink_metadata(dir.join("journal.redb")).map(drop)))
    {
        return Ok(());
    }
    Err(Error::JournalUnreadable {
        state_dir: dir.to_path_buf(),
        uid: rustix::process::geteuid().as_raw(),
        owner: md.uid(),
        group: md.gid(),
        mode: md.mode() & 0o7777,
    })
}

/// Refuse a state directory that could lead a write outside it: the directory itself a
/// symbolic link, or one of the files ultra-edit writes there (`journal.redb`,
/// `commit.lock`, `.gitignore`, `.gitignore.new`) something other than a regular file
/// — a symbolic link, which a cloned repository can ship (git stores links) and which
/// would make the commit lock truncate, or root's `chown`, whatever it points at — or
/// the lock file with another hard link. Checked by [`Journal::init`] and
/// [`Journal::open`] before anything is written; the files themselves are also opened
/// with `O_NOFOLLOW` ([`crate::lock`], [`prepare_state_dir`]). Absent files are fine
/// (init creates them). docs/threat-model.md, "The state directory".
pub(crate) fn check_state_files(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let refuse = |reason| {
        Err(Error::InvalidStateDir {
            state_dir: dir.to_path_buf(),
            reason,
        })
    };
    match fs::symlink_metadata(dir) {
        Ok(md) if md.file_type().is_symlink() => {
            return refuse("it is a symbolic link, and ultra-edit keeps its journal and lock only in a real directory (a link can lead outside the workspace); to keep the journal elsewhere, remove the link and give that directory as the state directory (`--state-dir`)");
        }
        Ok(md) if !md.is_dir() => {
            return refuse("it is not a directory; remove it, then run `init`")
        }
        Ok(_) => {}
        Err(_) => return Ok(()),
    }
    for (name, reason) in [
        ("journal.redb", "its journal.redb is not a regular file (a symbolic link, say, which could lead outside the workspace); remove the link and put the journal file itself there"),
        ("commit.lock", "its commit.lock is not a regular file (a symbolic link, say, which a commit would truncate wherever it leads); remove it, a commit re-creates it"),
        (".gitignore", "its .gitignore is not a regular file (a symbolic link, say, which init would rewrite wherever it leads); remove it, then run `init`"),
        (".gitignore.new", "its .gitignore.new is not a regular file (a symbolic link, say); remove it, then run `init`"),
    ] {
        match fs::symlink_metadata(dir.join(name)) {
            Ok(md) if !md.file_type().is_file() => return refuse(reason),
            Ok(md) if name == "commit.lock" && md.nlink() > 1 => {
                return refuse("its commit.lock has other hard links, and a commit truncates it (the links would lose their bytes too); remove it, a commit re-creates it");
            }
            _ => {}
        }
    }
    Ok(())
}

/// Make `dir/journal.redb` a whole journal before `init` opens it, so that a power cut
/// anywhere in `init` leaves either no journal or a working one (docs/commit-protocol.md,
/// "init and power cuts"):
///
/// - a half-made journal there (its creation was cut before redb wrote its magic
///   number: it holds no history) is renamed to `journal.redb.half-made` (`.1`, `.2`, …
///   when taken) and the directory synced; that name is returned, never deleted;
/// - when there is no journal, one is made under `journal.redb.init` (a leftover of a
///   cut `init` there is removed first: it is this function's own scratch file and never
///   holds more than an empty journal), closed, fsynced, renamed to `journal.redb`, and
///   the directory synced. Until that rename is durable there is no `journal.redb`.
///
/// A journal that is there and not half-made is left as it is (opening it says if it
/// is damaged).
fn build_journal_file(dir: &Path, sync: &mut dyn Syncer) -> Result<Option<PathBuf>> {
    let file = dir.join("journal.redb");
    let mut aside = None;
    if file.is_file() && crate::journal::file_is_half_made(&file) {
        let mut to = dir.join("journal.redb.half-made");
        let mut n = 0;
        while fs::symlink_metadata(&to).is_ok() {
            n += 1;
            to = dir.join(format!("journal.redb.half-made.{n}"));
        }
        fs::rename(&file, &to).ctx("rename", &file)?;
        sync.dir(dir).ctx("fsync dir", dir)?;
        aside = Some(to);
    }
    if fs::symlink_metadata(&file).is_ok() {
        return Ok(aside);
    }
    let tmp = dir.join("journal.redb.init");
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).ctx("unlink", &tmp).map_err(Into::into);
        }
        _ => {}
    }
    drop(Store::open(&tmp, true)?);
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(no_follow())
        .open(&tmp)
        .ctx("open", &tmp)?;
    own_like_state_dir(dir, &f, &tmp)?;
    sync.file(&f, &tmp).ctx("fsync", &tmp)?;
    fs::rename(&tmp, &file).ctx("rename", &file)?;
    sync.dir(dir).ctx("fsync dir", dir)?;
    Ok(aside)
}

/// What `.ultra-edit/.gitignore` holds: everything inside is ignored.
const GITIGNORE: &[u8] = b"*\n";

/// Create (or repair) `.ultra-edit/`: the directory, private to its owner; a
/// `.gitignore` that ignores everything in it; the lock file. Each file is synced;
/// the directory entries are synced by the caller once the journal is there too.
fn prepare_state_dir(dir: &Path, external: bool, sync: &mut dyn Syncer) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dir.is_dir() {
        fs::DirBuilder::new()
            .mode(0o700)
            .recursive(external)
            .create(dir)
            .ctx("mkdir", dir)?;
    }
    // The journal holds the bytes of every previewed file, private ones included: only
    // the owner may enter the directory.
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).ctx("chmod", dir)?;
    let ignore = dir.join(".gitignore");
    let ignores_all = fs::read(&ignore)
        .map(|b| b.split(|&c| c == b'\n').any(|l| l.trim_ascii() == b"*"))
        .unwrap_or(false);
    if ignores_all {
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(no_follow())
            .open(&ignore)
            .ctx("open", &ignore)?;
        sync.file(&f, &ignore).ctx("fsync", &ignore)?;
    } else {
        // Missing, empty (a power cut before it was synced) or not ignoring
        // everything: written whole beside it, synced, then renamed over it.
        let tmp = dir.join(".gitignore.new");
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(no_follow())
            .open(&tmp)
            .ctx("create", &tmp)?;
        own_like_state_dir(dir, &f, &tmp)?;
        std::io::Write::write_all(&mut f, GITIGNORE).ctx("write", &tmp)?;
        sync.file(&f, &tmp).ctx("fsync", &tmp)?;
        fs::rename(&tmp, &ignore).ctx("rename", &ignore)?;
    }
    let lock = dir.join("commit.lock");
    let f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(no_follow())
        .open(&lock)
        .ctx("create", &lock)?;
    own_like_state_dir(dir, &f, &lock)?;
    sync.file(&f, &lock).ctx("fsync", &lock)?;
    Ok(())
}

/// `init` makes a state directory private (0700) and writes a `.gitignore` of `*` in it:
/// given a directory that already holds other things (a project, `/tmp`), it would
/// take that directory over. So an existing `--state-dir` must be empty or a state
/// directory already (it holds `journal.redb`, or only the files `init` writes, left
/// by an init cut short). Found by the breaker: `--state-dir ..` from a repository's
/// subdirectory replaced the repository's `.gitignore` and made it 0700.
fn check_state_dir_is_its_own(dir: &Path) -> Result<()> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(()); // missing: init creates it
    };
    let ours = [
        ".gitignore",
        ".gitignore.new",
        "commit.lock",
        "journal.redb",
    ];
    let others: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !ours.contains(&name.as_str()))
        .collect();
    if others.is_empty() || dir.join("journal.redb").is_file() {
        return Ok(());
    }
    Err(Error::InvalidStateDir {
        state_dir: dir.to_path_buf(),
        reason: "it already holds other files, and init would make it private (0700) and ignore everything in it for git; give a new or empty directory",
    })
}

/// The state directory of `root`: `<root>/.ultra-edit`, or `state_dir` made absolute
/// (canonical when it exists). A `state_dir` inside the root is refused
/// ([`Error::InvalidStateDir`]): the root's files are what plans write, and the
/// journal must not be one of them (`.ultra-edit/` itself is refused by path safety).
fn state_dir_for(root: &Path, state_dir: Option<&Path>) -> Result<PathBuf> {
    let Some(dir) = state_dir else {
        return Ok(root.join(STATE_DIR));
    };
    let abs = resolve_maybe_missing(dir).ctx("resolve state directory", dir)?;
    if root.starts_with(&abs) {
        return Err(Error::InvalidStateDir {
            state_dir: abs,
            reason: "it holds the workspace root; put it beside the root, not above it (or use the root's own .ultra-edit/)",
        });
    }
    if abs.starts_with(root) && abs != root.join(STATE_DIR) {
        return Err(Error::InvalidStateDir {
            state_dir: abs,
            reason: "it is inside the workspace root, where plans write; put it outside the root (or use the root's own .ultra-edit/)",
        });
    }
    Ok(abs)
}

/// `dir` as the kernel will find it once created: its nearest existing ancestor
/// canonicalized (symlinks and `..` resolved), then the missing rest, whose `..` are
/// resolved lexically — a component that does not exist is no symlink. So
/// `ROOT/../state` is the directory beside the root, and a path through a symlinked
/// alias of the root is inside it, before anything is created (found by the breaker:
/// the first was refused as inside the root, the second created in the tree, then
/// refused).
fn resolve_maybe_missing(dir: &Path) -> std::io::Result<PathBuf> {
    let dir = std::path::absolute(dir)?;
    let mut rest = Vec::new();
    let mut existing = dir.as_path();
    let base = loop {
        match existing.canonicalize() {
            Ok(c) => break c,
            Err(_) => {
                rest.push(existing.file_name().map(PathBuf::from).unwrap_or_else(|| {
                    // `..` or `.` as the last component: kept as a component.
                    existing
                        .components()
                        .next_back()
                        .map(|c| PathBuf::from(c.as_os_str()))
                        .unwrap_or_default()
                }));
                match existing.parent() {
                    Some(p) => existing = p,
                    None => break PathBuf::from("/"),
                }
            }
        }
    };
    let mut out = base;
    for part in rest.iter().rev() {
        for c in part.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
    }
    Ok(out)
}

fn roots(root: &Path) -> Result<(PathBuf, Option<PathBuf>)> {
    let canonical = root.canonicalize().ctx("open workspace root", root)?;
    let given = std::path::absolute(root)
        .ok()
        .map(|p| p.components().collect::<PathBuf>())
        .filter(|p| {
            !p.components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        })
        .filter(|p| *p != canonical);
    Ok((canonical, given))
}

/// Run a public verb, turning a panic inside it (redb panics on some damaged journal
/// files) into [`crate::JournalError::Panicked`]: no panic crosses the library boundary.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(crate::error::JournalError::Panicked { message }.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn journal_is_send_and_sync() {
        assert_send_sync::<super::Journal>();
    }

    /// Records what `init` syncs, as paths relative to the root (`.` for the root).
    #[derive(Default)]
    struct Recorder {
        root: PathBuf,
        synced: Vec<String>,
    }

    impl Recorder {
        fn name(&self, what: &str, path: &Path) -> String {
            let rel = path.strip_prefix(&self.root).unwrap_or(path);
            let rel = if rel.as_os_str().is_empty() {
                ".".into()
            } else {
                rel.display().to_string()
            };
            format!("{what} {rel}")
        }
    }

    impl Syncer for Recorder {
        fn file(&mut self, file: &fs::File, path: &Path) -> std::io::Result<()> {
            // What is synced is what is there: the file's bytes as they will stay.
            let len = file.metadata()?.len();
            let name = self.name("file", path);
            self.synced.push(format!("{name} ({len} bytes)"));
            Ok(())
        }
        fn dir(&mut self, path: &Path) -> std::io::Result<()> {
            let name = self.name("dir", path);
            self.synced.push(name);
            Ok(())
        }
    }

    #[test]
    fn init_syncs_everything_it_creates_then_the_directory_entries() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let mut rec = Recorder {
            root: root.clone(),
            ..Default::default()
        };
        let j = Journal::init_synced(&root, OpenOptions::default(), &mut rec).unwrap();
        let journal_len = fs::metadata(root.join(".ultra-edit/journal.redb"))
            .unwrap()
            .len();
        drop(j);
        assert_eq!(
            rec.synced,
            [
                "file .ultra-edit/.gitignore.new (2 bytes)".to_string(),
                "file .ultra-edit/commit.lock (0 bytes)".to_string(),
                // Made under a temp name, synced, renamed into place, dir synced.
                format!("file .ultra-edit/journal.redb.init ({journal_len} bytes)"),
                "dir .ultra-edit".to_string(),
                format!("file .ultra-edit/journal.redb ({journal_len} bytes)"),
                "dir .ultra-edit".to_string(),
                "dir .".to_string(),
            ]
        );
        assert!(!root.join(".ultra-edit/journal.redb.init").exists());
        assert_eq!(
            fs::read(root.join(".ultra-edit/.gitignore")).unwrap(),
            b"*\n"
        );
        assert!(!root.join(".ultra-edit/.gitignore.new").exists());

        // Again: nothing to repair, and everything is synced once more (a previous
        // init may have been cut before its syncs).
        rec.synced.clear();
        drop(Journal::init_synced(&root, OpenOptions::default(), &mut rec).unwrap());
        assert_eq!(rec.synced[0], "file .ultra-edit/.gitignore (2 bytes)");
        assert_eq!(rec.synced.len(), 5, "{:?}", rec.synced);
    }

    /// A [`Syncer`] whose `k`-th sync (1-based) is a power cut: it fails, and so does
    /// every later one.
    struct CutAt {
        k: usize,
        done: usize,
    }

    impl CutAt {
        fn sync(&mut self) -> std::io::Result<()> {
            self.done += 1;
            if self.done >= self.k {
                return Err(std::io::Error::from_raw_os_error(5));
            }
            Ok(())
        }
    }

    impl Syncer for CutAt {
        fn file(&mut self, _: &fs::File, _: &Path) -> std::io::Result<()> {
            self.sync()
        }
        fn dir(&mut self, _: &Path) -> std::io::Result<()> {
            self.sync()
        }
    }

    /// A cut at every sync of `init` (issue 29 item 2): on the disk as the cut left it
    /// (everything survived) and with the journal's rename lost (it was not yet made
    /// durable by the directory's sync), the next `init` finds no journal or a working
    /// one, never a half-made one, and nothing is moved aside. (A cut inside redb's own
    /// creation of the temp is the power-cut twin's: `tests/it/powercut.rs`.)
    #[test]
    fn a_cut_at_each_sync_of_init_leaves_no_journal_or_a_working_one() {
        for k in 1..=7 {
            for rename_lost in [false, true] {
                let tmp = tempfile::tempdir().unwrap();
                let root = tmp.path().canonicalize().unwrap();
                let mut cut = CutAt { k, done: 0 };
                let r = Journal::init_synced(&root, OpenOptions::default(), &mut cut);
                assert!(r.is_err(), "k={k}: the cut sync is one of init's");
                drop(r);
                let file = root.join(".ultra-edit/journal.redb");
                // The rename is durable with the directory sync right after it (sync 4).
                if rename_lost && k <= 4 {
                    let _ = fs::rename(&file, root.join(".ultra-edit/journal.redb.init"));
                }
                assert!(
                    !file.exists() || !crate::journal::file_is_half_made(&file),
                    "k={k}: a half-made journal.redb"
                );
                if k <= 3 || (rename_lost && k <= 4) {
                    assert!(!file.exists(), "k={k} rename_lost={rename_lost}");
                    assert!(matches!(
                        Journal::open(&root),
                        Err(Error::NotInitialized { .. })
                    ));
                }
                let j = Journal::init(&root).unwrap();
                assert_eq!(j.half_made_moved_aside(), None, "k={k}");
                assert!(j.log(None).unwrap().is_empty());
                assert!(j.verify().unwrap().ok);
                drop(j);
                assert!(Journal::open(&root).is_ok(), "k={k}");
                assert!(!root.join(".ultra-edit/journal.redb.init").exists());
            }
        }
    }

    /// A state directory that does not exist yet is judged where it will be: `..`
    /// after the root leaves it, and a symlinked alias of the root leads into it.
    #[test]
    fn a_missing_state_dir_is_resolved_through_its_existing_ancestor() {
        let base = tempfile::tempdir().unwrap();
        let b = base.path().canonicalize().unwrap();
        std::fs::create_dir(b.join("ws")).unwrap();
        std::os::unix::fs::symlink("ws", b.join("alias")).unwrap();
        let r = |p: &str| resolve_maybe_missing(&b.join(p)).unwrap();
        assert_eq!(r("ws/../state"), b.join("state"));
        assert_eq!(r("alias/inside"), b.join("ws/inside"));
        assert_eq!(r("ws/missing/../x/./y"), b.join("ws/x/y"));
        assert_eq!(r("ws"), b.join("ws"));
        let root = b.join("ws");
        assert!(matches!(
            state_dir_for(&root, Some(&b.join("alias/inside"))),
            Err(Error::InvalidStateDir { .. })
        ));
        assert_eq!(
            state_dir_for(&root, Some(&b.join("ws/../state"))).unwrap(),
            b.join("state")
        );
        assert!(!b.join("ws/inside").exists());
    }
}
