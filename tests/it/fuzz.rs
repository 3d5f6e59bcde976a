//! Fuzzing with proptest (issue 6, "Fuzzing"): arbitrary and mutated inputs to the
//! plan parser, target resolution, the diff and 3-way merge, the journal record
//! decoder, and whole hostile plans through preview and commit.
//!
//! Every target is bounded twice: a case count and a wall-clock budget (cases after the
//! budget pass without running). Failures are not persisted to disk (no
//! `proptest-regressions/` files); each crash found becomes a named `regression_*` test.
//!
//! Decoding a damaged journal record can abort the process (an allocation failure is
//! not a panic), so the unbounded decode target runs in a child process (this test
//! binary, re-run on one test) that writes each input to a file before decoding it:
//! if the child dies, the parent reports the input that killed it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde::{Deserialize, Serialize};
use ultra_edit::edit::{apply_file_edits, candidate_diff, merge3, Edit, FileBase};
use ultra_edit::journal::codec::{decode, encode};
use ultra_edit::journal::records::*;
use ultra_edit::{DumpDetail, DumpFilter, EditError, Error, Journal, Plan};

use crate::support::*;

/// Run `test` on up to `cases` values of `strategy`, for at most `budget`; panics with
/// the minimal failing input (proptest shrinks it) on failure. Panics inside `test` are
/// failures too.
///
/// With `UE_FUZZ_SECS=N` (`.ci/run` sets 60: the issue's "about a minute each"), rounds
/// of `cases` fresh random values run until N seconds have passed instead.
fn fuzz<S: Strategy>(
    name: &str,
    cases: u32,
    budget: Duration,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_time: 10_000,
        ..Config::default()
    };
    let extended = std::env::var("UE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let budget = extended.unwrap_or(budget);
    let started = Instant::now();
    let ran = std::cell::Cell::new(0u64);
    loop {
        // A new runner per round: a fresh random seed, so rounds try new values.
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&strategy, |v| {
            if started.elapsed() > budget {
                return Ok(());
            }
            ran.set(ran.get() + 1);
            test(v)
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(why, input)) => {
                panic!("fuzz {name}: {why}\nminimal failing input: {input:#?}")
            }
            Err(e) => panic!("fuzz {name}: {e}"),
        }
        if extended.is_none() || started.elapsed() > budget {
            break;
        }
    }
    println!(
        "fuzz {name}: {} cases in {:?}, no failure",
        ran.get(),
        started.elapsed()
    );
}

// ---------------------------------------------------------------------------------
// Plan parsing

const VALID_PLANS: &[&str] = &[
    r##"{"description": "rename helper", "agent": "dev-1", "edits": [
  {"op": "replace_text",  "path": "src/lib.rs", "old": "fn a()", "new": "fn b()"},
  {"op": "replace_lines", "path": "src/lib.rs", "start": 10, "end": 12, "content": "x"},
  {"op": "insert_after",  "path": "src/lib.rs", "anchor": "use std::fs;\n", "text": "use std::io;\n"},
  {"op": "insert_before", "path": "src/lib.rs", "anchor": "fn main", "text": "#[inline]\n", "occurrence": 1},
  {"op": "replace_file",  "path": "a.bin", "content_base64": "AAEC"},
  {"op": "create_file",   "path": "docs/new.md", "content": "", "mode": 420},
  {"op": "delete_file",   "path": "old.txt"}
]}"##,
    r#"{"edits":[{"op":"create_file","path":"x","content":"y","mode":"0755"}]}"#,
    r#"{"edits":[{"op":"replace_file","path":"x","content":"\u0000\ud83d\ude80","mode":"0o600"}]}"#,
    r#"{"edits":[{"op":"replace_text","path":"a/b/c","old":"\r\n","new":"\n","occurrence":3}]}"#,
];

/// Tokens a mutation may splice in: JSON structure, edge numbers, edge strings.
const TOKENS: &[&str] = &[
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "true",
    "-1",
    "0",
    "1e999",
    "-0",
    "18446744073709551616",
    "4294967296",
    "99999999999999999999999",
    "1.5",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\"../../etc/passwd\"",
    "\"/abs\"",
    "\"0o7777\"",
    "\"0o\"",
    "\"+7\"",
    "\"op\"",
    "\"edits\"",
    "\"mode\"",
    "\"occurrence\"",
    "\"content_base64\"",
    "\"====\"",
    "\"delete_file\"",
    "\"replace_lines\"",
    "{\"op\":\"replace_text\"}",
    "\u{feff}",
    "\u{0}",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize, u8),
    SetByte(usize, u8),
    Insert(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(i, t)| Mutation::Insert(i, t)),
        (any::<usize>(), 1usize..16).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), 1usize..24, any::<usize>())
            .prop_map(|(i, n, j)| Mutation::Duplicate(i, n, j)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::FlipBit(i, b) if !bytes.is_empty() => bytes[i % len] ^= 1 << b,
            Mutation::SetByte(i, v) if !bytes.is_empty() => bytes[i % len] = v,
            Mutation::Insert(i, t) => {
                let at = i % (bytes.len() + 1);
                bytes.splice(at..at, TOKENS[t].bytes());
            }
            Mutation::Delete(i, n) if !bytes.is_empty() => {
                let at = i % len;
                let end = (at + n).min(bytes.len());
                bytes.drain(at..end);
            }
            Mutation::Duplicate(i, n, j) if !bytes.is_empty() => {
                let at = i % len;
                let piece = bytes[at..(at + n).min(bytes.len())].to_vec();
                let to = j % (bytes.len() + 1);
                bytes.splice(to..to, piece);
            }
            _ => {}
        }
    }
    bytes
}

/// A plan that parsed must pass its own checks and survive a JSON round trip.
fn check_parsed(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(plan) = Plan::from_json(bytes) {
        prop_assert!(plan.check().is_ok());
        prop_assert!(!plan.edits.is_empty());
        for e in &plan.edits {
            prop_assert!(e.check().is_ok(), "{e:?}");
            let _ = e.content_bytes();
        }
        let _ = plan.by_path();
        let json = serde_json::to_vec(&plan).unwrap();
        let again = Plan::from_json(&json);
        prop_assert_eq!(
            again.as_ref().ok(),
            Some(&plan),
            "round trip: {}",
            String::from_utf8_lossy(&json)
        );
    }
    Ok(())
}

#[test]
fn plan_parsing_never_panics_on_arbitrary_bytes() {
    fuzz(
        "plan/arbitrary bytes",
        2000,
        Duration::from_secs(3),
        prop::collection::vec(any::<u8>(), 0..400),
        |bytes| check_parsed(&bytes),
    );
}

#[test]
fn plan_parsing_never_panics_on_mutated_valid_plans() {
    fuzz(
        "plan/mutated",
        2000,
        Duration::from_secs(4),
        (
            0..VALID_PLANS.len(),
            prop::collection::vec(mutation(), 1..8),
        ),
        |(i, ms)| check_parsed(&mutate(VALID_PLANS[i].as_bytes().to_vec(), &ms)),
    );
}

/// JSON values built from the plan's vocabulary, with every field of every type.
fn plan_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u64..20).prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "(a|b|\n|\r\n|\u{0}|é|\u{feff}|/|\\.\\.|0o7|777|AAEC|=){0,6}".prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    let value = scalar.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    let ops = prop_oneof![
        Just("replace_text"),
        Just("replace_lines"),
        Just("insert_before"),
        Just("insert_after"),
        Just("replace_file"),
        Just("create_file"),
        Just("delete_file"),
        Just("frobnicate"),
    ];
    let keys = prop::sample::subsequence(
        vec![
            "path",
            "old",
            "new",
            "occurrence",
            "start",
            "end",
            "content",
            "content_base64",
            "mode",
            "anchor",
            "text",
            "extra",
        ],
        0..6,
    );
    let edit =
        (ops, keys, prop::collection::vec(value.clone(), 6)).prop_map(|(op, keys, values)| {
            let mut m = serde_json::Map::new();
            m.insert("op".into(), json!(op));
            for (k, v) in keys.into_iter().zip(values) {
                m.insert(k.into(), v);
            }
            Value::Object(m)
        });
    (
        prop::collection::vec(edit, 0..4),
        value.clone(),
        any::<bool>(),
    )
        .prop_map(|(edits, extra, with_extra)| {
            let mut plan = json!({"description": "d", "edits": edits});
            if with_extra {
                plan["agent"] = extra;
            }
            plan
        })
}

#[test]
fn plan_parsing_never_panics_on_structured_json() {
    fuzz(
        "plan/structured",
        2000,
        Duration::from_secs(4),
        plan_value(),
        |v| check_parsed(v.to_string().as_bytes()),
    );
}

// ---------------------------------------------------------------------------------
// Target resolution: apply_file_edits against an independent model.

fn base_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(
            prop::sample::select(vec![
                b'a', b'b', b'\n', b'\r', 0u8, 0xFF, 0xEF, 0xBB, 0xBF, 0xC3, 0xA9
            ]),
            0..64,
        ),
    ]
}

/// A needle: usually a piece of the base (so it matches), else a short string.
#[derive(Debug, Clone)]
enum Needle {
    Slice(usize, usize),
    Text(String),
}

fn needle() -> impl Strategy<Value = Needle> {
    prop_oneof![
        3 => (any::<usize>(), 1usize..6).prop_map(|(i, n)| Needle::Slice(i, n)),
        1 => "(a|b|\n|\r\n|é|\u{0}){0,3}".prop_map(Needle::Text),
    ]
}

fn needle_text(base: &[u8], n: &Needle) -> String {
    match n {
        Needle::Text(s) => s.clone(),
        Needle::Slice(i, len) => {
            if base.is_empty() {
                return "a".into();
            }
            let at = i % base.len();
            let piece = &base[at..(at + len).min(base.len())];
            String::from_utf8_lossy(piece).into_owned()
        }
    }
}

#[derive(Debug, Clone)]
enum EditSpec {
    ReplaceText(Needle, String, Option<usize>),
    InsertBefore(Needle, String, Option<usize>),
    InsertAfter(Needle, String, Option<usize>),
    ReplaceLines(usize, usize, String),
    Whole(u8, String),
}

fn occurrence() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![
        4 => Just(None),
        3 => (1usize..4).prop_map(Some),
        1 => Just(Some(0)),
        1 => Just(Some(usize::MAX)),
    ]
}

fn edit_spec() -> impl Strategy<Value = EditSpec> {
    let text = "(x|y|\n|\r\n|\u{0}|é){0,3}";
    let line = prop_oneof![8 => 0usize..8, 1 => Just(usize::MAX)];
    prop_oneof![
        4 => (needle(), text, occurrence()).prop_map(|(n, t, o)| EditSpec::ReplaceText(n, t, o)),
        2 => (needle(), text, occurrence()).prop_map(|(n, t, o)| EditSpec::InsertBefore(n, t, o)),
        2 => (needle(), text, occurrence()).prop_map(|(n, t, o)| EditSpec::InsertAfter(n, t, o)),
        3 => (line.clone(), line, text).prop_map(|(s, e, t)| EditSpec::ReplaceLines(s, e, t)),
        1 => (0u8..4, "[A-Za-z0-9+/=]{0,8}").prop_map(|(k, t)| EditSpec::Whole(k, t)),
    ]
}

fn build_edit(base: &[u8], spec: &EditSpec) -> Edit {
    let path = "f".to_string();
    match spec {
        EditSpec::ReplaceText(n, t, o) => Edit::ReplaceText {
            path,
            old: needle_text(base, n),
            new: t.clone(),
            occurrence: *o,
        },
        EditSpec::InsertBefore(n, t, o) => Edit::InsertBefore {
            path,
            anchor: needle_text(base, n),
            text: t.clone(),
            occurrence: *o,
        },
        EditSpec::InsertAfter(n, t, o) => Edit::InsertAfter {
            path,
            anchor: needle_text(base, n),
            text: t.clone(),
            occurrence: *o,
        },
        EditSpec::ReplaceLines(s, e, t) => Edit::ReplaceLines {
            path,
            start: *s,
            end: *e,
            content: t.clone(),
        },
        EditSpec::Whole(0, t) => Edit::ReplaceFile {
            path,
            content: None,
            content_base64: Some(t.clone()),
            mode: None,
        },
        EditSpec::Whole(1, t) => Edit::CreateFile {
            path,
            content: Some(t.clone()),
            content_base64: None,
            mode: Some(0o600),
        },
        EditSpec::Whole(2, t) => Edit::ReplaceFile {
            path,
            content: Some(t.clone()),
            content_base64: None,
            mode: None,
        },
        EditSpec::Whole(..) => Edit::DeleteFile { path },
    }
}

/// Non-overlapping matches, left to right (the documented matching rule).
fn matches_of(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if &hay[i..i + needle.len()] == needle {
            out.push(i);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

fn pick(matches: &[usize], occurrence: Option<usize>) -> Option<usize> {
    match occurrence {
        None if matches.len() == 1 => Some(matches[0]),
        None => None,
        Some(0) => None,
        Some(n) => matches.get(n - 1).copied(),
    }
}

/// The model of one text edit: the replaced range and the replacement, or None when the
/// edit must be refused.
fn model_splice(base: &[u8], e: &Edit) -> Option<(usize, usize, Vec<u8>)> {
    match e {
        Edit::ReplaceText {
            old,
            new,
            occurrence,
            ..
        } => {
            let at = pick(&matches_of(base, old.as_bytes()), *occurrence)?;
            Some((at, at + old.len(), new.as_bytes().to_vec()))
        }
        Edit::InsertBefore {
            anchor,
            text,
            occurrence,
            ..
        } => {
            let at = pick(&matches_of(base, anchor.as_bytes()), *occurrence)?;
            Some((at, at, text.as_bytes().to_vec()))
        }
        Edit::InsertAfter {
            anchor,
            text,
            occurrence,
            ..
        } => {
            let at = pick(&matches_of(base, anchor.as_bytes()), *occurrence)? + anchor.len();
            Some((at, at, text.as_bytes().to_vec()))
        }
        Edit::ReplaceLines {
            start,
            end,
            content,
            ..
        } => {
            // Lines end after each \n; a non-empty tail is a last line.
            let mut lines = Vec::new();
            let mut s = 0;
            for (i, &b) in base.iter().enumerate() {
                if b == b'\n' {
                    lines.push((s, i + 1));
                    s = i + 1;
                }
            }
            if s < base.len() {
                lines.push((s, base.len()));
            }
            if *start == 0 || start > end || *end > lines.len() {
                return None;
            }
            let (from, to) = (lines[start - 1].0, lines[end - 1].1);
            let replaced = &base[from..to];
            let mut text = content.as_bytes().to_vec();
            if !text.is_empty() && !text.ends_with(b"\n") && replaced.ends_with(b"\n") {
                let term: &[u8] = if replaced.ends_with(b"\r\n") {
                    b"\r\n"
                } else {
                    b"\n"
                };
                text.extend_from_slice(term);
            }
            Some((from, to, text))
        }
        _ => None,
    }
}

/// The model of a whole file's edits: `Some(bytes)` when they must apply, `None` when
/// they must be refused. Text edits are applied right to left, so no offset shifts.
fn model(base: &[u8], edits: &[Edit]) -> Option<Vec<u8>> {
    if edits.iter().any(|e| !e.is_text_op()) {
        if edits.len() != 1 {
            return None;
        }
        return match &edits[0] {
            Edit::CreateFile { .. } => None, // the file exists
            Edit::DeleteFile { .. } => Some(Vec::new()),
            e => e.content_bytes().ok().flatten(),
        };
    }
    let mut splices = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        let (s, t, text) = model_splice(base, e)?;
        splices.push((s, t, i, text));
    }
    // Overlap: two ranges that intersect, or an insertion strictly inside a range.
    for (i, a) in splices.iter().enumerate() {
        for b in &splices[i + 1..] {
            let both_ranges = a.0 < a.1 && b.0 < b.1;
            if both_ranges && a.0.max(b.0) < a.1.min(b.1) {
                return None;
            }
            for (p, r) in [(a, b), (b, a)] {
                if p.0 == p.1 && r.0 < p.0 && p.0 < r.1 {
                    return None;
                }
            }
        }
    }
    let mut out = base.to_vec();
    splices.sort_by_key(|s| std::cmp::Reverse((s.0, s.1, s.2)));
    for (s, t, _, text) in splices {
        out.splice(s..t, text);
    }
    Some(out)
}

#[test]
fn target_resolution_matches_the_model_and_keeps_every_other_byte() {
    fuzz(
        "resolve",
        2000,
        Duration::from_secs(4),
        (base_bytes(), prop::collection::vec(edit_spec(), 1..4)),
        |(base, specs)| {
            let edits: Vec<Edit> = specs.iter().map(|s| build_edit(&base, s)).collect();
            let indexed: Vec<(usize, &Edit)> = edits.iter().enumerate().collect();
            let got = apply_file_edits(
                "f",
                FileBase {
                    bytes: Some(&base),
                    mode: Some(0o644),
                },
                &indexed,
            );
            let want = model(&base, &edits);
            match (&got, &want) {
                (Ok(c), Some(w)) => {
                    let deleted = matches!(edits[0], Edit::DeleteFile { .. });
                    prop_assert_eq!(c.exists, !deleted);
                    prop_assert_eq!(&c.bytes, w, "bytes differ from the model")
                }
                (Err(_), None) => {}
                _ => prop_assert!(false, "library {got:?} but model {want:?}"),
            }
            // The brief's property, stated directly for one replace_text.
            if let (
                [Edit::ReplaceText {
                    old,
                    new,
                    occurrence,
                    ..
                }],
                Ok(c),
            ) = (edits.as_slice(), &got)
            {
                let at = pick(&matches_of(&base, old.as_bytes()), *occurrence).unwrap();
                let expect = [&base[..at], new.as_bytes(), &base[at + old.len()..]].concat();
                prop_assert_eq!(&c.bytes, &expect);
            }
            // An absent file: only create_file applies.
            let absent = apply_file_edits(
                "f",
                FileBase {
                    bytes: None,
                    mode: None,
                },
                &indexed,
            );
            if let Ok(c) = &absent {
                prop_assert!(
                    matches!(edits.as_slice(), [Edit::CreateFile { .. }]),
                    "{c:?}"
                );
            }
            Ok(())
        },
    );
}

#[test]
fn diff_and_merge_never_panic() {
    fuzz(
        "diff+merge3",
        1000,
        Duration::from_secs(3),
        (base_bytes(), base_bytes(), base_bytes()),
        |(a, b, c)| {
            let d = candidate_diff("f", Some(&a), Some(&b));
            if a == b {
                prop_assert_eq!(d.lines_added + d.lines_removed, 0);
            }
            let lines = |x: &[u8]| x.split_inclusive(|&c| c == b'\n').count();
            prop_assert!(d.binary || d.lines_added <= lines(&b), "{d:?}");
            prop_assert!(d.binary || d.lines_removed <= lines(&a), "{d:?}");
            let _ = candidate_diff("f", None, Some(&c));
            let _ = candidate_diff("f", Some(&c), None);
            let m = merge3(&a, &b, &c, "ours", "theirs");
            if m.is_clean() {
                let _ = m.merged;
            }
            // Trivial merges are exact.
            let same = merge3(&a, &a, &c, "ours", "theirs");
            prop_assert!(
                same.is_clean() && same.merged == c,
                "merge3(base, base, theirs) != theirs"
            );
            let same = merge3(&a, &b, &a, "ours", "theirs");
            prop_assert!(
                same.is_clean() && same.merged == b,
                "merge3(base, ours, base) != ours"
            );
            Ok(())
        },
    );
}

// ---------------------------------------------------------------------------------
// Journal record decoding

/// The event record as the journal stores it (`{at_ms, kind}`).
#[derive(Debug, Serialize, Deserialize)]
struct EventRecord {
    at_ms: u64,
    kind: EventKind,
}

/// Valid encodings of every record type, taken from a journal that saw previews,
/// revisions, commits, a rollback, an abort and a binary file.
fn valid_encodings() -> Vec<(&'static str, Vec<u8>)> {
    let ws = workspace();
    let p = ws.preview(
        r#"{"agent":"fz","description":"d","edits":[
        {"op":"replace_text","path":"src/lib.rs","old":"    1\n","new":"    10\n"},
        {"op":"create_file","path":"new/bin.dat","content_base64":"AAEC/w==","mode":"0600"},
        {"op":"delete_file","path":"run.sh"}]}"#,
    );
    ws.journal
        .revise(
            p.tx,
            Default::default(),
            &plan(r#"{"edits":[{"op":"replace_lines","path":"crlf.txt","start":1,"end":1,"content":"ONE"}]}"#),
        )
        .unwrap();
    ws.journal.commit(p.tx, Default::default()).unwrap();
    ws.journal.rollback(p.tx, Default::default()).unwrap();
    let q = ws
        .preview(r#"{"edits":[{"op":"replace_text","path":"src/a.rs","old":"helper","new":"h"}]}"#);
    ws.journal.abort(q.tx).unwrap();
    let mut out = Vec::new();
    ws.journal
        .dump(DumpFilter::default(), |e| {
            let ev = EventRecord {
                at_ms: e.event.at_ms,
                kind: e.event.kind.clone(),
            };
            out.push(("event", encode(&ev).unwrap()));
            out.push(("event_kind", encode(&e.event.kind).unwrap()));
            match &e.detail {
                Some(DumpDetail::Tx(t)) => out.push(("tx", encode(t).unwrap())),
                Some(DumpDetail::Revision(r)) => {
                    out.push(("revision", encode(r).unwrap()));
                    for f in &r.files {
                        out.push(("file_state", encode(&f.snapshot).unwrap()));
                    }
                }
                Some(DumpDetail::Batch(b)) => {
                    out.push(("batch", encode(b).unwrap()));
                    for f in &b.files {
                        out.push(("batch_file", encode(f).unwrap()));
                    }
                }
                Some(DumpDetail::Receipt(r)) => out.push(("receipt", encode(r).unwrap())),
                None => {}
            }
            Ok(true)
        })
        .unwrap();
    assert!(out.iter().any(|(k, _)| *k == "batch") && out.iter().any(|(k, _)| *k == "receipt"));
    out
}

/// Decode `bytes` as every record type; a decoded value must encode back to `bytes`
/// (the codec refuses trailing bytes, and bincode's encoding is canonical).
fn decode_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    fn one<T: Serialize + serde::de::DeserializeOwned + std::fmt::Debug>(
        bytes: &[u8],
    ) -> Result<(), TestCaseError> {
        if let Ok(v) = decode::<T>("fuzz", bytes) {
            let again = encode(&v).unwrap();
            let back: T = decode("fuzz", &again).unwrap();
            prop_assert_eq!(encode(&back).unwrap(), again, "{:?}", v);
        }
        Ok(())
    }
    one::<TxRecord>(bytes)?;
    one::<RevisionRecord>(bytes)?;
    one::<BatchRecord>(bytes)?;
    one::<Receipt>(bytes)?;
    one::<EventRecord>(bytes)?;
    one::<EventKind>(bytes)?;
    one::<FileState>(bytes)?;
    one::<BatchFile>(bytes)?;
    one::<StateChange>(bytes)?;
    Ok(())
}

/// bincode's varint markers for u32, u64 and u128 values (252..=254). An input without
/// them holds no length above 65535, so no decode can ask for a huge allocation; the
/// in-process targets use such inputs, the child-process target does not.
fn bounded(mut bytes: Vec<u8>) -> Vec<u8> {
    for b in bytes.iter_mut().skip(1) {
        if (252..=254).contains(b) {
            *b = 251;
        }
    }
    bytes
}

fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
    prop::collection::vec((any::<usize>(), any::<u8>()), 1..6)
}

fn flipped(mut v: Vec<u8>, flips: &[(usize, u8)]) -> Vec<u8> {
    for &(i, x) in flips {
        let n = v.len();
        // Mostly single bit flips, sometimes a whole new byte; never the format byte.
        if n > 1 {
            let at = 1 + i % (n - 1);
            v[at] = if x < 200 { v[at] ^ (1 << (x % 8)) } else { x };
        }
    }
    v
}

#[test]
fn record_decoding_never_panics_on_bounded_arbitrary_bytes() {
    fuzz(
        "decode/arbitrary (bounded lengths)",
        2000,
        Duration::from_secs(3),
        prop::collection::vec(any::<u8>(), 0..200).prop_map(|mut v| {
            if let Some(first) = v.first_mut() {
                *first = if *first < 200 { 1 } else { *first }; // mostly the right format byte
            }
            bounded(v)
        }),
        |bytes| decode_all(&bytes),
    );
}

#[test]
fn record_decoding_never_panics_on_bit_flipped_valid_records() {
    let valid = valid_encodings();
    fuzz(
        "decode/bit-flipped (bounded lengths)",
        2000,
        Duration::from_secs(4),
        (0..valid.len(), flips(), any::<bool>()),
        |(i, f, truncate)| {
            let mut v = bounded(flipped(valid[i].1.clone(), &f));
            if truncate {
                let n = v.len() / 2;
                v.truncate(n);
            }
            decode_all(&v)
        },
    );
}

const CHILD_ENV: &str = "UE_FUZZ_DECODE_CHILD";

/// Run `test_name` of this binary in a child with `CHILD_ENV` set to a file the child
/// writes each input to. Returns whether the child succeeded, its output, and the last
/// input it wrote.
fn in_child(test_name: &str) -> (bool, String, Option<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let last = dir.path().join("last-input");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &last)
        .output()
        .unwrap();
    let text = format!(
        "child {test_name}: {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text, std::fs::read(&last).ok())
}

fn child_input_file() -> Option<PathBuf> {
    std::env::var_os(CHILD_ENV).map(PathBuf::from)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The child half of [`record_decoding_survives_unbounded_bytes_in_a_child`]: runs only
/// when the parent set `UE_FUZZ_DECODE_CHILD` (otherwise it returns at once).
#[test]
fn child_decode_fuzz_unbounded() {
    let Some(last) = child_input_file() else {
        return;
    };
    let valid = valid_encodings();
    let write = |v: &[u8]| std::fs::write(&last, v).unwrap();
    fuzz(
        "decode/unbounded (child)",
        3000,
        Duration::from_secs(6),
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64).prop_map(|mut v| {
                if let Some(f) = v.first_mut() {
                    *f = 1;
                }
                ChildInput::Raw(v)
            }),
            (0..valid.len(), flips()).prop_map(|(i, f)| ChildInput::Flipped(i, f)),
        ],
        |input| {
            let bytes = match input {
                ChildInput::Raw(v) => v,
                ChildInput::Flipped(i, f) => flipped(valid[i].1.clone(), &f),
            };
            write(&bytes);
            decode_all(&bytes)
        },
    );
}

#[derive(Debug, Clone)]
enum ChildInput {
    Raw(Vec<u8>),
    Flipped(usize, Vec<(usize, u8)>),
}

#[test]
fn record_decoding_survives_unbounded_bytes_in_a_child() {
    let (ok, text, last) = in_child("fuzz::child_decode_fuzz_unbounded");
    assert!(
        ok,
        "decoding killed or failed the child; last input (hex): {}\n{text}",
        last.as_deref().map(hex).unwrap_or_default()
    );
    // The child's own summary ("fuzz decode/unbounded (child): N cases in …").
    text.lines()
        .filter_map(|l| l.find("fuzz decode/").map(|at| &l[at..]))
        .for_each(|l| println!("{l}"));
}

/// A TxRecord whose `agent` string claims `len` bytes: [format 1, tx 1, created_ms 1,
/// Some, len as a u64 varint (253 + 8 bytes LE)], then 3 bytes.
fn tx_record_with_string_len(len: u64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 1, 1, 253];
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(b"abc");
    v
}

/// The child half of the regression test below.
#[test]
fn child_decode_one_input() {
    let Some(last) = child_input_file() else {
        return;
    };
    let bytes = std::fs::read(&last).unwrap();
    decode_all(&bytes).unwrap();
}

#[test]
fn regression_decode_huge_string_length_panics() {
    let bytes = tx_record_with_string_len(u64::MAX);
    let r = std::panic::catch_unwind(|| decode::<TxRecord>("txs", &bytes).is_err());
    assert_eq!(r.ok(), Some(true), "decode panicked on {}", hex(&bytes));
}

#[test]
fn regression_decode_huge_string_length_aborts() {
    let inputs = [
        tx_record_with_string_len(1 << 40),
        // Found by `record_decoding_survives_unbounded_bytes_in_a_child`.
        vec![
            0x01, 0xfd, 0xa2, 0xbf, 0x6a, 0x2a, 0xa2, 0x01, 0x00, 0x10, 0x01, 0x02, 0x00,
        ],
    ];
    for bytes in inputs {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("input");
        std::fs::write(&input, &bytes).unwrap();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "fuzz::child_decode_one_input",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &input)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "decoding {} killed the process: {:?}\n{}",
            hex(&bytes),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------
// Hostile plans through preview and commit

/// Paths that name ordinary files of the workspace (some of them by a detour).
const BENIGN_PATHS: &[&str] = &[
    "src/lib.rs",
    "src/a.rs",
    "crlf.txt",
    "new.txt",
    "deep/er/new.txt",
    "src/./a.rs",
    "src//a.rs",
    "src/x/../a.rs",
    "{ROOT}/README.md",
    "ünï/cödé.txt",
];

/// Paths a hostile plan may name. `{ROOT}` is replaced by the workspace root, `{OUT}`
/// by a directory outside it, `{LONG}` by a 4 200-byte path, `{LONGCOMP}` by a
/// 256-byte name.
const HOSTILE_PATHS: &[&str] = &[
    "../escape.txt",
    "../../x",
    "a/../../x",
    "{OUT}/victim.txt",
    "{ROOT}/../escape.txt",
    "{ROOT}/src/b.rs",
    "linkdir/x",
    "linkdir/victim.txt",
    "link.rs",
    "hard.rs",
    ".git/config",
    "sub/.git/HEAD",
    ".ultra-edit/journal.redb",
    ".ultra-edit/commit.lock",
    "src/.ue-1-0-0000000000000000.tmp",
    "src/a.rs/",
    "src/a.rs/x",
    "src",
    ".",
    "..",
    "/",
    "",
    "a\u{0}b",
    "pipe",
    "very/deep/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p.txt",
    "{LONG}",
    "{LONGCOMP}",
];

/// (path, op, text): three benign paths to two hostile ones.
fn hostile_edit() -> impl Strategy<Value = (&'static str, u8, String)> {
    (
        prop_oneof![
            3 => prop::sample::select(BENIGN_PATHS),
            2 => prop::sample::select(HOSTILE_PATHS),
        ],
        0u8..7,
        "(x|\n|\u{0}|helper|    1\n){0,3}",
    )
}

/// Every entry under `root` but `.ultra-edit/`, without following links or opening
/// anything but regular files (a fifo is never read): files as `blake3 mode links`,
/// directories as `dir mode`, links as `link -> target`, others by their type.
fn full_state(root: &Path) -> BTreeMap<String, String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".ultra-edit" {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).unwrap();
            let ft = md.file_type();
            let mode = md.mode() & 0o7777;
            let v = if ft.is_symlink() {
                format!("link -> {}", std::fs::read_link(&p).unwrap().display())
            } else if ft.is_dir() {
                walk(root, &p, out);
                format!("dir {mode:o}")
            } else if ft.is_file() {
                let h = blake3::hash(&std::fs::read(&p).unwrap());
                format!("{} {mode:o} links={}", h.to_hex(), md.nlink())
            } else if ft.is_fifo() {
                format!("fifo {mode:o}")
            } else {
                format!("other {mode:o}")
            };
            out.insert(rel, v);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn hostile_plans_never_escape_the_root() {
    use std::os::unix::fs::symlink;
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    symlink(outside.path(), ws.path("linkdir")).unwrap();
    symlink(ws.path("src/a.rs"), ws.path("link.rs")).unwrap();
    std::fs::hard_link(ws.path("src/b.rs"), ws.path("hard.rs")).unwrap();
    ws.write(".git/config", b"[core]\n");
    ws.write("sub/.git/HEAD", b"ref: x\n");
    let _ = Command::new("mkfifo").arg(ws.path("pipe")).status();
    let root = ws.root().canonicalize().unwrap();
    let out_state = full_state(outside.path());
    let journal = Journal::open(&root).unwrap();
    let subst = |p: &str| -> String {
        match p {
            "{LONG}" => "d/".repeat(2100),
            "{LONGCOMP}" => "x".repeat(256),
            _ => p
                .replace("{ROOT}", &root.to_string_lossy())
                .replace("{OUT}", &outside.path().to_string_lossy()),
        }
    };
    let tally = std::cell::RefCell::new(BTreeMap::<&str, usize>::new());
    let count = |what: &'static str| *tally.borrow_mut().entry(what).or_default() += 1;
    fuzz(
        "hostile plans",
        400,
        Duration::from_secs(6),
        prop::collection::vec(hostile_edit(), 1..4),
        |edits| {
            let edits: Vec<serde_json::Value> = edits
                .iter()
                .map(|(p, op, text)| {
                    let path = subst(p);
                    match op {
                        0 => serde_json::json!({"op":"replace_text","path":path,"old":"helper","new":text}),
                        1 => serde_json::json!({"op":"insert_after","path":path,"anchor":"\n","text":text,"occurrence":1}),
                        2 => serde_json::json!({"op":"replace_lines","path":path,"start":1,"end":1,"content":text}),
                        3 => serde_json::json!({"op":"replace_file","path":path,"content":text,"mode":"0700"}),
                        4 => serde_json::json!({"op":"create_file","path":path,"content":text}),
                        5 => serde_json::json!({"op":"delete_file","path":path}),
                        _ => serde_json::json!({"op":"create_file","path":path,"content_base64":"AAEC"}),
                    }
                })
                .collect();
            let json = serde_json::json!({ "edits": edits }).to_string();
            let before = full_state(&root);
            let plan = match Plan::from_json(json.as_bytes()) {
                Ok(p) => p,
                Err(EditError::InvalidPlan { .. }) => {
                    count("invalid plan");
                    return Ok(());
                }
                Err(e) => return Err(TestCaseError::fail(format!("parse: {e:?}"))),
            };
            let allowed = match journal.preview(&plan) {
                Ok(p) => {
                    prop_assert_eq!(
                        full_state(&root),
                        before.clone(),
                        "preview changed the tree"
                    );
                    let paths: Vec<String> = p.files.iter().map(|f| f.path.clone()).collect();
                    match journal.commit(p.tx, Default::default()) {
                        Ok(r) => {
                            count("committed");
                            let mut paths: Vec<String> =
                                r.files.iter().map(|f| f.path.clone()).collect();
                            paths.extend(r.created_dirs.iter().cloned());
                            paths.extend(r.removed_dirs.iter().cloned());
                            paths
                        }
                        Err(Error::ValidationFailed { .. }) => {
                            count("refused at commit: validation");
                            Vec::new()
                        }
                        Err(e) => {
                            return Err(TestCaseError::fail(format!("commit of {paths:?}: {e:?}")))
                        }
                    }
                }
                Err(Error::Path(_)) => {
                    count("refused at preview: path");
                    Vec::new()
                }
                Err(Error::Edit(_)) => {
                    count("refused at preview: edit");
                    Vec::new()
                }
                Err(e) => {
                    return Err(TestCaseError::fail(format!(
                        "preview: untyped refusal {e:?}"
                    )))
                }
            };
            prop_assert_eq!(
                full_state(outside.path()),
                out_state.clone(),
                "a write landed outside the root"
            );
            let after = full_state(&root);
            for k in before.keys().chain(after.keys()) {
                if before.get(k) != after.get(k) {
                    prop_assert!(
                        allowed.contains(k),
                        "{k} changed but is not in the receipt {allowed:?} ({:?} -> {:?})",
                        before.get(k),
                        after.get(k)
                    );
                    prop_assert!(
                        !k.starts_with(".git")
                            && !k.contains("/.git")
                            && k != "link.rs"
                            && k != "hard.rs"
                            && k != "linkdir",
                        "{k} changed"
                    );
                }
            }
            Ok(())
        },
    );
    println!("hostile plans: {:?}", tally.borrow());
    assert!(
        tally.borrow().get("committed").copied().unwrap_or(0) > 5,
        "too few plans reached a commit"
    );
}
