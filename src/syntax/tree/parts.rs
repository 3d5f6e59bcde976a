//! The parts of a definition's syntax tree that the target ops splice (see
//! [`crate::syntax::parts`]): found from the definition's own node, whose byte range
//! the outline gives ([`crate::syntax::Definition::node`]).

use tree_sitter::Node;

use super::{last_statement, parse, Language, Parsed};
use crate::syntax::parts::{Arm, Body, Member, MemberKind, Members, NodeAt, PartError};

/// The node spanning exactly `at.range` (file offsets) with kind `at.kind`.
fn own_node<'t>(parsed: &'t Parsed<'_>, at: &NodeAt) -> Option<Node<'t>> {
    let start = at.range.start.checked_sub(parsed.bom)?;
    let end = at.range.end.checked_sub(parsed.bom)?;
    let mut node = parsed
        .tree
        .root_node()
        .descendant_for_byte_range(start, end)?;
    for _ in 0..10_000 {
        if (node.start_byte(), node.end_byte()) == (start, end) && node.kind() == at.kind {
            return Some(node);
        }
        node = node.parent()?;
    }
    None
}

fn parsed_node<T>(
    language: Language,
    bytes: &[u8],
    range: &NodeAt,
    f: impl FnOnce(&Parsed<'_>, Node<'_>) -> Result<T, PartError>,
) -> Result<T, PartError> {
    let parsed = parse(language, bytes).ok_or(PartError::NotParsed)?;
    let node = own_node(&parsed, range).ok_or(PartError::NotParsed)?;
    f(&parsed, node)
}

/// See [`crate::syntax::parts::body`].
pub(in crate::syntax) fn body(
    language: Language,
    bytes: &[u8],
    range: NodeAt,
) -> Result<Body, PartError> {
    parsed_node(language, bytes, &range, |parsed, node| {
        let block = body_node(language, node)?;
        match language {
            Language::Python => python_body(parsed, block),
            _ => braced(parsed, block),
        }
    })
}

/// The body node of a function definition node.
fn body_node(language: Language, node: Node<'_>) -> Result<Node<'_>, PartError> {
    let kind = node.kind();
    let bodiless = matches!(
        kind,
        "function_signature_item"
            | "function_signature"
            | "method_signature"
            | "abstract_method_signature"
    );
    if bodiless {
        return Err(PartError::NoBody);
    }
    let function = match language {
        Language::Rust => kind == "function_item",
        Language::Python => kind == "function_definition",
        Language::Go => matches!(kind, "function_declaration" | "method_declaration"),
        Language::JavaScript | Language::TypeScript | Language::Tsx => matches!(
            kind,
            "function_declaration" | "generator_function_declaration" | "method_definition"
        ),
    };
    if function {
        return node.child_by_field_name("body").ok_or(PartError::NoBody);
    }
    let declaration = matches!(kind, "lexical_declaration" | "variable_declaration");
    if declaration {
        let mut cursor = node.walk();
        let value = node
            .named_children(&mut cursor)
            .find(|c| c.kind() == "variable_declarator")
            .and_then(|d| d.child_by_field_name("value"));
        if let Some(value) = value {
            let function = matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function" | "generator_function"
            );
            if function {
                let body = value.child_by_field_name("body").ok_or(PartError::NoBody)?;
                return match body.kind() {
                    "statement_block" => Ok(body),
                    _ => Err(PartError::Unsupported(
                        "an arrow function with an expression body (no braces)",
                    )),
                };
            }
        }
    }
    Err(PartError::Unsupported(
        "a definition that is not a function or method",
    ))
}

fn braced(parsed: &Parsed<'_>, block: Node<'_>) -> Result<Body, PartError> {
    let mut cursor = block.walk();
    let children: Vec<Node<'_>> = block.children(&mut cursor).collect();
    let open = children.iter().find(|c| c.kind() == "{");
    let close = children
        .last()
        .filter(|c| c.kind() == "}" && !c.is_missing());
    match (open, close) {
        (Some(open), Some(close)) if open.id() != close.id() => Ok(Body::Braced {
            open: parsed.end(*open),
            close: parsed.start(*close),
        }),
        _ => Err(PartError::Unsupported("a body without braces")),
    }
}

fn python_body(parsed: &Parsed<'_>, block: Node<'_>) -> Result<Body, PartError> {
    let colon = block
        .prev_sibling()
        .filter(|c| c.kind() == ":")
        .ok_or(PartError::Unsupported("a block without its `:`"))?;
    let (docstring_end, end) = python_block(parsed, block);
    Ok(Body::Indented {
        colon_end: parsed.end(colon),
        start: parsed.start(block),
        end,
        docstring_end,
    })
}

/// The end of a Python block's docstring (if its first statement is a string) and of
/// its last statement.
fn python_block(parsed: &Parsed<'_>, block: Node<'_>) -> (Option<usize>, usize) {
    let mut cursor = block.walk();
    let first = block
        .named_children(&mut cursor)
        .find(|c| !c.kind().contains("comment"));
    let docstring = first.filter(|s| {
        s.kind() == "expression_statement"
            && s.named_child_count() == 1
            && s.named_child(0)
                .is_some_and(|v| matches!(v.kind(), "string" | "concatenated_string"))
    });
    (
        docstring.map(|d| parsed.end(d)),
        parsed.end(last_statement(block)),
    )
}

/// See [`crate::syntax::parts::members`].
pub(in crate::syntax) fn members(
    language: Language,
    bytes: &[u8],
    range: NodeAt,
    kind: MemberKind,
) -> Result<Members, PartError> {
    parsed_node(language, bytes, &range, |parsed, node| {
        let (list, commas) = member_list(language, node, kind)?;
        if language == Language::Python {
            let colon = list
                .prev_sibling()
                .filter(|c| c.kind() == ":")
                .ok_or(PartError::Unsupported("a class without its `:`"))?;
            let (docstring_end, end) = python_block(parsed, list);
            return Ok(Members {
                open: parsed.end(colon),
                close: end,
                commas: false,
                docstring_end,
                items: items(parsed, list, false),
            });
        }
        let Body::Braced { open, close } = braced(parsed, list)? else {
            return Err(PartError::Unsupported("a body without braces"));
        };
        Ok(Members {
            open,
            close,
            commas,
            docstring_end: None,
            items: items(parsed, list, commas),
        })
    })
}

/// The node holding the members of a definition node, and whether they are separated
/// by commas.
fn member_list<'t>(
    language: Language,
    node: Node<'t>,
    kind: MemberKind,
) -> Result<(Node<'t>, bool), PartError> {
    let unsupported = PartError::Unsupported;
    let body = |n: Node<'t>| n.child_by_field_name("body");
    match (language, node.kind(), kind) {
        (Language::Rust, "struct_item", MemberKind::Field)
        | (Language::Rust, "union_item", _)
        | (Language::Rust, "enum_item", MemberKind::Variant) => {
            let list = body(node).ok_or(unsupported("a unit struct (no braces)"))?;
            match list.kind() {
                "field_declaration_list" | "enum_variant_list" => Ok((list, true)),
                _ => Err(unsupported("a tuple struct")),
            }
        }
        (Language::Python, "class_definition", MemberKind::Field) => body(node)
            .map(|b| (b, false))
            .ok_or(unsupported("a class without a body")),
        (
            Language::JavaScript | Language::TypeScript | Language::Tsx,
            "class_declaration" | "abstract_class_declaration" | "interface_declaration",
            MemberKind::Field,
        ) => body(node)
            .map(|b| (b, false))
            .ok_or(unsupported("a class without a body")),
        (Language::TypeScript | Language::Tsx, "enum_declaration", MemberKind::Variant) => {
            body(node)
                .map(|b| (b, true))
                .ok_or(unsupported("an enum without a body"))
        }
        (Language::Go, "type_spec", MemberKind::Field) => {
            let ty = node
                .child_by_field_name("type")
                .ok_or(unsupported("a type without a definition"))?;
            match ty.kind() {
                "struct_type" => ty
                    .named_child(0)
                    .filter(|l| l.kind() == "field_declaration_list")
                    .map(|l| (l, false))
                    .ok_or(unsupported("a struct without fields")),
                "interface_type" => Ok((ty, false)),
                _ => Err(unsupported("a Go type that is not a struct or interface")),
            }
        }
        (Language::Go, _, MemberKind::Variant) => Err(unsupported(
            "a Go enumeration (Go has no enum type; its constants are a `const` block)",
        )),
        (_, _, MemberKind::Field) => Err(unsupported(
            "a definition without fields (not a struct, union, class or interface)",
        )),
        (_, _, MemberKind::Variant) => Err(unsupported(
            "a definition without variants (not an enum or union)",
        )),
    }
}

/// The members of a member list node.
fn items(parsed: &Parsed<'_>, list: Node<'_>, commas: bool) -> Vec<Member> {
    let mut cursor = list.walk();
    let children: Vec<Node<'_>> = list.children(&mut cursor).collect();
    let mut out = Vec::new();
    let mut attributes: Option<usize> = None;
    for (i, child) in children.iter().enumerate() {
        let kind = child.kind();
        if !child.is_named() || kind.contains("comment") {
            continue;
        }
        if kind == "attribute_item" || kind == "decorator" {
            attributes.get_or_insert(parsed.start(*child));
            continue;
        }
        let next = children.get(i + 1).filter(|n| !n.is_missing());
        let comma = commas && next.is_some_and(|n| n.kind() == ",");
        let end = match next.filter(|n| matches!(n.kind(), "," | ";")) {
            Some(separator) => parsed.end(*separator),
            None => parsed.end(last_statement(*child)),
        };
        out.push(Member {
            name: member_name(parsed, *child),
            start: attributes.take().unwrap_or(parsed.start(*child)),
            end,
            comma,
        });
    }
    out
}

/// The name of a member node: its `name` (or `property`) field, through a decorated
/// definition, an assignment's left side, or an identifier member itself.
fn member_name(parsed: &Parsed<'_>, node: Node<'_>) -> String {
    let text = |n: Node<'_>| String::from_utf8_lossy(parsed.text(n)).into_owned();
    let mut node = node;
    if node.kind() == "decorated_definition" {
        if let Some(d) = node.child_by_field_name("definition") {
            node = d;
        }
    }
    if node.kind() == "expression_statement" {
        if let Some(left) = node
            .named_child(0)
            .filter(|a| a.kind() == "assignment")
            .and_then(|a| a.child_by_field_name("left"))
        {
            return text(left);
        }
    }
    for field in ["name", "property"] {
        if let Some(n) = node.child_by_field_name(field) {
            return text(n);
        }
    }
    match node.kind() {
        "property_identifier" | "identifier" | "string" => text(node),
        "field_declaration" | "type_elem" => {
            // A Go embedded field or type element: its type.
            node.named_child(0).map(text).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// See [`crate::syntax::parts::arms`].
pub(in crate::syntax) fn arms(
    language: Language,
    bytes: &[u8],
    range: NodeAt,
) -> Result<Vec<Arm>, PartError> {
    let switches: &[&str] =
        match language {
            Language::Rust => &["match_block"],
            Language::Go => &["expression_switch_statement", "type_switch_statement"],
            _ => return Err(PartError::Unsupported(
                "a language without match arms the ops know (Rust `match` and Go `switch` only)",
            )),
        };
    parsed_node(language, bytes, &range, |parsed, node| {
        let body = body_node(language, node)?;
        let mut out = Vec::new();
        let mut stack = vec![body];
        let mut cursor = body.walk();
        while let Some(n) = stack.pop() {
            let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
            if switches.contains(&n.kind()) {
                let cases: Vec<Node<'_>> = children
                    .iter()
                    .copied()
                    .filter(|c| {
                        matches!(
                            c.kind(),
                            "match_arm" | "expression_case" | "type_case" | "default_case"
                        )
                    })
                    .collect();
                for (i, case) in cases.iter().enumerate() {
                    out.push(arm(parsed, *case, i + 1 == cases.len()));
                }
            }
            stack.extend(children.into_iter().rev());
        }
        out.sort_by_key(|a| a.start);
        Ok(out)
    })
}

fn arm(parsed: &Parsed<'_>, case: Node<'_>, last: bool) -> Arm {
    let text = |from: usize, to: usize| {
        let bytes = parsed.bytes.get(from..to).unwrap_or_default();
        String::from_utf8_lossy(bytes).trim().to_string()
    };
    let pattern = match case.kind() {
        "match_arm" => case
            .child_by_field_name("pattern")
            .map(|p| text(parsed.start(p), parsed.end(p)))
            .unwrap_or_default(),
        "default_case" => "default".to_string(),
        _ => {
            let mut cursor = case.walk();
            let children: Vec<Node<'_>> = case.children(&mut cursor).collect();
            let keyword = children.iter().find(|c| c.kind() == "case");
            let colon = children.iter().find(|c| c.kind() == ":");
            match (keyword, colon) {
                (Some(k), Some(c)) => text(parsed.end(*k), parsed.start(*c)),
                _ => String::new(),
            }
        }
    };
    let end = match case.kind() {
        "match_arm" => parsed.end(case),
        _ => parsed.end(last_statement(case)),
    };
    // Attributes above a Rust arm stay, as those above a definition do.
    let start = case
        .child_by_field_name("pattern")
        .map_or(parsed.start(case), |p| parsed.start(p));
    Arm {
        pattern,
        start,
        end,
        comma: parsed.text(case).ends_with(b","),
        last,
    }
}
