//! Source languages: which files are parsed, their definitions (symbols) and their
//! parse errors, through tree-sitter grammars.
//!
//! Used by the symbol ops of a plan (`replace_symbol`, `insert_before_symbol`,
//! `insert_after_symbol`, `delete_symbol`; docs/symbols.md), by the `syntax_error`
//! validation (docs/design.md, "Preview") and by the enclosing-symbol name of a diff's
//! hunk headers (git's function-name context).
//!
//! The language of a file comes from its extension only ([`Language::of_path`]); a
//! file of another language is never parsed. The grammars are C code compiled into
//! the binary by the Cargo feature `syntax`; without it [`ENABLED`] is false,
//! [`outline`] fails with [`OutlineError::FeatureDisabled`] and nothing is parsed.
//!
//! Units: byte offsets into the file's bytes (a UTF-8 byte-order mark included),
//! 1-based lines, 1-based columns counted in characters.

#[cfg(feature = "syntax")]
mod lang;
pub mod parts;
pub use parts::{Arm, Body, Member, MemberKind, Members, PartError};
#[cfg(feature = "syntax")]
mod tree;
#[cfg(all(test, feature = "syntax"))]
pub(crate) use tree::deadline_tests::set_deadline as set_parse_deadline_for_tests;

/// True when the crate was built with the `syntax` feature (the grammars).
pub const ENABLED: bool = cfg!(feature = "syntax");

/// Largest file (bytes) that is parsed: larger files get no symbol ops, no
/// `syntax_error` check and no names in hunk headers. A full parse of 1 MiB of Rust
/// takes about 130 ms on the benchmark machine and its tree takes several times the
/// file's size (docs/benchmarks.md, "Symbol ops and syntax validation"); hand-written
/// source files are far smaller, generated ones can be far larger.
pub const PARSE_MAX_BYTES: usize = 1 << 20;

/// Longest one parse may take, in milliseconds. tree-sitter's error recovery on badly
/// broken input is not bounded by the input's size (0.7–1.2 s for 300 KB of garbage
/// here, against ≈ 0.1 ms a KB for source); a parse cut off at this deadline counts as
/// no parse: the file gets no `syntax_error` check and no names in hunk headers, like
/// one over [`PARSE_MAX_BYTES`], and a symbol op on it fails with
/// [`OutlineError::TimedOut`]. A preview is then bounded whatever the file holds.
pub const PARSE_DEADLINE_MS: u64 = 5_000;

/// A language whose files are parsed, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx` (the grammar includes JSX)
    JavaScript,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.go`
    Go,
}

impl Language {
    /// The language of `path` by its extension (case-sensitive, as the tools of
    /// these languages take it); `None` for any other file.
    pub fn of_path(path: &str) -> Option<Language> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            _ => return None,
        })
    }

    /// The language's name as messages show it, e.g. `"Rust"`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
        }
    }
}

/// One definition (symbol) of a file, with the byte ranges the symbol ops splice.
///
/// `trivia_start <= signature_start < end`; all three lie at line boundaries:
/// `trivia_start` and `signature_start` at the start of a line (after a UTF-8
/// byte-order mark on line 1), `end` just after the last line's terminator (or at the
/// end of a file without a final newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// The kind, e.g. `"function"`, `"method"`, `"class"`, `"impl"` (per language in
    /// docs/symbols.md).
    pub kind: &'static str,
    /// The names of the enclosing definitions and its own, joined with `.`
    /// (`History.render`, `Journal.open`).
    pub path: String,
    /// A Rust `impl` block: addressed by its type's name only when no other
    /// definition has that path (docs/symbols.md).
    pub impl_block: bool,
    /// Start of the first line of its leading trivia (decorators, attributes,
    /// comments directly above it), or of its first line when it has none.
    pub trivia_start: usize,
    /// Start of the line where its signature begins (after decorators).
    pub signature_start: usize,
    /// Just after its last line, terminator included.
    pub end: usize,
    /// The byte range of its own syntax node (without the wrappers that belong to it:
    /// decorators, `export`, a Go `type` keyword): what [`parts`] looks into.
    pub node: std::ops::Range<usize>,
    /// The tree-sitter kind of that node, e.g. `"function_item"`.
    pub node_kind: &'static str,
    /// 1-based line of `trivia_start`.
    pub trivia_line: usize,
    /// 1-based line of `signature_start`.
    pub signature_line: usize,
    /// 1-based last line.
    pub last_line: usize,
    /// A 1-based line that it shares with other code (so its lines cannot be
    /// spliced without touching that code), if any.
    pub shared_line: Option<usize>,
    /// The 1-based line of a parse error inside it, if any (its extent is then
    /// not trustworthy).
    pub parse_error: Option<usize>,
}

/// Why a file has no outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutlineError {
    /// Built without the `syntax` feature.
    FeatureDisabled,
    /// No grammar for the file's extension.
    UnknownLanguage,
    /// The file is larger than [`PARSE_MAX_BYTES`].
    TooLarge,
    /// Its parse did not finish within [`PARSE_DEADLINE_MS`].
    TimedOut,
}

/// The definitions of `bytes` (the content of `path`), in order of their first byte.
///
/// # Errors
/// [`OutlineError`]: no `syntax` feature, an unknown language, a file over
/// [`PARSE_MAX_BYTES`], or a parse cut off at [`PARSE_DEADLINE_MS`].
pub fn outline(path: &str, bytes: &[u8]) -> Result<Vec<Definition>, OutlineError> {
    let language = Language::of_path(path).ok_or(OutlineError::UnknownLanguage)?;
    if bytes.len() > PARSE_MAX_BYTES {
        return Err(OutlineError::TooLarge);
    }
    outline_of(language, bytes)
}

#[cfg(feature = "syntax")]
fn outline_of(language: Language, bytes: &[u8]) -> Result<Vec<Definition>, OutlineError> {
    tree::outline(language, bytes).ok_or(OutlineError::TimedOut)
}

#[cfg(not(feature = "syntax"))]
fn outline_of(_: Language, _: &[u8]) -> Result<Vec<Definition>, OutlineError> {
    Err(OutlineError::FeatureDisabled)
}

#[cfg(feature = "syntax")]
fn outline_around_of(language: Language, bytes: &[u8], lines: &[usize]) -> Vec<Definition> {
    tree::outline_around(language, bytes, lines)
}

#[cfg(not(feature = "syntax"))]
fn outline_around_of(_: Language, _: &[u8], _: &[usize]) -> Vec<Definition> {
    Vec::new()
}

/// The 1-based lines of the headers (`class A:`, `if x:`, `else:` …) of the Python
/// blocks of `bytes` (the content of `path`) that hold no statement (comments are not
/// statements): the parser accepts such a block, Python rejects it ("expected an
/// indented block"). Empty for a file of another language or one that is not parsed.
pub fn empty_blocks(path: &str, bytes: &[u8]) -> Vec<usize> {
    match Language::of_path(path) {
        Some(Language::Python) if bytes.len() <= PARSE_MAX_BYTES => empty_blocks_of(bytes),
        _ => Vec::new(),
    }
}

#[cfg(feature = "syntax")]
fn empty_blocks_of(bytes: &[u8]) -> Vec<usize> {
    tree::empty_python_blocks(bytes)
}

#[cfg(not(feature = "syntax"))]
fn empty_blocks_of(_: &[u8]) -> Vec<usize> {
    Vec::new()
}

/// The parse errors of a file: how many, and where the first one is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseReport {
    /// Number of error and missing-token nodes in the syntax tree (0 = parses cleanly).
    pub errors: usize,
    /// 1-based line of the first one (0 when there is none).
    pub line: usize,
    /// 1-based column (characters) of the first one (0 when there is none).
    pub column: usize,
    /// 1-based last line of the first one: the parser could not make sense of the
    /// text from `line` through this line (0 when there is none).
    pub end_line: usize,
    /// In a file with errors, an opening bracket that looks unclosed, as (1-based line,
    /// 1-based column in characters): one left open at the end of the file, or closed
    /// by a bracket of another kind, or by a closing bracket that starts a line
    /// indented less than the opening bracket's line (the usual trace of a dropped
    /// `}`). A heuristic of brace languages (not Python); `None` when nothing looks so.
    pub unclosed: Option<(usize, usize)>,
}

/// The parse errors of `bytes` (the content of `path`), without
/// [`ParseReport::unclosed`]; `None` when the file is not parsed: an unknown
/// language, a file over [`PARSE_MAX_BYTES`], or no `syntax` feature.
pub fn parse_errors(path: &str, bytes: &[u8]) -> Option<ParseReport> {
    report(path, bytes, None, false)
}

/// As [`parse_errors`], with [`ParseReport::unclosed`] when there are errors, and
/// with `before`, an earlier version of the same file, whose syntax tree is reused
/// for the parts that did not change (tree-sitter's incremental parsing: the result
/// is that of a full parse, in a fraction of its time).
pub fn parse_errors_since(path: &str, bytes: &[u8], before: Option<&[u8]>) -> Option<ParseReport> {
    report(path, bytes, before, true)
}

fn report(
    path: &str,
    bytes: &[u8],
    before: Option<&[u8]>,
    with_unclosed: bool,
) -> Option<ParseReport> {
    let language = Language::of_path(path)?;
    if bytes.len() > PARSE_MAX_BYTES {
        return None;
    }
    let before = before.filter(|b| b.len() <= PARSE_MAX_BYTES);
    parse_errors_of(language, bytes, before, with_unclosed)
}

#[cfg(feature = "syntax")]
fn parse_errors_of(
    language: Language,
    bytes: &[u8],
    before: Option<&[u8]>,
    with_unclosed: bool,
) -> Option<ParseReport> {
    tree::parse_errors(language, bytes, before, with_unclosed)
}

#[cfg(not(feature = "syntax"))]
fn parse_errors_of(_: Language, _: &[u8], _: Option<&[u8]>, _: bool) -> Option<ParseReport> {
    None
}

/// The definitions of one side of a diff, to name the symbol around each hunk.
#[derive(Debug, Default)]
pub struct HunkNames {
    defs: Vec<(usize, usize, String)>,
}

impl HunkNames {
    /// The definitions of `bytes` (the content of `path`); empty when the file is not
    /// parsed (see [`outline`]).
    pub fn of(path: &str, bytes: &[u8]) -> HunkNames {
        HunkNames::named(outline(path, bytes).unwrap_or_default())
    }

    /// As [`HunkNames::of`], with only the definitions whose lines hold one of
    /// `lines` (1-based lines of `bytes`, in any order): the first changed line of each
    /// hunk of a diff. [`hunk_context`] gives the same name for each of `lines` as with
    /// [`HunkNames::of`], without walking the parts of the syntax tree that hold none
    /// of them (in a large file, most of it).
    pub fn around(path: &str, bytes: &[u8], lines: &[usize]) -> HunkNames {
        let mut lines = lines.to_vec();
        lines.sort_unstable();
        lines.dedup();
        if lines.is_empty() {
            return HunkNames::default();
        }
        let defs = match Language::of_path(path) {
            Some(language) if bytes.len() <= PARSE_MAX_BYTES => {
                outline_around_of(language, bytes, &lines)
            }
            _ => Vec::new(),
        };
        HunkNames::named(defs)
    }

    fn named(defs: Vec<Definition>) -> HunkNames {
        // A name that is not plain one-line text (a string-named TypeScript module
        // with a control character, say) is not shown in a diff header.
        HunkNames {
            defs: defs
                .into_iter()
                .filter(|d| d.path.len() <= 200 && !d.path.chars().any(char::is_control))
                .map(|d| (d.signature_line, d.last_line, d.path))
                .collect(),
        }
    }
}

/// The text after `@@ -a,b +c,d @@` of a hunk whose first changed line is `line`
/// (1-based, in the old side): the `.`-joined path of the innermost definition whose
/// lines (signature to last line) hold it, as git's function-name context names the
/// function around a hunk. `None` when no definition holds it.
pub fn hunk_context(names: &HunkNames, line: usize) -> Option<&str> {
    names
        .defs
        .iter()
        .filter(|(first, last, _)| (*first..=*last).contains(&line))
        .min_by_key(|(first, last, _)| last.saturating_sub(*first))
        .map(|(_, _, path)| path.as_str())
}

#[cfg(all(test, feature = "syntax"))]
mod tests;
