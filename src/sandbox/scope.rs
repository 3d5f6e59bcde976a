//! The scope rules of a captured command (docs/commands.md, "Scope"): which of the
//! paths a command wrote become part of the transaction.
//!
//! - Under a directory named `.git`, `.jj`, `.hg` or `.svn` (at any depth), or under the
//!   state directory: never ([`Verdict::Vcs`]).
//! - Ignored by the repository's ignore rules — every `.gitignore` from the root down
//!   to the path's directory, the deeper one deciding first, then
//!   `.git/info/exclude` — as git reads them, through the `ignore` crate (ripgrep's):
//!   dropped unless asked to keep them ([`Verdict::Ignored`]). The rules are read from
//!   the real tree, not from what the command wrote. The user's global excludes file
//!   (`core.excludesFile`) is not read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Where a path falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Part of the transaction.
    Keep,
    /// Under a version-control or the state directory: never kept.
    Vcs,
    /// Ignored by the repository's rules.
    Ignored,
}

/// The version-control directories a transaction never reaches.
pub const VCS_DIRS: [&str; 4] = [".git", ".jj", ".hg", ".svn"];

/// The rules for one root, with each directory's `.gitignore` read once.
pub(crate) struct Scope {
    root: PathBuf,
    /// The state directory relative to the root, when it is inside it.
    state_rel: Option<String>,
    /// Per directory (root-relative, `""` for the root): its `.gitignore`, if any.
    dirs: HashMap<String, Option<Gitignore>>,
    exclude: Option<Gitignore>,
}

fn load(dir: &Path, file: &Path) -> Option<Gitignore> {
    if !file.is_file() {
        return None;
    }
    let mut b = GitignoreBuilder::new(dir);
    // A line the crate cannot parse is skipped, as git skips it.
    let _ = b.add(file);
    b.build().ok().filter(|g| !g.is_empty())
}

impl Scope {
    pub fn new(root: &Path, state_dir: &Path) -> Scope {
        let state_rel = state_dir
            .strip_prefix(root)
            .ok()
            .and_then(|p| p.to_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        Scope {
            root: root.to_path_buf(),
            state_rel,
            dirs: HashMap::new(),
            exclude: load(root, &root.join(".git/info/exclude")),
        }
    }

    /// The verdict for the root-relative file path `rel`.
    pub fn classify(&mut self, rel: &str) -> Verdict {
        let parts: Vec<&str> = rel.split('/').collect();
        if parts[..parts.len().saturating_sub(1)]
            .iter()
            .any(|p| VCS_DIRS.contains(p))
        {
            return Verdict::Vcs;
        }
        if let Some(s) = &self.state_rel {
            if rel == s || rel.starts_with(&format!("{s}/")) {
                return Verdict::Vcs;
            }
        }
        let abs = self.root.join(rel);
        // Deepest directory first: its rules override its parents'.
        for depth in (0..parts.len()).rev() {
            let dir = parts[..depth].join("/");
            let gi = self.dirs.entry(dir.clone()).or_insert_with(|| {
                let d = if dir.is_empty() {
                    self.root.clone()
                } else {
                    self.root.join(&dir)
                };
                load(&d, &d.join(".gitignore"))
            });
            if let Some(gi) = gi {
                let m = gi.matched_path_or_any_parents(&abs, false);
                if m.is_ignore() {
                    return Verdict::Ignored;
                }
                if m.is_whitelist() {
                    return Verdict::Keep;
                }
            }
        }
        if let Some(gi) = &self.exclude {
            if gi.matched_path_or_any_parents(&abs, false).is_ignore() {
                return Verdict::Ignored;
            }
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcs_state_and_ignored_paths_at_any_depth() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::write(root.join(".gitignore"), "target/\n*.o\n!keep.o\n").unwrap();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join("sub/.gitignore"), "__pycache__/\ngen.txt\n").unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::write(root.join(".git/info/exclude"), "local.cfg\n").unwrap();
        let mut s = Scope::new(root, &root.join(".ultra-edit"));
        let v = |s: &mut Scope, p: &str| s.classify(p);
        assert_eq!(v(&mut s, "src/a.rs"), Verdict::Keep);
        assert_eq!(v(&mut s, ".git/index"), Verdict::Vcs);
        assert_eq!(v(&mut s, "vendor/x/.hg/store"), Verdict::Vcs);
        assert_eq!(v(&mut s, ".ultra-edit/journal.redb"), Verdict::Vcs);
        assert_eq!(v(&mut s, "target/debug/x"), Verdict::Ignored);
        assert_eq!(v(&mut s, "sub/deep/target/x"), Verdict::Ignored);
        assert_eq!(v(&mut s, "a.o"), Verdict::Ignored);
        assert_eq!(v(&mut s, "keep.o"), Verdict::Keep);
        assert_eq!(v(&mut s, "sub/deep/__pycache__/m.pyc"), Verdict::Ignored);
        assert_eq!(v(&mut s, "sub/gen.txt"), Verdict::Ignored);
        assert_eq!(v(&mut s, "gen.txt"), Verdict::Keep);
        assert_eq!(v(&mut s, "local.cfg"), Verdict::Ignored);
        assert_eq!(v(&mut s, ".gitignore"), Verdict::Keep);
    }
}
