//! The readable conflict list of a revision: per conflict, the file, the 1-based line
//! range of its marked region in the candidate, and the sides with their labels and
//! line counts — what `show`, `rebase`, `revise` print and what `resolve` walks.
//!
//! It is computed from the recorded [`FileConflict`]s and the revision's recorded plan
//! (which tells the marker labels, [`conflict_labels`]); nothing extra
//! is stored in the journal.

use serde::{Deserialize, Serialize};

use crate::edit::Labels;
use crate::journal::records::{FileConflict, RevisionOrigin};

/// Conflict labels of `rebase` (onto the disk): `<<<<<<< candidate` (the rebased
/// revision's candidate), `||||||| snapshot` (the old snapshot, the common base),
/// `>>>>>>> disk` (the current disk bytes).
pub const DISK_LABELS: Labels<'static> = Labels {
    ours: "candidate",
    base: "snapshot",
    theirs: "disk",
};

/// Conflict labels of `revise --base N --rebase`: `<<<<<<< plan` (the plan applied
/// to revision N), `||||||| base` (revision N's candidate), `>>>>>>> latest` (the
/// latest revision's candidate).
pub const PLAN_LABELS: Labels<'static> = Labels {
    ours: "plan",
    base: "base",
    theirs: "latest",
};

/// Conflict labels of `revert`: `<<<<<<< disk` (what the file holds now, with the
/// reverts of newer txs applied), `||||||| tx` (what the reverted tx wrote, the common
/// base), `>>>>>>> before tx` (what the file held before that tx).
pub const REVERT_LABELS: Labels<'static> = Labels {
    ours: "disk",
    base: "tx",
    theirs: "before tx",
};

/// The labels a revision's conflict markers carry, told from its recorded plan
/// ([`crate::RevisionRecord::plan`]): [`DISK_LABELS`] for a `rebase`,
/// [`REVERT_LABELS`] for a `revert`, else [`PLAN_LABELS`] (a plan merged by
/// `revise --rebase`).
pub fn conflict_labels(recorded_plan: &str) -> Labels<'static> {
    match serde_json::from_str::<RevisionOrigin>(recorded_plan) {
        Ok(RevisionOrigin::RebaseOntoDisk { .. }) => DISK_LABELS,
        Ok(RevisionOrigin::RevertOf { .. }) => REVERT_LABELS,
        _ => PLAN_LABELS,
    }
}

/// Words a conflict's reason carries when a side's bytes are not valid UTF-8: its
/// regions' `ours` / `base` / `theirs` text (lossy UTF-8, for display) then shows
/// U+FFFD for those bytes, and [`ConflictEntry::lossy`] is set for the regions that
/// show one.
pub const LOSSY_NOTE: &str = "the text is not valid UTF-8, so the conflict's ours/base/theirs \
     text is lossy (U+FFFD stands for bytes that are not UTF-8); the candidate holds the \
     exact bytes between its markers";

/// One side of a conflict as its marker names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictSide {
    /// The label after the marker (`candidate`, `snapshot`, `disk`; or `plan`, `base`,
    /// `latest` for `revise --rebase`; or `disk`, `tx`, `before tx` for `revert`).
    pub label: String,
    /// Lines this side has between its marker and the next one.
    pub lines: usize,
}

/// One entry of a revision's conflict list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictEntry {
    /// Path relative to the root.
    pub path: String,
    /// 1-based line of the `<<<<<<<` marker in the candidate; `None` when the whole
    /// file conflicts (deleted on one side, binary content).
    pub start_line: Option<usize>,
    /// 1-based line of the `>>>>>>>` marker (inclusive); `None` with `start_line`.
    pub end_line: Option<usize>,
    /// The candidate's side (`<<<<<<<`), the common base (`|||||||`) and the other
    /// side (`>>>>>>>`); `None` for a whole-file conflict.
    pub sides: Option<[ConflictSide; 3]>,
    /// What conflicted, in words.
    pub reason: String,
    /// True when the region's recorded text (ours, base, theirs) is lossy: a side's
    /// bytes are not valid UTF-8 and show as U+FFFD there ([`LOSSY_NOTE`]); read the
    /// candidate's bytes between the markers for the exact content. Like a file
    /// diff's `lossy`.
    pub lossy: bool,
}

/// The conflict list of a revision whose conflicts are `conflicts` and whose recorded
/// plan is `recorded_plan`: one entry per marked region, in file then line order, and
/// one per whole-file conflict.
pub fn conflict_list(conflicts: &[FileConflict], recorded_plan: &str) -> Vec<ConflictEntry> {
    let labels = conflict_labels(recorded_plan);
    let side = |label: &str, lines| ConflictSide {
        label: label.to_string(),
        lines,
    };
    let mut list = Vec::new();
    for c in conflicts {
        if c.regions.is_empty() {
            list.push(ConflictEntry {
                path: c.path.to_string(),
                start_line: None,
                end_line: None,
                sides: None,
                reason: c.reason.clone(),
                lossy: false,
            });
        }
        for r in &c.regions {
            list.push(ConflictEntry {
                path: c.path.to_string(),
                start_line: Some(r.merged_start),
                end_line: Some(r.merged_start + r.merged_lines.saturating_sub(1)),
                sides: Some([
                    side(labels.ours, r.ours_lines),
                    side(labels.base, r.base_lines),
                    side(labels.theirs, r.theirs_lines),
                ]),
                reason: c.reason.clone(),
                lossy: c.reason.contains(LOSSY_NOTE)
                    && [&r.ours, &r.base, &r.theirs]
                        .iter()
                        .any(|t| t.contains('\u{FFFD}')),
            });
        }
    }
    list
}
