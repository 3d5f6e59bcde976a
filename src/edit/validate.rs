//! Validation of a revision's candidates: warnings a reviewer should see and
//! errors that block a commit.

use std::collections::HashMap;

use super::lines::lines;
use super::spliced::Spliced;

/// How serious an [`Issue`] is: errors block a commit, warnings and notes do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth a look; does not block a commit.
    Warning,
    /// Blocks a commit.
    Error,
    /// An outcome recorded for the reader (a check command that passed,
    /// `check_passed`); blocks nothing.
    Note,
}

/// One validation finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Issue {
    /// Stable snake_case code, e.g. `"conflict_markers"`.
    pub code: String,
    /// Warning or error.
    pub severity: Severity,
    /// The file concerned; `""` for revision-wide issues (`no_changes`).
    pub path: String,
    /// Human-readable explanation and what to do.
    pub message: String,
}

/// One file to validate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileCheck<'a> {
    /// File path (relative to the root).
    pub path: &'a str,
    /// Snapshot bytes; `None` = the file was absent.
    pub before: Option<&'a [u8]>,
    /// Candidate bytes; `None` = deleted / absent.
    pub after: Option<&'a [u8]>,
    /// True if a text op edited a binary-looking file (see `FileCandidate`).
    pub text_op_on_binary: bool,
    /// True if the file exists before and after and its metadata (mode) changes: a
    /// change even when the bytes stay.
    pub meta_changed: bool,
}

impl FileCheck<'_> {
    /// Neither the bytes nor (for a file that stays) the metadata change.
    fn unchanged(&self) -> bool {
        self.before == self.after && !self.meta_changed
    }
}

/// Validates all files of a revision.
///
/// Codes, per file in this order:
/// - `empty_candidate` (warning): `after` is empty while `before` was non-empty.
/// - `candidate_equals_source` (warning): `after == before` and the metadata stays.
/// - `conflict_markers` (error): the candidate has more conflict-marker lines
///   (see [`conflict_marker_lines`]) than the source; the message gives the
///   1-based line of the first new one.
/// - `mixed_line_endings` (warning): every line of `before` ended with `\n`, or every
///   one with `\r\n`, and lines of `after` end the other way; the message lists them
///   (1-based, the first 10). Symbol ops convert their text to the file's convention
///   (docs/plan.md, "Line endings"), so this comes from text ops.
/// - `binary_content_edited` (warning): `text_op_on_binary`.
/// - `syntax_error` (error): the candidate of a Rust, Python, JavaScript,
///   TypeScript/TSX or Go file (by extension) has parse errors and the file had none
///   (or did not exist); the message gives the first one's 1-based line and column
///   (characters). [`crate::Policy::syntax_errors`] can make it a warning.
/// - `syntax_errors_increased` (warning): such a file already had parse errors and
///   the candidate has more. Files of other languages, and files over
///   [`crate::syntax::PARSE_MAX_BYTES`], are not parsed.
///
/// Then `no_changes` (error, path `""`) if every file is unchanged, bytes and metadata
/// (or there are no files): a mode-only change is a change.
pub fn validate(files: &[FileCheck<'_>]) -> Vec<Issue> {
    let mut issues: Vec<Issue> = files.iter().flat_map(check_file).collect();
    issues.extend(no_changes(files));
    issues
}

/// The `no_changes` error of [`validate`], if every file is unchanged.
pub fn no_changes(files: &[FileCheck<'_>]) -> Option<Issue> {
    no_changes_if(files.iter().all(FileCheck::unchanged))
}

/// The `no_changes` error when `unchanged` (every file of the revision is).
pub(crate) fn no_changes_if(unchanged: bool) -> Option<Issue> {
    unchanged.then(|| {
        issue(
            "no_changes",
            Severity::Error,
            "",
            "the revision changes nothing, so there is nothing to commit; revise the plan \
             or abort the transaction"
                .into(),
        )
    })
}

/// True if any issue has [`Severity::Error`].
pub fn has_errors(issues: &[Issue]) -> bool {
    issues.iter().any(|i| i.severity == Severity::Error)
}

/// The issues of one file, in [`validate`]'s order: what [`validate`] reports for it.
pub fn check_file(file: &FileCheck<'_>) -> Vec<Issue> {
    let mut issues = Vec::new();
    let path = file.path;
    let was_non_empty = file.before.is_some_and(|b| !b.is_empty());
    if file.after.is_some_and(<[u8]>::is_empty) && was_non_empty {
        issues.push(issue(
            "empty_candidate",
            Severity::Warning,
            path,
            format!("{path} becomes empty; if you meant to remove it use delete_file, otherwise check the edit"),
        ));
    }
    if file.unchanged() {
        issues.push(issue(
            "candidate_equals_source",
            Severity::Warning,
            path,
            format!(
                "the edits leave {path} unchanged; drop them or check that they do what you meant"
            ),
        ));
    }
    let marker = file
        .after
        .and_then(|after| new_conflict_marker(file.before, after));
    if let Some(line) = marker {
        issues.push(issue(
            "conflict_markers",
            Severity::Error,
            path,
            format!("{path} line {line}: new merge conflict marker; resolve the conflict and remove the markers before committing"),
        ));
    } else {
        // Conflict markers do not parse in any language: with them, a syntax error would
        // only restate the marker error, at a misleading place, and advise allowing it.
        // The revision that removes them is checked.
        issues.extend(syntax_issue(file));
    }
    issues.extend(line_ending_issue(file));
    if file.text_op_on_binary {
        issues.push(binary_edited(path));
    }
    issues
}

/// The `binary_content_edited` warning.
fn binary_edited(path: &str) -> Issue {
    issue(
        "binary_content_edited",
        Severity::Warning,
        path,
        format!("{path} looks binary (NUL byte in the first 8000 bytes) but was edited as text; check the result or use replace_file with content_base64"),
    )
}

/// [`check_file`] of a candidate kept as `before` with one region replaced
/// ([`Spliced`]): the same issues, counted over the base and the region, not a
/// second copy. `None` when the candidate could be parsed for syntax (at most
/// [`crate::syntax::PARSE_MAX_BYTES`]): the caller assembles it and uses
/// [`check_file`].
pub(crate) fn check_spliced(
    path: &str,
    before: &[u8],
    after: &Spliced,
    text_op_on_binary: bool,
    meta_changed: bool,
) -> Option<Vec<Issue>> {
    let len = after.len(before);
    if len <= crate::syntax::PARSE_MAX_BYTES {
        return None;
    }
    let mut issues = Vec::new();
    if after.unchanged(before) && !meta_changed {
        issues.push(issue(
            "candidate_equals_source",
            Severity::Warning,
            path,
            format!(
                "the edits leave {path} unchanged; drop them or check that they do what you meant"
            ),
        ));
    }
    // The lines before the region, in it (old and new), and after it.
    let head = &before[..after.start];
    let old = &before[after.start..after.end];
    let lines_before = memchr::memchr_iter(b'\n', head).count();
    let old_lines = memchr::memchr_iter(b'\n', old).count();
    let new_lines = memchr::memchr_iter(b'\n', &after.text).count();
    let old_raw = raw_marker_lines(before);
    let new_raw: Vec<(usize, &[u8])> = old_raw
        .iter()
        .filter(|(line, _)| *line <= lines_before)
        .copied()
        .chain(
            raw_marker_lines(&after.text)
                .into_iter()
                .map(|(line, text)| (line + lines_before, text)),
        )
        .chain(
            old_raw
                .iter()
                .filter(|(line, _)| *line > lines_before + old_lines)
                .map(|&(line, text)| (line + new_lines - old_lines, text)),
        )
        .collect();
    let new_markers = delimited(new_raw);
    let marker = match new_markers.is_empty() {
        true => None,
        false => first_new_marker(delimited(old_raw), new_markers),
    };
    if let Some(line) = marker {
        issues.push(issue(
            "conflict_markers",
            Severity::Error,
            path,
            format!("{path} line {line}: new merge conflict marker; resolve the conflict and remove the markers before committing"),
        ));
    }
    // Outside the region the lines are the base's, which ended one way: only the
    // region's can end the other (its edges are line starts).
    if let Some(want) = super::symbol::uniform_terminator(before) {
        let odd = odd_endings(&after.text, want == b"\r\n")
            .into_iter()
            .map(|n| n + lines_before)
            .collect();
        issues.extend(line_ending_message(path, want == b"\r\n", odd));
    }
    if text_op_on_binary {
        issues.push(binary_edited(path));
    }
    Some(issues)
}

/// The `mixed_line_endings` warning: the file's lines all ended one way (`\n`, or
/// `\r\n`) and some lines of the candidate end the other way. The message names the
/// convention and the first lines (1-based, in the candidate) that break it.
fn line_ending_issue(file: &FileCheck<'_>) -> Option<Issue> {
    let (before, after) = (file.before?, file.after?);
    let want = super::symbol::uniform_terminator(before)?;
    if super::symbol::uniform_terminator(after) == Some(want) {
        return None;
    }
    let crlf = want == b"\r\n";
    line_ending_message(file.path, crlf, odd_endings(after, crlf))
}

/// 1-based lines of `bytes` whose terminator is not the file's (`\r\n` when `crlf`,
/// else `\n`).
fn odd_endings(bytes: &[u8], crlf: bool) -> Vec<usize> {
    memchr::memchr_iter(b'\n', bytes)
        .enumerate()
        .filter(|&(_, i)| (i > 0 && bytes[i - 1] == b'\r') != crlf)
        .map(|(n, _)| n + 1)
        .collect()
}

/// The `mixed_line_endings` warning for the candidate's lines `odd` (1-based) that
/// do not end the file's way; `None` when there are none.
fn line_ending_message(path: &str, crlf: bool, odd: Vec<usize>) -> Option<Issue> {
    const SHOWN: usize = 10;
    if odd.is_empty() {
        return None;
    }
    let mut shown: Vec<String> = odd.iter().take(SHOWN).map(usize::to_string).collect();
    if odd.len() > SHOWN {
        shown.push(format!("… ({} in all)", odd.len()));
    }
    let (own, other) = match crlf {
        true => ("CRLF (\\r\\n)", "LF (\\n)"),
        false => ("LF (\\n)", "CRLF (\\r\\n)"),
    };
    Some(issue(
        "mixed_line_endings",
        Severity::Warning,
        path,
        format!(
            "{path}: every line ended with {own} before this revision, but line{} {} of the \
             candidate end{} with {other}; write the new text with {own} line endings \
             (symbol ops convert it themselves), or keep this if the mix is meant",
            if odd.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if odd.len() == 1 { "s" } else { "" },
        ),
    ))
}

/// The `syntax_error` error or `syntax_errors_increased` warning of a changed file.
fn syntax_issue(file: &FileCheck<'_>) -> Option<Issue> {
    let after = file.after?;
    if file.before == file.after {
        return None;
    }
    let path = file.path;
    let language = crate::syntax::Language::of_path(path)?.name();
    let now = match crate::syntax::parse_errors_since(path, after, file.before) {
        Some(now) => now,
        // Language, grammars and size allow a parse, so it was cut off at the deadline:
        // only badly broken input takes that long, and a check must not be lost exactly
        // when an edit breaks a file. It counts as a syntax error.
        None if crate::syntax::ENABLED && after.len() <= crate::syntax::PARSE_MAX_BYTES => {
            return Some(issue(
                "syntax_error",
                Severity::Error,
                path,
                format!(
                    "{path}: the candidate could not be parsed as {language} within {} s (tree-sitter's \
                     error recovery takes that long only on badly broken input), so it counts as \
                     broken; fix the edit, or, if the file is meant to be broken for now, allow it \
                     with the plan's \"policy\": {{\"syntax_errors\": \"allow\"}} (CLI: --allow \
                     syntax_error)",
                    crate::syntax::PARSE_DEADLINE_MS / 1000
                ),
            ));
        }
        None => return None,
    };
    if now.errors == 0 {
        return None;
    }
    let before = match file.before {
        Some(before) => crate::syntax::parse_errors(path, before)?.errors,
        None => 0,
    };
    let (line, column) = (now.line, now.column);
    let mut region = match now.end_line > line {
        true => format!(", the first from line {line} through line {}", now.end_line),
        false => String::new(),
    };
    if let Some((l, c)) = now.unclosed {
        region.push_str(&format!(
            "; the bracket at line {l}, column {c} looks unclosed"
        ));
    }
    if before == 0 {
        let was = match file.before {
            Some(_) => "the file parsed cleanly before",
            None => "a new file",
        };
        return Some(issue(
            "syntax_error",
            Severity::Error,
            path,
            format!(
                "{path} line {line}, column {column}: the candidate does not parse as {language} \
                 ({} parse error{}{region}; {was}); fix the edit, or, if the file is meant to be broken \
                 for now, allow it with the plan's \"policy\": {{\"syntax_errors\": \"allow\"}} \
                 (CLI: --allow syntax_error)",
                now.errors,
                if now.errors == 1 { "" } else { "s" },
            ),
        ));
    }
    (now.errors > before).then(|| {
        issue(
            "syntax_errors_increased",
            Severity::Warning,
            path,
            format!(
                "{path}: parse errors as {language} grow from {before} to {} (the first at line \
                 {line}, column {column}); the file did not parse cleanly before, so this does \
                 not block a commit, but check the edit",
                now.errors
            ),
        )
    })
}

fn issue(code: &str, severity: Severity, path: &str, message: String) -> Issue {
    Issue {
        code: code.into(),
        severity,
        path: path.into(),
        message,
    }
}

/// 1-based line of the first conflict marker of `after` not matched by an
/// identical marker line of `before`, if `after` has more markers than `before`.
pub(crate) fn new_conflict_marker(before: Option<&[u8]>, after: &[u8]) -> Option<usize> {
    let new_markers = marker_lines(after);
    if new_markers.is_empty() {
        return None;
    }
    first_new_marker(marker_lines(before.unwrap_or_default()), new_markers)
}

/// [`new_conflict_marker`] of the markers of both sides ([`marker_lines`]).
fn first_new_marker(
    old_markers: Vec<(usize, &[u8])>,
    new_markers: Vec<(usize, &[u8])>,
) -> Option<usize> {
    if new_markers.len() <= old_markers.len() {
        return None;
    }
    let mut available: HashMap<&[u8], usize> = HashMap::new();
    for (_, text) in &old_markers {
        *available.entry(*text).or_default() += 1;
    }
    let first_new = new_markers
        .iter()
        .find(|(_, text)| match available.get_mut(text) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        });
    first_new.or(new_markers.last()).map(|(line, _)| *line)
}

/// (1-based line, line bytes without terminator) of each conflict-marker line.
fn marker_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    delimited(raw_marker_lines(bytes))
}

/// Every line of `bytes` that looks like a marker, labelled or bare (before
/// [`delimited`]).
fn raw_marker_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    if !may_hold_marker(bytes) {
        // Most files: no marker line, found without splitting them into lines.
        return Vec::new();
    }
    lines(bytes)
        .enumerate()
        .filter_map(|(i, line)| {
            let text = strip_terminator(line);
            is_marker(text).then_some((i + 1, text))
        })
        .collect()
}

/// `found` when one of its lines is a labelled marker, else none (bare `=======`
/// lines alone are headings' underlines).
fn delimited(found: Vec<(usize, &[u8])>) -> Vec<(usize, &[u8])> {
    let labelled = found.iter().any(|(_, text)| {
        text.starts_with(b"<<<<<<< ")
            || text.starts_with(b">>>>>>> ")
            || text.starts_with(b"||||||| ")
    });
    match labelled {
        true => found,
        false => Vec::new(),
    }
}

/// [`marker_lines`] without the prefilter: every line split off and checked. A file
/// whose marker-like lines are only bare `=======` or `|||||||` has none: a conflict's
/// markers carry labels (`<<<<<<< ours`, `||||||| base`, `>>>>>>> theirs`), while a
/// line of seven `=` alone is a Markdown or reStructuredText heading's underline.
#[cfg(test)]
fn scan_marker_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let found = lines(bytes)
        .enumerate()
        .filter_map(|(i, line)| {
            let text = strip_terminator(line);
            is_marker(text).then_some((i + 1, text))
        })
        .collect();
    delimited(found)
}

fn strip_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// 1-based lines of `bytes` that are conflict markers as git writes them: lines
/// starting with `<<<<<<< `, `||||||| ` (the diff3 style's base section) or
/// `>>>>>>> `, or equal to `|||||||` or `=======` (ending `\n`, `\r\n` or EOF) — in a
/// file that has at least one of the labelled ones (a lone `=======` is a heading's
/// underline, not a conflict).
pub fn conflict_marker_lines(bytes: &[u8]) -> Vec<usize> {
    marker_lines(bytes)
        .into_iter()
        .map(|(line, _)| line)
        .collect()
}

/// Whether `bytes` holds one of the seven-character runs every marker line of
/// [`is_marker`] starts with, anywhere; false means it has no marker line. Two SIMD
/// passes (`memchr`): the first stops at each `<`, `|` or `>`, the second looks for
/// `=======`.
fn may_hold_marker(bytes: &[u8]) -> bool {
    let run_at = |i: usize| {
        bytes
            .get(i..i + 7)
            .is_some_and(|run| run.iter().all(|b| *b == run[0]))
    };
    memchr::memchr3_iter(b'<', b'|', b'>', bytes).any(run_at)
        || memchr::memmem::find(bytes, b"=======").is_some()
}

fn is_marker(text: &[u8]) -> bool {
    text.starts_with(b"<<<<<<< ")
        || text.starts_with(b"||||||| ")
        || text.starts_with(b">>>>>>> ")
        || text == b"======="
        || text == b"|||||||"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<'a>(before: Option<&'a [u8]>, after: Option<&'a [u8]>) -> FileCheck<'a> {
        FileCheck {
            path: "f",
            before,
            after,
            text_op_on_binary: false,
            meta_changed: false,
        }
    }

    fn codes(issues: &[Issue]) -> Vec<&str> {
        issues.iter().map(|i| i.code.as_str()).collect()
    }

    /// Issue 33 item 4: text that leaves a uniform file with mixed line endings is
    /// never silent.
    #[test]
    fn mixed_line_endings_in_a_uniform_file_are_a_warning() {
        let issues = validate(&[check(Some(b"a\r\nb\r\n"), Some(b"a\r\nx\ny\nb\r\n"))]);
        assert_eq!(codes(&issues), ["mixed_line_endings"]);
        assert_eq!(issues[0].severity, Severity::Warning);
        assert_eq!(
            issues[0].message,
            "f: every line ended with CRLF (\\r\\n) before this revision, but lines 2, 3 of \
             the candidate end with LF (\\n); write the new text with CRLF (\\r\\n) line \
             endings (symbol ops convert it themselves), or keep this if the mix is meant"
        );
        let issues = validate(&[check(Some(b"a\nb\n"), Some(b"a\nb\r\n"))]);
        assert_eq!(codes(&issues), ["mixed_line_endings"]);
        assert!(
            issues[0]
                .message
                .contains("but line 2 of the candidate ends with CRLF"),
            "{}",
            issues[0].message
        );
        // A file that mixed them already, or stays uniform: nothing.
        assert_eq!(
            codes(&validate(&[check(Some(b"a\r\nb\n"), Some(b"a\nb\r\nc\n"))])),
            Vec::<&str>::new()
        );
        assert_eq!(
            codes(&validate(&[check(Some(b"a\r\n"), Some(b"a\r\nb\r\n"))])),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn clean_change_has_no_issues() {
        let issues = validate(&[check(Some(b"a\n"), Some(b"b\n"))]);
        assert_eq!(issues, vec![]);
        assert!(!has_errors(&issues));
    }

    #[test]
    fn conflict_markers_detected_with_line() {
        let after = b"a\n<<<<<<< HEAD\nx\n=======\r\ny\n>>>>>>> branch\n";
        let issues = validate(&[check(Some(b"a\n"), Some(after))]);
        // The CRLF line in an LF file is a warning of its own (issue 33 item 4).
        assert_eq!(codes(&issues), ["conflict_markers", "mixed_line_endings"]);
        assert_eq!(issues[0].severity, Severity::Error);
        assert!(
            issues[0].message.contains("line 2"),
            "{}",
            issues[0].message
        );
        assert!(has_errors(&issues));
    }

    #[test]
    fn diff3_base_marker_is_a_marker() {
        let after = b"a\n||||||| snapshot\nb\n";
        let issues = validate(&[check(Some(b"a\nb\n"), Some(after))]);
        assert_eq!(codes(&issues), ["conflict_markers"]);
        assert!(
            issues[0].message.contains("f line 2:"),
            "{}",
            issues[0].message
        );
        let whole = b"<<<<<<< c\nx\n||||||| s\ny\n=======\nz\n>>>>>>> d\n|||||||\r\n||||||x\n";
        assert_eq!(conflict_marker_lines(whole), [1, 3, 5, 7, 8]);
    }

    #[test]
    fn existing_markers_are_not_new() {
        let before = b"<<<<<<< a\n=======\n>>>>>>> b\n";
        let after = b"<<<<<<< a\n=======\n>>>>>>> b\nmore\n";
        assert_eq!(
            codes(&validate(&[check(Some(before), Some(after))])),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn added_marker_line_is_reported() {
        let before = b"x\n<<<<<<< a\n=======\ny\n";
        let after = b"x\n<<<<<<< a\n=======\ny\n=======";
        let issues = validate(&[check(Some(before), Some(after))]);
        assert_eq!(codes(&issues), ["conflict_markers"]);
        assert!(
            issues[0].message.contains("line 5"),
            "{}",
            issues[0].message
        );
    }

    #[test]
    fn the_prefilter_skips_only_files_without_markers() {
        let cases: [&[u8]; 9] = [
            b"",
            b"fn f() {}\n",
            b"<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n",
            b"a\r\n|||||||\r\nb",
            b"=======",
            b"x <<<<<<< not at the start\n",
            b"<<<<<<<no space\n======= trailing\n",
            b"||||||| base\n",
            b"<<<<<< six\n====== six\n",
        ];
        for bytes in cases {
            assert_eq!(
                marker_lines(bytes),
                scan_marker_lines(bytes),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert!(!may_hold_marker(b"<<<<<< six\n====== six\n|||||| >>>>>>\n"));
        // Conservative: a run anywhere sends the file to the line scan, which decides.
        assert!(may_hold_marker(b"x <<<<<<< not at the start\n"));
        assert!(marker_lines(b"x <<<<<<< not at the start\n").is_empty());
        assert!(may_hold_marker(b"x\n=======\n"));
        assert_eq!(
            marker_lines(b"x\n>>>>>>> b\n"),
            vec![(2, &b">>>>>>> b"[..])]
        );
    }

    proptest::proptest! {
        /// Files made of marker runs, near-markers, spaces, text and line ends.
        #[test]
        fn marker_lines_agree_with_the_plain_scan(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "<<<<<<<", "|||||||", ">>>>>>>", "=======", "<<<<<<", "==", "|", " ", "a",
                "\n", "\r\n", "\r",
            ]),
            0..40,
        )) {
            let bytes = parts.concat().into_bytes();
            proptest::prop_assert_eq!(marker_lines(&bytes), scan_marker_lines(&bytes));
        }
    }

    /// A setext heading's underline of exactly seven `=` (Markdown, reStructuredText)
    /// is no conflict marker; with an opening or closing marker in the file it is.
    #[test]
    fn a_lone_separator_line_is_a_heading_underline_not_a_marker() {
        let md = b"# Notes\n\nChanges\n=======\n\n- one\n";
        assert_eq!(conflict_marker_lines(md), Vec::<usize>::new());
        assert_eq!(
            codes(&validate(&[check(None, Some(md))])),
            Vec::<&str>::new()
        );
        let conflicted = b"<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n";
        assert_eq!(conflict_marker_lines(conflicted), vec![1, 3, 5]);
        assert_eq!(
            conflict_marker_lines(b"x\n=======\n>>>>>>> theirs\n"),
            vec![2, 3]
        );
    }

    #[test]
    fn near_markers_are_ignored() {
        let after = b"<<<<<<<\n======= x\n>>>>>>>no space\n========\n";
        assert_eq!(
            codes(&validate(&[check(None, Some(after))])),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn empty_candidate_and_equal_source() {
        let issues = validate(&[
            check(Some(b"text"), Some(b"")),
            FileCheck {
                path: "g",
                before: Some(b"same"),
                after: Some(b"same"),
                text_op_on_binary: true,
                meta_changed: false,
            },
        ]);
        assert_eq!(
            codes(&issues),
            [
                "empty_candidate",
                "candidate_equals_source",
                "binary_content_edited"
            ]
        );
        assert_eq!(issues[0].severity, Severity::Warning);
        assert_eq!(issues[1].path, "g");
        assert!(!has_errors(&issues));
    }

    #[test]
    fn deleting_a_file_is_not_empty_candidate() {
        assert_eq!(
            codes(&validate(&[check(Some(b"x"), None)])),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn no_changes_is_last_and_an_error() {
        let issues = validate(&[check(Some(b"a"), Some(b"a")), check(None, None)]);
        assert_eq!(
            codes(&issues),
            [
                "candidate_equals_source",
                "candidate_equals_source",
                "no_changes"
            ]
        );
        let last = &issues[2];
        assert_eq!((last.severity, last.path.as_str()), (Severity::Error, ""));
        assert!(has_errors(&issues));
        assert_eq!(codes(&validate(&[])), ["no_changes"]);
    }

    #[test]
    fn issue_serializes_snake_case() {
        let issues = validate(&[]);
        let json = serde_json::to_string(&issues[0]).unwrap_or_default();
        assert!(json.contains("\"severity\":\"error\""), "{json}");
    }

    fn at<'a>(path: &'a str, before: Option<&'a [u8]>, after: Option<&'a [u8]>) -> FileCheck<'a> {
        FileCheck {
            path,
            ..check(before, after)
        }
    }

    #[cfg(feature = "syntax")]
    #[test]
    fn a_parse_cut_off_at_its_deadline_counts_as_a_syntax_error() {
        let after = b"fn f( { [ ) ; impl ".repeat(2_000);
        crate::syntax::set_parse_deadline_for_tests(Some(std::time::Duration::ZERO));
        let issues = validate(&[FileCheck {
            path: "src/cut.rs",
            before: None,
            after: Some(&after),
            text_op_on_binary: false,
            meta_changed: false,
        }]);
        let outline = crate::syntax::outline("src/cut.rs", &after);
        crate::syntax::set_parse_deadline_for_tests(None);
        assert_eq!(codes(&issues), ["syntax_error"]);
        assert_eq!(issues[0].severity, Severity::Error);
        assert!(
            issues[0].message.starts_with(
                "src/cut.rs: the candidate could not be parsed as Rust within 5 s (tree-sitter's"
            ),
            "{}",
            issues[0].message
        );
        assert_eq!(outline, Err(crate::syntax::OutlineError::TimedOut));
    }

    #[cfg(feature = "syntax")]
    #[test]
    fn conflict_markers_are_reported_without_a_syntax_error() {
        let before = b"fn a() {}\nfn b() {}\n";
        let after = b"fn a() {}\n<<<<<<< candidate\nfn b() { 1 }\n||||||| snapshot\nfn b() {}\n=======\nfn b() { 2 }\n>>>>>>> disk\n";
        let issues = validate(&[FileCheck {
            path: "src/lib.rs",
            before: Some(before),
            after: Some(after),
            text_op_on_binary: false,
            meta_changed: false,
        }]);
        assert_eq!(codes(&issues), ["conflict_markers"]);
        assert_eq!(
            issues[0].message,
            "src/lib.rs line 2: new merge conflict marker; resolve the conflict and remove the markers before committing"
        );
    }

    #[cfg(feature = "syntax")]
    #[test]
    fn a_candidate_that_stops_parsing_is_a_syntax_error() {
        let issues = validate(&[at(
            "m.py",
            Some(b"def f():\n    pass\n"),
            Some(b"def f(:\n    pass\n"),
        )]);
        assert_eq!(codes(&issues), ["syntax_error"]);
        assert_eq!(issues[0].severity, Severity::Error);
        assert_eq!(
            issues[0].message,
            "m.py line 1, column 7: the candidate does not parse as Python (1 parse error; the \
             file parsed cleanly before); fix the edit, or, if the file is meant to be broken for \
             now, allow it with the plan's \"policy\": {\"syntax_errors\": \"allow\"} (CLI: \
             --allow syntax_error)"
        );
        // A new file that does not parse: the same error.
        let issues = validate(&[at("n.go", None, Some(b"package n\nfunc {\n"))]);
        assert_eq!(codes(&issues), ["syntax_error"]);
        assert!(
            issues[0].message.contains("a new file"),
            "{}",
            issues[0].message
        );
    }

    #[cfg(feature = "syntax")]
    #[test]
    fn a_broken_file_warns_when_its_errors_grow_and_other_languages_are_not_parsed() {
        let before: &[u8] = b"fn f( {\n}\n";
        let issues = validate(&[at(
            "a.rs",
            Some(before),
            Some(b"fn f( {\n}\nstruct ;\nlet = ;\n"),
        )]);
        assert_eq!(codes(&issues), ["syntax_errors_increased"]);
        assert_eq!(issues[0].severity, Severity::Warning);
        // Fewer or as many errors: nothing.
        let issues = validate(&[at("a.rs", Some(before), Some(b"fn f( {\n}\n\n"))]);
        assert_eq!(codes(&issues), Vec::<&str>::new());
        let issues = validate(&[at("a.txt", Some(b"fn f() {}\n"), Some(b"fn f( {\n"))]);
        assert_eq!(codes(&issues), Vec::<&str>::new());
    }

    #[cfg(not(feature = "syntax"))]
    #[test]
    fn without_the_grammars_nothing_is_parsed() {
        let issues = validate(&[at("a.rs", Some(b"fn f() {}\n"), Some(b"fn f( {\n"))]);
        assert_eq!(codes(&issues), Vec::<&str>::new());
    }
}
