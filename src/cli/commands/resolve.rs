//! `resolve TX [PATH]`: the candidates go to an editor, the saved files become a new
//! revision (the library's [`Journal::resolvable`] and [`Journal::resolve`]).
//!
//! The editor is `$VISUAL`, else `$EDITOR`, else `vi`, run as git runs it:
//! `sh -c '<editor> "$@"' <editor> FILE…`, so that an editor with arguments
//! (`code --wait`) works. The files are copies in a private temporary directory
//! (mode 0700) under their root-relative paths; it is removed afterwards. Under
//! `--json` the editor's standard output goes to standard error, so that standard
//! output stays one JSON object.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ultra_edit::{Error, IoError, Journal, ResolveError, ResolveOptions, Result};

use crate::cli::render::Out;

pub(super) fn resolve(
    out: &Out,
    j: &Journal,
    tx: ultra_edit::TxRef,
    path: Option<&str>,
    force: bool,
) -> Result<i32> {
    let tx = j.tx_number(tx)?;
    let offered = j.resolvable(tx, path)?;
    let dir = TempDir::create(tx)?;
    let mut copies = Vec::new();
    for f in &offered.files {
        let copy = dir.0.join(&f.path);
        if let Some(parent) = copy.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("mkdir", parent, e))?;
        }
        std::fs::write(&copy, &f.content).map_err(|e| io("write", &copy, e))?;
        copies.push(copy);
    }
    run_editor(&copies, out.is_json())?;
    let mut edited = Vec::new();
    for (f, copy) in offered.files.iter().zip(&copies) {
        let bytes = std::fs::read(copy).map_err(|e| io("read", copy, e))?;
        edited.push((f.path.clone(), bytes));
    }
    let p = j.resolve(tx, offered.revision, &edited, ResolveOptions { force })?;
    super::tx::previewed(out, &p)
}

/// `$VISUAL`, else `$EDITOR`, else `vi` (git's order; an empty variable is skipped).
fn editor() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|v| v.to_string_lossy().into_owned())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into())
}

/// Run the editor on `files` and wait; a failure to start or a non-zero exit is
/// [`ResolveError::Editor`].
fn run_editor(files: &[PathBuf], json: bool) -> Result<()> {
    let editor = editor();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(&editor)
        .args(files);
    if json {
        if let Ok(fd) = std::os::fd::AsFd::as_fd(&std::io::stderr()).try_clone_to_owned() {
            cmd.stdout(Stdio::from(fd));
        }
    }
    let failed = |what: String| {
        Error::Resolve(ResolveError::Editor {
            editor: editor.clone(),
            what,
        })
    };
    let status = cmd
        .status()
        .map_err(|e| failed(format!("could not be started: {e}")))?;
    if !status.success() {
        let what = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".into(),
        };
        return Err(failed(what));
    }
    Ok(())
}

/// A private directory for the copies, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn create(tx: u64) -> Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "ultra-edit-resolve-{tx}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| io("mkdir", &dir, e))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn io(op: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io(IoError {
        op,
        path: path.to_path_buf(),
        source,
    })
}
