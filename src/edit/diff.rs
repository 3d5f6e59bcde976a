//! Candidate diffs: a git-style unified diff between a file's snapshot and its
//! candidate, with added / removed line counts.
//!
//! Lines are compared as raw bytes (split after each `\n`, like the edit ops),
//! so a change of invalid UTF-8 bytes or of a line ending is always seen. Only
//! the rendered text is lossy for non-UTF-8 input, and [`CandidateDiff::lossy`]
//! then says so.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, group_diff_ops, Algorithm, DiffOp, DiffTag};

use super::resolve::line_spans;

/// Lines of context around each hunk.
const CONTEXT_LINES: usize = 3;
/// Bytes inspected by the binary heuristic (same as git).
const BINARY_SNIFF_BYTES: usize = 8000;
/// Upper bound on the diff computation; past it the diff is still correct but
/// may be less minimal (similar's Myers deadline).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// The diff between a file's snapshot and its candidate.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CandidateDiff {
    /// Unified diff text with git-style headers (`--- a/PATH` / `+++ b/PATH`,
    /// `/dev/null` for an absent side) and 3 lines of context; empty when both
    /// sides are identical.
    pub unified: String,
    /// Number of lines inserted.
    pub lines_added: usize,
    /// Number of lines deleted.
    pub lines_removed: usize,
    /// True if either side is binary (NUL in the first 8000 bytes): `unified` is
    /// then `Binary files a/PATH and b/PATH differ\n` and the counts are 0.
    pub binary: bool,
    /// True if a side was not valid UTF-8 and the display was made lossy
    /// (`String::from_utf8_lossy`); the candidate bytes themselves are untouched.
    pub lossy: bool,
}

/// True if `bytes` has a NUL byte in its first 8000 bytes (git's heuristic).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0)
}

/// Diff between `before` (the snapshot; `None` = absent) and `after` (the
/// candidate; `None` = absent / deleted), line by line on the raw bytes.
///
/// Identical inputs give an empty diff with 0/0 counts. A creation or deletion
/// of an empty file gives only the `---` / `+++` headers. A last line without a
/// newline is followed by `\ No newline at end of file`, as `diff -u` does.
pub fn candidate_diff(path: &str, before: Option<&[u8]>, after: Option<&[u8]>) -> CandidateDiff {
    let mut diff = CandidateDiff {
        unified: String::new(),
        lines_added: 0,
        lines_removed: 0,
        binary: false,
        lossy: false,
    };
    if before == after {
        return diff;
    }
    let old_name = before.map_or_else(|| "/dev/null".to_string(), |_| format!("a/{path}"));
    let new_name = after.map_or_else(|| "/dev/null".to_string(), |_| format!("b/{path}"));
    if before.is_some_and(is_binary) || after.is_some_and(is_binary) {
        diff.binary = true;
        diff.unified = format!("Binary files {old_name} and {new_name} differ\n");
        return diff;
    }
    let (old, new) = (before.unwrap_or_default(), after.unwrap_or_default());
    diff.lossy = std::str::from_utf8(old).is_err() || std::str::from_utf8(new).is_err();
    diff.unified = format!("--- {old_name}\n+++ {new_name}\n");
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let ops = line_ops(&old_lines, &new_lines);
    (diff.lines_added, diff.lines_removed) = count_changes(&ops);
    for hunk in group_diff_ops(ops, CONTEXT_LINES) {
        render_hunk(&mut diff.unified, &hunk, &old_lines, &new_lines);
    }
    diff
}

fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    line_spans(bytes)
        .into_iter()
        .map(|span| bytes.get(span).unwrap_or_default())
        .collect()
}

/// Diff ops over lines.
///
/// Lines are interned to integers so comparisons are O(1), and (like git's
/// xdiff) lines that occur on one side only are set aside before running Myers:
/// they can never be common, so the result stays minimal while a large
/// rewrite or deletion costs about linear time.
fn line_ops(old: &[&[u8]], new: &[&[u8]]) -> Vec<DiffOp> {
    let mut ids: HashMap<&[u8], usize> = HashMap::new();
    let old_ids = intern(&mut ids, old);
    let new_ids = intern(&mut ids, new);
    let old_keep = shared_positions(&old_ids, &new_ids);
    let new_keep = shared_positions(&new_ids, &old_ids);
    let old_reduced = pick(&old_ids, &old_keep);
    let new_reduced = pick(&new_ids, &new_keep);
    let deadline = Instant::now().checked_add(DIFF_TIMEOUT);
    let reduced =
        capture_diff_slices_deadline(Algorithm::Myers, &old_reduced, &new_reduced, deadline);
    let pairs = equal_pairs(&reduced, &old_keep, &new_keep);
    ops_from_pairs(&pairs, old.len(), new.len())
}

fn intern<'a>(ids: &mut HashMap<&'a [u8], usize>, lines: &[&'a [u8]]) -> Vec<usize> {
    lines
        .iter()
        .map(|line| {
            let next = ids.len();
            *ids.entry(*line).or_insert(next)
        })
        .collect()
}

/// Positions in `side` whose line also occurs in `other`.
fn shared_positions(side: &[usize], other: &[usize]) -> Vec<usize> {
    let present: HashSet<usize> = other.iter().copied().collect();
    (0..side.len())
        .filter(|&i| side.get(i).is_some_and(|id| present.contains(id)))
        .collect()
}

fn pick(ids: &[usize], positions: &[usize]) -> Vec<usize> {
    positions
        .iter()
        .filter_map(|&i| ids.get(i).copied())
        .collect()
}

/// (old line, new line) pairs that are equal, mapped back to full positions.
fn equal_pairs(reduced: &[DiffOp], old_keep: &[usize], new_keep: &[usize]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for op in reduced {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *op
        {
            pairs.extend((0..len).filter_map(|k| {
                Some((*old_keep.get(old_index + k)?, *new_keep.get(new_index + k)?))
            }));
        }
    }
    pairs
}

/// Rebuilds diff ops from the ascending equal pairs: lines between pairs changed.
fn ops_from_pairs(pairs: &[(usize, usize)], old_len: usize, new_len: usize) -> Vec<DiffOp> {
    let mut ops = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for &(old_index, new_index) in pairs {
        push_change(&mut ops, old_at..old_index, new_at..new_index);
        match ops.last_mut() {
            Some(DiffOp::Equal { len, .. }) => *len += 1,
            _ => ops.push(DiffOp::Equal {
                old_index,
                new_index,
                len: 1,
            }),
        }
        (old_at, new_at) = (old_index + 1, new_index + 1);
    }
    push_change(&mut ops, old_at..old_len, new_at..new_len);
    ops
}

fn push_change(ops: &mut Vec<DiffOp>, old: Range<usize>, new: Range<usize>) {
    let (old_index, old_len, new_index, new_len) = (old.start, old.len(), new.start, new.len());
    match (old_len, new_len) {
        (0, 0) => {}
        (_, 0) => ops.push(DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        }),
        (0, _) => ops.push(DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        }),
        _ => ops.push(DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        }),
    }
}

/// (lines added, lines removed).
fn count_changes(ops: &[DiffOp]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(added, removed), op| {
        let (_, old, new) = op.as_tag_tuple();
        match op.tag() {
            DiffTag::Equal => (added, removed),
            _ => (added + new.len(), removed + old.len()),
        }
    })
}

/// Appends one hunk: `@@ -a,b +c,d @@` then its lines.
fn render_hunk(out: &mut String, hunk: &[DiffOp], old: &[&[u8]], new: &[&[u8]]) {
    let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
        return;
    };
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        hunk_range(old_range.start, old_range.len()),
        hunk_range(new_range.start, new_range.len())
    );
    for op in hunk {
        let (tag, old_span, new_span) = op.as_tag_tuple();
        let old_part = old.get(old_span).unwrap_or_default();
        let new_part = new.get(new_span).unwrap_or_default();
        match tag {
            DiffTag::Equal => render_lines(out, ' ', old_part),
            DiffTag::Delete => render_lines(out, '-', old_part),
            DiffTag::Insert => render_lines(out, '+', new_part),
            DiffTag::Replace => {
                render_lines(out, '-', old_part);
                render_lines(out, '+', new_part);
            }
        }
    }
}

/// `start,len` as in `diff -u` (1-based start; an empty range names the line before it).
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

fn render_lines(out: &mut String, prefix: char, lines: &[&[u8]]) {
    for line in lines {
        out.push(prefix);
        out.push_str(&String::from_utf8_lossy(line));
        if !line.ends_with(b"\n") {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_inputs_give_empty_diff() {
        let d = candidate_diff("a.txt", Some(b"x\ny\n"), Some(b"x\ny\n"));
        assert_eq!(d.unified, "");
        assert_eq!((d.lines_added, d.lines_removed), (0, 0));
        assert!(!d.binary && !d.lossy);
        assert_eq!(candidate_diff("a", None, None).unified, "");
    }

    #[test]
    fn known_pair_exact_output_and_counts() {
        let before = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let after = b"1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\neleven\n";
        let d = candidate_diff("src/n.txt", Some(before), Some(after));
        let expected = "--- a/src/n.txt\n+++ b/src/n.txt\n\
                        @@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+eleven\n";
        assert_eq!(d.unified, expected);
        assert_eq!((d.lines_added, d.lines_removed), (2, 1));
    }

    #[test]
    fn separate_hunks_when_far_apart() {
        let before: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let after: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_string(),
                19 => "nineteen\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let d = candidate_diff("f", Some(before.as_bytes()), Some(after.as_bytes()));
        let headers: Vec<&str> = d.unified.lines().filter(|l| l.starts_with("@@")).collect();
        assert_eq!(headers, ["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]);
        assert_eq!((d.lines_added, d.lines_removed), (2, 2));
    }

    #[test]
    fn created_file_headers() {
        let d = candidate_diff("docs/new.md", None, Some(b"hello\nworld\n"));
        assert_eq!(
            d.unified,
            "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
        );
        assert_eq!((d.lines_added, d.lines_removed), (2, 0));
    }

    #[test]
    fn deleted_file_headers() {
        let d = candidate_diff("old.txt", Some(b"bye\n"), None);
        assert_eq!(
            d.unified,
            "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        );
        assert_eq!((d.lines_added, d.lines_removed), (0, 1));
    }

    #[test]
    fn created_empty_file_has_headers_only() {
        let d = candidate_diff("e", None, Some(b""));
        assert_eq!(d.unified, "--- /dev/null\n+++ b/e\n");
        assert_eq!((d.lines_added, d.lines_removed), (0, 0));
    }

    #[test]
    fn missing_newline_hint() {
        let d = candidate_diff("f", Some(b"a\nb"), Some(b"a\nb\n"));
        assert_eq!(
            d.unified,
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }

    #[test]
    fn crlf_change_is_a_change() {
        let d = candidate_diff("f", Some(b"a\r\n"), Some(b"a\n"));
        assert_eq!(d.unified, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\r\n+a\n");
        assert_eq!((d.lines_added, d.lines_removed), (1, 1));
    }

    #[test]
    fn binary_sides() {
        let d = candidate_diff("img.png", Some(b"\x89PNG\0\x01"), Some(b"\x89PNG\0\x02"));
        assert_eq!(d.unified, "Binary files a/img.png and b/img.png differ\n");
        assert!(d.binary);
        assert_eq!((d.lines_added, d.lines_removed), (0, 0));
        let created = candidate_diff("x.bin", None, Some(b"\0"));
        assert_eq!(
            created.unified,
            "Binary files /dev/null and b/x.bin differ\n"
        );
    }

    #[test]
    fn invalid_utf8_is_lossy_but_exact() {
        // Two different invalid bytes render the same, yet the change is found.
        let d = candidate_diff("f", Some(b"\xFF\n"), Some(b"\xFE\n"));
        assert!(d.lossy);
        assert_eq!(
            d.unified,
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-\u{FFFD}\n+\u{FFFD}\n"
        );
        assert_eq!((d.lines_added, d.lines_removed), (1, 1));
    }

    #[test]
    fn is_binary_looks_at_first_8000_bytes() {
        assert!(is_binary(b"a\0b"));
        assert!(!is_binary(b"abc"));
        let mut late = vec![b'a'; 8000];
        late.push(0);
        assert!(!is_binary(&late));
    }

    #[test]
    fn diff_serializes() {
        let d = candidate_diff("f", Some(b"a\n"), Some(b"b\n"));
        let json = serde_json::to_string(&d).unwrap_or_default();
        let back: Result<CandidateDiff, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(d));
    }

    mod model {
        use super::*;
        use proptest::prelude::*;
        use similar::{ChangeTag, TextDiff};

        fn text() -> impl Strategy<Value = String> {
            "(a\n|b\n|c\n|d\r\n|e){0,12}"
        }

        /// Replays ops: equal lines must match, and both sides are covered in order.
        fn replay(ops: &[DiffOp], old: &[&[u8]], new: &[&[u8]]) -> Result<Vec<u8>, String> {
            let (mut o, mut n, mut out) = (0, 0, Vec::new());
            for op in ops {
                let (tag, old_r, new_r) = op.as_tag_tuple();
                if old_r.start != o || new_r.start != n {
                    return Err(format!("gap before {op:?}"));
                }
                if tag == DiffTag::Equal && old[old_r.clone()] != new[new_r.clone()] {
                    return Err(format!("unequal {op:?}"));
                }
                new[new_r.clone()]
                    .iter()
                    .for_each(|l| out.extend_from_slice(l));
                (o, n) = (old_r.end, new_r.end);
            }
            match (o == old.len(), n == new.len()) {
                (true, true) => Ok(out),
                _ => Err("sides not fully covered".into()),
            }
        }

        proptest! {
            #[test]
            fn ops_replay_and_counts_are_minimal(a in text(), b in text()) {
                let (old, new) = (split_lines(a.as_bytes()), split_lines(b.as_bytes()));
                let ops = line_ops(&old, &new);
                prop_assert_eq!(replay(&ops, &old, &new), Ok(b.as_bytes().to_vec()));
                let reference = TextDiff::from_lines(&a, &b);
                let count = |tag| reference.iter_all_changes().filter(|c| c.tag() == tag).count();
                let d = candidate_diff("f", Some(a.as_bytes()), Some(b.as_bytes()));
                prop_assert_eq!(d.lines_added, count(ChangeTag::Insert));
                prop_assert_eq!(d.lines_removed, count(ChangeTag::Delete));
            }
        }
    }
}
