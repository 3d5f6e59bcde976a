//! [`Policy`]: the choices an embedder makes per journal ([`crate::OpenOptions::policy`])
//! or per plan ([`crate::Plan::policy`]) where the CLI's strict defaults do not fit it.
//!
//! The default of every field is what the CLI does (docs/design.md, "Lifecycle",
//! section Preview): a plan that changes nothing, new conflict markers, two edits of one
//! whole file in one plan and a candidate that stops parsing (docs/symbols.md, "Syntax
//! validation") are refused. m1nd, for instance, lets the last write of a
//! path in a batch win; [`Policy::permissive`] is the preset for such a host.
//!
//! Hard-linked files stay refused whatever the policy. A commit writes a file's new
//! bytes to a temp and renames it over the path: that gives the path a new inode, so
//! the file's other names would keep the old bytes — the edit would land on one name
//! and silently not on the others. Writing in place instead would keep the link but
//! lose what makes the commit all-or-nothing and the rollback exact (a crash mid-write
//! leaves a torn file; the old inode is not kept to restore). So the preview refuses
//! it (kind `path_refused`), naming the file (docs/design.md, "Path safety").

use serde::{Deserialize, Serialize};

/// What the library does in the situations an embedder may decide differently.
///
/// Build one from a preset ([`Policy::strict`], the default; [`Policy::permissive`])
/// and the `with_*` methods: the struct is `#[non_exhaustive]`, so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Policy {
    /// A revision whose candidates all equal their snapshots (the plan changes
    /// nothing). Default [`Identical::Refuse`]: validation error `no_changes`.
    #[serde(default)]
    pub identical_content: Identical,
    /// New `<<<<<<<` / `=======` / `>>>>>>>` lines in a candidate. Default
    /// [`Markers::Refuse`]: validation error `conflict_markers`.
    #[serde(default)]
    pub conflict_markers: Markers,
    /// Two whole-file edits (`replace_file`, `create_file`, `write_file`) of one path
    /// in one plan. Default [`SamePath::Refuse`]: the plan is refused as overlapping.
    #[serde(default)]
    pub same_path_twice: SamePath,
    /// A candidate of a Rust, Python, JavaScript, TypeScript or Go file that has parse
    /// errors where the file had none (or did not exist) (docs/symbols.md, "Syntax
    /// validation"). Default [`SyntaxErrors::Refuse`]: validation error `syntax_error`.
    /// The CLI's `--allow syntax_error` and the MCP tools' `"allow": ["syntax_error"]`
    /// set it to [`SyntaxErrors::Allow`] for one plan.
    #[serde(default)]
    pub syntax_errors: SyntaxErrors,
    /// A check command (`--check CMD`, feature `sandbox`) that fails on the candidate.
    /// Default [`Checks::Refuse`]: validation error `check_failed`.
    #[serde(default)]
    pub check_failed: Checks,
    /// A file the revision changes whose mode has no write bit (`mode & 0o222 == 0`),
    /// told from the mode bits (so the same for root). Default [`ReadOnlyFiles::Warn`]:
    /// validation warning `read_only_file` (the commit replaces the file by rename and
    /// keeps its mode). [`ReadOnlyFiles::Refuse`] makes it an error.
    #[serde(default)]
    pub read_only_files: ReadOnlyFiles,
}

/// [`Policy::read_only_files`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadOnlyFiles {
    /// A warning (`read_only_file`): the revision may be committed.
    #[default]
    Warn,
    /// An error (`read_only_file`): the revision cannot be committed.
    Refuse,
}

/// [`Policy::check_failed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Checks {
    /// A failing check is a validation error (`check_failed`): the revision cannot be
    /// committed.
    #[default]
    Refuse,
    /// It is a warning (`check_failed`): the revision may be committed.
    Allow,
}

impl Policy {
    /// The CLI's policy, and the default: every field refuses.
    pub fn strict() -> Policy {
        Policy::default()
    }

    /// Every field lets the write through: a plan that changes nothing commits no
    /// file; new conflict markers and syntax errors are warnings; the last whole-file
    /// edit of a path in a plan wins. What a host that writes what its agent sent needs
    /// (m1nd flips all four), keeping every other check (stale snapshots, path safety,
    /// hard links).
    pub fn permissive() -> Policy {
        Policy {
            identical_content: Identical::Allow,
            conflict_markers: Markers::Allow,
            same_path_twice: SamePath::LastWriteWins,
            syntax_errors: SyntaxErrors::Allow,
            // A host that asks for a check wants its verdict: a failing check still
            // refuses the commit unless the host allows it too.
            check_failed: Checks::Refuse,
            read_only_files: ReadOnlyFiles::Warn,
        }
    }

    /// This policy with [`Policy::identical_content`] set.
    pub fn with_identical_content(mut self, v: Identical) -> Policy {
        self.identical_content = v;
        self
    }

    /// This policy with [`Policy::conflict_markers`] set.
    pub fn with_conflict_markers(mut self, v: Markers) -> Policy {
        self.conflict_markers = v;
        self
    }

    /// This policy with [`Policy::same_path_twice`] set.
    pub fn with_same_path_twice(mut self, v: SamePath) -> Policy {
        self.same_path_twice = v;
        self
    }

    /// This policy with [`Policy::syntax_errors`] set.
    pub fn with_syntax_errors(mut self, v: SyntaxErrors) -> Policy {
        self.syntax_errors = v;
        self
    }

    /// This policy with [`Policy::check_failed`] set.
    pub fn with_check_failed(mut self, v: Checks) -> Policy {
        self.check_failed = v;
        self
    }

    /// This policy with [`Policy::read_only_files`] set.
    pub fn with_read_only_files(mut self, v: ReadOnlyFiles) -> Policy {
        self.read_only_files = v;
        self
    }
}

/// [`Policy::identical_content`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identical {
    /// A plan that changes nothing is a validation error (`no_changes`): it cannot be
    /// committed.
    #[default]
    Refuse,
    /// It is a warning (`no_changes`): the revision is ready to commit, and the commit
    /// writes no file (its receipt lists none).
    Allow,
}

/// [`Policy::conflict_markers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Markers {
    /// New conflict-marker lines are a validation error (`conflict_markers`).
    #[default]
    Refuse,
    /// They are a warning (`conflict_markers`): the content is committed as written.
    /// Conflicts of a rebase (`merge_conflict`) stay errors.
    Allow,
}

/// [`Policy::same_path_twice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamePath {
    /// Two whole-file edits of one path are overlapping edits: the plan is refused.
    #[default]
    Refuse,
    /// The later whole-file edit of a path (in plan order) replaces the earlier ones,
    /// which are dropped before the plan is resolved: the last write wins.
    LastWriteWins,
}

/// [`Policy::syntax_errors`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyntaxErrors {
    /// A candidate that stops parsing is a validation error (`syntax_error`): it cannot
    /// be committed.
    #[default]
    Refuse,
    /// It is a warning (`syntax_error`, its message saying the policy allowed it): the
    /// content is committed as written, for a file meant to stay broken for now.
    Allow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_presets_are_all_refuse_and_all_allow_but_a_failing_check() {
        assert_eq!(Policy::strict(), Policy::default());
        let p = Policy::permissive();
        assert_eq!(
            (
                p.identical_content,
                p.conflict_markers,
                p.same_path_twice,
                p.syntax_errors
            ),
            (
                Identical::Allow,
                Markers::Allow,
                SamePath::LastWriteWins,
                SyntaxErrors::Allow
            )
        );
        assert_eq!(
            serde_json::to_value(p).unwrap(),
            serde_json::json!({"identical_content": "allow", "conflict_markers": "allow",
                "same_path_twice": "last_write_wins", "syntax_errors": "allow",
                "check_failed": "refuse", "read_only_files": "warn"})
        );
        assert_eq!(
            Policy::strict().with_syntax_errors(SyntaxErrors::Allow),
            Policy {
                syntax_errors: SyntaxErrors::Allow,
                ..Policy::default()
            }
        );
    }
}
