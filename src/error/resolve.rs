//! [`ResolveError`]: why `resolve` (editing a revision's candidates in an editor)
//! recorded nothing.

/// A file whose edited content still holds conflict markers ([`ResolveError::MarkersRemain`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MarkedFile {
    /// Root-relative path.
    pub path: String,
    /// 1-based lines of the conflict markers the snapshot does not have.
    pub lines: Vec<usize>,
}

/// Why `resolve` recorded nothing. Every variant leaves the journal and the disk as
/// they were.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The edited content still has conflict markers (`<<<<<<<`, `|||||||`,
    /// `=======`, `>>>>>>>` lines) that the snapshot does not have.
    #[error("tx {tx}: conflict markers remain in {}; nothing was recorded. Edit them away and run it again, or record the content as it is with --force (that revision fails validation until a later one removes them)", files.iter().map(|f| format!("{} (line {})", f.path, f.lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))).collect::<Vec<_>>().join(", "))]
    MarkersRemain {
        /// Transaction id.
        tx: u64,
        /// The files and their marker lines.
        files: Vec<MarkedFile>,
    },
    /// The editor left every file as it was.
    #[error("tx {tx}: the file(s) were saved unchanged, so nothing was recorded (revision {revision} is still the latest)")]
    Unchanged {
        /// Transaction id.
        tx: u64,
        /// The latest revision.
        revision: u32,
    },
    /// The path named is not a file of the latest revision.
    #[error("tx {tx}: {path} is not a file of revision {revision} (its files: {}); add it with `revise` and a plan first", files.join(", "))]
    NotInRevision {
        /// Transaction id.
        tx: u64,
        /// The path asked for.
        path: String,
        /// The latest revision.
        revision: u32,
        /// The revision's paths.
        files: Vec<String>,
    },
    /// The revision has no candidate content to edit (every file is deleted by it).
    #[error("tx {tx}: revision {revision} has no file content to edit ({why}); change it with `revise` and a plan")]
    NothingToEdit {
        /// Transaction id.
        tx: u64,
        /// The latest revision.
        revision: u32,
        /// Why, in words.
        why: String,
    },
    /// `resolve --from DIR`: DIR is not the directory an earlier `resolve` of this
    /// transaction kept, or was made from a revision that is no longer the latest.
    #[error("tx {tx}: {dir} {why}; nothing was recorded")]
    KeptCopies {
        /// Transaction id.
        tx: u64,
        /// The directory given to `--from`.
        dir: String,
        /// What is wrong with it, in words.
        why: String,
    },
    /// The editor could not be started or exited with a failure.
    #[error("the editor `{editor}` {what}; nothing was recorded")]
    Editor {
        /// The editor command (from `$VISUAL`, `$EDITOR`, or `vi`).
        editor: String,
        /// What went wrong ("exited with status 1", "could not be started: …").
        what: String,
    },
}
