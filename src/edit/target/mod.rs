//! The target ops: `replace_body`, `insert_field`, `insert_variant` and
//! `replace_arm`, each resolved into one byte splice inside a definition found as the
//! symbol ops find it (docs/symbols.md, "Target modes").
//!
//! Each op picks its definition among those of its `symbol` whose kind it applies to
//! ([`select`]; an ambiguous one lists every candidate with how it matched), finds the
//! part it edits in the syntax tree ([`crate::syntax::parts`]), moves the text to
//! that part's depth by the symbol ops' indentation rule and writes it in the file's
//! line endings, and checks the result as the symbol ops do (Python's empty blocks,
//! definitions that change scope). What it cannot do safely it refuses with a typed
//! error naming what is supported and the text op that would make the same edit.

mod arm;
mod body;
mod member;
mod select;

use std::borrow::Cow;
use std::ops::Range;

use super::error::EditError;
use super::plan::Edit;
use super::symbol::{leading_indent, Action, Scope, SymbolEdit};
use crate::syntax::{Definition, Language, PartError};

/// The `symbol` and the definition `occurrence` of a target op (`replace_arm`'s
/// `occurrence` picks an arm, not a definition); `None` for any other edit.
pub(super) fn address(edit: &Edit) -> Option<(&str, Option<usize>)> {
    match edit {
        Edit::ReplaceBody {
            symbol, occurrence, ..
        }
        | Edit::InsertField {
            symbol, occurrence, ..
        }
        | Edit::InsertVariant {
            symbol, occurrence, ..
        } => Some((symbol, *occurrence)),
        Edit::ReplaceArm { symbol, .. } => Some((symbol, None)),
        _ => None,
    }
}

/// The splice of the target op `edit` on the definition `target` names.
///
/// # Errors
/// Those of the symbol ops ([`SymbolEdit::splice`]), and
/// [`EditError::SymbolCheckFailed`] with `no_body`, `wrong_kind` or
/// `unsupported_target`; for `insert_field`/`insert_variant` after a member that does
/// not exist, and for `replace_arm`, [`EditError::TargetNotFound`],
/// [`EditError::AmbiguousTarget`] and [`EditError::OccurrenceOutOfRange`].
pub(super) fn splice<'e>(
    target: &SymbolEdit<'_>,
    edit: &'e Edit,
) -> Result<(Range<usize>, Cow<'e, [u8]>), EditError> {
    let defs = target.definitions()?;
    let kinds = select::kinds(edit);
    let def = select::select(target, defs, kinds)?;
    target.splicable(def)?;
    let at = Target { edit: target, def };
    let (range, text) = match edit {
        Edit::ReplaceBody { content, .. } => body::splice(&at, content)?,
        Edit::InsertField { text, position, .. } | Edit::InsertVariant { text, position, .. } => {
            let kind = match edit {
                Edit::InsertVariant { .. } => crate::syntax::MemberKind::Variant,
                _ => crate::syntax::MemberKind::Field,
            };
            member::splice(&at, kind, text, position)?
        }
        Edit::ReplaceArm {
            pattern,
            content,
            occurrence,
            ..
        } => arm::splice(&at, pattern, content, *occurrence)?,
        _ => {
            return Err(EditError::invalid_plan(format!(
                "{} {}: not a target op",
                target.op, target.path
            )))
        }
    };
    let indent = leading_indent(target.base.get(def.signature_start..).unwrap_or_default());
    let terminator = target.terminator(def);
    let text = target.checked(
        defs,
        def,
        Action::Replace(""),
        Scope::Inside,
        range.clone(),
        text,
        indent,
        terminator,
    )?;
    Ok((range, Cow::Owned(text)))
}

/// A target op and the definition it edits.
struct Target<'t, 'a> {
    edit: &'t SymbolEdit<'a>,
    def: &'t Definition,
}

impl Target<'_, '_> {
    fn base(&self) -> &[u8] {
        self.edit.base
    }

    fn language(&self) -> Option<Language> {
        Language::of_path(self.edit.path)
    }

    /// Start of the line holding byte `at`.
    fn line_start(&self, at: usize) -> usize {
        let head = self.base().get(..at).unwrap_or_default();
        let start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
        // After a UTF-8 byte-order mark on line 1.
        match start == 0 && self.base().starts_with(b"\xEF\xBB\xBF") && at >= 3 {
            true => 3,
            false => start,
        }
    }

    /// Just after the terminator of the line holding byte `at` (or the end of file).
    fn line_end(&self, at: usize) -> usize {
        let tail = self.base().get(at..).unwrap_or_default();
        memchr::memchr(b'\n', tail).map_or(self.base().len(), |i| at + i + 1)
    }

    /// 1-based line of byte `at`.
    fn line_of(&self, at: usize) -> usize {
        let head = self.base().get(..at).unwrap_or_default();
        memchr::memchr_iter(b'\n', head).count() + 1
    }

    /// The indentation of the line holding byte `at`.
    fn indent_at(&self, at: usize) -> &[u8] {
        leading_indent(self.base().get(self.line_start(at)..).unwrap_or_default())
    }

    /// True when the bytes `from..to` hold only whitespace, or whitespace and then a
    /// comment (to the end of the line).
    fn blank_or_comment(&self, from: usize, to: usize) -> bool {
        let bytes = self.base().get(from..to).unwrap_or_default();
        let rest = bytes.trim_ascii_start();
        let comment: &[&[u8]] = match self.language() {
            Some(Language::Python) => &[b"#"],
            _ => &[b"//", b"/*"],
        };
        rest.is_empty() || comment.iter().any(|c| rest.starts_with(c))
    }

    /// One level of indentation in this file: a tab in Go or where the first indented
    /// line starts with one, else the smallest indentation of a line (2 to 8 spaces),
    /// else 4 spaces.
    fn unit(&self) -> Vec<u8> {
        if self.language() == Some(Language::Go) {
            return b"\t".to_vec();
        }
        let mut smallest: Option<usize> = None;
        for line in self.base().split(|b| *b == b'\n').take(2_000) {
            let indent = leading_indent(line);
            if indent.is_empty() || line.len() == indent.len() || line.trim_ascii().is_empty() {
                continue;
            }
            if indent[0] == b'\t' {
                return b"\t".to_vec();
            }
            let n = indent.len();
            if n >= 2 {
                smallest = Some(smallest.map_or(n, |s| s.min(n)));
            }
        }
        vec![b' '; smallest.unwrap_or(4).min(8)]
    }

    /// The file's line terminator for new lines.
    fn terminator(&self) -> &'static [u8] {
        self.edit.terminator(self.def)
    }

    /// The refusal of a construct or language the op does not support: names what
    /// is, and the text op that would make the same edit, with the definition's lines.
    fn unsupported(&self, what: &str) -> EditError {
        let def = self.def;
        let supported = match self.edit.op {
            "replace_body" => {
                "the body of a function or method with braces (Rust, JavaScript, \
                 TypeScript, Go) or a block (Python)"
            }
            "insert_field" => {
                "a Rust struct or union with braces, a Python class, a JavaScript or \
                 TypeScript class or interface, a Go struct or interface, each with its \
                 members on lines of their own"
            }
            "insert_variant" => {
                "a Rust enum or union and a TypeScript enum, with braces and the variants \
                 on lines of their own"
            }
            _ => {
                "an arm of a Rust `match` or a case of a Go `switch`, on lines of its own, \
                 in a function or method"
            }
        };
        self.edit.check_failed(
            "unsupported_target",
            def.signature_line,
            format!(
                "{} applies to {supported}; {what} is not supported here. Make the same edit \
                 with a text op: replace_lines with \"start\": {}, \"end\": {} (the lines of \
                 {:?}) and the whole new definition, or replace_symbol on {:?}",
                self.edit.op, def.signature_line, def.last_line, def.path, def.path
            ),
        )
    }

    /// The error of a [`PartError`].
    fn part_error(&self, e: PartError) -> EditError {
        let def = self.def;
        match e {
            PartError::NoBody => self.edit.check_failed(
                "no_body",
                def.signature_line,
                format!(
                    "the {} {:?} (lines {}-{}) has no body: it is a declaration only (a \
                     trait method without a default, an abstract method, an overload \
                     signature, a `declare` function or a Go function implemented \
                     elsewhere); give it one with replace_symbol, or name a definition \
                     that has one (\"occurrence\")",
                    def.kind, def.path, def.signature_line, def.last_line
                ),
            ),
            PartError::Unsupported(what) => self.unsupported(what),
            PartError::NotParsed => self.unsupported("a file whose syntax tree is not available"),
        }
    }
}

/// True when `text` (a Python body) starts with a string literal: a docstring.
fn starts_with_string(text: &str) -> bool {
    let t = text.trim_start();
    let body =
        t.trim_start_matches(|c: char| matches!(c, 'r' | 'R' | 'b' | 'B' | 'u' | 'U' | 'f' | 'F'));
    t.len() - body.len() <= 2 && body.starts_with(['"', '\''])
}

/// Where `text`'s code ends: after its last character that is not whitespace, or
/// before a line comment (`//`) on its last line. A byte offset into `text`.
fn code_end(text: &[u8]) -> usize {
    let end = text.trim_ascii_end().len();
    let line_start = text[..end]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let last = &text[line_start..end];
    match memchr::memmem::find(last, b"//") {
        Some(i) => line_start + last[..i].trim_ascii_end().len(),
        None => end,
    }
}

/// `text` with a comma after its last character that is not whitespace, unless it
/// ends with one already; before a line comment (`//`) on its last line.
fn with_comma(text: &[u8]) -> Vec<u8> {
    let code_end = code_end(text);
    if text[..code_end].ends_with(b",") {
        return text.to_vec();
    }
    [&text[..code_end], b",", &text[code_end..]].concat()
}

/// `text` without a comma after its last character that is not whitespace (nor in a
/// line comment on its last line).
fn without_comma(text: &[u8]) -> Vec<u8> {
    let code_end = code_end(text);
    match text[..code_end].strip_suffix(b",") {
        Some(head) => [head, &text[code_end..]].concat(),
        None => text.to_vec(),
    }
}

#[cfg(all(test, feature = "syntax"))]
mod tests;
