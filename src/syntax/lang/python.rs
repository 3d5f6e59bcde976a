//! Python: `def` (function; method inside a class), `class`, and assignments to a
//! name at module or class level (variable). Decorators belong to the definition.

use tree_sitter::Node;

use super::{field_name, wrapped_by, Found, Text};

pub(super) fn classify<'t>(node: Node<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    match node.kind() {
        "function_definition" | "class_definition" => {
            let outer = wrapped_by(node, &["decorated_definition"]);
            let kind = match node.kind() {
                "class_definition" => "class",
                _ if in_class(outer) => "method",
                _ => "function",
            };
            Some(Found::new(kind, field_name(node, "name", text)?, outer))
        }
        "expression_statement" => {
            let level = node.parent()?;
            let module_or_class = level.kind() == "module" || in_class_body(level);
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

/// `node` is a statement of a class body.
fn in_class(node: Node<'_>) -> bool {
    node.parent().is_some_and(in_class_body)
}

fn in_class_body(block: Node<'_>) -> bool {
    block.kind() == "block"
        && block
            .parent()
            .is_some_and(|p| p.kind() == "class_definition")
}
