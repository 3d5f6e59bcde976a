//! Target resolution (`apply_file_edits`) against an independent model, and the
//! candidate diff and 3-way merge on arbitrary bytes.

use std::time::Duration;

use proptest::prelude::*;
use ultra_edit::edit::{
    apply_file_edits, candidate_diff, merge3, wide_encoding, Edit, FileBase, Occurrence,
};

use super::fuzz;

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
    ReplaceAll(Needle, String),
    Prepend(String),
    Append(String),
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
        2 => (needle(), text).prop_map(|(n, t)| EditSpec::ReplaceAll(n, t)),
        1 => text.prop_map(EditSpec::Prepend),
        1 => text.prop_map(EditSpec::Append),
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
            occurrence: o.map(Occurrence::Nth),
        },
        EditSpec::ReplaceAll(n, t) => Edit::ReplaceText {
            path,
            old: needle_text(base, n),
            new: t.clone(),
            occurrence: Some(Occurrence::All),
        },
        EditSpec::Prepend(t) => Edit::Prepend {
            path,
            text: t.clone(),
        },
        EditSpec::Append(t) => Edit::Append {
            path,
            text: t.clone(),
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
            expected_base: None,
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
            expected_base: None,
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

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The model of one text edit: the replaced ranges and their replacement, or None when
/// the edit must be refused.
fn model_splices(base: &[u8], e: &Edit) -> Option<Vec<(usize, usize, Vec<u8>)>> {
    let one = |s, t, text: &str| Some(vec![(s, t, text.as_bytes().to_vec())]);
    match e {
        Edit::ReplaceText {
            old,
            new,
            occurrence: Some(Occurrence::All),
            ..
        } => {
            let all = matches_of(base, old.as_bytes());
            if all.is_empty() {
                return None;
            }
            let text = new.as_bytes().to_vec();
            Some(
                all.iter()
                    .map(|&at| (at, at + old.len(), text.clone()))
                    .collect(),
            )
        }
        Edit::ReplaceText {
            old,
            new,
            occurrence,
            ..
        } => {
            let nth = occurrence.and_then(Occurrence::nth);
            let at = pick(&matches_of(base, old.as_bytes()), nth)?;
            one(at, at + old.len(), new)
        }
        Edit::InsertBefore {
            anchor,
            text,
            occurrence,
            ..
        } => {
            let at = pick(&matches_of(base, anchor.as_bytes()), *occurrence)?;
            one(at, at, text)
        }
        Edit::InsertAfter {
            anchor,
            text,
            occurrence,
            ..
        } => {
            let at = pick(&matches_of(base, anchor.as_bytes()), *occurrence)? + anchor.len();
            one(at, at, text)
        }
        // At the start, after a UTF-8 byte-order mark; at the end.
        Edit::Prepend { text, .. } => {
            let at = if base.starts_with(BOM) { 3 } else { 0 };
            one(at, at, text)
        }
        Edit::Append { text, .. } => one(base.len(), base.len(), text),
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
            let (mut from, to) = (lines[start - 1].0, lines[end - 1].1);
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
            // Line 1's byte-order mark stays unless the content brings one.
            if from == 0 && base.starts_with(BOM) && !text.starts_with(BOM) {
                from = 3;
            }
            Some(vec![(from, to, text)])
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
    // Text ops refuse UTF-16/UTF-32 files, and non-ASCII text into a non-UTF-8 file.
    if wide_encoding(base).is_some() {
        return None;
    }
    let non_ascii = |e: &Edit| match e {
        Edit::ReplaceText { new: t, .. }
        | Edit::ReplaceLines { content: t, .. }
        | Edit::InsertBefore { text: t, .. }
        | Edit::InsertAfter { text: t, .. }
        | Edit::Prepend { text: t, .. }
        | Edit::Append { text: t, .. } => !t.is_ascii(),
        _ => false,
    };
    if std::str::from_utf8(base).is_err() && edits.iter().any(non_ascii) {
        return None;
    }
    let mut splices = Vec::new();
    for (i, e) in edits.iter().enumerate() {
        // At one point, prepend goes first and append last, whatever the plan order.
        let rank = match e {
            Edit::Prepend { .. } => 0,
            Edit::Append { .. } => 2,
            _ => 1,
        };
        for (s, t, text) in model_splices(base, e)? {
            splices.push((s, t, (rank, i), text));
        }
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
            // Bytes are exact (docs/design.md, "Invariants"), stated directly for one
            // replace_text.
            if let (
                [Edit::ReplaceText {
                    old,
                    new,
                    occurrence: occurrence @ (None | Some(Occurrence::Nth(_))),
                    ..
                }],
                Ok(c),
            ) = (edits.as_slice(), &got)
            {
                let nth = occurrence.and_then(Occurrence::nth);
                let at = pick(&matches_of(&base, old.as_bytes()), nth).unwrap();
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
