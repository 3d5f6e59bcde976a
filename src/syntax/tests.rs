use super::*;

fn dump(path: &str, src: &str) -> Vec<String> {
    outline(path, src.as_bytes())
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {} {}-{}-{}{}{}",
                d.kind,
                d.path,
                d.trivia_line,
                d.signature_line,
                d.last_line,
                d.shared_line
                    .map(|l| format!(" shared@{l}"))
                    .unwrap_or_default(),
                d.parse_error
                    .map(|l| format!(" error@{l}"))
                    .unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn rust_outline() {
    let rust = "//! crate doc\n\nuse std::fs;\n\n/// Doc.\n#[derive(Debug)]\npub struct Journal {\n    a: u8,\n}\n\nimpl<T> Display for crate::Journal<T> {\n    /// open it\n    #[inline]\n    pub fn open() -> u8 {\n        fn inner() {}\n        1\n    }\n}\n\nconst A: u8 = 1; const B: u8 = 2;\nmacro_rules! m { () => {} }\ntrait T { fn f(&self); }\nmod x { fn y() {} }\nstatic S: u8 = 0;\ntype Alias = u8;\nenum E { V }\nunion U { a: u8 }\n";
    assert_eq!(
        dump("a.rs", rust),
        [
            "struct Journal 5-7-9",
            "impl Journal 11-11-18",
            "method Journal.open 12-14-17",
            "function Journal.open.inner 15-15-15",
            "const A 20-20-20 shared@20",
            "const B 20-20-20 shared@20",
            "macro m 21-21-21",
            "trait T 22-22-22",
            "method T.f 22-22-22 shared@22",
            "mod x 23-23-23",
            "function x.y 23-23-23 shared@23",
            "static S 24-24-24",
            "type Alias 25-25-25",
            "enum E 26-26-26",
            "union U 27-27-27",
        ]
    );
}

#[test]
fn python_outline() {
    let py = "import os\n\n# about load\n@lru_cache(maxsize=8)\ndef load(path):\n    return read(path)\n\n\nclass A:\n    X = 1\n    @property\n    def m(self):\n        def inner():\n            y = 2\n        return 1\n\nSOME_CONFIG = {\n    \"a\": 1,\n}\nx: int = 3\na, b = 1, 2\n";
    assert_eq!(
        dump("a.py", py),
        [
            "function load 3-5-6",
            "class A 9-9-15",
            "variable A.X 10-10-10",
            "method A.m 11-12-15",
            "function A.m.inner 13-13-14",
            "variable SOME_CONFIG 17-17-19",
            "variable x 20-20-20",
        ]
    );
}

#[test]
fn typescript_outline() {
    let tsx = "export const History: FC = () => {\n  const render = () => {\n    return 'hello';\n  };\n\n  return <div>{render()}</div>;\n};\n\n/** doc */\n@Component()\nexport class A {\n  @Input() x: number;\n  m(): void {}\n}\ninterface I { p: string; q(): void }\ntype T = number;\nenum E { A }\nnamespace N.M { function f() {} }\ndeclare module \"foo\" {}\nexport default function g() {}\nfunction h(a: string): void;\nabstract class B { abstract k(): void; }\n";
    assert_eq!(
        dump("a.tsx", tsx),
        [
            "function History 1-1-7",
            "function History.render 2-2-4",
            "class A 9-11-14",
            "field A.x 12-12-12",
            "method A.m 13-13-13",
            "interface I 15-15-15",
            "property I.p 15-15-15 shared@15",
            "method I.q 15-15-15 shared@15",
            "type T 16-16-16",
            "enum E 17-17-17",
            "namespace N.M 18-18-18",
            "function N.M.f 18-18-18 shared@18",
            "module foo 19-19-19",
            "function g 20-20-20",
            "function h 21-21-21",
            "class B 22-22-22",
            "method B.k 22-22-22 shared@22",
        ]
    );
    // The same file as TypeScript (no JSX) parses its non-JSX definitions alike.
    assert_eq!(dump("a.ts", "type T = number;\n"), ["type T 1-1-1"]);
}

#[test]
fn javascript_outline() {
    let js = "// c\nfunction f() {}\nclass K { #p = 1; static s = 2; get x() { return 1 } m() {} }\nlet a = 1, b = 2;\nvar v = function () {};\nexport const C = class {};\nfunction* gen() {}\nconst n = 1;\n";
    assert_eq!(
        dump("a.mjs", js),
        [
            "function f 1-2-2",
            "class K 3-3-3",
            "field K.#p 3-3-3 shared@3",
            "field K.s 3-3-3 shared@3",
            "method K.x 3-3-3 shared@3",
            "method K.m 3-3-3 shared@3",
            "function v 5-5-5",
            "class C 6-6-6",
            "function gen 7-7-7",
            "variable n 8-8-8",
        ]
    );
}

#[test]
fn go_outline() {
    let go = "package main\n\n// Journal is.\ntype Journal struct {\n\tA int\n}\n\n// Open opens.\nfunc (j *Journal) Open() error {\n\treturn nil\n}\n\nfunc (l List[T]) Len() int { return 0 }\n\nfunc main() {}\n\nconst (\n\tA = 1\n\tB = 2\n)\n\nvar x, y = 1, 2\ntype I interface{ M() }\nvar z = 3\n";
    assert_eq!(
        dump("a.go", go),
        [
            "struct Journal 3-4-6",
            "method Journal.Open 8-9-11",
            "method List.Len 13-13-13",
            "function main 15-15-15",
            "const A 18-18-18",
            "const B 19-19-19",
            "interface I 23-23-23",
            "var z 24-24-24",
        ]
    );
}

#[test]
fn languages_by_extension() {
    let got: Vec<Option<Language>> = [
        "a.rs", "d/b.pyi", "c.jsx", "x.cts", "y.tsx", "z.go", "Makefile", "a.RS", "rs",
    ]
    .iter()
    .map(|p| Language::of_path(p))
    .collect();
    assert_eq!(
        got,
        [
            Some(Language::Rust),
            Some(Language::Python),
            Some(Language::JavaScript),
            Some(Language::TypeScript),
            Some(Language::Tsx),
            Some(Language::Go),
            None,
            None,
            None
        ]
    );
    assert_eq!(
        outline("notes.txt", b"fn a() {}\n"),
        Err(OutlineError::UnknownLanguage)
    );
    assert_eq!(parse_errors("notes.txt", b"fn a( {\n"), None);
}

#[test]
fn parse_errors_count_and_locate_the_first() {
    let clean = parse_errors("a.rs", b"fn main() {}\n");
    assert_eq!(
        clean,
        Some(ParseReport {
            errors: 0,
            line: 0,
            column: 0,
            end_line: 0,
            unclosed: None
        })
    );
    let broken = parse_errors("a.py", "x = \"é\"\ndef f(:\n    pass\n".as_bytes());
    assert_eq!(
        broken,
        Some(ParseReport {
            errors: 1,
            line: 2,
            column: 7,
            end_line: 2,
            unclosed: None
        })
    );
    // A BOM is not an error, and columns count characters.
    let bom = parse_errors("a.go", "\u{feff}package a\n".as_bytes());
    assert_eq!(bom.map(|r| r.errors), Some(0));
}

#[test]
fn hunk_names_are_the_innermost_definition() {
    let names = HunkNames::of(
        "a.rs",
        b"impl A {\n    fn f() {\n        1;\n    }\n}\n\nfn g() {}\n",
    );
    let got: Vec<Option<&str>> = (1..=8).map(|l| hunk_context(&names, l)).collect();
    assert_eq!(
        got,
        [
            Some("A"),
            Some("A.f"),
            Some("A.f"),
            Some("A.f"),
            Some("A"),
            None,
            Some("g"),
            None
        ]
    );
}

/// A file nested far deeper than any stack would hold parses and outlines without
/// recursion.
#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 20_000;
    let src = format!(
        "fn f() {{ let x = {}1{}; }}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    assert_eq!(dump("a.rs", &src), ["function f 1-1-1"]);
    assert_eq!(
        parse_errors("a.rs", src.as_bytes()).map(|r| r.errors),
        Some(0)
    );
}

/// Errors inside an error region count: a second break in a file that one break
/// already wrapped in a single error region makes the count grow.
#[test]
fn errors_inside_an_error_region_count() {
    let broken =
        "fn main() {\n    if ready() {\n        go();\n}\n\nfn ready() -> bool {\n    true\n}\n";
    let one = parse_errors_since("a.rs", broken.as_bytes(), None);
    assert_eq!(
        one,
        Some(ParseReport {
            errors: 1,
            line: 1,
            column: 1,
            end_line: 8,
            unclosed: Some((2, 16))
        })
    );
    let two = parse_errors("a.rs", format!("struct ;\n{broken}").as_bytes());
    assert_eq!(two.map(|r| (r.errors, r.line, r.end_line)), Some((2, 1, 9)));
}

/// An incremental parse (the earlier version's tree, edited) reports what a full
/// parse of the same bytes reports.
#[test]
fn incremental_parses_match_full_parses() {
    let before = "fn a() {\n    1\n}\n\nfn b() {\n    if x {\n        y();\n    }\n}\n";
    let afters = [
        before.replace("    }\n}", "}"),
        before.replace("y();", "y(;"),
        before.replace("fn a", "struct ;\nfn a"),
        format!("{before}fn c() {{}}\n"),
        before.replace("1", "let = ;"),
        String::new(),
        format!("\u{feff}{before}"),
    ];
    for after in &afters {
        super::tree::cache::clear();
        let full = parse_errors_since("a.rs", after.as_bytes(), None);
        super::tree::cache::clear();
        let _ = parse_errors("a.rs", before.as_bytes());
        let incremental = parse_errors_since("a.rs", after.as_bytes(), Some(before.as_bytes()));
        assert_eq!(incremental, full, "{after:?}");
    }
}

/// The unclosed-bracket hint: a bracket left open at the end, one closed by another
/// kind, and none for a file whose brackets balance.
#[test]
fn unclosed_brackets_are_pointed_at() {
    let at = |src: &str| parse_errors_since("a.go", src.as_bytes(), None).and_then(|r| r.unclosed);
    assert_eq!(at("package a\n\nfunc f() {\n\tg(1\n}\n"), Some((4, 3)));
    assert_eq!(at("package a\n\nfunc f() {\n\tg()\n"), Some((3, 10)));
    assert_eq!(at("package a\n\nfunc f() {\n\tg() +\n}\n"), None);
}

/// Error recovery can make a definition node whose name is missing (here a Python
/// assignment made of stray tokens): no path can address it, so the outline leaves
/// it and what it holds out rather than list a `""` or a wrong path.
#[test]
fn a_definition_without_a_name_is_not_listed() {
    assert_eq!(dump("h.py", "]impl S ;:'fn f() \n"), Vec::<String>::new());
}

/// The hunk names found around given lines are those of the whole outline, for every
/// line of files with every kind of wrapper (decorators, `export`, `declare`, a Go
/// declaration of one spec) on lines of their own.
#[test]
fn hunk_names_around_lines_match_the_whole_outline() {
    let files: &[(&str, &str)] = &[
        ("a.rs", "//! doc\n\n/// Doc.\n#[derive(Debug)]\npub struct Journal {\n    a: u8,\n}\n\nimpl<T> Display for crate::Journal<T> {\n    /// open it\n    #[inline]\n    pub fn open() -> u8 {\n        fn inner() {}\n        let c = || {\n            fn deep() {}\n        };\n        1\n    }\n}\n\nconst A: u8 = 1; const B: u8 = 2;\nmacro_rules! m { () => {} }\ntrait T { fn f(&self); }\nmod x {\n    fn y() {}\n}\n"),
        ("a.py", "import os\n\n# about load\n@lru_cache(maxsize=8)\n@other\ndef load(path):\n    return read(path)\n\n\n@dataclass\nclass A:\n    X = 1\n    @property\n    def m(self):\n        def inner():\n            y = 2\n        return 1\n\nSOME_CONFIG = {\n    \"a\": 1,\n}\n"),
        ("a.tsx", "export const History: FC = () => {\n  const render = () => {\n    return 'hello';\n  };\n\n  return <div>{render()}</div>;\n};\n\n/** doc */\n@Component()\nexport class A {\n  @Input() x: number;\n  m(): void {}\n}\nexport\ninterface I {\n  p: string;\n}\ndeclare\nfunction d(): void;\nnamespace N.M {\n  function f() {}\n}\n"),
        ("a.js", "export\nconst f = () => {\n  return 1;\n};\nexport default class K {\n  m() {\n    return 2;\n  }\n}\nfunction g() {\n  const h = function () {\n    return 3;\n  };\n}\n"),
        ("a.go", "package main\n\nconst (\n\tA = 1\n)\n\ntype (\n\tT struct {\n\t\tX int\n\t}\n)\n\nvar (\n\tv = 1\n\tw = 2\n)\n\nfunc (j *Journal) Open() error {\n\treturn nil\n}\n"),
    ];
    for (path, src) in files {
        let whole = HunkNames::of(path, src.as_bytes());
        let n = src.lines().count() + 2;
        let expected: Vec<Option<&str>> = (0..=n).map(|l| hunk_context(&whole, l)).collect();
        assert!(
            expected.iter().filter(|e| e.is_some()).count() > 3,
            "{path}: {expected:?}"
        );
        for line in 0..=n {
            for lines in [vec![line], vec![line, n - line], vec![n - line, line, line]] {
                let around = HunkNames::around(path, src.as_bytes(), &lines);
                for l in lines {
                    assert_eq!(
                        hunk_context(&around, l),
                        expected[l],
                        "{path}: line {l} of {line}"
                    );
                }
            }
        }
        let all: Vec<usize> = (0..=n).collect();
        let around = HunkNames::around(path, src.as_bytes(), &all);
        let got: Vec<Option<&str>> = all.iter().map(|&l| hunk_context(&around, l)).collect();
        assert_eq!(got, expected, "{path}");
        assert!(hunk_context(&HunkNames::around(path, src.as_bytes(), &[]), 1).is_none());
    }
}

/// A preview of a changed source file (its validation, then its diff) parses the
/// pre-image once in full and the candidate incrementally from that tree; the error
/// count of the pre-image, when the candidate has errors, and the hunk names reuse the
/// pre-image's tree. A second candidate of the same pre-image parses nothing in full.
#[test]
fn a_preview_parses_the_pre_image_once() {
    use crate::edit::{candidate_diff, validate, FileCheck};
    tree::cache::isolate();
    let body: String = (0..200).map(|i| format!("    let v{i} = {i};\n")).collect();
    let before = format!("fn main() {{\n{body}}}\n\nfn other() {{}}\n");
    let check = |after: &str| -> (Vec<String>, String, (usize, usize)) {
        let start = tree::counts::get();
        let issues = validate(&[FileCheck {
            path: "p.rs",
            before: Some(before.as_bytes()),
            after: Some(after.as_bytes()),
            text_op_on_binary: false,
            meta_changed: false,
        }]);
        let diff = candidate_diff("p.rs", Some(before.as_bytes()), Some(after.as_bytes()));
        let end = tree::counts::get();
        (
            issues.into_iter().map(|i| i.code).collect(),
            diff.unified.lines().nth(2).unwrap_or_default().to_string(),
            (end.0 - start.0, end.1 - start.1),
        )
    };
    let clean = before.replace("    let v100 = 100;\n", "    let v100 = 101;\n");
    assert_eq!(
        check(&clean),
        (vec![], "@@ -99,7 +99,7 @@ main".to_string(), (1, 1))
    );
    let broken = before.replace("    let v100 = 100;\n", "    let v100 = ;\n");
    assert_eq!(
        check(&broken),
        (
            vec!["syntax_error".to_string()],
            "@@ -99,7 +99,7 @@ main".to_string(),
            (0, 1)
        )
    );
}
