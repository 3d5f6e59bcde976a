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
        "{op} in {path}: {needle} not found; the text must match the file's bytes exactly \
         (whitespace, indentation and line endings included) — check the current file \
         content or use replace_lines"
    )]
    TargetNotFound {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
    },

    /// `old` / `anchor` occurs more than once and no `occurrence` was given.
    #[error(
        "{op} in {path}: {needle} matches {count} times (lines {}); add \"occurrence\": N \
         (1-based) or include more surrounding text so that it matches once",
        join_lines(.lines)
    )]
    AmbiguousTarget {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"insert_after"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
        /// Number of non-overlapping matches.
        count: usize,
        /// 1-based line number of the start of each match.
        lines: Vec<usize>,
    },

    /// `occurrence` is larger than the number of matches.
    #[error(
        "{op} in {path}: \"occurrence\": {occurrence} requested but {needle} matches only \
         {count} time(s); use an occurrence between 1 and {count}"
    )]
    OccurrenceOutOfRange {
        /// File path as written in the plan.
        path: String,
        /// Operation name, e.g. `"replace_text"`.
        op: &'static str,
        /// The first 80 characters of the needle, quoted and escaped (`{:?}`).
        needle: String,
        /// The requested 1-based occurrence.
        occurrence: usize,
        /// Number of non-overlapping matches.
        count: usize,
    },

    /// `replace_lines` range is not within the file.
    #[error(
        "replace_lines in {path}: lines {start}..={end} are out of range; the file has \
         {line_count} line(s) — use 1 <= start <= end <= {line_count} (1-based, inclusive)"
    )]
    LineOutOfRange {
        /// File path as written in the plan.
        path: String,
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
        "{path}: edits #{} and #{} overlap; all edits of a plan apply to the same base \
         content, so merge them into one edit or split them into separate revisions",
        .first.saturating_add(1),
        .second.saturating_add(1)
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
        "{path} does not exist; text edits, replace_file and delete_file need an existing \
         file — use create_file to create it"
    )]
    FileNotFound {
        /// File path as written in the plan.
        path: String,
    },

    /// `create_file` on a path that already exists.
    #[error("{path} already exists; use replace_file to overwrite it, or a text edit to change part of it")]
    FileExists {
        /// File path as written in the plan.
        path: String,
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
        }
    }

    /// Shorthand for [`EditError::InvalidPlan`].
    pub fn invalid_plan(message: impl Into<String>) -> Self {
        EditError::InvalidPlan {
            message: message.into(),
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
            count: 3,
            lines: vec![4, 9, 20],
        };
        assert_eq!(
            e.to_string(),
            "replace_text in src/lib.rs: \"fn a()\" matches 3 times (lines 4, 9, 20); add \
             \"occurrence\": N (1-based) or include more surrounding text so that it matches once"
        );
        assert_eq!(e.code(), "ambiguous_target");
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
            EditError::FileNotFound { path: "p".into() },
            EditError::FileExists { path: "p".into() },
            EditError::LineOutOfRange {
                path: "p".into(),
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
}
