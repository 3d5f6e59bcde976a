//! The rules of the symbol ops (docs/symbols.md), each with exact bytes.

use super::super::plan::Edit;
use super::super::resolve::{apply_file_edits, FileBase};
use super::super::EditError;

/// Applies one plan (JSON edits array) to `base` of file `path`.
fn apply(path: &str, base: &str, edits: serde_json::Value) -> Result<String, EditError> {
    apply_bytes(path, base.as_bytes(), edits)
        .map(|b| String::from_utf8(b).unwrap_or_else(|e| panic!("not UTF-8: {e}")))
}

fn apply_bytes(path: &str, base: &[u8], edits: serde_json::Value) -> Result<Vec<u8>, EditError> {
    let edits: Vec<Edit> = serde_json::from_value(edits).unwrap_or_else(|e| panic!("{e}"));
    let with_index: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
    apply_file_edits(
        path,
        FileBase {
            bytes: Some(base),
            mode: None,
        },
        &with_index,
    )
    .map(|c| c.bytes)
}

fn op(op: &str, path: &str, symbol: &str, field: Option<(&str, &str)>) -> serde_json::Value {
    let mut v = serde_json::json!({"op": op, "path": path, "symbol": symbol});
    if let Some((k, t)) = field {
        v[k] = t.into();
    }
    v
}

fn replace(path: &str, symbol: &str, content: &str) -> serde_json::Value {
    op("replace_symbol", path, symbol, Some(("content", content)))
}

fn before(path: &str, symbol: &str, text: &str) -> serde_json::Value {
    op("insert_before_symbol", path, symbol, Some(("text", text)))
}

fn after(path: &str, symbol: &str, text: &str) -> serde_json::Value {
    op("insert_after_symbol", path, symbol, Some(("text", text)))
}

fn delete(path: &str, symbol: &str) -> serde_json::Value {
    op("delete_symbol", path, symbol, None)
}

const PY_DECORATED: &str = "@lru_cache(maxsize=8)\ndef load(path):\n    return read(path)\n\n\ndef save(path, data):\n    write(path, data)\n";

#[test]
fn python_decorator_stays_on_replace() {
    let out = apply(
        "cfg.py",
        PY_DECORATED,
        serde_json::json!([replace(
            "cfg.py",
            "load",
            "def load(path):\n    return read(path) or {}\n"
        )]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("@lru_cache(maxsize=8)\ndef load(path):\n    return read(path) or {}\n\n\ndef save(path, data):\n    write(path, data)\n")
    );
}

#[test]
fn python_multi_line_value_insert_after() {
    let base =
        "SOME_CONFIG = {\n    \"a\": {\n        \"v\": 1,\n    },\n}\n\n\ndef f():\n    return 1\n";
    let out = apply(
        "cfg.py",
        base,
        serde_json::json!([after("cfg.py", "SOME_CONFIG", "NEW = 2\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("SOME_CONFIG = {\n    \"a\": {\n        \"v\": 1,\n    },\n}\nNEW = 2\n\n\ndef f():\n    return 1\n")
    );
}

pub(crate) const TSX_HISTORY: &str = "export const History: FC = () => {\n  const render = () => {\n    return 'hello';\n  };\n\n  return <div>{render()}</div>;\n};\n";

#[test]
fn tsx_nested_arrow_function_replaced_in_place() {
    let out = apply(
        "History.tsx",
        TSX_HISTORY,
        serde_json::json!([replace(
            "History.tsx",
            "History.render",
            "  const render = () => {\n    return 'bye';\n  };\n"
        )]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("export const History: FC = () => {\n  const render = () => {\n    return 'bye';\n  };\n\n  return <div>{render()}</div>;\n};\n")
    );
}

/// Extent: from the signature's first line through the last line, terminator
/// (`;`, `}`) included; content gets the file's terminator when it lacks one.
#[test]
fn extent_is_whole_lines_and_content_gets_a_final_terminator() {
    let base = "fn a() {\n    1\n}\n\nstruct S;\n";
    let out = apply(
        "x.rs",
        base,
        serde_json::json!([replace("x.rs", "a", "fn a() {\n    2\n}")]),
    );
    assert_eq!(out.as_deref(), Ok("fn a() {\n    2\n}\n\nstruct S;\n"));
    let out = apply(
        "x.rs",
        base,
        serde_json::json!([replace("x.rs", "S", "struct S(u8);")]),
    );
    assert_eq!(out.as_deref(), Ok("fn a() {\n    1\n}\n\nstruct S(u8);\n"));
}

#[test]
fn a_definition_sharing_a_line_is_refused() {
    let base = "const A: u8 = 1; const B: u8 = 2;\nfn f() {}\n";
    let e = apply("x.rs", base, serde_json::json!([delete("x.rs", "B")]));
    match e {
        Err(EditError::SymbolNotSplicable {
            problem,
            line,
            first_line,
            last_line,
            ..
        }) => assert_eq!(
            (problem, line, first_line, last_line),
            ("shares a line with other code", 1, 1, 1)
        ),
        other => panic!("{other:?}"),
    }
    // A trailing comment or semicolon is not other code.
    let base = "fn f() {} // the f\nfunction g() {};\n";
    assert_eq!(
        apply(
            "x.rs",
            "fn f() {} // the f\nfn h() {}\n",
            serde_json::json!([delete("x.rs", "f")])
        )
        .as_deref(),
        Ok("fn h() {}\n")
    );
    assert_eq!(
        apply("x.js", base, serde_json::json!([delete("x.js", "g")])).as_deref(),
        Ok("fn f() {} // the f\n")
    );
}

/// Rust: doc comments and attributes stay for replace and go for delete.
#[test]
fn rust_attributes_and_doc_comments_are_leading_trivia() {
    let base = "use std::fmt;\n\n/// Opens it.\n#[inline]\npub fn open() -> u8 {\n    1\n}\n\nfn next() {}\n";
    let out = apply(
        "j.rs",
        base,
        serde_json::json!([replace("j.rs", "open", "pub fn open() -> u8 {\n    2\n}\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("use std::fmt;\n\n/// Opens it.\n#[inline]\npub fn open() -> u8 {\n    2\n}\n\nfn next() {}\n")
    );
    let out = apply("j.rs", base, serde_json::json!([delete("j.rs", "open")]));
    assert_eq!(out.as_deref(), Ok("use std::fmt;\n\n\nfn next() {}\n"));
    let out = apply(
        "j.rs",
        base,
        serde_json::json!([before("j.rs", "open", "const X: u8 = 0;\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("use std::fmt;\n\nconst X: u8 = 0;\n/// Opens it.\n#[inline]\npub fn open() -> u8 {\n    1\n}\n\nfn next() {}\n")
    );
}

/// A comment separated by a blank line is not the definition's, nor is an inner doc
/// comment (`//!`).
#[test]
fn trivia_stops_at_a_blank_line_and_inner_docs() {
    let base = "//! Crate.\n// Section.\n\n// About f.\nfn f() {}\n";
    let out = apply("x.rs", base, serde_json::json!([delete("x.rs", "f")]));
    assert_eq!(out.as_deref(), Ok("//! Crate.\n// Section.\n\n"));
    let base = "//! Crate.\nfn f() {}\n";
    let out = apply("x.rs", base, serde_json::json!([delete("x.rs", "f")]));
    assert_eq!(out.as_deref(), Ok("//! Crate.\n"));
}

/// Python: decorators go with a deleted function; insert_before goes above them.
#[test]
fn python_decorators_go_on_delete_and_insert_before_goes_above_them() {
    let out = apply(
        "c.py",
        PY_DECORATED,
        serde_json::json!([delete("c.py", "load")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("\n\ndef save(path, data):\n    write(path, data)\n")
    );
    let out = apply(
        "c.py",
        PY_DECORATED,
        serde_json::json!([before("c.py", "load", "import functools")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok(format!("import functools\n{PY_DECORATED}").as_str())
    );
}

/// insert_after goes right after the last line; the blank lines around stay.
#[test]
fn insert_after_keeps_blank_lines_where_they_were() {
    let base = "def a():\n    return 1\n\n\ndef b():\n    return 2\n";
    let out = apply(
        "m.py",
        base,
        serde_json::json!([after("m.py", "a", "\n\ndef a2():\n    return 3\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("def a():\n    return 1\n\n\ndef a2():\n    return 3\n\n\ndef b():\n    return 2\n")
    );
}

/// CRLF, BOM and indentation outside the splice stay byte for byte; inserted text
/// without a final terminator gets the file's CRLF.
#[test]
fn crlf_bom_and_indentation_outside_stay() {
    let base = "\u{feff}class A:\r\n    def m(self):\r\n        return 1\r\n\r\n    def n(self):\r\n        return 2\r\n";
    let out = apply(
        "a.py",
        base,
        serde_json::json!([
            replace("a.py", "A.m", "    def m(self):\r\n        return 9"),
            after("a.py", "A.n", "    X = 1")
        ]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("\u{feff}class A:\r\n    def m(self):\r\n        return 9\r\n\r\n    def n(self):\r\n        return 2\r\n    X = 1\r\n")
    );
    // Line 1 after a BOM: the BOM stays when the first definition is deleted or
    // has text inserted before it.
    let out = apply(
        "a.py",
        "\u{feff}x = 1\ny = 2\n",
        serde_json::json!([delete("a.py", "x")]),
    );
    assert_eq!(out.as_deref(), Ok("\u{feff}y = 2\n"));
    let out = apply(
        "a.py",
        "\u{feff}x = 1\n",
        serde_json::json!([before("a.py", "x", "w = 0")]),
    );
    assert_eq!(out.as_deref(), Ok("\u{feff}w = 0\nx = 1\n"));
}

/// The last definition of a file without a final newline: the file keeps having none.
#[test]
fn a_file_without_final_newline_keeps_having_none() {
    let base = "fn a() {}\nfn b() {}";
    assert_eq!(
        apply(
            "x.rs",
            base,
            serde_json::json!([replace("x.rs", "b", "fn b() { 1 }\n")])
        )
        .as_deref(),
        Ok("fn a() {}\nfn b() { 1 }")
    );
    assert_eq!(
        apply(
            "x.rs",
            base,
            serde_json::json!([after("x.rs", "b", "fn c() {}\n")])
        )
        .as_deref(),
        Ok("fn a() {}\nfn b() {}\nfn c() {}")
    );
}

/// Methods in an `impl` are `Type.method`; a struct and its impl share the name, and
/// the name alone means the struct.
#[test]
fn rust_impl_methods_and_the_struct_of_the_same_name() {
    let base = "struct Journal;\n\nimpl Journal {\n    fn open() {}\n}\n\nimpl Drop for Journal {\n    fn drop(&mut self) {}\n}\n";
    let out = apply(
        "j.rs",
        base,
        serde_json::json!([replace("j.rs", "Journal.open", "    fn open() { 1; }\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("struct Journal;\n\nimpl Journal {\n    fn open() { 1; }\n}\n\nimpl Drop for Journal {\n    fn drop(&mut self) {}\n}\n")
    );
    let out = apply(
        "j.rs",
        base,
        serde_json::json!([replace("j.rs", "Journal", "struct Journal(u8);\n")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("struct Journal(u8);\n\nimpl Journal {\n    fn open() {}\n}\n\nimpl Drop for Journal {\n    fn drop(&mut self) {}\n}\n")
    );
}

/// Several definitions of one path: an ambiguity report with each kind and lines,
/// then `occurrence` picks one in file order.
#[test]
fn ambiguity_lists_kinds_and_lines_and_occurrence_picks() {
    let base = "function f(a: string): void;\nfunction f(a: number): void;\nfunction f(a: any) {\n  return a;\n}\n";
    match apply("o.ts", base, serde_json::json!([delete("o.ts", "f")])) {
        Err(e @ EditError::AmbiguousSymbol { .. }) => {
            let EditError::AmbiguousSymbol { ref candidates, .. } = e else {
                unreachable!()
            };
            let got: Vec<(&str, usize, usize)> = candidates
                .iter()
                .map(|c| (c.kind.as_str(), c.start_line, c.end_line))
                .collect();
            assert_eq!(
                got,
                [("function", 1, 1), ("function", 2, 2), ("function", 3, 5)]
            );
            assert_eq!(
                e.to_string(),
                "edit #1 (delete_symbol in o.ts): \"f\" names 3 definitions (1: function at lines \
                 1-1, 2: function at lines 2-2, 3: function at lines 3-5); add \"occurrence\": N \
                 (1-based, in file order) to pick one"
            );
            assert_eq!(e.failures()[0].lines, [1, 2, 3]);
        }
        other => panic!("{other:?}"),
    }
    let mut edit = delete("o.ts", "f");
    edit["occurrence"] = 3.into();
    let out = apply("o.ts", base, serde_json::json!([edit.clone()]));
    assert_eq!(
        out.as_deref(),
        Ok("function f(a: string): void;\nfunction f(a: number): void;\n")
    );
    edit["occurrence"] = 4.into();
    assert!(matches!(
        apply("o.ts", base, serde_json::json!([edit])),
        Err(EditError::OccurrenceOutOfRange {
            occurrence: 4,
            count: 3,
            ..
        })
    ));
}

#[test]
fn a_missing_symbol_names_the_candidates() {
    let e = apply(
        "h.tsx",
        TSX_HISTORY,
        serde_json::json!([delete("h.tsx", "render")]),
    );
    match e {
        Err(EditError::SymbolNotFound { hint, .. }) => {
            assert!(
                hint.starts_with("did you mean \"History.render\"?"),
                "{hint}"
            )
        }
        other => panic!("{other:?}"),
    }
    let e = apply(
        "h.tsx",
        TSX_HISTORY,
        serde_json::json!([delete("h.tsx", "Nope")]),
    );
    match e {
        Err(EditError::SymbolNotFound { hint, .. }) => {
            assert!(
                hint.starts_with("its top-level definitions are \"History\";"),
                "{hint}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_languages_are_refused() {
    match apply(
        "notes.txt",
        "a\n",
        serde_json::json!([delete("notes.txt", "a")]),
    ) {
        Err(e @ EditError::UnsupportedLanguage { .. }) => {
            assert_eq!(e.code(), "unsupported_language");
            assert!(!e.is_target_failure());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_definition_with_a_parse_error_is_refused() {
    let base = "fn f() {\n    let = ;\n}\n";
    match apply("x.rs", base, serde_json::json!([delete("x.rs", "f")])) {
        Err(EditError::SymbolNotSplicable { problem, line, .. }) => {
            assert_eq!((problem, line), ("has a parse error", 2))
        }
        other => panic!("{other:?}"),
    }
}

/// Go methods are `Receiver.Method`; a Go type's doc comment is its trivia.
#[test]
fn go_methods_by_receiver() {
    let base = "package j\n\n// Journal is.\ntype Journal struct{}\n\n// Open opens.\nfunc (j *Journal) Open() error {\n\treturn nil\n}\n";
    let out = apply(
        "j.go",
        base,
        serde_json::json!([delete("j.go", "Journal.Open")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("package j\n\n// Journal is.\ntype Journal struct{}\n\n")
    );
    let out = apply(
        "j.go",
        base,
        serde_json::json!([replace("j.go", "Journal", "type Journal struct{ n int }")]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("package j\n\n// Journal is.\ntype Journal struct{ n int }\n\n// Open opens.\nfunc (j *Journal) Open() error {\n\treturn nil\n}\n")
    );
}

/// JavaScript: a class method, and `export` belongs to the definition.
#[test]
fn javascript_methods_and_exports() {
    let base = "export class K {\n  m() {\n    return 1;\n  }\n}\n\nexport function f() {}\n";
    let out = apply(
        "k.js",
        base,
        serde_json::json!([
            replace("k.js", "K.m", "  m() {\n    return 2;\n  }\n"),
            delete("k.js", "f")
        ]),
    );
    assert_eq!(
        out.as_deref(),
        Ok("export class K {\n  m() {\n    return 2;\n  }\n}\n\n")
    );
}

/// Model-based: files made of known definitions (with and without trivia, blank
/// lines, CRLF, a BOM, a missing final newline) in Python, Rust, Go and TypeScript;
/// every symbol op on any of them gives exactly the bytes of the line model — so no
/// byte outside the definition's lines (plus its trivia, for delete) ever changes.
mod model {
    use proptest::prelude::*;

    use super::*;

    /// The languages of the model: Python, Rust, Go, TypeScript.
    const LANGS: [(&str, &str, &str); 4] = [
        ("m.py", "import os", "#"),
        ("m.rs", "//! Module.", "//"),
        ("m.go", "package m", "//"),
        ("m.ts", "import x from 'x';", "//"),
    ];

    /// One definition of a generated file: its symbol, its lines (trivia first), and
    /// its (first trivia, signature, last) lines as 0-based offsets into them.
    struct Item {
        symbol: String,
        lines: Vec<String>,
        span: (usize, usize, usize),
    }

    /// (symbol, trivia lines on offer, definition lines, the method's offset and
    /// length when the target is a method inside a container).
    type Shape = (String, Vec<String>, Vec<String>, Option<(usize, usize)>);

    /// Item number `i` of language `lang`, of kind `kind` (0–2), with `trivia` (0–2)
    /// trivia lines and `body` (1–3) body lines.
    fn item(lang: usize, i: usize, kind: u8, trivia: usize, body: usize) -> Item {
        let body_lines = |f: &dyn Fn(usize) -> String| (0..body).map(f).collect::<Vec<_>>();
        let s = |x: &str| x.to_string();
        let (symbol, offered, mut def, method): Shape = match (lang, kind % 3) {
            (0, 0) => (
                format!("f{i}"),
                vec![format!("# about f{i}"), format!("@deco{i}")],
                [
                    vec![format!("def f{i}(x):")],
                    body_lines(&|k| format!("    y{k} = x")),
                    vec![s("    return x")],
                ]
                .concat(),
                None,
            ),
            (0, 1) => (
                format!("V{i}"),
                vec![format!("# V{i} holds"), s("# the values")],
                [
                    vec![format!("V{i} = {{")],
                    body_lines(&|k| format!("    \"k{k}\": {{\"v\": {k}}},")),
                    vec![s("}")],
                ]
                .concat(),
                None,
            ),
            (0, _) => (
                format!("C{i}.m"),
                vec![format!("# class C{i}"), s("@dataclass")],
                vec![
                    format!("class C{i}:"),
                    s("    def m(self):"),
                    s("        return 1"),
                ],
                Some((1, 2)),
            ),
            (1, 0) => (
                format!("f{i}"),
                vec![format!("/// Does f{i}."), s("#[inline]")],
                [
                    vec![format!("pub fn f{i}() -> u8 {{")],
                    body_lines(&|k| format!("    let _y{k} = {k};")),
                    vec![s("    1"), s("}")],
                ]
                .concat(),
                None,
            ),
            (1, 1) => (
                format!("K{i}"),
                vec![format!("// K{i}."), s("#[allow(dead_code)]")],
                [
                    vec![format!("const K{i}: [u8; {body}] = [")],
                    body_lines(&|k| format!("    {k},")),
                    vec![s("];")],
                ]
                .concat(),
                None,
            ),
            (1, _) => (
                format!("S{i}.m"),
                vec![format!("/// Impl of S{i}."), s("#[cfg(test)]")],
                vec![format!("impl S{i} {{"), s("    fn m(&self) {}"), s("}")],
                Some((1, 1)),
            ),
            (2, 0) => (
                format!("S{i}.M"),
                vec![format!("// M does {i}."), s("//")],
                [
                    vec![format!("func (s *S{i}) M() int {{")],
                    body_lines(&|k| format!("\ty{k} := {k}")),
                    vec![s("\treturn 1"), s("}")],
                ]
                .concat(),
                None,
            ),
            (2, 1) => (
                format!("V{i}"),
                vec![format!("// V{i} holds"), s("// the values.")],
                [
                    vec![format!("var V{i} = []int{{")],
                    body_lines(&|k| format!("\t{k},")),
                    vec![s("}")],
                ]
                .concat(),
                None,
            ),
            (2, _) => (
                format!("T{i}"),
                vec![format!("// T{i} is."), s("//")],
                vec![format!("type T{i} struct {{"), s("\tA int"), s("}")],
                None,
            ),
            (_, 0) => (
                format!("f{i}"),
                vec![format!("/** Does f{i}. */"), s("// more")],
                [
                    vec![format!("export function f{i}(): number {{")],
                    body_lines(&|k| format!("  const y{k} = {k};")),
                    vec![s("  return 1;"), s("}")],
                ]
                .concat(),
                None,
            ),
            (_, 1) => (
                format!("V{i}"),
                vec![format!("// V{i} holds"), s("// the values.")],
                [
                    vec![format!("export const V{i} = {{")],
                    body_lines(&|k| format!("  k{k}: {{ v: {k} }},")),
                    vec![s("};")],
                ]
                .concat(),
                None,
            ),
            (_, _) => (
                format!("C{i}.m"),
                vec![s("@sealed"), format!("// class C{i}")],
                vec![
                    format!("class C{i} {{"),
                    s("  m(): number {"),
                    s("    return 1;"),
                    s("  }"),
                    s("}"),
                ],
                Some((1, 3)),
            ),
        };
        let mut lines: Vec<String> = offered.into_iter().take(trivia).collect();
        let n = lines.len();
        lines.append(&mut def);
        // A method's trivia would sit above it; the container's trivia is not its.
        let span = match method {
            Some((at, len)) => (n + at, n + at, n + at + len - 1),
            None => (0, n, lines.len() - 1),
        };
        Item {
            symbol,
            lines,
            span,
        }
    }

    /// (symbol, first trivia line, signature line, last line), lines 1-based.
    type Span = (String, usize, usize, usize);

    /// The file's bytes and each item's [`Span`].
    fn file(
        lang: usize,
        specs: &[(u8, usize, usize, usize)],
        crlf: bool,
        bom: bool,
        final_newline: bool,
    ) -> (Vec<u8>, Vec<Span>) {
        let term = if crlf { "\r\n" } else { "\n" };
        let (_, header, comment) = LANGS[lang];
        let mut lines: Vec<String> = vec![header.to_string()];
        let mut spans = Vec::new();
        for (i, &(kind, trivia, body, blanks)) in specs.iter().enumerate() {
            // A free comment, then a blank line: never anyone's trivia.
            if blanks == 2 {
                lines.push(format!("{comment} free"));
            }
            lines.extend((0..blanks.max(1)).map(|_| String::new()));
            let it = item(lang, i, kind, trivia, body);
            let first = lines.len() + 1;
            let (t, sig, last) = it.span;
            spans.push((it.symbol, first + t, first + sig, first + last));
            lines.extend(it.lines);
        }
        let mut text = String::new();
        if bom {
            text.push('\u{feff}');
        }
        for (k, line) in lines.iter().enumerate() {
            text.push_str(line);
            if k + 1 < lines.len() || final_newline {
                text.push_str(term);
            }
        }
        (text.into_bytes(), spans)
    }

    /// Lines of `bytes`, each with its terminator (the BOM stays on line 1).
    fn split(bytes: &[u8]) -> Vec<Vec<u8>> {
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    /// The expected bytes of `op` on the definition at (trivia, signature, last).
    /// `pass`: the definition is its block's only statement, in Python (a delete
    /// leaves `pass` in its place).
    fn expected(
        base: &[u8],
        op: u8,
        text: &str,
        span: (usize, usize, usize),
        pass: bool,
    ) -> Vec<u8> {
        let (trivia, signature, last) = span;
        let mut lines = split(base);
        let bom = base.starts_with(b"\xEF\xBB\xBF");
        let crlf_of = |l: &[u8]| l.ends_with(b"\r\n");
        let last_line = lines[last - 1].clone();
        let term: &[u8] = if last_line.ends_with(b"\n") {
            if crlf_of(&last_line) {
                b"\r\n"
            } else {
                b"\n"
            }
        } else if crlf_of(&lines[0]) {
            b"\r\n"
        } else {
            b"\n"
        };
        // The file's convention (every model file has one), then the definition's depth.
        let file_term: &[u8] = if crlf_of(&lines[0]) { b"\r\n" } else { b"\n" };
        let indent: Vec<u8> = lines[signature - 1]
            .iter()
            .skip(if signature == 1 && bom { 3 } else { 0 })
            .take_while(|b| **b == b' ')
            .copied()
            .collect();
        let mut t = Vec::new();
        for line in text.as_bytes().split_inclusive(|b| *b == b'\n') {
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            if !body.is_empty() {
                t.extend_from_slice(&indent);
            }
            t.extend_from_slice(body);
            if line.ends_with(b"\n") {
                t.extend_from_slice(file_term);
            }
        }
        if !t.ends_with(b"\n") {
            t.extend_from_slice(term);
        }
        let eof_open = !last_line.ends_with(b"\n");
        // Line 1 keeps its BOM when lines from 1 on are replaced or removed.
        let keep_bom = |lines: &mut Vec<Vec<u8>>, from: usize| -> Vec<u8> {
            if from == 1 && bom {
                lines[0].drain(..3);
                b"\xEF\xBB\xBF".to_vec()
            } else {
                Vec::new()
            }
        };
        let joined = |ls: &[Vec<u8>]| ls.concat();
        match op % 4 {
            0 => {
                let head = keep_bom(&mut lines, signature);
                if eof_open {
                    let own = if t.ends_with(b"\r\n") { 2 } else { 1 };
                    t.truncate(t.len() - own);
                }
                [
                    joined(&lines[..signature - 1]),
                    head,
                    t,
                    joined(&lines[last..]),
                ]
                .concat()
            }
            1 => {
                let head = keep_bom(&mut lines, trivia);
                [
                    joined(&lines[..trivia - 1]),
                    head,
                    t,
                    joined(&lines[trivia - 1..]),
                ]
                .concat()
            }
            2 => {
                if eof_open {
                    let own = if t.ends_with(b"\r\n") { 2 } else { 1 };
                    let body = t[..t.len() - own].to_vec();
                    t = [term.to_vec(), body].concat();
                }
                [joined(&lines[..last]), t, joined(&lines[last..])].concat()
            }
            _ => {
                let head = keep_bom(&mut lines, trivia);
                let pass = match (pass, eof_open) {
                    (false, _) => Vec::new(),
                    (true, true) => [&indent[..], b"pass"].concat(),
                    (true, false) => [&indent[..], b"pass", term].concat(),
                };
                [
                    joined(&lines[..trivia - 1]),
                    head,
                    pass,
                    joined(&lines[last..]),
                ]
                .concat()
            }
        }
    }

    fn spec() -> impl Strategy<Value = (u8, usize, usize, usize)> {
        (0u8..3, 0usize..3, 1usize..4, 0usize..3)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        #[test]
        fn symbol_ops_touch_only_the_definitions_lines(
            lang in 0usize..4,
            specs in prop::collection::vec(spec(), 1..5),
            crlf in any::<bool>(),
            bom in any::<bool>(),
            final_newline in any::<bool>(),
            pick in any::<prop::sample::Index>(),
            op in 0u8..4,
            text in prop_oneof![Just("X = 1\n"), Just("Y = 2"), Just("# one\n# two\n"), Just("\n\nZ = 3\n"), Just("W = 4\r\n"), Just("\n")],
        ) {
            let (base, spans) = file(lang, &specs, crlf, bom, final_newline);
            let (symbol, trivia, signature, last) = spans[pick.index(spans.len())].clone();
            let path = LANGS[lang].0;
            let edit = match op {
                0 => replace(path, &symbol, text),
                1 => before(path, &symbol, text),
                2 => after(path, &symbol, text),
                _ => delete(path, &symbol),
            };
            let got = apply_bytes(path, &base, serde_json::json!([edit]));
            let pass = lang == 0 && symbol.contains('.');
            if pass && op == 0 && matches!(text, "# one\n# two\n" | "\n") {
                // The only method of a class replaced by no statement: Python would
                // reject the empty class body.
                let refused = matches!(got, Err(EditError::SymbolCheckFailed { check: "empty_block", .. }));
                prop_assert!(refused, "{:?}", got);
                return Ok(());
            }
            let want = expected(&base, op, text, (trivia, signature, last), pass);
            prop_assert_eq!(
                got.map(|b| String::from_utf8_lossy(&b).into_owned()),
                Ok(String::from_utf8_lossy(&want).into_owned()),
                "{} on {:?} in\n{}", ["replace", "insert_before", "insert_after", "delete"][op as usize], symbol, String::from_utf8_lossy(&base)
            );
        }
    }
}

/// At the end of a CRLF file without a final newline, text that ends with its own LF
/// loses exactly that LF (not two bytes), and a lone newline is not an underflow.
#[test]
fn eof_without_newline_strips_the_texts_own_terminator() {
    let base = "fn a() {}\r\nfn b() {}";
    assert_eq!(
        apply(
            "x.rs",
            base,
            serde_json::json!([replace("x.rs", "b", "fn b() { 1 }\n")])
        )
        .as_deref(),
        Ok("fn a() {}\r\nfn b() { 1 }")
    );
    assert_eq!(
        apply(
            "x.rs",
            base,
            serde_json::json!([replace("x.rs", "b", "\n")])
        )
        .as_deref(),
        Ok("fn a() {}\r\n")
    );
    assert_eq!(
        apply(
            "x.rs",
            base,
            serde_json::json!([after("x.rs", "b", "fn c() {}\n")])
        )
        .as_deref(),
        Ok("fn a() {}\r\nfn b() {}\r\nfn c() {}")
    );
}

/// Hostile input: token soup in every language (unbalanced brackets, decorators
/// anywhere, CR, invalid UTF-8, a BOM). Every definition the outline reports lies on
/// line boundaries in order, and every symbol op on it returns a candidate or a typed
/// error, never a panic.
mod hostile {
    use proptest::prelude::*;

    use super::*;
    use crate::syntax::outline;

    const PATHS: [&str; 6] = ["h.rs", "h.py", "h.js", "h.ts", "h.tsx", "h.go"];

    fn token() -> impl Strategy<Value = &'static [u8]> {
        prop::sample::select(vec![
            &b"fn f() "[..],
            b"def g(x):",
            b"class C",
            b"impl S ",
            b"func (s *S) M() ",
            b"const K = ",
            b"{",
            b"}",
            b"(",
            b")",
            b"[",
            b"]",
            b";",
            b":",
            b"=",
            b"\n",
            b"\r\n",
            b"\r",
            b"    ",
            b"\t",
            b"@d\n",
            b"#[a]\n",
            b"// c\n",
            b"# c\n",
            b"/** d */\n",
            b"x",
            b"\"s{\"",
            b"'",
            b"export ",
            b"\xFF",
            b"\xC3\xA9",
            b"=>",
            b"package p\n",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn outlines_of_token_soup_hold_their_invariants(
            path in prop::sample::select(PATHS.to_vec()),
            bom in any::<bool>(),
            tokens in prop::collection::vec(token(), 0..60),
            op in 0u8..4,
            pick in any::<prop::sample::Index>(),
        ) {
            let mut base: Vec<u8> = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
            for t in &tokens {
                base.extend_from_slice(t);
            }
            let defs = outline(path, &base).unwrap_or_default();
            let line_start = |at: usize| at == 0 || (bom && at == 3) || base.get(at - 1) == Some(&b'\n');
            for d in &defs {
                prop_assert!(d.trivia_start <= d.signature_start && d.signature_start <= d.end, "{d:?}");
                prop_assert!(d.end <= base.len(), "{d:?}");
                prop_assert!(line_start(d.trivia_start) && line_start(d.signature_start), "{d:?}");
                prop_assert!(d.end == base.len() || base[d.end - 1] == b'\n', "{d:?}");
                prop_assert!(d.trivia_line <= d.signature_line && d.signature_line <= d.last_line, "{d:?}");
            }
            let symbol = match defs.is_empty() {
                true => "f".to_string(),
                false => defs[pick.index(defs.len())].path.clone(),
            };
            let edit = match op {
                0 => replace(path, &symbol, "x\n"),
                1 => before(path, &symbol, "y"),
                2 => after(path, &symbol, "z\r\n"),
                _ => delete(path, &symbol),
            };
            match apply_bytes(path, &base, serde_json::json!([edit])) {
                Ok(_) => {}
                Err(e) => prop_assert!(
                    e.is_target_failure() || matches!(e, EditError::UnsupportedLanguage { .. }),
                    "{e:?}"
                ),
            }
        }
    }
}

/// The check an edit failed with, and its line, from a [`EditError::SymbolCheckFailed`].
fn check_of(e: Result<String, EditError>) -> (&'static str, usize, String) {
    match e {
        Err(EditError::SymbolCheckFailed {
            check,
            line,
            detail,
            ..
        }) => (check, line, detail),
        other => panic!("not a symbol check: {other:?}"),
    }
}

const PY_ACCOUNT: &str = "class Account:\n    def bump(self):\n        self.n += 1\n\n    def next(self):\n        return self.n\n";

/// Issue 33 item 1: content written at column 0 for a method is moved to the
/// method's depth, so the method stays in its class and the next one stays a method.
#[test]
fn symbol_content_at_another_depth_is_reindented() {
    assert_eq!(
        apply(
            "a.py",
            PY_ACCOUNT,
            serde_json::json!([replace("a.py", "Account.bump", "def bump(self):\n    self.n += 2\n")])
        )
        .as_deref(),
        Ok("class Account:\n    def bump(self):\n        self.n += 2\n\n    def next(self):\n        return self.n\n")
    );
    // Deeper than the definition, with a blank line: moved up, the blank line kept.
    assert_eq!(
        apply(
            "a.py",
            PY_ACCOUNT,
            serde_json::json!([after("a.py", "Account.bump", "\n        def mid(self):\n            pass\n")])
        )
        .as_deref(),
        Ok("class Account:\n    def bump(self):\n        self.n += 1\n\n    def mid(self):\n        pass\n\n    def next(self):\n        return self.n\n")
    );
    // Brace languages get the same rule.
    let rs = "impl Journal {\n    fn open() {}\n}\n";
    assert_eq!(
        apply(
            "j.rs",
            rs,
            serde_json::json!([replace("j.rs", "Journal.open", "fn open() {\n    2\n}")])
        )
        .as_deref(),
        Ok("impl Journal {\n    fn open() {\n        2\n    }\n}\n")
    );
    // A brace language keeps text whose lines are not at one depth as written.
    assert_eq!(
        apply(
            "j.rs",
            rs,
            serde_json::json!([replace("j.rs", "Journal.open", "fn open() {\n 2\n    }")])
        )
        .as_deref(),
        Ok("impl Journal {\n    fn open() {\n     2\n        }\n}\n")
    );
}

/// Issue 33 item 1: Python text with a line indented less than its first line cannot
/// be moved as one block: refused, naming the line.
#[test]
fn python_text_at_no_one_depth_is_an_indentation_mismatch() {
    let (check, line, detail) = check_of(apply(
        "a.py",
        PY_ACCOUNT,
        serde_json::json!([replace(
            "a.py",
            "Account.bump",
            "    def bump(self):\n  x = 1\n"
        )]),
    ));
    assert_eq!((check, line), ("indentation_mismatch", 2));
    assert!(
        detail.starts_with("line 2 of the new text is indented less than its first line"),
        "{detail}"
    );
}

/// Issue 33 item 1: a result that parses but moves a definition to another scope is
/// refused with `symbol_scope_changed`, naming what moved.
#[test]
fn a_definition_that_changes_scope_is_refused() {
    let ts = "class K {\n  m() {}\n  n() {}\n}\n";
    let (check, line, detail) = check_of(apply(
        "k.ts",
        ts,
        serde_json::json!([replace("k.ts", "K.m", "  m() {}\n}\nclass L {\n")]),
    ));
    assert_eq!((check, line), ("symbol_scope_changed", 5));
    assert_eq!(
        detail,
        "the result parses, but definitions change scope: \"K.n\" would become \"L.n\"; the \
         new text's \"L\" would be in the top level, not in \"K\"; check the new text's \
         indentation and brackets (it must open and close its own blocks) and resend"
    );
    // Within its scope a rename is a replacement like any other.
    assert_eq!(
        apply(
            "k.ts",
            ts,
            serde_json::json!([replace("k.ts", "K.m", "  k() {}\n")])
        )
        .as_deref(),
        Ok("class K {\n  k() {}\n  n() {}\n}\n")
    );
}

/// Issue 33 item 1: a misspelt member gets "did you mean" among its class's members.
#[test]
fn a_misspelt_member_is_matched_among_its_class_members() {
    match apply(
        "a.py",
        PY_ACCOUNT,
        serde_json::json!([delete("a.py", "Account.bmup")]),
    ) {
        Err(EditError::SymbolNotFound { hint, .. }) => assert_eq!(
            hint,
            "did you mean \"Account.bump\"? the members of \"Account\" are \"Account.bump\", \
             \"Account.next\"; a symbol is the names of its enclosing definitions and its own, \
             joined with '.' (docs/symbols.md)"
        ),
        other => panic!("{other:?}"),
    }
}

/// Issue 33 item 2: deleting the only statement of a Python block leaves `pass`, at
/// the definition's depth (Python rejects an empty block, tree-sitter does not).
#[test]
fn deleting_the_only_definition_of_a_block_leaves_pass() {
    assert_eq!(
        apply(
            "a.py",
            "class A:\n    def f(self):\n        pass\n\n\nx = 1\n",
            serde_json::json!([delete("a.py", "A.f")])
        )
        .as_deref(),
        Ok("class A:\n    pass\n\n\nx = 1\n")
    );
    assert_eq!(
        apply(
            "b.py",
            "if X:\n    def f():\n        pass\nelse:\n    y = 1\n",
            serde_json::json!([delete("b.py", "f")])
        )
        .as_deref(),
        Ok("if X:\n    pass\nelse:\n    y = 1\n")
    );
    // A block that keeps a statement gets none.
    assert_eq!(
        apply(
            "a.py",
            PY_ACCOUNT,
            serde_json::json!([delete("a.py", "Account.bump")])
        )
        .as_deref(),
        Ok("class Account:\n\n    def next(self):\n        return self.n\n")
    );
}

/// Issue 33 item 2: other ops that would empty a block are refused (`empty_block`).
#[test]
fn replacing_a_block_s_only_statement_by_comments_is_refused() {
    let (check, line, _) = check_of(apply(
        "a.py",
        "class A:\n    def f(self):\n        pass\n\n\nx = 1\n",
        serde_json::json!([replace("a.py", "A.f", "# gone\n")]),
    ));
    assert_eq!((check, line), ("empty_block", 1));
}

/// Issue 33 item 3: a comment on the first line of a block leads the definition
/// under it: delete takes it, insert_before goes above it.
#[test]
fn a_comment_opening_a_block_is_its_first_definitions_trivia() {
    let base = "if X:\n    # about f\n    def f():\n        pass\n    y = 1\n";
    assert_eq!(
        apply("a.py", base, serde_json::json!([delete("a.py", "f")])).as_deref(),
        Ok("if X:\n    y = 1\n")
    );
    assert_eq!(
        apply(
            "a.py",
            base,
            serde_json::json!([before("a.py", "f", "g = 0")])
        )
        .as_deref(),
        Ok("if X:\n    g = 0\n    # about f\n    def f():\n        pass\n    y = 1\n")
    );
    let class = "class A:\n    # about f\n    def f(self):\n        pass\n\n    def g(self):\n        pass\n";
    assert_eq!(
        apply("a.py", class, serde_json::json!([delete("a.py", "A.f")])).as_deref(),
        Ok("class A:\n\n    def g(self):\n        pass\n")
    );
}

/// Issue 33 item 3: comment lines indented under a definition after its last statement
/// are not part of it (docs/symbols.md): replace keeps them.
#[test]
fn trailing_comments_after_the_last_statement_are_kept() {
    let base = "def f():\n    x = 1\n    # trailing\n\n    # more\ny = 2\n";
    assert_eq!(
        apply(
            "a.py",
            base,
            serde_json::json!([replace("a.py", "f", "def f():\n    x = 2\n")])
        )
        .as_deref(),
        Ok("def f():\n    x = 2\n    # trailing\n\n    # more\ny = 2\n")
    );
    assert_eq!(
        apply("a.py", base, serde_json::json!([delete("a.py", "f")])).as_deref(),
        Ok("    # trailing\n\n    # more\ny = 2\n")
    );
}

/// Issue 33 item 4: symbol text is written in the file's line-ending convention when
/// the file has one.
#[test]
fn symbol_text_takes_the_files_line_endings() {
    assert_eq!(
        apply(
            "x.rs",
            "fn a() {}\r\nfn b() {}\r\n",
            serde_json::json!([replace("x.rs", "b", "fn b() {\n    1\n}\n")])
        )
        .as_deref(),
        Ok("fn a() {}\r\nfn b() {\r\n    1\r\n}\r\n")
    );
    assert_eq!(
        apply(
            "x.rs",
            "fn a() {}\nfn b() {}\n",
            serde_json::json!([after("x.rs", "a", "fn c() {\r\n}\r\n")])
        )
        .as_deref(),
        Ok("fn a() {}\nfn c() {\n}\nfn b() {}\n")
    );
    // A file that mixes them already: the text stays as written.
    assert_eq!(
        apply(
            "x.rs",
            "fn a() {}\r\nfn b() {}\n",
            serde_json::json!([after("x.rs", "a", "fn c() {\n}\n")])
        )
        .as_deref(),
        Ok("fn a() {}\r\nfn c() {\n}\nfn b() {}\n")
    );
}
