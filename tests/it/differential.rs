//! The differential run of `replace_body` on real code (docs/symbols.md, "Differential
//! run"): for every function of a bounded sample of real files, its body is replaced by
//! the same body plus one statement through a preview and a commit, and the language's
//! own parser checks that only that function changed. Ignored (it reads files outside
//! the repository and runs external parsers); run it with
//! `cargo test --all-features --test it differential -- --ignored --nocapture`.
//!
//! - Python (standard library, `/usr/lib/python3*/*.py`): `python3` parses the file
//!   before and after; the after tree, without the one statement `__ue_probe__ = 1`
//!   appended to the named function, must dump (`ast.dump`) equal to the before tree.
//! - Rust (crates in `~/.cargo/registry/src`): `rustfmt --emit stdout` of the file
//!   before and after must succeed and differ by exactly one added line,
//!   `let __ue_probe = 1;`, first in a body (the line above it ends with `{`).
//! - Go (standard library, `/usr/lib/go*/src`): as Rust, with `gofmt` and the probe
//!   `__ue_probe := 1` (gofmt parses, it does not type-check, so the unused variable
//!   is no error); skipped, and said so, when `gofmt` or the sources are missing.
//!
//! Bounds: `UE_DIFF_FILES` files (default 30), `UE_DIFF_PER_FILE` functions of each
//! (default 10, evenly spaced over the file's) and `UE_DIFF_FUNCTIONS` functions in all
//! (default 300) per language, files up to 200 KB, 240 s per language.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ultra_edit::syntax::parts::{self, Body, NodeAt};
use ultra_edit::{CommitOptions, Plan};

use crate::support::*;

const BUDGET: Duration = Duration::from_secs(240);
const MAX_BYTES: u64 = 200_000;

fn limit(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What the run found for one language.
#[derive(Default, Debug)]
struct Counts {
    files: usize,
    functions: usize,
    verified: usize,
    /// Typed refusals by error kind (the op said it would not, and changed nothing).
    refused: BTreeMap<String, usize>,
    /// Committed, but the parser check failed: file, symbol, why.
    wrong: Vec<String>,
}

/// Up to `n` files with extension `ext` under `dirs` (at most `depth` levels down),
/// evenly spaced over the sorted list.
fn sample(dirs: &[PathBuf], ext: &str, depth: usize, n: usize) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut stack: Vec<(PathBuf, usize)> = dirs.iter().map(|d| (d.clone(), 0)).collect();
    while let Some((dir, level)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten().take(5_000) {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() && level < depth && !p.ends_with("tests") {
                stack.push((p, level + 1));
            } else if meta.is_file()
                && meta.len() <= MAX_BYTES
                && p.extension().is_some_and(|x| x == ext)
            {
                all.push(p);
            }
        }
        if all.len() > 200_000 {
            break;
        }
    }
    all.sort();
    let step = (all.len() / n.max(1)).max(1);
    all.into_iter().step_by(step).take(n).collect()
}

fn line_end(b: &[u8], at: usize) -> usize {
    b.get(at..)
        .and_then(|t| memchr::memchr(b'\n', t))
        .map_or(b.len(), |i| at + i + 1)
}

fn line_start(b: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1)
}

fn indent_of(b: &[u8], at: usize) -> Vec<u8> {
    let s = line_start(b, at);
    b[s..]
        .iter()
        .take_while(|c| **c == b' ' || **c == b'\t')
        .copied()
        .collect()
}

/// The probe statement put first in a braced body of `lang`.
fn braced_probe(lang: &str) -> &'static str {
    match lang {
        "go" => "__ue_probe := 1",
        _ => "let __ue_probe = 1;",
    }
}

/// The content of a `replace_body` that is the body plus the probe statement.
fn probe_content(lang: &str, b: &[u8], body: &Body) -> Option<String> {
    let text = |from: usize, to: usize| String::from_utf8(b.get(from..to)?.to_vec()).ok();
    match (lang, body) {
        (
            "py",
            Body::Indented {
                colon_end,
                start,
                end,
                docstring_end,
            },
        ) => {
            let header_end = line_end(b, colon_end - 1);
            let last = line_end(b, end.saturating_sub(1));
            let depth = String::from_utf8(indent_of(b, *start)).ok()?;
            if *start < header_end {
                return Some(format!("{}\n__ue_probe__ = 1\n", text(*start, *end)?));
            }
            let from = docstring_end.map_or(header_end, |d| line_end(b, d - 1));
            let mut kept = text(from.min(last), last)?;
            if !kept.is_empty() && !kept.ends_with('\n') {
                kept.push('\n');
            }
            Some(format!("{kept}{depth}__ue_probe__ = 1\n"))
        }
        ("rs" | "go", Body::Braced { open, close }) => {
            let probe = braced_probe(lang);
            let rest = &b[*open..line_end(b, *open).min(*close)];
            let own_line = rest.trim_ascii().is_empty() || rest.trim_ascii().starts_with(b"//");
            if !own_line {
                let inner = text(*open, *close)?;
                return Some(format!("{probe}\n{}\n", inner.trim()));
            }
            let from = line_end(b, *open);
            let to = match b[line_start(b, *close)..*close].trim_ascii().is_empty() {
                true => line_start(b, *close),
                false => *close,
            };
            let inner = text(from, to.max(from))?;
            let first = inner
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start().len())
                .unwrap_or(0);
            let depth = &inner.lines().find(|l| !l.trim().is_empty()).unwrap_or("")[..first];
            Some(format!("{depth}{probe}\n{inner}"))
        }
        _ => None,
    }
}

const PY_CHECK: &str = r#"
import ast, sys
before = ast.parse(open(sys.argv[1], 'rb').read())
after = ast.parse(open(sys.argv[2], 'rb').read())
name = sys.argv[3]
found = []
for node in ast.walk(after):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
        last = node.body[-1]
        if isinstance(last, ast.Assign) and len(last.targets) == 1 and \
           isinstance(last.targets[0], ast.Name) and last.targets[0].id == '__ue_probe__':
            found.append(node)
if len(found) != 1:
    print('probe found %d times' % len(found)); sys.exit(1)
if found[0].name != name:
    print('probe in %s, not %s' % (found[0].name, name)); sys.exit(1)
found[0].body.pop()
if ast.dump(before) != ast.dump(after):
    print('the rest of the tree changed'); sys.exit(1)
"#;

/// The file formatted by the language's own formatter (`rustfmt`, `gofmt`), which
/// parses it first: `None` when it does not parse.
fn formatted(lang: &str, bytes: &[u8]) -> Option<String> {
    let mut cmd = match lang {
        "go" => Command::new("gofmt"),
        _ => {
            let mut c = Command::new("rustfmt");
            c.args(["--edition", "2021", "--emit", "stdout"]);
            c
        }
    };
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(bytes).ok()?;
    let out = child.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The original with the probe put first in the body by hand, which `rustfmt` must
/// format as it formats the op's result.
fn braced_expected(lang: &str, b: &[u8], body: &Body) -> Option<Vec<u8>> {
    let Body::Braced { open, close } = body else {
        return None;
    };
    let rest = b.get(*open..line_end(b, *open))?;
    let own_line = rest.trim_ascii().is_empty() || rest.trim_ascii().starts_with(b"//");
    if lang == "go" && !own_line {
        // A one-line body becomes lines of its own (docs/symbols.md), which gofmt,
        // unlike rustfmt, keeps as written: the expected text is split the same way.
        let inner = std::str::from_utf8(b.get(*open..*close)?).ok()?.trim();
        let lines = match inner.is_empty() {
            true => format!("\n{}\n", braced_probe(lang)),
            false => format!("\n{}\n{inner}\n", braced_probe(lang)),
        };
        return Some([&b[..*open], lines.as_bytes(), &b[*close..]].concat());
    }
    let at = if own_line { line_end(b, *open) } else { *open };
    let probe = match own_line {
        true => format!("{}\n", braced_probe(lang)),
        false => format!(" {}; ", braced_probe(lang).trim_end_matches(';')),
    };
    Some([&b[..at], probe.as_bytes(), &b[at..]].concat())
}

/// Exactly one added line, the probe, first in a body.
fn only_probe_added(lang: &str, before: &str, after: &str) -> Result<(), String> {
    let b: Vec<&str> = before.lines().collect();
    let a: Vec<&str> = after.lines().collect();
    if a.len() != b.len() + 1 {
        return Err(format!("{} lines became {}", b.len(), a.len()));
    }
    let i = (0..b.len()).find(|&i| a[i] != b[i]).unwrap_or(b.len());
    if a[i].trim() != braced_probe(lang) {
        return Err(format!("first difference is {:?}", a[i]));
    }
    if a[i + 1..] != b[i..] {
        return Err("lines after the probe differ".into());
    }
    if !i
        .checked_sub(1)
        .is_some_and(|j| a[j].trim_end().ends_with('{'))
    {
        return Err("the probe is not first in a body".into());
    }
    Ok(())
}

fn run(lang: &str, files: &[PathBuf], max_functions: usize, per_file: usize) -> Counts {
    let mut counts = Counts::default();
    let ws = workspace();
    let rel = format!("probe.{lang}");
    let scratch = std::env::temp_dir().join(format!("ue-diff-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let checker = scratch.join("check.py");
    let _ = std::fs::write(&checker, PY_CHECK);
    let started = Instant::now();
    'files: for file in files {
        let Ok(original) = std::fs::read(file) else {
            continue;
        };
        if std::str::from_utf8(&original).is_err() {
            continue;
        }
        let before_fmt = match lang {
            "rs" | "go" => match formatted(lang, &original) {
                Some(f) => Some(f),
                None => continue,
            },
            _ => None,
        };
        let Ok(defs) = ultra_edit::syntax::outline(&rel, &original) else {
            continue;
        };
        counts.files += 1;
        let functions: Vec<_> = defs
            .iter()
            .filter(|d| matches!(d.kind, "function" | "method"))
            .collect();
        let step = (functions.len() / per_file.max(1)).max(1);
        for (i, def) in functions.iter().enumerate().step_by(step).take(per_file) {
            if counts.functions >= max_functions || started.elapsed() > BUDGET {
                break 'files;
            }
            if def.parse_error.is_some() || def.shared_line.is_some() {
                continue;
            }
            let Ok(body) = parts::body(&rel, &original, NodeAt::of(def)) else {
                continue;
            };
            let Some(content) = probe_content(lang, &original, &body) else {
                continue;
            };
            counts.functions += 1;
            ws.write(&rel, &original);
            let mut edit = serde_json::json!({"op": "replace_body", "path": rel,
                "symbol": def.path, "content": content});
            let same = |d: &&&ultra_edit::syntax::Definition| d.path == def.path;
            if functions.iter().filter(same).count() > 1 {
                edit["occurrence"] = (functions[..i].iter().filter(same).count() + 1).into();
            }
            let plan = serde_json::json!({"edits": [edit]});
            let plan = match Plan::from_json(plan.to_string().as_bytes()) {
                Ok(p) => p,
                Err(e) => panic!("{e}"),
            };
            let committed = ws
                .journal
                .preview(&plan)
                .and_then(|p| ws.journal.commit(p.handle, CommitOptions::default()));
            let what = format!("{}: {}", file.display(), def.path);
            if let Err(e) = committed {
                let kind = match &e {
                    ultra_edit::Error::Edit(edit) => edit.code().to_string(),
                    other => other.kind().to_string(),
                };
                *counts.refused.entry(kind).or_default() += 1;
                if ws.read(&rel) != original {
                    counts
                        .wrong
                        .push(format!("{what}: refused but the file changed"));
                }
                continue;
            }
            let after = ws.read(&rel);
            let verdict = match lang {
                "py" => {
                    let a = scratch.join("a.py");
                    let b = scratch.join("b.py");
                    let _ = std::fs::write(&a, &original);
                    let _ = std::fs::write(&b, &after);
                    let name = def.path.rsplit('.').next().unwrap_or(&def.path);
                    let python = match Path::new("/usr/bin/python3").exists() {
                        true => "/usr/bin/python3",
                        false => "python3",
                    };
                    let out = Command::new(python)
                        .arg(&checker)
                        .arg(&a)
                        .arg(&b)
                        .arg(name)
                        .output();
                    match out {
                        Ok(o) if o.status.success() => Ok(()),
                        Ok(o) => Err(String::from_utf8_lossy(&o.stdout).trim().to_string()),
                        Err(e) => Err(e.to_string()),
                    }
                }
                _ => match (
                    formatted(lang, &after),
                    &before_fmt,
                    braced_expected(lang, &original, &body),
                ) {
                    (Some(a), Some(b), Some(expected)) => match formatted(lang, &expected) {
                        Some(e) if e == a => Ok(()),
                        Some(_) => only_probe_added(lang, b, &a),
                        None => Err("the formatter rejects the expected text".into()),
                    },
                    _ => Err("the formatter rejects the result".into()),
                },
            };
            match verdict {
                Ok(()) => counts.verified += 1,
                Err(why) => counts.wrong.push(format!("{what}: {why}")),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    counts
}

fn report(lang: &str, counts: &Counts) {
    println!(
        "{lang}: {} files, {} functions, {} committed and verified, refused {:?}, wrong {}",
        counts.files,
        counts.functions,
        counts.verified,
        counts.refused,
        counts.wrong.len()
    );
    for w in counts.wrong.iter().take(30) {
        println!("  wrong: {w}");
    }
}

#[test]
#[ignore = "reads the Python standard library and cargo's registry, runs python3 and rustfmt"]
fn differential_replace_body_on_real_code() {
    let files = limit("UE_DIFF_FILES", 30);
    let functions = limit("UE_DIFF_FUNCTIONS", 300);
    let per_file = limit("UE_DIFF_PER_FILE", 10);
    let python: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("python3.") && !n.ends_with("-dist"))
                })
                .collect()
        })
        .unwrap_or_default();
    let py = run("py", &sample(&python, "py", 0, files), functions, per_file);
    report("Python", &py);
    let home = std::env::var("HOME").unwrap_or_default();
    let registry: Vec<PathBuf> = std::fs::read_dir(Path::new(&home).join(".cargo/registry/src"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let rs = run(
        "rs",
        &sample(&registry, "rs", 3, files),
        functions,
        per_file,
    );
    report("Rust", &rs);
    let go_src: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .map(|d| {
            d.flatten()
                .map(|e| e.path().join("src"))
                .filter(|p| {
                    p.parent()
                        .and_then(|p| p.file_name())
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("go"))
                        && p.is_dir()
                })
                .take(1)
                .collect()
        })
        .unwrap_or_default();
    let go = if Command::new("gofmt").arg("-h").output().is_err() || go_src.is_empty() {
        println!("Go: skipped: gofmt or the Go standard library (/usr/lib/go*/src) is missing");
        Counts::default()
    } else {
        let go = run("go", &sample(&go_src, "go", 2, files), functions, per_file);
        report("Go", &go);
        go
    };
    assert!(
        py.wrong.is_empty() && rs.wrong.is_empty() && go.wrong.is_empty(),
        "{py:?}\n{rs:?}\n{go:?}"
    );
}
