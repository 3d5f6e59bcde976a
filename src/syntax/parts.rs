//! The parts of a definition that the target ops splice (docs/symbols.md, "Target
//! modes"): a function's body (`replace_body`), the members of a struct, class,
//! interface, enum or union (`insert_field`, `insert_variant`) and the arms of the
//! `match` / `switch` statements in a function (`replace_arm`).
//!
//! A definition is named by [`super::Definition::node`], the byte range of its own
//! syntax node. Units: byte offsets into the file's bytes (a UTF-8 byte-order mark
//! included).

use std::ops::Range;

use super::{Definition, Language};

/// A definition's own syntax node: its byte range and tree-sitter kind
/// ([`Definition::node`], [`Definition::node_kind`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAt {
    /// Byte range.
    pub range: Range<usize>,
    /// Tree-sitter kind.
    pub kind: &'static str,
}

impl NodeAt {
    /// The own node of `def`.
    pub fn of(def: &Definition) -> NodeAt {
        NodeAt {
            range: def.node.clone(),
            kind: def.node_kind,
        }
    }
}

/// The body of a function or method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A body between braces (Rust, JavaScript, TypeScript, Go).
    Braced {
        /// Just after the opening `{`.
        open: usize,
        /// At the closing `}`.
        close: usize,
    },
    /// A Python block.
    Indented {
        /// Just after the `:` that ends the header.
        colon_end: usize,
        /// First byte of its first statement.
        start: usize,
        /// Just after its last statement (comments after it are not part of it).
        end: usize,
        /// Just after the docstring, when the first statement is a string.
        docstring_end: Option<usize>,
    },
}

/// Which members [`members`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// Fields of a struct or union, members of a class or interface.
    Field,
    /// Variants of an enum (Rust, TypeScript) or union fields of a Rust `union`.
    Variant,
}

/// The members of a struct, class, interface, enum or union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Members {
    /// Just after the opening `{` (or a Python class's `:`).
    pub open: usize,
    /// At the closing `}` (or just after a Python class's last statement).
    pub close: usize,
    /// Members are separated by commas (Rust structs, enums and unions, TypeScript enums).
    pub commas: bool,
    /// Just after a Python class's docstring, when it has one.
    pub docstring_end: Option<usize>,
    /// The members in file order.
    pub items: Vec<Member>,
}

/// One member of [`Members`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its name (a method's or field's name; empty when it has none, e.g. an index
    /// signature).
    pub name: String,
    /// First byte of its node (attributes and decorators included, doc comments not).
    pub start: usize,
    /// Just after its node, or after the comma that follows it.
    pub end: usize,
    /// A comma follows it.
    pub comma: bool,
}

/// One arm of a Rust `match` or case of a Go `switch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arm {
    /// Its pattern as written: a Rust arm's text before `=>` (guard included), a Go
    /// case's text between `case` and `:`, or `default`.
    pub pattern: String,
    /// First byte of the arm's pattern (attributes above it are not part of it).
    pub start: usize,
    /// Just after its last statement or its comma.
    pub end: usize,
    /// It ends with a comma (Rust).
    pub comma: bool,
    /// It is the last arm of its `match` / `switch`.
    pub last: bool,
}

/// Why a definition has no such part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartError {
    /// A definition without a body: a trait method without a default, an abstract
    /// method, an overload signature, a `declare` function, a Go function without a body.
    NoBody,
    /// The construct has no such part that the ops support; the text names it, e.g.
    /// `"an arrow function with an expression body"`.
    Unsupported(&'static str),
    /// The file is not parsed or the node was not found (the outline it came from is stale).
    NotParsed,
}

/// The body of the function whose own node spans `node` in `bytes` (the content of
/// `path`).
///
/// # Errors
/// [`PartError`].
pub fn body(path: &str, bytes: &[u8], node: NodeAt) -> Result<Body, PartError> {
    let language = Language::of_path(path).ok_or(PartError::NotParsed)?;
    body_of(language, bytes, node)
}

/// The members of the definition whose own node spans `node`.
///
/// # Errors
/// [`PartError`].
pub fn members(
    path: &str,
    bytes: &[u8],
    node: NodeAt,
    kind: MemberKind,
) -> Result<Members, PartError> {
    let language = Language::of_path(path).ok_or(PartError::NotParsed)?;
    members_of(language, bytes, node, kind)
}

/// The arms of every `match` (Rust) or `switch` (Go) inside the function whose own
/// node spans `node`, in file order.
///
/// # Errors
/// [`PartError`].
pub fn arms(path: &str, bytes: &[u8], node: NodeAt) -> Result<Vec<Arm>, PartError> {
    let language = Language::of_path(path).ok_or(PartError::NotParsed)?;
    arms_of(language, bytes, node)
}

#[cfg(feature = "syntax")]
fn body_of(language: Language, bytes: &[u8], node: NodeAt) -> Result<Body, PartError> {
    super::tree::parts::body(language, bytes, node)
}

#[cfg(feature = "syntax")]
fn members_of(
    language: Language,
    bytes: &[u8],
    node: NodeAt,
    kind: MemberKind,
) -> Result<Members, PartError> {
    super::tree::parts::members(language, bytes, node, kind)
}

#[cfg(feature = "syntax")]
fn arms_of(language: Language, bytes: &[u8], node: NodeAt) -> Result<Vec<Arm>, PartError> {
    super::tree::parts::arms(language, bytes, node)
}

#[cfg(not(feature = "syntax"))]
fn body_of(_: Language, _: &[u8], _: NodeAt) -> Result<Body, PartError> {
    Err(PartError::NotParsed)
}

#[cfg(not(feature = "syntax"))]
fn members_of(_: Language, _: &[u8], _: NodeAt, _: MemberKind) -> Result<Members, PartError> {
    Err(PartError::NotParsed)
}

#[cfg(not(feature = "syntax"))]
fn arms_of(_: Language, _: &[u8], _: NodeAt) -> Result<Vec<Arm>, PartError> {
    Err(PartError::NotParsed)
}
