//! m1nd's edit handlers over a [`Registry`]: the host keeps one registry in its runtime
//! directory and asks it for the journal of a file's root (`open_or_create`) or of a
//! preview id (`journal_of`), instead of opening, hashing and routing journals itself
//! (docs/embedding.md, "A registry of roots"). Several roots, a restart between
//! preview and commit, a handle from elsewhere, expiry through the injectable clock,
//! and what the index records — every test asserts exact values.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tempfile::TempDir;
use ultra_edit::registry::{INDEX_FILE, ROOTS_DIR};
use ultra_edit::{
    CommitOptions, Error, Journal, KnownRoot, ManualClock, OpenOptions, Plan, Policy, Registry,
    TxHandle,
};

/// m1nd's preview lifetime: five minutes.
const TTL: Duration = Duration::from_secs(5 * 60);
/// 2026-12-01T00:00:00Z.
const T0: u64 = 1_796_083_200_000;

// ---- the handler layer: what m1nd writes --------------------------------------------

/// A refusal as m1nd reports it: its kind and the library's message.
#[derive(Debug, PartialEq)]
struct Refused {
    kind: String,
    message: String,
}

impl From<Error> for Refused {
    fn from(e: Error) -> Self {
        let kind = match &e {
            Error::StaleSnapshot { .. } => "source_modified".into(),
            Error::UnknownTx { .. } | Error::UnknownJournal { .. } => "preview_not_found".into(),
            other => other.kind().to_string(),
        };
        Refused {
            kind,
            message: e.to_string(),
        }
    }
}

/// m1nd's state as far as edits go: its ingest roots and one registry.
struct Host {
    roots: Vec<PathBuf>,
    registry: Registry,
}

impl Host {
    fn new(roots: &[PathBuf], runtime: &Path, clock: &ManualClock) -> Host {
        let clock = clock.clone();
        let registry = Registry::with_options(runtime.join("ultra-edit"), move || {
            OpenOptions::default()
                .with_clock(Arc::new(clock.clone()))
                .with_max_preview_age(TTL)
                .with_policy(Policy::permissive())
        })
        .unwrap();
        Host {
            roots: roots.to_vec(),
            registry,
        }
    }

    /// `edit_preview`: the journal of the root that holds the file, created on first
    /// use. Returns the preview id.
    fn edit_preview(&self, file_path: &str, new_content: &str) -> Result<String, Refused> {
        let root = self
            .roots
            .iter()
            .find(|r| Path::new(file_path).starts_with(r))
            .ok_or_else(|| Refused {
                kind: "outside_roots".into(),
                message: file_path.into(),
            })?;
        let j = self.registry.open_or_create(root)?;
        let plan = Plan::new().agent("dev").write_file(file_path, new_content);
        Ok(j.preview(&plan)?.handle.to_string())
    }

    /// `edit_commit`: the journal the preview id names. Returns the absolute paths to
    /// re-ingest.
    fn edit_commit(&self, preview_id: &str) -> Result<Vec<PathBuf>, Refused> {
        let handle: TxHandle = preview_id
            .parse()
            .map_err(|e: ultra_edit::HandleParseError| Refused {
                kind: "preview_not_found".into(),
                message: e.to_string(),
            })?;
        let j = self.registry.journal_of(&handle)?;
        let receipt = j.commit(handle, CommitOptions::default())?;
        Ok(j.touched(&receipt)
            .into_iter()
            .map(|t| t.absolute)
            .collect())
    }

    /// `apply_batch` (atomic): one plan in the journal of the first file's root,
    /// previewed and committed. Returns the number of files written.
    fn apply_batch(&self, edits: &[(&str, &str)]) -> Result<usize, Refused> {
        let root = self
            .roots
            .iter()
            .find(|r| Path::new(edits[0].0).starts_with(r))
            .ok_or_else(|| Refused {
                kind: "outside_roots".into(),
                message: edits[0].0.into(),
            })?;
        let j = self.registry.open_or_create(root)?;
        let plan = edits
            .iter()
            .fold(Plan::new().agent("dev"), |p, (f, c)| p.write_file(*f, *c));
        let p = j.preview(&plan)?;
        Ok(j.commit(p.handle, CommitOptions::default())?.files.len())
    }
}

// ---- fixtures -----------------------------------------------------------------------

struct World {
    dirs: Vec<TempDir>,
    runtime: TempDir,
    clock: ManualClock,
    host: Host,
}

impl World {
    fn new(n: usize) -> World {
        let dirs: Vec<TempDir> = (0..n).map(|_| tempfile::tempdir().unwrap()).collect();
        let runtime = tempfile::tempdir().unwrap();
        let clock = ManualClock::at(T0);
        let roots: Vec<PathBuf> = dirs
            .iter()
            .map(|d| d.path().canonicalize().unwrap())
            .collect();
        let host = Host::new(&roots, runtime.path(), &clock);
        World {
            dirs,
            runtime,
            clock,
            host,
        }
    }

    fn root(&self, i: usize) -> PathBuf {
        self.dirs[i].path().canonicalize().unwrap()
    }

    fn path(&self, i: usize, rel: &str) -> String {
        self.root(i).join(rel).display().to_string()
    }

    fn read(&self, i: usize, rel: &str) -> Option<String> {
        fs::read_to_string(self.root(i).join(rel)).ok()
    }

    fn host_dir(&self) -> PathBuf {
        self.runtime
            .path()
            .canonicalize()
            .unwrap()
            .join("ultra-edit")
    }

    /// The host restarts: a new registry over the same runtime directory.
    fn restart(&mut self) {
        let roots = self.host.roots.clone();
        self.host = Host::new(&roots, self.runtime.path(), &self.clock);
    }
}

fn state_dir_of(host_dir: &Path, root: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    host_dir
        .join(ROOTS_DIR)
        .join(blake3::hash(root.as_os_str().as_bytes()).to_hex().as_str())
}

// ---- the tests ----------------------------------------------------------------------

#[test]
fn registry_routes_each_preview_id_of_several_roots_to_its_journal() {
    let w = World::new(3);
    let a = w.host.edit_preview(&w.path(0, "a.txt"), "in a\n").unwrap();
    let b = w.host.edit_preview(&w.path(1, "b.txt"), "in b\n").unwrap();
    // Both journals mint tx 1; the ids tell them apart.
    assert!(a.ends_with("-1") && b.ends_with("-1"), "{a} {b}");
    assert_ne!(a, b);
    assert_eq!(w.host.edit_commit(&b).unwrap(), [w.root(1).join("b.txt")]);
    assert_eq!(w.read(1, "b.txt").as_deref(), Some("in b\n"));
    assert_eq!(w.read(0, "a.txt"), None, "a's preview is not committed");
    assert_eq!(w.host.edit_commit(&a).unwrap(), [w.root(0).join("a.txt")]);
    assert_eq!(w.read(0, "a.txt").as_deref(), Some("in a\n"));

    // The index lists the two roots edited, each with the state directory of the
    // documented rule and its journal id; the third root was never touched.
    let host_dir = w.host_dir();
    let ja = w.host.registry.open_if_exists(w.root(0)).unwrap().unwrap();
    let jb = w.host.registry.open_if_exists(w.root(1)).unwrap().unwrap();
    let mut want = vec![
        (w.root(0), state_dir_of(&host_dir, &w.root(0)), ja.id()),
        (w.root(1), state_dir_of(&host_dir, &w.root(1)), jb.id()),
    ];
    want.sort();
    let known: Vec<_> = w
        .host
        .registry
        .roots()
        .unwrap()
        .into_iter()
        .map(|k: KnownRoot| (k.root, k.state_dir, k.journal))
        .collect();
    assert_eq!(known, want);
    assert_eq!(format!("{}-1", ja.id()), a);
    assert!(ja.state_dir().join("journal.redb").is_file());
    assert!(w.host.registry.open_if_exists(w.root(2)).unwrap().is_none());
    assert!(!state_dir_of(&host_dir, &w.root(2)).exists());
    assert!(!w.root(2).join(".ultra-edit").exists());
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(host_dir.join(INDEX_FILE)).unwrap()).unwrap();
    assert_eq!(index["version"], 1);
    assert_eq!(index["roots"].as_array().unwrap().len(), 2);
    assert!(!host_dir.join("index.json.new").exists());
}

#[test]
fn registry_a_restart_between_preview_and_commit_opens_only_the_root_the_id_names() {
    let mut w = World::new(2);
    let a = w.host.edit_preview(&w.path(0, "a.txt"), "a\n").unwrap();
    let b = w.host.edit_preview(&w.path(1, "b.txt"), "b\n").unwrap();
    w.restart();
    assert_eq!(w.host.registry.opened(), Vec::<PathBuf>::new());
    assert_eq!(w.host.edit_commit(&b).unwrap(), [w.root(1).join("b.txt")]);
    // Routing opened root 1's journal only.
    assert_eq!(w.host.registry.opened(), [w.root(1)]);
    assert_eq!(w.read(1, "b.txt").as_deref(), Some("b\n"));
    assert_eq!(w.host.edit_commit(&a).unwrap(), [w.root(0).join("a.txt")]);
    assert_eq!(w.host.registry.opened().len(), 2);
}

#[test]
fn registry_a_handle_of_a_journal_it_does_not_know_is_refused_and_opens_nothing() {
    let w = World::new(2);
    w.host.edit_preview(&w.path(0, "a.txt"), "a\n").unwrap();
    // A journal of root 1 that the host's registry never opened (the CLI's own).
    let other = Journal::init(&w.root(1)).unwrap();
    let p = other.preview(&Plan::new().create_file("x", "x\n")).unwrap();
    let id = p.handle.to_string();
    let err = w.host.edit_commit(&id).unwrap_err();
    assert_eq!(err.kind, "preview_not_found");
    let Err(e) = w.host.registry.journal_of(&p.handle) else {
        panic!("routed a handle of an unknown journal")
    };
    assert_eq!(e.kind(), "unknown_journal");
    assert_eq!(e.next_step(), Some(ultra_edit::NextStep::PreviewAgain));
    assert!(
        matches!(&e, Error::UnknownJournal { handle, registry } if *handle == p.handle && *registry == w.host_dir()),
        "{e:?}"
    );
    assert_eq!(w.host.registry.opened(), [w.root(0)]);
    assert_eq!(w.read(1, "x"), None);
    // Not a handle at all.
    assert_eq!(
        w.host.edit_commit("nope").unwrap_err().kind,
        "preview_not_found"
    );
}

#[test]
fn registry_expiry_comes_from_the_injected_clock() {
    let w = World::new(1);
    let id = w.host.edit_preview(&w.path(0, "a.txt"), "a\n").unwrap();
    w.clock.advance(TTL + Duration::from_millis(1));
    let err = w.host.edit_commit(&id).unwrap_err();
    assert_eq!(err.kind, "preview_expired");
    assert_eq!(w.read(0, "a.txt"), None);
}

#[test]
fn registry_uses_the_roots_own_journal_when_it_has_one() {
    let w = World::new(1);
    let own = Journal::init(&w.root(0)).unwrap();
    let own_id = own.id();
    drop(own);
    let j = w.host.registry.open_or_create(w.root(0)).unwrap();
    assert_eq!(j.id(), own_id);
    assert_eq!(j.state_dir(), w.root(0).join(".ultra-edit"));
    assert!(!state_dir_of(&w.host_dir(), &w.root(0)).exists());
    assert_eq!(
        w.host.registry.roots().unwrap()[0].state_dir,
        w.root(0).join(".ultra-edit")
    );
}

#[test]
fn registry_inside_the_root_keeps_the_journal_in_the_roots_own_state_dir() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry = Registry::open(root.join("var/host")).unwrap();
    let j = registry.open_or_create(&root).unwrap();
    assert_eq!(j.state_dir(), root.join(".ultra-edit"));
    assert!(!root.join("var/host").join(ROOTS_DIR).exists());
    assert_eq!(
        registry.roots().unwrap()[0].state_dir,
        root.join(".ultra-edit")
    );
}

/// A damaged index is rebuilt from `H/roots/` (each journal's recorded root and id),
/// the damaged file kept beside it and a note saying so; handles made before route
/// again, through a restarted host, without a preview again.
#[test]
fn registry_a_damaged_index_is_rebuilt_from_the_roots_directory_with_a_note() {
    let mut w = World::new(2);
    let a = w.host.edit_preview(&w.path(0, "a.txt"), "a\n").unwrap();
    let b = w.host.edit_preview(&w.path(1, "b.txt"), "b\n").unwrap();
    let before = w.host.registry.roots().unwrap();
    assert_eq!(before.len(), 2);
    // A state directory under roots/ that is not a journal's is skipped silently.
    fs::create_dir_all(w.host_dir().join(ROOTS_DIR).join("stray")).unwrap();
    fs::write(w.host_dir().join(INDEX_FILE), b"{not json").unwrap();
    w.restart();
    assert_eq!(w.host.registry.notes(), Vec::<String>::new());
    // The first read of the index rebuilds it.
    assert_eq!(w.host.registry.roots().unwrap(), before);
    assert_eq!(
        fs::read(w.host_dir().join("index.json.damaged")).unwrap(),
        b"{not json"
    );
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(w.host_dir().join(INDEX_FILE)).unwrap()).unwrap();
    assert_eq!(index["version"], 1);
    assert_eq!(index["roots"].as_array().unwrap().len(), 2);
    let notes = w.host.registry.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let want = format!(
        "the registry's index {} was damaged (key must be a string at line 1 column 2): moved to {} and rebuilt from {} with 2 root(s); roots whose journal is in their own .ultra-edit/ are recorded again when next opened",
        w.host_dir().join(INDEX_FILE).display(),
        w.host_dir().join("index.json.damaged").display(),
        w.host_dir().join(ROOTS_DIR).display(),
    );
    assert_eq!(notes[0], want);
    // Handles made before the damage route to their journals.
    assert_eq!(w.host.edit_commit(&b).unwrap(), [w.root(1).join("b.txt")]);
    assert_eq!(w.host.edit_commit(&a).unwrap(), [w.root(0).join("a.txt")]);
    assert_eq!(w.read(0, "a.txt").as_deref(), Some("a\n"));
    assert_eq!(w.read(1, "b.txt").as_deref(), Some("b\n"));
    // Read again: no second rebuild.
    assert_eq!(w.host.registry.roots().unwrap(), before);
    assert_eq!(w.host.registry.notes().len(), 1);
}

/// An index written by another version is refused, not rebuilt: rebuilding would drop
/// what that version recorded.
#[test]
fn registry_an_index_of_another_version_is_a_typed_error_that_changes_nothing() {
    let w = World::new(1);
    fs::create_dir_all(w.host_dir()).unwrap();
    let other = br#"{"version":9,"roots":[]}"#;
    fs::write(w.host_dir().join(INDEX_FILE), other).unwrap();
    let Err(e) = w.host.registry.open_or_create(w.root(0)) else {
        panic!("opened a root through an index of another version")
    };
    assert_eq!(e.kind(), "registry");
    assert!(
        e.to_string()
            .contains("its index is version 9, and this version reads version 1"),
        "{e}"
    );
    assert_eq!(fs::read(w.host_dir().join(INDEX_FILE)).unwrap(), other);
    assert!(!w.host_dir().join(ROOTS_DIR).exists());
}

/// One root, one journal: the registry's journal (in the host directory) and a second
/// journal over the same root (another state directory, driven by the `ultra-edit`
/// binary in another process) never run batches side by side. While the CLI holds
/// its commit lock, paused inside its batch, the host's commit waits for the root's
/// lock and times out naming the root and the CLI's pid, writing nothing; once the CLI
/// is gone, the host's commit goes through.
#[cfg(feature = "failpoints")]
#[test]
fn registry_a_second_journal_over_the_root_cannot_commit_beside_it() {
    use std::process::{Command, Stdio};
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let registry = Registry::with_options(runtime.path().join("host"), || {
        OpenOptions::default().with_lock_timeout(Duration::from_millis(300))
    })
    .unwrap();
    let host = registry.open_or_create(&root).unwrap();
    let mine = host
        .preview(&Plan::new().create_file("host.txt", "host\n"))
        .unwrap();

    // The second journal: another state directory over the same root.
    let second_dir = runtime.path().join("second");
    let second = Journal::init_with(
        &root,
        OpenOptions::default().with_state_dir(second_dir.clone()),
    )
    .unwrap();
    assert_ne!(second.id(), host.id());
    let theirs = second
        .preview(&Plan::new().create_file("cli.txt", "cli\n"))
        .unwrap();
    drop(second);
    let mut cli = Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
        .arg("--root")
        .arg(&root)
        .arg("--state-dir")
        .arg(&second_dir)
        .args(["commit", &theirs.handle.to_string()])
        .env("FAILPOINTS", "batch::after_lock=sleep(30000)")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = cli.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(second_dir.join("commit.lock"))
        .unwrap_or_default()
        .trim()
        != pid.to_string()
    {
        if Instant::now() >= deadline {
            let _ = cli.kill();
            let _ = cli.wait();
            panic!("the CLI never took its commit lock");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let result = host.commit(mine.handle, CommitOptions::default());
    let _ = cli.kill();
    let _ = cli.wait();
    match result {
        Err(Error::LockTimeout { path, holder, .. }) => {
            assert_eq!(path, root);
            assert_eq!(holder, Some(pid));
        }
        other => panic!("expected LockTimeout on the root, got {other:?}"),
    }
    assert!(!root.join("host.txt").exists());
    assert!(!root.join("cli.txt").exists());
    // The holder is gone: the host's commit goes through.
    let receipt = host.commit(mine.handle, CommitOptions::default()).unwrap();
    assert_eq!(receipt.files.len(), 1);
    assert_eq!(fs::read(root.join("host.txt")).unwrap(), b"host\n");
}

#[test]
fn registry_apply_batch_lands_in_one_root_and_a_batch_across_roots_is_refused_whole() {
    let w = World::new(2);
    let (a, c) = (w.path(0, "a.txt"), w.path(0, "sub/c.txt"));
    assert_eq!(w.host.apply_batch(&[(&a, "a\n"), (&c, "c\n")]), Ok(2));
    assert_eq!(w.read(0, "a.txt").as_deref(), Some("a\n"));
    assert_eq!(w.read(0, "sub/c.txt").as_deref(), Some("c\n"));
    // A file of root 1 in root 0's batch: refused whole, nothing written anywhere.
    let b = w.path(1, "b.txt");
    let err = w
        .host
        .apply_batch(&[(&a, "a2\n"), (&b, "b\n")])
        .unwrap_err();
    assert_eq!(err.kind, "path_refused");
    assert_eq!(w.read(0, "a.txt").as_deref(), Some("a\n"));
    assert_eq!(w.read(1, "b.txt"), None);
    assert_eq!(w.host.registry.opened(), [w.root(0)]);
}

/// `Registry::open_or_create_for`: the journal of the deepest root holding a file, as
/// a host routes an agent's file path; a file in no root is a typed refusal that opens
/// nothing.
#[test]
fn registry_routes_a_file_to_the_deepest_root_that_holds_it() {
    let outer = tempfile::tempdir().unwrap();
    let outer_root = outer.path().canonicalize().unwrap();
    let inner_root = outer_root.join("inner");
    fs::create_dir(&inner_root).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let registry = Registry::open(runtime.path().join("ultra-edit")).unwrap();
    let roots = [outer_root.clone(), inner_root.clone()];

    let j = registry
        .open_or_create_for(inner_root.join("src/lib.rs"), &roots)
        .unwrap();
    assert_eq!(j.root(), inner_root.as_path());
    let j = registry
        .open_or_create_for(outer_root.join("a.txt"), roots.iter().rev())
        .unwrap();
    assert_eq!(j.root(), outer_root.as_path());

    let stray = elsewhere.path().join("x.txt");
    match registry.open_or_create_for(&stray, &roots) {
        Err(Error::Registry { path, reason }) => {
            assert_eq!(path, stray);
            assert_eq!(
                reason,
                "it is in none of the roots given; name a file inside one of them, or add its root"
            );
        }
        Err(other) => panic!("expected Error::Registry, got {other:?}"),
        Ok(j) => panic!(
            "expected Error::Registry, got the journal of {}",
            j.root().display()
        ),
    }
    assert_eq!(registry.opened(), vec![outer_root, inner_root]);
}
