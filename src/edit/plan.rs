//! The edit plan: the JSON document of the CLI contract, and its checks that do
//! not need any file content.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;

use super::error::EditError;

/// A minimal valid plan, shown in parse-error hints.
const MINIMAL_PLAN: &str = r#"{"edits": [{"op": "replace_text", "path": "src/lib.rs", "old": "fn a()", "new": "fn b()"}]}"#;

/// Largest allowed unix mode: permission bits only. Plans cannot set setuid, setgid or
/// sticky bits.
pub const MAX_MODE: u32 = 0o777;

/// `mode` is a JSON number (decimal: 420 is 0o644) or a string of octal digits
/// (`"0644"`, `"755"`, `"0o755"`), as `chmod(1)` takes it.
fn de_mode<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Mode {
        Number(u32),
        Octal(String),
    }
    let mode = Option::<Mode>::deserialize(d).map_err(|_| {
        serde::de::Error::custom(
            "\"mode\" must be permission bits as a number (420 = 0o644) or an octal string like \"0644\" or \"755\", at most 0o7777",
        )
    })?;
    match mode {
        None => Ok(None),
        Some(Mode::Number(n)) => Ok(Some(n)),
        Some(Mode::Octal(s)) => {
            let digits = s.strip_prefix("0o").unwrap_or(&s);
            u32::from_str_radix(digits, 8).map(Some).map_err(|_| {
                serde::de::Error::custom(format!(
                    "\"mode\": {s:?} is not an octal mode like \"0644\" or \"755\""
                ))
            })
        }
    }
}

/// Which match of `old` a `replace_text` replaces: `"occurrence": N` (1-based) or
/// `"occurrence": "all"`.
///
/// With `All`, every non-overlapping match, found left to right in the base, is
/// replaced; the replacement is never scanned again (`"aa"` in `"aaa"` is replaced
/// once, and a `new` that contains `old` is fine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    /// The N-th match (1-based).
    Nth(usize),
    /// Every match.
    All,
}

impl serde::Serialize for Occurrence {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Occurrence::Nth(n) => s.serialize_u64(*n as u64),
            Occurrence::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for Occurrence {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(usize),
            Text(String),
        }
        match Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "\"occurrence\" must be a 1-based match number (1 = first match) or \"all\"",
            )
        })? {
            Raw::Number(n) => Ok(Occurrence::Nth(n)),
            Raw::Text(t) if t == "all" => Ok(Occurrence::All),
            Raw::Text(t) => Err(serde::de::Error::custom(format!(
                "\"occurrence\": {t:?} is not valid; give a 1-based match number or \"all\""
            ))),
        }
    }
}

impl Occurrence {
    /// The 1-based match number; `None` for [`Occurrence::All`].
    pub fn nth(self) -> Option<usize> {
        match self {
            Occurrence::Nth(n) => Some(n),
            Occurrence::All => None,
        }
    }
}

impl From<usize> for Occurrence {
    fn from(n: usize) -> Self {
        Occurrence::Nth(n)
    }
}

/// Longest string field (bytes) a recorded plan keeps verbatim; see
/// [`Plan::to_recorded_json`].
pub const RECORDED_STRING_MAX: usize = 64 * 1024;

/// An edit plan: the JSON document of the CLI contract (docs/design.md, "CLI contract").
///
/// Build one with [`Plan::from_json`], which also runs the plan-level checks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Free-text description of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who wrote the plan (agent or person name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The edits, in plan order (their 0-based position is the "plan index").
    pub edits: Vec<Edit>,
    /// This plan's policy, instead of the journal's ([`crate::OpenOptions::policy`]);
    /// `None` (the default) uses the journal's. See [`crate::Policy`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<crate::Policy>,
}

/// One edit of a plan. Paths are relative to the workspace root.
///
/// Text ops match `old` / `anchor` against the file's bytes; `occurrence` is
/// 1-based. Lines are 1-based and inclusive.
/// The content a whole-file write was made from (`expected_base` of `write_file` and
/// `replace_file`; docs/plan.md): the blake3 of the bytes the writer read, as 64 hex
/// digits, or the shape `edit_preview` reports for a file (`{"content_hash": HEX,
/// "bytes": N}`, other fields ignored; `hash` and `size` are accepted as their names
/// too). `{"file_exists": false}` (as `edit_preview` reports a missing file) expects
/// no file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum ExpectedBase {
    /// The blake3 of the content, 64 hex digits.
    Hash(String),
    /// `edit_preview`'s snapshot shape.
    Shape {
        /// The blake3 of the content, 64 hex digits (ignored when `file_exists` is
        /// `false`).
        #[serde(default, alias = "hash")]
        content_hash: String,
        /// Its size in bytes, if given.
        #[serde(default, alias = "size", skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        /// `false`: the writer found no file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_exists: Option<bool>,
    },
}

impl ExpectedBase {
    /// The expected content: `None` for no file, else its blake3 (lowercase hex) and
    /// size if given. Errors: a hash that is not 64 hex digits.
    pub fn expected(&self) -> Result<Option<(String, Option<u64>)>, String> {
        let (hash, bytes, exists) = match self {
            ExpectedBase::Hash(h) => (h.as_str(), None, None),
            ExpectedBase::Shape {
                content_hash,
                bytes,
                file_exists,
            } => (content_hash.as_str(), *bytes, *file_exists),
        };
        if exists == Some(false) {
            return Ok(None);
        }
        if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "\"expected_base\" must be the blake3 of the content as 64 hex digits (or {{\"content_hash\": …, \"bytes\": …}} as edit_preview reports it), not {hash:?}"
            ));
        }
        Ok(Some((hash.to_ascii_lowercase(), bytes)))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Edit {
    /// Replace the bytes of `old` (must match once, or pick `occurrence`, or
    /// `"occurrence": "all"`) with `new`.
    ReplaceText {
        /// File path.
        path: String,
        /// Exact text to find (non-empty).
        old: String,
        /// Replacement text.
        new: String,
        /// The match to replace when `old` occurs more than once: 1-based, or
        /// [`Occurrence::All`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<Occurrence>,
    },
    /// Replace lines `start..=end` (1-based, inclusive) with `content`.
    ReplaceLines {
        /// File path.
        path: String,
        /// First replaced line (1-based).
        start: usize,
        /// Last replaced line (1-based, inclusive).
        end: usize,
        /// Replacement; empty deletes the lines.
        content: String,
    },
    /// Insert `text` just before the match of `anchor`.
    InsertBefore {
        /// File path.
        path: String,
        /// Exact text to find (non-empty).
        anchor: String,
        /// Inserted text.
        text: String,
        /// 1-based match to use when `anchor` occurs more than once.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert `text` just after the match of `anchor`.
    InsertAfter {
        /// File path.
        path: String,
        /// Exact text to find (non-empty).
        anchor: String,
        /// Inserted text.
        text: String,
        /// 1-based match to use when `anchor` occurs more than once.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert `text` at the start of an existing file (empty ones included), after
    /// its UTF-8 byte-order mark if it has one.
    Prepend {
        /// File path.
        path: String,
        /// Inserted text, verbatim.
        text: String,
    },
    /// Insert `text` at the end of an existing file (empty ones included), verbatim:
    /// if the file does not end with a newline, start `text` with one.
    Append {
        /// File path.
        path: String,
        /// Inserted text, verbatim.
        text: String,
    },
    /// Replace the whole content of an existing file. Exactly one of `content`
    /// / `content_base64`.
    ReplaceFile {
        /// File path.
        path: String,
        /// New content as text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// New content as standard base64 (for binary files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_base64: Option<String>,
        /// Unix mode to set (<= 0o777; a number, or an octal string like `"0644"`);
        /// None keeps the current mode.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_mode"
        )]
        mode: Option<u32>,
        /// The base the content was made from (issue 29, item 7): when given, the
        /// file the edit applies to (the disk for a preview, the latest candidate for
        /// a revise) must hold exactly that content, or the plan is refused
        /// ([`crate::Error::BaseChanged`]) and nothing is recorded. Without it the
        /// write is not checked against a base (as m1nd's `new_content`), and the
        /// preview lists the path in `unchecked_base`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_base: Option<ExpectedBase>,
    },
    /// Create a file that must not exist yet. Exactly one of `content` /
    /// `content_base64`; `""` creates an empty file.
    CreateFile {
        /// File path.
        path: String,
        /// Content as text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Content as standard base64 (for binary files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_base64: Option<String>,
        /// Unix mode to set (<= 0o777; a number, or an octal string like `"0644"`);
        /// None uses 0o644.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_mode"
        )]
        mode: Option<u32>,
    },
    /// Write the whole content of a file whether or not it exists (m1nd's
    /// `new_content`): a `replace_file` if the base has the file, a `create_file` if
    /// not, decided against the base the plan is resolved on — so an embedder never
    /// checks the disk first and races. The commit gate still compares the file with
    /// the snapshot taken at preview: a file absent then must still be absent, one
    /// present must still hold the same bytes, or the commit is refused
    /// ([`crate::Error::StaleSnapshot`]). Exactly one of `content` / `content_base64`.
    WriteFile {
        /// File path.
        path: String,
        /// Content as text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Content as standard base64 (for binary files).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_base64: Option<String>,
        /// Unix mode to set (<= 0o777; a number, or an octal string like `"0644"`);
        /// None keeps the mode of an existing file, and gives a new one
        /// `0666 & !umask`.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "de_mode"
        )]
        mode: Option<u32>,
        /// The base the content was made from (issue 29, item 7): when given, the
        /// file the edit applies to (the disk for a preview, the latest candidate for
        /// a revise) must hold exactly that content, or the plan is refused
        /// ([`crate::Error::BaseChanged`]) and nothing is recorded. Without it the
        /// write is not checked against a base (as m1nd's `new_content`), and the
        /// preview lists the path in `unchecked_base`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_base: Option<ExpectedBase>,
    },
    /// Delete an existing file.
    DeleteFile {
        /// File path.
        path: String,
    },
    /// Replace a definition from its signature line through its last line with
    /// `content` (whole lines); its leading trivia (decorators, attributes, comments
    /// directly above) stays. Rules in docs/symbols.md.
    ReplaceSymbol {
        /// File path.
        path: String,
        /// The definition: names through scopes joined with `.`, e.g. `Config.load`.
        symbol: String,
        /// The new definition, whole lines (a missing final line terminator is added).
        content: String,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert `text` (whole lines) right before a definition's first leading-trivia
    /// line.
    InsertBeforeSymbol {
        /// File path.
        path: String,
        /// The definition, as for `replace_symbol`.
        symbol: String,
        /// Inserted lines (a missing final line terminator is added).
        text: String,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert `text` (whole lines) right after a definition's last line.
    InsertAfterSymbol {
        /// File path.
        path: String,
        /// The definition, as for `replace_symbol`.
        symbol: String,
        /// Inserted lines (a missing final line terminator is added).
        text: String,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Delete a definition's lines, its leading trivia included.
    DeleteSymbol {
        /// File path.
        path: String,
        /// The definition, as for `replace_symbol`.
        symbol: String,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Replace the body of a function or method (between its braces, or a Python
    /// block) with `content`; the signature, decorators, attributes, doc comment and a
    /// Python docstring (unless `content` starts with one) stay. Rules in
    /// docs/symbols.md, "Target modes".
    ReplaceBody {
        /// File path.
        path: String,
        /// The function or method, as for `replace_symbol`.
        symbol: String,
        /// The new body without the braces (or the indented block), whole lines,
        /// moved to the body's depth.
        content: String,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert a field into a struct, union, class or interface at `position`.
    InsertField {
        /// File path.
        path: String,
        /// The struct, union, class or interface, as for `replace_symbol`.
        symbol: String,
        /// The field's lines, moved to its siblings' depth; a separating comma is
        /// added where the language needs one.
        text: String,
        /// Where among the members: `"first"`, `"last"` or `{"after": "NAME"}`.
        position: Position,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Insert a variant into an enum (Rust, TypeScript) or union (Rust) at `position`.
    InsertVariant {
        /// File path.
        path: String,
        /// The enum or union, as for `replace_symbol`.
        symbol: String,
        /// The variant's lines, moved to its siblings' depth; a separating comma is
        /// added where the language needs one.
        text: String,
        /// Where among the variants: `"first"`, `"last"` or `{"after": "NAME"}`.
        position: Position,
        /// 1-based definition to use when `symbol` names several (file order).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
    /// Replace one arm of a Rust `match` or case of a Go `switch` inside the function
    /// `symbol`, addressed by its pattern as written.
    ReplaceArm {
        /// File path.
        path: String,
        /// The function or method holding the `match` / `switch`.
        symbol: String,
        /// The arm's pattern exactly as written: a Rust arm's text before `=>` (its
        /// guard included), a Go case's text between `case` and `:`, or `default`.
        pattern: String,
        /// The whole new arm (pattern included), whole lines, moved to the arm's depth.
        content: String,
        /// 1-based arm to use when `pattern` occurs several times in the function.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        occurrence: Option<usize>,
    },
}

/// Where `insert_field` and `insert_variant` put the new member.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Position {
    /// Before the first member (`"first"`).
    First,
    /// After the last member (`"last"`).
    Last,
    /// After the member of that name (`{"after": "NAME"}`).
    After(String),
}

impl Edit {
    /// The file path this edit touches, as written in the plan.
    pub fn path(&self) -> &str {
        match self {
            Edit::ReplaceText { path, .. }
            | Edit::ReplaceLines { path, .. }
            | Edit::InsertBefore { path, .. }
            | Edit::InsertAfter { path, .. }
            | Edit::Prepend { path, .. }
            | Edit::Append { path, .. }
            | Edit::ReplaceFile { path, .. }
            | Edit::CreateFile { path, .. }
            | Edit::WriteFile { path, .. }
            | Edit::DeleteFile { path }
            | Edit::ReplaceSymbol { path, .. }
            | Edit::InsertBeforeSymbol { path, .. }
            | Edit::InsertAfterSymbol { path, .. }
            | Edit::DeleteSymbol { path, .. }
            | Edit::ReplaceBody { path, .. }
            | Edit::InsertField { path, .. }
            | Edit::InsertVariant { path, .. }
            | Edit::ReplaceArm { path, .. } => path,
        }
    }

    /// Every op's name, as plans spell it ([`Edit::op_name`]).
    pub const OPS: [&'static str; 18] = [
        "replace_text",
        "replace_lines",
        "insert_before",
        "insert_after",
        "prepend",
        "append",
        "replace_file",
        "create_file",
        "write_file",
        "delete_file",
        "replace_symbol",
        "insert_before_symbol",
        "insert_after_symbol",
        "delete_symbol",
        "replace_body",
        "insert_field",
        "insert_variant",
        "replace_arm",
    ];

    /// The `op` tag of this edit, e.g. `"replace_text"`.
    pub fn op_name(&self) -> &'static str {
        match self {
            Edit::ReplaceText { .. } => "replace_text",
            Edit::ReplaceLines { .. } => "replace_lines",
            Edit::InsertBefore { .. } => "insert_before",
            Edit::InsertAfter { .. } => "insert_after",
            Edit::Prepend { .. } => "prepend",
            Edit::Append { .. } => "append",
            Edit::ReplaceFile { .. } => "replace_file",
            Edit::CreateFile { .. } => "create_file",
            Edit::WriteFile { .. } => "write_file",
            Edit::DeleteFile { .. } => "delete_file",
            Edit::ReplaceSymbol { .. } => "replace_symbol",
            Edit::InsertBeforeSymbol { .. } => "insert_before_symbol",
            Edit::InsertAfterSymbol { .. } => "insert_after_symbol",
            Edit::DeleteSymbol { .. } => "delete_symbol",
            Edit::ReplaceBody { .. } => "replace_body",
            Edit::InsertField { .. } => "insert_field",
            Edit::InsertVariant { .. } => "insert_variant",
            Edit::ReplaceArm { .. } => "replace_arm",
        }
    }

    /// The unix mode requested by a whole-file op (`replace_file` / `create_file` /
    /// `write_file`).
    pub fn mode(&self) -> Option<u32> {
        match self {
            Edit::ReplaceFile { mode, .. }
            | Edit::CreateFile { mode, .. }
            | Edit::WriteFile { mode, .. } => *mode,
            _ => None,
        }
    }

    /// True for byte-splice ops: replace_text, replace_lines, insert_before,
    /// insert_after, prepend, append, and the symbol ops.
    pub fn is_text_op(&self) -> bool {
        self.symbol().is_some()
            || matches!(
                self,
                Edit::ReplaceText { .. }
                    | Edit::ReplaceLines { .. }
                    | Edit::InsertBefore { .. }
                    | Edit::InsertAfter { .. }
                    | Edit::Prepend { .. }
                    | Edit::Append { .. }
            )
    }

    /// The `symbol` of a symbol op (`replace_symbol`, `insert_before_symbol`,
    /// `insert_after_symbol`, `delete_symbol`) or a target op (`replace_body`,
    /// `insert_field`, `insert_variant`, `replace_arm`); `None` for other ops.
    pub fn symbol(&self) -> Option<&str> {
        match self {
            Edit::ReplaceSymbol { symbol, .. }
            | Edit::InsertBeforeSymbol { symbol, .. }
            | Edit::InsertAfterSymbol { symbol, .. }
            | Edit::DeleteSymbol { symbol, .. }
            | Edit::ReplaceBody { symbol, .. }
            | Edit::InsertField { symbol, .. }
            | Edit::InsertVariant { symbol, .. }
            | Edit::ReplaceArm { symbol, .. } => Some(symbol),
            _ => None,
        }
    }

    /// The text a text op puts into the file (`new`, `content`, `text`); `None` for
    /// whole-file ops.
    pub fn inserted_text(&self) -> Option<&str> {
        match self {
            Edit::ReplaceText { new, .. } => Some(new),
            Edit::ReplaceLines { content, .. } => Some(content),
            Edit::InsertBefore { text, .. }
            | Edit::InsertAfter { text, .. }
            | Edit::Prepend { text, .. }
            | Edit::Append { text, .. }
            | Edit::InsertBeforeSymbol { text, .. }
            | Edit::InsertAfterSymbol { text, .. }
            | Edit::InsertField { text, .. }
            | Edit::InsertVariant { text, .. } => Some(text),
            Edit::ReplaceSymbol { content, .. }
            | Edit::ReplaceBody { content, .. }
            | Edit::ReplaceArm { content, .. } => Some(content),
            _ => None,
        }
    }

    /// Checks the rules that need no file content (see [`Plan::from_json`]).
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`] naming the op and path.
    pub fn check(&self) -> Result<(), EditError> {
        if self.path().is_empty() {
            return Err(self.invalid("\"path\" is empty; give a path relative to the root"));
        }
        match self {
            Edit::ReplaceText {
                old, occurrence, ..
            } => self.check_needle("old", old, occurrence.and_then(Occurrence::nth)),
            Edit::InsertBefore {
                anchor, occurrence, ..
            }
            | Edit::InsertAfter {
                anchor, occurrence, ..
            } => self.check_needle("anchor", anchor, *occurrence),
            Edit::ReplaceFile { .. } | Edit::CreateFile { .. } | Edit::WriteFile { .. } => {
                self.check_mode()?;
                if let Some(base) = self.expected_base() {
                    base.expected().map_err(|m| self.invalid(&m))?;
                }
                self.content_bytes().map(|_| ())
            }
            Edit::ReplaceSymbol {
                symbol,
                content: text,
                occurrence,
                ..
            }
            | Edit::InsertBeforeSymbol {
                symbol,
                text,
                occurrence,
                ..
            }
            | Edit::InsertAfterSymbol {
                symbol,
                text,
                occurrence,
                ..
            } => {
                self.check_symbol(symbol, *occurrence)?;
                if text.is_empty() {
                    let field = if self.op_name() == "replace_symbol" {
                        "\"content\" is empty; to remove the definition use delete_symbol"
                    } else {
                        "\"text\" is empty; give the lines to insert"
                    };
                    return Err(self.invalid(field));
                }
                Ok(())
            }
            Edit::DeleteSymbol {
                symbol, occurrence, ..
            }
            | Edit::ReplaceBody {
                symbol, occurrence, ..
            } => self.check_symbol(symbol, *occurrence),
            Edit::InsertField {
                symbol,
                text,
                position,
                occurrence,
                ..
            }
            | Edit::InsertVariant {
                symbol,
                text,
                position,
                occurrence,
                ..
            } => {
                self.check_symbol(symbol, *occurrence)?;
                if text.trim().is_empty() {
                    return Err(self.invalid("\"text\" is empty; give the lines to insert"));
                }
                match position {
                    Position::After(name) if name.is_empty() => Err(self.invalid(
                        "\"position\": {\"after\": \"\"} names no member; give the name of \
                         the member to insert after, or \"first\" or \"last\"",
                    )),
                    _ => Ok(()),
                }
            }
            Edit::ReplaceArm {
                symbol,
                pattern,
                content,
                occurrence,
                ..
            } => {
                self.check_symbol(symbol, *occurrence)?;
                if pattern.trim().is_empty() {
                    return Err(self.invalid(
                        "\"pattern\" is empty; give the arm's pattern exactly as written \
                         (the text before `=>` in Rust, between `case` and `:` in Go, or \
                         \"default\")",
                    ));
                }
                if content.trim().is_empty() {
                    return Err(self.invalid(
                        "\"content\" is empty; give the whole new arm, its pattern included",
                    ));
                }
                Ok(())
            }
            Edit::ReplaceLines { .. }
            | Edit::Prepend { .. }
            | Edit::Append { .. }
            | Edit::DeleteFile { .. } => Ok(()),
        }
    }

    fn check_symbol(&self, symbol: &str, occurrence: Option<usize>) -> Result<(), EditError> {
        if symbol.is_empty() || symbol.split('.').any(str::is_empty) {
            return Err(self.invalid(format!(
                "\"symbol\": {symbol:?} is not a symbol path; give the names of the enclosing \
                 definitions and the definition's own, joined with '.', e.g. \"Config.load\" \
                 (docs/symbols.md)"
            )));
        }
        if occurrence == Some(0) {
            return Err(self.invalid(
                "\"occurrence\": 0 is not valid; occurrences are 1-based (1 = first definition)",
            ));
        }
        Ok(())
    }

    /// The `expected_base` of a `write_file` or `replace_file`, if given.
    pub fn expected_base(&self) -> Option<&ExpectedBase> {
        match self {
            Edit::ReplaceFile { expected_base, .. } | Edit::WriteFile { expected_base, .. } => {
                expected_base.as_ref()
            }
            _ => None,
        }
    }

    /// Whether it is a `write_file` or `replace_file` without `expected_base`: a
    /// whole-file write not checked against the content it was made from.
    pub fn is_unchecked_write(&self) -> bool {
        matches!(self, Edit::ReplaceFile { .. } | Edit::WriteFile { .. })
            && self.expected_base().is_none()
    }

    /// The new bytes of a whole-file op (`content`, or `content_base64` decoded);
    /// `None` for other ops.
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`] if both or neither of `content` /
    /// `content_base64` are given, or the base64 is invalid.
    pub fn content_bytes(&self) -> Result<Option<Vec<u8>>, EditError> {
        let (content, content_base64) = match self {
            Edit::ReplaceFile {
                content,
                content_base64,
                ..
            }
            | Edit::CreateFile {
                content,
                content_base64,
                ..
            }
            | Edit::WriteFile {
                content,
                content_base64,
                ..
            } => (content, content_base64),
            _ => return Ok(None),
        };
        match (content, content_base64) {
            (Some(text), None) => Ok(Some(text.as_bytes().to_vec())),
            (None, Some(encoded)) => self.decode_base64(encoded).map(Some),
            (Some(_), Some(_)) => Err(self.invalid(
                "both \"content\" and \"content_base64\" are given; keep exactly one",
            )),
            (None, None) => Err(self.invalid(
                "needs \"content\" (text) or \"content_base64\" (binary); \"content\": \"\" makes an empty file",
            )),
        }
    }

    fn decode_base64(&self, encoded: &str) -> Result<Vec<u8>, EditError> {
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| {
                self.invalid(format!(
                    "\"content_base64\" is not valid standard base64 ({e}); encode the bytes \
                     with RFC 4648 base64 including padding"
                ))
            })
    }

    fn check_needle(
        &self,
        field: &str,
        needle: &str,
        occurrence: Option<usize>,
    ) -> Result<(), EditError> {
        if needle.is_empty() {
            let instead = match field {
                "anchor" => {
                    "to insert at the start or end of the file (an empty one too) use \
                             prepend or append"
                }
                _ => {
                    "to edit by position use replace_lines (line numbers) or replace_file \
                      (the whole file); to fill an empty file use append"
                }
            };
            return Err(self.invalid(format!(
                "\"{field}\" is empty; give the exact text to find, or {instead}"
            )));
        }
        if occurrence == Some(0) {
            return Err(self.invalid(
                "\"occurrence\": 0 is not valid; occurrences are 1-based (1 = first match)",
            ));
        }
        Ok(())
    }

    /// Checks that a whole-file op's `mode` is at most [`MAX_MODE`].
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`] naming the op and path.
    pub(crate) fn check_mode(&self) -> Result<(), EditError> {
        match self.mode() {
            Some(m) if m > MAX_MODE => Err(self.invalid(format!(
                "\"mode\" is octal {m:o}: a plan sets permission bits only (up to 0777; no \
                 setuid, setgid or sticky bit); if you wrote a JSON number, note that JSON \
                 numbers are decimal and write the mode as an octal string, e.g. \"mode\": \"0644\""
            ))),
            _ => Ok(()),
        }
    }

    fn invalid(&self, what: impl std::fmt::Display) -> EditError {
        EditError::invalid_plan(format!("{}{what}", self.invalid_prefix()))
    }

    /// How [`Edit::check`]'s messages start: `"create_file a.txt: "`.
    fn invalid_prefix(&self) -> String {
        match self.path() {
            "" => format!("{}: ", self.op_name()),
            path => format!("{} {path}: ", self.op_name()),
        }
    }

    /// [`Edit::check`] of the edit at 0-based position `index` of its plan: the message
    /// names it as the other plan errors do, `edit #3 (create_file in a.txt): …`.
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`], see [`Edit::check`].
    pub fn check_at(&self, index: usize) -> Result<(), EditError> {
        self.check().map_err(|e| match e {
            EditError::InvalidPlan { message } => {
                let prefix = self.invalid_prefix();
                let what = message.strip_prefix(&prefix).unwrap_or(&message);
                let path = Some(self.path()).filter(|p| !p.is_empty());
                EditError::invalid_plan(format!(
                    "{}: {what}",
                    edit_label(index, Some(self.op_name()), path)
                ))
            }
            other => other,
        })
    }
}

/// An edit as plan errors name it: `edit #3 (replace_text in src/lib.rs)` (1-based, as
/// in every plan error), `edit #3 (replace_text)` without a path, `edit #3` without an
/// op.
fn edit_label(index: usize, op: Option<&str>, path: Option<&str>) -> String {
    let n = index.saturating_add(1);
    match (op, path) {
        (Some(op), Some(path)) => format!("edit #{n} ({op} in {path})"),
        (Some(op), None) => format!("edit #{n} ({op})"),
        (None, _) => format!("edit #{n}"),
    }
}

/// The first edit of a plan that serde refuses, as its label ([`edit_label`]) and what
/// is wrong with it, naming the field: `None` when every edit parses (the error is
/// elsewhere in the plan) or the plan is not JSON.
///
/// serde_json says "invalid type: string \"x\", expected usize at line 1 column 60" for
/// a field of the wrong type, naming neither the edit nor the field. Each field is tried
/// alone with the edit's `op`: a field whose value has the wrong type fails on its own,
/// while a good one only leaves the other fields missing.
fn failed_edit(bytes: &[u8]) -> Option<(String, String)> {
    use serde_json::Value;
    let plan: Value = serde_json::from_slice(bytes).ok()?;
    let edits = plan.get("edits")?.as_array()?;
    edits.iter().enumerate().find_map(|(index, edit)| {
        let e = serde_json::from_value::<Edit>(edit.clone()).err()?;
        let Some(fields) = edit.as_object() else {
            let found = match edit {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            let label = edit_label(index, None, None);
            return Some((
                label,
                format!("is {found}, not a JSON object with \"op\" and \"path\""),
            ));
        };
        let op = fields.get("op").and_then(Value::as_str);
        let path = fields.get("path").and_then(Value::as_str);
        let known_op = op.filter(|op| Edit::OPS.contains(op));
        let label = edit_label(index, known_op, path.filter(|p| !p.is_empty()));
        let message = e.to_string();
        if fields.get("op").is_some() && known_op.is_none() {
            return Some((label, format!("\"op\": {message}")));
        }
        // The field that fails on its own (with the op), if one does.
        let field = known_op.and_then(|op| {
            fields
                .iter()
                .filter(|(k, _)| *k != "op")
                .find_map(|(k, v)| {
                    let mut alone = serde_json::Map::new();
                    alone.insert("op".into(), Value::from(op));
                    alone.insert(k.clone(), v.clone());
                    let e = serde_json::from_value::<Edit>(Value::Object(alone)).err()?;
                    (!e.to_string().starts_with("missing field"))
                        .then(|| (k.clone(), e.to_string()))
                })
        });
        Some(match field {
            Some((k, m)) if m.starts_with(&format!("{k:?}")) || m.starts_with("unknown field") => {
                (label, m)
            }
            Some((k, m)) => (label, format!("{k:?}: {m}")),
            None => (label, message),
        })
    })
}

impl Plan {
    /// Parses a plan from JSON bytes and checks it.
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`] when the JSON is malformed or does not match the
    /// schema (serde_json's message with line/column, plus a minimal valid plan as
    /// a hint), when `edits` is empty, when a whole-file op has both or neither of
    /// `content` / `content_base64`, when `content_base64` is not valid base64,
    /// when `old` / `anchor` is empty, when `occurrence` is 0 (occurrences are
    /// 1-based), or when `mode` is larger than `0o7777`.
    pub fn from_json(bytes: &[u8]) -> Result<Plan, EditError> {
        let plan: Plan = serde_json::from_slice(bytes).map_err(|e| {
            // serde reads a top-level array as the struct's fields in order and then
            // complains about the wrong thing ("expected a string"): name the shape.
            let found = match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(serde_json::Value::Array(_)) => Some("an array"),
                Ok(serde_json::Value::String(_)) => Some("a string"),
                Ok(serde_json::Value::Number(_)) => Some("a number"),
                Ok(serde_json::Value::Bool(_)) => Some("a boolean"),
                Ok(serde_json::Value::Null) => Some("null"),
                _ => None,
            };
            match found {
                Some(found) => EditError::invalid_plan(format!(
                    "the plan is {found}, not a JSON object; a minimal valid plan is {MINIMAL_PLAN}"
                )),
                None => match failed_edit(bytes) {
                    // serde_json's message names neither the edit nor, for a value of the
                    // wrong type, the field: say both, and keep its line and column.
                    Some((label, what)) => EditError::invalid_plan(format!(
                        "{label}: {what} (at line {} column {}); a minimal valid plan is {MINIMAL_PLAN}",
                        e.line(),
                        e.column()
                    )),
                    None => EditError::invalid_plan(format!(
                        "{e}; a minimal valid plan is {MINIMAL_PLAN}"
                    )),
                },
            }
        })?;
        plan.check()?;
        Ok(plan)
    }

    /// Checks the rules of [`Plan::from_json`] on an already built plan.
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`], see [`Plan::from_json`].
    pub fn check(&self) -> Result<(), EditError> {
        if self.edits.is_empty() {
            return Err(EditError::invalid_plan(format!(
                "\"edits\" is empty; add at least one edit, e.g. {MINIMAL_PLAN}"
            )));
        }
        self.edits
            .iter()
            .enumerate()
            .try_for_each(|(index, edit)| edit.check_at(index))
    }

    /// The plan a verb applies under `policy`: refused as [`Plan::from_json`] refuses
    /// it when it has no edit (a hand-built plan too); with
    /// [`crate::SamePath::LastWriteWins`], without the edits of a path that come
    /// before its last whole-file edit (`replace_file`, `create_file`, `write_file`,
    /// `delete_file`), which that edit overwrites. Edit numbers in errors are then
    /// those of the plan that remains.
    ///
    /// # Errors
    /// [`EditError::InvalidPlan`] for a plan without edits.
    pub fn checked_with(
        &self,
        policy: &crate::Policy,
    ) -> Result<std::borrow::Cow<'_, Plan>, EditError> {
        if self.edits.is_empty() {
            return Err(EditError::invalid_plan(format!(
                "\"edits\" is empty; add at least one edit, e.g. {MINIMAL_PLAN}"
            )));
        }
        if policy.same_path_twice != crate::SamePath::LastWriteWins {
            return Ok(std::borrow::Cow::Borrowed(self));
        }
        let mut last_whole: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, e) in self.edits.iter().enumerate() {
            if !e.is_text_op() {
                last_whole.insert(e.path(), i);
            }
        }
        let kept: Vec<Edit> = self
            .edits
            .iter()
            .enumerate()
            .filter(|(i, e)| last_whole.get(e.path()).is_none_or(|last| i >= last))
            .map(|(_, e)| e.clone())
            .collect();
        if kept.len() == self.edits.len() {
            return Ok(std::borrow::Cow::Borrowed(self));
        }
        Ok(std::borrow::Cow::Owned(Plan {
            edits: kept,
            ..self.clone()
        }))
    }

    /// The plan as the journal records it (in each revision record): its JSON, except
    /// that a string field of an edit longer than [`RECORDED_STRING_MAX`] bytes (`old`,
    /// `new`, `anchor`, `text`, `content`, `content_base64`; the content of a
    /// large `replace_file`, say) is replaced by `"<field>_omitted": {"bytes": N,
    /// "blake3": "<hex>"}`, the length and blake3 hash of that string's UTF-8 bytes.
    /// For the `content` of `replace_file` / `create_file`, those bytes are the
    /// revision's candidate of that path, which the journal stores as a blob under the
    /// same hash (not so for `replace_lines`' `content`, a part of the file, nor for
    /// `content_base64`, whose hash is of the base64 text). Without this, a 200 MiB
    /// `replace_file` would be recorded, and read back by `show` and `commit`, as a
    /// 200 MiB string besides the candidate itself.
    pub fn to_recorded_json(&self) -> String {
        use serde_json::{json, Map, Value};
        let text = |m: &mut Map<String, Value>, name: &str, s: &str| {
            if s.len() > RECORDED_STRING_MAX {
                let hash = blake3::hash(s.as_bytes()).to_hex().to_string();
                m.insert(
                    format!("{name}_omitted"),
                    json!({"bytes": s.len(), "blake3": hash}),
                );
            } else {
                m.insert(name.into(), Value::from(s));
            }
        };
        let edits: Vec<Value> = self
            .edits
            .iter()
            .map(|e| {
                let mut m = Map::new();
                m.insert("op".into(), Value::from(e.op_name()));
                m.insert("path".into(), Value::from(e.path()));
                let occurrence = |m: &mut Map<String, Value>, o: Option<Occurrence>| {
                    match o {
                        Some(Occurrence::Nth(n)) => m.insert("occurrence".into(), Value::from(n)),
                        Some(Occurrence::All) => m.insert("occurrence".into(), Value::from("all")),
                        None => None,
                    };
                };
                match e {
                    Edit::ReplaceText {
                        old,
                        new,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "old", old);
                        text(&mut m, "new", new);
                        occurrence(&mut m, *o);
                    }
                    Edit::ReplaceLines {
                        start,
                        end,
                        content,
                        ..
                    } => {
                        m.insert("start".into(), Value::from(*start));
                        m.insert("end".into(), Value::from(*end));
                        text(&mut m, "content", content);
                    }
                    Edit::InsertBefore {
                        anchor,
                        text: t,
                        occurrence: o,
                        ..
                    }
                    | Edit::InsertAfter {
                        anchor,
                        text: t,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "anchor", anchor);
                        text(&mut m, "text", t);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::Prepend { text: t, .. } | Edit::Append { text: t, .. } => {
                        text(&mut m, "text", t);
                    }
                    Edit::ReplaceFile {
                        content,
                        content_base64,
                        mode,
                        ..
                    }
                    | Edit::CreateFile {
                        content,
                        content_base64,
                        mode,
                        ..
                    }
                    | Edit::WriteFile {
                        content,
                        content_base64,
                        mode,
                        ..
                    } => {
                        if let Some(c) = content {
                            text(&mut m, "content", c);
                        }
                        if let Some(c) = content_base64 {
                            text(&mut m, "content_base64", c);
                        }
                        if let Some(mode) = mode {
                            m.insert("mode".into(), Value::from(*mode));
                        }
                    }
                    Edit::DeleteFile { .. } => {}
                    Edit::ReplaceSymbol {
                        symbol,
                        content,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        text(&mut m, "content", content);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::InsertBeforeSymbol {
                        symbol,
                        text: t,
                        occurrence: o,
                        ..
                    }
                    | Edit::InsertAfterSymbol {
                        symbol,
                        text: t,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        text(&mut m, "text", t);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::DeleteSymbol {
                        symbol,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::ReplaceBody {
                        symbol,
                        content,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        text(&mut m, "content", content);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::InsertField {
                        symbol,
                        text: t,
                        position,
                        occurrence: o,
                        ..
                    }
                    | Edit::InsertVariant {
                        symbol,
                        text: t,
                        position,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        text(&mut m, "text", t);
                        m.insert(
                            "position".into(),
                            serde_json::to_value(position).unwrap_or(Value::Null),
                        );
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                    Edit::ReplaceArm {
                        symbol,
                        pattern,
                        content,
                        occurrence: o,
                        ..
                    } => {
                        text(&mut m, "symbol", symbol);
                        text(&mut m, "pattern", pattern);
                        text(&mut m, "content", content);
                        occurrence(&mut m, o.map(Occurrence::Nth));
                    }
                }
                Value::Object(m)
            })
            .collect();
        let mut plan = Map::new();
        if let Some(d) = &self.description {
            plan.insert("description".into(), Value::from(d.as_str()));
        }
        if let Some(a) = &self.agent {
            plan.insert("agent".into(), Value::from(a.as_str()));
        }
        plan.insert("edits".into(), Value::Array(edits));
        if let Some(policy) = &self.policy {
            plan.insert(
                "policy".into(),
                serde_json::to_value(policy).unwrap_or_default(),
            );
        }
        Value::Object(plan).to_string()
    }

    /// The edits grouped by path, with their 0-based plan indices; paths sorted
    /// (byte order) and edits in plan order, so iteration is deterministic.
    pub fn by_path(&self) -> BTreeMap<&str, Vec<(usize, &Edit)>> {
        let mut groups: BTreeMap<&str, Vec<(usize, &Edit)>> = BTreeMap::new();
        for (index, edit) in self.edits.iter().enumerate() {
            groups.entry(edit.path()).or_default().push((index, edit));
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Plan, EditError> {
        Plan::from_json(json.as_bytes())
    }

    fn invalid_message(json: &str) -> String {
        match parse(json) {
            Err(EditError::InvalidPlan { message }) => message,
            other => panic!("expected InvalidPlan, got {other:?}"),
        }
    }

    /// The recorded form is the plan's own JSON while every string is short (so it
    /// parses back to the same plan), and names a long string by size and hash.
    #[test]
    fn recorded_json_is_the_plan_with_long_strings_named_by_hash() {
        let json = r#"{"description":"d","agent":"a","policy":{"syntax_errors":"allow"},"edits":[
          {"op":"replace_text","path":"a","old":"x","new":"y","occurrence":2},
          {"op":"replace_lines","path":"b","start":1,"end":2,"content":"z\n"},
          {"op":"insert_before","path":"c","anchor":"k","text":"t"},
          {"op":"insert_after","path":"c","anchor":"q","text":"u","occurrence":1},
          {"op":"replace_text","path":"a","old":"x","new":"xx","occurrence":"all"},
          {"op":"prepend","path":"p","text":"head\n"},
          {"op":"append","path":"p","text":"tail\n"},
          {"op":"replace_file","path":"d","content_base64":"AAEC","mode":420},
          {"op":"create_file","path":"e","content":""},
          {"op":"delete_file","path":"f"},
          {"op":"replace_symbol","path":"g.py","symbol":"A.f","content":"def f():\n    pass\n","occurrence":2},
          {"op":"insert_before_symbol","path":"g.py","symbol":"B","text":"x = 1\n"},
          {"op":"insert_after_symbol","path":"g.py","symbol":"C","text":"y = 2\n","occurrence":1},
          {"op":"delete_symbol","path":"g.py","symbol":"D.e"}]}"#;
        let plan = parse(json).unwrap();
        let recorded = plan.to_recorded_json();
        assert_eq!(parse(&recorded).unwrap(), plan);
        let as_value = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
        assert_eq!(
            as_value(&recorded),
            as_value(&serde_json::to_string(&plan).unwrap())
        );
        let big = "q".repeat(RECORDED_STRING_MAX + 1);
        let plan = parse(
            &serde_json::json!({"edits":[{"op":"replace_file","path":"g","content":big}]})
                .to_string(),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&plan.to_recorded_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"edits":[{"op":"replace_file","path":"g","content_omitted":{
                "bytes": RECORDED_STRING_MAX + 1,
                "blake3": blake3::hash(big.as_bytes()).to_hex().to_string()}}]})
        );
    }

    #[test]
    fn a_plan_that_is_not_an_object_says_so() {
        for (json, found) in [
            ("[1, 2]", "an array"),
            (" \"edits\"", "a string"),
            ("7", "a number"),
            ("null", "null"),
        ] {
            let message = invalid_message(json);
            assert!(
                message.starts_with(&format!("the plan is {found}, not a JSON object")),
                "{json}: {message}"
            );
        }
    }

    #[test]
    fn parses_the_brief_example() {
        let json = r#"{"description": "rename helper", "agent": "dev-1", "edits": [
          {"op": "replace_text",  "path": "src/lib.rs", "old": "fn a()", "new": "fn b()"},
          {"op": "replace_lines", "path": "src/lib.rs", "start": 10, "end": 12, "content": "x"},
          {"op": "insert_after",  "path": "src/lib.rs", "anchor": "use std::fs;\n", "text": "use std::io;\n"},
          {"op": "replace_file",  "path": "a.bin", "content_base64": "AAEC"},
          {"op": "create_file",   "path": "docs/new.md", "content": "", "mode": 420},
          {"op": "delete_file",   "path": "old.txt"}
        ]}"#;
        let plan = parse(json).expect("valid plan");
        assert_eq!(plan.description.as_deref(), Some("rename helper"));
        assert_eq!(plan.agent.as_deref(), Some("dev-1"));
        assert_eq!(plan.edits.len(), 6);
        assert_eq!(
            plan.edits[0],
            Edit::ReplaceText {
                path: "src/lib.rs".into(),
                old: "fn a()".into(),
                new: "fn b()".into(),
                occurrence: None
            }
        );
        assert_eq!(plan.edits[3].content_bytes(), Ok(Some(vec![0, 1, 2])));
        assert_eq!(plan.edits[4].content_bytes(), Ok(Some(vec![])));
        let ops: Vec<&str> = plan.edits.iter().map(Edit::op_name).collect();
        assert_eq!(
            ops,
            [
                "replace_text",
                "replace_lines",
                "insert_after",
                "replace_file",
                "create_file",
                "delete_file"
            ]
        );
        let text: Vec<bool> = plan.edits.iter().map(Edit::is_text_op).collect();
        assert_eq!(text, [true, true, true, false, false, false]);
    }

    #[test]
    fn round_trips_through_json() {
        let json = r#"{"edits":[{"op":"insert_before","path":"a","anchor":"x","text":"y","occurrence":2}]}"#;
        let plan = parse(json).expect("valid");
        assert_eq!(serde_json::to_string(&plan).expect("serialize"), json);
    }

    #[test]
    fn unknown_op_is_invalid_with_hint() {
        let msg = invalid_message(r#"{"edits":[{"op":"rename","path":"a"}]}"#);
        assert!(msg.contains("unknown variant `rename`"), "{msg}");
        assert!(msg.contains("line 1 column"), "{msg}");
        assert!(msg.contains("a minimal valid plan is"), "{msg}");
    }

    #[test]
    fn missing_field_is_invalid() {
        let msg = invalid_message(r#"{"edits":[{"op":"replace_text","path":"a","old":"x"}]}"#);
        assert!(msg.contains("missing field `new`"), "{msg}");
    }

    #[test]
    fn unknown_field_is_invalid() {
        let msg = invalid_message(r#"{"edits":[{"op":"delete_file","path":"a","force":true}]}"#);
        assert!(msg.contains("unknown field `force`"), "{msg}");
        let msg = invalid_message(r#"{"edits":[], "extra": 1}"#);
        assert!(msg.contains("unknown field `extra`"), "{msg}");
    }

    #[test]
    fn malformed_json_reports_position() {
        let msg = invalid_message("{\"edits\": [\n  {\"op\": }\n]}");
        assert!(msg.contains("line 2 column"), "{msg}");
    }

    #[test]
    fn empty_edits_is_invalid() {
        let msg = invalid_message(r#"{"edits":[]}"#);
        assert!(msg.contains("\"edits\" is empty"), "{msg}");
    }

    #[test]
    fn both_or_neither_content_is_invalid() {
        let msg = invalid_message(
            r#"{"edits":[{"op":"create_file","path":"a","content":"x","content_base64":"eA=="}]}"#,
        );
        assert_eq!(
            msg,
            "edit #1 (create_file in a): both \"content\" and \"content_base64\" are given; keep exactly one"
        );
        let msg = invalid_message(r#"{"edits":[{"op":"replace_file","path":"b"}]}"#);
        assert!(
            msg.starts_with("edit #1 (replace_file in b): needs \"content\""),
            "{msg}"
        );
        // The edit's own check, without a plan, names the op and path only.
        let edit = Edit::ReplaceFile {
            path: "b".into(),
            content: None,
            content_base64: None,
            mode: None,
            expected_base: None,
        };
        match edit.check() {
            Err(EditError::InvalidPlan { message }) => {
                assert!(message.starts_with("replace_file b: needs"), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_base64_names_the_path() {
        let msg = invalid_message(
            r#"{"edits":[{"op":"replace_file","path":"img.png","content_base64":"!!"}]}"#,
        );
        assert!(
            msg.starts_with("edit #1 (replace_file in img.png): \"content_base64\" is not valid"),
            "{msg}"
        );
    }

    /// serde's errors name the edit (1-based, with its op and path) and the field, and
    /// keep serde's line and column.
    #[test]
    fn serde_errors_name_the_edit_and_the_field() {
        const TAIL: &str = r#"a minimal valid plan is {"edits": [{"op": "replace_text", "path": "src/lib.rs", "old": "fn a()", "new": "fn b()"}]}"#;
        let plan = |third: &str| {
            format!(
                "{{\"edits\": [\n{{\"op\": \"delete_file\", \"path\": \"a\"}},\n{{\"op\": \"append\", \"path\": \"b\", \"text\": \"x\"}},\n{third}]}}"
            )
        };
        for (third, what) in [
            (
                r#"{"op": "replace_text", "path": "f.txt", "old": "b"}"#,
                "edit #3 (replace_text in f.txt): missing field `new` (at line 4 column 52)",
            ),
            (
                r#"{"op": "replace_lines", "path": "f.txt", "start": "x", "end": 2, "content": ""}"#,
                "edit #3 (replace_lines in f.txt): \"start\": invalid type: string \"x\", expected usize (at line 4 column 80)",
            ),
            (
                r#"{"op": "delete_file", "path": "f.txt", "force": true}"#,
                "edit #3 (delete_file in f.txt): unknown field `force`, expected `path` (at line 4 column 54)",
            ),
            (
                r#"{"op": "rename", "path": "f.txt"}"#,
                "edit #3: \"op\": unknown variant `rename`, expected one of `replace_text`, `replace_lines`, `insert_before`, `insert_after`, `prepend`, `append`, `replace_file`, `create_file`, `write_file`, `delete_file`, `replace_symbol`, `insert_before_symbol`, `insert_after_symbol`, `delete_symbol`, `replace_body`, `insert_field`, `insert_variant`, `replace_arm` (at line 4 column 15)",
            ),
            (
                r#"{"path": "f.txt"}"#,
                "edit #3: missing field `op` (at line 4 column 17)",
            ),
            (
                r#"{"op": "create_file", "path": "m", "content": "", "mode": "9z"}"#,
                "edit #3 (create_file in m): \"mode\": \"9z\" is not an octal mode like \"0644\" or \"755\" (at line 4 column 64)",
            ),
            (
                r#"{"op": "insert_after", "path": "f.txt", "anchor": "a", "text": "b", "occurrence": "all"}"#,
                "edit #3 (insert_after in f.txt): \"occurrence\": invalid type: string \"all\", expected usize (at line 4 column 89)",
            ),
            (
                "7",
                "edit #3: is a number, not a JSON object with \"op\" and \"path\" (at line 4 column 1)",
            ),
        ] {
            assert_eq!(invalid_message(&plan(third)), format!("{what}; {TAIL}"), "{third}");
        }
        // An error outside the edits is serde's as it was.
        assert_eq!(
            invalid_message(r#"{"edits": [{"op": "delete_file", "path": "a"}], "agent": 3}"#),
            format!("invalid type: integer `3`, expected a string at line 1 column 58; {TAIL}")
        );
    }

    #[test]
    fn target_ops_parse_check_and_record() {
        let json = r#"{"edits": [
          {"op":"replace_body","path":"a.rs","symbol":"f","content":"x\n","occurrence":2},
          {"op":"insert_field","path":"a.rs","symbol":"S","text":"a: u8","position":"first"},
          {"op":"insert_variant","path":"a.rs","symbol":"E","text":"B","position":{"after":"A"}},
          {"op":"replace_arm","path":"a.rs","symbol":"f","pattern":"None","content":"None => 0"}]}"#;
        let plan = Plan::from_json(json.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            plan.edits[2],
            Edit::InsertVariant {
                path: "a.rs".into(),
                symbol: "E".into(),
                text: "B".into(),
                position: Position::After("A".into()),
                occurrence: None,
            }
        );
        let recorded: serde_json::Value =
            serde_json::from_str(&plan.to_recorded_json()).unwrap_or_default();
        assert_eq!(recorded["edits"][1]["position"], "first");
        assert_eq!(
            recorded["edits"][2]["position"],
            serde_json::json!({"after": "A"})
        );
        assert_eq!(recorded["edits"][3]["pattern"], "None");
        let again =
            Plan::from_json(plan.to_recorded_json().as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.edits, plan.edits);
        let bad = r#"{"edits": [{"op":"replace_arm","path":"a.rs","symbol":"f","pattern":" ","content":"x"}]}"#;
        let e = Plan::from_json(bad.as_bytes())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("\"pattern\" is empty"), "{e}");
        let bad = r#"{"edits": [{"op":"insert_field","path":"a.rs","symbol":"S","text":"a","position":"middle"}]}"#;
        assert!(Plan::from_json(bad.as_bytes()).is_err());
    }

    #[test]
    fn occurrence_zero_is_invalid() {
        let msg = invalid_message(
            r#"{"edits":[{"op":"insert_after","path":"a","anchor":"x","text":"y","occurrence":0}]}"#,
        );
        assert!(msg.contains("occurrences are 1-based"), "{msg}");
    }

    #[test]
    fn occurrence_is_a_number_or_all() {
        let json = |o: &str| {
            format!(
                r#"{{"edits":[{{"op":"replace_text","path":"a","old":"x","new":"y","occurrence":{o}}}]}}"#
            )
        };
        let occ = |plan: Plan| match &plan.edits[0] {
            Edit::ReplaceText { occurrence, .. } => *occurrence,
            _ => None,
        };
        assert_eq!(occ(parse(&json("\"all\"")).unwrap()), Some(Occurrence::All));
        assert_eq!(occ(parse(&json("2")).unwrap()), Some(Occurrence::Nth(2)));
        let msg = invalid_message(&json("\"every\""));
        assert!(msg.contains("\"occurrence\""), "{msg}");
        let msg = invalid_message(&json("0"));
        assert!(msg.contains("occurrences are 1-based"), "{msg}");
        // insert ops take a number only.
        let msg = invalid_message(
            r#"{"edits":[{"op":"insert_after","path":"a","anchor":"x","text":"y","occurrence":"all"}]}"#,
        );
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn empty_anchor_hint_names_prepend_and_append() {
        let msg = invalid_message(
            r#"{"edits":[{"op":"insert_before","path":"a","anchor":"","text":"y"}]}"#,
        );
        assert!(msg.contains("prepend or append"), "{msg}");
        assert!(!msg.contains("replace_lines"), "{msg}");
    }

    #[test]
    fn empty_needle_and_path_are_invalid() {
        let msg =
            invalid_message(r#"{"edits":[{"op":"replace_text","path":"a","old":"","new":"y"}]}"#);
        assert!(msg.contains("\"old\" is empty"), "{msg}");
        let msg = invalid_message(r#"{"edits":[{"op":"delete_file","path":""}]}"#);
        assert!(msg.contains("\"path\" is empty"), "{msg}");
    }

    #[test]
    fn mode_is_bounded_and_octal_strings_are_accepted() {
        let ok = r#"{"edits":[{"op":"create_file","path":"a","content":"","mode":511}]}"#;
        assert_eq!(parse(ok).unwrap().edits[0].mode(), Some(0o777));
        for s in ["0644", "644", "0o644"] {
            let json = format!(
                r#"{{"edits":[{{"op":"create_file","path":"a","content":"","mode":"{s}"}}]}}"#
            );
            assert_eq!(parse(&json).unwrap().edits[0].mode(), Some(0o644), "{s}");
        }
        // 644 as a JSON number is decimal: 0o1204, refused with the octal-string hint.
        let msg = invalid_message(
            r#"{"edits":[{"op":"create_file","path":"a","content":"","mode":644}]}"#,
        );
        assert!(msg.contains("\"mode\": \"0644\""), "{msg}");
        let msg = invalid_message(
            r#"{"edits":[{"op":"create_file","path":"a","content":"","mode":"9z"}]}"#,
        );
        assert!(msg.contains("octal"), "{msg}");
        // Out of u32 or negative: the plan's words, not serde's ("did not match any
        // variant of untagged enum"; found by a breaker).
        for m in ["4294967296", "-1", "true"] {
            let msg = invalid_message(&format!(
                r#"{{"edits":[{{"op":"create_file","path":"a","content":"","mode":{m}}}]}}"#
            ));
            assert!(
                msg.contains("\"mode\" must be permission bits as a number (420 = 0o644) or an octal string like \"0644\" or \"755\", at most 0o7777"),
                "{m}: {msg}"
            );
            assert!(!msg.contains("untagged"), "{m}: {msg}");
        }
    }

    #[test]
    fn by_path_groups_and_sorts() {
        let json = r#"{"edits":[
          {"op":"delete_file","path":"b"},
          {"op":"replace_text","path":"a","old":"x","new":"y"},
          {"op":"replace_text","path":"b","old":"x","new":"y"}
        ]}"#;
        let plan = parse(json).expect("valid");
        let groups = plan.by_path();
        let keys: Vec<&str> = groups.keys().copied().collect();
        assert_eq!(keys, ["a", "b"]);
        let b: Vec<usize> = groups["b"].iter().map(|(i, _)| *i).collect();
        assert_eq!(b, [0, 2]);
        assert_eq!(groups["a"][0].0, 1);
    }
}
