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

/// The nearest ancestors of a node, parent first (as many as the walk knows, up to
/// [`Up::DEPTH`]). Passed down by the walk because `Node::parent` searches from the
/// root, which costs time in the number of siblings before the node.
#[derive(Clone, Copy)]
pub(super) struct Up<'t> {
    nodes: [Option<Node<'t>>; Up::DEPTH],
}

impl<'t> Up<'t> {
    /// Ancestors kept: enough for the deepest test of a language (a Python method's
    /// class is three levels up).
    pub(super) const DEPTH: usize = 4;

    /// No ancestors (the root).
    pub(super) fn root() -> Self {
        Up {
            nodes: [None; Up::DEPTH],
        }
    }

    /// The ancestors of a child of `parent`, whose ancestors are `self`.
    pub(super) fn child_of(&self, parent: Node<'t>) -> Self {
        let mut nodes = [None; Up::DEPTH];
        nodes[0] = Some(parent);
        nodes[1..].copy_from_slice(&self.nodes[..Up::DEPTH - 1]);
        Up { nodes }
    }

    /// The `n`-th ancestor (0 = parent).
    pub(super) fn get(&self, n: usize) -> Option<Node<'t>> {
        self.nodes.get(n).copied().flatten()
    }
}

/// The definition at `node` (whose ancestors are `up`), if it is one.
pub(super) fn classify<'t>(
    language: Language,
    node: Node<'t>,
    up: &Up<'t>,
    text: &Text<'_>,
) -> Option<Found<'t>> {
    match language {
        Language::Rust => rust::classify(node, up, text),
        Language::Python => python::classify(node, up, text),
        Language::JavaScript => javascript::classify(node, up, text),
        Language::TypeScript | Language::Tsx => typescript::classify(node, up, text),
        Language::Go => go::classify(node, up, text),
    }
}

/// True when a node of kind `kind` can be the `outer` node of a definition found
/// below it (an `export`, a decorator list, a Go declaration of one spec): the kinds
/// [`wrapped_by`] and Go's spec rule climb to. Every other node holds the whole extent
/// of each definition found inside it, which is what lets the hunk names of a diff
/// skip the subtrees that hold none of its lines (`tree::outline_around`).
pub(super) fn may_wrap(language: Language, kind: &str) -> bool {
    match language {
        Language::Rust => false,
        Language::Python => kind == python::WRAPPER,
        Language::JavaScript => javascript::WRAPPERS.contains(&kind),
        Language::TypeScript | Language::Tsx => typescript::WRAPPERS.contains(&kind),
        Language::Go => go::DECLARATIONS.contains(&kind),
    }
}

/// The text of `node`'s field `field` as a name.
pub(super) fn field_name(node: Node<'_>, field: &str, text: &Text<'_>) -> Option<String> {
    node.child_by_field_name(field)
        .map(|n| String::from_utf8_lossy(text(n)).into_owned())
        .filter(|n| !n.is_empty())
}

/// The outermost of `node` and its ancestors (`up`) that are wrappers of kinds
/// `kinds`, with how many levels up it is (0 = `node` itself).
pub(super) fn wrapped_by<'t>(node: Node<'t>, up: &Up<'t>, kinds: &[&str]) -> (Node<'t>, usize) {
    let mut outer = (node, 0);
    while let Some(parent) = up.get(outer.1).filter(|p| kinds.contains(&p.kind())) {
        outer = (parent, outer.1 + 1);
    }
    outer
}
