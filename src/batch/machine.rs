//! [`Batch`]: a batch record that changes state only through its named steps
//! (docs/commit-protocol.md, "State machines"). Each step is one durable journal write;
//! it is refused before it is attempted when [`BatchState::can_become`] does not allow
//! it, and the journal refuses it again when the record as stored has moved on (another
//! process settled the batch meanwhile: [`crate::journal::Writer::put_batch`]).
//!
//! | step | from | to | what else the same write records |
//! |---|---|---|---|
//! | [`Batch::intent`] | — | `Committing` (the commit point) | the tx (a rollback's is created here), every blob checked present |
//! | [`Batch::begin_revert`] | `Prepared`, `Committing` | `Reverting` | — |
//! | [`Batch::hold`] | any non-terminal | `NeedsAttention` | the foreign bytes as blobs, the tx's attention mark |
//! | [`Batch::abort`] | `Prepared`, `Reverting`, `NeedsAttention` | `Aborted` | attention cleared; a rollback tx is aborted |
//! | [`Batch::complete`] | `Committing`, `NeedsAttention` | `Committed` | the receipt and the tx states it implies |
//!
//! [`Batch::settle`] picks `hold`, `abort` or `complete` from what a drive found.

use super::drive::{DriveOutcome, Side};
use crate::error::{Error, JournalError, Result, Transition};
use std::collections::{BTreeMap, BTreeSet};

use crate::fs::{snapshot, EntryKind, RelPath};
use crate::journal::records::*;
use crate::journal::{ChainLink, Writer};
use crate::lock::Locked;

/// A batch in the journal, owned by the code driving it.
#[must_use = "a batch left in flight is settled by the next recovery"]
#[derive(Debug)]
pub(crate) struct Batch {
    rec: BatchRecord,
}

/// What a new batch applies (everything of its record but the ids and the history).
pub(crate) struct NewBatch {
    pub kind: BatchKind,
    /// Files that change, sorted by path. Their pre and post blobs must be in the
    /// journal when the intent is written (the `tx_of` closure of [`Batch::intent`]
    /// may store them in the same write).
    pub files: Vec<BatchFile>,
    /// Directories to create, parents first.
    pub create_dirs: Vec<RelPath>,
    /// Directories to remove when empty after installing, deepest first.
    pub remove_dirs: Vec<RelPath>,
}

impl Batch {
    /// A batch read from the journal (recovery).
    pub fn resume(rec: BatchRecord) -> Batch {
        Batch { rec }
    }

    /// The record as last written.
    pub fn record(&self) -> &BatchRecord {
        &self.rec
    }

    /// The intent, which is also the commit point (protocol step 3): one durable write
    /// holding the batch, `Committing`, with every pre- and post-image. From the moment
    /// it is durable, recovery rolls the batch forward from the journal's blobs alone,
    /// whatever the staging reached. `tx_of` runs first in the same write and returns
    /// the tx the batch applies: it checks that a commit's tx is still open, or creates
    /// a rollback's tx, so a rollback tx never exists without its batch.
    ///
    /// `id` receives the tx and batch ids as soon as they are allocated, so a caller whose write
    /// failed can ask the journal whether the batch is there after all
    /// ([`Batch::find`]).
    pub fn intent(
        l: &Locked<'_>,
        new: NewBatch,
        id: &mut Option<(u64, u64)>,
        tx_of: impl FnOnce(&mut Writer) -> Result<u64>,
    ) -> Result<Batch> {
        let rec = l.store.write(|w| {
            let tx = tx_of(w)?;
            let rec = BatchRecord {
                batch: w.next_batch_id()?,
                tx,
                kind: new.kind,
                state: BatchState::Committing,
                nonce: super::new_nonce(),
                files: new.files,
                create_dirs: new.create_dirs,
                remove_dirs: new.remove_dirs,
                history: vec![StateChange {
                    state: BatchState::Committing,
                    at_ms: w.now(),
                    note: None,
                }],
                foreign: Vec::new(),
            };
            *id = Some((rec.tx, rec.batch));
            // Every image the batch may need to write, bytes and attributes, is in the
            // journal before anything is done (the rollback material, and what recovery
            // rolls forward from).
            let refs = rec.blob_refs();
            if let Some(r) = w
                .first_missing_blob(refs.iter().map(|r| &r.hash))?
                .and_then(|i| refs.get(i))
            {
                return Err(JournalError::Missing {
                    what: format!("blob {} ({}) of {}", r.hash, r.role, r.path),
                }
                .into());
            }
            w.put_batch(&rec)?;
            Ok(rec)
        })?;
        Ok(Batch { rec })
    }

    /// The batch `id` as the journal holds it now, if it is there.
    pub fn find(l: &Locked<'_>, id: u64) -> Result<Option<Batch>> {
        Ok(l.store.read()?.batch(id)?.map(|rec| Batch { rec }))
    }

    /// `→ Reverting`: files are about to be driven back to their pre-images.
    pub fn begin_revert(&mut self, l: &Locked<'_>, note: Option<String>) -> Result<()> {
        self.step(l, BatchState::Reverting, note, |_, _| Ok(()))
    }

    /// `→ NeedsAttention`: files hold foreign bytes, which were left untouched. The
    /// bytes found (`blobs`) are stored, and the tx is marked. A batch already held
    /// with the same foreign files is left as it is (no progress, nothing new: the
    /// journal does not grow).
    pub fn hold(
        &mut self,
        l: &Locked<'_>,
        foreign: Vec<ForeignWrite>,
        blobs: Vec<Vec<u8>>,
    ) -> Result<()> {
        if self.rec.state == BatchState::NeedsAttention && self.rec.foreign == foreign {
            return Ok(());
        }
        let summary = foreign
            .iter()
            .map(|f| f.path.clone())
            .collect::<Vec<_>>()
            .join(", ");
        let note = Some(format!(
            "foreign bytes in {summary}; kept in the journal, files left untouched"
        ));
        self.rec.foreign = foreign;
        self.step(l, BatchState::NeedsAttention, note, |w, rec| {
            w.event(EventKind::Recovery {
                batch: rec.batch,
                action: format!("needs attention: {summary}"),
            })?;
            for bytes in &blobs {
                w.put_blob(bytes)?;
            }
            w.set_attention(rec.tx, rec.batch, true)
        })
    }

    /// `→ Aborted`: every file is at its pre-image and no temp is left. The tx's
    /// attention mark for this batch is cleared; a rollback tx, which exists only for
    /// this batch, is aborted with it (a commit's tx stays open and can be committed
    /// again).
    pub fn abort(&mut self, l: &Locked<'_>, note: Option<String>, by_recovery: bool) -> Result<()> {
        self.step(l, BatchState::Aborted, note, |w, rec| {
            if by_recovery {
                w.event(EventKind::Recovery {
                    batch: rec.batch,
                    action: format!("reverted batch of tx {}", rec.tx),
                })?;
            }
            w.set_attention(rec.tx, rec.batch, false)?;
            if matches!(rec.kind, BatchKind::Rollback { .. }) {
                w.abort_tx(rec.tx)?;
            }
            Ok(())
        })
    }

    /// The completion (protocol step 7): `→ Committed`, the receipt and the tx states
    /// it implies ([`Writer::issue_receipt`]), in one durable write. The receipt is
    /// [`Batch::receipt`].
    pub fn complete(
        &mut self,
        l: &Locked<'_>,
        removed_dirs: Vec<RelPath>,
        by_recovery: bool,
    ) -> Result<Receipt> {
        let receipt = self.receipt(removed_dirs, by_recovery);
        self.complete_as(l, &receipt)?;
        Ok(receipt)
    }

    /// The receipt of this batch, built from its record alone: `at_ms` is the time of
    /// the commit point (the intent's `Committing` entry of the history), not of the
    /// completion. So the receipt `commit` returns before its completion is written
    /// (docs/commit-protocol.md, steps 6–7) is the one the journal ends up holding,
    /// whether the completion or a later recovery writes it — but for `by_recovery`,
    /// which says who wrote it.
    pub fn receipt(&self, removed_dirs: Vec<RelPath>, by_recovery: bool) -> Receipt {
        let rec = &self.rec;
        let committed_at = rec
            .history
            .iter()
            .find(|c| c.state == BatchState::Committing)
            .or(rec.history.first())
            .map_or(0, |c| c.at_ms);
        Receipt {
            tx: rec.tx,
            batch: rec.batch,
            kind: rec.kind,
            files: rec.files.clone(),
            created_dirs: rec.create_dirs.clone(),
            removed_dirs,
            bytes_written: rec.files.iter().map(|f| f.post.size()).sum(),
            at_ms: committed_at,
            by_recovery,
        }
    }

    /// [`Batch::complete`] with the receipt given (built by [`Batch::receipt`]).
    pub fn complete_as(&mut self, l: &Locked<'_>, receipt: &Receipt) -> Result<()> {
        let by_recovery = receipt.by_recovery;
        let note = by_recovery.then(|| "completed by recovery".to_string());
        let links = chain_links(l, &self.rec)?;
        self.step(l, BatchState::Committed, note, |w, rec| {
            if by_recovery {
                w.event(EventKind::Recovery {
                    batch: rec.batch,
                    action: format!("completed batch of tx {}", rec.tx),
                })?;
            }
            w.issue_receipt(receipt, &links)
        })
    }

    /// Record the end of a drive ([`super::drive::drive`]) to `side`: `hold` with the
    /// foreign bytes when any file was foreign (nothing is written when the same
    /// foreign bytes were already recorded), else `abort` (pre-images) or `complete`
    /// with its receipt (post-images). The end of every batch that did not finish by
    /// itself — a revert after an error, and recovery — goes through here.
    pub fn settle(
        &mut self,
        l: &Locked<'_>,
        side: Side,
        out: DriveOutcome,
        note: Option<String>,
        by_recovery: bool,
    ) -> Result<()> {
        if !out.foreign.is_empty() {
            let (foreign, blobs): (Vec<_>, Vec<_>) = out.foreign.into_iter().unzip();
            return self.hold(l, foreign, blobs.into_iter().flatten().collect());
        }
        match side {
            Side::Pre => self.abort(l, note, by_recovery),
            Side::Post => {
                // Dirs the install or this drive removed: those of the record now absent.
                let removed = self
                    .rec
                    .remove_dirs
                    .iter()
                    .filter(|d| matches!(l.fs.entry(d), Ok(EntryKind::Absent)))
                    .cloned()
                    .collect();
                self.complete(l, removed, by_recovery).map(|_| ())
            }
        }
    }

    /// One checked step: refused before any write when the state machine does not
    /// allow it; else the new state and `extra`'s records in one durable write. The
    /// in-memory record changes only once the write is durable.
    fn step(
        &mut self,
        l: &Locked<'_>,
        to: BatchState,
        note: Option<String>,
        extra: impl FnOnce(&mut Writer, &BatchRecord) -> Result<()>,
    ) -> Result<()> {
        if !self.rec.state.can_become(to) {
            return Err(Error::from(JournalError::IllegalTransition(
                Transition::Batch {
                    batch: self.rec.batch,
                    from: self.rec.state,
                    to,
                },
            )));
        }
        let mut next = self.rec.clone();
        l.store.write(|w| {
            next.state = to;
            next.history.push(StateChange {
                state: to,
                at_ms: w.now(),
                note,
            });
            w.put_batch(&next)?;
            extra(w, &next)
        })?;
        self.rec = next;
        Ok(())
    }
}

/// For a rollback, what its batch did to the txs down its chain (docs/commit-protocol.md,
/// "State machines"): the tx rolled back is undone by it; below it, changes alternate
/// (live again, undone again, …), except where the disk decides: a tx some of whose
/// committed batch's files hold their post-images now and none its pre-images is live,
/// one with pre-images and no post-images is undone (by the tx above it in the chain) —
/// files changed since by other transactions hold neither and do not count — and the
/// alternation goes on from there. The history then says what the disk says, whatever
/// forced rollbacks did to the chain.
fn chain_links(l: &Locked<'_>, rec: &BatchRecord) -> Result<Vec<ChainLink>> {
    let BatchKind::Rollback { of, .. } = rec.kind else {
        return Ok(Vec::new());
    };
    let r = l.store.read()?;
    // The files this batch wrote hold its post-images; the others are read.
    let written: BTreeMap<&RelPath, FileState> =
        rec.files.iter().map(|f| (&f.path, f.post)).collect();
    let disk = |path: &RelPath| -> Option<FileState> {
        match written.get(path) {
            Some(s) => Some(*s),
            None => snapshot::state_of(l.fs.as_ref(), &l.root, path)
                .ok()
                .map(|(s, _)| s),
        }
    };
    let mut links = vec![ChainLink {
        tx: of,
        undone_by: Some(rec.tx),
    }];
    let mut seen = BTreeSet::from([rec.tx, of]);
    let (mut above, mut next) = (of, r.tx_required(of)?.rollback_of);
    // Down the chain, changes alternate: the tx below an undone one is live again, the
    // one below that undone again. That is the answer unless the disk says otherwise.
    let mut live_by_parity = true;
    while let Some(x) = next.filter(|x| seen.insert(*x)) {
        let t = r.tx_required(x)?;
        next = t.rollback_of;
        let batch = match t.committed {
            Some(c) => r.batch(c.batch)?,
            None => None,
        };
        let by_disk = batch.filter(|b| !b.files.is_empty()).and_then(|b| {
            let states: Vec<Option<FileState>> = b.files.iter().map(|f| disk(&f.path)).collect();
            // How many of its files hold their post-images, and how many their pre-images
            // (a file changed since by another tx holds neither).
            let count = |side: fn(&BatchFile) -> FileState| {
                b.files
                    .iter()
                    .zip(&states)
                    .filter(|(f, s)| s.as_ref().is_some_and(|s| side(f).matches(s)))
                    .count()
            };
            match (count(|f| f.post), count(|f| f.pre)) {
                (post, 0) if post > 0 => Some(true),
                (0, pre) if pre > 0 => Some(false),
                _ => None,
            }
        });
        let live = by_disk.unwrap_or(live_by_parity);
        links.push(ChainLink {
            tx: x,
            undone_by: (!live).then_some(above),
        });
        live_by_parity = !live;
        above = x;
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_state_machine_allows_exactly_the_documented_transitions() {
        use BatchState::*;
        let all = [
            Prepared,
            Committing,
            Committed,
            Reverting,
            Aborted,
            NeedsAttention,
        ];
        let allowed: Vec<(BatchState, BatchState)> = all
            .iter()
            .flat_map(|a| all.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| a.can_become(*b))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Prepared, Committing),
                (Prepared, Reverting),
                (Prepared, Aborted),
                (Prepared, NeedsAttention),
                (Committing, Committed),
                (Committing, Reverting),
                (Committing, NeedsAttention),
                (Reverting, Aborted),
                (Reverting, NeedsAttention),
                (NeedsAttention, Committed),
                (NeedsAttention, Aborted),
                (NeedsAttention, NeedsAttention),
            ]
        );
    }

    #[test]
    fn the_tx_state_machine_allows_exactly_the_documented_transitions() {
        use TxState::*;
        let all = [Open, Committed, Aborted, RolledBack];
        let allowed: Vec<(TxState, TxState)> = all
            .iter()
            .flat_map(|a| all.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| a.can_become(*b))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Open, Committed),
                (Open, Aborted),
                (Committed, RolledBack),
                (RolledBack, Committed),
            ]
        );
    }
}
