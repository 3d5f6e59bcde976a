//! Explicit three-way rebase (docs/design.md, "Invariants": rebase is explicit, never
//! implicit).
//!
//! - [`Journal::rebase`]: the disk moved since the snapshot. Per changed file: base =
//!   old snapshot, ours = candidate, theirs = disk; the new revision's snapshot is the
//!   disk and its candidate the merge.
//! - `revise --base N --rebase` ([`merge_onto`]): a plan written against an older
//!   revision. Per file: base = revision N's candidate, ours = the plan applied to it,
//!   theirs = the latest candidate.
//!
//! The line merge is [`crate::edit::merge3_styled`] in the diff3 style (git
//! `merge-file --diff3` semantics). A conflict does not fail the verb: it makes a
//! revision marked conflicted (its `conflicts` list and `merge_conflict` validation
//! errors), whose candidate holds both sides and their base between conflict markers
//! labelled [`DISK_LABELS`] or [`PLAN_LABELS`]; `commit` refuses it until a later
//! revision resolves it (`resolve` in an editor, or `revise` with a plan).

use std::collections::{BTreeMap, BTreeSet};

use crate::edit::{self, is_binary, ConflictStyle, Labels};
use crate::error::Verb;
use crate::error::{Error, Result};
use crate::fs::snapshot;
use crate::fs::RelPath;
use crate::journal::records::{
    FileConflict, FileMeta, FileState, RevisionOrigin, DEFAULT_NEW_FILE_MODE,
};
use crate::revision::Preview;
use crate::revision::{self, Working};
use crate::workspace::Journal;

use crate::conflicts::{DISK_LABELS, LOSSY_NOTE, PLAN_LABELS};

impl Journal {
    /// Rebase the latest revision of an open tx onto the disk: a new revision whose
    /// snapshot is the current disk and whose candidate is the three-way merge of
    /// each file that moved. Files that did not move are carried over.
    ///
    /// Errors: [`Error::WrongState`] (tx not open), [`Error::NothingToRebase`] (no file
    /// moved; it says whether the latest revision can be committed, and its next step
    /// is `commit` only then: after a rebase that left nothing to change, `abort`), path and I/O errors reading the disk. Conflicts are not errors: see the
    /// module docs.
    pub fn rebase(&self, tx: impl Into<crate::TxRef>) -> Result<Preview> {
        self.rebase_with(tx, None)
    }

    /// [`Journal::rebase`] with the issues `extra` finds in the merged files added to
    /// the validation (a check command run again on the rebased candidate).
    pub(crate) fn rebase_with(
        &self,
        tx: impl Into<crate::TxRef>,
        extra: revision::Extra<'_>,
    ) -> Result<Preview> {
        let tx = tx.into();
        crate::workspace::guarded(|| {
            let tx = self.tx_number(tx)?;
            self.ws.writable()?;
            let (txrec, latest) = self.latest_open(tx, Verb::Rebase)?;
            if !latest.conflicts.is_empty() {
                return Err(Error::UnresolvedConflicts {
                    tx,
                    revision: latest.revision,
                    paths: latest
                        .conflicts
                        .iter()
                        .map(|c| c.path.to_string())
                        .collect(),
                });
            }
            let working = revision::load_working(&self.ws, &latest)?;
            let mut out = BTreeMap::new();
            let mut conflicts = Vec::new();
            let mut moved = false;
            for (path, w) in working {
                let (disk, disk_bytes, disk_xattrs) =
                    snapshot::read_state(self.ws.fs.as_ref(), &self.ws.root, &path)?;
                if w.snapshot.matches(&disk) {
                    out.insert(path, w);
                    continue;
                }
                moved = true;
                let sides = Sides {
                    base: (&w.snapshot, w.snapshot_bytes.as_deref()),
                    ours: (&w.candidate, w.candidate_slice()),
                    theirs: (&disk, disk_bytes.as_deref()),
                };
                let (merged, conflict) = sides.merge(&path, &DISK_LABELS);
                conflicts.extend(conflict);
                let mut w = merged.with_snapshot(disk, disk_bytes, disk_xattrs);
                // Recorded even when the merge equals the disk (someone made the same
                // change): the gate checks it against this new snapshot, not the one
                // an older revision recorded (`revision::gated_files`).
                w.keep = true;
                out.insert(path, w);
            }
            // The files an earlier revision named that the latest leaves equal to their
            // snapshot: the gate checks them too (`revision::gated_files`), so one
            // that moved is recorded with the disk as its snapshot and candidate, or
            // the commit would stay refused however often it was rebased.
            let gated = {
                let r = self.ws.store.read()?;
                revision::gated_files(&r, &txrec, &latest)?
            };
            for (path, snap) in gated {
                if out.contains_key(&path) {
                    continue;
                }
                let (disk, disk_bytes, disk_xattrs) =
                    snapshot::read_state(self.ws.fs.as_ref(), &self.ws.root, &path)?;
                if snap.matches(&disk) {
                    continue;
                }
                moved = true;
                out.insert(
                    path,
                    Working {
                        snapshot: disk,
                        snapshot_bytes: disk_bytes.clone(),
                        snapshot_xattrs: disk_xattrs,
                        candidate: disk,
                        candidate_bytes: disk_bytes.map(crate::revision::Content::Whole),
                        text_op_on_binary: false,
                        notes: Vec::new(),
                        keep: true,
                    },
                );
            }
            if !moved {
                return Err(Error::NothingToRebase {
                    tx,
                    revision: latest.revision,
                    blocked: revision::error_summary(&latest.validation),
                });
            }
            let plan = RevisionOrigin::RebaseOntoDisk {
                from_revision: latest.revision,
            }
            .to_recorded_json();
            let mut issues = match extra {
                Some(f) => f(&out)?,
                None => Vec::new(),
            };
            // Used only when the merge leaves every file as the disk holds it.
            issues.push(disk_holds_the_change(tx));
            let (txrec, rev, summary) = revision::append(
                &self.ws,
                &txrec,
                latest.revision,
                plan,
                out,
                conflicts,
                &self.policy,
                issues,
            )?;
            Ok(Preview::new(self.id(), &txrec, rev).with_summary(summary))
        })
    }
}

/// Merge a plan's result (`ours`, built on revision N whose files are `prior`) onto the
/// latest revision's files (`theirs`).
pub(crate) fn merge_onto(
    prior: &BTreeMap<RelPath, Working>,
    mut ours: BTreeMap<RelPath, Working>,
    mut theirs: BTreeMap<RelPath, Working>,
) -> (BTreeMap<RelPath, Working>, Vec<FileConflict>) {
    let paths: BTreeSet<RelPath> = ours.keys().chain(theirs.keys()).cloned().collect();
    let mut out = BTreeMap::new();
    let mut conflicts = Vec::new();
    for path in paths {
        let mut o = ours.remove(&path);
        let mut t = theirs.remove(&path);
        // The sides are borrowed, not copied: a rebase of a large file holds each
        // version once.
        let (merged, conflict, snapshot) = {
            // The common ancestor: revision N's candidate, or for a file revision N did
            // not have, the snapshot taken when the file joined.
            let Some(any) = prior.get(&path).or(o.as_ref()).or(t.as_ref()) else {
                continue;
            };
            let base = match prior.get(&path) {
                Some(b) => (&b.candidate, b.candidate_slice()),
                None => (&any.snapshot, any.snapshot_bytes.as_deref()),
            };
            let sides = Sides {
                base,
                ours: side(&o, base),
                theirs: side(&t, base),
            };
            let snapshot = t.as_ref().or(o.as_ref()).unwrap_or(any).snapshot;
            let (merged, conflict) = sides.merge(&path, &PLAN_LABELS);
            (merged, conflict, snapshot)
        };
        // The snapshot's bytes, moved from the side that carried them (every path
        // comes from ours or theirs, so one of them has it; `prior`'s snapshot bytes
        // are never used).
        let (snapshot_bytes, snapshot_xattrs) = match (t.as_mut(), o.as_mut()) {
            (Some(w), _) | (None, Some(w)) => (w.snapshot_bytes.take(), w.snapshot_xattrs.take()),
            (None, None) => (None, None),
        };
        conflicts.extend(conflict);
        out.insert(
            path,
            merged.with_snapshot(snapshot, snapshot_bytes, snapshot_xattrs),
        );
    }
    (out, conflicts)
}

/// One file's three-way merge, as `rebase` merges it (the one merge every verb that
/// merges calls): `base`, `ours` and `theirs` are each a file state with its bytes
/// (`None` when absent). Returns the merged state, its bytes (`None`: the merge
/// deletes the file) and the conflict, if any, with markers labelled `labels`. The
/// rules are those of [`Sides::merge`]: bytes and existence per git's rules, the mode
/// three ways, a binary or existence clash a whole-file conflict whose candidate keeps
/// `ours`.
pub(crate) fn merge_file(
    path: &RelPath,
    base: (&FileState, Option<&[u8]>),
    ours: (&FileState, Option<&[u8]>),
    theirs: (&FileState, Option<&[u8]>),
    labels: &Labels,
) -> (FileState, Option<Vec<u8>>, Option<FileConflict>) {
    let (merged, conflict) = Sides { base, ours, theirs }.merge(path, labels);
    (merged.state, merged.bytes, conflict)
}

/// A side's candidate, or `base` when the side does not have the file.
fn side<'a>(
    w: &'a Option<Working>,
    base: (&'a FileState, Option<&'a [u8]>),
) -> (&'a FileState, Option<&'a [u8]>) {
    match w {
        Some(w) => (&w.candidate, w.candidate_slice()),
        None => base,
    }
}

/// The three versions of one file.
struct Sides<'a> {
    base: (&'a FileState, Option<&'a [u8]>),
    ours: (&'a FileState, Option<&'a [u8]>),
    theirs: (&'a FileState, Option<&'a [u8]>),
}

/// A merged candidate, before its snapshot is set.
struct Merged {
    state: FileState,
    bytes: Option<Vec<u8>>,
}

impl Merged {
    fn with_snapshot(
        self,
        snapshot: FileState,
        snapshot_bytes: Option<Vec<u8>>,
        snapshot_xattrs: Option<Vec<u8>>,
    ) -> Working {
        Working {
            snapshot,
            snapshot_bytes,
            snapshot_xattrs,
            candidate: self.state,
            candidate_bytes: self.bytes.map(crate::revision::Content::Whole),
            text_op_on_binary: false,
            notes: Vec::new(),
            keep: false,
        }
    }
}

impl Sides<'_> {
    /// Merge bytes and existence per git's rules; the mode is ours if ours changed it,
    /// else theirs. Both sides changing the mode to different modes is a conflict, as in
    /// git (merge-ort: a merge is clean only where `b->mode == o->mode` or one side kept
    /// the base's): the candidate keeps ours, and the conflict says so.
    fn merge(&self, path: &RelPath, labels: &Labels) -> (Merged, Option<FileConflict>) {
        let (base, ours, theirs) = (self.base.1, self.ours.1, self.theirs.1);
        let (base_mode, our_mode, their_mode) =
            (self.base.0.mode(), self.ours.0.mode(), self.theirs.0.mode());
        // Ours wins where it changed the mode (three-way, as git merges modes).
        let mode = if our_mode != base_mode {
            our_mode
        } else {
            their_mode
        };
        let both_modes = match (our_mode, their_mode) {
            (Some(o), Some(t)) if o != t && our_mode != base_mode && their_mode != base_mode => {
                Some((o, t))
            }
            _ => None,
        };
        let new_conflict = |reason: &str, regions| FileConflict {
            path: path.clone(),
            reason: reason.to_string(),
            regions,
        };
        // One side deleted the file while the other changed only its mode (`mode_only`:
        // the side's bytes are the base's, so the base has the file): the bytes
        // alone would merge to the deletion, losing the mode change without a word;
        // git calls it a modify/delete conflict. The candidate keeps the plan's side.
        let mode_only = |side: Option<&[u8]>, mode: Option<u32>| {
            side.is_some() && side == base && mode != base_mode
        };
        let (bytes, conflict) = if ours.is_none() && mode_only(theirs, their_mode) {
            (
                None,
                Some(new_conflict(
                    &format!(
                        "the mode changed on the {} side, deleted on the {} side",
                        labels.theirs, labels.ours
                    ),
                    vec![],
                )),
            )
        } else if theirs.is_none() && mode_only(ours, our_mode) {
            (
                ours.map(<[u8]>::to_vec),
                Some(new_conflict(
                    &format!(
                        "deleted on the {} side, the mode changed on the {} side",
                        labels.theirs, labels.ours
                    ),
                    vec![],
                )),
            )
        } else if ours == base || ours == theirs {
            (theirs.map(<[u8]>::to_vec), None)
        } else if theirs == base {
            (ours.map(<[u8]>::to_vec), None)
        } else {
            match (ours, theirs) {
                (Some(o), Some(t))
                    if is_binary(o) || is_binary(t) || base.is_some_and(is_binary) =>
                {
                    (
                        Some(o.to_vec()),
                        Some(new_conflict(&binary_reason(base, o, t, labels), vec![])),
                    )
                }
                (Some(o), Some(t)) => {
                    let m = edit::merge3_styled(
                        base.unwrap_or_default(),
                        o,
                        t,
                        labels,
                        ConflictStyle::Diff3,
                    );
                    let c = (!m.conflicts.is_empty())
                        .then(|| new_conflict(&lines_reason(base, o, t, labels), m.conflicts));
                    (Some(m.merged), c)
                }
                (Some(o), None) => (
                    Some(o.to_vec()),
                    Some(new_conflict(
                        &format!(
                            "deleted on the {} side, changed on the {} side",
                            labels.theirs, labels.ours
                        ),
                        vec![],
                    )),
                ),
                (None, Some(_)) => (
                    None,
                    Some(new_conflict(
                        &format!(
                            "changed on the {} side, deleted on the {} side",
                            labels.theirs, labels.ours
                        ),
                        vec![],
                    )),
                ),
                (None, None) => (None, None),
            }
        };
        let conflict = match (conflict, both_modes) {
            (c, None) => c,
            // The merge deleted the file: no mode to keep.
            (c, Some(_)) if bytes.is_none() => c,
            (None, Some((o, t))) => Some(new_conflict(
                &format!(
                    "the mode changed on both sides ({} {o:o}, {} {t:o}); the candidate keeps {o:o}",
                    labels.ours, labels.theirs
                ),
                vec![],
            )),
            (Some(mut c), Some((o, t))) => {
                c.reason.push_str(&format!(
                    "; the mode changed on both sides too ({} {o:o}, {} {t:o}): the candidate keeps {o:o}",
                    labels.ours, labels.theirs
                ));
                Some(c)
            }
        };
        // A side that deleted the file has no mode: where the candidate keeps the other
        // side's bytes (a modify/delete conflict), it keeps that side's mode too, not
        // the mode of a new file (found by the breaker: an edited 0755 script deleted on
        // disk came out of `rebase` as 0644, and so did a file a reverted tx created and
        // someone changed since; saving the conflict unchanged dropped the exec bit).
        let mode = match (mode, theirs, ours) {
            (None, None, Some(_)) => our_mode,
            (None, Some(_), None) => their_mode,
            (m, _, _) => m,
        };
        let state = match &bytes {
            Some(b) => FileState::with_meta(
                b,
                FileMeta {
                    mode: mode.unwrap_or(DEFAULT_NEW_FILE_MODE),
                    // The disk's owner (theirs, on rebase), else the one the file had.
                    owner: (self.theirs.0.owner())
                        .or(self.ours.0.owner())
                        .or(self.base.0.owner()),
                    xattrs: (self.theirs.0.xattrs())
                        .or(self.ours.0.xattrs())
                        .or(self.base.0.xattrs()),
                },
            ),
            None => FileState::ABSENT,
        };
        (Merged { state, bytes }, conflict)
    }
}

/// The `no_changes` error of a rebase whose clean merge equals the disk: the disk
/// already holds the transaction's change, so the tx has nothing left to commit.
fn disk_holds_the_change(tx: u64) -> edit::Issue {
    edit::Issue {
        code: "no_changes".into(),
        severity: edit::Severity::Error,
        path: String::new(),
        message: format!(
            "the disk already holds this transaction's change: merged onto the disk, the \
             candidate equals what the files hold now (someone made the same change), so \
             there is nothing to commit; abort tx {tx} (`ultra-edit abort {tx}`, MCP \
             edit_abort) to close it, or leave it: an open tx writes nothing to the \
             files"
        ),
    }
}

/// What each side of a whole-file conflict holds: `binary`, `text` or `absent`.
fn kind(bytes: Option<&[u8]>) -> &'static str {
    match bytes {
        Some(b) if is_binary(b) => "binary",
        Some(_) => "text",
        None => "absent",
    }
}

/// The reason of a conflict where both sides changed a file that is binary on at
/// least one side (ours, the base or theirs): names the sides that are binary and
/// what each holds, in `labels`' words.
fn binary_reason(base: Option<&[u8]>, ours: &[u8], theirs: &[u8], labels: &Labels) -> String {
    let sides = [
        (labels.ours, kind(Some(ours))),
        (labels.base, kind(base)),
        (labels.theirs, kind(Some(theirs))),
    ];
    let held = sides
        .iter()
        .map(|(label, kind)| format!("{label}: {kind}"))
        .collect::<Vec<_>>()
        .join(", ");
    let binary: Vec<&str> = sides
        .iter()
        .filter(|(_, k)| *k == "binary")
        .map(|(label, _)| *label)
        .collect();
    let present = sides.iter().filter(|(_, k)| *k != "absent").count();
    if binary.len() == present {
        format!(
            "binary content changed on both sides ({held}); the candidate keeps its bytes \
             (the {} side's)",
            labels.ours
        )
    } else {
        let which = match binary.as_slice() {
            [one] => format!("only the {one} side is binary"),
            many => format!("the {} sides are binary", many.join(" and ")),
        };
        format!(
            "both sides changed the file and {which} ({held}), so it is not merged line \
             by line; the candidate keeps its bytes (the {} side's)",
            labels.ours
        )
    }
}

/// The reason of a conflict of changed lines: says so, and when a side's bytes are not
/// valid UTF-8, that the regions' text is lossy ([`LOSSY_NOTE`]).
fn lines_reason(base: Option<&[u8]>, ours: &[u8], theirs: &[u8], labels: &Labels) -> String {
    let not_utf8: Vec<&str> = [
        (labels.ours, Some(ours)),
        (labels.base, base),
        (labels.theirs, Some(theirs)),
    ]
    .into_iter()
    .filter(|(_, b)| b.is_some_and(|b| std::str::from_utf8(b).is_err()))
    .map(|(label, _)| label)
    .collect();
    if not_utf8.is_empty() {
        return "both sides changed the same lines".into();
    }
    format!(
        "both sides changed the same lines; {LOSSY_NOTE} ({} not valid UTF-8)",
        not_utf8.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conflicts::conflict_labels;

    #[test]
    fn labels_follow_the_recorded_origin() {
        let rebase = RevisionOrigin::RebaseOntoDisk { from_revision: 2 }.to_recorded_json();
        assert_eq!(rebase, r#"{"rebase_onto_disk":{"from_revision":2}}"#);
        assert_eq!(conflict_labels(&rebase), DISK_LABELS);
        let plan = r#"{"edits":[{"op":"append","path":"a","text":"x"}]}"#;
        assert_eq!(conflict_labels(plan), PLAN_LABELS);
        assert_eq!(
            (PLAN_LABELS.ours, PLAN_LABELS.base, PLAN_LABELS.theirs),
            ("plan", "base", "latest")
        );
    }
}
