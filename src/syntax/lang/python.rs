//! Python: `def` (function; method inside a class), `class`, and assignments to a
//! name at module or class level (variable). Decorators belong to the definition.

use tree_sitter::Node;

use super::{field_name, wrapped_by, Found, Text, Up};

/// The wrapper that belongs to the definition it holds.
pub(super) const WRAPPER: &str = "decorated_definition";

pub(super) fn classify<'t>(node: Node<'t>, up: &Up<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    match node.kind() {
        "function_definition" | "class_definition" => {
            let (outer, level) = wrapped_by(node, up, &[WRAPPER]);
            let kind = match node.kind() {
                "class_definition" => "class",
                _ if in_class_body(up.get(level), up.get(level + 1)) => "method",
                _ => "function",
            };
            Some(Found::new(kind, field_name(node, "name", text)?, outer))
        }
        "expression_statement" => {
            let level = up.get(0)?;
            let module_or_class = level.kind() == "module" || in_class_body(Some(level), up.get(1));
            if !module_or_class || node.named_child_count() != 1 {
                return None;
            }
            let assignment = node.named_child(0).filter(|a| a.kind() == "assignment")?;
            let left = assignment
                .child_by_field_name("left")
                .filter(|l| l.kind() == "identifier")?;
            let name = String::from_utf8_lossy(text(left)).into_owned();
            Some(Found::new("variable", name, node))
        }
        _ => None,
    }
}

/// `block` (with parent `parent`) is the body of a class.
fn in_class_body(block: Option<Node<'_>>, parent: Option<Node<'_>>) -> bool {
    block.is_some_and(|b| b.kind() == "block")
        && parent.is_some_and(|p| p.kind() == "class_definition")
}
