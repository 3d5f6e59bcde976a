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
//!
//! Before that the text is written in the file's line endings when it has one
//! convention, and moved to the definition's depth ([`reindent`]); after it, the result
//! of the one splice is checked (`SymbolEdit::checked`): Python blocks left empty and
//! definitions moved to another scope (docs/symbols.md, "Indentation" and "What a
//! symbol op may not change").

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

/// Where the new text of an op belongs, for the scope check of
/// [`SymbolEdit::checked`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// Next to the definition (or in its place): in the scope around it.
    Around,
    /// Inside the definition (its body, a member, an arm): in the definition itself.
    Inside,
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
        self.splicable(def)?;
        let terminator = self.terminator(def);
        let at_eof_without_newline = !self
            .base
            .get(..def.end)
            .unwrap_or_default()
            .ends_with(b"\n");
        let indent = leading_indent(self.base.get(def.signature_start..).unwrap_or_default());
        let (range, text) = match action {
            Action::Replace(content) => {
                let content = self.prepared(content, def, indent)?;
                let text = whole_lines_owned(content, terminator);
                let text = match at_eof_without_newline {
                    true => without_final_terminator(&text).to_vec(),
                    false => text,
                };
                (def.signature_start..def.end, text)
            }
            Action::InsertBefore(text) => {
                let text = self.prepared(text, def, indent)?;
                (
                    def.trivia_start..def.trivia_start,
                    whole_lines_owned(text, terminator),
                )
            }
            Action::InsertAfter(text) => {
                let text = whole_lines_owned(self.prepared(text, def, indent)?, terminator);
                let text = match at_eof_without_newline {
                    true => [terminator, without_final_terminator(&text)].concat(),
                    false => text,
                };
                (def.end..def.end, text)
            }
            Action::Delete => (def.trivia_start..def.end, Vec::new()),
        };
        let text = self.checked(
            defs,
            def,
            action,
            Scope::Around,
            range.clone(),
            text,
            indent,
            terminator,
        )?;
        Ok((range, Cow::Owned(text)))
    }

    /// The outline of the file, found once for all symbol and target ops of the file.
    ///
    /// # Errors
    /// As [`Self::unavailable`].
    pub(super) fn definitions(&self) -> Result<&[Definition], EditError> {
        self.outline
            .get_or_init(|| syntax::outline(self.path, self.base))
            .as_ref()
            .map(Vec::as_slice)
            .map_err(|e| self.unavailable(*e))
    }

    /// Refuses a definition that cannot be spliced as whole lines: one with a parse
    /// error or one sharing a line with other code ([`EditError::SymbolNotSplicable`]).
    pub(super) fn splicable(&self, def: &Definition) -> Result<(), EditError> {
        let problem = match (def.parse_error, def.shared_line) {
            (Some(line), _) => Some(("has a parse error", line)),
            (None, Some(line)) => Some(("shares a line with other code", line)),
            (None, None) => None,
        };
        match problem {
            Some((problem, line)) => Err(EditError::SymbolNotSplicable {
                path: self.path.into(),
                op: self.op,
                symbol: self.symbol.into(),
                index: self.index,
                problem,
                line,
                first_line: def.signature_line,
                last_line: def.last_line,
            }),
            None => Ok(()),
        }
    }

    /// `text` in the file's line-ending convention ([`uniform_terminator`]) and
    /// re-indented to `indent` ([`reindent`]).
    ///
    /// # Errors
    /// [`EditError::SymbolCheckFailed`] (`indentation_mismatch`): Python text whose
    /// lines are not all at or below the depth of its first line.
    pub(super) fn prepared(
        &self,
        text: &str,
        def: &Definition,
        indent: &[u8],
    ) -> Result<Vec<u8>, EditError> {
        let text = match uniform_terminator(self.base) {
            Some(t) => with_terminators(text.as_bytes(), t),
            None => text.as_bytes().to_vec(),
        };
        match reindent(&text, indent) {
            Reindented::Same => Ok(text),
            Reindented::Moved(moved) => Ok(moved),
            Reindented::Inconsistent { line } if self.is_python() => Err(self.check_failed(
                "indentation_mismatch",
                def.signature_line,
                format!(
                    "line {line} of the new text is indented less than its first line, so \
                         it cannot be moved as one block to the definition's depth ({} \
                         columns, line {}); in Python that would change which block each line \
                         belongs to. Indent every line of the text relative to its first line \
                         (docs/symbols.md, \"Indentation\")",
                    indent.len(),
                    def.signature_line
                ),
            )),
            // In a brace language indentation does not change the meaning: kept as written.
            Reindented::Inconsistent { .. } => Ok(text),
        }
    }

    pub(super) fn is_python(&self) -> bool {
        syntax::Language::of_path(self.path) == Some(syntax::Language::Python)
    }

    pub(super) fn check_failed(
        &self,
        check: &'static str,
        line: usize,
        detail: String,
    ) -> EditError {
        EditError::SymbolCheckFailed {
            path: self.path.into(),
            op: self.op,
            symbol: self.symbol.into(),
            index: self.index,
            check,
            line,
            detail,
        }
    }

    /// The text of the splice `range` ← `text` once the candidate it makes (the base
    /// with this one splice) is checked by the language's rules and for scope changes
    /// (docs/symbols.md, "What a symbol op may not change"):
    /// - Python: a block the splice leaves without a statement (a class's only method
    ///   deleted) gets `pass` on a delete, and is refused (`empty_block`) otherwise;
    /// - when the candidate parses cleanly, every definition outside the splice keeps its
    ///   path, and the definitions of the new text sit in the scope of the one it
    ///   replaces or is inserted next to (`symbol_scope_changed`); with
    ///   [`Scope::Inside`] (a target op), in `def` itself.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn checked(
        &self,
        defs: &[Definition],
        def: &Definition,
        action: Action<'_>,
        scope: Scope,
        range: Range<usize>,
        text: Vec<u8>,
        indent: &[u8],
        terminator: &[u8],
    ) -> Result<Vec<u8>, EditError> {
        let candidate = |text: &[u8]| {
            [
                self.base.get(..range.start).unwrap_or_default(),
                text,
                self.base.get(range.end..).unwrap_or_default(),
            ]
            .concat()
        };
        let mut text = text;
        let mut after = candidate(&text);
        // Parsed incrementally from the base's tree; the checks below reuse the tree.
        let _ = syntax::parse_errors_since(self.path, &after, Some(self.base));
        if self.is_python() {
            let before = syntax::empty_blocks(self.path, self.base);
            let mut now = syntax::empty_blocks(self.path, &after);
            if now.len() > before.len() && matches!(action, Action::Delete) {
                // At the end of a file without a final newline, that stays so.
                let open_end = range.end == self.base.len() && !self.base.ends_with(b"\n");
                let end: &[u8] = if open_end { b"" } else { terminator };
                text = [indent, b"pass", end].concat();
                after = candidate(&text);
                now = syntax::empty_blocks(self.path, &after);
            }
            if now.len() > before.len() {
                let line = now
                    .iter()
                    .find(|l| !before.contains(l))
                    .copied()
                    .unwrap_or(def.signature_line);
                return Err(self.check_failed(
                    "empty_block",
                    line,
                    format!(
                        "the block opened on line {line} of the result would hold no \
                         statement, which Python rejects (IndentationError: expected an \
                         indented block) although the parser accepts it; give the new text \
                         a statement (`pass` at least) or delete the enclosing definition"
                    ),
                ));
            }
        }
        self.scope_check(defs, def, scope, &range, &text, &after)?;
        Ok(text)
    }

    /// The `symbol_scope_changed` check of [`Self::checked`] on `after` (the base with
    /// `range` replaced by `text`); skipped when `after` does not parse cleanly (its
    /// `syntax_error` is the finding then).
    fn scope_check(
        &self,
        defs: &[Definition],
        def: &Definition,
        scope: Scope,
        range: &Range<usize>,
        text: &[u8],
        after: &[u8],
    ) -> Result<(), EditError> {
        let report = syntax::parse_errors_since(self.path, after, Some(self.base));
        if report.is_none_or(|r| r.errors > 0) {
            return Ok(());
        }
        let Ok(new_defs) = syntax::outline(self.path, after) else {
            return Ok(());
        };
        let removed = range.end - range.start;
        let moved_to = |at: usize| match at < range.start {
            true => Some(at),
            false if at >= range.end => Some(at - removed + text.len()),
            false => None,
        };
        // A definition belongs to the old or new text when its signature starts there.
        let inside_old = |d: &Definition| (range.start..range.end).contains(&d.signature_start);
        let new_end = range.start + text.len();
        let inside_new = |d: &Definition| (range.start..new_end).contains(&d.signature_start);
        let mut moved: Vec<String> = Vec::new();
        let mut first_line = None;
        for old in defs.iter().filter(|d| !inside_old(d)) {
            let Some(at) = moved_to(old.signature_start) else {
                continue;
            };
            let now = new_defs
                .iter()
                .find(|d| d.signature_start == at && !inside_new(d));
            match now {
                Some(now) if now.path == old.path => {}
                Some(now) => {
                    first_line.get_or_insert(now.signature_line);
                    moved.push(format!("{:?} would become {:?}", old.path, now.path));
                }
                None => {
                    first_line.get_or_insert(old.signature_line);
                    moved.push(format!("{:?} would no longer be a definition", old.path));
                }
            }
        }
        // The scope the new text belongs in: the definition around the target.
        let scope_of = |all: &[Definition], d: &Definition| -> Option<usize> {
            all.iter()
                .filter(|e| {
                    e.signature_start <= d.signature_start
                        && e.end >= d.end
                        && (e.signature_start, e.end) != (d.signature_start, d.end)
                })
                .max_by_key(|e| e.signature_start)
                .map(|e| e.signature_start)
        };
        let expected = match scope {
            Scope::Around => scope_of(defs, def).and_then(moved_to),
            Scope::Inside => moved_to(def.signature_start),
        };
        let added: Vec<&Definition> = new_defs.iter().filter(|d| inside_new(d)).collect();
        for d in &added {
            let around = scope_of(&new_defs, d);
            let nested_in_new = around.is_some_and(|a| a >= range.start && a < new_end);
            if nested_in_new || around == expected {
                continue;
            }
            first_line.get_or_insert(d.signature_line);
            let scope = |at: Option<usize>| match at {
                None => "the top level".to_string(),
                Some(at) => new_defs
                    .iter()
                    .find(|e| e.signature_start == at)
                    .map_or("?".into(), |e| format!("{:?}", e.path)),
            };
            moved.push(format!(
                "the new text's {:?} would be in {}, not in {}",
                d.path.rsplit('.').next().unwrap_or(&d.path),
                scope(around),
                scope(expected)
            ));
        }
        match moved.is_empty() {
            true => Ok(()),
            false => Err(self.check_failed(
                "symbol_scope_changed",
                first_line.unwrap_or(def.signature_line),
                format!(
                    "the result parses, but definitions change scope: {}; check the new \
                     text's indentation and brackets (it must open and close its own \
                     blocks) and resend",
                    moved.join("; ")
                ),
            )),
        }
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
                    .map(|d| SymbolCandidate::new(d, "exact_path"))
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
    pub(super) fn not_found_hint(&self, defs: &[Definition]) -> String {
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
        if let Some((parent, name)) = self.symbol.rsplit_once('.') {
            let prefix = format!("{parent}.");
            let mut members: Vec<&str> = defs
                .iter()
                .filter_map(|d| d.path.strip_prefix(&prefix).map(|m| (d, m)))
                .filter(|(_, m)| !m.contains('.'))
                .map(|(d, _)| d.path.as_str())
                .collect();
            members.dedup();
            if !members.is_empty() {
                let near = |m: &&str| {
                    let own = m.rsplit('.').next().unwrap_or(m);
                    edit_distance(own, name) <= (name.chars().count() / 3).max(2)
                };
                let mut close: Vec<&str> = members.iter().copied().filter(near).collect();
                close.sort_by_key(|m| edit_distance(m.rsplit('.').next().unwrap_or(m), name));
                let all = format!("the members of {parent:?} are {}", list(&members));
                return match close.is_empty() {
                    true => format!("{all}; {address}"),
                    false => format!("did you mean {}? {all}; {address}", list(&close)),
                };
            }
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
    pub(super) fn terminator(&self, def: &Definition) -> &'static [u8] {
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
pub(super) fn without_final_terminator(text: &[u8]) -> &[u8] {
    text.strip_suffix(b"\r\n")
        .or_else(|| text.strip_suffix(b"\n"))
        .unwrap_or(text)
}

/// `text` ending with a line terminator: `terminator` is added when it has none.
pub(super) fn whole_lines_owned(mut text: Vec<u8>, terminator: &[u8]) -> Vec<u8> {
    if !text.ends_with(b"\n") {
        text.extend_from_slice(terminator);
    }
    text
}

/// The spaces and tabs that start `line`.
pub(super) fn leading_indent(line: &[u8]) -> &[u8] {
    let n = line
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    &line[..n]
}

/// The line terminator of a file whose lines all end the same way: `\r\n` when every
/// `\n` follows a `\r`, `\n` when none does; `None` for a file with both, or with no
/// line terminator at all.
pub(crate) fn uniform_terminator(bytes: &[u8]) -> Option<&'static [u8]> {
    let (mut lf, mut crlf) = (false, false);
    for i in memchr::memchr_iter(b'\n', bytes) {
        match i > 0 && bytes[i - 1] == b'\r' {
            true => crlf = true,
            false => lf = true,
        }
        if lf && crlf {
            return None;
        }
    }
    match (lf, crlf) {
        (true, false) => Some(b"\n"),
        (false, true) => Some(b"\r\n"),
        _ => None,
    }
}

/// `text` with each line terminator (`\n` or `\r\n`) written as `terminator`.
fn with_terminators(text: &[u8], terminator: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive(|b| *b == b'\n') {
        match line.strip_suffix(b"\n") {
            Some(body) => {
                out.extend_from_slice(body.strip_suffix(b"\r").unwrap_or(body));
                out.extend_from_slice(terminator);
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

/// What [`reindent`] made of a text.
#[derive(Debug, PartialEq, Eq)]
enum Reindented {
    /// Already at the depth (or no line with text): unchanged.
    Same,
    /// Moved to the depth.
    Moved(Vec<u8>),
    /// A line (1-based in the text) is not indented at least as its first line with
    /// text, by the same characters: the text cannot move as one block.
    Inconsistent { line: usize },
}

/// The indentation rule of the symbol ops (docs/symbols.md, "Indentation"): the text's
/// depth is the indentation (spaces and tabs) of its first line that holds anything
/// but whitespace; when every such line starts with that same indentation, it is
/// replaced by `indent` (the definition's own) on each of them, and blank lines stay
/// as written. Lines inside a multi-line string are lines like any other.
fn reindent(text: &[u8], indent: &[u8]) -> Reindented {
    let blank = |l: &[u8]| l.iter().all(u8::is_ascii_whitespace);
    let lines: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    let Some(first) = lines.iter().find(|l| !blank(l)) else {
        return Reindented::Same;
    };
    let depth = leading_indent(first);
    let mut out = Vec::with_capacity(text.len() + lines.len() * indent.len());
    for (n, line) in lines.iter().enumerate() {
        if blank(line) {
            out.extend_from_slice(line);
            continue;
        }
        match line.strip_prefix(depth) {
            Some(rest) => {
                out.extend_from_slice(indent);
                out.extend_from_slice(rest);
            }
            None => return Reindented::Inconsistent { line: n + 1 },
        }
    }
    match depth == indent {
        true => Reindented::Same,
        false => Reindented::Moved(out),
    }
}

/// Levenshtein distance between `a` and `b`, in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
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
