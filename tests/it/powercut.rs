//! Power cuts. The workspace lives in a [`CrashFs`] and the journal on a
//! [`CrashBackend`]; both keep durable and volatile state apart, so a cut drops every
//! write not yet synced — a missing `fsync` shows here, where a killed process (whose
//! page cache survives) would hide it.
//!
//! Each loop first runs the batch uncut to count its syncs N (temp-file fsyncs,
//! directory fsyncs, journal `sync_data`), then, on a fresh machine each time, cuts the
//! power at sync k for every k in 1..=N, boots the durable images (recovery runs on
//! open) and checks that the tree is exactly the pre- or the post-state and that the
//! journal says which.

use std::path::PathBuf;
use std::sync::Arc;

use tempfile::TempDir;
use ultra_edit::{DumpDetail, DumpFilter, Journal, OpenOptions, Receipt, RollbackOptions, TxState};

use crate::support::crashfs::{durable_images, CrashBackend, CrashFs, PowerCut, Tree, TreeEntry};
use crate::support::plan;

/// The tree every machine starts from: nested dirs, several modes.
const INITIAL: &[(&str, &[u8], u32)] = &[
    ("README.md", b"# powercut\n", 0o644),
    ("old/obsolete.txt", b"delete me\n", 0o640),
    ("scripts/run.sh", b"#!/bin/sh\necho old\n", 0o755),
    (
        "src/lib.rs",
        b"pub mod nested;\n\nfn helper() -> u32 {\n    1\n}\n",
        0o644,
    ),
    (
        "src/nested/deep/a.rs",
        b"pub fn a() -> u32 {\n    crate::helper()\n}\n",
        0o600,
    ),
];

/// The file of [`INITIAL`] that belongs to another user ([`owned_by`]) and carries
/// extended attributes: the commit must keep both, and a power cut must not lose them
/// (metadata is volatile until the file's fsync, in [`CrashFs`]).
const INITIAL_OWNED: &str = "src/lib.rs";

/// Another user's uid and gid when the tests run as root (as CI does); else the
/// process's own (only root can give a file another owner, so the commit would be
/// refused with `OwnerNotKept`).
fn owned_by() -> (u32, u32) {
    if rustix::process::geteuid().is_root() {
        (1000, 1001)
    } else {
        (
            rustix::process::geteuid().as_raw(),
            rustix::process::getegid().as_raw(),
        )
    }
}

fn owned_xattrs() -> ultra_edit::Xattrs {
    ultra_edit::Xattrs(vec![("user.origin".into(), b"powercut".to_vec())])
}

/// Two text edits, a new file in two new directories, a deletion, a whole-file replace
/// that also changes the mode (0o755 → 0o700 = 448).
const PLAN: &str = r##"{"description":"power cut","edits":[
    {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    42\n"},
    {"op":"replace_text","path":"src/nested/deep/a.rs","old":"helper","new":"helper_a"},
    {"op":"create_file","path":"gen/deep/x.txt","content":"generated\n"},
    {"op":"delete_file","path":"old/obsolete.txt"},
    {"op":"replace_file","path":"scripts/run.sh","content":"#!/bin/sh\necho new\n","mode":448}]}"##;

/// One simulated machine: a real temp dir as the root (the journal canonicalizes it and
/// keeps `.ultra-edit/commit.lock` there), the workspace in memory, the journal on a
/// crash backend, one power switch for both.
struct Machine {
    _dir: TempDir,
    root: PathBuf,
    fs: Arc<CrashFs>,
    backend: CrashBackend,
    power: Arc<PowerCut>,
    journal: Journal,
}

impl Machine {
    /// A fresh machine holding [`INITIAL`], all durable, with `tx` previewed.
    fn new() -> (Machine, u64) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let power = PowerCut::new();
        let fs = Arc::new(CrashFs::with_power(&root, power.clone()));
        for (rel, bytes, mode) in INITIAL {
            match *rel == INITIAL_OWNED {
                true => fs.put_file_owned(rel, bytes, *mode, owned_by(), owned_xattrs()),
                false => fs.put_file(rel, bytes, *mode),
            }
        }
        fs.sync_all();
        let backend = CrashBackend::new(power.clone());
        let journal = open(&root, fs.clone(), backend.clone(), true);
        let p = journal.preview(&plan(PLAN)).unwrap();
        assert!(
            p.ready_to_commit,
            "plan not committable: {:?}",
            p.validation
        );
        let m = Machine {
            _dir: dir,
            root,
            fs,
            backend,
            power,
            journal,
        };
        (m, p.tx)
    }

    /// The power is cut now (or was): boot a new machine on the durable images of the
    /// filesystem and the journal. Recovery runs on open.
    fn reboot(self) -> Machine {
        let (fs, backend) = durable_images(&self.fs, &self.backend);
        drop(self.journal); // the dead machine's journal goes away first
        let fs = Arc::new(fs);
        let journal = open(&self.root, fs.clone(), backend.clone(), false);
        Machine {
            _dir: self._dir,
            root: self.root,
            power: fs.power(),
            fs,
            backend,
            journal,
        }
    }

    fn tree(&self) -> Tree {
        self.fs.tree()
    }

    fn state(&self, tx: u64) -> TxState {
        self.journal.show(tx, None).unwrap().state
    }

    /// The rollback txs of `tx` in the journal.
    fn rollbacks_of(&self, tx: u64) -> Vec<(u64, TxState)> {
        self.journal
            .log(None)
            .unwrap()
            .into_iter()
            .filter(|e| e.rollback_of == Some(tx))
            .map(|e| (e.tx, e.state))
            .collect()
    }

    /// No batch left in flight.
    fn assert_settled(&self, what: &str) {
        let again = self.journal.recover().unwrap();
        assert_eq!(again.batches_found, 0, "{what}: a batch is still in flight");
    }
}

fn open(root: &std::path::Path, fs: Arc<CrashFs>, backend: CrashBackend, init: bool) -> Journal {
    let opts = OpenOptions::default()
        .with_fs(fs)
        .with_journal_backend(Box::new(backend));
    if init {
        Journal::init_with(root, opts).unwrap()
    } else {
        Journal::open_with(root, opts).unwrap()
    }
}

fn initial_tree() -> Tree {
    let (m, _) = Machine::new();
    m.tree()
}

/// What the uncut run of a batch did: its syncs (labelled) and the tree it left.
struct Baseline {
    syncs: Vec<String>,
    post: Tree,
}

impl Baseline {
    fn n(&self) -> u64 {
        self.syncs.len() as u64
    }
    fn label(&self, k: u64) -> &str {
        &self.syncs[(k - 1) as usize]
    }
}

/// Run `batch` on a fresh machine without a cut, counting its syncs.
fn baseline(prepare: impl Fn(&Machine, u64), batch: impl Fn(&Machine, u64) -> bool) -> Baseline {
    let (m, tx) = Machine::new();
    prepare(&m, tx);
    let before = m.power.log().len();
    let s0 = m.power.syncs();
    assert!(batch(&m, tx), "the uncut batch failed");
    let n = m.power.syncs() - s0;
    let syncs = m.power.log()[before..].to_vec();
    assert_eq!(syncs.len() as u64, n);
    Baseline {
        syncs,
        post: m.tree(),
    }
}

/// For each k in 1..=N: fresh machine, `prepare`, cut at the k-th sync of `batch`, which
/// must fail; reboot; hand the recovered machine to `check` with the label of the cut
/// sync. Then cut the power again right after recovery: its result must be durable.
fn cut_everywhere(
    base: &Baseline,
    prepare: impl Fn(&Machine, u64),
    batch: impl Fn(&Machine, u64) -> bool,
    check: impl Fn(&Machine, u64, &str),
) -> u64 {
    let mut exercised = 0;
    for k in 1..=base.n() {
        let (m, tx) = Machine::new();
        prepare(&m, tx);
        m.power.cut_at(m.power.syncs() + k);
        let ok = batch(&m, tx);
        let at = format!("cut at sync {k}/{} ({})", base.n(), base.label(k));
        assert!(!ok, "{at}: the batch returned Ok after the power cut");
        assert!(m.power.is_cut(), "{at}: the cut sync was never reached");
        // The temps are fsynced concurrently, and so are the directories: which of a
        // group's syncs is the k-th varies, its kind (file, directory, journal) does
        // not, and it is one the uncut run made.
        let cut = m.power.log().pop().unwrap_or_default();
        let cut = cut.strip_suffix(" (CUT)").unwrap_or(&cut);
        assert_eq!(kind(cut), kind(base.label(k)), "{at}: not deterministic");
        assert!(base.syncs.iter().any(|l| l == cut), "{at}: {cut} is new");
        let m = m.reboot();
        check(&m, tx, &at);
        m.assert_settled(&at);
        // A second cut right after recovery returned: nothing recovery did may be lost.
        let tree = m.tree();
        let m = m.reboot();
        assert_eq!(m.tree(), tree, "{at}: recovery's result was not durable");
        check(&m, tx, &format!("{at}, then a cut after recovery"));
        exercised += 1;
    }
    exercised
}

/// The kind of a sync label: `fsync dir`, `fsync` (a file) or `journal sync_data`.
fn kind(label: &str) -> &str {
    if label.starts_with("fsync dir ") {
        "fsync dir"
    } else if label.starts_with("fsync ") {
        "fsync"
    } else {
        label
    }
}

/// A commit and its completion, which is written after `commit` returned: `flush`
/// waits for it (and fails when a cut stopped it).
fn commit(m: &Machine, tx: u64) -> bool {
    m.journal.commit(tx, Default::default()).is_ok() && m.journal.flush().is_ok()
}

fn rollback(m: &Machine, tx: u64) -> bool {
    m.journal.rollback(tx, RollbackOptions::default()).is_ok() && m.journal.flush().is_ok()
}

fn commit_uncut(m: &Machine, tx: u64) {
    m.journal.commit(tx, Default::default()).unwrap();
    m.journal.flush().unwrap();
}

fn assert_pre_or_post(tree: &Tree, pre: &Tree, post: &Tree, at: &str) {
    assert!(
        tree == pre || tree == post,
        "{at}: the tree is neither the pre- nor the post-state\n\
         found: {tree:#?}\npre:   {pre:#?}\npost:  {post:#?}"
    );
}

#[test]
fn the_post_state_differs_from_the_pre_state_as_planned() {
    let pre = initial_tree();
    let base = baseline(|_, _| {}, commit);
    let post = &base.post;
    assert!(matches!(
        post.get("gen/deep/x.txt"),
        Some(TreeEntry::File { bytes, mode: 0o644, .. }) if bytes == b"generated\n"
    ));
    // The replaced file keeps its owner and extended attributes (INITIAL_OWNED).
    let Some(TreeEntry::File { owner, xattrs, .. }) = post.get("src/lib.rs") else {
        panic!("src/lib.rs: {post:?}");
    };
    assert_eq!((*owner, xattrs), (owned_by(), &owned_xattrs()));
    assert_eq!(post.get("gen/deep"), Some(&TreeEntry::Dir { mode: 0o755 }));
    assert!(!post.contains_key("old/obsolete.txt"));
    assert!(matches!(
        post.get("scripts/run.sh"),
        Some(TreeEntry::File { mode: 0o700, .. })
    ));
    assert_ne!(pre.get("src/lib.rs"), post.get("src/lib.rs"));
    assert_ne!(
        pre.get("src/nested/deep/a.rs"),
        post.get("src/nested/deep/a.rs")
    );
    assert!(
        post.keys().all(|k| !k.contains(".ue-")),
        "temp left: {post:?}"
    );
}

#[test]
fn power_cut_at_every_sync_of_a_commit_leaves_pre_or_post() {
    let pre = initial_tree();
    let base = baseline(|_, _| {}, commit);
    let post = base.post.clone();
    let exercised = cut_everywhere(
        &base,
        |_, _| {},
        commit,
        |m, tx, at| {
            let tree = m.tree();
            assert_pre_or_post(&tree, &pre, &post, at);
            let state = m.state(tx);
            if tree == post {
                assert_eq!(
                    state,
                    TxState::Committed,
                    "{at}: post tree, tx not Committed"
                );
            } else {
                assert_eq!(state, TxState::Open, "{at}: pre tree, tx not Open");
            }
        },
    );
    println!(
        "commit: {exercised} power-cut points exercised (N = {}): {:#?}",
        base.n(),
        base.syncs
    );
    assert!(base.n() >= 8, "only {} syncs in a commit", base.n());
    assert_eq!(exercised, base.n());
}

#[test]
fn a_returned_receipt_survives_power_loss() {
    let pre = initial_tree();
    let post = baseline(|_, _| {}, commit).post;
    let (m, tx) = Machine::new();
    let s0 = m.power.syncs();
    let receipt = m.journal.commit(tx, Default::default()).unwrap();
    assert_eq!(receipt.tx, tx);
    // The power goes the instant the receipt is returned: the background completion
    // may be anywhere in its write (the cut at each of its syncs:
    // `a_cut_at_each_sync_of_the_background_completion_keeps_the_returned_receipt`).
    let s1 = m.power.syncs();
    let m = m.reboot();
    assert_eq!(
        m.tree(),
        post,
        "the receipt was returned but the commit did not survive the power cut \
         (pre-state: {})",
        m.tree() == pre
    );
    assert_eq!(m.state(tx), TxState::Committed);
    assert!(s1 > s0);
    m.assert_settled("after the receipt");

    // The same for a rollback's receipt.
    let s2 = m.power.syncs();
    m.journal.rollback(tx, RollbackOptions::default()).unwrap();
    assert!(m.power.syncs() > s2);
    let m = m.reboot();
    assert_eq!(m.tree(), pre, "the rollback's receipt did not survive");
    assert_eq!(m.state(tx), TxState::RolledBack);
    let rbs = m.rollbacks_of(tx);
    assert_eq!(rbs.len(), 1);
    assert_eq!(rbs[0].1, TxState::Committed);
}

/// The completion is written after `commit` (or `rollback`) returned its receipt
/// (docs/commit-protocol.md, step 6). A cut at each of its syncs, with the receipt
/// already in the caller's hands: after the reboot, recovery has written the receipt,
/// exactly one, equal to the returned one in every field but `by_recovery` (true: the
/// recovery wrote it), and the tree is the post-state.
#[test]
fn a_cut_at_each_sync_of_the_background_completion_keeps_the_returned_receipt() {
    let pre = initial_tree();
    for rolling_back in [false, true] {
        let prepare = |m: &Machine, tx: u64| {
            if rolling_back {
                commit_uncut(m, tx);
            }
        };
        let batch = |m: &Machine, tx: u64| match rolling_back {
            false => m.journal.commit(tx, Default::default()),
            true => m.journal.rollback(tx, RollbackOptions::default()),
        };
        let base = baseline(prepare, |m, tx| {
            batch(m, tx).is_ok() && m.journal.flush().is_ok()
        });
        // The completion's syncs: every journal sync after the last directory fsync.
        let last_dir_sync = base
            .syncs
            .iter()
            .rposition(|s| s.starts_with("fsync dir"))
            .expect("the batch syncs directories");
        let completion: Vec<u64> = (last_dir_sync as u64 + 2..=base.n()).collect();
        assert_eq!(
            completion.len(),
            2,
            "rollback: {rolling_back}: the completion is one journal commit of 2 syncs: {:?}",
            base.syncs
        );
        for k in completion {
            let at = format!("rollback: {rolling_back}, cut at sync {k}/{}", base.n());
            let (m, tx) = Machine::new();
            prepare(&m, tx);
            m.power.cut_at(m.power.syncs() + k);
            let returned = batch(&m, tx).unwrap_or_else(|e| panic!("{at}: {e}"));
            let flushed = m.journal.flush();
            assert!(
                matches!(
                    &flushed,
                    Err(ultra_edit::Error::NeedsAttention {
                        attention: ultra_edit::Attention::CompletionNotRecorded { .. },
                        ..
                    })
                ),
                "{at}: {flushed:?}"
            );
            // The error is reported once.
            assert!(m.journal.flush().is_ok(), "{at}");
            assert!(m.power.is_cut(), "{at}");
            let m = m.reboot();
            let want = if rolling_back { &pre } else { &base.post };
            assert_eq!(&m.tree(), want, "{at}");
            let receipts = receipts_of(&m, returned.tx);
            assert_eq!(receipts.len(), 1, "{at}: {receipts:?}");
            let recorded = &receipts[0];
            assert!(recorded.by_recovery, "{at}");
            assert!(!returned.by_recovery, "{at}");
            assert_eq!(
                Receipt {
                    by_recovery: false,
                    ..recorded.clone()
                },
                returned,
                "{at}"
            );
            m.assert_settled(&at);
            // Recovery's receipt is durable, and a second recovery writes no other.
            let m = m.reboot();
            assert_eq!(receipts_of(&m, returned.tx).len(), 1, "{at}");
        }
    }
}

/// A recorded preview is durable once `preview` returns (its one journal write is an
/// `Immediate` redb commit): the power going right after it loses neither the tx nor
/// its revision, and the tx commits after the reboot. A cut at either sync of that
/// write leaves no tx at all (the preview returned an error).
#[test]
fn a_returned_preview_survives_power_loss() {
    let (m, tx) = Machine::new(); // Machine::new previews PLAN on the powered machine
    let m = m.reboot();
    let shown = m.journal.show(tx, None).unwrap();
    assert_eq!(
        (
            shown.state,
            shown.latest_revision,
            shown.description.as_deref()
        ),
        (TxState::Open, 0, Some("power cut"))
    );
    assert_eq!(shown.files.len(), 5);
    let receipt = m.journal.commit(tx, Default::default()).unwrap();
    assert_eq!(receipt.tx, tx);
    let m = m.reboot();
    assert_eq!(m.state(tx), TxState::Committed);

    for k in [1, 2] {
        let (m, _) = Machine::new();
        let s0 = m.power.syncs();
        m.power.cut_at(s0 + k);
        let again = m.journal.preview(&plan(PLAN));
        assert!(
            again.is_err(),
            "cut at sync {k} of the preview: it returned Ok"
        );
        let m = m.reboot();
        // Only Machine::new's own preview is there.
        assert_eq!(m.journal.log(None).unwrap().len(), 1, "cut at sync {k}");
    }
}

#[test]
fn power_cut_at_every_sync_of_a_rollback() {
    let pre = initial_tree();
    let committed = baseline(|_, _| {}, commit).post;
    let base = baseline(commit_uncut, rollback);
    assert_eq!(base.post, pre, "an uncut rollback restores the pre-state");
    let exercised = cut_everywhere(&base, commit_uncut, rollback, |m, tx, at| {
        let tree = m.tree();
        // Before the rollback: the committed tree; after it: the original pre-state.
        assert_pre_or_post(&tree, &committed, &pre, at);
        let rbs = m.rollbacks_of(tx);
        assert!(rbs.len() <= 1, "{at}: several rollback txs: {rbs:?}");
        if tree == pre {
            assert_eq!(m.state(tx), TxState::RolledBack, "{at}");
            assert_eq!(rbs.len(), 1, "{at}: rolled back without a rollback tx");
            assert_eq!(rbs[0].1, TxState::Committed, "{at}: {rbs:?}");
        } else {
            assert_eq!(m.state(tx), TxState::Committed, "{at}");
            assert!(
                rbs.iter().all(|(_, s)| *s != TxState::Committed),
                "{at}: the rollback tx says Committed but the tree is not rolled back: {rbs:?}"
            );
        }
    });
    println!(
        "rollback: {exercised} power-cut points exercised (N = {}): {:#?}",
        base.n(),
        base.syncs
    );
    assert!(base.n() >= 8, "only {} syncs in a rollback", base.n());
    assert_eq!(exercised, base.n());
}

/// The receipts of `tx` in the journal.
fn receipts_of(m: &Machine, tx: u64) -> Vec<Receipt> {
    let mut out = Vec::new();
    m.journal
        .dump(DumpFilter::new().with_tx(tx), |e| {
            if let Some(DumpDetail::Receipt(r)) = e.detail {
                out.push(r);
            }
            Ok(true)
        })
        .unwrap();
    out
}

/// A rollback whose created directory `gen/` is kept (someone put a file in it) and that
/// recovery completes after a cut: its receipt must name only the directories removed
/// from the workspace's filesystem — the one the journal was opened with.
#[test]
fn a_rollback_completed_by_recovery_names_only_the_dirs_it_removed() {
    let keep = |m: &Machine, tx: u64| {
        commit_uncut(m, tx);
        m.fs.put_file("gen/keep.txt", b"not the batch's\n", 0o644);
        m.fs.sync_all();
    };
    let base = baseline(keep, rollback);
    assert!(base.post.contains_key("gen/keep.txt") && !base.post.contains_key("gen/deep"));
    // The first journal sync after the last directory fsync: the completion record's.
    let last_dir_sync = base
        .syncs
        .iter()
        .rposition(|s| s.starts_with("fsync dir"))
        .expect("the rollback syncs directories");
    let k = base.syncs[last_dir_sync..]
        .iter()
        .position(|s| s == "journal sync_data")
        .map(|i| (last_dir_sync + i + 1) as u64)
        .expect("a journal sync after the directory fsyncs");

    let (m, tx) = Machine::new();
    keep(&m, tx);
    m.power.cut_at(m.power.syncs() + k);
    assert!(!rollback(&m, tx));
    let m = m.reboot();
    assert_eq!(m.tree(), base.post);
    let rbs = m.rollbacks_of(tx);
    assert_eq!(rbs.len(), 1);
    let receipts = receipts_of(&m, rbs[0].0);
    assert_eq!(receipts.len(), 1, "{receipts:?}");
    assert!(receipts[0].by_recovery);
    assert_eq!(
        receipts[0].removed_dirs,
        vec!["gen/deep".to_string()],
        "gen/ is still there (it holds gen/keep.txt): {:?}",
        m.tree().get("gen")
    );
}

/// The seam the whole file stands on: `OpenOptions::journal_backend` accepts a backend
/// that implements every byte-range lock redb's `MultiWriter` mode asks for.
#[test]
fn a_journal_opens_on_a_crash_backend() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let fs = CrashFs::new(&root);
    let backend = CrashBackend::new(fs.power());
    let opened = Journal::init_with(
        &root,
        OpenOptions::default()
            .with_fs(Arc::new(fs))
            .with_journal_backend(Box::new(backend)),
    );
    if let Err(e) = opened {
        panic!("Journal::init_with on a CrashBackend failed: {e} ({e:?})");
    }
}

/// The model itself: what is not synced is gone after a cut.
#[test]
fn crashfs_drops_what_was_not_synced() {
    use std::io::ErrorKind;
    use ultra_edit::fs::{EntryKind, FileSystem, RelPath};

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let fs = CrashFs::new(&root);
    fs.put_file("a/f.txt", b"one", 0o644);
    fs.sync_all();
    let p = |rel: &str| RelPath::parse(rel).unwrap();
    let mode = |mode| ultra_edit::FileMeta {
        mode,
        owner: None,
        xattrs: None,
    };
    let none = ultra_edit::Xattrs::default();

    // A synced file whose directory was not synced: gone after a cut.
    fs.write_synced(&p("a/new.txt"), b"new", &mode(0o600), &none)
        .unwrap();
    assert_eq!(fs.read(&p("a/new.txt")).unwrap(), b"new");
    assert!(!fs.durable_tree().contains_key("a/new.txt"));
    // A rename and an unlink: volatile until the dir is synced.
    fs.write_synced(&p("a/.tmp"), b"two", &mode(0o640), &none)
        .unwrap();
    fs.rename(&p("a/.tmp"), &p("a/f.txt")).unwrap();
    assert_eq!(fs.read(&p("a/f.txt")).unwrap(), b"two");
    let durable = fs.durable_image();
    assert_eq!(durable.read(&p("a/f.txt")).unwrap(), b"one");
    assert_eq!(durable.entry(&p("a/.tmp")).unwrap(), EntryKind::Absent);
    fs.sync_dir(&p("a")).unwrap();
    let durable = fs.durable_tree();
    assert!(matches!(
        durable.get("a/f.txt"),
        Some(TreeEntry::File { bytes, mode: 0o640, .. }) if bytes == b"two"
    ));
    assert!(durable.contains_key("a/new.txt"));

    // A new directory needs its parent synced, its entries need itself synced.
    fs.create_dir(&p("b")).unwrap();
    fs.create_dir(&p("b/c")).unwrap();
    fs.write_synced(&p("b/c/x"), b"x", &mode(0o644), &none)
        .unwrap();
    fs.sync_dir(&p("b/c")).unwrap();
    fs.sync_dir(&p("b")).unwrap();
    assert!(!fs.durable_tree().contains_key("b"), "root not synced yet");
    fs.sync_dir(&RelPath::root()).unwrap();
    assert!(fs.durable_tree().contains_key("b/c/x"));

    // POSIX errors.
    let kind = |r: std::io::Result<()>| r.unwrap_err().kind();
    assert_eq!(kind(fs.create_dir(&p("b"))), ErrorKind::AlreadyExists);
    assert_eq!(kind(fs.create_dir(&p("z/y"))), ErrorKind::NotFound);
    assert_eq!(kind(fs.remove_dir(&p("b"))), ErrorKind::DirectoryNotEmpty);
    assert_eq!(kind(fs.remove_dir(&p("nope"))), ErrorKind::NotFound);
    assert_eq!(kind(fs.remove_dir(&p("a/f.txt"))), ErrorKind::NotADirectory);
    assert_eq!(kind(fs.remove_file(&p("nope"))), ErrorKind::NotFound);
    assert_eq!(
        kind(fs.write_synced(&p("a/f.txt"), b"", &mode(0o644), &none)),
        ErrorKind::AlreadyExists
    );
    assert_eq!(kind(fs.rename(&p("nope"), &p("a/q"))), ErrorKind::NotFound);
    assert_eq!(fs.entry(&p("nope/deeper")).unwrap(), EntryKind::Absent);
    assert_eq!(fs.entry(&p("b")).unwrap(), EntryKind::Dir);
    assert_eq!(
        fs.entry(&p("a/f.txt")).unwrap(),
        EntryKind::File {
            links: 1,
            mode: 0o640,
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
        }
    );
    fs.remove_file(&p("b/c/x")).unwrap();
    fs.remove_dir(&p("b/c")).unwrap();
    assert!(fs.tree().contains_key("b") && !fs.tree().contains_key("b/c"));

    // The cut: the k-th sync does not happen, and nothing works after it.
    let power = fs.power();
    let backend = CrashBackend::new(power.clone());
    power.cut_at(power.syncs() + 1);
    assert_eq!(
        fs.sync_dir(&p("b")).unwrap_err().raw_os_error(),
        Some(5),
        "EIO"
    );
    assert!(power.is_cut());
    assert!(fs.entry(&p("a")).is_err());
    assert!(redb::StorageBackend::len(&backend).is_err());
    assert!(
        fs.durable_tree().contains_key("b/c"),
        "the cut sync_dir did not happen"
    );
    let (fs2, _) = durable_images(&fs, &backend);
    assert!(fs2.entry(&p("b/c")).unwrap() == EntryKind::Dir);
}

/// A cut at every sync of `init` (issue 29 item 2): what survives is either no journal
/// (the next `init` makes one) or a working one, never a half-made journal that every
/// command refuses. On the twin the journal is the backend's durable bytes; the state
/// directory's own files are the real disk's (`init`'s moves of the file are proved in
/// `tests/it/fidelity_init.rs`).
#[test]
fn a_cut_at_each_sync_of_init_leaves_no_journal_or_a_working_one() {
    let mut cuts = 0;
    for k in 1..=40u64 {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let fs = CrashFs::new(&root);
        let power = fs.power();
        let backend = CrashBackend::new(power.clone());
        power.cut_at(k);
        let opts = OpenOptions::default()
            .with_fs(Arc::new(fs))
            .with_journal_backend(Box::new(backend.clone()));
        let first = Journal::init_with(&root, opts);
        if !power.is_cut() {
            assert!(first.is_ok(), "k={k}: {:?}", first.err());
            break; // k is past init's last sync
        }
        drop(first);
        cuts += 1;
        let image = backend.durable_image();
        let len = image.durable_len();
        // The next init (or open) on what survived works, and holds a usable journal.
        let fs = Arc::new(CrashFs::new(&root));
        let j = Journal::init_with(
            &root,
            OpenOptions::default()
                .with_fs(fs.clone())
                .with_journal_backend(Box::new(image)),
        )
        .unwrap_or_else(|e| {
            panic!(
                "k={k} ({len} durable bytes; {:?}): init after the cut: {e}",
                power.log()
            )
        });
        assert_eq!(j.log(None).unwrap().len(), 0, "k={k}");
        fs.put_file("f.txt", b"a\n", 0o644);
        fs.sync_all();
        let p = j
            .preview(&plan(
                r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"b\n"}]}"#,
            ))
            .unwrap();
        j.commit(p.tx, Default::default()).unwrap();
        j.flush().unwrap();
        assert!(j.verify().unwrap().ok, "k={k}");
    }
    assert!(cuts >= 3, "only {cuts} syncs in init");
}
