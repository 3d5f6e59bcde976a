//! The soak's `revert` step: a new open tx whose candidate undoes a committed tx's
//! change on the disk as it is now. The model predicts the candidate of each file
//! when the history does not overlap: a file nobody touched since the tx (its
//! pre-image comes back), a file already back to its pre-image (left out), and a text
//! file whose later change and the tx's change are single runs of lines at least one
//! line apart (both kept, as git's merge keeps them). Anything else (overlaps,
//! deletions against edits, mode clashes) is taken from the output and checked
//! against the invariants only.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::model::*;
use super::{Soak, R};

/// The lines of `b`, each with its `\n`.
fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|c| *c == b'\n').collect()
}

/// Common prefix and suffix lengths (in lines) of `a` and `b`, not overlapping.
fn trim(a: &[&[u8]], b: &[&[u8]]) -> (usize, usize) {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max = a.len().min(b.len()) - pre;
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max)
        .take_while(|(x, y)| x == y)
        .count();
    (pre, suf)
}

/// Every line once, and a final newline (where git's rules are plain).
fn plain(ls: &[&[u8]], bytes: &[u8]) -> bool {
    let mut seen = std::collections::HashSet::new();
    (bytes.is_empty() || bytes.ends_with(b"\n")) && ls.iter().all(|l| seen.insert(*l))
}

/// The bytes of reverting `post → pre` on `disk` (all text, all present) when the two
/// changes are each one run of lines, at least one line apart; `None` otherwise.
pub fn merged(pre: &[u8], post: &[u8], disk: &[u8]) -> Option<Vec<u8>> {
    let (a, p, d) = (lines(pre), lines(post), lines(disk));
    if !(plain(&a, pre) && plain(&p, post) && plain(&d, disk)) {
        return None;
    }
    let (t0, t1) = trim(&p, &a);
    let (d0, d1) = trim(&p, &d);
    let (te, de) = (p.len() - t1, p.len() - d1);
    let out: Vec<&[u8]> = if te < d0 {
        // The tx's change comes first: its old lines, then the disk from the gap on.
        a[..a.len() - t1].iter().chain(&d[te..]).copied().collect()
    } else if de < t0 {
        // The later change comes first: the disk up to the gap, the tx's old lines, the rest.
        d[..d.len() - (p.len() - t0)]
            .iter()
            .chain(&a[t0..a.len() - t1])
            .chain(&p[te..])
            .copied()
            .collect()
    } else {
        return None;
    };
    Some(out.concat())
}

/// Reverts run, and those whose every candidate the model predicted (printed at the
/// end of the soak).
pub static REVERTS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

impl Soak {
    pub(super) fn revert(&mut self) -> R {
        REVERTS[0].fetch_add(1, Ordering::Relaxed);
        let pool: Vec<u64> = self
            .m
            .txs
            .iter()
            .filter(|(_, t)| t.state == "committed" && !t.free && t.batch.is_some())
            .map(|(id, _)| *id)
            .collect();
        let x = self.pick_tx(pool);
        self.note(format!("revert {x}"));
        let r = self.run(&["--json", "revert", &x.to_string()], None);
        self.check_disk("after revert")?;
        let Some(t) = self.m.txs.get(&x).cloned() else {
            return r.expect(1, &["unknown_tx"]);
        };
        let id = self.m.next_id;
        let take = |s: &mut Soak, r: &super::Run, exp: &Expect, exact: bool| -> R {
            let rev = s.revision(r, id, None, exp, &BTreeMap::new(), exact)?;
            s.m.new_tx(id, rev, None);
            Ok(())
        };
        if t.free {
            return match r.code {
                Some(1) => r.expect(1, &["wrong_state", "nothing_to_revert"]),
                _ => take(
                    self,
                    &r,
                    &Expect {
                        bad: false,
                        ready_known: false,
                        cands: BTreeMap::new(),
                    },
                    false,
                ),
            };
        }
        let Some(batch) = t.batch.clone().filter(|_| t.state == "committed") else {
            return r.expect(1, &["wrong_state"]);
        };
        // Per file: the predicted candidate, `None` where the model does not know.
        let mut cands = BTreeMap::new();
        let mut known = true;
        for f in &batch {
            let disk = self.m.disk(&f.path);
            if disk == f.pre {
                continue;
            }
            if disk == f.post {
                cands.insert(f.path.clone(), f.pre.clone());
                continue;
            }
            let both = (
                self.m.bytes(&f.pre),
                self.m.bytes(&f.post),
                self.m.bytes(&disk),
            );
            let (Some(pre), Some(post), Some(now)) = both else {
                known = false;
                continue;
            };
            // Modes: the disk's where only it changed the mode, the old one where only
            // the tx did, else unknown here.
            let mode = if disk.mode == f.post.mode {
                f.pre.mode
            } else if f.pre.mode == f.post.mode {
                disk.mode
            } else {
                known = false;
                continue;
            };
            match merged(&pre, &post, &now) {
                Some(bytes) => {
                    let c = self.m.remember(&bytes, mode);
                    cands.insert(f.path.clone(), c);
                }
                None => known = false,
            }
        }
        if !known {
            return match r.code {
                Some(1) => r.expect(1, &["nothing_to_revert"]),
                _ => take(
                    self,
                    &r,
                    &Expect {
                        bad: false,
                        ready_known: false,
                        cands,
                    },
                    false,
                ),
            };
        }
        // Every candidate predicted: exact, and no conflict.
        if cands.iter().all(|(p, c)| *c == self.m.disk(p)) {
            REVERTS[1].fetch_add(1, Ordering::Relaxed);
            return r.expect(1, &["nothing_to_revert"]);
        }
        r.expect(0, &[])?;
        REVERTS[1].fetch_add(1, Ordering::Relaxed);
        ensure!(
            r.json["description"] == format!("revert of tx {x}"),
            "revert's description: {}",
            r.json
        );
        let cands = cands
            .into_iter()
            .filter(|(p, c)| *c != self.m.disk(p))
            .collect();
        take(
            self,
            &r,
            &Expect {
                bad: false,
                ready_known: true,
                cands,
            },
            true,
        )
    }
}

#[test]
fn the_models_merge_keeps_both_separated_changes() {
    let pre = b"1\n2\n3\n4\n5\n";
    let post = b"1\nTWO\n3\n4\n5\n";
    assert_eq!(
        merged(pre, post, b"1\nTWO\n3\n4\nFIVE\n").unwrap(),
        b"1\n2\n3\n4\nFIVE\n"
    );
    assert_eq!(merged(pre, post, b"ONE\n1.5\nTWO\n3\n4\n5\n"), None);
    assert_eq!(
        merged(
            b"1\n2\n3\n4\n5\n",
            b"1\n2\n3\n4\nFIVE\n",
            b"ONE\n2\n3\n4\nFIVE\n"
        )
        .unwrap(),
        b"ONE\n2\n3\n4\n5\n"
    );
    assert_eq!(
        merged(
            b"1\n2\n3\n4\n5\n",
            b"1\n2\n3\n4\n5\nsix\n",
            b"zero\n1\n2\n3\n4\n5\nsix\n"
        )
        .unwrap(),
        b"zero\n1\n2\n3\n4\n5\n"
    );
}
