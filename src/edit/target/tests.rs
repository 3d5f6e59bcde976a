//! The target ops (docs/symbols.md, "Target modes"), each with exact bytes.

use serde_json::json;

use super::super::plan::Edit;
use super::super::resolve::{apply_file_edits, FileBase};
use super::super::EditError;

fn apply(path: &str, base: &str, edit: serde_json::Value) -> Result<String, EditError> {
    let mut edit = edit;
    edit["path"] = path.into();
    let edits: Vec<Edit> = serde_json::from_value(json!([edit])).unwrap_or_else(|e| panic!("{e}"));
    let with_index: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
    apply_file_edits(
        path,
        FileBase {
            bytes: Some(base.as_bytes()),
            mode: None,
        },
        &with_index,
    )
    .map(|c| String::from_utf8(c.bytes).unwrap_or_else(|e| panic!("not UTF-8: {e}")))
}

fn ok(path: &str, base: &str, edit: serde_json::Value) -> String {
    apply(path, base, edit).unwrap_or_else(|e| panic!("{e}"))
}

fn body(symbol: &str, content: &str) -> serde_json::Value {
    json!({"op": "replace_body", "symbol": symbol, "content": content})
}

fn field(symbol: &str, text: &str, position: serde_json::Value) -> serde_json::Value {
    json!({"op": "insert_field", "symbol": symbol, "text": text, "position": position})
}

fn variant(symbol: &str, text: &str, position: serde_json::Value) -> serde_json::Value {
    json!({"op": "insert_variant", "symbol": symbol, "text": text, "position": position})
}

fn arm(symbol: &str, pattern: &str, content: &str) -> serde_json::Value {
    json!({"op": "replace_arm", "symbol": symbol, "pattern": pattern, "content": content})
}

fn check_code(e: &EditError) -> &'static str {
    e.code()
}

// ---- replace_body: Rust ----

const RS: &str = "/// Loads it.\n#[inline]\npub fn load<T: Read>(r: T) -> u8 {\n    let x = 1;\n    x\n}\n\n// after\nfn next() {}\n";

#[test]
fn rust_body_keeps_doc_attribute_signature_and_trailing_lines() {
    let out = ok("a.rs", RS, body("load", "let y = 2;\ny\n"));
    assert_eq!(
        out,
        "/// Loads it.\n#[inline]\npub fn load<T: Read>(r: T) -> u8 {\n    let y = 2;\n    y\n}\n\n// after\nfn next() {}\n"
    );
}

#[test]
fn rust_one_line_body_becomes_lines_of_its_own() {
    let out = ok("a.rs", RS, body("next", "run();"));
    assert!(out.ends_with("fn next() {\n    run();\n}\n"), "{out}");
    let out = ok("a.rs", "fn f() -> u8 { 1 }\n", body("f", "2"));
    assert_eq!(out, "fn f() -> u8 {\n    2\n}\n");
}

#[test]
fn rust_method_in_impl_is_moved_to_the_body_depth_crlf_kept() {
    let base = "impl A {\r\n    fn m(&self) {\r\n        old();\r\n    }\r\n}\r\n";
    let out = ok("a.rs", base, body("A.m", "new();\nmore();\n"));
    assert_eq!(
        out,
        "impl A {\r\n    fn m(&self) {\r\n        new();\r\n        more();\r\n    }\r\n}\r\n"
    );
}

#[test]
fn rust_nested_function_body_is_its_own() {
    let base = "fn outer() {\n    fn inner() {\n        a();\n    }\n    inner();\n}\n";
    let out = ok("a.rs", base, body("outer.inner", "b();"));
    assert_eq!(
        out,
        "fn outer() {\n    fn inner() {\n        b();\n    }\n    inner();\n}\n"
    );
    let out = ok("a.rs", base, body("outer", "inner2();"));
    assert_eq!(out, "fn outer() {\n    inner2();\n}\n");
}

#[test]
fn rust_trait_method_without_default_has_no_body() {
    let base = "trait T {\n    fn m(&self);\n}\n";
    let e = apply("a.rs", base, body("T.m", "x();"))
        .err()
        .expect("refused");
    assert_eq!(check_code(&e), "no_body");
    assert!(e.to_string().contains("has no body"), "{e}");
}

#[test]
fn rust_body_comment_after_open_brace_stays() {
    let base = "fn f() { // keep\n    a();\n}\n";
    assert_eq!(
        ok("a.rs", base, body("f", "b();")),
        "fn f() { // keep\n    b();\n}\n"
    );
}

// ---- replace_body: Python ----

const PY: &str = "@cache\ndef load(path):\n    \"\"\"Read it.\"\"\"\n    data = read(path)\n    return data\n    # trailing note\n\n\ndef save():\n    pass\n";

#[test]
fn python_body_keeps_decorator_and_docstring_and_trailing_comment() {
    let out = ok("a.py", PY, body("load", "return 1\n"));
    assert_eq!(
        out,
        "@cache\ndef load(path):\n    \"\"\"Read it.\"\"\"\n    return 1\n    # trailing note\n\n\ndef save():\n    pass\n"
    );
}

#[test]
fn python_body_starting_with_a_docstring_replaces_it() {
    let out = ok("a.py", PY, body("load", "\"\"\"New.\"\"\"\nreturn 2\n"));
    assert!(
        out.starts_with(
            "@cache\ndef load(path):\n    \"\"\"New.\"\"\"\n    return 2\n    # trailing note\n"
        ),
        "{out}"
    );
}

#[test]
fn python_one_line_body_and_method_and_crlf() {
    assert_eq!(
        ok("a.py", "def f(): return 1\nx = 2\n", body("f", "return 3")),
        "def f():\n    return 3\nx = 2\n"
    );
    let base =
        "class K:\r\n    def m(self):\r\n        a()\r\n\r\n    def n(self):\r\n        b()\r\n";
    assert_eq!(
        ok("a.py", base, body("K.m", "if x:\n    y()\n")),
        "class K:\r\n    def m(self):\r\n        if x:\r\n            y()\r\n\r\n    def n(self):\r\n        b()\r\n"
    );
}

#[test]
fn python_nested_def_in_new_body_stays_inside() {
    let base = "def f():\n    a()\n";
    assert_eq!(
        ok("a.py", base, body("f", "def g():\n    pass\nreturn g\n")),
        "def f():\n    def g():\n        pass\n    return g\n"
    );
}

#[test]
fn python_empty_body_is_refused() {
    let e = apply("a.py", "def f():\n    a()\n", body("f", "# nothing\n"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "empty_block");
}

#[test]
fn python_dedented_body_is_refused_by_the_indentation_rule() {
    let e = apply("a.py", "def f():\n    a()\n", body("f", "    a()\nb()\n"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "indentation_mismatch");
}

// ---- replace_body: JavaScript / TypeScript ----

#[test]
fn typescript_body_keeps_decorator_jsdoc_and_export() {
    let base = "/** Doc. */\nexport function f(a: number): number {\n  return a;\n}\n\nclass K {\n  @dec\n  m() {\n    return 1;\n  }\n}\n";
    let out = ok("a.ts", base, body("f", "const b = a + 1;\nreturn b;\n"));
    assert_eq!(
        out,
        "/** Doc. */\nexport function f(a: number): number {\n  const b = a + 1;\n  return b;\n}\n\nclass K {\n  @dec\n  m() {\n    return 1;\n  }\n}\n"
    );
    let out = ok("a.ts", base, body("K.m", "return 2;"));
    assert!(
        out.ends_with("  @dec\n  m() {\n    return 2;\n  }\n}\n"),
        "{out}"
    );
}

#[test]
fn javascript_arrow_function_body() {
    let base = "const f = (a) => {\n  return a;\n};\nconst g = (a) => a * 2;\n";
    assert_eq!(
        ok("a.js", base, body("f", "return a + 1;")),
        "const f = (a) => {\n  return a + 1;\n};\nconst g = (a) => a * 2;\n"
    );
    let e = apply("a.js", base, body("g", "return a;"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "unsupported_target");
    let message = e.to_string();
    assert!(
        message.contains("an arrow function with an expression body"),
        "{message}"
    );
    assert!(
        message.contains("replace_lines with \"start\": 4, \"end\": 4"),
        "{message}"
    );
}

#[test]
fn typescript_overload_signature_and_declare_have_no_body() {
    let base = "declare function d(): void;\nabstract class A {\n  abstract m(): void;\n}\n";
    let e = apply("a.ts", base, body("d", "x();"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "no_body");
    let e = apply("a.ts", base, body("A.m", "x();"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "no_body");
}

// ---- replace_body: Go ----

#[test]
fn go_body_and_method_with_tabs() {
    let base =
        "package p\n\n// F does it.\nfunc F(a int) int {\n\treturn a\n}\n\nfunc (s *S) M() {}\n";
    assert_eq!(
        ok("a.go", base, body("F", "b := a + 1\nreturn b\n")),
        "package p\n\n// F does it.\nfunc F(a int) int {\n\tb := a + 1\n\treturn b\n}\n\nfunc (s *S) M() {}\n"
    );
    assert_eq!(
        ok("a.go", base, body("S.M", "s.x = 1")),
        "package p\n\n// F does it.\nfunc F(a int) int {\n\treturn a\n}\n\nfunc (s *S) M() {\n\ts.x = 1\n}\n"
    );
}

#[test]
fn go_body_crlf_and_blank_lines_after() {
    let base = "package p\r\n\r\nfunc F() {\r\n\ta()\r\n}\r\n\r\n\r\n// G\r\nfunc G() {}\r\n";
    assert_eq!(
        ok("a.go", base, body("F", "b()\n")),
        "package p\r\n\r\nfunc F() {\r\n\tb()\r\n}\r\n\r\n\r\n// G\r\nfunc G() {}\r\n"
    );
}

#[test]
fn body_of_a_struct_is_the_wrong_kind() {
    let e = apply("a.rs", "struct S {\n    a: u8,\n}\n", body("S", "x"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "wrong_kind");
}

// ---- insert_field / insert_variant: Rust ----

const RS_STRUCT: &str = "/// A config.\n#[derive(Debug)]\npub struct Config {\n    /// The name.\n    pub name: String,\n    #[serde(default)]\n    pub size: u64,\n}\n";

#[test]
fn rust_field_first_goes_above_the_first_fields_doc_comment_with_a_comma() {
    assert_eq!(
        ok("a.rs", RS_STRUCT, field("Config", "pub id: u32", json!("first"))),
        "/// A config.\n#[derive(Debug)]\npub struct Config {\n    pub id: u32,\n    /// The name.\n    pub name: String,\n    #[serde(default)]\n    pub size: u64,\n}\n"
    );
}

#[test]
fn rust_field_last_and_after_keep_trailing_commas() {
    assert_eq!(
        ok("a.rs", RS_STRUCT, field("Config", "pub id: u32,", json!("last"))),
        "/// A config.\n#[derive(Debug)]\npub struct Config {\n    /// The name.\n    pub name: String,\n    #[serde(default)]\n    pub size: u64,\n    pub id: u32,\n}\n"
    );
    assert_eq!(
        ok("a.rs", RS_STRUCT, field("Config", "pub id: u32", json!({"after": "name"}))),
        "/// A config.\n#[derive(Debug)]\npub struct Config {\n    /// The name.\n    pub name: String,\n    pub id: u32,\n    #[serde(default)]\n    pub size: u64,\n}\n"
    );
}

#[test]
fn rust_variant_after_a_last_variant_without_comma_adds_one_there() {
    let base = "enum E {\n    A,\n    B // the b\n}\n";
    assert_eq!(
        ok("a.rs", base, variant("E", "C,", json!("last"))),
        "enum E {\n    A,\n    B, // the b\n    C\n}\n"
    );
    assert_eq!(
        ok("a.rs", base, variant("E", "Z", json!("first"))),
        "enum E {\n    Z,\n    A,\n    B // the b\n}\n"
    );
}

#[test]
fn rust_variant_crlf_nested_in_mod_and_empty_enum() {
    let base = "mod m {\r\n    pub enum E {\r\n        A(u8),\r\n    }\r\n}\r\n";
    assert_eq!(
        ok(
            "a.rs",
            base,
            variant("m.E", "B { x: u8 }", json!({"after": "A"}))
        ),
        "mod m {\r\n    pub enum E {\r\n        A(u8),\r\n        B { x: u8 },\r\n    }\r\n}\r\n"
    );
    assert_eq!(
        ok("a.rs", "enum E {\n}\n", variant("E", "A", json!("last"))),
        "enum E {\n    A\n}\n"
    );
}

#[test]
fn rust_variant_into_struct_is_wrong_kind_and_one_line_is_refused() {
    let e = apply("a.rs", RS_STRUCT, variant("Config", "A", json!("last")))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "wrong_kind");
    let e = apply(
        "a.rs",
        "struct P { x: u8 }\n",
        field("P", "y: u8", json!("last")),
    )
    .err()
    .expect("refused");
    assert_eq!(e.code(), "unsupported_target");
    assert!(
        e.to_string()
            .contains("replace_lines with \"start\": 1, \"end\": 1"),
        "{e}"
    );
}

#[test]
fn member_after_an_unknown_name_lists_the_members() {
    let e = apply(
        "a.rs",
        RS_STRUCT,
        field("Config", "x: u8", json!({"after": "nmae"})),
    )
    .err()
    .expect("refused");
    assert_eq!(e.code(), "target_not_found");
    assert!(
        e.to_string().contains("its members are \"name\", \"size\""),
        "{e}"
    );
}

// ---- insert_field: Python ----

const PY_CLASS: &str = "@dataclass\nclass Point:\n    \"\"\"A point.\"\"\"\n\n    x: int = 0\n    y: int = 0\n\n    def norm(self):\n        return 0\n\n\nclass Other:\n    pass\n";

#[test]
fn python_field_first_goes_after_the_docstring_last_after_the_last_member() {
    assert_eq!(
        ok("a.py", PY_CLASS, field("Point", "z: int = 0", json!("first"))),
        "@dataclass\nclass Point:\n    \"\"\"A point.\"\"\"\n\n    z: int = 0\n    x: int = 0\n    y: int = 0\n\n    def norm(self):\n        return 0\n\n\nclass Other:\n    pass\n"
    );
    assert_eq!(
        ok("a.py", PY_CLASS, field("Point", "z: int = 0", json!({"after": "y"}))),
        "@dataclass\nclass Point:\n    \"\"\"A point.\"\"\"\n\n    x: int = 0\n    y: int = 0\n    z: int = 0\n\n    def norm(self):\n        return 0\n\n\nclass Other:\n    pass\n"
    );
    assert_eq!(
        ok("a.py", PY_CLASS, field("Point", "\ndef twice(self):\n    return 2\n", json!("last"))),
        "@dataclass\nclass Point:\n    \"\"\"A point.\"\"\"\n\n    x: int = 0\n    y: int = 0\n\n    def norm(self):\n        return 0\n\n    def twice(self):\n        return 2\n\n\nclass Other:\n    pass\n"
    );
}

#[test]
fn python_field_in_crlf_nested_class() {
    let base = "class A:\r\n    class B:\r\n        x = 1\r\n";
    assert_eq!(
        ok("a.py", base, field("A.B", "y = 2\n", json!("last"))),
        "class A:\r\n    class B:\r\n        x = 1\r\n        y = 2\r\n"
    );
}

// ---- insert_field / insert_variant: TypeScript, Go ----

#[test]
fn typescript_interface_class_and_enum_members() {
    let base = "export interface I {\n  a: string;\n}\n\nenum Color {\n  Red,\n  Green\n}\n";
    assert_eq!(
        ok("a.ts", base, field("I", "b?: number;", json!("last"))),
        "export interface I {\n  a: string;\n  b?: number;\n}\n\nenum Color {\n  Red,\n  Green\n}\n"
    );
    assert_eq!(
        ok(
            "a.ts",
            base,
            variant("Color", "Blue", json!({"after": "Red"}))
        ),
        "export interface I {\n  a: string;\n}\n\nenum Color {\n  Red,\n  Blue,\n  Green\n}\n"
    );
    assert_eq!(
        ok("a.ts", base, variant("Color", "Blue", json!("last"))),
        "export interface I {\n  a: string;\n}\n\nenum Color {\n  Red,\n  Green,\n  Blue\n}\n"
    );
    let class = "class K {\n  @Input() a = 1;\n\n  m() {}\n}\n";
    assert_eq!(
        ok("a.ts", class, field("K", "b = 2;", json!("first"))),
        "class K {\n  b = 2;\n  @Input() a = 1;\n\n  m() {}\n}\n"
    );
}

#[test]
fn go_struct_and_interface_fields_and_no_enums() {
    let base = "package p\n\n// S is.\ntype S struct {\n\tA int // a\n\tB string\n}\n\ntype I interface {\n\tM()\n}\n";
    assert_eq!(
        ok("a.go", base, field("S", "C bool", json!({"after": "A"}))),
        "package p\n\n// S is.\ntype S struct {\n\tA int // a\n\tC bool\n\tB string\n}\n\ntype I interface {\n\tM()\n}\n"
    );
    assert_eq!(
        ok("a.go", base, field("I", "N() error", json!("first"))),
        "package p\n\n// S is.\ntype S struct {\n\tA int // a\n\tB string\n}\n\ntype I interface {\n\tN() error\n\tM()\n}\n"
    );
    let e = apply("a.go", base, variant("S", "X", json!("last")))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "wrong_kind");
}

// ---- replace_arm ----

const RS_MATCH: &str = "fn f(x: Option<u8>) -> u8 {\n    match x {\n        // the usual\n        Some(n) if n > 1 => n,\n        Some(n) => {\n            n + 1\n        }\n        None => 0,\n    }\n}\n";

#[test]
fn rust_arm_by_pattern_with_guard_keeps_comments_and_adds_the_comma() {
    assert_eq!(
        ok("a.rs", RS_MATCH, arm("f", "Some(n) if n > 1", "Some(n) if n > 1 => n * 2")),
        "fn f(x: Option<u8>) -> u8 {\n    match x {\n        // the usual\n        Some(n) if n > 1 => n * 2,\n        Some(n) => {\n            n + 1\n        }\n        None => 0,\n    }\n}\n"
    );
    assert_eq!(
        ok("a.rs", RS_MATCH, arm("f", "Some(n)", "Some(n) => {\n    n + 2\n}\n")),
        "fn f(x: Option<u8>) -> u8 {\n    match x {\n        // the usual\n        Some(n) if n > 1 => n,\n        Some(n) => {\n            n + 2\n        }\n        None => 0,\n    }\n}\n"
    );
    assert_eq!(
        ok("a.rs", RS_MATCH, arm("f", "None", "None => 9")),
        "fn f(x: Option<u8>) -> u8 {\n    match x {\n        // the usual\n        Some(n) if n > 1 => n,\n        Some(n) => {\n            n + 1\n        }\n        None => 9,\n    }\n}\n"
    );
}

#[test]
fn rust_arm_repeated_pattern_needs_occurrence() {
    let base = "fn f(a: u8, b: u8) {\n    match a {\n        0 => x(),\n        _ => {}\n    }\n    match b {\n        0 => y(),\n        _ => {}\n    }\n}\n";
    let e = apply("a.rs", base, arm("f", "0", "0 => z()"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "ambiguous_target");
    assert_eq!(e.failures()[0].lines, vec![3, 7]);
    let mut second = arm("f", "0", "0 => z()");
    second["occurrence"] = 2.into();
    assert_eq!(
        ok("a.rs", base, second),
        "fn f(a: u8, b: u8) {\n    match a {\n        0 => x(),\n        _ => {}\n    }\n    match b {\n        0 => z(),\n        _ => {}\n    }\n}\n"
    );
    let e = apply("a.rs", base, arm("f", "1", "1 => z()"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "target_not_found");
    assert!(e.to_string().contains("\"0\", \"_\", \"0\", \"_\""), "{e}");
}

#[test]
fn go_case_and_default_crlf() {
    let base = "package p\r\n\r\nfunc F(x int) int {\r\n\tswitch x {\r\n\tcase 1, 2:\r\n\t\treturn 1\r\n\tdefault:\r\n\t\treturn 0\r\n\t}\r\n}\r\n";
    assert_eq!(
        ok("a.go", base, arm("F", "1, 2", "case 1, 2:\n\tx++\n\treturn x\n")),
        "package p\r\n\r\nfunc F(x int) int {\r\n\tswitch x {\r\n\tcase 1, 2:\r\n\t\tx++\r\n\t\treturn x\r\n\tdefault:\r\n\t\treturn 0\r\n\t}\r\n}\r\n"
    );
    assert_eq!(
        ok("a.go", base, arm("F", "default", "default:\n\treturn -1")),
        "package p\r\n\r\nfunc F(x int) int {\r\n\tswitch x {\r\n\tcase 1, 2:\r\n\t\treturn 1\r\n\tdefault:\r\n\t\treturn -1\r\n\t}\r\n}\r\n"
    );
}

#[test]
fn arms_in_python_are_unsupported_with_the_text_op_named() {
    let e = apply(
        "a.py",
        "def f(x):\n    match x:\n        case 1:\n            pass\n",
        arm("f", "1", "case 1:\n    pass\n"),
    )
    .err()
    .expect("refused");
    assert_eq!(e.code(), "unsupported_target");
    assert!(
        e.to_string()
            .contains("replace_lines with \"start\": 1, \"end\": 4"),
        "{e}"
    );
}

// ---- ambiguity as data ----

#[test]
fn ambiguous_target_lists_candidates_with_scores() {
    let base = "class A:\n    def run(self):\n        pass\n\n\ndef run():\n    pass\n\n\ndef run():\n    pass\n";
    let e = apply("a.py", base, body("run", "return 1"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "ambiguous_symbol");
    let candidates = serde_json::to_value(&e.failures()[0].candidates).unwrap_or_default();
    assert_eq!(
        candidates,
        json!([
            {"kind": "function", "start_line": 6, "end_line": 7, "matched": "exact_path", "score": 100},
            {"kind": "function", "start_line": 10, "end_line": 11, "matched": "exact_path", "score": 100},
            {"kind": "method", "start_line": 2, "end_line": 3, "matched": "name_only", "score": 25},
        ])
    );
    let mut second = body("run", "return 1");
    second["occurrence"] = 2.into();
    assert!(
        ok("a.py", base, second).ends_with("def run():\n    pass\n\n\ndef run():\n    return 1\n")
    );
}

#[test]
fn a_symbol_with_the_right_kind_among_others_is_picked() {
    // `S` names a struct and its impl: insert_field takes the struct.
    let base = "struct S {\n    a: u8,\n}\n\nimpl S {\n    fn f(&self) {}\n}\n";
    assert_eq!(
        ok("a.rs", base, field("S", "b: u8", json!("last"))),
        "struct S {\n    a: u8,\n    b: u8,\n}\n\nimpl S {\n    fn f(&self) {}\n}\n"
    );
}

// ---- the symbol ops' checks apply ----

#[test]
fn a_body_that_closes_its_function_is_a_scope_change() {
    let base = "fn f() {\n    a();\n}\n";
    let e = apply("a.rs", base, body("f", "a();\n}\nfn g() {\nb();\n"))
        .err()
        .expect("refused");
    assert_eq!(e.code(), "symbol_scope_changed");
    assert!(
        e.to_string()
            .contains("the new text's \"g\" would be in the top level, not in \"f\""),
        "{e}"
    );
}

#[test]
fn a_python_member_that_leaves_its_class_is_refused() {
    // Moved to the members' depth as one block, the text cannot leave the class; a
    // text whose lines are not one block is refused before that.
    let base = "class A:\n    x = 1\n\n\ndef after():\n    pass\n";
    let e = apply(
        "a.py",
        base,
        field("A", "    y = 2\nz = 3\n", json!("last")),
    )
    .err()
    .expect("refused");
    assert_eq!(e.code(), "indentation_mismatch");
}

#[test]
fn bom_and_missing_final_newline_are_kept() {
    let base = "\u{feff}fn f() {\n    a();\n}";
    assert_eq!(
        ok("a.rs", base, body("f", "b();")),
        "\u{feff}fn f() {\n    b();\n}"
    );
    let base = "def f():\n    a()";
    assert_eq!(ok("a.py", base, body("f", "b()\n")), "def f():\n    b()");
}

// ---- more languages × cases ----

#[test]
fn javascript_one_line_method_nested_const_and_crlf() {
    let base = "class K {\r\n  m() { return 1; }\r\n}\r\n";
    assert_eq!(
        ok("a.js", base, body("K.m", "return 2;")),
        "class K {\r\n  m() {\r\n    return 2;\r\n  }\r\n}\r\n"
    );
    let base = "function outer() {\n  const inner = () => {\n    return 1;\n  };\n  return inner;\n}\n\n// tail\n";
    assert_eq!(
        ok("a.js", base, body("outer.inner", "return 3;")),
        "function outer() {\n  const inner = () => {\n    return 3;\n  };\n  return inner;\n}\n\n// tail\n"
    );
}

#[test]
fn python_nested_function_body_and_blank_lines_after() {
    let base =
        "def outer():\n    def inner():\n        return 1\n\n    # comment\n    return inner\n";
    assert_eq!(
        ok("a.py", base, body("outer.inner", "return 2")),
        "def outer():\n    def inner():\n        return 2\n\n    # comment\n    return inner\n"
    );
}

#[test]
fn typescript_interface_crlf_first_and_enum_trailing_comma_kept() {
    let base = "interface I {\r\n  /** a */\r\n  a: string;\r\n}\r\n";
    assert_eq!(
        ok("a.ts", base, field("I", "z: number;", json!("first"))),
        "interface I {\r\n  z: number;\r\n  /** a */\r\n  a: string;\r\n}\r\n"
    );
    let base = "enum E {\n  A = 1,\n}\n";
    assert_eq!(
        ok("a.ts", base, variant("E", "B = 2", json!("last"))),
        "enum E {\n  A = 1,\n  B = 2,\n}\n"
    );
}

#[test]
fn go_struct_last_crlf_with_tags() {
    let base = "package p\r\n\r\ntype S struct {\r\n\tA int `json:\"a\"`\r\n}\r\n";
    assert_eq!(
        ok("a.go", base, field("S", "B string `json:\"b\"`", json!("last"))),
        "package p\r\n\r\ntype S struct {\r\n\tA int `json:\"a\"`\r\n\tB string `json:\"b\"`\r\n}\r\n"
    );
}

#[test]
fn rust_arm_crlf_with_attribute_and_nested_match() {
    let base = "fn f(a: u8, b: u8) -> u8 {\r\n    match a {\r\n        #[allow(unused)]\r\n        0 => match b {\r\n            1 => 1,\r\n            _ => 2,\r\n        },\r\n        _ => 3,\r\n    }\r\n}\r\n";
    assert_eq!(
        ok("a.rs", base, arm("f", "1", "1 => 10")),
        "fn f(a: u8, b: u8) -> u8 {\r\n    match a {\r\n        #[allow(unused)]\r\n        0 => match b {\r\n            10 => 10,\r\n            _ => 2,\r\n        },\r\n        _ => 3,\r\n    }\r\n}\r\n"
            .replace("10 => 10", "1 => 10")
    );
    assert_eq!(
        ok("a.rs", base, arm("f", "0", "0 => 0,")),
        "fn f(a: u8, b: u8) -> u8 {\r\n    match a {\r\n        #[allow(unused)]\r\n        0 => 0,\r\n        _ => 3,\r\n    }\r\n}\r\n"
    );
}

#[test]
fn go_type_switch_case() {
    let base = "package p\n\nfunc F(v any) string {\n\tswitch v.(type) {\n\tcase int:\n\t\treturn \"int\"\n\tcase string, []byte:\n\t\treturn \"text\"\n\t}\n\treturn \"\"\n}\n";
    assert_eq!(
        ok("a.go", base, arm("F", "string, []byte", "case string, []byte:\n\treturn \"bytes\"\n")),
        "package p\n\nfunc F(v any) string {\n\tswitch v.(type) {\n\tcase int:\n\t\treturn \"int\"\n\tcase string, []byte:\n\t\treturn \"bytes\"\n\t}\n\treturn \"\"\n}\n"
    );
}
