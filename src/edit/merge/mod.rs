//! Three-way line merge (diff3) for the `rebase` verb.
//!
//! When the disk moved since a preview's snapshot, `rebase` merges per file:
//! base = the old snapshot, ours = the preview's candidate, theirs = the current
//! disk bytes. [`merge3`] returns the merged bytes and the conflicts, written
//! like `git merge-file -p` (default "merge" conflict style) writes them;
//! [`merge3_styled`] with [`ConflictStyle::Diff3`] writes them like
//! `git merge-file -p --diff3`, with the base lines between `|||||||` and
//! `=======` (what `rebase` records, so that a person resolving a conflict sees
//! what both sides started from).
//!
//! # Algorithm
//! A port of git's `xdl_merge` (xdiff/xmerge.c) at `git merge-file`'s default
//! level (`XDL_MERGE_ZEALOUS_ALNUM`), over a port of xdiff's Myers line diff:
//!
//! 1. Line diffs base → ours and base → theirs. Lines are raw bytes split after
//!    each `\n` (the last line may lack one), compared exactly. As in xdiff
//!    (xprepare.c, xdiffi.c): common ends are trimmed; lines absent from the
//!    other side, and frequent lines inside runs of such lines, are set aside;
//!    the rest goes through xdiff's divide-and-conquer Myers search
//!    (`xdl_split`, with its cost cut-offs); then change groups are slid like
//!    `xdl_change_compact` (down as far as possible, then back up to line up
//!    with a change group of the other file). Porting the search, rather than
//!    using `similar`, is what makes git's choice among equally short diffs —
//!    frequent with repeated lines such as `}` or blank lines — come out the
//!    same: with `similar`'s Myers about 6% of random code-like cases placed a
//!    conflict differently from git.
//! 2. The two hunk lists are walked together: a hunk that ends before the other
//!    side's next hunk starts (at least one base line apart) is taken from its
//!    side; overlapping **or touching** hunks are a conflict unless both sides
//!    made the identical change. Chunks touching a previous one extend it.
//! 3. "Zealous" refinement (merge style only; the diff3 style stops at git's
//!    `XDL_MERGE_EAGER` level, where a conflict is the whole overlapping change
//!    and its base section is that change's base lines): the two sides of each conflict are diffed against
//!    each other; only the differing parts stay conflicts, the lines common to
//!    both sides (at the start, the end or in between) go outside the markers.
//!    Conflicts separated by at most 3 lines, or only by lines without an
//!    ASCII letter or digit, are joined again.
//! 4. Output walks ours; stable lines are ours' lines (equal to base and
//!    theirs), so every byte outside conflicts is kept exactly (CRLF, invalid
//!    UTF-8, a missing final newline).
//!
//! Cost: O((N + M) · D) per diff, D bounded like xdiff (at least 256, about
//! √(N + M) past that).
//!
//! # Differences from `git merge-file -p`
//! - git refuses binary inputs (a NUL byte in the first 8000 bytes) and inputs
//!   over 1 GiB; [`merge3`] merges any bytes line by line.
//! - Two conflict styles, "merge" (git's default) and "diff3", with 7-character
//!   markers: zdiff3, `--marker-size`, `--ours` / `--theirs` / `--union` and
//!   `--diff-algorithm` have no equivalent.
//! - [`ConflictRegion`] is extra information git does not print; when git's
//!   refinement splits one overlapping change into several conflicts, each
//!   reports the base range of the whole change.
//!
//! The port itself (xdiff's line diff and `xdl_merge`) is in `xdl.rs`; this file
//! holds the public types and [`merge3`].
//!
//! Units: line numbers in [`ConflictRegion`] are 1-based, counts are lines;
//! all content is bytes.

#[cfg(test)]
mod tests;
mod xdl;

/// One conflict: lines where ours and theirs both changed the same base region
/// differently.
///
/// Line ranges are `(start, count)` with a 1-based `start`; a range with count 0
/// is the empty point just before line `start` (`start` = number of lines + 1
/// at the end of a file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConflictRegion {
    /// 1-based line of the `<<<<<<<` marker in the merged output.
    pub merged_start: usize,
    /// Lines the whole marked region spans in the merged output, markers
    /// included (`ours_lines + theirs_lines + 3` in the merge style,
    /// `ours_lines + base_lines + theirs_lines + 4` in the diff3 style, with
    /// single-line labels).
    pub merged_lines: usize,
    /// 1-based first base line of the region both sides changed.
    ///
    /// When git's refinement splits one overlapping change into several
    /// conflicts, each of them reports the base range of the whole change.
    pub base_start: usize,
    /// Number of base lines in the region (0 = both sides inserted at that point).
    pub base_lines: usize,
    /// 1-based first line of ours' conflicting lines (in ours).
    pub ours_start: usize,
    /// Number of ours' conflicting lines (may be 0).
    pub ours_lines: usize,
    /// 1-based first line of theirs' conflicting lines (in theirs).
    pub theirs_start: usize,
    /// Number of theirs' conflicting lines (may be 0).
    pub theirs_lines: usize,
    /// Ours' conflicting lines (lossy UTF-8, for display).
    pub ours: String,
    /// Theirs' conflicting lines (lossy UTF-8, for display).
    pub theirs: String,
    /// The base lines of the region (lossy UTF-8, for display).
    pub base: String,
}

/// How conflicts are written, as git's `merge.conflictStyle` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConflictStyle {
    /// `<<<<<<< ours`, ours' lines, `=======`, theirs' lines, `>>>>>>> theirs`;
    /// conflicts refined and joined as git's default level does.
    #[default]
    Merge,
    /// As `Merge`, with `||||||| base` and the base lines before `=======`
    /// (`git merge-file --diff3`); conflicts are not refined.
    Diff3,
}

/// The labels written after the conflict markers, as `git merge-file -L ours
/// -L base -L theirs` takes them (the base label appears only in the diff3
/// style; `=======` carries none). Each should be a single line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Labels<'a> {
    /// After `<<<<<<<`.
    pub ours: &'a str,
    /// After `|||||||`.
    pub base: &'a str,
    /// After `>>>>>>>`.
    pub theirs: &'a str,
}

/// The result of [`merge3`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeResult {
    /// Merged bytes. Each conflict is written as `git merge-file -p` does:
    /// `<<<<<<< {ours_label}\n`, ours' lines, (diff3 style: `||||||| {base_label}\n`,
    /// the base lines,) `=======\n`, theirs' lines, `>>>>>>> {theirs_label}\n`. A side whose last conflicting line lacks a
    /// newline gets one added before the next marker. Markers end in `\r\n`
    /// instead when git would use CRLF (the lines before the conflict in ours
    /// and theirs, and the first base line, all end in CRLF).
    pub merged: Vec<u8>,
    /// The conflicts, in output order; empty for a clean merge.
    pub conflicts: Vec<ConflictRegion>,
}

impl MergeResult {
    /// True if the merge has no conflict.
    pub fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }
}

/// Three-way merge of `ours` and `theirs`, both derived from `base`, line by
/// line on the raw bytes; output byte-identical to
/// `git merge-file -p -L {ours_label} -L base -L {theirs_label} ours base theirs`
/// (see the module docs for the differences). Labels should be single lines.
///
/// Changes made by one side only are taken; identical changes are taken once;
/// overlapping (or touching) different changes become conflicts, marked with
/// the labels, e.g. `("candidate", "disk")`.
pub fn merge3(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    ours_label: &str,
    theirs_label: &str,
) -> MergeResult {
    let labels = Labels {
        ours: ours_label,
        base: "base",
        theirs: theirs_label,
    };
    xdl::merge(base, ours, theirs, &labels, ConflictStyle::Merge)
}

/// [`merge3`] in a chosen conflict style: output byte-identical to
/// `git merge-file -p [--diff3] -L {ours} -L {base} -L {theirs} ours base theirs`
/// (see the module docs for the differences).
pub fn merge3_styled(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    labels: &Labels,
    style: ConflictStyle,
) -> MergeResult {
    xdl::merge(base, ours, theirs, labels, style)
}
