//! TypeScript and TSX: everything of JavaScript, plus `interface`, `type` (alias),
//! `enum`, `namespace` / `module`, abstract classes (class), function overload
//! signatures (function), method signatures (method), class fields (field) and
//! interface properties (property). `export` and `declare` belong to the definition.

use tree_sitter::Node;

use super::{field_name, javascript, wrapped_by, Found, Text, Up};

/// Wrappers that belong to the definition they hold.
pub(super) const WRAPPERS: &[&str] = &["export_statement", "ambient_declaration"];

pub(super) fn classify<'t>(node: Node<'t>, up: &Up<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    let kind = match node.kind() {
        "interface_declaration" => "interface",
        "type_alias_declaration" => "type",
        "enum_declaration" => "enum",
        "abstract_class_declaration" => "class",
        "internal_module" => "namespace",
        "module" => "module",
        "function_signature" => "function",
        "method_signature" | "abstract_method_signature" => "method",
        "public_field_definition" => "field",
        "property_signature" => "property",
        _ => return javascript::classify_in(node, up, text, WRAPPERS),
    };
    let name = field_name(node, "name", text)?;
    let name = name.trim_matches(|c| c == '"' || c == '\'').to_string();
    Some(Found::new(kind, name, wrapped_by(node, up, WRAPPERS).0))
}
