//! `insert_field` and `insert_variant`: new lines among the members of a struct,
//! union, class, interface or enum, at the members' depth, with the separating comma
//! a comma-separated list needs (docs/symbols.md, "insert_field and insert_variant").

use std::ops::Range;

use super::super::plan::Position;
use super::super::symbol::{whole_lines_owned, without_final_terminator};
use super::{with_comma, without_comma, Target};
use crate::edit::EditError;
use crate::syntax::{self, Language, Member, MemberKind};

/// The splice of inserting `text` at `position` among the members of `at`'s
/// definition.
pub(super) fn splice(
    at: &Target<'_, '_>,
    kind: MemberKind,
    text: &str,
    position: &Position,
) -> Result<(Range<usize>, Vec<u8>), EditError> {
    let members = syntax::parts::members(
        at.edit.path,
        at.base(),
        syntax::parts::NodeAt::of(at.def),
        kind,
    )
    .map_err(|e| at.part_error(e))?;
    let python = at.language() == Some(Language::Python);
    let items: Vec<&Member> = members
        .items
        .iter()
        .filter(|m| members.docstring_end.is_none_or(|d| m.start >= d))
        .collect();
    let open_line_end = at.line_end(members.open.saturating_sub(1));
    let body_start = items.first().map_or(members.close, |m| m.start);
    let own_lines = match python {
        true => {
            body_start >= open_line_end || members.docstring_end.is_some_and(|d| d >= open_line_end)
        }
        false => at.blank_or_comment(
            members.open,
            open_line_end.min(members.close.max(members.open)),
        ),
    };
    if !own_lines || (!python && open_line_end > members.close) {
        return Err(at.unsupported("a body written on one line with its braces or header"));
    }
    let terminator = at.terminator();
    let close_line = at.line_start(members.close);
    let depth: Vec<u8> = match (items.first(), members.docstring_end) {
        (Some(first), _) => at.indent_at(first.start).to_vec(),
        (None, Some(doc)) => at.indent_at(doc.saturating_sub(1)).to_vec(),
        (None, None) => [at.indent_at(members.close), &at.unit()].concat(),
    };
    let new = whole_lines_owned(at.edit.prepared(text, at.def, &depth)?, terminator);
    let anchor = match position {
        Position::First => None,
        Position::Last => items.last().copied(),
        Position::After(name) => Some(named(at, &items, name)?),
    };
    let (range, text) = match anchor {
        None => {
            let p = match (items.first(), members.docstring_end) {
                (Some(first), _) => trivia_start(at, first.start, open_line_end),
                (None, Some(doc)) => at.line_end(doc.saturating_sub(1)),
                (None, None) => close_line,
            };
            let text = match members.commas && !items.is_empty() {
                true => with_comma(&new),
                false => new,
            };
            (p..p, text)
        }
        Some(m) => {
            let line_end = at.line_end(m.end.saturating_sub(1));
            if !at.blank_or_comment(m.end, line_end) {
                return Err(at.unsupported("a member that shares its line with other code"));
            }
            match (members.commas, m.comma) {
                (true, true) => (line_end..line_end, with_comma(&new)),
                (true, false) => {
                    // The last member had no comma: it gets one, and the new one none.
                    let rest = at.base().get(m.end..line_end).unwrap_or_default();
                    let text = [b",", rest, &without_comma(&new)].concat();
                    (m.end..line_end, text)
                }
                (false, _) => (line_end..line_end, new),
            }
        }
    };
    // At the end of a file without a final newline, that stays so.
    let open_end = range.end == at.base().len() && !at.base().ends_with(b"\n");
    let text = match (open_end, range.is_empty()) {
        (true, true) => [terminator, without_final_terminator(&text)].concat(),
        (true, false) => without_final_terminator(&text).to_vec(),
        _ => text,
    };
    Ok((range, text))
}

/// The member named `name`.
fn named<'m>(
    at: &Target<'_, '_>,
    items: &[&'m Member],
    name: &str,
) -> Result<&'m Member, EditError> {
    if let Some(m) = items.iter().find(|m| m.name == name) {
        return Ok(m);
    }
    let names: Vec<String> = items
        .iter()
        .filter(|m| !m.name.is_empty())
        .map(|m| format!("{:?}", m.name))
        .collect();
    Err(EditError::TargetNotFound {
        path: at.edit.path.into(),
        op: at.edit.op,
        needle: format!("member {name:?} of {:?}", at.def.path),
        index: at.edit.index,
        hint: match names.is_empty() {
            true => "it has no named members; use \"position\": \"first\" or \"last\"".into(),
            false => format!(
                "its members are {}; give one of them in {{\"after\": NAME}}, or \"first\" or \
                 \"last\"",
                names.join(", ")
            ),
        },
    })
}

/// The start of the comment lines directly above the line of `at_byte` (its doc
/// comment), not above `floor` (the start of the first line of the body).
fn trivia_start(at: &Target<'_, '_>, at_byte: usize, floor: usize) -> usize {
    let mut p = at.line_start(at_byte);
    for _ in 0..10_000 {
        if p <= floor {
            return floor;
        }
        let prev = at.line_start(p - 1);
        let line = at
            .base()
            .get(prev..p)
            .unwrap_or_default()
            .trim_ascii_start();
        let comment = [b"//".as_slice(), b"#", b"/*", b"*"]
            .iter()
            .any(|c| line.starts_with(c));
        if !comment || prev < floor {
            return p;
        }
        p = prev;
    }
    p
}
