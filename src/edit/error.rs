//! Errors raised while parsing an edit plan or resolving it against file bytes.
//!
//! Every message says what was wrong and what to do next, so that a person or an
//! agent can fix the plan without reading the source.

/// Why an edit plan could not be parsed or resolved.
///
/// Plan indices (`first`, `second`) are 0-based positions in the plan's `edits`
/// array; the Display text shows them 1-based ("edits #1 and #2"). Line numbers
/// are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The plan is not valid JSON, does not match the schema, or breaks a rule
    /// that can be checked without reading any file.
    #[error("invalid edit plan: {message}")]
    InvalidPlan {
        /// What was wrong, with a hint on how to fix it.
        message: String,
    },

    /// `old` / `anchor` does not occur in the file.
    #[error(
        "edit #{} ({op} in {shown_path}): {needle} not found; {hint}",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    TargetNotFound {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// What differs from the file, when it can be told (line endings, a missing
        /// final newline, text that another edit of the plan creates), and how to
        /// write the edit.
        hint: String,
    },

    /// `old` / `anchor` occurs more than once and no `occurrence` was given.
    #[error(
        "edit #{} ({op} in {shown_path}): {needle} matches {count} times (lines {}); add \"occurrence\": N \
         (1-based), or \"occurrence\": \"all\" for replace_text, or include more surrounding \
         text so that it matches once",
        .index.saturating_add(1),
        join_lines(.lines),
        shown_path = shown(.path)
    )]
    AmbiguousTarget {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"insert_after"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// Number of non-overlapping matches.
        count: usize,
        /// 1-based line number of the start of each match.
        lines: Vec<usize>,
    },

    /// `occurrence` is larger than the number of matches.
    #[error(
        "edit #{} ({op} in {shown_path}): \"occurrence\": {occurrence} requested but {needle} \
         matches only {count} time(s); use an occurrence between 1 and {count}",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    OccurrenceOutOfRange {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// The requested 1-based occurrence.
        occurrence: usize,
        /// Number of non-overlapping matches.
        count: usize,
    },

    /// `replace_lines` range is not within the file.
    #[error(
        "edit #{} (replace_lines in {shown_path}): {}",
        .index.saturating_add(1),
        line_range_problem(*.start, *.end, *.line_count),
        shown_path = shown(.path)
    )]
    LineOutOfRange {
        /// File path as written in the plan.
        path: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// Requested first line (1-based).
        start: usize,
        /// Requested last line (1-based, inclusive).
        end: usize,
        /// Number of lines in the base file.
        line_count: usize,
    },

    /// Two edits of one file touch the same bytes (or a whole-file edit is
    /// combined with another edit of the same path).
    #[error(
        "{shown_path}: edits #{} and #{} overlap; all edits of a plan apply to the same base \
         content, so merge them into one edit or split them into separate revisions",
        .first.saturating_add(1),
        .second.saturating_add(1),
        shown_path = shown(.path)
    )]
    OverlappingEdits {
        /// File path as written in the plan.
        path: String,
        /// 0-based plan index of the earlier edit.
        first: usize,
        /// 0-based plan index of the later edit.
        second: usize,
    },

    /// The edit needs an existing file but the path is absent.
    #[error(
        "edit #{} ({op} of {shown_path}): {shown_path} does not exist, and {op} needs an existing file{}",
        .index.saturating_add(1),
        not_found_tail(op, .near.as_ref()),
        shown_path = shown(.path)
    )]
    FileNotFound {
        /// File path as written in the plan.
        path: String,
        /// Operation name of the edit, e.g. `"replace_text"`.
        op: &'static str,
        /// 0-based plan index of the (first) edit of the path.
        index: usize,
        /// An existing path that differs only by case, Unicode normalization,
        /// whitespace at the end or a typo (`fs::near::near_path` finds it); the
        /// message says "did you mean" it. Set by the preview, which sees the disk.
        near: Option<NearPath>,
    },

    /// A text op on a file in a wide encoding (UTF-16 or UTF-32, told by its
    /// byte-order mark or by its NUL bytes): its bytes are not UTF-8, so matching and
    /// splicing UTF-8 text would corrupt it.
    #[error(
        "edit #{} ({op} in {shown_path}): the file is {encoding} ({evidence}); text ops match and \
         insert UTF-8 bytes and would corrupt it — rewrite the whole file with replace_file \
         and \"content_base64\" holding the new {encoding} bytes (byte-order mark included)",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    UnsupportedEncoding {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// 0-based plan index of the (first) text edit of the file.
        index: usize,
        /// `"UTF-16LE"`, `"UTF-16BE"`, `"UTF-32LE"` or `"UTF-32BE"`.
        encoding: &'static str,
        /// How it was told: `"byte-order mark"` or `"detected from its NUL bytes"`.
        evidence: &'static str,
    },

    /// A text op would put non-ASCII UTF-8 text into a file that is not valid UTF-8
    /// (a legacy encoding such as Latin-1 or Shift-JIS), making a mixed-encoding file.
    #[error(
        "edit #{} ({op} in {shown_path}): the file is not UTF-8 (a legacy encoding such as \
         Latin-1, or stray bytes) and the edit inserts non-ASCII UTF-8 text, which would \
         leave the file in two encodings; insert ASCII text only (an escape such as \\u00e9 \
         where the language has one), or rewrite the whole file with replace_file and \
         \"content_base64\" holding the bytes in the file's own encoding",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    EncodingMismatch {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// 0-based plan index of the edit.
        index: usize,
    },

    /// Several edits of a plan have a target that is missing or ambiguous (each one
    /// a [`EditError::TargetNotFound`], [`EditError::AmbiguousTarget`],
    /// [`EditError::OccurrenceOutOfRange`], [`EditError::LineOutOfRange`],
    /// [`EditError::FileNotFound`] or [`EditError::FileExists`]): all are reported at
    /// once, in plan order.
    #[error(
        "{} edits of the plan have no single target; fix them all and resend: {}",
        .failures.len(),
        join_failures(.failures)
    )]
    UnresolvedTargets {
        /// The failures, in plan order (one per edit; one per path for a missing or
        /// present file).
        failures: Vec<EditError>,
    },

    /// A symbol op's `symbol` names no definition of the file.
    #[error(
        "edit #{} ({op} in {shown_path}): no definition {symbol:?} in the file; {hint}",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    SymbolNotFound {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_symbol"`.
        op: &'static str,
        /// The symbol path as written in the plan.
        symbol: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// Definitions of that name in other scopes, or the file's top-level names,
        /// and how symbols are addressed.
        hint: String,
    },

    /// A symbol op's `symbol` names several definitions and no `occurrence` was given.
    #[error(
        "edit #{} ({op} in {shown_path}): {symbol:?} names {} definitions ({}); add \"occurrence\": \
         N (1-based, in file order) to pick one",
        .index.saturating_add(1),
        .candidates.len(),
        join_candidates(.candidates),
        shown_path = shown(.path)
    )]
    AmbiguousSymbol {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_symbol"`.
        op: &'static str,
        /// The symbol path as written in the plan.
        symbol: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// Each definition of that path, in file order.
        candidates: Vec<SymbolCandidate>,
    },

    /// The definition a symbol op names cannot be spliced as whole lines: it shares a
    /// line with other code, or contains a parse error (so its extent is not known).
    #[error(
        "edit #{} ({op} in {shown_path}): the definition {symbol:?} (lines {}-{}) {problem} at          line {line}; {}",
        .index.saturating_add(1),
        .first_line,
        .last_line,
        symbol_problem_hint(.problem),
        shown_path = shown(.path)
    )]
    SymbolNotSplicable {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"delete_symbol"`.
        op: &'static str,
        /// The symbol path as written in the plan.
        symbol: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// `"shares a line with other code"` or `"has a parse error"`.
        problem: &'static str,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based first line of the definition (its signature).
        first_line: usize,
        /// 1-based last line of the definition.
        last_line: usize,
    },

    /// A symbol op whose result the checks of docs/symbols.md ("What a symbol op may
    /// not change") refuse: `check` is `"indentation_mismatch"` (Python text that
    /// cannot be moved as one block to the definition's depth), `"symbol_scope_changed"`
    /// (a definition would move to another scope) or `"empty_block"` (a Python block
    /// would hold no statement); or a target op (`replace_body`, `insert_field`,
    /// `insert_variant`, `replace_arm`) that does not apply: `"no_body"` (a
    /// definition without a body), `"wrong_kind"` (the symbol names no definition of a
    /// kind the op applies to) or `"unsupported_target"` (a construct or language the
    /// op does not support; the detail names what is, and the text op that would make
    /// the same edit, with its exact lines). Nothing is changed.
    #[error(
        "edit #{} ({op} in {shown_path}) on {symbol:?}: {check} at line {line}: {detail}",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    SymbolCheckFailed {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_symbol"`.
        op: &'static str,
        /// The symbol path as written in the plan.
        symbol: String,
        /// 0-based plan index of the edit.
        index: usize,
        /// The check that failed, also the error's [`EditError::code`].
        check: &'static str,
        /// 1-based line it concerns: of the base for an indentation mismatch (the
        /// definition's signature), of the result for the others.
        line: usize,
        /// What would go wrong, naming what moved, and what to do.
        detail: String,
    },

    /// A symbol op on a file whose definitions cannot be known: a language without a
    /// grammar, or a file too large to parse.
    #[error(
        "edit #{} ({op} in {shown_path}): {reason}; use replace_text or replace_lines for this file",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    UnsupportedLanguage {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_symbol"`.
        op: &'static str,
        /// 0-based plan index of the edit.
        index: usize,
        /// Why, e.g. which extensions have a grammar.
        reason: String,
    },

    /// A symbol op in a build without the `syntax` feature (no grammars).
    #[error(
        "edit #{} ({op} in {shown_path}): symbol edits need the `syntax` feature, and this build of          Ultra Edit was made without it; rebuild with `--features syntax` (the default CLI          build has it), or use replace_text or replace_lines",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    SyntaxFeatureDisabled {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_symbol"`.
        op: &'static str,
        /// 0-based plan index of the edit.
        index: usize,
    },

    /// `create_file` on a path that already exists.
    #[error(
        "edit #{} (create_file of {shown_path}): {shown_path} already exists; use replace_file or \
         write_file to overwrite it, or a text edit to change part of it",
        .index.saturating_add(1),
        shown_path = shown(.path)
    )]
    FileExists {
        /// File path as written in the plan.
        path: String,
        /// 0-based plan index of the edit.
        index: usize,
    },
}

impl EditError {
    /// Stable snake_case name of the variant, for JSON output and exit-code mapping.
    pub fn code(&self) -> &'static str {
        match self {
            EditError::InvalidPlan { .. } => "invalid_plan",
            EditError::TargetNotFound { .. } => "target_not_found",
            EditError::AmbiguousTarget { .. } => "ambiguous_target",
            EditError::OccurrenceOutOfRange { .. } => "occurrence_out_of_range",
            EditError::LineOutOfRange { .. } => "line_out_of_range",
            EditError::OverlappingEdits { .. } => "overlapping_edits",
            EditError::FileNotFound { .. } => "file_not_found",
            EditError::FileExists { .. } => "file_exists",
            EditError::UnsupportedEncoding { .. } => "unsupported_encoding",
            EditError::EncodingMismatch { .. } => "encoding_mismatch",
            EditError::UnresolvedTargets { .. } => "unresolved_targets",
            EditError::SymbolNotFound { .. } => "symbol_not_found",
            EditError::AmbiguousSymbol { .. } => "ambiguous_symbol",
            EditError::SymbolNotSplicable { .. } => "symbol_not_splicable",
            EditError::SymbolCheckFailed { check, .. } => check,
            EditError::UnsupportedLanguage { .. } => "unsupported_language",
            EditError::SyntaxFeatureDisabled { .. } => "syntax_feature_disabled",
        }
    }

    /// True for the failures of one edit's target (exit 6): a missing or ambiguous
    /// text or symbol, a symbol that cannot be spliced as whole lines, a line range out
    /// of the file, an occurrence out of range, a file that is missing or (for
    /// `create_file`) present — and several of them at once.
    pub fn is_target_failure(&self) -> bool {
        matches!(
            self,
            EditError::TargetNotFound { .. }
                | EditError::SymbolNotFound { .. }
                | EditError::AmbiguousSymbol { .. }
                | EditError::SymbolNotSplicable { .. }
                | EditError::SymbolCheckFailed { .. }
                | EditError::AmbiguousTarget { .. }
                | EditError::OccurrenceOutOfRange { .. }
                | EditError::LineOutOfRange { .. }
                | EditError::FileNotFound { .. }
                | EditError::FileExists { .. }
                | EditError::UnresolvedTargets { .. }
        )
    }

    /// The 0-based plan index of the edit, for errors about one edit.
    pub fn edit_index(&self) -> Option<usize> {
        match self {
            EditError::TargetNotFound { index, .. }
            | EditError::AmbiguousTarget { index, .. }
            | EditError::OccurrenceOutOfRange { index, .. }
            | EditError::LineOutOfRange { index, .. }
            | EditError::UnsupportedEncoding { index, .. }
            | EditError::EncodingMismatch { index, .. }
            | EditError::SymbolNotFound { index, .. }
            | EditError::AmbiguousSymbol { index, .. }
            | EditError::SymbolNotSplicable { index, .. }
            | EditError::SymbolCheckFailed { index, .. }
            | EditError::UnsupportedLanguage { index, .. }
            | EditError::SyntaxFeatureDisabled { index, .. }
            | EditError::FileNotFound { index, .. }
            | EditError::FileExists { index, .. } => Some(*index),
            _ => None,
        }
    }

    /// The target failures `failures` as one error: `None` if there are none, the
    /// failure itself if there is one, else [`EditError::UnresolvedTargets`] listing
    /// them (nested lists flattened) in plan order.
    pub fn combine(failures: Vec<EditError>) -> Option<EditError> {
        let mut flat: Vec<EditError> = Vec::new();
        for f in failures {
            match f {
                EditError::UnresolvedTargets { failures } => flat.extend(failures),
                f => flat.push(f),
            }
        }
        flat.sort_by_key(|f| f.edit_index().unwrap_or(usize::MAX));
        match flat.len() {
            0 => None,
            1 => flat.pop(),
            _ => Some(EditError::UnresolvedTargets { failures: flat }),
        }
    }

    /// Shorthand for [`EditError::InvalidPlan`].
    pub fn invalid_plan(message: impl Into<String>) -> Self {
        EditError::InvalidPlan {
            message: message.into(),
        }
    }
}

/// An existing path close to a plan's path that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NearPath {
    /// The existing path, relative to the root (the missing component replaced by the
    /// existing name; the components after it kept as written).
    pub existing: String,
    /// How the names differ, in words: `only by case`, `only by Unicode normalization
    /// (NFC against NFD)`, `only by whitespace at the end`, `by 1 character`.
    pub differs: String,
}

/// One failed target of a plan, as `--json` errors and MCP tool errors list them
/// (`failures`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TargetFailure {
    /// The error kind ([`EditError::code`]), e.g. `"target_not_found"`.
    pub kind: &'static str,
    /// The edit, 1-based as in the messages ("edit #2"); for a missing or present
    /// file, the first edit of its path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<usize>,
    /// The file path as written in the plan.
    pub path: String,
    /// 1-based lines of the matches of an ambiguous target (for a symbol, the first
    /// line of each candidate's signature).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<usize>,
    /// The definitions an ambiguous symbol names, with their kinds and lines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<SymbolCandidate>,
    /// For a missing file (`file_not_found`), the existing path it most likely meant
    /// (`{existing, differs}`: only by case, Unicode normalization, whitespace at the
    /// end, or by N characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub near: Option<NearPath>,
    /// The failure's own message.
    pub message: String,
}

impl EditError {
    /// The file path the error is about, as written in the plan.
    pub fn path(&self) -> Option<&str> {
        match self {
            EditError::TargetNotFound { path, .. }
            | EditError::AmbiguousTarget { path, .. }
            | EditError::OccurrenceOutOfRange { path, .. }
            | EditError::LineOutOfRange { path, .. }
            | EditError::OverlappingEdits { path, .. }
            | EditError::FileNotFound { path, .. }
            | EditError::FileExists { path, .. }
            | EditError::UnsupportedEncoding { path, .. }
            | EditError::EncodingMismatch { path, .. }
            | EditError::SymbolNotFound { path, .. }
            | EditError::AmbiguousSymbol { path, .. }
            | EditError::SymbolNotSplicable { path, .. }
            | EditError::SymbolCheckFailed { path, .. }
            | EditError::UnsupportedLanguage { path, .. }
            | EditError::SyntaxFeatureDisabled { path, .. } => Some(path),
            EditError::InvalidPlan { .. } | EditError::UnresolvedTargets { .. } => None,
        }
    }

    /// The failed targets this error reports: each of [`EditError::UnresolvedTargets`],
    /// or the error itself for one target failure; empty for other errors.
    pub fn failures(&self) -> Vec<TargetFailure> {
        let one = |e: &EditError| TargetFailure {
            kind: e.code(),
            edit: e.edit_index().map(|i| i.saturating_add(1)),
            path: e.path().unwrap_or_default().to_string(),
            lines: match e {
                EditError::AmbiguousTarget { lines, .. } => lines.clone(),
                EditError::AmbiguousSymbol { candidates, .. } => {
                    candidates.iter().map(|c| c.start_line).collect()
                }
                EditError::SymbolCheckFailed { line, .. } => vec![*line],
                _ => Vec::new(),
            },
            candidates: match e {
                EditError::AmbiguousSymbol { candidates, .. } => candidates.clone(),
                _ => Vec::new(),
            },
            near: match e {
                EditError::FileNotFound { near, .. } => near.clone(),
                _ => None,
            },
            message: e.to_string(),
        };
        match self {
            EditError::UnresolvedTargets { failures } => failures.iter().map(one).collect(),
            e if e.is_target_failure() => vec![one(e)],
            _ => Vec::new(),
        }
    }
}

/// One definition that an ambiguous symbol names, as errors list it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SymbolCandidate {
    /// Its kind, e.g. `"function"`, `"impl"` (docs/symbols.md).
    pub kind: String,
    /// 1-based line where its signature starts.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// Why it matched: `"exact_path"` (its path is the `symbol` given, and its kind
    /// fits the op), `"other_kind"` (its path is the `symbol`, but the op does not
    /// apply to its kind) or `"name_only"` (its own name is the `symbol`'s last name,
    /// in another scope).
    #[serde(default)]
    pub matched: String,
    /// How well it matched, 0–100: 100 for `exact_path`, 50 for `other_kind`, 25 for
    /// `name_only`. Only `exact_path` candidates can be picked with `occurrence`.
    #[serde(default)]
    pub score: u8,
}

impl SymbolCandidate {
    /// The candidate `def`, matched as `matched` (see [`SymbolCandidate::matched`]).
    pub(crate) fn new(def: &crate::syntax::Definition, matched: &'static str) -> Self {
        SymbolCandidate {
            kind: def.kind.into(),
            start_line: def.signature_line,
            end_line: def.last_line,
            matched: matched.into(),
            score: match matched {
                "exact_path" => 100,
                "other_kind" => 50,
                _ => 25,
            },
        }
    }
}

fn join_candidates(candidates: &[SymbolCandidate]) -> String {
    let parts: Vec<String> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| match c.matched.as_str() {
            "exact_path" | "" => format!(
                "{}: {} at lines {}-{}",
                i + 1,
                c.kind,
                c.start_line,
                c.end_line
            ),
            other => format!(
                "also {} at lines {}-{} ({other}, score {}; not picked by occurrence)",
                c.kind, c.start_line, c.end_line, c.score
            ),
        })
        .collect();
    parts.join(", ")
}

fn symbol_problem_hint(problem: &str) -> &'static str {
    match problem {
        "has a parse error" => {
            "its extent is not known while the file does not parse there; fix that line with \
             replace_lines first, or edit by line number"
        }
        _ => {
            "symbol ops splice whole lines, which would touch that code; use replace_text or \
             replace_lines, or move the other code to its own line first"
        }
    }
}

/// Formats a needle for messages: first 80 characters, quoted and escaped with
/// `{:?}`, followed by `...` when truncated.
pub fn display_needle(needle: &str) -> String {
    const MAX_CHARS: usize = 80;
    let truncated: String = needle.chars().take(MAX_CHARS).collect();
    if truncated.len() < needle.len() {
        format!("{truncated:?}...")
    } else {
        format!("{truncated:?}")
    }
}

/// The end of [`EditError::FileNotFound`]'s message: what to do, and the near-miss
/// name when there is one.
fn not_found_tail(op: &str, near: Option<&NearPath>) -> String {
    let Some(near) = near else {
        return match op {
            "delete_file" => "; it is already absent".into(),
            // A symbol in a file that is not there is absent with it: creating the
            // file to delete from it is not what the caller wants.
            "delete_symbol" => "; the symbol is absent with it (check the path)".into(),
            _ => " — use create_file (or write_file) to create it".into(),
        };
    };
    let did_you_mean = format!(
        "did you mean {:?}? It exists, and the names differ {}",
        near.existing, near.differs
    );
    if op == "delete_file" {
        format!("; {did_you_mean} — to delete it, write that name")
    } else {
        format!(
            "; {did_you_mean} — write that name to edit it, or use create_file (or \
             write_file) to create a new file"
        )
    }
}

/// A plan's path as messages show it: bare when it is plain (no whitespace, quote,
/// backslash or control character), else quoted and escaped as a Rust string, so a
/// trailing space or a tab can be seen (`"notes.txt "`).
pub fn shown(path: &str) -> std::borrow::Cow<'_, str> {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && c != '"' && c != '\\');
    if plain {
        std::borrow::Cow::Borrowed(path)
    } else {
        std::borrow::Cow::Owned(format!("{path:?}"))
    }
}

fn join_failures(failures: &[EditError]) -> String {
    let parts: Vec<String> = failures
        .iter()
        .enumerate()
        .map(|(i, f)| format!("({}) {f}", i + 1))
        .collect();
    parts.join(" ")
}

/// How to write a `replace_lines` range of a file of `line_count` lines.
/// What is wrong with `replace_lines` `start`..=`end` in a file of `line_count` lines,
/// in words (1-based lines, as the plan gives them), and what to give instead.
fn line_range_problem(start: usize, end: usize, line_count: usize) -> String {
    let lines = |a: usize, b: usize| {
        if a == b {
            format!("line {a} is")
        } else {
            format!("lines {a}\u{2013}{b} are")
        }
    };
    let has = match line_count {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    if line_count == 0 {
        return "the file is empty, so it has no line to replace: use append (or prepend) to \
                add text to it, or replace_file"
            .into();
    }
    let problem = if start == 0 {
        format!("line 0 does not exist: lines are numbered from 1, and the file has {has}")
    } else if start > end {
        format!(
            "\"start\" ({start}) is after \"end\" ({end}): the range runs from start to end, both \
             included, and the file has {has}"
        )
    } else if start > line_count {
        format!(
            "{} past the end of the file, which has {has}",
            lines(start, end)
        )
    } else {
        format!(
            "lines {start}\u{2013}{end} run past the end of the file, which has {has} (so {} not there)",
            lines(line_count + 1, end)
        )
    };
    let range = match line_count {
        1 => "give start 1 and end 1".to_string(),
        n => format!("give lines between 1 and {n}"),
    };
    format!(
        "{problem}; {range}, or use prepend or append to add text at the start or end of the file"
    )
}

fn join_lines(lines: &[usize]) -> String {
    let parts: Vec<String> = lines.iter().map(usize::to_string).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_message_lists_lines() {
        let e = EditError::AmbiguousTarget {
            path: "src/lib.rs".into(),
            op: "replace_text",
            needle: display_needle("fn a()"),
            index: 1,
            count: 3,
            lines: vec![4, 9, 20],
        };
        assert_eq!(
            e.to_string(),
            "edit #2 (replace_text in src/lib.rs): \"fn a()\" matches 3 times (lines 4, 9, 20); \
             add \"occurrence\": N (1-based), or \"occurrence\": \"all\" for replace_text, or \
             include more surrounding text so that it matches once"
        );
        assert_eq!(e.code(), "ambiguous_target");
    }

    #[test]
    fn a_missing_file_tells_each_op_what_fits_it() {
        let e = |op| EditError::FileNotFound {
            path: "src/gone.py".into(),
            op,
            index: 0,
            near: None,
        };
        assert_eq!(
            e("delete_symbol").to_string(),
            "edit #1 (delete_symbol of src/gone.py): src/gone.py does not exist, and \
             delete_symbol needs an existing file; the symbol is absent with it (check the path)"
        );
        assert_eq!(
            e("delete_file").to_string(),
            "edit #1 (delete_file of src/gone.py): src/gone.py does not exist, and \
             delete_file needs an existing file; it is already absent"
        );
        assert_eq!(
            e("replace_symbol").to_string(),
            "edit #1 (replace_symbol of src/gone.py): src/gone.py does not exist, and \
             replace_symbol needs an existing file — use create_file (or write_file) to create it"
        );
    }

    #[test]
    fn overlap_message_is_one_based() {
        let e = EditError::OverlappingEdits {
            path: "a".into(),
            first: 0,
            second: 2,
        };
        assert!(e.to_string().contains("edits #1 and #3 overlap"));
        assert!(e.to_string().contains("merge them into one edit"));
        assert_eq!(e.code(), "overlapping_edits");
    }

    #[test]
    fn needle_is_truncated_and_escaped() {
        assert_eq!(display_needle("a\"b\n"), "\"a\\\"b\\n\"");
        let long = "x".repeat(100);
        assert_eq!(display_needle(&long), format!("\"{}\"...", "x".repeat(80)));
    }

    #[test]
    fn codes_are_snake_case() {
        let all = [
            EditError::invalid_plan("x"),
            EditError::FileNotFound {
                path: "p".into(),
                op: "replace_file",
                index: 0,
                near: None,
            },
            EditError::FileExists {
                path: "p".into(),
                index: 0,
            },
            EditError::LineOutOfRange {
                path: "p".into(),
                index: 0,
                start: 1,
                end: 2,
                line_count: 1,
            },
        ];
        let codes: Vec<&str> = all.iter().map(EditError::code).collect();
        assert_eq!(
            codes,
            [
                "invalid_plan",
                "file_not_found",
                "file_exists",
                "line_out_of_range"
            ]
        );
        assert!(all[1].to_string().contains("use create_file"));
        assert!(all[2].to_string().contains("use replace_file"));
    }

    /// A line range out of range is said in words, with 1-based lines.
    #[test]
    fn line_out_of_range_is_said_in_words() {
        let say = |start, end, line_count| {
            EditError::LineOutOfRange {
                path: "f.txt".into(),
                index: 2,
                start,
                end,
                line_count,
            }
            .to_string()
        };
        let tail = "or use prepend or append to add text at the start or end of the file";
        assert_eq!(
            say(1000, 1001, 12),
            format!("edit #3 (replace_lines in f.txt): lines 1000\u{2013}1001 are past the end of the file, which has 12 lines; give lines between 1 and 12, {tail}")
        );
        assert_eq!(
            say(13, 13, 12),
            format!("edit #3 (replace_lines in f.txt): line 13 is past the end of the file, which has 12 lines; give lines between 1 and 12, {tail}")
        );
        assert_eq!(
            say(11, 14, 12),
            format!("edit #3 (replace_lines in f.txt): lines 11\u{2013}14 run past the end of the file, which has 12 lines (so lines 13\u{2013}14 are not there); give lines between 1 and 12, {tail}")
        );
        assert_eq!(
            say(2, 2, 1),
            format!("edit #3 (replace_lines in f.txt): line 2 is past the end of the file, which has 1 line; give start 1 and end 1, {tail}")
        );
        assert_eq!(
            say(0, 1, 5),
            format!("edit #3 (replace_lines in f.txt): line 0 does not exist: lines are numbered from 1, and the file has 5 lines; give lines between 1 and 5, {tail}")
        );
        assert_eq!(
            say(3, 2, 5),
            format!("edit #3 (replace_lines in f.txt): \"start\" (3) is after \"end\" (2): the range runs from start to end, both included, and the file has 5 lines; give lines between 1 and 5, {tail}")
        );
        assert_eq!(
            say(1, 1, 0),
            "edit #3 (replace_lines in f.txt): the file is empty, so it has no line to replace: use append (or prepend) to add text to it, or replace_file"
        );
    }
}
