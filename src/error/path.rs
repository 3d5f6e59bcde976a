//! [`PathError`]: why a path of a plan was refused (docs/design.md, "Path safety").

/// Why a path of a plan was refused (docs/design.md, "Path safety").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// Empty path, NUL byte, or other malformed path text.
    #[error("path {path:?} is not a valid workspace path: {why}")]
    Invalid {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Absolute path outside the root, or a `..` that leaves it.
    #[error("path {path:?} is outside the workspace root; give a path relative to the root")]
    OutsideRoot {
        /// The path as given.
        path: String,
    },
    /// A path with a `.git`, `.jj`, `.hg`, `.svn` or `.ultra-edit` component, at any
    /// depth: a version-control store or a journal, another tool's database.
    #[error("path {path:?} is inside a {area}/ directory, which ultra-edit never edits")]
    Reserved {
        /// The path as given.
        path: String,
        /// `.git`, `.jj`, `.hg`, `.svn` or `.ultra-edit`.
        area: &'static str,
    },
    /// A directory above the path is the state directory of an ultra-edit journal (it
    /// holds both `journal.redb` and `commit.lock`): another root's, placed inside this
    /// root by `--state-dir` or by a host's registry directory. Its files are that
    /// journal's database, as off-limits as `.ultra-edit/`.
    #[error("path {path:?} is inside {dir:?}, the state directory of an ultra-edit journal, which ultra-edit never edits")]
    StateDirectory {
        /// The path as given.
        path: String,
        /// The state directory (relative to the root).
        dir: String,
    },
    /// The path ends with `/`, `/.` or `/..`: by POSIX rules it names a directory,
    /// and a plan's paths name files.
    #[error(
        "path {path:?} ends with {ending:?}, which names a directory, not a file; {}",
        file_hint(path, ending)
    )]
    NamesDirectory {
        /// The path as given.
        path: String,
        /// `"/"`, `"/."` or `"/.."`.
        ending: &'static str,
    },
    /// The file name has the form of ultra-edit's temp files (`.ue-*.tmp`).
    #[error("path {path:?} has the name form of ultra-edit's temp files (.ue-*.tmp); rename it")]
    TempName {
        /// The path as given.
        path: String,
    },
    /// A parent directory of the path is a symlink.
    #[error(
        "path {path:?} goes through the symlink {link:?}; edit the link's target by its real path"
    )]
    SymlinkInPath {
        /// The path as given.
        path: String,
        /// The component that is a symlink (relative to the root).
        link: String,
    },
    /// The file itself is a symlink: replacing it would turn the link into a regular file.
    #[error("path {path:?} is a symlink; ultra-edit never replaces a link, edit its target by its real path")]
    IsSymlink {
        /// The path as given.
        path: String,
    },
    /// The file has setuid, setgid or sticky bits. A rewrite (as root) would give them
    /// to a file owned by the writer, so such files are never edited.
    #[error("path {path:?} has mode {mode:o} (setuid, setgid or sticky); ultra-edit does not rewrite such files")]
    SetId {
        /// The path as given.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The file has more than one hard link: a rename would silently split it.
    #[error("path {path:?} has {links} hard links; a rename would split them, so it is refused")]
    HardLinked {
        /// The path as given.
        path: String,
        /// `st_nlink`.
        links: u64,
    },
    /// The path, or one of its parents, is not of the kind needed (a directory where a
    /// file is edited, a file where a directory is needed).
    #[error("path {path:?}: {why}")]
    WrongKind {
        /// The path as given.
        path: String,
        /// What was found.
        why: String,
    },
}

/// What to write instead of a path that ends like a directory's.
fn file_hint(path: &str, ending: &str) -> String {
    let mut file = path;
    while let Some(f) = file.strip_suffix('/').or_else(|| file.strip_suffix("/.")) {
        file = f;
    }
    if ending == "/.." || file.is_empty() || file == "." {
        "give the path of a file".into()
    } else {
        format!("to edit the file, write {file:?}")
    }
}

impl PathError {
    /// The path refused, as the plan wrote it.
    pub fn path(&self) -> &str {
        match self {
            PathError::Invalid { path, .. }
            | PathError::OutsideRoot { path }
            | PathError::Reserved { path, .. }
            | PathError::StateDirectory { path, .. }
            | PathError::NamesDirectory { path, .. }
            | PathError::TempName { path }
            | PathError::SymlinkInPath { path, .. }
            | PathError::IsSymlink { path }
            | PathError::SetId { path, .. }
            | PathError::HardLinked { path, .. }
            | PathError::WrongKind { path, .. } => path,
        }
    }
}
