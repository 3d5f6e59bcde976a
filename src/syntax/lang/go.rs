//! Go: `func` (function), methods (method, addressed as `Receiver.Method`), `type`
//! (struct, interface or type), `const` and `var` of one name. A declaration of one
//! spec (`type T struct{…}`) spans the keyword; in a group (`const ( … )`) each spec is
//! its own definition.

use tree_sitter::Node;

use super::{field_name, Found, Text, Up};

pub(super) fn classify<'t>(node: Node<'t>, up: &Up<'t>, text: &Text<'_>) -> Option<Found<'t>> {
    match node.kind() {
        "function_declaration" => Some(Found::new(
            "function",
            field_name(node, "name", text)?,
            node,
        )),
        "method_declaration" => {
            let mut found = Found::new("method", field_name(node, "name", text)?, node);
            found.receiver = receiver_type(node, text);
            Some(found)
        }
        "type_spec" | "type_alias" => {
            let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            Some(Found::new(
                kind,
                field_name(node, "name", text)?,
                spec_outer(node, up.get(0)),
            ))
        }
        "const_spec" | "var_spec" => {
            let mut cursor = node.walk();
            let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut cursor).collect();
            let [name] = names.as_slice() else {
                return None;
            };
            let kind = if node.kind() == "const_spec" {
                "const"
            } else {
                "var"
            };
            let name = String::from_utf8_lossy(text(*name)).into_owned();
            Some(Found::new(kind, name, spec_outer(node, up.get(0))))
        }
        _ => None,
    }
}

/// The declarations that belong to their spec when they hold only one.
pub(super) const DECLARATIONS: &[&str] =
    &["type_declaration", "const_declaration", "var_declaration"];

/// The declaration around a spec when it is its only spec, else the spec.
fn spec_outer<'t>(spec: Node<'t>, parent: Option<Node<'t>>) -> Node<'t> {
    let Some(parent) = parent else {
        return spec;
    };
    let mut cursor = parent.walk();
    let specs = parent
        .named_children(&mut cursor)
        .filter(|c| !c.kind().contains("comment"))
        .count();
    let declaration = DECLARATIONS.contains(&parent.kind());
    if declaration && specs == 1 {
        parent
    } else {
        spec
    }
}

/// The receiver's type name of a method: `List` for `(l *List[T])`.
fn receiver_type(method: Node<'_>, text: &Text<'_>) -> Option<String> {
    let list = method.child_by_field_name("receiver")?;
    let mut cursor = list.walk();
    let parameter = list
        .named_children(&mut cursor)
        .find(|c| c.kind() == "parameter_declaration")?;
    let mut ty = parameter.child_by_field_name("type")?;
    loop {
        let next = match ty.kind() {
            "pointer_type" => ty.named_child(0),
            "generic_type" => ty.child_by_field_name("type"),
            _ => None,
        };
        match next {
            Some(n) => ty = n,
            None => break,
        }
    }
    let name = String::from_utf8_lossy(text(ty)).into_owned();
    (!name.is_empty()).then_some(name)
}
