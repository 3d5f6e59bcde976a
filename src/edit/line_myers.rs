//! Myers' greedy O(ND) diff over the lines of two byte strings, without line tables.
//!
//! This is the crate's second Myers implementation, and on purpose: it searches over
//! byte offsets without line tables, so that the candidate diff of a large file runs in
//! bounded memory; the port of git's xdiff in `merge/xdl.rs` builds line tables as git
//! does, because the three-way merge must place hunks exactly where git places them.
//!
//! E. W. Myers, "An O(ND) Difference Algorithm and Its Variations", Algorithmica 1
//! (1986), section 2: for D = 0, 1, … keep, per diagonal k = x − y, the furthest point
//! a path with D insertions and deletions reaches, following each *snake* (a run of
//! equal lines) as far as it goes. Here a point carries its byte offsets in both files
//! besides its line number, and a snake is followed by comparing bytes from those
//! offsets and backing up to the last whole line, so nothing is stored per line: the
//! cost in memory is the trace, (D + 1)(D + 2) / 2 points of 40 bytes, and a large
//! file that differs in a few lines is diffed exactly (a minimal diff, as `diff -u`
//! gives) at any size. Files that differ in more than `max_d` lines, or a search past
//! its deadline, return `None` and the caller falls back to another pass.

use std::time::Instant;

use similar::DiffOp;

use super::lines::count_lines;

/// The furthest point of one diagonal after D steps.
#[derive(Debug, Clone, Copy)]
struct Reach {
    /// Lines of `old` consumed (y = x − k).
    x: usize,
    /// Bytes of `old` consumed.
    xo: usize,
    /// Bytes of `new` consumed.
    yo: usize,
    /// Lines of the snake this point ends (equal lines just before it).
    snake: usize,
    /// Reached by an insertion (a line of `new`) rather than a deletion.
    down: bool,
}

/// Line ops from `old` to `new` (line indices from 0), minimal in insertions plus
/// deletions, or `None` when more than `max_d` lines differ or `deadline` passes.
pub(crate) fn diff(
    old: &[u8],
    new: &[u8],
    max_d: usize,
    deadline: Option<Instant>,
) -> Option<Vec<DiffOp>> {
    let (n, m) = (count_lines(old), count_lines(new));
    let start = snake(
        old,
        new,
        Reach {
            x: 0,
            xo: 0,
            yo: 0,
            snake: 0,
            down: false,
        },
    );
    let mut trace: Vec<Vec<Option<Reach>>> = vec![vec![Some(start)]];
    if start.x == n && start.x == m {
        return Some(script(&trace, 0, 0));
    }
    for d in 1..=max_d {
        let prev = trace.last()?;
        let mut row = Vec::with_capacity(d + 1);
        for i in 0..=d {
            // Checked per diagonal: on repetitive content every snake can run far.
            if deadline.is_some_and(|t| Instant::now() > t) {
                return None;
            }
            // Diagonal k = 2i − d; prev[i − 1] is diagonal k − 1, prev[i] is k + 1.
            let from_left = i
                .checked_sub(1)
                .and_then(|j| prev.get(j).copied().flatten());
            let from_above = prev.get(i).copied().flatten();
            let y_of = |r: &Reach, k: isize| r.x as isize - k;
            let k = 2 * i as isize - d as isize;
            // Down (insert a line of `new`) from diagonal k + 1, right (delete a line
            // of `old`) from k − 1: whichever is further, as long as lines are left.
            let down = from_above.filter(|r| y_of(r, k + 1) < m as isize);
            let right = from_left.filter(|r| r.x < n);
            let moved = match (down, right) {
                (Some(a), Some(l)) if l.x >= a.x => step_right(old, l),
                (Some(a), _) => step_down(new, a),
                (None, Some(l)) => step_right(old, l),
                (None, None) => {
                    row.push(None);
                    continue;
                }
            };
            let reached = snake(old, new, moved);
            if reached.x == n && y_of(&reached, k) == m as isize {
                row.push(Some(reached));
                trace.push(row);
                return Some(script(&trace, d, i));
            }
            row.push(Some(reached));
        }
        trace.push(row);
    }
    None
}

fn step_right(old: &[u8], r: Reach) -> Reach {
    Reach {
        x: r.x + 1,
        xo: r.xo + line_len(old, r.xo),
        yo: r.yo,
        snake: 0,
        down: false,
    }
}

fn step_down(new: &[u8], r: Reach) -> Reach {
    Reach {
        x: r.x,
        xo: r.xo,
        yo: r.yo + line_len(new, r.yo),
        snake: 0,
        down: true,
    }
}

/// Length of the line starting at byte `at` (with its terminator).
fn line_len(bytes: &[u8], at: usize) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1)
}

/// `r` moved along the equal whole lines that follow it in both files.
fn snake(old: &[u8], new: &[u8], r: Reach) -> Reach {
    let (a, b) = (
        old.get(r.xo..).unwrap_or_default(),
        new.get(r.yo..).unwrap_or_default(),
    );
    let same = super::diff::common_prefix_len(a, b);
    let bytes = if same == a.len() && same == b.len() {
        same
    } else {
        memchr::memrchr(b'\n', a.get(..same).unwrap_or_default()).map_or(0, |i| i + 1)
    };
    let lines = count_lines(a.get(..bytes).unwrap_or_default());
    Reach {
        x: r.x + lines,
        xo: r.xo + bytes,
        yo: r.yo + bytes,
        snake: lines,
        down: r.down,
    }
}

/// The ops of the path that ends at `trace[d][i]`, front to back.
fn script(trace: &[Vec<Option<Reach>>], mut d: usize, mut i: usize) -> Vec<DiffOp> {
    // Walk back: each step is a snake (equal lines) preceded by one move.
    enum Step {
        Equal { x: usize, y: usize, len: usize },
        Delete { x: usize, y: usize },
        Insert { x: usize, y: usize },
    }
    let mut steps = Vec::new();
    let mut at = trace.get(d).and_then(|row| row.get(i).copied().flatten());
    while let Some(r) = at {
        let k = 2 * i as isize - d as isize;
        let y = (r.x as isize - k) as usize;
        let (sx, sy) = (r.x - r.snake, y - r.snake);
        steps.push(Step::Equal {
            x: sx,
            y: sy,
            len: r.snake,
        });
        if d == 0 {
            break;
        }
        if r.down {
            steps.push(Step::Insert { x: sx, y: sy - 1 });
        } else {
            steps.push(Step::Delete { x: sx - 1, y: sy });
            i -= 1;
        }
        d -= 1;
        at = trace.get(d).and_then(|row| row.get(i).copied().flatten());
    }
    // Forward: equal runs as they are, neighbouring moves folded into one change.
    let mut ops = Vec::new();
    let mut change: Option<(usize, usize, usize, usize)> = None; // old at, old len, new at, new len
    let flush = |ops: &mut Vec<DiffOp>, change: &mut Option<(usize, usize, usize, usize)>| {
        if let Some((old_index, old_len, new_index, new_len)) = change.take() {
            ops.push(match (old_len, new_len) {
                (_, 0) => DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                },
                (0, _) => DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                },
                _ => DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                },
            });
        }
    };
    for step in steps.into_iter().rev() {
        match step {
            Step::Equal { len: 0, .. } => {}
            Step::Equal { x, y, len } => {
                flush(&mut ops, &mut change);
                ops.push(DiffOp::Equal {
                    old_index: x,
                    new_index: y,
                    len,
                });
            }
            Step::Delete { x, y } => {
                let c = change.get_or_insert((x, 0, y, 0));
                c.1 += 1;
            }
            Step::Insert { x, y } => {
                let c = change.get_or_insert((x, 0, y, 0));
                c.3 += 1;
            }
        }
    }
    flush(&mut ops, &mut change);
    ops
}
