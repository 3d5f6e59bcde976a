//! The port of git's xdiff behind [`merge3`](super::merge3): xdiff's Myers line
//! diff (xprepare.c, xdiffi.c) and `xdl_merge` (xmerge.c) at `git merge-file`'s
//! default level, and at the level its `--diff3` style uses. The steps are
//! described in the docs of the parent module.
//!
//! Unlike `line_myers.rs`, which searches over byte offsets without line tables,
//! this port builds line tables (ids per line, change flags) as xdiff does, so
//! that git's choice among equally short diffs, and so its hunk placement, comes
//! out the same.

use std::collections::HashMap;

use super::{ConflictRegion, ConflictStyle, Labels, MergeResult};
use crate::edit::lines::split_lines;

/// Length of a conflict marker run (`<<<<<<<`), git's default.
const MARKER_SIZE: usize = 7;
/// xdiff `XDL_MAX_COST_MIN`: lower bound of the cost past which the search
/// settles for the furthest-reaching point.
const MAX_COST_MIN: isize = 256;
/// xdiff `XDL_HEUR_MIN_COST`: cost past which long snakes are taken as split points.
const HEUR_MIN_COST: isize = 256;
/// xdiff `XDL_SNAKE_CNT`: length of a "long" snake.
const SNAKE_CNT: isize = 20;
/// xdiff `XDL_K_HEUR`.
const K_HEUR: isize = 4;
/// xdiff `XDL_LINE_MAX`: "unreached" backward position.
const LINE_MAX: isize = isize::MAX / 4;
/// xdiff `XDL_MAX_EQLIMIT`: cap on the "frequent line" threshold.
const MAX_EQ_LIMIT: usize = 1024;
/// xdiff `XDL_SIMSCAN_WINDOW`: lines scanned around a frequent line.
const SIMSCAN_WINDOW: usize = 100;
/// xdiff `XDL_KPDIS_RUN`.
const KPDIS_RUN: usize = 4;
/// Conflicts at most this many lines apart are joined (`xdl_simplify_non_conflicts`).
const JOIN_GAP: isize = 3;

/// `xdl_merge`: the body of [`merge3_styled`](super::merge3_styled).
///
/// With [`ConflictStyle::Diff3`] the level is `XDL_MERGE_EAGER`, as in
/// `xdl_do_merge` ("diff3 -m output does not make sense for anything more
/// aggressive"): no refinement of conflicts and no joining of close ones, since
/// the base section shown belongs to the whole overlapping change.
pub(super) fn merge(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    labels: &Labels,
    style: ConflictStyle,
) -> MergeResult {
    let sides = Sides {
        base: split_lines(base),
        ours: split_lines(ours),
        theirs: split_lines(theirs),
    };
    let ours_hunks = diff_lines(&sides.base, &sides.ours);
    let theirs_hunks = diff_lines(&sides.base, &sides.theirs);
    if ours_hunks.is_empty() || theirs_hunks.is_empty() {
        let merged = if ours_hunks.is_empty() { theirs } else { ours };
        return MergeResult {
            merged: merged.to_vec(),
            conflicts: Vec::new(),
        };
    }
    let chunks = collect_chunks(&ours_hunks, &theirs_hunks, &sides);
    let chunks = match style {
        ConflictStyle::Merge => join_close_conflicts(refine_conflicts(chunks, &sides), &sides.ours),
        ConflictStyle::Diff3 => chunks,
    };
    render(&chunks, &sides, labels, style)
}

// ---------------------------------------------------------------------------
// Lines

type Line<'a> = &'a [u8];

/// The lines of the three inputs.
struct Sides<'a> {
    base: Vec<Line<'a>>,
    ours: Vec<Line<'a>>,
    theirs: Vec<Line<'a>>,
}

/// `lines[start..start + count]`, empty when out of range or negative.
fn span<'s, 'a>(lines: &'s [Line<'a>], start: isize, count: isize) -> &'s [Line<'a>] {
    let (Ok(start), Ok(count)) = (usize::try_from(start), usize::try_from(count)) else {
        return &[];
    };
    lines
        .get(start..start.saturating_add(count))
        .unwrap_or_default()
}

fn len_of(lines: &[Line]) -> isize {
    isize::try_from(lines.len()).unwrap_or(isize::MAX)
}

fn to_usize(value: isize) -> usize {
    usize::try_from(value).unwrap_or(0)
}

// ---------------------------------------------------------------------------
// Line diff (a port of xdiff's Myers)

/// One change of a line diff (xdiff's `xdchange_t`), 0-based:
/// `old[i1..i1 + chg1]` became `new[i2..i2 + chg2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hunk {
    pub(super) i1: isize,
    pub(super) chg1: isize,
    pub(super) i2: isize,
    pub(super) chg2: isize,
}

/// Hunks of the line diff `old` → `new`, in order.
pub(super) fn diff_lines(old: &[Line], new: &[Line]) -> Vec<Hunk> {
    let (old_ids, new_ids) = intern(old, new);
    let mut old_marks = Marks::new(&old_ids);
    let mut new_marks = Marks::new(&new_ids);
    mark_changes(&mut old_marks, &mut new_marks);
    compact(&mut old_marks, &new_marks);
    compact(&mut new_marks, &old_marks);
    build_hunks(&old_marks.changed, &new_marks.changed)
}

/// Maps each line to an integer id; equal lines get equal ids.
fn intern<'a>(old: &[Line<'a>], new: &[Line<'a>]) -> (Vec<usize>, Vec<usize>) {
    let mut ids: HashMap<Line<'a>, usize> = HashMap::new();
    let mut id_of = |line: &Line<'a>| {
        let next = ids.len();
        *ids.entry(*line).or_insert(next)
    };
    let old_ids = old.iter().map(&mut id_of).collect();
    let new_ids = new.iter().map(&mut id_of).collect();
    (old_ids, new_ids)
}

/// Per-line "changed" flags of one side of a diff (xdiff's `rchg`).
struct Marks<'a> {
    ids: &'a [usize],
    changed: Vec<bool>,
}

/// A run `start..end` of changed lines (possibly empty) between unchanged ones.
#[derive(Debug, Clone, Copy)]
struct Group {
    start: usize,
    end: usize,
}

impl<'a> Marks<'a> {
    fn new(ids: &'a [usize]) -> Self {
        Marks {
            ids,
            changed: vec![false; ids.len()],
        }
    }

    fn is_changed(&self, i: usize) -> bool {
        self.changed.get(i).copied().unwrap_or(false)
    }

    fn set(&mut self, i: usize, value: bool) {
        if let Some(flag) = self.changed.get_mut(i) {
            *flag = value;
        }
    }

    fn same_line(&self, i: usize, j: usize) -> bool {
        matches!((self.ids.get(i), self.ids.get(j)), (Some(a), Some(b)) if a == b)
    }

    fn first_group(&self) -> Group {
        let mut group = Group { start: 0, end: 0 };
        self.extend_down(&mut group);
        group
    }

    fn extend_down(&self, g: &mut Group) {
        while self.is_changed(g.end) {
            g.end += 1;
        }
    }

    fn extend_up(&self, g: &mut Group) {
        while g.start > 0 && self.is_changed(g.start - 1) {
            g.start -= 1;
        }
    }

    /// Moves to the next group; false at the end of the file.
    fn next_group(&self, g: &mut Group) -> bool {
        if g.end >= self.ids.len() {
            return false;
        }
        g.start = g.end + 1;
        g.end = g.start;
        self.extend_down(g);
        true
    }

    /// Moves to the previous group; false at the start of the file.
    fn previous_group(&self, g: &mut Group) -> bool {
        if g.start == 0 {
            return false;
        }
        g.end = g.start - 1;
        g.start = g.end;
        self.extend_up(g);
        true
    }

    /// Slides a non-empty group one line down if the line after it equals its
    /// first line (merging with a following group); false if it cannot.
    fn slide_down(&mut self, g: &mut Group) -> bool {
        if g.end >= self.ids.len() || !self.same_line(g.start, g.end) {
            return false;
        }
        self.set(g.start, false);
        self.set(g.end, true);
        g.start += 1;
        g.end += 1;
        self.extend_down(g);
        true
    }

    /// Slides a non-empty group one line up if the line before it equals its
    /// last line (merging with a preceding group); false if it cannot.
    fn slide_up(&mut self, g: &mut Group) -> bool {
        if g.start == 0 || g.end == 0 || !self.same_line(g.start - 1, g.end - 1) {
            return false;
        }
        g.start -= 1;
        g.end -= 1;
        self.set(g.start, true);
        self.set(g.end, false);
        self.extend_up(g);
        true
    }
}

/// Marks changed lines like xdiff's `xdl_prepare_env` + `xdl_recs_cmp`.
fn mark_changes(old: &mut Marks, new: &mut Marks) {
    let (start, tail) = common_ends(old.ids, new.ids);
    let old_end = old.ids.len().saturating_sub(tail);
    let new_end = new.ids.len().saturating_sub(tail);
    let old_keep = kept_positions(old.ids, start, old_end, new.ids);
    let new_keep = kept_positions(new.ids, start, new_end, old.ids);
    (start..old_end).for_each(|i| old.set(i, true));
    (start..new_end).for_each(|i| new.set(i, true));
    let mut search = Myers::new(pick(old.ids, &old_keep), pick(new.ids, &new_keep));
    search.run();
    for (k, &i) in old_keep.iter().enumerate() {
        old.set(i, search.old_changed.get(k).copied().unwrap_or(true));
    }
    for (k, &j) in new_keep.iter().enumerate() {
        new.set(j, search.new_changed.get(k).copied().unwrap_or(true));
    }
}

/// (common prefix length, common suffix length) — xdiff's `xdl_trim_ends`.
fn common_ends(a: &[usize], b: &[usize]) -> (usize, usize) {
    let limit = a.len().min(b.len());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(limit - prefix)
        .take_while(|(x, y)| x == y)
        .count();
    (prefix, suffix)
}

/// xdiff's line classes for `xdl_cleanup_records`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// No occurrence on the other side: always changed.
    Unmatched,
    /// Occurs on the other side, not too often: kept for the diff.
    Matched,
    /// Occurs often on the other side: set aside inside runs of unmatched lines.
    Frequent,
}

/// Positions in `start..end` of `ids` that take part in the Myers search.
fn kept_positions(ids: &[usize], start: usize, end: usize, other: &[usize]) -> Vec<usize> {
    let mut counts: HashMap<usize, usize> = HashMap::new();
    other
        .iter()
        .for_each(|id| *counts.entry(*id).or_default() += 1);
    let limit = bogosqrt(ids.len()).min(MAX_EQ_LIMIT);
    let classes: Vec<Class> = ids
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .map(|id| match counts.get(id).copied().unwrap_or(0) {
            0 => Class::Unmatched,
            n if n >= limit => Class::Frequent,
            _ => Class::Matched,
        })
        .collect();
    (0..classes.len())
        .filter(|&k| match classes.get(k) {
            Some(Class::Matched) => true,
            Some(Class::Frequent) => !discard_frequent(&classes, k),
            _ => false,
        })
        .map(|k| start + k)
        .collect()
}

/// xdiff's `xdl_bogosqrt`.
pub(super) fn bogosqrt(mut n: usize) -> usize {
    let mut root = 1;
    while n > 0 {
        root <<= 1;
        n >>= 2;
    }
    root
}

/// xdiff's `xdl_clean_mmatch`: whether the frequent line at `i` sits in a run
/// made mostly of unmatched lines (then it is treated as changed).
fn discard_frequent(classes: &[Class], i: usize) -> bool {
    let low = i.saturating_sub(SIMSCAN_WINDOW);
    let high = (i + SIMSCAN_WINDOW).min(classes.len().saturating_sub(1));
    let before = classes.get(low..i).unwrap_or_default();
    let (unmatched_before, frequent_before) = run_counts(before.iter().rev());
    if unmatched_before == 0 {
        return false;
    }
    let after = classes.get(i + 1..=high).unwrap_or_default();
    let (unmatched_after, frequent_after) = run_counts(after.iter());
    if unmatched_after == 0 {
        return false;
    }
    let frequent = 2 + frequent_before + frequent_after;
    let unmatched = unmatched_before + unmatched_after;
    frequent * KPDIS_RUN < frequent + unmatched
}

/// (unmatched, frequent) counts of the leading run without a matched line.
fn run_counts<'c>(classes: impl Iterator<Item = &'c Class>) -> (usize, usize) {
    let mut counts = (0, 0);
    for class in classes {
        match class {
            Class::Unmatched => counts.0 += 1,
            Class::Frequent => counts.1 += 1,
            Class::Matched => break,
        }
    }
    counts
}

fn pick(ids: &[usize], positions: &[usize]) -> Vec<usize> {
    positions
        .iter()
        .filter_map(|&i| ids.get(i).copied())
        .collect()
}

/// Furthest-reaching positions per diagonal `k = i1 - i2` (xdiff's `kvdf` /
/// `kvdb`), indexable by negative diagonals.
struct Diagonals {
    values: Vec<isize>,
    shift: isize,
    /// Value read for a diagonal outside the table (never expected).
    outside: isize,
}

impl Diagonals {
    fn new(old_len: isize, new_len: isize, outside: isize) -> Self {
        let size = to_usize(old_len + new_len + 3);
        Diagonals {
            values: vec![outside; size],
            shift: new_len + 1,
            outside,
        }
    }

    fn at(&self, k: isize) -> isize {
        let index = usize::try_from(k + self.shift).ok();
        index
            .and_then(|i| self.values.get(i).copied())
            .unwrap_or(self.outside)
    }

    fn set(&mut self, k: isize, value: isize) {
        let index = usize::try_from(k + self.shift).ok();
        if let Some(slot) = index.and_then(|i| self.values.get_mut(i)) {
            *slot = value;
        }
    }
}

/// A sub-problem of the search: old `off1..lim1` against new `off2..lim2`.
#[derive(Debug, Clone, Copy)]
struct Box2 {
    off1: isize,
    lim1: isize,
    off2: isize,
    lim2: isize,
    need_min: bool,
}

/// Where a box is split (xdiff's `xdpsplit_t`), and whether each half must be
/// searched without the cost heuristics.
#[derive(Debug, Clone, Copy)]
struct Split {
    i1: isize,
    i2: isize,
    min_lo: bool,
    min_hi: bool,
}

/// A port of xdiff's Myers search (`xdl_recs_cmp` / `xdl_split`, xdiff/xdiffi.c)
/// over the kept lines, heuristics included, so that among equally short
/// diffs it picks the one git picks.
struct Myers {
    old: Vec<usize>,
    new: Vec<usize>,
    forward: Diagonals,
    backward: Diagonals,
    max_cost: isize,
    old_changed: Vec<bool>,
    new_changed: Vec<bool>,
}

impl Myers {
    fn new(old: Vec<usize>, new: Vec<usize>) -> Self {
        let (n1, n2) = (len_of_ids(&old), len_of_ids(&new));
        let diagonals = to_usize(n1 + n2 + 3);
        let max_cost = isize::try_from(bogosqrt(diagonals)).unwrap_or(isize::MAX);
        Myers {
            forward: Diagonals::new(n1, n2, -1),
            backward: Diagonals::new(n1, n2, LINE_MAX),
            max_cost: max_cost.max(MAX_COST_MIN),
            old_changed: vec![false; old.len()],
            new_changed: vec![false; new.len()],
            old,
            new,
        }
    }

    fn same(&self, i1: isize, i2: isize) -> bool {
        let a = usize::try_from(i1).ok().and_then(|i| self.old.get(i));
        let b = usize::try_from(i2).ok().and_then(|i| self.new.get(i));
        matches!((a, b), (Some(a), Some(b)) if a == b)
    }

    /// xdiff's `xdl_recs_cmp`, with an explicit stack instead of recursion.
    fn run(&mut self) {
        let mut stack = vec![Box2 {
            off1: 0,
            lim1: len_of_ids(&self.old),
            off2: 0,
            lim2: len_of_ids(&self.new),
            need_min: false,
        }];
        while let Some(b) = stack.pop() {
            let b = self.shrink(b);
            if b.off1 == b.lim1 || b.off2 == b.lim2 {
                self.mark_box(b);
                continue;
            }
            let s = self.split(b);
            let inside = (s.i1, s.i2) != (b.off1, b.off2) && (s.i1, s.i2) != (b.lim1, b.lim2);
            if !inside {
                self.mark_box(b); // never expected: keeps the loop finite
                continue;
            }
            stack.push(Box2 {
                off1: s.i1,
                off2: s.i2,
                need_min: s.min_hi,
                ..b
            });
            stack.push(Box2 {
                lim1: s.i1,
                lim2: s.i2,
                need_min: s.min_lo,
                ..b
            });
        }
    }

    /// Drops the common lines at both ends of a box.
    fn shrink(&self, mut b: Box2) -> Box2 {
        while b.off1 < b.lim1 && b.off2 < b.lim2 && self.same(b.off1, b.off2) {
            (b.off1, b.off2) = (b.off1 + 1, b.off2 + 1);
        }
        while b.off1 < b.lim1 && b.off2 < b.lim2 && self.same(b.lim1 - 1, b.lim2 - 1) {
            (b.lim1, b.lim2) = (b.lim1 - 1, b.lim2 - 1);
        }
        b
    }

    /// Marks every line of the box changed.
    fn mark_box(&mut self, b: Box2) {
        let old = self.old_changed.get_mut(to_usize(b.off1)..to_usize(b.lim1));
        old.unwrap_or_default().fill(true);
        let new = self.new_changed.get_mut(to_usize(b.off2)..to_usize(b.lim2));
        new.unwrap_or_default().fill(true);
    }

    /// xdiff's `xdl_split`: searches forward from the box's top-left and
    /// backward from its bottom-right until the paths meet; past the cost
    /// limits, settles for a good snake or the furthest-reaching point.
    fn split(&mut self, b: Box2) -> Split {
        let mut edges = Edges::new(&b);
        self.forward.set(edges.fmid, b.off1);
        self.backward.set(edges.bmid, b.lim1);
        let mut cost = 1;
        loop {
            let (found, forward_snake) = self.forward_step(&b, &mut edges);
            if let Some(split) = found {
                return split;
            }
            let (found, backward_snake) = self.backward_step(&b, &mut edges);
            if let Some(split) = found {
                return split;
            }
            if !b.need_min {
                if (forward_snake || backward_snake) && cost > HEUR_MIN_COST {
                    if let Some(split) = self.snake_split(&b, &edges, cost) {
                        return split;
                    }
                }
                if cost >= self.max_cost {
                    return self.furthest_split(&b, &edges);
                }
            }
            cost += 1;
        }
    }

    /// One forward round; returns a meeting point, and whether a long snake was seen.
    fn forward_step(&mut self, b: &Box2, e: &mut Edges) -> (Option<Split>, bool) {
        if e.fmin > e.dmin {
            e.fmin -= 1;
            self.forward.set(e.fmin - 1, -1);
        } else {
            e.fmin += 1;
        }
        if e.fmax < e.dmax {
            e.fmax += 1;
            self.forward.set(e.fmax + 1, -1);
        } else {
            e.fmax -= 1;
        }
        let mut got_snake = false;
        let mut d = e.fmax;
        while d >= e.fmin {
            let (left, right) = (self.forward.at(d - 1), self.forward.at(d + 1));
            let mut i1 = if left >= right { left + 1 } else { right };
            let prev1 = i1;
            let mut i2 = i1 - d;
            while i1 < b.lim1 && i2 < b.lim2 && self.same(i1, i2) {
                (i1, i2) = (i1 + 1, i2 + 1);
            }
            got_snake |= i1 - prev1 > SNAKE_CNT;
            self.forward.set(d, i1);
            if e.odd && e.bmin <= d && d <= e.bmax && self.backward.at(d) <= i1 {
                return (
                    Some(Split {
                        i1,
                        i2,
                        min_lo: true,
                        min_hi: true,
                    }),
                    got_snake,
                );
            }
            d -= 2;
        }
        (None, got_snake)
    }

    /// One backward round; returns a meeting point, and whether a long snake was seen.
    fn backward_step(&mut self, b: &Box2, e: &mut Edges) -> (Option<Split>, bool) {
        if e.bmin > e.dmin {
            e.bmin -= 1;
            self.backward.set(e.bmin - 1, LINE_MAX);
        } else {
            e.bmin += 1;
        }
        if e.bmax < e.dmax {
            e.bmax += 1;
            self.backward.set(e.bmax + 1, LINE_MAX);
        } else {
            e.bmax -= 1;
        }
        let mut got_snake = false;
        let mut d = e.bmax;
        while d >= e.bmin {
            let (left, right) = (self.backward.at(d - 1), self.backward.at(d + 1));
            let mut i1 = if left < right { left } else { right - 1 };
            let prev1 = i1;
            let mut i2 = i1 - d;
            while i1 > b.off1 && i2 > b.off2 && self.same(i1 - 1, i2 - 1) {
                (i1, i2) = (i1 - 1, i2 - 1);
            }
            got_snake |= prev1 - i1 > SNAKE_CNT;
            self.backward.set(d, i1);
            if !e.odd && e.fmin <= d && d <= e.fmax && i1 <= self.forward.at(d) {
                return (
                    Some(Split {
                        i1,
                        i2,
                        min_lo: true,
                        min_hi: true,
                    }),
                    got_snake,
                );
            }
            d -= 2;
        }
        (None, got_snake)
    }

    /// xdiff's "interesting diagonal" heuristic: a point far along a diagonal
    /// close to the middle one, at the end (forward) or start (backward) of a
    /// snake of `SNAKE_CNT` common lines.
    fn snake_split(&self, b: &Box2, e: &Edges, cost: isize) -> Option<Split> {
        self.forward_snake_split(b, e, cost)
            .or_else(|| self.backward_snake_split(b, e, cost))
    }

    fn forward_snake_split(&self, b: &Box2, e: &Edges, cost: isize) -> Option<Split> {
        let (mut best, mut best_value) = (None, 0);
        for d in (e.fmin..=e.fmax).rev().step_by(2) {
            let i1 = self.forward.at(d);
            let i2 = i1 - d;
            let value = (i1 - b.off1) + (i2 - b.off2) - (d - e.fmid).abs();
            let inside =
                b.off1 + SNAKE_CNT <= i1 && i1 < b.lim1 && b.off2 + SNAKE_CNT <= i2 && i2 < b.lim2;
            if value > K_HEUR * cost && value > best_value && inside && self.snake_before(i1, i2) {
                best_value = value;
                best = Some(Split {
                    i1,
                    i2,
                    min_lo: true,
                    min_hi: false,
                });
            }
        }
        best
    }

    fn backward_snake_split(&self, b: &Box2, e: &Edges, cost: isize) -> Option<Split> {
        let (mut best, mut best_value) = (None, 0);
        for d in (e.bmin..=e.bmax).rev().step_by(2) {
            let i1 = self.backward.at(d);
            let i2 = i1 - d;
            let value = (b.lim1 - i1) + (b.lim2 - i2) - (d - e.bmid).abs();
            let inside =
                b.off1 < i1 && i1 <= b.lim1 - SNAKE_CNT && b.off2 < i2 && i2 <= b.lim2 - SNAKE_CNT;
            if value > K_HEUR * cost && value > best_value && inside && self.snake_after(i1, i2) {
                best_value = value;
                best = Some(Split {
                    i1,
                    i2,
                    min_lo: false,
                    min_hi: true,
                });
            }
        }
        best
    }

    /// The `SNAKE_CNT` lines before `(i1, i2)` are common.
    fn snake_before(&self, i1: isize, i2: isize) -> bool {
        (1..=SNAKE_CNT).all(|k| self.same(i1 - k, i2 - k))
    }

    /// The `SNAKE_CNT` lines from `(i1, i2)` on are common.
    fn snake_after(&self, i1: isize, i2: isize) -> bool {
        (0..SNAKE_CNT).all(|k| self.same(i1 + k, i2 + k))
    }

    /// xdiff's cut-off past `max_cost`: the furthest-reaching forward or
    /// backward point, whichever got further.
    fn furthest_split(&self, b: &Box2, e: &Edges) -> Split {
        let (mut fbest, mut fbest1) = (-1, -1);
        for d in (e.fmin..=e.fmax).rev().step_by(2) {
            let mut i1 = self.forward.at(d).min(b.lim1);
            let mut i2 = i1 - d;
            if b.lim2 < i2 {
                (i1, i2) = (b.lim2 + d, b.lim2);
            }
            if fbest < i1 + i2 {
                (fbest, fbest1) = (i1 + i2, i1);
            }
        }
        let (mut bbest, mut bbest1) = (LINE_MAX, LINE_MAX);
        for d in (e.bmin..=e.bmax).rev().step_by(2) {
            let mut i1 = self.backward.at(d).max(b.off1);
            let mut i2 = i1 - d;
            if i2 < b.off2 {
                (i1, i2) = (b.off2 + d, b.off2);
            }
            if i1 + i2 < bbest {
                (bbest, bbest1) = (i1 + i2, i1);
            }
        }
        if (b.lim1 + b.lim2) - bbest < fbest - (b.off1 + b.off2) {
            Split {
                i1: fbest1,
                i2: fbest - fbest1,
                min_lo: true,
                min_hi: false,
            }
        } else {
            Split {
                i1: bbest1,
                i2: bbest - bbest1,
                min_lo: false,
                min_hi: true,
            }
        }
    }
}

/// The diagonal bounds of one `xdl_split` search.
struct Edges {
    dmin: isize,
    dmax: isize,
    fmid: isize,
    bmid: isize,
    odd: bool,
    fmin: isize,
    fmax: isize,
    bmin: isize,
    bmax: isize,
}

impl Edges {
    fn new(b: &Box2) -> Self {
        let (fmid, bmid) = (b.off1 - b.off2, b.lim1 - b.lim2);
        Edges {
            dmin: b.off1 - b.lim2,
            dmax: b.lim1 - b.off2,
            fmid,
            bmid,
            odd: (fmid - bmid) & 1 != 0,
            fmin: fmid,
            fmax: fmid,
            bmin: bmid,
            bmax: bmid,
        }
    }
}

fn len_of_ids(ids: &[usize]) -> isize {
    isize::try_from(ids.len()).unwrap_or(isize::MAX)
}

/// xdiff's `xdl_change_compact`: slides each change group of `file` as far
/// down as possible, then back up to the last position where it lines up with
/// a change group of `other` (if any). No indent heuristic (git merge-file
/// does not enable it).
fn compact(file: &mut Marks, other: &Marks) {
    let mut g = file.first_group();
    let mut go = other.first_group();
    loop {
        if g.end != g.start {
            align_group(file, other, &mut g, &mut go);
        }
        if !file.next_group(&mut g) || !other.next_group(&mut go) {
            break;
        }
    }
}

fn align_group(file: &mut Marks, other: &Marks, g: &mut Group, go: &mut Group) {
    let (earliest_end, lines_up) = slide_fully(file, other, g, go);
    if g.end == earliest_end || !lines_up {
        return;
    }
    while go.end == go.start {
        if !file.slide_up(g) || !other.previous_group(go) {
            break;
        }
    }
}

/// Slides the group up then down as far as possible (merging groups it
/// meets) until its size is stable. Returns the end of its highest position
/// and whether some position lined up with a change group of `other`.
fn slide_fully(file: &mut Marks, other: &Marks, g: &mut Group, go: &mut Group) -> (usize, bool) {
    loop {
        let size = g.end - g.start;
        while file.slide_up(g) {
            other.previous_group(go);
        }
        let earliest_end = g.end;
        let mut lines_up = go.end > go.start;
        while file.slide_down(g) {
            other.next_group(go);
            lines_up |= go.end > go.start;
        }
        if size == g.end - g.start {
            return (earliest_end, lines_up);
        }
    }
}

/// xdiff's `xdl_build_script`: maximal runs of changed lines, paired in order
/// across the unchanged lines.
fn build_hunks(old: &[bool], new: &[bool]) -> Vec<Hunk> {
    let changed = |flags: &[bool], i: usize| flags.get(i).copied().unwrap_or(false);
    let (mut i, mut j) = (0, 0);
    let mut hunks = Vec::new();
    loop {
        while i < old.len() && j < new.len() && !changed(old, i) && !changed(new, j) {
            (i, j) = (i + 1, j + 1);
        }
        let (old_start, new_start) = (i, j);
        while changed(old, i) {
            i += 1;
        }
        while changed(new, j) {
            j += 1;
        }
        if i == old_start && j == new_start {
            return hunks;
        }
        hunks.push(Hunk {
            i1: isize::try_from(old_start).unwrap_or(isize::MAX),
            chg1: isize::try_from(i - old_start).unwrap_or(0),
            i2: isize::try_from(new_start).unwrap_or(isize::MAX),
            chg2: isize::try_from(j - new_start).unwrap_or(0),
        });
    }
}

// ---------------------------------------------------------------------------
// Merge (xdiff's xdl_do_merge)

/// What the output takes for a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Conflict,
    /// Changed by ours only.
    Ours,
    /// Changed by theirs only.
    Theirs,
    /// A conflict whose sides turned out identical (output from ours).
    Identical,
}

/// One merge chunk (xdiff's `xdmerge_t`), 0-based: base `i0..i0 + chg0`,
/// ours `i1..i1 + chg1`, theirs `i2..i2 + chg2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    mode: Mode,
    i0: isize,
    chg0: isize,
    i1: isize,
    chg1: isize,
    i2: isize,
    chg2: isize,
}

/// Walks both hunk lists (base → ours, base → theirs) into chunks.
fn collect_chunks(ours: &[Hunk], theirs: &[Hunk], sides: &Sides) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let (mut a, mut b) = (0, 0);
    while let (Some(x), Some(y)) = (ours.get(a), theirs.get(b)) {
        if x.i1 + x.chg1 < y.i1 {
            append_chunk(&mut chunks, ours_chunk(x, y.i2 - y.i1));
            a += 1;
        } else if y.i1 + y.chg1 < x.i1 {
            append_chunk(&mut chunks, theirs_chunk(y, x.i2 - x.i1));
            b += 1;
        } else {
            if !same_change(x, y, sides) {
                append_chunk(&mut chunks, conflict_chunk(x, y));
            }
            let (x_end, y_end) = (x.i1 + x.chg1, y.i1 + y.chg1);
            b += usize::from(x_end >= y_end);
            a += usize::from(y_end >= x_end);
        }
    }
    let (base_len, ours_len, theirs_len) = (
        len_of(&sides.base),
        len_of(&sides.ours),
        len_of(&sides.theirs),
    );
    for x in ours.get(a..).unwrap_or_default() {
        append_chunk(&mut chunks, ours_chunk(x, theirs_len - base_len));
    }
    for y in theirs.get(b..).unwrap_or_default() {
        append_chunk(&mut chunks, theirs_chunk(y, ours_len - base_len));
    }
    chunks
}

/// A change by ours only; `theirs_shift` maps a base line there to theirs.
fn ours_chunk(x: &Hunk, theirs_shift: isize) -> Chunk {
    Chunk {
        mode: Mode::Ours,
        i0: x.i1,
        chg0: x.chg1,
        i1: x.i2,
        chg1: x.chg2,
        i2: x.i1 + theirs_shift,
        chg2: x.chg1,
    }
}

/// A change by theirs only; `ours_shift` maps a base line there to ours.
fn theirs_chunk(y: &Hunk, ours_shift: isize) -> Chunk {
    Chunk {
        mode: Mode::Theirs,
        i0: y.i1,
        chg0: y.chg1,
        i1: y.i1 + ours_shift,
        chg1: y.chg1,
        i2: y.i2,
        chg2: y.chg2,
    }
}

/// True if both hunks replace the same base lines with the same lines.
fn same_change(x: &Hunk, y: &Hunk, sides: &Sides) -> bool {
    x.i1 == y.i1
        && x.chg1 == y.chg1
        && x.chg2 == y.chg2
        && span(&sides.ours, x.i2, x.chg2) == span(&sides.theirs, y.i2, y.chg2)
}

/// The conflict covering two overlapping hunks, extended so that both sides
/// span the same base lines.
fn conflict_chunk(x: &Hunk, y: &Hunk) -> Chunk {
    let off = x.i1 - y.i1;
    let ffo = off + x.chg1 - y.chg1;
    let (mut i0, mut i1, mut i2) = (x.i1, x.i2, y.i2);
    if off > 0 {
        i0 -= off;
        i1 -= off;
    } else {
        i2 += off;
    }
    let mut chg0 = x.i1 + x.chg1 - i0;
    let mut chg1 = x.i2 + x.chg2 - i1;
    let mut chg2 = y.i2 + y.chg2 - i2;
    if ffo < 0 {
        chg0 -= ffo;
        chg1 -= ffo;
    } else {
        chg2 += ffo;
    }
    Chunk {
        mode: Mode::Conflict,
        i0,
        chg0,
        i1,
        chg1,
        i2,
        chg2,
    }
}

/// xdiff's `xdl_append_merge`: a chunk touching the previous one (on ours or
/// on theirs) extends it, and a mix of modes becomes a conflict.
fn append_chunk(chunks: &mut Vec<Chunk>, c: Chunk) {
    if let Some(m) = chunks.last_mut() {
        if c.i1 <= m.i1 + m.chg1 || c.i2 <= m.i2 + m.chg2 {
            if c.mode != m.mode {
                m.mode = Mode::Conflict;
            }
            m.chg0 = c.i0 + c.chg0 - m.i0;
            m.chg1 = c.i1 + c.chg1 - m.i1;
            m.chg2 = c.i2 + c.chg2 - m.i2;
            return;
        }
    }
    chunks.push(c);
}

/// xdiff's `xdl_refine_conflicts`: diffs ours' against theirs' side of each
/// conflict; each hunk of that diff becomes a conflict (keeping the base range
/// of the whole chunk), and a conflict whose sides are equal is resolved.
fn refine_conflicts(chunks: Vec<Chunk>, sides: &Sides) -> Vec<Chunk> {
    let mut refined = Vec::with_capacity(chunks.len());
    for m in chunks {
        if m.mode != Mode::Conflict || m.chg1 == 0 || m.chg2 == 0 {
            refined.push(m);
            continue;
        }
        let hunks = diff_lines(
            span(&sides.ours, m.i1, m.chg1),
            span(&sides.theirs, m.i2, m.chg2),
        );
        if hunks.is_empty() {
            refined.push(Chunk {
                mode: Mode::Identical,
                ..m
            });
        }
        refined.extend(hunks.iter().map(|h| Chunk {
            i1: m.i1 + h.i1,
            chg1: h.chg1,
            i2: m.i2 + h.i2,
            chg2: h.chg2,
            ..m
        }));
    }
    refined
}

/// xdiff's `xdl_simplify_non_conflicts` (with the alnum rule): joins two
/// consecutive conflicts when at most 3 lines, or only lines without an ASCII
/// letter or digit, separate them.
fn join_close_conflicts(chunks: Vec<Chunk>, ours: &[Line]) -> Vec<Chunk> {
    let mut joined: Vec<Chunk> = Vec::with_capacity(chunks.len());
    for next in chunks {
        match joined.last_mut() {
            Some(m) if should_join(m, &next, ours) => {
                m.chg0 = (m.i0 + m.chg0).max(next.i0 + next.chg0) - m.i0;
                m.chg1 = next.i1 + next.chg1 - m.i1;
                m.chg2 = next.i2 + next.chg2 - m.i2;
            }
            _ => joined.push(next),
        }
    }
    joined
}

fn should_join(m: &Chunk, next: &Chunk, ours: &[Line]) -> bool {
    if m.mode != Mode::Conflict || next.mode != Mode::Conflict {
        return false;
    }
    let (begin, end) = (m.i1 + m.chg1, next.i1);
    let has_alnum = span(ours, begin, end - begin)
        .iter()
        .any(|line| line.iter().any(u8::is_ascii_alphanumeric));
    end - begin <= JOIN_GAP || !has_alnum
}

// ---------------------------------------------------------------------------
// Output (xdiff's xdl_fill_merge_buffer)

/// Merged bytes with a running line count.
struct Output {
    bytes: Vec<u8>,
    counted: usize,
    newlines: usize,
}

impl Output {
    fn push_lines(&mut self, lines: &[Line]) {
        lines
            .iter()
            .for_each(|line| self.bytes.extend_from_slice(line));
    }

    /// Number of `\n` in the bytes so far.
    fn newline_count(&mut self) -> usize {
        let fresh = self.bytes.get(self.counted..).unwrap_or_default();
        self.newlines += fresh.iter().filter(|&&b| b == b'\n').count();
        self.counted = self.bytes.len();
        self.newlines
    }
}

fn render(chunks: &[Chunk], sides: &Sides, labels: &Labels, style: ConflictStyle) -> MergeResult {
    let mut out = Output {
        bytes: Vec::new(),
        counted: 0,
        newlines: 0,
    };
    let mut conflicts = Vec::new();
    let mut at = 0;
    for m in chunks {
        match m.mode {
            Mode::Identical => continue,
            Mode::Ours => {
                out.push_lines(span(&sides.ours, at, m.i1 - at));
                out.push_lines(span(&sides.ours, m.i1, m.chg1));
            }
            Mode::Theirs => {
                out.push_lines(span(&sides.ours, at, m.i1 - at));
                out.push_lines(span(&sides.theirs, m.i2, m.chg2));
            }
            Mode::Conflict => {
                out.push_lines(span(&sides.ours, at, m.i1 - at));
                conflicts.push(write_conflict(&mut out, m, sides, labels, style));
            }
        }
        at = m.i1 + m.chg1;
    }
    out.push_lines(span(&sides.ours, at, len_of(&sides.ours) - at));
    MergeResult {
        merged: out.bytes,
        conflicts,
    }
}

/// Writes one marked conflict (xdiff's `fill_conflict_hunk`) and describes it.
fn write_conflict(
    out: &mut Output,
    m: &Chunk,
    sides: &Sides,
    labels: &Labels,
    style: ConflictStyle,
) -> ConflictRegion {
    let eol: &[u8] = if needs_cr(m, sides) { b"\r\n" } else { b"\n" };
    let (ours, base, theirs) = (
        span(&sides.ours, m.i1, m.chg1),
        span(&sides.base, m.i0, m.chg0),
        span(&sides.theirs, m.i2, m.chg2),
    );
    let merged_start = out.newline_count() + 1;
    push_marker(out, b'<', Some(labels.ours), eol);
    push_side(out, ours, eol);
    if style == ConflictStyle::Diff3 {
        // The shared preimage: the base lines of the whole overlapping change.
        push_marker(out, b'|', Some(labels.base), eol);
        push_side(out, base, eol);
    }
    push_marker(out, b'=', None, eol);
    push_side(out, theirs, eol);
    push_marker(out, b'>', Some(labels.theirs), eol);
    ConflictRegion {
        merged_start,
        merged_lines: out.newline_count() + 1 - merged_start,
        base_start: to_usize(m.i0) + 1,
        base_lines: to_usize(m.chg0),
        ours_start: to_usize(m.i1) + 1,
        ours_lines: to_usize(m.chg1),
        theirs_start: to_usize(m.i2) + 1,
        theirs_lines: to_usize(m.chg2),
        ours: lossy(ours),
        theirs: lossy(theirs),
        base: lossy(base),
    }
}

/// A marker line: the run of `marker`, then ` label` (git writes the space for an
/// empty `-L ""` too).
fn push_marker(out: &mut Output, marker: u8, label: Option<&str>, eol: &[u8]) {
    out.bytes.extend(std::iter::repeat_n(marker, MARKER_SIZE));
    if let Some(label) = label {
        out.bytes.push(b' ');
        out.bytes.extend_from_slice(label.as_bytes());
    }
    out.bytes.extend_from_slice(eol);
}

/// One side of a conflict; a last line without `\n` gets `eol` added.
fn push_side(out: &mut Output, lines: &[Line], eol: &[u8]) {
    out.push_lines(lines);
    if lines.last().is_some_and(|line| !line.ends_with(b"\n")) {
        out.bytes.extend_from_slice(eol);
    }
}

fn lossy(lines: &[Line]) -> String {
    String::from_utf8_lossy(&lines.concat()).into_owned()
}

/// xdiff's `is_cr_needed`: CRLF markers only if the lines before the conflict
/// in ours and in theirs and the first base line all end in CRLF (undecidable
/// ones — an empty file, a lone line without newline — are skipped; all
/// undecidable means LF).
fn needs_cr(m: &Chunk, sides: &Sides) -> bool {
    let before = |i: isize| to_usize(i).saturating_sub(1);
    let mut crlf = eol_is_crlf(&sides.ours, before(m.i1));
    if crlf != Some(false) {
        crlf = eol_is_crlf(&sides.theirs, before(m.i2));
    }
    if crlf != Some(false) {
        crlf = eol_is_crlf(&sides.base, 0);
    }
    crlf == Some(true)
}

/// xdiff's `is_eol_crlf`: whether line `i` ends in CRLF (for a last line
/// without newline, the line before it); `None` if it cannot be told.
fn eol_is_crlf(lines: &[Line], i: usize) -> Option<bool> {
    let line = lines.get(i)?;
    if i + 1 < lines.len() || line.ends_with(b"\n") {
        return Some(line.ends_with(b"\r\n"));
    }
    let previous = lines.get(i.checked_sub(1)?)?;
    Some(previous.ends_with(b"\r\n"))
}
