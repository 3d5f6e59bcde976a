//! What a preview tells about the paths of a revision before any commit (docs/plan.md,
//! "Near misses" and "Permissions at preview time"):
//!
//! - a new file whose name is a near miss of an existing one: warning
//!   `new_file_near_existing`, naming the existing path;
//! - a file without write bits (mode & 0o222 == 0): warning `read_only_file` (an error
//!   under [`crate::ReadOnlyFiles::Refuse`]). Told from the mode bits, so it is the same
//!   for root, whom the kernel lets write anyway;
//! - a directory this process cannot write (`faccessat(W_OK | X_OK, AT_EACCESS)`,
//!   effective ids: root passes): error `directory_not_writable`, since a commit
//!   replaces a file by renaming a temp over it, or creates it there.

use std::collections::BTreeMap;

use crate::edit::{self, Issue, Severity};
use crate::fs::near::{near_path, Closeness};
use crate::fs::{EntryKind, FileSystem, RelPath};
use crate::journal::records::FileState;

/// The `new_file_near_existing` warning for `rel`, a file the plan creates, when an
/// existing path differs from it only by case, Unicode normalization, whitespace at
/// the end, or one inserted, deleted or swapped character.
pub(crate) fn new_file_near_existing(fs: &dyn FileSystem, rel: &RelPath) -> Option<Issue> {
    let near = near_path(fs, rel, Closeness::NoSubstitution)?;
    Some(Issue {
        code: "new_file_near_existing".into(),
        severity: Severity::Warning,
        path: rel.to_string(),
        message: format!(
            "{:?} is a new file, but {:?} exists and the names differ {}: check that the \
             plan means a new file — to edit the existing one, write its name",
            rel.as_str(),
            near.existing,
            near.differs
        ),
    })
}

/// The permission issues of the files a revision changes (`changed`: each path with its
/// snapshot), in path order: `read_only_file` for a snapshot without write bits, and
/// `directory_not_writable` for each directory (the nearest existing one of a path)
/// this process cannot write. A directory that cannot be checked (an I/O error) gets no
/// issue: the commit still reports it.
pub(crate) fn permission_issues(
    fs: &dyn FileSystem,
    changed: &[(&RelPath, &FileState)],
) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut dirs: BTreeMap<RelPath, bool> = BTreeMap::new();
    for &(rel, snapshot) in changed {
        if let Some(mode) = snapshot.mode().filter(|m| m & 0o222 == 0) {
            issues.push(Issue {
                code: "read_only_file".into(),
                severity: Severity::Warning,
                path: rel.to_string(),
                message: format!(
                    "{:?} has mode {mode:o}, without write bits: the commit replaces it all \
                     the same (by rename, which the directory's permission allows, not the \
                     file's) and keeps mode {mode:o}; check that this file is meant to \
                     change (a policy with \"read_only_files\": \"refuse\" makes this an \
                     error)",
                    rel.as_str()
                ),
            });
        }
        let Some(dir) = existing_dir(fs, rel) else {
            continue;
        };
        if dirs.contains_key(&dir) {
            continue;
        }
        let writable = fs.dir_writable(&dir).unwrap_or(true);
        dirs.insert(dir.clone(), writable);
        if !writable {
            let shown = if dir.is_root() {
                "the workspace root".to_string()
            } else {
                format!("{:?}", dir.as_str())
            };
            issues.push(Issue {
                code: "directory_not_writable".into(),
                severity: Severity::Error,
                path: rel.to_string(),
                message: format!(
                    "{shown} (where {:?} is) is not writable by this process (uid {}): the \
                     directory must be writable: a commit replaces the file by rename (or \
                     creates it there) — give the process write and search permission on \
                     it (chmod u+wx, or run as its owner), then preview again",
                    rel.as_str(),
                    rustix::process::geteuid().as_raw()
                ),
            });
        }
    }
    issues
}

/// The nearest directory above `rel` that exists (the root at the latest); `None` on
/// an I/O error or where something else than a directory is found.
fn existing_dir(fs: &dyn FileSystem, rel: &RelPath) -> Option<RelPath> {
    let mut dir = rel.parent();
    loop {
        match fs.entry(&dir).ok()? {
            EntryKind::Dir => return Some(dir),
            EntryKind::Absent if !dir.is_root() => dir = dir.parent(),
            _ => return None,
        }
    }
}

/// `edit`'s [`edit::EditError::FileNotFound`] with the near-miss path of `rel` filled
/// in, when one exists; any other error unchanged.
pub(crate) fn with_near_path(
    fs: &dyn FileSystem,
    rel: &RelPath,
    mut e: edit::EditError,
) -> edit::EditError {
    if let edit::EditError::FileNotFound { near, .. } = &mut e {
        *near = near_path(fs, rel, Closeness::AnyTypo);
    }
    e
}
