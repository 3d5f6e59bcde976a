//! Host-shaped calls on a [`Registry`]: what the edit handlers of an MCP server with
//! several roots (m1nd's `edit_preview`, `apply`, `apply_batch`, `edit_rollback`)
//! call, one line each, instead of routing, planning and committing by hand
//! (docs/embedding.md, "Host calls").
//!
//! Every call takes the files as absolute paths and routes them to the journal of the
//! deepest of the host's roots that holds the first one
//! ([`Registry::open_or_create_for`]); a file of the same call outside that root is
//! refused by the preview, so one call is one transaction of one journal.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, IoContext, Result};
use crate::fs::meta::{BlobHash, FileState};
use crate::handle::TxHandle;
use crate::registry::Registry;
use crate::{CommitOptions, Journal, Plan, Preview, RollbackOptions};

/// What a host call wrote or restored: the transaction and the files it touched.
/// Serialized as `{"tx":"3f9a2c1b7d4e8a60-7","files":["/srv/a/x.rs"]}`, what a host's
/// tool returns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Written {
    /// The transaction's handle: what `edit_rollback` takes back (as text,
    /// `TxHandle::to_string`).
    pub tx: TxHandle,
    /// The absolute paths the batch wrote, created or removed (the canonical root
    /// joined with each root-relative path), in the batch's order (by root-relative
    /// path): what a host re-ingests.
    pub files: Vec<PathBuf>,
}

impl Registry {
    /// The registry in host directory `dir` with every journal it opens under
    /// [`crate::Policy::permissive`]: the preset of a host that writes what its agents
    /// send (m1nd flips all four fields). Errors: those of [`Registry::with_options`].
    pub fn for_host(dir: impl AsRef<Path>) -> Result<Registry> {
        Registry::with_options(dir, || {
            crate::OpenOptions::default().with_policy(crate::Policy::permissive())
        })
    }

    /// Preview writing `files` (absolute path, whole new content in bytes) as one
    /// transaction of `agent` in the journal of the root among `roots` that holds the
    /// first path; nothing on disk changes. Errors: [`Error::Registry`] when `files`
    /// is empty, a path is not UTF-8 or the first is in none of `roots`; those of
    /// [`crate::Journal::preview`] (a path outside that root is refused there).
    pub fn preview_files<R, P, B>(
        &self,
        roots: impl IntoIterator<Item = R>,
        agent: &str,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<Preview>
    where
        R: AsRef<Path>,
        P: AsRef<Path>,
        B: AsRef<[u8]>,
    {
        Ok(self.preview_in(roots, agent, files)?.1)
    }

    /// Write `files` (absolute path, whole new content in bytes) atomically: one
    /// transaction of `agent`, all files or none, recovered after a crash. Without
    /// `expected` it is previewed and committed at once. With `expected` (a preview's
    /// handle as text, from [`Registry::preview_files`]) that preview is committed
    /// instead — its snapshot is the expected base, so a file changed since it was
    /// made is [`Error::StaleSnapshot`] — after checking that it writes exactly
    /// `files`, byte for byte (a file the preview leaves as it is must hold the bytes
    /// given), and no other file. Errors: those of [`Registry::preview_files`] and
    /// [`crate::Journal::commit`]; an `expected` that is not a handle is
    /// [`Error::Registry`] (the parse error in its reason), one of no known journal
    /// [`Error::UnknownJournal`], one that writes other files or bytes
    /// [`Error::PreviewWritesOther`]; nothing is written then.
    pub fn write_files<R, P, B>(
        &self,
        roots: impl IntoIterator<Item = R>,
        agent: &str,
        files: impl IntoIterator<Item = (P, B)>,
        expected: Option<&str>,
    ) -> Result<Written>
    where
        R: AsRef<Path>,
        P: AsRef<Path>,
        B: AsRef<[u8]>,
    {
        let files: Vec<(P, B)> = files.into_iter().collect();
        let (journal, handle) = match expected {
            None => {
                let (journal, preview) = self.preview_in(roots, agent, files)?;
                (journal, preview.handle)
            }
            Some(text) => {
                let handle = self.parse_handle(text)?;
                let journal = self.journal_of(&handle)?;
                let shown = journal.show(handle, None)?;
                let mut wanted = Vec::with_capacity(files.len());
                for (path, bytes) in &files {
                    let rel = journal.relative(utf8(path.as_ref())?)?;
                    wanted.push((rel, path.as_ref(), BlobHash::of(bytes.as_ref())));
                }
                // What the preview changes, file by file (a file it leaves as it is
                // is not listed).
                let mut changes: Vec<(String, Option<BlobHash>)> = (shown.files.iter())
                    .map(|f| match f.candidate {
                        FileState::File { hash, .. } => (f.path.as_str().to_string(), Some(hash)),
                        FileState::Absent => (f.path.as_str().to_string(), None),
                    })
                    .collect();
                let mut same = true;
                for (rel, path, hash) in &wanted {
                    match changes.iter().position(|(p, _)| p == rel.as_str()) {
                        Some(i) => same &= changes.swap_remove(i).1 == Some(*hash),
                        // Left as it is by the preview: right only if it holds the bytes.
                        None => {
                            let now = std::fs::read(path).map(|b| BlobHash::of(&b));
                            same &= now.ok() == Some(*hash);
                        }
                    }
                }
                if !same || !changes.is_empty() {
                    let mut paths: Vec<String> = wanted
                        .iter()
                        .map(|(r, _, _)| r.as_str().to_string())
                        .collect();
                    paths.sort();
                    return Err(Error::PreviewWritesOther { handle, paths });
                }
                (journal, handle)
            }
        };
        let receipt = journal.commit(handle, CommitOptions::new())?;
        Ok(Written {
            tx: handle,
            files: journal
                .touched(&receipt)
                .into_iter()
                .map(|t| t.absolute)
                .collect(),
        })
    }

    /// [`Registry::write_files`] for a host that stages each file's new content in a
    /// file of its own and then renames it over the target (m1nd's temp files): the
    /// content of each target is read from its staged file, and the journal's commit
    /// takes the place of the rename. `staged` holds (staged file, target) pairs,
    /// absolute paths. Every staged file is removed before this returns, whatever the
    /// outcome (as a rename would consume it; a failed removal is ignored). Errors:
    /// a staged file that cannot be read is [`Error::Io`]; a pair whose staged file is
    /// its target is [`Error::Registry`]; those of [`Registry::write_files`]; nothing
    /// is written then.
    pub fn rename_files<R, S, T>(
        &self,
        roots: impl IntoIterator<Item = R>,
        agent: &str,
        staged: impl IntoIterator<Item = (S, T)>,
        expected: Option<&str>,
    ) -> Result<Written>
    where
        R: AsRef<Path>,
        S: AsRef<Path>,
        T: AsRef<Path>,
    {
        let staged: Vec<(S, T)> = staged.into_iter().collect();
        let written = self
            .read_staged(&staged)
            .and_then(|files| self.write_files(roots, agent, files, expected));
        for (from, _) in &staged {
            let _ = std::fs::remove_file(from.as_ref());
        }
        written
    }

    fn read_staged<S: AsRef<Path>, T: AsRef<Path>>(
        &self,
        staged: &[(S, T)],
    ) -> Result<Vec<(PathBuf, Vec<u8>)>> {
        let mut files = Vec::with_capacity(staged.len());
        for (from, to) in staged {
            let (from, to) = (from.as_ref(), to.as_ref());
            if from == to {
                return Err(Error::Registry {
                    path: to.to_path_buf(),
                    reason:
                        "it is named as its own staged file; stage the new content in another file"
                            .into(),
                });
            }
            files.push((to.to_path_buf(), std::fs::read(from).ctx("read", from)?));
        }
        Ok(files)
    }

    /// Roll back the committed transaction `tx` (its handle as text, from
    /// [`Written::tx`]): every file it touched gets its bytes and metadata from
    /// before it. Errors: a `tx` that is not a handle is [`Error::Registry`] (the
    /// parse error in its reason), one of no known journal [`Error::UnknownJournal`];
    /// those of [`crate::Journal::rollback`].
    pub fn rollback_tx(&self, tx: &str) -> Result<Written> {
        let handle = self.parse_handle(tx)?;
        let journal = self.journal_of(&handle)?;
        let receipt = journal.rollback(handle, RollbackOptions::new())?;
        Ok(Written {
            tx: handle,
            files: journal
                .touched(&receipt)
                .into_iter()
                .map(|t| t.absolute)
                .collect(),
        })
    }

    fn parse_handle(&self, text: &str) -> Result<TxHandle> {
        text.parse().map_err(|e| Error::Registry {
            path: self.dir().to_path_buf(),
            reason: format!("{e}; give the handle a preview or commit returned"),
        })
    }

    /// The journal of the first file's root, and the preview of `files` there.
    fn preview_in<R: AsRef<Path>, P: AsRef<Path>, B: AsRef<[u8]>>(
        &self,
        roots: impl IntoIterator<Item = R>,
        agent: &str,
        files: impl IntoIterator<Item = (P, B)>,
    ) -> Result<(Arc<Journal>, Preview)> {
        let mut plan = Plan::new().agent(agent);
        let mut first = None;
        for (path, bytes) in files {
            let path = path.as_ref();
            plan = plan.write_file(utf8(path)?, bytes);
            first.get_or_insert_with(|| path.to_path_buf());
        }
        let first = first.ok_or_else(|| Error::Registry {
            path: self.dir().to_path_buf(),
            reason: "no files were given to write; give at least one".into(),
        })?;
        let journal = self.open_or_create_for(&first, roots)?;
        let preview = journal.preview(&plan)?;
        Ok((journal, preview))
    }
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| Error::Registry {
        path: path.to_path_buf(),
        reason: "the path is not UTF-8, and plans name files as text".into(),
    })
}
