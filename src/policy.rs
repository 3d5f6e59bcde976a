//! [`Policy`]: the choices an embedder makes per journal ([`crate::OpenOptions::policy`])
//! or per plan ([`crate::Plan::policy`]) where the CLI's strict defaults do not fit it.
//!
//! The default of every field is what the CLI does (docs/design.md, "Lifecycle",
//! section Preview): a plan that changes nothing, new conflict markers, two edits of one
//! whole file in one plan and a candidate that stops parsing (docs/symbols.md, "Syntax
//! validation") are refused. m1nd, for instance, lets the last write of a
//! path in a batch win. Hard-linked files stay refused whatever the policy: a rename
//! would split the link (docs/design.md, "Path safety").

use serde::{Deserialize, Serialize};

/// What the library does in the situations an embedder may decide differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
