//! Journal record decoding: bounded and bit-flipped inputs in process, unbounded ones
//! in a child process, and the regressions those found.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde::{Deserialize, Serialize};
use ultra_edit::journal::codec::{decode, encode};
use ultra_edit::journal::records::*;
use ultra_edit::{DumpDetail, DumpFilter};

use crate::support::*;

use super::fuzz;

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
    let (ok, text, last) = in_child("fuzz::decode::child_decode_fuzz_unbounded");
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
                "fuzz::decode::child_decode_one_input",
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
