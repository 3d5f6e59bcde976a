//! Shared helpers of the integration tests: workspaces, tree hashes, a fault-injecting
//! filesystem, and the CLI binary.

#![allow(dead_code)]

pub mod crashfs;
pub mod faultfs;
pub mod hooked;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;
use ultra_edit::{Journal, Plan, Preview};

/// A workspace in a temp dir with a small source tree, initialized.
pub struct Ws {
    pub dir: TempDir,
    pub journal: Journal,
}

impl Ws {
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap()
    }
    pub fn write(&self, rel: &str, bytes: &[u8]) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    pub fn mode(&self, rel: &str) -> u32 {
        fs::metadata(self.path(rel)).unwrap().permissions().mode() & 0o7777
    }
    pub fn preview(&self, json: &str) -> Preview {
        self.journal.preview(&plan(json)).unwrap()
    }
    pub fn tree(&self) -> BTreeMap<String, String> {
        tree_state(self.root())
    }
}

/// A second handle on `ws`'s journal whose filesystem is the twin `fs`.
pub fn faulty(ws: &Ws, fs: faultfs::FaultFs) -> Journal {
    let opts =
        ultra_edit::OpenOptions::default().with_fs(std::sync::Arc::new(fs.beneath(ws.root())));
    Journal::open_with(ws.root(), opts).unwrap()
}

/// The fixed tree every test starts from.
pub fn sample_files() -> Vec<(&'static str, &'static [u8], u32)> {
    vec![
        (
            "src/lib.rs",
            b"pub mod a;\npub mod b;\n\nfn helper() -> u32 {\n    1\n}\n",
            0o644,
        ),
        (
            "src/a.rs",
            b"pub fn a() -> u32 {\n    crate::helper()\n}\n",
            0o644,
        ),
        ("src/b.rs", b"pub fn b() -> u32 {\n    2\n}\n", 0o600),
        ("run.sh", b"#!/bin/sh\necho hi\n", 0o755),
        ("crlf.txt", b"one\r\ntwo\r\nthree\r\n", 0o644),
        ("README.md", b"# sample\n\nNo trailing newline", 0o644),
    ]
}

/// A new initialized workspace holding [`sample_files`].
pub fn workspace() -> Ws {
    workspace_in(tempfile::tempdir().unwrap())
}

/// [`workspace`] in a given (empty) directory.
pub fn workspace_in(dir: TempDir) -> Ws {
    for (rel, bytes, mode) in sample_files() {
        let p = dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, bytes).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
    let journal = Journal::init(dir.path()).unwrap();
    Ws { dir, journal }
}

pub fn plan(json: &str) -> Plan {
    Plan::from_json(json.as_bytes()).unwrap()
}

/// Every entry under `root` except `.ultra-edit/`: files as `blake3 mode`, directories
/// as `dir mode`, symlinks as `link -> target`. Two equal maps are byte-identical trees.
pub fn tree_state(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel == ".ultra-edit" {
            continue;
        }
        let md = fs::symlink_metadata(&p).unwrap();
        let mode = md.permissions().mode() & 0o7777;
        if md.file_type().is_symlink() {
            out.insert(
                rel,
                format!("link -> {}", fs::read_link(&p).unwrap().display()),
            );
        } else if md.is_dir() {
            out.insert(rel, format!("dir {mode:o}"));
            walk(root, &p, out);
        } else {
            let h = blake3::hash(&fs::read(&p).unwrap());
            out.insert(rel, format!("{} {mode:o}", h.to_hex()));
        }
    }
}

/// Run the `ultra-edit` binary with `--root root` and `args`, feeding `stdin`.
pub fn cli(root: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultra-edit"));
    cmd.arg("--root").arg(root).args(args).env("NO_COLOR", "1");
    output_with_stdin(cmd, stdin.unwrap_or(""))
}

/// The `ultra-edit` binary on `root` with `args`: no stdin, output piped, and no
/// `FAILPOINTS` inherited (callers that inject faults set it).
pub fn ue_command(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultra-edit"));
    cmd.arg("--root")
        .arg(root)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .env_remove("FAILPOINTS");
    cmd
}

/// Run `ultra-edit` on `root`, with `FAILPOINTS` set when given.
pub fn run_ue(root: &Path, args: &[&str], failpoints: Option<&str>) -> Output {
    let mut cmd = ue_command(root, args);
    if let Some(f) = failpoints {
        cmd.env("FAILPOINTS", f);
    }
    cmd.output().expect("spawn ultra-edit")
}

/// Run `cmd` with `stdin` fed to it, output captured. A command that exits without
/// reading its input (a usage error) may close the pipe first: that broken pipe is
/// not the test's failure, the command's output and status say what happened.
pub fn output_with_stdin(mut cmd: Command, stdin: &str) -> Output {
    use std::io::Write;
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    child.wait_with_output().unwrap()
}

/// Parse the single JSON object a `--json` command printed.
pub fn json_of(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): stdout={text} stderr={}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// An `Output` for an assertion message: exit status, stdout and stderr.
pub fn text(out: &Output) -> String {
    format!(
        "exit {:?}; stdout: {}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Why `flock(1)` (util-linux) cannot be used here, if it cannot: tests that hold the
/// lock with it are skipped with this reason.
pub fn flock_missing() -> Option<String> {
    match Command::new("flock").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("`flock --version` exited {:?}", o.status)),
        Err(e) => Some(format!("flock(1) not runnable: {e}")),
    }
}

/// Copy the tree `from` into the existing directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            fs::create_dir_all(&dst).unwrap();
            copy_dir(&e.path(), &dst);
        } else {
            fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A workspace holding `tests/fixtures/<name>/` (its `workspace/` and `journal.redb`),
/// not yet opened.
pub fn fixture(name: &str) -> TempDir {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture.join("workspace"), dir.path());
    fs::create_dir(dir.path().join(".ultra-edit")).unwrap();
    fs::copy(
        fixture.join("journal.redb"),
        dir.path().join(".ultra-edit/journal.redb"),
    )
    .unwrap();
    dir
}

/// A workspace whose only commit replaced `f.txt`, whose bytes (`original`, long enough
/// to be stored inline and found) then had one byte flipped inside the closed journal
/// file: a damaged blob. Returns the workspace's directory and the tx.
pub fn with_damaged_blob(original: &[u8]) -> (TempDir, u64) {
    let ws = workspace();
    ws.write("f.txt", original);
    let p = ws.preview(r#"{"edits":[{"op":"replace_file","path":"f.txt","content":"new\n"}]}"#);
    ws.journal.commit(p.tx, Default::default()).unwrap();
    let Ws { dir, journal } = ws;
    drop(journal);
    let db = dir.path().join(".ultra-edit/journal.redb");
    let mut bytes = fs::read(&db).unwrap();
    let at = bytes
        .windows(original.len())
        .position(|w| w == original)
        .expect("blob stored inline");
    bytes[at + 9] ^= 0x20;
    fs::write(&db, &bytes).unwrap();
    (dir, p.tx)
}

/// Receipt batches of `tx` recorded in the journal.
pub fn receipts_of(j: &Journal, tx: u64) -> Vec<u64> {
    let mut out = Vec::new();
    j.dump(ultra_edit::DumpFilter::new().with_tx(tx), |e| {
        if let ultra_edit::EventKind::ReceiptIssued { batch, .. } = e.event.kind {
            out.push(batch);
        }
        Ok(true)
    })
    .unwrap();
    out
}
