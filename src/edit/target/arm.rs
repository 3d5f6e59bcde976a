//! `replace_arm`: one arm of a Rust `match` or case of a Go `switch` in a function,
//! by its pattern as written (docs/symbols.md, "replace_arm").

use std::ops::Range;

use super::super::symbol::whole_lines_owned;
use super::{with_comma, Target};
use crate::edit::EditError;
use crate::syntax::{self, Language};

/// The splice of replacing the arm `pattern` (its `occurrence`-th, 1-based) in `at`'s
/// function with `content`.
pub(super) fn splice(
    at: &Target<'_, '_>,
    pattern: &str,
    content: &str,
    occurrence: Option<usize>,
) -> Result<(Range<usize>, Vec<u8>), EditError> {
    let arms = syntax::parts::arms(at.edit.path, at.base(), syntax::parts::NodeAt::of(at.def))
        .map_err(|e| at.part_error(e))?;
    let wanted = pattern.trim();
    let matching: Vec<&syntax::Arm> = arms.iter().filter(|a| a.pattern == wanted).collect();
    let needle = || format!("arm {wanted:?} in {:?}", at.def.path);
    let arm = match (occurrence, matching.as_slice()) {
        (_, []) => {
            let mut patterns: Vec<String> = arms
                .iter()
                .take(20)
                .map(|a| format!("{:?}", a.pattern))
                .collect();
            if arms.len() > 20 {
                patterns.push("…".into());
            }
            let hint = match patterns.is_empty() {
                true => "the function has no `match` / `switch` arms".to_string(),
                false => format!(
                    "its arms' patterns are {}; give one exactly as written (a Rust arm's \
                     text before `=>`, guard included; a Go case's text between `case` and \
                     `:`; or \"default\")",
                    patterns.join(", ")
                ),
            };
            return Err(EditError::TargetNotFound {
                path: at.edit.path.into(),
                op: at.edit.op,
                needle: needle(),
                index: at.edit.index,
                hint,
            });
        }
        (None, [one]) => *one,
        (None, _) => {
            return Err(EditError::AmbiguousTarget {
                path: at.edit.path.into(),
                op: at.edit.op,
                needle: needle(),
                index: at.edit.index,
                count: matching.len(),
                lines: matching.iter().map(|a| at.line_of(a.start)).collect(),
            })
        }
        (Some(n), _) => n
            .checked_sub(1)
            .and_then(|i| matching.get(i).copied())
            .ok_or_else(|| EditError::OccurrenceOutOfRange {
                path: at.edit.path.into(),
                op: at.edit.op,
                needle: needle(),
                index: at.edit.index,
                occurrence: n,
                count: matching.len(),
            })?,
    };
    let start = at.line_start(arm.start);
    let end = at.line_end(arm.end.saturating_sub(1).max(arm.start));
    let own_lines = at
        .base()
        .get(start..arm.start)
        .unwrap_or_default()
        .trim_ascii()
        .is_empty()
        && at.blank_or_comment(arm.end, end);
    if !own_lines {
        return Err(at.unsupported("an arm that shares a line with other code"));
    }
    let depth = at.indent_at(arm.start).to_vec();
    let text = whole_lines_owned(at.edit.prepared(content, at.def, &depth)?, at.terminator());
    // A Rust arm whose value is not a block needs a comma before the next arm, and
    // a last arm keeps the trailing comma it had.
    let rust = at.language() == Some(Language::Rust);
    let code_end = text.trim_ascii_end();
    let needs_comma = rust
        && (!arm.last || arm.comma)
        && !code_end.ends_with(b",")
        && !code_end.ends_with(b"}")
        && !last_line_is_comment(code_end);
    let text = match needs_comma {
        true => with_comma(&text),
        false => text,
    };
    Ok((start..end, text))
}

/// True when the last line of `text` is a comment only.
fn last_line_is_comment(text: &[u8]) -> bool {
    let line = text.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    line.trim_ascii_start().starts_with(b"//")
}
