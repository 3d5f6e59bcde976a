//! Resolving the symbol ops (`replace_symbol`, `insert_before_symbol`,
//! `insert_after_symbol`, `delete_symbol`) into one byte splice each.
//!
//! A definition is found by its `.`-joined scope path in the file's outline
//! ([`crate::syntax::outline`]); its extent is whole lines (docs/symbols.md):
//! - `replace_symbol` replaces from the start of its signature line through its last
//!   line's terminator, so decorators, attributes and comments above it stay;
//! - `insert_before_symbol` inserts at the start of its first leading-trivia line;
//! - `insert_after_symbol` inserts just after its last line's terminator;
//! - `delete_symbol` removes its leading-trivia lines through its last line.
//!
//! Inserted text is whole lines: a missing final terminator is added, the file's own
//! (`\r\n` when the definition's last line, or else the file's first line, ends so).
//! At the end of a file without a final newline that stays so: the terminator goes
//! before the inserted text instead. Nothing outside the range changes.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

use super::error::{EditError, SymbolCandidate};
use crate::syntax::{self, Definition, OutlineError};

/// What a symbol op does with the definition it names.
#[derive(Debug, Clone, Copy)]
pub(super) enum Action<'e> {
    /// `replace_symbol` with its `content`.
    Replace(&'e str),
    /// `insert_before_symbol` with its `text`.
    InsertBefore(&'e str),
    /// `insert_after_symbol` with its `text`.
    InsertAfter(&'e str),
    /// `delete_symbol`.
    Delete,
}

/// One symbol op being resolved.
pub(super) struct SymbolEdit<'a> {
    /// File path as written in the plan (its extension picks the language).
    pub path: &'a str,
    /// The file's base bytes.
    pub base: &'a [u8],
    /// 0-based plan index.
    pub index: usize,
    /// Operation name.
    pub op: &'static str,
    /// The `.`-joined symbol path.
    pub symbol: &'a str,
    /// 1-based definition among those of that path.
    pub occurrence: Option<usize>,
    /// The file's outline, shared by the symbol ops of one file.
    pub outline: &'a Outline,
}

/// The outline of one file, found by its first symbol op and kept for the others.
pub(super) type Outline = OnceCell<Result<Vec<Definition>, OutlineError>>;

impl SymbolEdit<'_> {
    /// The splice of `action` on the definition this edit names.
    ///
    /// # Errors
    /// [`EditError::SyntaxFeatureDisabled`], [`EditError::UnsupportedLanguage`],
    /// [`EditError::SymbolNotFound`], [`EditError::AmbiguousSymbol`],
    /// [`EditError::OccurrenceOutOfRange`], [`EditError::SymbolNotSplicable`].
    pub fn splice<'e>(
        &self,
        action: Action<'e>,
    ) -> Result<(Range<usize>, Cow<'e, [u8]>), EditError> {
        let defs = self
            .outline
            .get_or_init(|| syntax::outline(self.path, self.base))
            .as_ref()
            .map_err(|e| self.unavailable(*e))?;
        let def = self.select(defs)?;
        let problem = match (def.parse_error, def.shared_line) {
            (Some(line), _) => Some(("has a parse error", line)),
            (None, Some(line)) => Some(("shares a line with other code", line)),
            (None, None) => None,
        };
        if let Some((problem, line)) = problem {
            return Err(EditError::SymbolNotSplicable {
                path: self.path.into(),
                op: self.op,
                symbol: self.symbol.into(),
                index: self.index,
                problem,
                line,
                first_line: def.signature_line,
                last_line: def.last_line,
            });
        }
        let terminator = self.terminator(def);
        let at_eof_without_newline = !self
            .base
            .get(..def.end)
            .unwrap_or_default()
            .ends_with(b"\n");
        Ok(match action {
            Action::Replace(content) => {
                let text = whole_lines(content, terminator);
                let text = match at_eof_without_newline {
                    true => Cow::Owned(without_final_terminator(&text).to_vec()),
                    false => text,
                };
                (def.signature_start..def.end, text)
            }
            Action::InsertBefore(text) => (
                def.trivia_start..def.trivia_start,
                whole_lines(text, terminator),
            ),
            Action::InsertAfter(text) => {
                let text = whole_lines(text, terminator);
                let text = match at_eof_without_newline {
                    true => Cow::Owned([terminator, without_final_terminator(&text)].concat()),
                    false => text,
                };
                (def.end..def.end, text)
            }
            Action::Delete => (def.trivia_start..def.end, Cow::Borrowed(&b""[..])),
        })
    }

    /// The definition named by `symbol` and `occurrence`.
    fn select<'d>(&self, defs: &'d [Definition]) -> Result<&'d Definition, EditError> {
        let mut named: Vec<&Definition> = defs.iter().filter(|d| d.path == self.symbol).collect();
        if named.iter().any(|d| !d.impl_block) {
            named.retain(|d| !d.impl_block);
        }
        let count = named.len();
        match (self.occurrence, named.as_slice()) {
            (_, []) => Err(EditError::SymbolNotFound {
                path: self.path.into(),
                op: self.op,
                symbol: self.symbol.into(),
                index: self.index,
                hint: self.not_found_hint(defs),
            }),
            (None, [one]) => Ok(one),
            (None, _) => Err(EditError::AmbiguousSymbol {
                path: self.path.into(),
                op: self.op,
                symbol: self.symbol.into(),
                index: self.index,
                candidates: named
                    .iter()
                    .map(|d| SymbolCandidate {
                        kind: d.kind.into(),
                        start_line: d.signature_line,
                        end_line: d.last_line,
                    })
                    .collect(),
            }),
            (Some(n), _) => n
                .checked_sub(1)
                .and_then(|i| named.get(i).copied())
                .ok_or_else(|| EditError::OccurrenceOutOfRange {
                    path: self.path.into(),
                    op: self.op,
                    needle: format!("symbol {:?}", self.symbol),
                    index: self.index,
                    occurrence: n,
                    count,
                }),
        }
    }

    /// Definitions with the same last name elsewhere, or else the file's top-level
    /// names.
    fn not_found_hint(&self, defs: &[Definition]) -> String {
        const SHOWN: usize = 12;
        let last = self.symbol.rsplit('.').next().unwrap_or(self.symbol);
        let mut same_name: Vec<&str> = defs
            .iter()
            .filter(|d| d.path.rsplit('.').next() == Some(last))
            .map(|d| d.path.as_str())
            .collect();
        same_name.dedup();
        let list = |names: &[&str]| {
            let mut shown: Vec<String> =
                names.iter().take(SHOWN).map(|n| format!("{n:?}")).collect();
            if names.len() > SHOWN {
                shown.push("…".into());
            }
            shown.join(", ")
        };
        let address = "a symbol is the names of its enclosing definitions and its own, joined \
                       with '.' (docs/symbols.md)";
        if !same_name.is_empty() {
            return format!("did you mean {}? {address}", list(&same_name));
        }
        let mut top: Vec<&str> = defs
            .iter()
            .filter(|d| !d.path.contains('.'))
            .map(|d| d.path.as_str())
            .collect();
        top.dedup();
        match top.is_empty() {
            true => format!("the file has no definitions; {address}"),
            false => format!("its top-level definitions are {}; {address}", list(&top)),
        }
    }

    /// The line terminator of inserted lines: that of the definition's last line, or
    /// else of the file's first line, or `\n`.
    fn terminator(&self, def: &Definition) -> &'static [u8] {
        let last = self.base.get(..def.end).unwrap_or_default();
        let crlf = if last.ends_with(b"\n") {
            last.ends_with(b"\r\n")
        } else {
            memchr::memchr(b'\n', self.base).is_some_and(|i| i > 0 && self.base[i - 1] == b'\r')
        };
        match crlf {
            true => b"\r\n",
            false => b"\n",
        }
    }

    fn unavailable(&self, e: OutlineError) -> EditError {
        let reason = match e {
            OutlineError::FeatureDisabled => {
                return EditError::SyntaxFeatureDisabled {
                    path: self.path.into(),
                    op: self.op,
                    index: self.index,
                }
            }
            OutlineError::UnknownLanguage => {
                "symbol edits work in Rust (.rs), Python (.py, .pyi), \
                 JavaScript (.js, .mjs, .cjs, .jsx), TypeScript (.ts, .mts, .cts), TSX (.tsx) and \
                 Go (.go) files, chosen by extension, and this file is none of them"
                    .to_string()
            }
            OutlineError::TooLarge => format!(
                "the file is larger than {} KiB, the most that is parsed for symbol edits",
                syntax::PARSE_MAX_BYTES >> 10
            ),
            OutlineError::TimedOut => format!(
                "parsing the file took longer than {} s, the most a parse may take (badly broken input); edit it with a text op (replace_text, replace_lines)",
                syntax::PARSE_DEADLINE_MS / 1000
            ),
        };
        EditError::UnsupportedLanguage {
            path: self.path.into(),
            op: self.op,
            index: self.index,
            reason,
        }
    }
}

/// `text` without its final line terminator (`\r\n` or `\n`), if it has one.
fn without_final_terminator(text: &[u8]) -> &[u8] {
    text.strip_suffix(b"\r\n")
        .or_else(|| text.strip_suffix(b"\n"))
        .unwrap_or(text)
}

/// `text` ending with a line terminator: `terminator` is added when it has none.
fn whole_lines<'e>(text: &'e str, terminator: &[u8]) -> Cow<'e, [u8]> {
    match text.ends_with('\n') {
        true => Cow::Borrowed(text.as_bytes()),
        false => Cow::Owned([text.as_bytes(), terminator].concat()),
    }
}

#[cfg(all(test, feature = "syntax"))]
#[path = "symbol_tests.rs"]
mod tests;

/// Without the grammars every symbol op fails with a typed error, and nothing else
/// changes.
#[cfg(all(test, not(feature = "syntax")))]
mod without_syntax {
    use super::super::plan::Edit;
    use super::super::resolve::{apply_file_edits, FileBase};
    use super::super::EditError;

    #[test]
    fn symbol_ops_need_the_syntax_feature() {
        let edit = Edit::DeleteSymbol {
            path: "a.rs".into(),
            symbol: "f".into(),
            occurrence: None,
        };
        let base = FileBase {
            bytes: Some(b"fn f() {}\n"),
            mode: None,
        };
        let e = apply_file_edits("a.rs", base, &[(0, &edit)]);
        match e {
            Err(e @ EditError::SyntaxFeatureDisabled { .. }) => {
                assert_eq!(e.code(), "syntax_feature_disabled");
                assert!(
                    e.to_string()
                        .contains("symbol edits need the `syntax` feature"),
                    "{e}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
