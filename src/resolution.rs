//! `resolve`: a person edits a revision's candidates (after a conflicting `rebase`,
//! or to touch up a change) and the saved files become a new revision.
//!
//! The library part is editor-free: [`Journal::resolvable`] picks the files and their
//! candidate bytes, and [`Journal::resolve`] records edited bytes as a new revision,
//! the way `revise` records a plan of `replace_file` edits (the recorded plan is that
//! plan). The CLI runs the editor in between (`$VISUAL`, else `$EDITOR`, else `vi`,
//! as git chooses its editor).
//!
//! Nothing is recorded when nothing changed, or when the edited bytes still hold
//! conflict markers that the snapshot does not have, unless forced (then the revision
//! carries the `conflict_markers` validation error, as any other would).

use base64::Engine;

use crate::edit::{self, is_binary, Edit, Plan};
use crate::error::{MarkedFile, ResolveError, Result};
use crate::tx::{Preview, ReviseOptions};
use crate::workspace::Journal;

/// The files of a revision offered for editing ([`Journal::resolvable`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolvable {
    /// Transaction id.
    pub tx: u64,
    /// The latest revision, whose candidates these are: pass it to [`Journal::resolve`].
    pub revision: u32,
    /// The files, sorted by path.
    pub files: Vec<ResolveFile>,
}

/// One candidate offered for editing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveFile {
    /// Root-relative path.
    pub path: String,
    /// The candidate's bytes.
    pub content: Vec<u8>,
    /// True if the rebase that made the revision left conflict markers in it.
    pub conflicted: bool,
}

/// Options of [`Journal::resolve`].
/// `#[non_exhaustive]`: start from [`ResolveOptions::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ResolveOptions {
    /// Record the content even if conflict markers remain in it.
    pub force: bool,
}

impl ResolveOptions {
    /// Every default: content with conflict markers left in it is refused.
    pub fn new() -> ResolveOptions {
        ResolveOptions::default()
    }
    /// [`ResolveOptions::force`].
    pub fn with_force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
}

impl Journal {
    /// The candidates of the latest revision of open tx `tx` to edit: `path` alone if
    /// given, else the files with conflict markers, else (no conflict) every text file
    /// the revision changes that it does not delete.
    ///
    /// Errors: those of [`Journal::show`]; [`crate::Error::WrongState`] when the tx is
    /// not open; [`ResolveError::NotInRevision`] for a `path` the revision does not
    /// have; [`ResolveError::NothingToEdit`] when no file has content to edit.
    pub fn resolvable(
        &self,
        tx: impl Into<crate::TxRef>,
        path: Option<&str>,
    ) -> Result<Resolvable> {
        let tx = self.tx_number(tx)?;
        let (_, latest) = self.latest_open(tx, crate::error::Verb::Revise)?;
        let p = Preview::new(self.id(), &self.tx(tx)?, latest);
        let conflicted = |path: &str| {
            p.conflicts
                .iter()
                .any(|c| c.path == path && !c.regions.is_empty())
        };
        let paths: Vec<&str> = match path {
            Some(want) => {
                if !p.files.iter().any(|f| f.path == want) {
                    return Err(ResolveError::NotInRevision {
                        tx,
                        path: want.to_string(),
                        revision: p.revision,
                        files: p.files.iter().map(|f| f.path.to_string()).collect(),
                    }
                    .into());
                }
                vec![want]
            }
            None if p.conflicts.iter().any(|c| !c.regions.is_empty()) => p
                .files
                .iter()
                .map(|f| f.path.as_str())
                .filter(|f| conflicted(f))
                .collect(),
            None => p.files.iter().map(|f| f.path.as_str()).collect(),
        };
        let mut files = Vec::new();
        for f in p.files.iter().filter(|f| paths.contains(&f.path.as_str())) {
            let Some(hash) = f.candidate.hash() else {
                continue;
            };
            let content = self.blob(&hash)?.unwrap_or_default();
            if path.is_none() && is_binary(&content) {
                continue;
            }
            files.push(ResolveFile {
                path: f.path.to_string(),
                conflicted: conflicted(&f.path),
                content,
            });
        }
        if files.is_empty() {
            let why = match path {
                Some(path) => format!("it deletes {path}"),
                None => "it deletes every file it changes, or they are binary".into(),
            };
            return Err(ResolveError::NothingToEdit {
                tx,
                revision: p.revision,
                why,
            }
            .into());
        }
        Ok(Resolvable {
            tx,
            revision: p.revision,
            files,
        })
    }

    /// Record `edited` (root-relative path, new bytes) as a new revision of `tx` built
    /// on revision `on` (which must still be the latest): each file whose bytes differ
    /// from its candidate becomes a `replace_file` edit of the recorded plan.
    ///
    /// A file saved as it was is left out, except one whose whole existence conflicts
    /// (a rebase found it deleted on one side and changed on the other): saving it
    /// unchanged keeps the candidate, and is recorded.
    ///
    /// Errors, with nothing recorded: [`ResolveError::Unchanged`] when every file is
    /// as it was (and none such); [`ResolveError::MarkersRemain`] when a file has conflict markers its
    /// snapshot does not have (see [`edit::conflict_marker_lines`]) and `opts.force`
    /// is false; [`crate::Error::StaleRevision`] when `on` is no longer the latest;
    /// and those of [`Journal::resolvable`] and [`Journal::revise`].
    pub fn resolve(
        &self,
        tx: impl Into<crate::TxRef>,
        on: u32,
        edited: &[(String, Vec<u8>)],
        opts: ResolveOptions,
    ) -> Result<Preview> {
        let (tx, revise, plan) = self.resolved_plan(tx, on, edited, opts)?;
        self.revise(tx, revise, &plan)
    }

    /// What [`Journal::resolve`] records, before it is recorded: the tx, the revise
    /// options and the plan (the `--check` variant records it with a check).
    pub(crate) fn resolved_plan(
        &self,
        tx: impl Into<crate::TxRef>,
        on: u32,
        edited: &[(String, Vec<u8>)],
        opts: ResolveOptions,
    ) -> Result<(u64, ReviseOptions, Plan)> {
        let tx = self.tx_number(tx)?;
        let shown = self.show(tx, Some(on))?;
        let mut edits = Vec::new();
        let mut marked = Vec::new();
        for (path, bytes) in edited {
            let Some(f) = shown.files.iter().find(|f| f.path == path.as_str()) else {
                return Err(ResolveError::NotInRevision {
                    tx,
                    path: path.clone(),
                    revision: on,
                    files: shown.files.iter().map(|f| f.path.to_string()).collect(),
                }
                .into());
            };
            let candidate = match f.candidate.hash() {
                Some(h) => self.blob(&h)?,
                None => None,
            };
            if candidate.as_deref() == Some(bytes.as_slice()) {
                // Saved as it was: no change, except for a file whose whole existence
                // conflicts (deleted on one side, changed on the other): keeping the
                // candidate is then the resolution, recorded as a write of it.
                let whole_file_conflict = shown
                    .conflicts
                    .iter()
                    .any(|c| c.path == f.path && c.regions.is_empty());
                if whole_file_conflict {
                    edits.push(keep_file(path, bytes));
                }
                continue;
            }
            let snapshot = match f.snapshot.hash() {
                Some(h) => self.blob(&h)?,
                None => None,
            };
            if edit::validate::new_conflict_marker(snapshot.as_deref(), bytes).is_some() {
                marked.push(MarkedFile {
                    path: path.clone(),
                    lines: edit::conflict_marker_lines(bytes),
                });
            }
            edits.push(replace_file(path, bytes));
        }
        if edits.is_empty() {
            return Err(ResolveError::Unchanged { tx, revision: on }.into());
        }
        if !marked.is_empty() && !opts.force {
            return Err(ResolveError::MarkersRemain { tx, files: marked }.into());
        }
        let plan = Plan {
            description: Some("resolved in an editor".into()),
            agent: None,
            edits,
            policy: None,
        };
        let opts = ReviseOptions::new().with_base(on);
        Ok((tx, opts, plan))
    }
}

/// A `write_file` edit with `bytes` (the file may be gone from the disk the revision
/// was rebased onto).
fn keep_file(path: &str, bytes: &[u8]) -> Edit {
    let (content, content_base64) = content_of(bytes);
    Edit::WriteFile {
        path: path.to_string(),
        content,
        content_base64,
        mode: None,
        expected_base: None,
    }
}

/// A `replace_file` edit with `bytes`.
fn replace_file(path: &str, bytes: &[u8]) -> Edit {
    let (content, content_base64) = content_of(bytes);
    Edit::ReplaceFile {
        path: path.to_string(),
        content,
        content_base64,
        mode: None,
        expected_base: None,
    }
}

/// An edit's content fields for `bytes`: as text when they are UTF-8, else base64.
fn content_of(bytes: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (Some(text.to_string()), None),
        Err(_) => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    }
}
