//! Rust: `fn` (function; method inside `impl` / `trait`), `struct`, `enum`, `union`,
//! `trait`, `impl` (named by its type), `mod`, `const`, `static`, `type`,
//! `macro_rules!` (macro).

use tree_sitter::Node;

use super::{field_name, Found, Text, Up};

pub(super) fn classify<'t>(node: Node<'t>, up: &Up<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    let kind = match node.kind() {
        "function_item" | "function_signature_item" => {
            let in_impl = up.get(0).is_some_and(|p| p.kind() == "declaration_list")
                && up
                    .get(1)
                    .is_some_and(|g| matches!(g.kind(), "impl_item" | "trait_item"));
            if in_impl {
                "method"
            } else {
                "function"
            }
        }
        "struct_item" => "struct",
        "enum_item" => "enum",
        "union_item" => "union",
        "trait_item" => "trait",
        "mod_item" => "mod",
        "const_item" => "const",
        "static_item" => "static",
        "type_item" => "type",
        "macro_definition" => "macro",
        "impl_item" => {
            let name = type_name(node.child_by_field_name("type")?, text)?;
            let mut found = Found::new("impl", name, node);
            found.impl_block = true;
            return Some(found);
        }
        _ => return None,
    };
    Some(Found::new(kind, field_name(node, "name", text)?, node))
}

/// The name of the type an `impl` is for: `Journal` for `Journal`, `Journal<T>`,
/// `crate::Journal` and `&Journal`.
fn type_name(node: Node<'_>, text: &Text<'_>) -> Option<String> {
    let mut node = node;
    loop {
        let next = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
            "scoped_type_identifier" => node.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => break,
        }
    }
    let name = String::from_utf8_lossy(text(node)).into_owned();
    (!name.is_empty()).then_some(name)
}
