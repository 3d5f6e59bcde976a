//! The definitions of each language: which syntax nodes are definitions, their kind
//! and their name (one file per language; the kinds are listed in docs/symbols.md).

use tree_sitter::Node;

use super::Language;

mod go;
mod javascript;
mod python;
mod rust;
mod typescript;

/// The text of a node (the file's bytes it spans).
pub(super) type Text<'s> = dyn Fn(Node<'_>) -> &'s [u8] + 's;

/// A definition found at a node.
pub(super) struct Found<'t> {
    /// Its kind, e.g. `"function"`.
    pub kind: &'static str,
    /// Its own name (one path segment).
    pub name: String,
    /// A scope named by the definition itself rather than by an enclosing one: a Go
    /// method's receiver type.
    pub receiver: Option<String>,
    /// The node that spans the whole definition, wrappers included (`export`, a
    /// Python `decorated_definition`, a Go `type` declaration of one type).
    pub outer: Node<'t>,
    /// A Rust `impl` block (see [`super::Definition::impl_block`]).
    pub impl_block: bool,
}

impl<'t> Found<'t> {
    pub(super) fn new(kind: &'static str, name: String, outer: Node<'t>) -> Self {
        Found {
            kind,
            name,
            receiver: None,
            outer,
            impl_block: false,
        }
    }
}

/// The grammar of `language`.
pub(super) fn grammar(language: Language) -> tree_sitter::Language {
    match language {
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
    }
}

/// The definition at `node`, if it is one.
pub(super) fn classify<'t>(
    language: Language,
    node: Node<'t>,
    text: &Text<'_>,
) -> Option<Found<'t>> {
    match language {
        Language::Rust => rust::classify(node, text),
        Language::Python => python::classify(node, text),
        Language::JavaScript => javascript::classify(node, text),
        Language::TypeScript | Language::Tsx => typescript::classify(node, text),
        Language::Go => go::classify(node, text),
    }
}

/// The text of `node`'s field `field` as a name.
pub(super) fn field_name(node: Node<'_>, field: &str, text: &Text<'_>) -> Option<String> {
    node.child_by_field_name(field)
        .map(|n| String::from_utf8_lossy(text(n)).into_owned())
        .filter(|n| !n.is_empty())
}

/// `node`'s parent when it has kind `kind`, else `node`.
pub(super) fn wrapped_by<'t>(node: Node<'t>, kinds: &[&str]) -> Node<'t> {
    let mut outer = node;
    while let Some(parent) = outer.parent().filter(|p| kinds.contains(&p.kind())) {
        outer = parent;
    }
    outer
}
