//! `replace_body`: the bytes between a function's braces, or its Python block,
//! replaced by the content moved to the body's depth (docs/symbols.md, "replace_body").

use std::ops::Range;

use super::super::symbol::{whole_lines_owned, without_final_terminator};
use super::{starts_with_string, Target};
use crate::edit::EditError;
use crate::syntax::{self, Body};

/// The splice of `replace_body` with `content` on `at`'s definition.
pub(super) fn splice(
    at: &Target<'_, '_>,
    content: &str,
) -> Result<(Range<usize>, Vec<u8>), EditError> {
    let body = syntax::parts::body(at.edit.path, at.base(), syntax::parts::NodeAt::of(at.def))
        .map_err(|e| at.part_error(e))?;
    match body {
        Body::Braced { open, close } => braced(at, content, open, close),
        Body::Indented {
            colon_end,
            start,
            end,
            docstring_end,
        } => indented(at, content, colon_end, start, end, docstring_end),
    }
}

/// A body between braces: the lines between the brace lines when each brace ends or
/// starts its line, else the bytes between the braces, with the new lines on lines
/// of their own.
fn braced(
    at: &Target<'_, '_>,
    content: &str,
    open: usize,
    close: usize,
) -> Result<(Range<usize>, Vec<u8>), EditError> {
    let terminator = at.terminator();
    // `{` ends its line (a comment may follow it): the body starts on the next line.
    let after_open = at
        .blank_or_comment(open, at.line_end(open).min(close.max(open)))
        .then(|| at.line_end(open))
        .filter(|s| *s <= close);
    let close_line = at.line_start(close);
    let close_starts_line = close_line > open && at.blank_or_comment(close_line, close);
    let outer = match close_starts_line {
        true => at.indent_at(close).to_vec(),
        false => at.indent_at(open.saturating_sub(1)).to_vec(),
    };
    // The body's depth: that of its first line with text, or one level in.
    let inner = after_open
        .and_then(|s| first_text_line(at, s, close))
        .map(|l| at.indent_at(l).to_vec())
        .unwrap_or_else(|| [outer.as_slice(), &at.unit()].concat());
    let lines = match content.trim().is_empty() {
        true => Vec::new(),
        false => whole_lines_owned(at.edit.prepared(content, at.def, &inner)?, terminator),
    };
    let empty = lines.is_empty();
    let (start, lead): (usize, &[u8]) = match (after_open, close_starts_line) {
        (Some(s), _) => (s, b""),
        (None, true) => (open, terminator),
        (None, false) if empty => (open, b""),
        (None, false) => (open, terminator),
    };
    let (end, tail): (usize, &[u8]) = match close_starts_line {
        true => (close_line.max(start), b""),
        false if empty && after_open.is_none() => (close, b""),
        false => (close, &outer),
    };
    Ok((start..end, [lead, &lines, tail].concat()))
}

/// The first line start in `from..to` whose line holds text other than whitespace.
fn first_text_line(at: &Target<'_, '_>, from: usize, to: usize) -> Option<usize> {
    let bytes = at.base().get(from..to)?;
    let mut offset = from;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        if !line.trim_ascii().is_empty() {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// A Python block: from the line after the header through its last statement's line
/// (comment lines indented under it after that stay), the docstring kept unless the
/// content starts with a string. A block on the header's own line (`def f(): return
/// 1`) becomes an indented block on lines of its own.
fn indented(
    at: &Target<'_, '_>,
    content: &str,
    colon_end: usize,
    start: usize,
    end: usize,
    docstring_end: Option<usize>,
) -> Result<(Range<usize>, Vec<u8>), EditError> {
    let terminator = at.terminator();
    let header_line_end = at.line_end(colon_end.saturating_sub(1));
    let one_line = start < header_line_end;
    let keep_docstring = docstring_end.filter(|_| !starts_with_string(content));
    let range_end = at.line_end(end.saturating_sub(1).max(start));
    let inner = match one_line {
        true => [at.indent_at(colon_end.saturating_sub(1)), &at.unit()].concat(),
        false => at.indent_at(start).to_vec(),
    };
    let lines = whole_lines_owned(at.edit.prepared(content, at.def, &inner)?, terminator);
    let lines = match content.trim().is_empty() {
        true => Vec::new(),
        false => lines,
    };
    let open_end = range_end == at.base().len() && !at.base().ends_with(b"\n");
    let fit_end = |text: Vec<u8>| match open_end {
        true => without_final_terminator(&text).to_vec(),
        false => text,
    };
    if let Some(doc_end) = keep_docstring {
        let doc_line_end = at.line_end(doc_end.saturating_sub(1));
        if one_line || !at.blank_or_comment(doc_end, doc_line_end) {
            return Err(at.unsupported(
                "a docstring that shares its line with the header or with other code",
            ));
        }
        // After the docstring's line: the docstring stays.
        if doc_end >= end {
            let text = match open_end {
                true => [terminator, without_final_terminator(&lines)].concat(),
                false => lines,
            };
            return Ok((doc_line_end..doc_line_end, text));
        }
        return Ok((doc_line_end..range_end, fit_end(lines)));
    }
    match one_line {
        true => {
            // `def f(): x` → `def f():` + terminator + the lines.
            let text = [terminator, &lines].concat();
            Ok((colon_end..range_end, fit_end(text)))
        }
        false => Ok((header_line_end..range_end, fit_end(lines))),
    }
}
