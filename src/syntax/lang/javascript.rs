//! JavaScript (and the part of TypeScript it shares): `function` and generator
//! declarations (function), `class`, methods, class fields (field), and `const` /
//! `let` / `var` declarations of one name (function when the value is a function or
//! arrow function, class when it is a class expression, else variable). An `export`
//! before a definition belongs to it.

use tree_sitter::Node;

use super::{field_name, wrapped_by, Found, Text, Up};

/// Wrappers that belong to the definition they hold.
pub(super) const WRAPPERS: &[&str] = &["export_statement"];

pub(super) fn classify<'t>(node: Node<'t>, up: &Up<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    classify_in(node, up, text, WRAPPERS)
}

/// As [`classify`], with `wrappers` (TypeScript adds `declare`).
pub(super) fn classify_in<'t>(
    node: Node<'t>,
    up: &Up<'t>,
    text: &Text<'_>,
    wrappers: &[&str],
) -> Option<Found<'t>> {
    let (kind, field) = match node.kind() {
        "function_declaration" | "generator_function_declaration" => ("function", "name"),
        "class_declaration" => ("class", "name"),
        "method_definition" => ("method", "name"),
        "field_definition" => ("field", "property"),
        "lexical_declaration" | "variable_declaration" => {
            return declaration(node, up, text, wrappers)
        }
        _ => return None,
    };
    let (outer, _) = wrapped_by(node, up, wrappers);
    Some(Found::new(kind, field_name(node, field, text)?, outer))
}

/// A `const` / `let` / `var` declaration of exactly one name.
fn declaration<'t>(
    node: Node<'t>,
    up: &Up<'t>,
    text: &Text<'_>,
    wrappers: &[&str],
) -> Option<Found<'t>> {
    let mut cursor = node.walk();
    let mut declarators = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "variable_declarator");
    let declarator = declarators.next()?;
    if declarators.next().is_some() {
        return None;
    }
    let name = declarator
        .child_by_field_name("name")
        .filter(|n| n.kind() == "identifier")?;
    let kind = match declarator.child_by_field_name("value").map(|v| v.kind()) {
        Some("arrow_function" | "function_expression" | "function" | "generator_function") => {
            "function"
        }
        Some("class") => "class",
        _ => "variable",
    };
    let name = String::from_utf8_lossy(text(name)).into_owned();
    Some(Found::new(kind, name, wrapped_by(node, up, wrappers).0))
}
