//! `resolve TX [PATH]`: the candidates go to an editor, the saved files become a new
//! revision (the library's [`Journal::resolvable`] and [`Journal::resolve`]).
//!
//! The editor is `$VISUAL`, else `$EDITOR`, else `vi`, run as git runs it:
//! `sh -c '<editor> "$@"' <editor> FILE…`, so that an editor with arguments
//! (`code --wait`) works. The files are copies in a private temporary directory
//! (mode 0700) under their root-relative paths. Under `--json` the editor's standard
//! output goes to standard error, so that standard output stays one JSON object.
//!
//! The directory is removed once its files are recorded, or when the editor changed
//! nothing. When nothing could be recorded although the editor changed a file
//! (conflict markers left, the editor failed, the revision moved on), the directory is
//! kept and a note names it: `resolve TX --from DIR` opens those copies again, so an
//! editing session is never lost (as `crontab -e` and `kubectl edit` keep a rejected
//! edit). The directory records which tx and revision its copies were made from
//! ([`KEPT_MARK`]), so `--from` cannot record them over another revision.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ultra_edit::{
    Error, IoError, Journal, Resolvable, ResolveError, ResolveOptions, Result, STATE_DIR,
};

use crate::cli::render::{self, Out};

/// The file in an editing directory that says which tx and revision its copies come
/// from: `tx N\nrevision R\n`. Under `.ultra-edit/`, a path no plan may name, so it
/// never collides with a copy.
const KEPT_MARK: &str = "resolve";

pub(super) fn resolve(
    out: &Out,
    j: &Journal,
    tx: ultra_edit::TxRef,
    path: Option<&str>,
    force: bool,
    from: Option<&Path>,
    check: Option<&ultra_edit::sandbox::CheckOptions>,
) -> Result<i32> {
    let tx = j.tx_number(tx)?;
    let offered = j.resolvable(tx, path)?;
    usable_editor()?;
    let dir = match from {
        Some(dir) => EditDir::reopen(dir, &offered)?,
        None => EditDir::create(&offered)?,
    };
    let copies: Vec<PathBuf> = offered
        .files
        .iter()
        .map(|f| dir.path.join(&f.path))
        .collect();
    let recorded = run_editor(&copies, out.is_json())
        .and_then(|()| read_copies(&offered, &copies))
        .and_then(|edited| {
            let opts = ResolveOptions::new().with_force(force);
            match check {
                Some(check) => j.resolve_checked(tx, offered.revision, &edited, opts, check),
                None => j.resolve(tx, offered.revision, &edited, opts),
            }
        });
    match recorded {
        Ok(p) => {
            dir.remove();
            super::tx::previewed(out, &p)
        }
        Err(e) => {
            if from.is_some() || dir.edited(&offered, &copies) {
                let shown = dir.path.display();
                render::note_after_error(format!(
                    "your edited files are kept in {shown}; `ultra-edit resolve {tx} --from {shown}` opens them again"
                ));
            } else {
                dir.remove();
            }
            Err(e)
        }
    }
}

/// Each offered file's path and the bytes of its copy after the editor.
fn read_copies(offered: &Resolvable, copies: &[PathBuf]) -> Result<Vec<(String, Vec<u8>)>> {
    offered
        .files
        .iter()
        .zip(copies)
        .map(|(f, copy)| {
            // The copy the editor saved, never what a link there points to: content from
            // elsewhere would be recorded as the file's new revision.
            let kind = match std::fs::symlink_metadata(copy) {
                Ok(kind) => kind,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::Resolve(ResolveError::Editor {
                        editor: editor(),
                        what: format!(
                            "removed {}; resolve records the files the editor saves, never a deletion: save the file again, and to delete it, `ultra-edit revise {}` with a `delete_file` edit once the rest is resolved",
                            copy.display(),
                            offered.tx
                        ),
                    }));
                }
                Err(e) => return Err(io("stat", copy, e)),
            };
            if !kind.is_file() {
                return Err(Error::Resolve(ResolveError::Editor {
                    editor: editor(),
                    what: format!(
                        "left {} as something other than a regular file (a symlink?); resolve records only the files it saved",
                        copy.display()
                    ),
                }));
            }
            let bytes = std::fs::read(copy).map_err(|e| io("read", copy, e))?;
            Ok((f.path.clone(), bytes))
        })
        .collect()
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

/// Refuse, before anything is copied, to fall back on `vi` where no one can use it:
/// neither `$VISUAL` nor `$EDITOR` is set and standard input or output is not a
/// terminal (a script, an agent), where vi would print escape codes and fail or wait.
/// git refuses the same way when its terminal is dumb and `EDITOR` unset.
fn usable_editor() -> Result<()> {
    use std::io::IsTerminal;
    let chosen = ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(std::env::var_os)
        .any(|v| !v.to_string_lossy().trim().is_empty());
    if chosen || (std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Ok(());
    }
    Err(Error::Resolve(ResolveError::Editor {
        editor: "vi".into(),
        what: "was not started: $VISUAL and $EDITOR are unset and this is not a terminal; set EDITOR to an editor that waits for its window to close (EDITOR='code --wait'), or change the candidate with `ultra-edit revise` and a plan".into(),
    }))
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

/// The directory of copies the editor works on.
struct EditDir {
    path: PathBuf,
}

impl EditDir {
    /// A new private directory (mode 0700) in the temp dir holding a copy of each
    /// offered file and the [`KEPT_MARK`].
    fn create(offered: &Resolvable) -> Result<EditDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "ultra-edit-resolve-{}-{}-{nanos}",
            offered.tx,
            std::process::id()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| io("mkdir", &path, e))?;
        let dir = EditDir { path };
        let written = dir.write_mark(offered).and_then(|()| {
            offered.files.iter().try_for_each(|f| {
                let copy = dir.path.join(&f.path);
                mkdir_parent(&copy)?;
                std::fs::write(&copy, &f.content).map_err(|e| io("write", &copy, e))
            })
        });
        if let Err(e) = written {
            dir.remove();
            return Err(e);
        }
        Ok(dir)
    }

    /// A directory an earlier `resolve` kept: its mark must name this tx and the
    /// revision offered now (the latest), and it must hold a copy of every offered file.
    fn reopen(dir: &Path, offered: &Resolvable) -> Result<EditDir> {
        let unusable = |why: String| {
            Error::Resolve(ResolveError::KeptCopies {
                tx: offered.tx,
                dir: dir.display().to_string(),
                why,
            })
        };
        let mark = std::fs::read_to_string(dir.join(STATE_DIR).join(KEPT_MARK)).map_err(|_| {
            unusable(
                "is not a directory kept by `ultra-edit resolve` (it has no .ultra-edit/resolve)"
                    .into(),
            )
        })?;
        let field = |name: &str| {
            mark.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        match (field("tx "), field("revision ")) {
            (Some(tx), _) if tx != offered.tx => {
                return Err(unusable(format!("holds copies of tx {tx}")))
            }
            (Some(_), Some(rev)) if rev != u64::from(offered.revision) => {
                return Err(unusable(format!(
                    "holds copies of revision {rev}, but the latest is revision {}: copy what you need from it and run `ultra-edit resolve {}` again",
                    offered.revision, offered.tx
                )))
            }
            (Some(_), Some(_)) => {}
            _ => return Err(unusable("has a damaged .ultra-edit/resolve".into())),
        }
        if let Some(f) = offered.files.iter().find(|f| !dir.join(&f.path).is_file()) {
            return Err(unusable(format!(
                "has no copy of {}: name the same files as the resolve that kept it",
                f.path
            )));
        }
        Ok(EditDir {
            path: dir.to_path_buf(),
        })
    }

    fn write_mark(&self, offered: &Resolvable) -> Result<()> {
        let mark = self.path.join(STATE_DIR).join(KEPT_MARK);
        mkdir_parent(&mark)?;
        let text = format!("tx {}\nrevision {}\n", offered.tx, offered.revision);
        std::fs::write(&mark, text).map_err(|e| io("write", &mark, e))
    }

    /// Whether any copy now differs from what was offered (or cannot be read).
    fn edited(&self, offered: &Resolvable, copies: &[PathBuf]) -> bool {
        offered
            .files
            .iter()
            .zip(copies)
            .any(|(f, copy)| std::fs::read(copy).map_or(true, |b| b != f.content))
    }

    fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn mkdir_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent).map_err(|e| io("mkdir", parent, e)),
        None => Ok(()),
    }
}

fn io(op: &'static str, path: &Path, source: std::io::Error) -> Error {
    Error::Io(IoError {
        op,
        path: path.to_path_buf(),
        source,
    })
}
