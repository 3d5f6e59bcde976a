//! Resolving the edits of one file into candidate bytes.
//!
//! Every text edit resolves to a *splice* on the file's base bytes — a byte range
//! `start..end` and replacement bytes — and all splices of a file are computed
//! against the same base, never against each other's output. Splices are then
//! checked for overlap and applied in one pass in `(start, end, plan index)`
//! order (at one point, a `prepend` first and an `append` last), so offsets never shift and every byte outside a matched span is kept
//! exactly (line endings, BOM, invalid UTF-8, a missing final newline).

use std::borrow::Cow;
use std::ops::Range;

use super::diff::is_binary;
use super::error::{display_needle, EditError};
#[cfg(test)]
use super::lines::line_spans;
use super::lines::{count_lines, line_range, LineIndex};
use super::near_miss;
use super::plan::{Edit, Occurrence};
use super::spliced::Spliced;
use super::symbol::{Action, Outline, SymbolEdit};
use super::validate::{Issue, Severity};

/// The state of one file before edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBase<'a> {
    /// The file's bytes; `None` = the file is absent.
    pub bytes: Option<&'a [u8]>,
    /// The file's unix mode, if known (informational; resolution does not use it).
    pub mode: Option<u32>,
}

/// The resolved post-edit state of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCandidate {
    /// Whether the file exists after the edits (`false` after `delete_file`).
    pub exists: bool,
    /// The candidate bytes (empty when `exists` is false).
    pub bytes: Vec<u8>,
    /// Mode requested by the plan (`create_file` / `replace_file` `mode`);
    /// `None` = keep the current mode (or the default for a new file).
    pub mode: Option<u32>,
    /// True if a text op changed a file whose base bytes contain a NUL byte in
    /// the first 8000 bytes (git's binary heuristic).
    pub text_op_on_binary: bool,
    /// Findings of the resolution for the revision's validation report: one
    /// `occurrences_replaced` warning per `"occurrence": "all"` edit, with the number
    /// of matches it replaced and their lines.
    pub notes: Vec<Issue>,
}

/// One resolved edit: replace `base[start..end]` (bytes) with `text`.
#[derive(Debug)]
struct Splice<'e> {
    start: usize,
    end: usize,
    text: Cow<'e, [u8]>,
    /// Among insertions at one point: 0 for prepend (first), 2 for append (last), 1
    /// for the others.
    rank: u8,
    index: usize,
}

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Applies all `edits` of one file (with their 0-based plan indices) to `base`.
///
/// All edits are resolved against the same base bytes and applied in
/// `(start byte, end byte, plan index)` order. Every edit whose target fails is
/// reported, not only the first (see [`EditError::combine`]).
///
/// # Errors
/// - [`EditError::FileNotFound`]: a text op, `replace_file` or `delete_file` on an absent file.
/// - [`EditError::FileExists`]: `create_file` on an existing file.
/// - [`EditError::TargetNotFound`], [`EditError::AmbiguousTarget`],
///   [`EditError::OccurrenceOutOfRange`]: `old` / `anchor` matching failed.
/// - [`EditError::LineOutOfRange`]: bad `replace_lines` range.
/// - [`EditError::UnresolvedTargets`]: several of the four above.
/// - [`EditError::UnsupportedEncoding`]: a text op on a UTF-16 or UTF-32 file.
/// - [`EditError::EncodingMismatch`]: non-ASCII text into a file that is not UTF-8.
/// - [`EditError::OverlappingEdits`]: two splices intersect, or a whole-file op is
///   not the only edit of its path.
/// - [`EditError::InvalidPlan`]: an edit breaks a plan-level rule (see `Plan::from_json`).
pub fn apply_file_edits(
    path: &str,
    base: FileBase<'_>,
    edits: &[(usize, &Edit)],
) -> Result<FileCandidate, EditError> {
    Ok(match resolve_file(path, base, edits)? {
        Resolved::Whole(candidate) => candidate,
        Resolved::Splices(base, splices, mut candidate) => {
            candidate.bytes = splice_all(base, &splices);
            candidate
        }
    })
}

/// [`apply_file_edits`] with a text-edited candidate kept as its base plus one
/// [`Spliced`] region (`Some`, and the [`FileCandidate`]'s `bytes` empty) instead of
/// assembled: a large file's preview holds one copy of it. Whole-file ops (and an
/// absent file) give `None` and the candidate's bytes, as [`apply_file_edits`]. Errors
/// as [`apply_file_edits`].
pub(crate) fn apply_file_edits_spliced(
    path: &str,
    base: FileBase<'_>,
    edits: &[(usize, &Edit)],
) -> Result<(FileCandidate, Option<Spliced>), EditError> {
    Ok(match resolve_file(path, base, edits)? {
        Resolved::Whole(candidate) => (candidate, None),
        Resolved::Splices(base, splices, candidate) => {
            let parts: Vec<(usize, usize, &[u8])> = splices
                .iter()
                .map(|s| (s.start, s.end, s.text.as_ref()))
                .collect();
            let spliced = Spliced::of(base, &parts).unwrap_or(Spliced {
                start: 0,
                end: 0,
                text: Vec::new(),
            });
            (candidate, Some(spliced))
        }
    })
}

/// What the edits of one file resolve to: a whole candidate (whole-file ops, an
/// absent file), or splices on the base (sorted, checked for overlap) with the
/// candidate's other fields (`bytes` empty).
enum Resolved<'b, 'e> {
    Whole(FileCandidate),
    Splices(&'b [u8], Vec<Splice<'e>>, FileCandidate),
}

fn resolve_file<'b, 'e>(
    path: &str,
    base: FileBase<'b>,
    edits: &[(usize, &'e Edit)],
) -> Result<Resolved<'b, 'e>, EditError> {
    if let Some(candidate) = apply_whole_file(path, base, edits)? {
        return Ok(Resolved::Whole(candidate));
    }
    let Some(bytes) = base.bytes else {
        return match edits.first() {
            None => Ok(Resolved::Whole(absent())),
            Some(&(index, edit)) => Err(EditError::FileNotFound {
                path: path.into(),
                op: edit.op_name(),
                index,
                near: None,
            }),
        };
    };
    if let (Some(&(index, edit)), Some((encoding, evidence))) =
        (edits.first(), wide_encoding(bytes))
    {
        return Err(EditError::UnsupportedEncoding {
            path: path.into(),
            op: edit.op_name(),
            index,
            encoding,
            evidence,
        });
    }
    let mut is_utf8: Option<bool> = None;
    let outline = Outline::default();
    // One walk of the file for all its line-addressed edits when there are several
    // (a table of 8 bytes per line); one edit walks to its lines and builds none.
    let line_edits = edits
        .iter()
        .filter(|(_, e)| matches!(e, Edit::ReplaceLines { .. }))
        .count();
    let line_index = (line_edits > 1).then(|| LineIndex::new(bytes));
    let mut splices = Vec::new();
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    for &(index, edit) in edits {
        edit.check_at(index)?;
        let non_ascii = edit.inserted_text().is_some_and(|t| !t.is_ascii());
        if non_ascii && !*is_utf8.get_or_insert_with(|| std::str::from_utf8(bytes).is_ok()) {
            return Err(EditError::EncodingMismatch {
                path: path.into(),
                op: edit.op_name(),
                index,
            });
        }
        let target = Target {
            path,
            base: bytes,
            index,
            op: edit.op_name(),
            plan: edits,
            outline: &outline,
            line_index: line_index.as_ref(),
            explain: true,
        };
        match target.resolve(edit, &mut splices) {
            Ok(note) => notes.extend(note),
            Err(e) if e.is_target_failure() => failures.push(e),
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = EditError::combine(failures) {
        return Err(e);
    }
    splices.sort_by_key(|s| (s.start, s.end, s.rank, s.index));
    check_overlaps(path, &splices)?;
    let candidate = FileCandidate {
        exists: true,
        bytes: Vec::new(),
        mode: None,
        text_op_on_binary: !edits.is_empty() && is_binary(bytes),
        notes,
    };
    Ok(Resolved::Splices(bytes, splices, candidate))
}

/// The encoding of `bytes` if it is UTF-16 or UTF-32, which text ops refuse, with
/// how it was told: its byte-order mark, or (without one) the NUL bytes that
/// mostly-ASCII text in these encodings has at fixed positions in the first 8000
/// bytes. Text in them without a BOM and without ASCII is not detected (it is then
/// simply not UTF-8).
pub fn wide_encoding(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    const BOM: &str = "byte-order mark";
    const NULS: &str = "detected from its NUL bytes";
    // UTF-32 first: its little-endian BOM starts with UTF-16LE's.
    for (mark, name) in [
        (&b"\xFF\xFE\x00\x00"[..], "UTF-32LE"),
        (b"\x00\x00\xFE\xFF", "UTF-32BE"),
        (b"\xFF\xFE", "UTF-16LE"),
        (b"\xFE\xFF", "UTF-16BE"),
    ] {
        if bytes.starts_with(mark) {
            return Some((name, BOM));
        }
    }
    let sample = &bytes[..bytes.len().min(8000)];
    // Only a file with a NUL byte can be UTF-16/32 text without a byte-order mark.
    memchr::memchr(0, sample)?;
    // Share of units whose only non-zero byte is at position `at` of `width`: a
    // mostly-ASCII text has that for most units, and no unit is all zero.
    let share = |width: usize, at: usize| -> bool {
        let units: Vec<&[u8]> = sample.chunks_exact(width).collect();
        if units.len() < 2 {
            return false;
        }
        let zero_unit = units.iter().any(|u| u.iter().all(|&b| b == 0));
        let ascii = units
            .iter()
            .filter(|u| u.iter().enumerate().all(|(i, &b)| (i == at) == (b != 0)))
            .count();
        !zero_unit && ascii * 10 >= units.len() * 9
    };
    [
        (4, 0, "UTF-32LE"),
        (4, 3, "UTF-32BE"),
        (2, 0, "UTF-16LE"),
        (2, 1, "UTF-16BE"),
    ]
    .into_iter()
    .find(|&(width, at, _)| share(width, at))
    .map(|(_, _, name)| (name, NULS))
}

fn absent() -> FileCandidate {
    FileCandidate {
        exists: false,
        bytes: Vec::new(),
        mode: None,
        text_op_on_binary: false,
        notes: Vec::new(),
    }
}

/// Handles `replace_file` / `create_file` / `write_file` / `delete_file`; `Ok(None)` if
/// there is none.
fn apply_whole_file(
    path: &str,
    base: FileBase<'_>,
    edits: &[(usize, &Edit)],
) -> Result<Option<FileCandidate>, EditError> {
    let Some(&(index, edit)) = edits.iter().find(|(_, e)| !e.is_text_op()) else {
        return Ok(None);
    };
    if let Some(&(other, _)) = edits.iter().find(|(i, _)| *i != index) {
        return Err(overlap(path, index, other));
    }
    edit.check_at(index)?;
    let exists = base.bytes.is_some();
    match edit {
        Edit::CreateFile { .. } if exists => Err(EditError::FileExists {
            path: path.into(),
            index,
        }),
        Edit::CreateFile { .. } | Edit::WriteFile { .. } => Ok(Some(whole_file_candidate(edit)?)),
        _ if !exists => Err(EditError::FileNotFound {
            path: path.into(),
            op: edit.op_name(),
            index,
            near: None,
        }),
        Edit::DeleteFile { .. } => Ok(Some(absent())),
        _ => Ok(Some(whole_file_candidate(edit)?)),
    }
}

fn whole_file_candidate(edit: &Edit) -> Result<FileCandidate, EditError> {
    Ok(FileCandidate {
        exists: true,
        bytes: edit.content_bytes()?.unwrap_or_default(),
        mode: edit.mode(),
        text_op_on_binary: false,
        notes: Vec::new(),
    })
}

fn overlap(path: &str, a: usize, b: usize) -> EditError {
    EditError::OverlappingEdits {
        path: path.into(),
        first: a.min(b),
        second: a.max(b),
    }
}

/// One text edit being resolved: where, and the other edits of its file (to explain
/// a target that one of them creates).
struct Target<'a> {
    path: &'a str,
    base: &'a [u8],
    index: usize,
    op: &'static str,
    plan: &'a [(usize, &'a Edit)],
    /// The file's definitions, found once for all symbol ops of the file.
    outline: &'a Outline,
    /// The file's line table, when several edits address lines.
    line_index: Option<&'a LineIndex>,
    /// Whether a failure explains itself ([`Target::why_not_found`]); off while
    /// another edit is applied alone to explain one (no hint of a hint).
    explain: bool,
}

impl Target<'_> {
    /// Resolves `edit` into splices appended to `out`; returns the note of an
    /// `"occurrence": "all"` edit.
    fn resolve<'e>(
        &self,
        edit: &'e Edit,
        out: &mut Vec<Splice<'e>>,
    ) -> Result<Option<Issue>, EditError> {
        let rank = match edit {
            Edit::Prepend { .. } => 0,
            Edit::Append { .. } => 2,
            _ => 1,
        };
        let mut push = |range: Range<usize>, text: Cow<'e, [u8]>| {
            out.push(Splice {
                start: range.start,
                end: range.end,
                text,
                rank,
                index: self.index,
            })
        };
        match edit {
            Edit::ReplaceText {
                old,
                new,
                occurrence: Some(Occurrence::All),
                ..
            } => {
                let matches = find_all(self.base, old.as_bytes());
                if matches.is_empty() {
                    return Err(self.not_found(old));
                }
                for &at in &matches {
                    push(at..at + old.len(), Cow::Borrowed(new.as_bytes()));
                }
                return Ok(Some(self.replaced_all(old, &matches)));
            }
            Edit::ReplaceText {
                old,
                new,
                occurrence,
                ..
            } => {
                let at = self.select_match(old, occurrence.and_then(Occurrence::nth))?;
                push(at..at + old.len(), Cow::Borrowed(new.as_bytes()));
            }
            Edit::InsertBefore {
                anchor,
                text,
                occurrence,
                ..
            } => {
                let at = self.select_match(anchor, *occurrence)?;
                push(at..at, Cow::Borrowed(text.as_bytes()));
            }
            Edit::InsertAfter {
                anchor,
                text,
                occurrence,
                ..
            } => {
                let at = self.select_match(anchor, *occurrence)? + anchor.len();
                push(at..at, Cow::Borrowed(text.as_bytes()));
            }
            Edit::Prepend { text, .. } => {
                let at = if self.base.starts_with(UTF8_BOM) {
                    UTF8_BOM.len()
                } else {
                    0
                };
                push(at..at, Cow::Borrowed(text.as_bytes()));
            }
            Edit::Append { text, .. } => {
                let at = self.base.len();
                push(at..at, Cow::Borrowed(text.as_bytes()));
            }
            Edit::ReplaceLines {
                start,
                end,
                content,
                ..
            } => {
                let (range, text) = self.line_splice(*start, *end, content.as_bytes())?;
                push(range, text);
            }
            Edit::ReplaceSymbol { .. }
            | Edit::InsertBeforeSymbol { .. }
            | Edit::InsertAfterSymbol { .. }
            | Edit::DeleteSymbol { .. } => {
                if let Some((symbol, occurrence, action)) = symbol_action(edit) {
                    let (range, text) = self.symbol(symbol, occurrence).splice(action)?;
                    push(range, text);
                }
            }
            Edit::ReplaceBody { .. }
            | Edit::InsertField { .. }
            | Edit::InsertVariant { .. }
            | Edit::ReplaceArm { .. } => {
                if let Some((symbol, occurrence)) = super::target::address(edit) {
                    let target = self.symbol(symbol, occurrence);
                    let (range, text) = super::target::splice(&target, edit)?;
                    push(range, text);
                }
            }
            _ => {
                return Err(EditError::invalid_plan(format!(
                    "{} {}: not a text edit",
                    self.op, self.path
                )))
            }
        }
        Ok(None)
    }

    fn symbol<'s>(&'s self, symbol: &'s str, occurrence: Option<usize>) -> SymbolEdit<'s> {
        SymbolEdit {
            path: self.path,
            base: self.base,
            index: self.index,
            op: self.op,
            symbol,
            occurrence,
            outline: self.outline,
        }
    }

    /// Picks the byte offset of the match of `needle` selected by `occurrence`
    /// (1-based), or the only match when `occurrence` is `None`.
    fn select_match(&self, needle: &str, occurrence: Option<usize>) -> Result<usize, EditError> {
        let matches = find_all(self.base, needle.as_bytes());
        let count = matches.len();
        let chosen = match occurrence {
            None if count > 1 => {
                return Err(EditError::AmbiguousTarget {
                    path: self.path.into(),
                    op: self.op,
                    needle: display_needle(needle),
                    index: self.index,
                    count,
                    lines: line_numbers(self.base, &matches),
                })
            }
            None => matches.first(),
            Some(n) => n.checked_sub(1).and_then(|i| matches.get(i)),
        };
        match (chosen, occurrence) {
            (Some(&at), _) => Ok(at),
            (None, Some(occurrence)) if count > 0 => Err(EditError::OccurrenceOutOfRange {
                path: self.path.into(),
                op: self.op,
                needle: display_needle(needle),
                index: self.index,
                occurrence,
                count,
            }),
            (None, _) => Err(self.not_found(needle)),
        }
    }

    fn not_found(&self, needle: &str) -> EditError {
        EditError::TargetNotFound {
            path: self.path.into(),
            op: self.op,
            needle: display_needle(needle),
            index: self.index,
            hint: if self.explain {
                self.why_not_found(needle)
            } else {
                String::new()
            },
        }
    }

    /// What differs between `needle` and the file, when it can be told, and how to
    /// write the edit.
    fn why_not_found(&self, needle: &str) -> String {
        let (base, n) = (self.base, needle.as_bytes());
        if let Some(hint) = self.made_by_another_edit(needle) {
            return hint;
        }
        let has_crlf = memchr::memmem::find(base, b"\r\n").is_some();
        let bare_lf = n
            .iter()
            .enumerate()
            .any(|(i, &b)| b == b'\n' && (i == 0 || n[i - 1] != b'\r'));
        if has_crlf && bare_lf {
            let crlf = needle.replace("\r\n", "\n").replace('\n', "\r\n");
            let matches = memchr::memmem::find(base, crlf.as_bytes()).is_some();
            return format!(
                "the file's lines end with CRLF (\\r\\n) but the text uses LF (\\n){} — write \
                 each line ending as \\r\\n in the text to find, and in the new text too to keep \
                 the file's line endings",
                if matches {
                    ", and with \\r\\n it matches"
                } else {
                    ""
                }
            );
        }
        if !has_crlf && n.windows(2).any(|w| w == b"\r\n") {
            return "the file's lines end with LF (\\n) but the text uses CRLF (\\r\\n) — \
                    write each line ending as \\n"
                .into();
        }
        let trimmed = n
            .strip_suffix(b"\r\n")
            .or_else(|| n.strip_suffix(b"\n"))
            .unwrap_or(n);
        if !base.ends_with(b"\n") && trimmed.len() < n.len() && base.ends_with(trimmed) {
            return "the file has no final newline (its last line ends without \\n), and the \
                    text ends with one — drop the trailing \\n from the text to find (and \
                    from the new text, to keep the file without a final newline)"
                .into();
        }
        if let Some(hint) = near_miss::whitespace(base, n) {
            return hint;
        }
        if base.is_empty() {
            return "the file is empty — use append (or prepend) to add text to it, or \
                    replace_file"
                .into();
        }
        "the text must match the file's bytes exactly (whitespace, indentation and line \
         endings included) — check the current file content, or use replace_lines to edit \
         by line number"
            .into()
    }

    /// When another edit of this plan makes `needle` appear — its new text holds it
    /// whole, or the target spans that new text and the file's text around it — the
    /// hint saying that all edits see the same base, naming that edit and the line it
    /// applies at. The other edit is applied alone to the base to tell.
    fn made_by_another_edit(&self, needle: &str) -> Option<String> {
        let this = self.index.saturating_add(1);
        for &(other, edit) in self.plan {
            let Some(text) = edit.inserted_text() else {
                continue;
            };
            if other == self.index || text.is_empty() {
                continue;
            }
            let target = Target {
                index: other,
                op: edit.op_name(),
                explain: false,
                ..*self
            };
            let mut splices = Vec::new();
            if target.resolve(edit, &mut splices).is_err() || splices.is_empty() {
                continue;
            }
            splices.sort_by_key(|s| (s.start, s.end, s.rank, s.index));
            if check_overlaps(self.path, &splices).is_err() {
                continue;
            }
            let after = splice_all(self.base, &splices);
            if memchr::memmem::find(&after, needle.as_bytes()).is_none() {
                continue;
            }
            let line = line_numbers(self.base, &[splices[0].start])
                .first()
                .copied()
                .unwrap_or(1);
            let how = if text.contains(needle) {
                "inserts that text"
            } else {
                "inserts part of that text: the target spans its new text and the file's \
                 text next to it"
            };
            return Some(format!(
                "edit #{n} of this plan {how}, but all edits of a plan see the same base \
                 (the file before the plan: the disk for preview, the latest candidate for \
                 revise), never each other's output, so edit #{this} cannot target it — \
                 merge the two edits into one, or make edit #{this} in a later revise \
                 (edit #{n} applies at line {line} of the file)",
                n = other.saturating_add(1)
            ));
        }
        None
    }

    /// The `occurrences_replaced` note of an `"occurrence": "all"` edit.
    fn replaced_all(&self, old: &str, matches: &[usize]) -> Issue {
        const SHOWN: usize = 20;
        let lines = line_numbers(self.base, matches);
        let mut shown: Vec<String> = lines.iter().take(SHOWN).map(usize::to_string).collect();
        if lines.len() > SHOWN {
            shown.push("…".into());
        }
        Issue {
            code: "occurrences_replaced".into(),
            severity: Severity::Warning,
            path: self.path.into(),
            message: format!(
                "edit #{} (replace_text, \"occurrence\": \"all\") replaced {} match(es) of {} \
                 in {} (lines {}); check the diff",
                self.index.saturating_add(1),
                matches.len(),
                display_needle(old),
                self.path,
                shown.join(", ")
            ),
        }
    }

    /// The splice of `replace_lines start..=end` (1-based, inclusive). A UTF-8
    /// byte-order mark at the start of line 1 is kept unless `content` starts with one.
    fn line_splice<'e>(
        &self,
        start: usize,
        end: usize,
        content: &'e [u8],
    ) -> Result<(Range<usize>, Cow<'e, [u8]>), EditError> {
        // Found by walking the lines, not by a table of them: a one-line edit of a
        // large file costs no memory per line.
        let found = match self.line_index {
            Some(index) => index.range(start, end),
            None => line_range(self.base, start, end),
        };
        let mut range = found.ok_or_else(|| EditError::LineOutOfRange {
            path: self.path.into(),
            index: self.index,
            start,
            end,
            line_count: count_lines(self.base),
        })?;
        if range.start == 0 && self.base.starts_with(UTF8_BOM) && !content.starts_with(UTF8_BOM) {
            range.start = UTF8_BOM.len();
        }
        let replaced = self.base.get(range.clone()).unwrap_or_default();
        Ok((range, line_replacement(content, replaced)))
    }
}

/// Byte offsets of all non-overlapping matches of `needle` in `hay`, left to
/// right (like `str::match_indices`). An empty needle matches nowhere.
pub(crate) fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = find_from(hay, needle, from) {
        found.push(at);
        from = at + needle.len();
    }
    found
}

/// First match of `needle` in `hay` at or after byte `from`, in time linear in
/// `hay` (memchr's Two-Way/SIMD searcher, not a naive scan a hostile needle could
/// make quadratic).
fn find_from(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    memchr::memmem::find(hay.get(from..)?, needle).map(|at| from + at)
}

/// 1-based line number of each (ascending) byte offset.
fn line_numbers(bytes: &[u8], offsets: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut counted = 0;
    let mut lines = Vec::with_capacity(offsets.len());
    for &offset in offsets {
        let segment = bytes.get(counted..offset).unwrap_or_default();
        line += memchr::memchr_iter(b'\n', segment).count();
        counted = counted.max(offset);
        lines.push(line);
    }
    lines
}

/// `content`, plus the replaced range's last terminator when the range ended
/// with one and a non-empty `content` does not (so lines are never joined and
/// CRLF files stay CRLF).
fn line_replacement<'e>(content: &'e [u8], replaced: &[u8]) -> Cow<'e, [u8]> {
    if content.is_empty() || content.ends_with(b"\n") || !replaced.ends_with(b"\n") {
        return Cow::Borrowed(content);
    }
    let terminator: &[u8] = match replaced.ends_with(b"\r\n") {
        true => b"\r\n",
        false => b"\n",
    };
    Cow::Owned([content, terminator].concat())
}

/// Refuses intersecting splices. `splices` must be sorted by `(start, end, index)`.
///
/// Two ranges overlap if they intersect; an insertion overlaps a range it lies
/// strictly inside. Insertions at the same point, or at a range's start or end,
/// are fine.
fn check_overlaps(path: &str, splices: &[Splice<'_>]) -> Result<(), EditError> {
    // The non-empty splice seen so far that reaches furthest: (end, index).
    let mut reach: Option<(usize, usize)> = None;
    for splice in splices {
        if let Some((end, index)) = reach {
            if end > splice.start {
                return Err(overlap(path, index, splice.index));
            }
        }
        let extends = reach.is_none_or(|(end, _)| splice.end > end);
        if splice.end > splice.start && extends {
            reach = Some((splice.end, splice.index));
        }
    }
    Ok(())
}

/// Builds the output in one pass. `splices` must be sorted and non-overlapping.
fn splice_all(base: &[u8], splices: &[Splice<'_>]) -> Vec<u8> {
    let added: usize = splices.iter().map(|s| s.text.len()).sum();
    let mut out = Vec::with_capacity(base.len().saturating_add(added));
    let mut cursor = 0;
    for splice in splices {
        out.extend_from_slice(base.get(cursor..splice.start).unwrap_or_default());
        out.extend_from_slice(&splice.text);
        cursor = cursor.max(splice.end);
    }
    out.extend_from_slice(base.get(cursor..).unwrap_or_default());
    out
}

/// The symbol path, occurrence and splice of a symbol op; `None` for any other edit.
fn symbol_action(edit: &Edit) -> Option<(&str, Option<usize>, Action<'_>)> {
    Some(match edit {
        Edit::ReplaceSymbol {
            symbol,
            content,
            occurrence,
            ..
        } => (symbol, *occurrence, Action::Replace(content)),
        Edit::InsertBeforeSymbol {
            symbol,
            text,
            occurrence,
            ..
        } => (symbol, *occurrence, Action::InsertBefore(text)),
        Edit::InsertAfterSymbol {
            symbol,
            text,
            occurrence,
            ..
        } => (symbol, *occurrence, Action::InsertAfter(text)),
        Edit::DeleteSymbol {
            symbol, occurrence, ..
        } => (symbol, *occurrence, Action::Delete),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace_text(path: &str, old: &str, new: &str, occurrence: Option<usize>) -> Edit {
        Edit::ReplaceText {
            path: path.into(),
            old: old.into(),
            new: new.into(),
            occurrence: occurrence.map(Occurrence::Nth),
        }
    }

    fn replace_lines(start: usize, end: usize, content: &str) -> Edit {
        Edit::ReplaceLines {
            path: "f".into(),
            start,
            end,
            content: content.into(),
        }
    }

    fn insert_before(anchor: &str, text: &str) -> Edit {
        Edit::InsertBefore {
            path: "f".into(),
            anchor: anchor.into(),
            text: text.into(),
            occurrence: None,
        }
    }

    fn insert_after(anchor: &str, text: &str) -> Edit {
        Edit::InsertAfter {
            path: "f".into(),
            anchor: anchor.into(),
            text: text.into(),
            occurrence: None,
        }
    }

    fn whole(op: &str, content: Option<&str>, mode: Option<u32>) -> Edit {
        let (path, content, content_base64) = ("f".to_string(), content.map(String::from), None);
        match op {
            "create" => Edit::CreateFile {
                path,
                content,
                content_base64,
                mode,
            },
            "replace" => Edit::ReplaceFile {
                path,
                content,
                content_base64,
                mode,
                expected_base: None,
            },
            _ => Edit::DeleteFile { path },
        }
    }

    /// Applies `edits` (plan index = position) to `base`.
    fn run(base: Option<&[u8]>, edits: &[Edit]) -> Result<FileCandidate, EditError> {
        let indexed: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
        apply_file_edits(
            "f",
            FileBase {
                bytes: base,
                mode: None,
            },
            &indexed,
        )
    }

    fn bytes(base: &[u8], edits: &[Edit]) -> Vec<u8> {
        match run(Some(base), edits) {
            Ok(candidate) => candidate.bytes,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err(base: Option<&[u8]>, edits: &[Edit]) -> EditError {
        match run(base, edits) {
            Err(e) => e,
            Ok(c) => panic!("expected an error, got {c:?}"),
        }
    }

    #[test]
    fn replace_lines_preserves_crlf() {
        let base = b"a\r\nb\r\nc\r\n";
        assert_eq!(bytes(base, &[replace_lines(2, 2, "B")]), b"a\r\nB\r\nc\r\n");
        assert_eq!(
            bytes(base, &[replace_lines(1, 2, "X\r\nY")]),
            b"X\r\nY\r\nc\r\n"
        );
    }

    #[test]
    fn replace_lines_mixed_endings_uses_last_terminator() {
        let base = b"a\r\nb\nc\r\n";
        assert_eq!(bytes(base, &[replace_lines(1, 2, "X")]), b"X\nc\r\n");
        assert_eq!(bytes(base, &[replace_lines(2, 3, "X")]), b"a\r\nX\r\n");
    }

    #[test]
    fn replace_lines_content_with_newline_is_verbatim() {
        assert_eq!(
            bytes(b"a\r\nb\r\n", &[replace_lines(1, 1, "X\n")]),
            b"X\nb\r\n"
        );
    }

    #[test]
    fn replace_lines_empty_content_deletes() {
        assert_eq!(bytes(b"a\nb\nc\n", &[replace_lines(2, 2, "")]), b"a\nc\n");
        assert_eq!(bytes(b"a\nb", &[replace_lines(1, 2, "")]), b"");
    }

    #[test]
    fn replace_lines_last_line_without_newline() {
        assert_eq!(bytes(b"a\nb", &[replace_lines(2, 2, "B")]), b"a\nB");
        assert_eq!(bytes(b"a\nb", &[replace_lines(2, 2, "B\n")]), b"a\nB\n");
        assert_eq!(bytes(b"a\nb", &[replace_lines(1, 1, "X")]), b"X\nb");
    }

    #[test]
    fn replace_lines_out_of_range() {
        let expect = |start, end, line_count| EditError::LineOutOfRange {
            path: "f".into(),
            index: 0,
            start,
            end,
            line_count,
        };
        assert_eq!(
            err(Some(b"a\nb"), &[replace_lines(0, 1, "x")]),
            expect(0, 1, 2)
        );
        assert_eq!(
            err(Some(b"a\nb"), &[replace_lines(2, 1, "x")]),
            expect(2, 1, 2)
        );
        assert_eq!(
            err(Some(b"a\nb\n"), &[replace_lines(2, 3, "x")]),
            expect(2, 3, 2)
        );
        assert_eq!(err(Some(b""), &[replace_lines(1, 1, "x")]), expect(1, 1, 0));
    }

    #[test]
    fn bom_and_invalid_utf8_outside_span_preserved() {
        let base = b"\xEF\xBB\xBFhello \xFF\xFE world\r\nend\xC3";
        assert_eq!(
            bytes(base, &[replace_text("f", "world", "there", None)]),
            b"\xEF\xBB\xBFhello \xFF\xFE there\r\nend\xC3"
        );
    }

    #[test]
    fn no_trailing_newline_preserved() {
        assert_eq!(
            bytes(b"a\nb", &[replace_text("f", "a", "x", None)]),
            b"x\nb"
        );
    }

    #[test]
    fn multiple_edits_resolve_against_one_base() {
        let base = b"use std::fs;\nfn a() {}\nfn b() {}\n";
        let edits = [
            replace_text("f", "fn a()", "fn alpha()", None),
            replace_text("f", "fn b()", "fn beta()", None),
            insert_after("use std::fs;\n", "use std::io;\n"),
        ];
        assert_eq!(
            bytes(base, &edits),
            b"use std::fs;\nuse std::io;\nfn alpha() {}\nfn beta() {}\n"
        );
    }

    #[test]
    fn edits_never_see_each_others_output() {
        let edits = [
            replace_text("f", "foo", "bar", None),
            replace_text("f", "bar", "baz", None),
        ];
        assert_eq!(bytes(b"foo bar", &edits), b"bar baz");
    }

    #[test]
    fn overlapping_ranges_refused_with_indices() {
        let edits = [
            replace_text("f", "x", "y", None),
            replace_text("f", "hello w", "H", None),
            replace_text("f", "world", "W", None),
        ];
        let expected = EditError::OverlappingEdits {
            path: "f".into(),
            first: 1,
            second: 2,
        };
        assert_eq!(err(Some(b"x hello world"), &edits), expected);
    }

    #[test]
    fn identical_ranges_overlap() {
        let edits = [replace_text("f", "ab", "1", None), replace_lines(1, 1, "2")];
        let e = err(Some(b"ab\n"), &edits);
        assert_eq!(e.code(), "overlapping_edits");
    }

    #[test]
    fn insertion_strictly_inside_range_refused() {
        let edits = [
            replace_text("f", "hello", "H", None),
            insert_after("hel", "!"),
        ];
        let expected = EditError::OverlappingEdits {
            path: "f".into(),
            first: 0,
            second: 1,
        };
        assert_eq!(err(Some(b"hello"), &edits), expected);
    }

    #[test]
    fn insertion_inside_earlier_long_range_refused() {
        // The long range starts first; a short range and an insertion follow inside it.
        let edits = [replace_lines(1, 3, "X"), insert_before("c", "!")];
        let expected = EditError::OverlappingEdits {
            path: "f".into(),
            first: 0,
            second: 1,
        };
        assert_eq!(err(Some(b"a\nb\nc\n"), &edits), expected);
    }

    #[test]
    fn insertion_at_range_boundaries_allowed() {
        let edits = [
            replace_text("f", "hello", "H", None),
            insert_after("hello", "!"),
            insert_before("hello", "<"),
        ];
        assert_eq!(bytes(b"hello world", &edits), b"<H! world");
    }

    #[test]
    fn adjacent_ranges_allowed() {
        let edits = [
            replace_text("f", "ab", "1", None),
            replace_text("f", "cd", "2", None),
        ];
        assert_eq!(bytes(b"abcd", &edits), b"12");
    }

    #[test]
    fn same_point_inserts_ordered_by_plan_index() {
        let first = insert_before("b", "1");
        let second = insert_after("a", "2");
        // Pass them out of order: the plan index, not slice order, decides.
        let indexed = [(1, &second), (0, &first)];
        let base = FileBase {
            bytes: Some(b"ab"),
            mode: None,
        };
        let got = apply_file_edits("f", base, &indexed).map(|c| c.bytes);
        assert_eq!(got, Ok(b"a12b".to_vec()));
    }

    #[test]
    fn ambiguous_lists_exact_lines() {
        let e = err(
            Some(b"x\nfoo\nfoo foo\n\nfoo"),
            &[replace_text("f", "foo", "y", None)],
        );
        assert_eq!(
            e,
            EditError::AmbiguousTarget {
                path: "f".into(),
                op: "replace_text",
                needle: "\"foo\"".into(),
                index: 0,
                count: 4,
                lines: vec![2, 3, 3, 5],
            }
        );
    }

    #[test]
    fn matches_do_not_overlap() {
        let e = err(Some(b"aaaa"), &[replace_text("f", "aa", "b", None)]);
        assert!(
            matches!(e, EditError::AmbiguousTarget { count: 2, ref lines, .. } if *lines == [1, 1])
        );
        assert_eq!(
            bytes(b"aaaa", &[replace_text("f", "aa", "b", Some(2))]),
            b"aab"
        );
    }

    #[test]
    fn occurrence_selects_match() {
        let base = b"foo 1\nfoo 2\nfoo 3\n";
        assert_eq!(
            bytes(base, &[replace_text("f", "foo", "bar", Some(2))]),
            b"foo 1\nbar 2\nfoo 3\n"
        );
        let edit = Edit::InsertAfter {
            path: "f".into(),
            anchor: "foo".into(),
            text: "!".into(),
            occurrence: Some(3),
        };
        assert_eq!(bytes(base, &[edit]), b"foo 1\nfoo 2\nfoo! 3\n");
    }

    #[test]
    fn occurrence_out_of_range() {
        let e = err(Some(b"foo foo"), &[replace_text("f", "foo", "x", Some(3))]);
        assert_eq!(
            e,
            EditError::OccurrenceOutOfRange {
                path: "f".into(),
                op: "replace_text",
                needle: "\"foo\"".into(),
                index: 0,
                occurrence: 3,
                count: 2,
            }
        );
    }

    #[test]
    fn occurrence_with_no_match_is_not_found() {
        let e = err(Some(b"abc"), &[replace_text("f", "zz", "x", Some(1))]);
        assert_eq!(e.code(), "target_not_found");
    }

    #[test]
    fn occurrence_zero_is_invalid_plan() {
        let e = err(Some(b"abc"), &[replace_text("f", "a", "x", Some(0))]);
        assert_eq!(e.code(), "invalid_plan");
    }

    #[test]
    fn target_not_found_fields() {
        let e = err(Some(b"abc"), &[insert_before("a\nb", "x")]);
        assert_eq!(
            e,
            EditError::TargetNotFound {
                path: "f".into(),
                op: "insert_before",
                needle: "\"a\\nb\"".into(),
                index: 0,
                hint: "the text must match the file's bytes exactly (whitespace, indentation \
                       and line endings included) — check the current file content, or use \
                       replace_lines to edit by line number"
                    .into(),
            }
        );
    }

    #[test]
    fn empty_old_is_invalid_plan() {
        let e = err(Some(b"abc"), &[replace_text("f", "", "x", None)]);
        assert_eq!(e.code(), "invalid_plan");
    }

    #[test]
    fn needle_spans_crlf_lines() {
        let base = b"a\r\nb\r\n";
        assert_eq!(
            bytes(base, &[replace_text("f", "a\r\nb", "c", None)]),
            b"c\r\n"
        );
    }

    #[test]
    fn text_op_on_absent_file_not_found() {
        let fnf = |op| EditError::FileNotFound {
            path: "f".into(),
            op,
            index: 0,
            near: None,
        };
        let e = err(None, &[replace_text("f", "a", "b", None)]);
        assert_eq!(e, fnf("replace_text"));
        assert_eq!(
            e.to_string(),
            "edit #1 (replace_text of f): f does not exist, and replace_text needs an existing \
             file — use create_file (or write_file) to create it"
        );
        let e = err(None, &[whole("replace", Some("x"), None)]);
        assert_eq!(e, fnf("replace_file"));
        let e = err(None, &[whole("delete", None, None)]);
        assert_eq!(e, fnf("delete_file"));
        assert_eq!(
            e.to_string(),
            "edit #1 (delete_file of f): f does not exist, and delete_file needs an existing \
             file; it is already absent"
        );
    }

    #[test]
    fn create_on_existing_file_exists() {
        let e = err(Some(b""), &[whole("create", Some("x"), None)]);
        assert_eq!(
            e,
            EditError::FileExists {
                path: "f".into(),
                index: 0
            }
        );
    }

    fn replace_all(old: &str, new: &str) -> Edit {
        Edit::ReplaceText {
            path: "f".into(),
            old: old.into(),
            new: new.into(),
            occurrence: Some(Occurrence::All),
        }
    }

    #[test]
    fn replace_all_is_non_overlapping_and_never_rescans() {
        assert_eq!(bytes(b"aaa", &[replace_all("aa", "b")]), b"ba");
        assert_eq!(bytes(b"x x\nx", &[replace_all("x", "xx")]), b"xx xx\nxx");
        let c = run(Some(b"f(a)\nf(b)\n"), &[replace_all("f(", "g(")]).unwrap();
        assert_eq!(c.bytes, b"g(a)\ng(b)\n");
        assert_eq!(c.notes.len(), 1);
        assert_eq!(c.notes[0].code, "occurrences_replaced");
        assert!(
            c.notes[0].message.contains("replaced 2 match(es)"),
            "{:?}",
            c.notes
        );
        assert!(c.notes[0].message.contains("lines 1, 2"), "{:?}", c.notes);
        assert_eq!(
            err(Some(b"abc"), &[replace_all("z", "y")]).code(),
            "target_not_found"
        );
    }

    #[test]
    fn every_failed_target_is_reported() {
        let edits = [
            replace_text("f", "zz", "y", None),
            replace_text("f", "a", "y", None),
            replace_lines(9, 9, "x"),
        ];
        let EditError::UnresolvedTargets { failures } = err(Some(b"a\na\n"), &edits) else {
            panic!("expected UnresolvedTargets");
        };
        let indices: Vec<Option<usize>> = failures.iter().map(EditError::edit_index).collect();
        assert_eq!(indices, [Some(0), Some(1), Some(2)]);
    }

    #[test]
    fn prepend_and_append_fill_any_file() {
        let edits = [
            Edit::Prepend {
                path: "f".into(),
                text: "head\n".into(),
            },
            Edit::Append {
                path: "f".into(),
                text: "tail\n".into(),
            },
        ];
        assert_eq!(bytes(b"", &edits), b"head\ntail\n");
        assert_eq!(bytes(b"mid\n", &edits), b"head\nmid\ntail\n");
        assert_eq!(
            bytes(b"\xEF\xBB\xBFmid", &edits),
            b"\xEF\xBB\xBFhead\nmidtail\n"
        );
    }

    #[test]
    fn utf8_bom_is_kept_by_replace_lines_on_line_one() {
        let base = b"\xEF\xBB\xBFone\ntwo\n";
        assert_eq!(
            bytes(base, &[replace_lines(1, 1, "ONE")]),
            b"\xEF\xBB\xBFONE\ntwo\n"
        );
        assert_eq!(bytes(base, &[replace_lines(1, 2, "")]), b"\xEF\xBB\xBF");
        assert_eq!(
            bytes(base, &[replace_lines(1, 1, "\u{feff}X")]),
            b"\xEF\xBB\xBFX\ntwo\n"
        );
    }

    #[test]
    fn wide_encodings_are_detected() {
        assert_eq!(
            wide_encoding(b"\xFF\xFE@\x00{\x00"),
            Some(("UTF-16LE", "byte-order mark"))
        );
        assert_eq!(
            wide_encoding(b"\xFE\xFF\x00@"),
            Some(("UTF-16BE", "byte-order mark"))
        );
        assert_eq!(
            wide_encoding(b"\xFF\xFE\x00\x00@\x00\x00\x00").map(|e| e.0),
            Some("UTF-32LE")
        );
        assert_eq!(
            wide_encoding(b"h\x00i\x00\r\x00\n\x00").map(|e| e.0),
            Some("UTF-16LE")
        );
        assert_eq!(
            wide_encoding(b"\x00h\x00i\x00\n").map(|e| e.0),
            Some("UTF-16BE")
        );
        assert_eq!(
            wide_encoding(b"h\x00\x00\x00i\x00\x00\x00").map(|e| e.0),
            Some("UTF-32LE")
        );
        assert_eq!(wide_encoding(b"plain text\n"), None);
        assert_eq!(wide_encoding(b"ab\x00cd\x00\x00\x00"), None);
        let e = err(Some(b"\xFF\xFE@\x00"), &[replace_lines(1, 1, "x")]);
        assert_eq!(e.code(), "unsupported_encoding");
        assert!(e.to_string().contains("UTF-16LE"), "{e}");
        assert!(e.to_string().contains("replace_file"), "{e}");
    }

    #[test]
    fn non_ascii_into_a_legacy_encoding_is_refused() {
        let latin1 = b"caf\xE9\n";
        assert_eq!(
            err(Some(latin1), &[insert_after("caf", "\u{e9}")]).code(),
            "encoding_mismatch"
        );
        assert_eq!(bytes(latin1, &[insert_after("caf", "e")]), b"cafe\xE9\n");
        assert_eq!(
            bytes("café\n".as_bytes(), &[insert_after("caf", "é")]),
            "café\u{e9}\n".as_bytes()
        );
    }

    #[test]
    fn not_found_says_what_differs() {
        let hint = |base: &[u8], edits: &[Edit]| match err(Some(base), edits) {
            EditError::TargetNotFound { hint, .. } => hint,
            e => panic!("{e:?}"),
        };
        let h = hint(b"a\r\nb\r\n", &[replace_text("f", "a\nb", "c", None)]);
        assert!(
            h.contains("CRLF") && h.contains("with \\r\\n it matches"),
            "{h}"
        );
        let h = hint(b"a\nb", &[replace_text("f", "b\n", "c", None)]);
        assert!(h.contains("no final newline"), "{h}");
        let h = hint(
            b"x\n",
            &[
                insert_after("x\n", "fn new()\n"),
                replace_text("f", "fn new()", "fn b()", None),
            ],
        );
        assert!(
            h.contains("edit #1 of this plan inserts") && h.contains("same base"),
            "{h}"
        );
        assert!(h.contains("edit #2 cannot"), "{h}");
        let h = hint(b"", &[replace_text("f", "x", "c", None)]);
        assert!(h.contains("append"), "{h}");
    }

    /// Issue 33 item 5: indentation, trailing whitespace and a target that spans an
    /// earlier edit's new text are named with the line.
    #[test]
    fn not_found_names_whitespace_near_misses_and_partial_overlaps() {
        let hint = |base: &[u8], edits: &[Edit]| match err(Some(base), edits) {
            EditError::TargetNotFound { hint, .. } => hint,
            e => panic!("{e:?}"),
        };
        let base = b"class A:\n\tdef f(self):\n\t\treturn 1\n";
        let h = hint(
            base,
            &[replace_text(
                "f",
                "    def f(self):\n        return 1\n",
                "x",
                None,
            )],
        );
        assert_eq!(
            h,
            "the text matches the file at line 2 except for indentation (tabs against \
             spaces): the file indents line 2 with 1 tab (\"\\t\"), the text with 4 spaces \
             (\"    \") — copy the file's indentation into the text to find (and into the \
             new text, to keep the file's style)"
        );
        let h = hint(
            b"def f():\n    if x:\n        y()\n",
            &[insert_after("  if x:\n    y()\n", "z\n")],
        );
        assert!(
            h.starts_with(
                "the text matches the file at line 2 except for indentation (another \
                 indentation depth): the file indents line 2 with 4 spaces (\"    \"), the \
                 text with 2 spaces (\"  \")"
            ),
            "{h}"
        );
        let h = hint(
            b"a = 1\nb = 2   \nc = 3\n",
            &[replace_text("f", "a = 1\nb = 2\nc", "x", None)],
        );
        assert_eq!(
            h,
            "the text matches the file at line 2 except for trailing whitespace: line 2 of \
             the file ends with 3 spaces (\"   \"), the text's line with no trailing \
             whitespace — write the line's end as the file has it"
        );
        // The target starts in edit #1's new text and ends in the file's own text.
        let h = hint(
            b"one\ntwo\nthree\n",
            &[
                replace_text("f", "two\n", "TWO\n", None),
                replace_text("f", "TWO\nthree", "x", None),
            ],
        );
        assert_eq!(
            h,
            "edit #1 of this plan inserts part of that text: the target spans its new \
             text and the file's text next to it, but all edits of a plan see the same \
             base (the file before the plan: the disk for preview, the latest candidate \
             for revise), never each other's output, so edit #2 cannot target it — merge \
             the two edits into one, or make edit #2 in a later revise (edit #1 applies at \
             line 2 of the file)"
        );
        // No near match: the generic hint.
        let h = hint(b"abc\n", &[replace_text("f", "xyz", "x", None)]);
        assert!(
            h.starts_with("the text must match the file's bytes exactly"),
            "{h}"
        );
    }

    #[test]
    fn whole_file_ops() {
        let created = run(None, &[whole("create", Some(""), Some(0o644))]);
        let expected = FileCandidate {
            exists: true,
            bytes: vec![],
            mode: Some(0o644),
            text_op_on_binary: false,
            notes: Vec::new(),
        };
        assert_eq!(created, Ok(expected));
        let replaced = run(Some(b"old"), &[whole("replace", Some("new"), Some(0o755))]);
        assert_eq!(
            replaced.map(|c| (c.bytes, c.mode)),
            Ok((b"new".to_vec(), Some(0o755)))
        );
        let deleted = run(Some(b"old"), &[whole("delete", None, None)]);
        assert_eq!(deleted.map(|c| (c.exists, c.bytes)), Ok((false, vec![])));
    }

    #[test]
    fn replace_file_base64() {
        let edit = Edit::ReplaceFile {
            path: "f".into(),
            content: None,
            content_base64: Some("AP8=".into()),
            mode: None,
            expected_base: None,
        };
        assert_eq!(bytes(b"x", &[edit]), [0x00, 0xFF]);
    }

    #[test]
    fn whole_file_op_must_be_alone() {
        let edits = [
            replace_text("f", "a", "b", None),
            whole("delete", None, None),
        ];
        let expected = EditError::OverlappingEdits {
            path: "f".into(),
            first: 0,
            second: 1,
        };
        assert_eq!(err(Some(b"a"), &edits), expected);
    }

    #[test]
    fn text_op_on_binary_flag() {
        let base = b"ab\0cd";
        let candidate = run(Some(base), &[replace_text("f", "cd", "x", None)]);
        assert_eq!(
            candidate.map(|c| (c.bytes, c.text_op_on_binary)),
            Ok((b"ab\0x".to_vec(), true))
        );
        let text = run(Some(b"abcd"), &[replace_text("f", "cd", "x", None)]);
        assert_eq!(text.map(|c| c.text_op_on_binary), Ok(false));
    }

    #[test]
    fn no_edits_keeps_base() {
        let base = FileBase {
            bytes: Some(b"x"),
            mode: Some(0o600),
        };
        let got = apply_file_edits("f", base, &[]);
        assert_eq!(got.map(|c| (c.exists, c.bytes)), Ok((true, b"x".to_vec())));
        let got = apply_file_edits(
            "f",
            FileBase {
                bytes: None,
                mode: None,
            },
            &[],
        );
        assert_eq!(got.map(|c| c.exists), Ok(false));
    }

    #[test]
    fn line_spans_rules() {
        assert_eq!(line_spans(b""), Vec::<Range<usize>>::new());
        assert_eq!(line_spans(b"\n"), vec![0..1]);
        assert_eq!(line_spans(b"a\r\nb"), vec![0..3, 3..4]);
        assert_eq!(line_spans(b"a\n\n"), vec![0..2, 2..3]);
    }

    #[test]
    fn find_all_edges() {
        assert_eq!(find_all(b"abc", b""), Vec::<usize>::new());
        assert_eq!(find_all(b"ab", b"abc"), Vec::<usize>::new());
        assert_eq!(find_all(b"abab", b"ab"), vec![0, 2]);
        assert_eq!(find_all(b"aab", b"ab"), vec![1]);
    }

    mod model {
        use super::*;
        use proptest::prelude::*;

        /// A line: body without terminator, and its terminator ("" only for the last line).
        type Line = (String, &'static str);

        fn lines_strategy() -> impl Strategy<Value = Vec<Line>> {
            let line = ("[ab ]{0,3}", prop_oneof![Just("\n"), Just("\r\n")]);
            (prop::collection::vec(line, 1..12), "[ab]{0,2}").prop_map(|(mut lines, tail)| {
                if !tail.is_empty() {
                    lines.push((tail, ""));
                }
                lines
            })
        }

        /// (group length, is edited, replacement content).
        fn groups_strategy() -> impl Strategy<Value = Vec<(usize, bool, String)>> {
            let content = "(x|y|\n|\r\n){0,4}";
            prop::collection::vec((1usize..4, any::<bool>(), content), 1..8)
        }

        fn join(lines: &[Line]) -> Vec<u8> {
            lines
                .iter()
                .flat_map(|(b, t)| [b.as_bytes(), t.as_bytes()].concat())
                .collect()
        }

        /// Lines of `content` as (body, terminator) pairs.
        fn content_lines(content: &str) -> Vec<(String, String)> {
            content
                .split_inclusive('\n')
                .map(
                    |l| match l.strip_suffix("\r\n").or_else(|| l.strip_suffix('\n')) {
                        Some(body) => (body.to_string(), l[body.len()..].to_string()),
                        None => (l.to_string(), String::new()),
                    },
                )
                .collect()
        }

        /// The model: a Vec of lines, edited from the last range to the first.
        fn model(lines: &[Line], edits: &[(usize, usize, String)]) -> Vec<u8> {
            let mut model: Vec<(String, String)> = lines
                .iter()
                .map(|(b, t)| (b.clone(), t.to_string()))
                .collect();
            let mut sorted = edits.to_vec();
            sorted.sort_by_key(|e| std::cmp::Reverse(e.0));
            for (start, end, content) in sorted {
                let last_terminator = model[end - 1].1.clone();
                let mut new_lines = content_lines(&content);
                if let Some(last) = new_lines.last_mut() {
                    if last.1.is_empty() {
                        last.1 = last_terminator;
                    }
                }
                model.splice(start - 1..end, new_lines);
            }
            model
                .iter()
                .flat_map(|(b, t)| [b.as_bytes(), t.as_bytes()].concat())
                .collect()
        }

        fn arbitrary_edit() -> impl Strategy<Value = Edit> {
            let text = "(a|b|\n|\r\n|\u{0}|é){0,3}";
            let occurrence = prop::option::of(0usize..4);
            prop_oneof![
                (text, text, occurrence.clone())
                    .prop_map(|(o, n, occ)| replace_text("f", &o, &n, occ)),
                (text, text).prop_map(|(a, t)| insert_before(&a, &t)),
                (text, text).prop_map(|(a, t)| insert_after(&a, &t)),
                (0usize..6, 0usize..6, text).prop_map(|(s, e, c)| replace_lines(s, e, &c)),
                (text, text).prop_map(|(o, n)| Edit::ReplaceText {
                    path: "f".into(),
                    old: o,
                    new: n,
                    occurrence: Some(Occurrence::All),
                }),
                text.prop_map(|t| Edit::Prepend {
                    path: "f".into(),
                    text: t
                }),
                text.prop_map(|t| Edit::Append {
                    path: "f".into(),
                    text: t
                }),
            ]
        }

        /// Every non-overlapping match of `old`, left to right, replaced by `new`; the
        /// output is never scanned again.
        fn replace_all(base: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
            let mut out = Vec::new();
            let mut i = 0;
            while i < base.len() {
                if !old.is_empty() && base[i..].starts_with(old) {
                    out.extend_from_slice(new);
                    i += old.len();
                } else {
                    out.push(base[i]);
                    i += 1;
                }
            }
            out
        }

        proptest! {
            /// Arbitrary bytes and edits never panic; a lone successful
            /// replace_text changes exactly the bytes of one match.
            #[test]
            fn arbitrary_edits_never_panic(
                base in prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'\n'), Just(b'\r'), Just(0u8), Just(0xFFu8)], 0..40),
                edits in prop::collection::vec(arbitrary_edit(), 1..4),
            ) {
                let result = run(Some(&base), &edits);
                if let (Ok(c), [Edit::ReplaceText { old, new, occurrence, .. }]) = (&result, edits.as_slice()) {
                    if *occurrence == Some(Occurrence::All) {
                        prop_assert_eq!(&c.bytes, &replace_all(&base, old.as_bytes(), new.as_bytes()));
                        return Ok(());
                    }
                    let at = find_all(&base, old.as_bytes());
                    let spliced: Vec<Vec<u8>> = at.iter().map(|&i| {
                        [&base[..i], new.as_bytes(), &base[i + old.len()..]].concat()
                    }).collect();
                    prop_assert!(spliced.contains(&c.bytes));
                }
            }
        }

        proptest! {
            #[test]
            fn replace_lines_matches_line_model(lines in lines_strategy(), groups in groups_strategy()) {
                let mut edits = Vec::new();
                let mut next = 1;
                for (len, edited, content) in groups {
                    let end = (next + len - 1).min(lines.len());
                    if next > end { break; }
                    if edited { edits.push((next, end, content)); }
                    next = end + 1;
                }
                let plan: Vec<Edit> = edits
                    .iter()
                    .rev()
                    .map(|(s, e, c)| replace_lines(*s, *e, c))
                    .collect();
                let base = join(&lines);
                prop_assert_eq!(bytes(&base, &plan), model(&lines, &edits));
            }
        }
    }
}
