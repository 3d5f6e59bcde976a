//! Plan parsing: arbitrary bytes, mutated valid plans and structured JSON through
//! `Plan::from_json`.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use ultra_edit::Plan;

use super::fuzz;

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
    r#"{"edits":[{"op":"replace_text","path":"a","old":"x","new":"xx","occurrence":"all"},{"op":"prepend","path":"b","text":"head\n"},{"op":"append","path":"b","text":"\nend"}]}"#,
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
    "\"all\"",
    "\"prepend\"",
    "\"append\"",
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
        Just("prepend"),
        Just("append"),
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
