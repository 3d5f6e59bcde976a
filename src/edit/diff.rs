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

use super::lines::{count_lines, split_lines, LineCursor};
use crate::syntax::{hunk_context, HunkNames};

/// Lines of context around each hunk.
const CONTEXT_LINES: usize = 3;
/// Bytes inspected by the binary heuristic (same as git).
const BINARY_SNIFF_BYTES: usize = 8000;
/// Upper bound on the diff computation; past it the diff is still correct but
/// may be less minimal (similar's Myers deadline).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);
/// Inputs (both sides together, bytes) from which no line tables are built for the
/// whole file: common ends are trimmed, then the search over byte offsets runs, and the
/// chunk pass only when that gives up (see `file_line_ops`).
const CHUNKED_FROM_BYTES: usize = 1 << 20;
/// Chunk sizes (bytes) of that first pass: FastCDC's minimum, average, maximum.
const CHUNK_SIZES: (usize, usize, usize) = (1024, 4096, 16384);
/// Changed lines up to which a large file is diffed line by line without tables
/// (Myers' greedy search, `line_myers`): its trace holds about D²/2 points of 40 bytes,
/// 20 MB at this bound.
const DIRECT_MAX_D: usize = 1000;
/// Time the search over byte offsets may take before the chunk pass takes over. On
/// periodic content (lines repeating with a short period) its snakes run far on many
/// diagonals, and a few hundred scattered edits of a 100 MiB file take longer.
const DIRECT_TIMEOUT: Duration = Duration::from_secs(1);
/// Lines (both sides together) above which a changed region is shown as one
/// replacement instead of being matched line by line: matching costs tens of bytes
/// per line, and a region this large is a rewrite.
const MATCHED_LINES_MAX: usize = 1 << 20;
/// Bytes of unified text kept per file (8 MiB): the text is for people and agents to
/// read, and it is stored in the revision record, which `show`, `commit` and `rebase`
/// read whole. A rewrite of a 200 MiB file would otherwise record twice its size.
pub const UNIFIED_MAX_BYTES: usize = 8 << 20;
/// The last line of a diff text cut at [`UNIFIED_MAX_BYTES`].
const TRUNCATED: &str =
    "\\ Diff truncated at 8 MiB of text; lines_added and lines_removed count the whole change\n";

/// The diff between a file's snapshot and its candidate. `Default`: the diff of two
/// identical sides (empty text, no lines, not binary, not lossy).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CandidateDiff {
    /// Unified diff text with git-style headers (`--- a/PATH` / `+++ b/PATH`,
    /// `/dev/null` for an absent side) and 3 lines of context; empty when both
    /// sides are identical. At most [`UNIFIED_MAX_BYTES`] of hunks: a longer diff is
    /// cut there (mid-line if need be) and ends with the line
    /// `\ Diff truncated at 8 MiB of text; …`; the counts still cover the whole change.
    pub unified: String,
    /// Number of lines inserted.
    pub lines_added: usize,
    /// Number of lines deleted.
    pub lines_removed: usize,
    /// True if either side is binary (NUL in the first 8000 bytes): `unified` is
    /// then git's `Binary files a/PATH and b/PATH differ` line followed by each
    /// side's size and blake3 hash (first 12 hex digits, as the journal shortens
    /// blob hashes), e.g. `Binary files a/x and b/x differ: 6 bytes (blake3
    /// 1f0e…) -> 7 bytes (blake3 9a8b…)\n` (`absent` for a missing side), and the
    /// counts are 0.
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
///
/// Minimality and memory. Under 1 MiB (both sides) lines are matched over line
/// tables, minimal unless the 2 s deadline passes. From 1 MiB no line tables are built
/// for the whole file: the common ends are set aside, and a file that differs in up to
/// 1000 lines gets a minimal diff from Myers' search over byte offsets, if that takes
/// under 1 s (periodic content with hundreds of scattered edits can take longer).
/// Past that, content-defined chunks narrow the regions matched line by line; on repetitive
/// content (identical lines or blocks) chunks can pair with the wrong copies, so the
/// diff may then show more changed lines than a minimal one, and a region of more
/// than 2^20 lines is shown as one replacement. Every diff is exact (it turns the
/// snapshot into the candidate); only its size may exceed the minimum.
pub fn candidate_diff(path: &str, before: Option<&[u8]>, after: Option<&[u8]>) -> CandidateDiff {
    let mut diff = CandidateDiff::default();
    if before == after {
        return diff;
    }
    let old_name = before.map_or_else(|| "/dev/null".to_string(), |_| diff_name("a/", path));
    let new_name = after.map_or_else(|| "/dev/null".to_string(), |_| diff_name("b/", path));
    if before.is_some_and(is_binary) || after.is_some_and(is_binary) {
        diff.binary = true;
        diff.unified = format!(
            "Binary files {old_name} and {new_name} differ: {} -> {}\n",
            size_and_hash(before),
            size_and_hash(after)
        );
        return diff;
    }
    let (old, new) = (before.unwrap_or_default(), after.unwrap_or_default());
    diff.lossy = std::str::from_utf8(old).is_err() || std::str::from_utf8(new).is_err();
    diff.unified = format!("--- {old_name}\n+++ {new_name}\n");
    let ops = file_line_ops(old, new);
    render_ops(&mut diff, ops, (old, new), 0, |changed| {
        HunkNames::around(path, old, changed)
    });
    diff
}

/// The window of two large files around where they differ, for [`window_diff`]: both
/// sides' bytes from the same line start to the start of the same last lines (or the
/// end), holding every byte in which the files differ and [`CONTEXT_LINES`] + 1 lines
/// of context on each side where the files have them. The bytes outside the window are
/// equal in both files.
#[derive(Debug, Clone, Copy)]
pub struct DiffWindow<'a> {
    /// The snapshot's bytes in the window.
    pub old: &'a [u8],
    /// The candidate's bytes in the window.
    pub new: &'a [u8],
    /// Lines before the window (1-based line `lines_before + 1` is its first).
    pub lines_before: usize,
    /// True when the bytes outside the window are valid UTF-8.
    pub outside_utf8: bool,
    /// True when either whole file holds a NUL byte in its first 8000 bytes.
    pub binary: bool,
    /// The whole files' sizes in bytes: (snapshot, candidate).
    pub sizes: (u64, u64),
}

/// [`candidate_diff`] of two existing files known only by their [`DiffWindow`]: the
/// same text and counts, byte for byte, reading only the window. `None` when the
/// window cannot give them — a binary side (the binary line hashes the whole files),
/// files together under 1 MiB (diffed over whole line tables), or a snapshot small
/// enough for its hunk names to be parsed (`syntax::PARSE_MAX_BYTES`) — and the caller
/// diffs the whole files.
///
/// Why it is the same diff: the whole files' common ends (`common_ends`) reach into
/// the window from both sides, since outside it the files are equal and it starts and
/// ends at line starts; so the region left between them, and the ops over it, are the
/// same, shifted by `lines_before`, and hunks take at most [`CONTEXT_LINES`] lines of
/// the equal lines around it, which the window holds. UTF-8 is decided per line, and
/// the window's edges are line starts.
pub fn window_diff(path: &str, window: &DiffWindow<'_>) -> Option<CandidateDiff> {
    let whole = window.sizes.0.saturating_add(window.sizes.1);
    let parsed = window.sizes.0 <= crate::syntax::PARSE_MAX_BYTES as u64;
    if window.binary || whole < CHUNKED_FROM_BYTES as u64 || parsed {
        return None;
    }
    let mut diff = CandidateDiff::default();
    let (old, new) = (window.old, window.new);
    if old == new {
        return Some(diff);
    }
    diff.lossy = !window.outside_utf8
        || std::str::from_utf8(old).is_err()
        || std::str::from_utf8(new).is_err();
    diff.unified = format!(
        "--- {}\n+++ {}\n",
        diff_name("a/", path),
        diff_name("b/", path)
    );
    let ops = trimmed_line_ops(old, new);
    render_ops(&mut diff, ops, (old, new), window.lines_before, |_| {
        HunkNames::default()
    });
    Some(diff)
}

/// `prefix` + `path` as a diff header names it, quoted the way git quotes a name
/// (`quote_c_style` in git's quote.c) when it holds a tab, `"` or `\`: inside double
/// quotes, with `\t`, `\"` and `\\`. Unquoted, a tab would end the name for
/// `patch` and `git apply` (a tab starts a header's timestamp), so the diff would not
/// apply to the file it names. Other control characters never reach here: path safety
/// refuses them (docs/design.md, "Path safety"). Non-ASCII names stay as they are, as
/// git prints them with `core.quotePath=false` (which `git apply` reads).
pub fn diff_name(prefix: &str, path: &str) -> String {
    if !path.contains(['\t', '"', '\\']) {
        return format!("{prefix}{path}");
    }
    let mut quoted = String::with_capacity(prefix.len() + path.len() + 4);
    quoted.push('"');
    for c in prefix.chars().chain(path.chars()) {
        match c {
            '\t' => quoted.push_str("\\t"),
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Counts `ops` into `diff` and renders their hunks after its headers. `sides` are the
/// bytes the ops index, which start `offset` lines into the files; `names` gives the
/// hunk names for the old side's 1-based lines of the hunks' first changes.
fn render_ops(
    diff: &mut CandidateDiff,
    ops: Vec<DiffOp>,
    (old, new): (&[u8], &[u8]),
    offset: usize,
    names: impl FnOnce(&[usize]) -> HunkNames,
) {
    (diff.lines_added, diff.lines_removed) = count_changes(&ops);
    let (mut old_lines, mut new_lines) = (LineCursor::new(old), LineCursor::new(new));
    let hunks = group_diff_ops(ops, CONTEXT_LINES);
    // Only the definitions around the hunks' first changes are looked for.
    let changed: Vec<usize> = hunks.iter().filter_map(|h| first_change(h)).collect();
    let names = match changed.is_empty() {
        true => HunkNames::default(),
        false => names(&changed),
    };
    for hunk in hunks {
        if !render_hunk(
            &mut diff.unified,
            &hunk,
            (&mut old_lines, &mut new_lines),
            offset,
            &names,
        ) {
            diff.unified.push_str(TRUNCATED);
            break;
        }
    }
}

/// `N bytes (blake3 XXXXXXXXXXXX)` for a side of a binary diff, `absent` for none.
fn size_and_hash(side: Option<&[u8]>) -> String {
    match side {
        Some(bytes) => {
            let hex = blake3::hash(bytes).to_hex();
            format!(
                "{} bytes (blake3 {})",
                bytes.len(),
                hex.get(..12).unwrap_or_default()
            )
        }
        None => "absent".into(),
    }
}

/// Diff ops over the lines of two whole files.
///
/// Small inputs are matched line by line ([`line_ops`]). From
/// [`CHUNKED_FROM_BYTES`], the whole lines both files start and end with are set
/// aside first (byte comparisons, no tables; like xdiff's trimming, this never makes
/// the result less minimal), so an edit in one place is matched exactly as in a small
/// file. If what is left between them is still large, Myers' search over byte offsets
/// (`line_myers`) diffs it without line tables, minimal, when at most
/// [`DIRECT_MAX_D`] lines differ. Otherwise a chunk pass cuts both sides into
/// content-defined chunks (FastCDC, as the blob store does) and matches the chunks;
/// runs of identical chunks, trimmed to whole lines, are equal lines without looking
/// at them, and only the regions between them are matched line by line. Edits in many
/// places of a 200 MiB file then build line tables for a few KiB, not for 200 MiB
/// (docs/benchmarks.md, "Peak memory"). Time: the search gets [`DIRECT_TIMEOUT`], then
/// the chunk pass a fresh [`DIFF_TIMEOUT`] for all its regions together.
fn file_line_ops(old: &[u8], new: &[u8]) -> Vec<DiffOp> {
    let deadline = Instant::now().checked_add(DIFF_TIMEOUT);
    if old.len() + new.len() < CHUNKED_FROM_BYTES {
        return region_line_ops(old, new, deadline);
    }
    trimmed_line_ops(old, new)
}

/// The large-file branch of [`file_line_ops`]: common ends set aside, then the search
/// over byte offsets or the chunk pass over what is left between them.
fn trimmed_line_ops(old: &[u8], new: &[u8]) -> Vec<DiffOp> {
    let deadline = Instant::now().checked_add(DIFF_TIMEOUT);
    let (head, tail) = common_ends(old, new);
    let old_mid = old.get(head..old.len() - tail).unwrap_or_default();
    let new_mid = new.get(head..new.len() - tail).unwrap_or_default();
    let head_lines = count_lines(old.get(..head).unwrap_or_default());
    let middle = if old_mid.len() + new_mid.len() < CHUNKED_FROM_BYTES {
        region_line_ops(old_mid, new_mid, deadline)
    } else if let Some(ops) = super::line_myers::diff(
        old_mid,
        new_mid,
        DIRECT_MAX_D,
        Instant::now().checked_add(DIRECT_TIMEOUT),
    ) {
        ops
    } else {
        // A fresh deadline: with the search's time spent, the chunk pass would
        // otherwise match nothing and show a few changed lines as a rewrite.
        chunked_line_ops(old_mid, new_mid, Instant::now().checked_add(DIFF_TIMEOUT))
    };
    let mut ops = Vec::new();
    push_op(
        &mut ops,
        DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: head_lines,
        },
    );
    for op in middle {
        push_op(&mut ops, shift(op, head_lines, head_lines));
    }
    push_op(
        &mut ops,
        DiffOp::Equal {
            old_index: head_lines + count_lines(old_mid),
            new_index: head_lines + count_lines(new_mid),
            len: count_lines(old.get(old.len() - tail..).unwrap_or_default()),
        },
    );
    ops
}

/// Bytes of the whole lines that `old` and `new` both start with, and of those they
/// both end with (not overlapping the first). `old != new`.
fn common_ends(old: &[u8], new: &[u8]) -> (usize, usize) {
    let same = common_prefix_len(old, new);
    // Back to the start of the line the first difference is in.
    let head = memchr::memrchr(b'\n', old.get(..same).unwrap_or_default()).map_or(0, |i| i + 1);
    let (old_rest, new_rest) = (
        old.get(head..).unwrap_or_default(),
        new.get(head..).unwrap_or_default(),
    );
    let same = common_suffix_len(old_rest, new_rest);
    // The suffix must start a line on both sides; else it starts after its first newline.
    let starts_line = |rest: &[u8]| {
        let at = rest.len() - same;
        at == 0 || rest.get(at - 1) == Some(&b'\n')
    };
    let tail = if same == 0 || (starts_line(old_rest) && starts_line(new_rest)) {
        same
    } else {
        let suffix = old_rest.get(old_rest.len() - same..).unwrap_or_default();
        memchr::memchr(b'\n', suffix).map_or(0, |i| same - (i + 1))
    };
    (head, tail)
}

pub(super) use crate::bytes::{common_prefix_len, common_suffix_len};

/// The chunked pass of [`file_line_ops`], whatever the size.
fn chunked_line_ops(old: &[u8], new: &[u8], deadline: Option<Instant>) -> Vec<DiffOp> {
    let mut ops = Vec::new();
    let (mut old_line, mut new_line) = (0, 0);
    for segment in aligned_segments(old, new, deadline) {
        let (o, n) = (
            old.get(segment.old.clone()).unwrap_or_default(),
            new.get(segment.new.clone()).unwrap_or_default(),
        );
        let (old_len, new_len) = if segment.equal {
            let len = count_lines(o);
            push_op(
                &mut ops,
                DiffOp::Equal {
                    old_index: old_line,
                    new_index: new_line,
                    len,
                },
            );
            (len, len)
        } else {
            for op in region_line_ops(o, n, deadline) {
                push_op(&mut ops, shift(op, old_line, new_line));
            }
            (count_lines(o), count_lines(n))
        };
        old_line += old_len;
        new_line += new_len;
    }
    ops
}

/// Line ops of one region (line-aligned on both sides), indices from 0. A region of
/// more than [`MATCHED_LINES_MAX`] lines is one replacement.
fn region_line_ops(old: &[u8], new: &[u8], deadline: Option<Instant>) -> Vec<DiffOp> {
    let (old_count, new_count) = (count_lines(old), count_lines(new));
    if old_count + new_count > MATCHED_LINES_MAX {
        let mut ops = Vec::new();
        push_change(&mut ops, 0..old_count, 0..new_count);
        return ops;
    }
    line_ops(&split_lines(old), &split_lines(new), deadline)
}

/// Appends `op`, folding it into the last op when both are equal runs (so hunks
/// group exactly as over one run).
fn push_op(ops: &mut Vec<DiffOp>, op: DiffOp) {
    match (ops.last_mut(), op) {
        (_, DiffOp::Equal { len: 0, .. }) => {}
        (Some(DiffOp::Equal { len, .. }), DiffOp::Equal { len: more, .. }) => *len += more,
        _ => ops.push(op),
    }
}

/// `op` with its line indices moved by `old` and `new`.
fn shift(op: DiffOp, old: usize, new: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + old,
            new_index: new_index + new,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + old,
            new_index: new_index + new,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
            new_len,
        },
    }
}

/// A stretch of both files: byte ranges that start and end on line boundaries of
/// their side; `equal` when the two ranges hold the same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    old: Range<usize>,
    new: Range<usize>,
    equal: bool,
}

/// Both files cut into consecutive segments that cover them: runs of identical
/// content-defined chunks (trimmed to whole lines) are equal segments, the rest
/// between them changed segments.
fn aligned_segments(old: &[u8], new: &[u8], deadline: Option<Instant>) -> Vec<Segment> {
    let chunks = |bytes: &[u8]| -> Vec<Range<usize>> {
        let (min, avg, max) = CHUNK_SIZES;
        fastcdc::v2020::FastCDC::new(bytes, min, avg, max)
            .map(|c| c.offset..c.offset + c.length)
            .collect()
    };
    let (old_chunks, new_chunks) = (chunks(old), chunks(new));
    fn slices<'b>(bytes: &'b [u8], chunks: &[Range<usize>]) -> Vec<&'b [u8]> {
        let mut out = Vec::with_capacity(chunks.len());
        out.extend(
            chunks
                .iter()
                .map(|c| bytes.get(c.clone()).unwrap_or_default()),
        );
        out
    }
    let chunk_ops = item_ops(
        &slices(old, &old_chunks),
        &slices(new, &new_chunks),
        deadline,
        SetAside::WhenMostDiffer,
    );
    let mut segments = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for op in chunk_ops {
        let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        else {
            continue;
        };
        let byte_range = |chunks: &[Range<usize>], first: usize| -> Option<Range<usize>> {
            Some(chunks.get(first)?.start..chunks.get(first + len - 1)?.end)
        };
        let (Some(o), Some(n)) = (
            byte_range(&old_chunks, old_index),
            byte_range(&new_chunks, new_index),
        ) else {
            continue;
        };
        let Some((o, n)) = whole_lines(old, new, o, n) else {
            continue;
        };
        if o.start < old_at || n.start < new_at {
            continue;
        }
        if (old_at, new_at) != (o.start, n.start) {
            segments.push(Segment {
                old: old_at..o.start,
                new: new_at..n.start,
                equal: false,
            });
        }
        (old_at, new_at) = (o.end, n.end);
        segments.push(Segment {
            old: o,
            new: n,
            equal: true,
        });
    }
    if (old_at, new_at) != (old.len(), new.len()) {
        segments.push(Segment {
            old: old_at..old.len(),
            new: new_at..new.len(),
            equal: false,
        });
    }
    segments
}

/// Ranges `o` of `old` and `n` of `new` holding the same bytes, shrunk to the whole
/// lines they contain on both sides; `None` if no whole line is left.
fn whole_lines(
    old: &[u8],
    new: &[u8],
    o: Range<usize>,
    n: Range<usize>,
) -> Option<(Range<usize>, Range<usize>)> {
    let same = old.get(o.clone())?;
    let line_start = |bytes: &[u8], at: usize| at == 0 || bytes.get(at - 1) == Some(&b'\n');
    // Start: on a line start of both sides, or just after the run's first newline.
    let skip = if line_start(old, o.start) && line_start(new, n.start) {
        0
    } else {
        memchr::memchr(b'\n', same)? + 1
    };
    // End: after a newline, at the end of both files, or after the run's last newline.
    let at_both_ends = o.end == old.len() && n.end == new.len();
    let keep = if same.last() == Some(&b'\n') || at_both_ends {
        same.len()
    } else {
        memchr::memrchr(b'\n', same)? + 1
    };
    (skip < keep).then(|| {
        (
            o.start + skip..o.start + keep,
            n.start + skip..n.start + keep,
        )
    })
}

/// Diff ops over lines.
///
/// Lines are interned to integers so comparisons are O(1), and (like git's
/// xdiff) lines that occur on one side only are set aside before running Myers:
/// they can never be common, so the result stays minimal while a large
/// rewrite or deletion costs about linear time.
/// Past `deadline`, Myers returns a correct but possibly less minimal result.
fn line_ops(old: &[&[u8]], new: &[&[u8]], deadline: Option<Instant>) -> Vec<DiffOp> {
    item_ops(old, new, deadline, SetAside::Always)
}

/// When [`item_ops`] sets aside the items found on one side only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetAside {
    /// Always: right for lines, where an item is a line and one-side lines are
    /// exactly the inserted and deleted ones.
    Always,
    /// Only when that removes most items (a rewrite). For chunks: a chunk that holds
    /// an edit exists on one side only, and without it Myers no longer knows where
    /// the edit was, so on repetitive content it would delete an identical chunk far
    /// away instead of the one the edit replaced.
    WhenMostDiffer,
}

/// Diff ops over byte-slice items (lines or chunks), compared by content.
fn item_ops(
    old: &[&[u8]],
    new: &[&[u8]],
    deadline: Option<Instant>,
    set_aside: SetAside,
) -> Vec<DiffOp> {
    let mut ids: HashMap<&[u8], usize> = HashMap::new();
    let old_ids = intern(&mut ids, old);
    let new_ids = intern(&mut ids, new);
    let old_keep = shared_positions(&old_ids, &new_ids);
    let new_keep = shared_positions(&new_ids, &old_ids);
    let most_differ = (old_keep.len() + new_keep.len()) * 2 < old.len() + new.len();
    if set_aside == SetAside::WhenMostDiffer && !most_differ {
        return capture_diff_slices_deadline(Algorithm::Myers, &old_ids, &new_ids, deadline);
    }
    let old_reduced = pick(&old_ids, &old_keep);
    let new_reduced = pick(&new_ids, &new_keep);
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

/// Appends one hunk: `@@ -a,b +c,d @@`, then the name of the definition around its
/// first change when the old side has one (git's function-name context; see
/// [`hunk_context`]), then its lines. False when `out` reached [`UNIFIED_MAX_BYTES`]
/// and the hunk was cut.
fn render_hunk(
    out: &mut String,
    hunk: &[DiffOp],
    (old, new): (&mut LineCursor<'_>, &mut LineCursor<'_>),
    offset: usize,
    names: &HunkNames,
) -> bool {
    let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
        return true;
    };
    let old_range = first.old_range().start..last.old_range().end;
    let new_range = first.new_range().start..last.new_range().end;
    let changed = first_change(hunk);
    let _ = write!(
        out,
        "@@ -{} +{} @@",
        hunk_range(offset + old_range.start, old_range.len()),
        hunk_range(offset + new_range.start, new_range.len())
    );
    match changed.and_then(|line| hunk_context(names, line)) {
        Some(name) => {
            let _ = writeln!(out, " {name}");
        }
        None => out.push('\n'),
    }
    for op in hunk {
        let (tag, old_span, new_span) = op.as_tag_tuple();
        let (old_part, new_part) = (old_span, new_span);
        // Each line takes at least 2 bytes of text: no need to fetch more than fit.
        let fit = |out: &String, r: Range<usize>| {
            let room = UNIFIED_MAX_BYTES.saturating_sub(out.len()) / 2 + 1;
            r.start..r.end.min(r.start.saturating_add(room))
        };
        let whole = match tag {
            DiffTag::Equal => render_lines(out, ' ', &old.get(fit(out, old_part))),
            DiffTag::Delete => render_lines(out, '-', &old.get(fit(out, old_part))),
            DiffTag::Insert => render_lines(out, '+', &new.get(fit(out, new_part))),
            DiffTag::Replace => {
                render_lines(out, '-', &old.get(fit(out, old_part)))
                    && render_lines(out, '+', &new.get(fit(out, new_part)))
            }
        };
        if !whole {
            return false;
        }
    }
    true
}

/// The old side's 1-based line of a hunk's first change: the first removed line, or
/// for an insertion the line it follows (0 at the start of the file).
fn first_change(hunk: &[DiffOp]) -> Option<usize> {
    hunk.iter().find_map(|op| match *op {
        DiffOp::Equal { .. } => None,
        DiffOp::Insert { old_index, .. } => Some(old_index),
        DiffOp::Delete { old_index, .. } | DiffOp::Replace { old_index, .. } => Some(old_index + 1),
    })
}

/// `start,len` as in `diff -u` (1-based start; an empty range names the line before it).
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// Appends `lines`, each after `prefix`. False when `out` reached
/// [`UNIFIED_MAX_BYTES`] first (the last line may then be cut, and ends with `\n`).
fn render_lines(out: &mut String, prefix: char, lines: &[&[u8]]) -> bool {
    for line in lines {
        let room = UNIFIED_MAX_BYTES.saturating_sub(out.len());
        if room == 0 {
            return false;
        }
        out.push(prefix);
        let shown = line.get(..room.min(line.len())).unwrap_or_default();
        let text = String::from_utf8_lossy(shown);
        // Lossy text can be longer than its bytes (an invalid byte is 3 bytes of
        // U+FFFD): cut the text itself, on a char boundary.
        let mut cut = text.len().min(room);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(text.get(..cut).unwrap_or_default());
        if cut < text.len() || shown.len() < line.len() {
            out.push('\n');
            return false;
        }
        if !line.ends_with(b"\n") {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hunk headers name the innermost definition around the first change, as git's
    /// function-name context does; files of unknown languages get none.
    #[cfg(feature = "syntax")]
    #[test]
    fn hunk_headers_name_the_enclosing_definition() {
        let body: String = (1..=8).map(|k| format!("        x{k} = {k}\n")).collect();
        let old =
            format!("class A:\n    def m(self):\n{body}        return 1\n\n\ndef g():\n    pass\n");
        let new = old
            .replace("x5 = 5", "x5 = 50")
            .replace("    pass", "    return");
        let d = candidate_diff("a.py", Some(old.as_bytes()), Some(new.as_bytes()));
        let headers: Vec<&str> = d.unified.lines().filter(|l| l.starts_with("@@")).collect();
        assert_eq!(headers, ["@@ -4,7 +4,7 @@ A.m", "@@ -12,4 +12,4 @@ g"]);
        // An insertion after a definition's last line names that definition.
        let added = old.replace("    pass\n", "    pass\nz = 1\n");
        let d = candidate_diff("a.py", Some(old.as_bytes()), Some(added.as_bytes()));
        assert!(d.unified.contains("@@ -13,3 +13,4 @@ g\n"), "{}", d.unified);
        let d = candidate_diff("a.txt", Some(old.as_bytes()), Some(new.as_bytes()));
        assert!(d.unified.contains("@@ -4,7 +4,7 @@\n"), "{}", d.unified);
    }

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
    fn a_name_with_a_tab_quote_or_backslash_is_quoted_as_git_quotes_it() {
        let d = candidate_diff("src/x\ty.rs", Some(b"a\n"), Some(b"b\n"));
        assert_eq!(
            d.unified,
            "--- \"a/src/x\\ty.rs\"\n+++ \"b/src/x\\ty.rs\"\n@@ -1 +1 @@\n-a\n+b\n"
        );
        assert_eq!(
            diff_name("b/", "say \"hi\"\\.txt"),
            "\"b/say \\\"hi\\\"\\\\.txt\""
        );
        assert_eq!(diff_name("a/", "plain é.rs"), "a/plain é.rs");
        let gone = candidate_diff("t\tab", Some(b"x\n"), None);
        assert_eq!(
            gone.unified,
            "--- \"a/t\\tab\"\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
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
        let short = |b: &[u8]| blake3::hash(b).to_hex()[..12].to_string();
        assert_eq!(
            d.unified,
            format!(
                "Binary files a/img.png and b/img.png differ: 6 bytes (blake3 {}) -> 6 bytes (blake3 {})\n",
                short(b"\x89PNG\0\x01"),
                short(b"\x89PNG\0\x02")
            )
        );
        // A known value, so the hash is not only consistent with itself.
        assert_eq!(short(b""), "af1349b9f5f9");
        assert!(d.binary);
        assert_eq!((d.lines_added, d.lines_removed), (0, 0));
        let created = candidate_diff("x.bin", None, Some(b"\0"));
        assert_eq!(
            created.unified,
            format!(
                "Binary files /dev/null and b/x.bin differ: absent -> 1 bytes (blake3 {})\n",
                short(b"\0")
            )
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

        /// ~`lines` numbered lines of varied length, some CRLF, optionally without a
        /// final newline.
        fn numbered(lines: usize, final_newline: bool) -> Vec<u8> {
            let mut out = Vec::new();
            for i in 0..lines {
                let pad = "x".repeat(i * 7 % 61);
                let end = if i % 13 == 0 { "\r\n" } else { "\n" };
                out.extend_from_slice(format!("line {i} {pad}{end}").as_bytes());
            }
            if !final_newline {
                out.extend_from_slice(b"last line without newline");
            }
            out
        }

        /// `base` with each (line index, kind) edit applied: 0 replaces the line, 1
        /// deletes it, 2 inserts two lines before it, 3 drops the final newline.
        fn edited(base: &[u8], edits: &[(usize, u8)]) -> Vec<u8> {
            let lines = split_lines(base);
            let mut out = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                match edits
                    .iter()
                    .find(|(at, _)| at % lines.len() == i)
                    .map(|e| e.1)
                {
                    Some(0) => out.extend_from_slice(format!("changed {i}\n").as_bytes()),
                    Some(1) => {}
                    Some(2) => {
                        out.extend_from_slice(b"inserted one\ninserted two\n");
                        out.extend_from_slice(line);
                    }
                    Some(_) if i + 1 == lines.len() => {
                        out.extend_from_slice(line.strip_suffix(b"\n").unwrap_or(line))
                    }
                    _ => out.extend_from_slice(line),
                }
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]
            /// The chunked pass (used from 1 MiB) gives a diff that replays to the new
            /// side exactly and, for scattered edits, counts what line matching counts.
            #[test]
            fn chunked_ops_replay_and_match_full_matching(
                lines in 2000usize..6000,
                final_newline in any::<bool>(),
                edits in proptest::collection::vec((0usize..100_000, 0u8..4), 0..6),
            ) {
                let old_bytes = numbered(lines, final_newline);
                let new_bytes = edited(&old_bytes, &edits);
                let (old, new) = (split_lines(&old_bytes), split_lines(&new_bytes));
                let chunked = chunked_line_ops(&old_bytes, &new_bytes, None);
                prop_assert_eq!(replay(&chunked, &old, &new), Ok(new_bytes.clone()));
                prop_assert_eq!(count_changes(&chunked), count_changes(&line_ops(&old, &new, None)));
            }
        }

        #[test]
        fn a_changed_region_over_the_line_limit_is_one_replacement() {
            let old = "x\n".repeat(600_000);
            let new = format!("{}y\n{}", "x\n".repeat(300_000), "x\n".repeat(300_000));
            const { assert!(600_000 + 600_001 > MATCHED_LINES_MAX) };
            let ops = region_line_ops(old.as_bytes(), new.as_bytes(), None);
            assert_eq!(
                ops,
                vec![DiffOp::Replace {
                    old_index: 0,
                    old_len: 600_000,
                    new_index: 0,
                    new_len: 600_001
                }]
            );
            // Under the limit the same kind of change is matched: one inserted line.
            let small_new = format!("{}y\n{}", "x\n".repeat(1000), "x\n".repeat(1000));
            let ops = region_line_ops("x\n".repeat(2000).as_bytes(), small_new.as_bytes(), None);
            assert_eq!(count_changes(&ops), (1, 0));
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(12))]
            /// Whole files over 1 MiB (trimmed ends, then chunks): the diff replays to
            /// the new side and counts what line matching over every line counts.
            #[test]
            fn large_file_ops_replay_and_match_full_matching(
                final_newline in any::<bool>(),
                edits in proptest::collection::vec((0usize..100_000, 0u8..4), 1..5),
            ) {
                let old_bytes = numbered(24_000, final_newline);
                let new_bytes = edited(&old_bytes, &edits);
                prop_assume!(old_bytes.len() + new_bytes.len() >= CHUNKED_FROM_BYTES);
                let (old, new) = (split_lines(&old_bytes), split_lines(&new_bytes));
                let ops = file_line_ops(&old_bytes, &new_bytes);
                prop_assert_eq!(replay(&ops, &old, &new), Ok(new_bytes.clone()));
                prop_assert_eq!(count_changes(&ops), count_changes(&line_ops(&old, &new, None)));
            }
        }

        #[test]
        fn common_ends_are_whole_lines() {
            assert_eq!(common_ends(b"a\nb\nc\n", b"a\nB\nc\n"), (2, 2));
            assert_eq!(common_ends(b"a\nb", b"a\nbc\n"), (2, 0));
            assert_eq!(common_ends(b"a\n", b"a\nb\n"), (2, 0));
            assert_eq!(common_ends(b"xa\nz", b"ya\nz"), (0, 1));
            assert_eq!(common_ends(b"q\nxa\nz", b"q\nya\nz"), (2, 1));
            assert_eq!(common_ends(b"a\nb\n", b"b\n"), (0, 2));
            assert_eq!(common_ends(b"ab\n", b"b\n"), (0, 0));
            assert_eq!(common_prefix_len(&[7; 9000], &[7; 9001]), 9000);
            assert_eq!(common_suffix_len(b"xyz", b"ayz"), 2);
        }

        /// Repetitive content that a chunk pass alone would pair with the wrong copies
        /// (a report from adversarial testing): one edit in 2 MiB of identical lines is
        /// one line, in one hunk; two far apart, two lines in two hunks.
        #[test]
        fn one_edit_in_identical_lines_is_minimal() {
            let old = "same line\n".repeat(220_000);
            let mut new = old.clone();
            new.insert_str(10 * 123_457, "inserted\n");
            let d = candidate_diff("f", Some(old.as_bytes()), Some(new.as_bytes()));
            assert_eq!((d.lines_added, d.lines_removed), (1, 0));
            assert_eq!(d.unified.matches("@@ -").count(), 1, "{}", d.unified);
            let changed = new.replacen("same line\n", "changed\n", 1);
            let d = candidate_diff("f", Some(old.as_bytes()), Some(changed.as_bytes()));
            assert_eq!((d.lines_added, d.lines_removed), (2, 1));
            assert_eq!(d.unified.matches("@@ -").count(), 2);
        }

        /// A rewrite whose diff text would be 2x the file is cut at 8 MiB, with the
        /// marker line, and counted in full; so is one huge changed line.
        #[test]
        fn diff_text_is_cut_at_its_limit_and_counted_in_full() {
            let old = numbered(150_000, true);
            let new: Vec<u8> = old
                .iter()
                .map(|b| if *b == b'x' { b'y' } else { *b })
                .collect();
            let d = candidate_diff("f", Some(&old), Some(&new));
            assert_eq!(count_lines(&old), 150_000);
            let changed = split_lines(&old)
                .iter()
                .filter(|l| l.contains(&b'x'))
                .count();
            assert_eq!((d.lines_added, d.lines_removed), (changed, changed));
            assert!(
                d.unified.ends_with(TRUNCATED),
                "{}",
                &d.unified[d.unified.len() - 200..]
            );
            assert!(d.unified.len() <= UNIFIED_MAX_BYTES + 200 + TRUNCATED.len());
            assert!(d.unified.len() >= UNIFIED_MAX_BYTES);
            let long_old = vec![b'a'; 10 << 20];
            let mut long_new = long_old.clone();
            long_new[5] = b'b';
            let d = candidate_diff("f", Some(&long_old), Some(&long_new));
            assert_eq!((d.lines_added, d.lines_removed), (1, 1));
            assert!(d.unified.ends_with(&format!("aaaa\n{TRUNCATED}")));
            assert!(
                !d.unified.contains("\n+a"),
                "the new side is past the limit"
            );
            // Invalid UTF-8 turns each byte into 3 bytes of U+FFFD: still cut at the limit.
            let (ff, fe) = (vec![0xffu8; 10 << 20], vec![0xfeu8; 10 << 20]);
            let d = candidate_diff("f", Some(&ff), Some(&fe));
            assert!(d.lossy);
            assert!(
                d.unified.len() <= UNIFIED_MAX_BYTES + 1 + TRUNCATED.len(),
                "{}",
                d.unified.len()
            );
            assert!(d.unified.ends_with(TRUNCATED));
            // Under the limit nothing is cut.
            let small = candidate_diff("f", Some(b"a\n"), Some(b"b\n"));
            assert!(!small.unified.contains("truncated"));
        }

        /// A 2 MiB file (over [`CHUNKED_FROM_BYTES`]) edited in its middle and at its
        /// unterminated last line: exactly the hunks `diff -u` prints.
        #[test]
        fn a_large_file_diff_is_exact() {
            let old = numbered(40_000, false);
            let mut new = old.clone();
            let at = memchr::memmem::find(&old, b"line 20000 ").unwrap_or_default();
            new.splice(at..at + 4, b"LINE".iter().copied());
            new.extend_from_slice(b"!");
            assert!(old.len() + new.len() >= CHUNKED_FROM_BYTES);
            let d = candidate_diff("big", Some(&old), Some(&new));
            let pad = |i: usize| "x".repeat(i * 7 % 61);
            let ctx = |i: usize| format!(" line {i} {}\n", pad(i));
            let expected = format!(
                "--- a/big\n+++ b/big\n@@ -19998,7 +19998,7 @@\n{}{}{}-line 20000 {}\n\
                 +LINE 20000 {}\n{}{}{}@@ -39998,4 +39998,4 @@\n{}{}{}\
                 -last line without newline\n\\ No newline at end of file\n\
                 +last line without newline!\n\\ No newline at end of file\n",
                ctx(19997),
                ctx(19998),
                ctx(19999),
                pad(20000),
                pad(20000),
                ctx(20001),
                ctx(20002),
                ctx(20003),
                ctx(39997),
                ctx(39998),
                ctx(39999),
            );
            assert_eq!(d.unified, expected);
            assert_eq!((d.lines_added, d.lines_removed), (2, 2));
        }

        proptest! {
            /// Myers without line tables gives a valid script of minimal size (the
            /// same counts as matching over line tables), or None past its bound.
            #[test]
            fn direct_myers_is_minimal(a in text(), b in text()) {
                let (old, new) = (split_lines(a.as_bytes()), split_lines(b.as_bytes()));
                let ops = crate::edit::line_myers::diff(a.as_bytes(), b.as_bytes(), 1000, None);
                prop_assert!(ops.is_some());
                let ops = ops.unwrap_or_default();
                prop_assert_eq!(replay(&ops, &old, &new), Ok(b.as_bytes().to_vec()));
                let (added, removed) = count_changes(&ops);
                prop_assert_eq!((added, removed), count_changes(&line_ops(&old, &new, None)));
                let bounded = crate::edit::line_myers::diff(a.as_bytes(), b.as_bytes(), added + removed, None);
                prop_assert!(bounded.is_some());
                if added + removed > 0 {
                    let short = crate::edit::line_myers::diff(a.as_bytes(), b.as_bytes(), added + removed - 1, None);
                    prop_assert!(short.is_none());
                }
            }

            #[test]
            fn ops_replay_and_counts_are_minimal(a in text(), b in text()) {
                let (old, new) = (split_lines(a.as_bytes()), split_lines(b.as_bytes()));
                let ops = line_ops(&old, &new, None);
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
