//! The state machines of the journal's records, owned by [`Writer`]: the only code that
//! changes a [`TxRecord`] or a [`BatchRecord`]. Each change is checked where it is
//! written — against [`TxState::can_become`] and [`BatchState::can_become`], and against
//! the record as stored, so a step that another process overtook is refused instead of
//! written — and is written together with the event that records it
//! (docs/commit-protocol.md, "State machines").
//!
//! | change | method | event written with it |
//! |---|---|---|
//! | tx created (`Open`) | [`Writer::create_tx`] | `tx_created` |
//! | revision added | [`Writer::add_revision`] | `revision_recorded` |
//! | tx `Open → Aborted` | [`Writer::abort_tx`] | `tx_aborted` |
//! | batch inserted (`Committing`; `Prepared` in journals of earlier versions) or moved | [`Writer::put_batch`] | `batch_state` |
//! | tx `Open → Committed`; rollback links | [`Writer::issue_receipt`] | `receipt_issued` |
//! | tx's attention mark | [`Writer::set_attention`] | the `batch_state` of that batch |

use redb::ReadableTable;

use super::{codec, get_rec, Writer};
use super::{BATCHES, INFLIGHT, RECEIPTS};
use crate::error::{Error, JournalError, Result, Transition, Verb};
use crate::journal::records::*;

/// What a rollback's receipt does to one tx down its chain ([`Writer::issue_receipt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainLink {
    /// The tx.
    pub tx: u64,
    /// `None`: its change is live (committed); `Some(by)`: undone, by the rollback `by`
    /// (the tx above it in the chain).
    pub undone_by: Option<u64>,
}

impl Writer {
    /// Insert a new transaction, `Open` with no revision yet (the caller adds revision 0
    /// with [`Writer::add_revision`] in the same write), and its `tx_created` event.
    pub fn create_tx(
        &mut self,
        agent: Option<String>,
        description: Option<String>,
        rollback_of: Option<u64>,
    ) -> Result<TxRecord> {
        let rec = TxRecord {
            tx: self.next_tx_id()?,
            created_ms: self.now(),
            agent,
            description,
            state: TxState::Open,
            revisions: 0,
            committed: None,
            rollback_of,
            rolled_back_by: None,
            attention: None,
            pruned: false,
        };
        self.put_tx(&rec)?;
        self.event(EventKind::TxCreated {
            tx: rec.tx,
            rollback_of,
        })?;
        Ok(rec)
    }

    /// Record `rev` as the next revision of its open tx, with its `revision_recorded`
    /// event; returns the tx with its revision count raised. Refused
    /// ([`Transition::Revision`]) unless the tx is open and `rev.revision` is its next
    /// revision number.
    pub fn add_revision(&mut self, rev: &RevisionRecord) -> Result<TxRecord> {
        let mut tx = self.tx(rev.tx)?;
        if tx.state != TxState::Open || rev.revision != tx.revisions {
            return Err(illegal(Transition::Revision {
                tx: tx.tx,
                revision: rev.revision,
                next: tx.revisions,
                state: tx.state,
            }));
        }
        self.put_revision(rev)?;
        tx.revisions += 1;
        self.put_tx(&tx)?;
        Ok(tx)
    }

    /// `Open → Aborted`, with a `tx_aborted` event. Refused with [`Error::WrongState`]
    /// when the tx is not open, and while a batch of it is in flight: that batch's
    /// recovery decides whether the tx's change lands, so the tx cannot be declared
    /// dead before.
    pub fn abort_tx(&mut self, tx: u64) -> Result<TxRecord> {
        let mut rec = self.tx(tx)?;
        if rec.state != TxState::Open {
            return Err(Error::wrong_state(&rec, Verb::Abort));
        }
        if let Some(batch) = self.inflight_batch_of(tx)? {
            return Err(Error::batch_in_flight(
                &rec,
                Verb::Abort,
                batch.batch,
                batch.state,
            ));
        }
        self.move_tx(&mut rec, TxState::Aborted)?;
        self.put_tx(&rec)?;
        self.event(EventKind::TxAborted { tx })?;
        Ok(rec)
    }

    /// Mark (`on`) or clear the tx's attention mark for `batch` (a batch of it that
    /// found foreign bytes). The batch's own `batch_state` event, written in the same
    /// journal write, records why.
    pub fn set_attention(&mut self, tx: u64, batch: u64, on: bool) -> Result<()> {
        let mut rec = self.tx(tx)?;
        let next = match (on, rec.attention) {
            (true, _) => Some(batch),
            (false, Some(b)) if b == batch => None,
            (false, other) => other,
        };
        if next != rec.attention {
            rec.attention = next;
            self.put_tx(&rec)?;
        }
        Ok(())
    }

    /// Insert or move a batch, keeping the in-flight index in step with its state, and
    /// append a `batch_state` event for its latest state change. A new batch must be
    /// `Committing` (its intent is its commit point, docs/commit-protocol.md) or
    /// `Prepared` (the intent of earlier versions, which wrote the commit point
    /// separately) under an unused id; an existing one must move along
    /// [`BatchState::can_become`] from the state it has *in the journal* (refused with
    /// [`JournalError::IllegalTransition`] otherwise: the step of a process whose batch
    /// another process settled meanwhile is never written).
    pub fn put_batch(&mut self, rec: &BatchRecord) -> Result<()> {
        let stored: Option<BatchRecord> =
            get_rec(&self.txn.open_table(BATCHES)?, "batches", rec.batch)?;
        match &stored {
            None if matches!(rec.state, BatchState::Committing | BatchState::Prepared)
                && rec.history.len() == 1
                && rec.history[0].state == rec.state => {}
            None => {
                return Err(illegal(Transition::NewBatch {
                    batch: rec.batch,
                    state: rec.state,
                }))
            }
            Some(old) if old.state.can_become(rec.state) => {}
            Some(old) => {
                return Err(illegal(Transition::Batch {
                    batch: rec.batch,
                    from: old.state,
                    to: rec.state,
                }))
            }
        }
        let v = codec::encode(rec)?;
        self.txn
            .open_table(BATCHES)?
            .insert(rec.batch, v.as_slice())?;
        {
            let mut inflight = self.txn.open_table(INFLIGHT)?;
            if rec.state.is_terminal() {
                inflight.remove(rec.batch)?;
            } else {
                inflight.insert(rec.batch, ())?;
            }
        }
        let note = rec.history.last().and_then(|h| h.note.clone());
        self.event(EventKind::BatchState {
            batch: rec.batch,
            tx: rec.tx,
            state: rec.state,
            note,
        })
    }

    /// Insert the receipt of a completed batch with its `receipt_issued` event, and
    /// apply what it means to the transactions: its tx `Open → Committed` (the revision
    /// and batch recorded in `committed`, its attention mark for this batch cleared),
    /// then each of `links` (for a rollback: the txs down its `rollback_of` chain whose
    /// change the batch made live again or undone again, decided by the batch layer
    /// from the disk, see `batch::machine`): `Committed` (live, no link) or
    /// `RolledBack` with the tx that undid it. A tx already in the state it is given
    /// only has its link updated.
    pub fn issue_receipt(&mut self, receipt: &Receipt, links: &[ChainLink]) -> Result<()> {
        let v = codec::encode(receipt)?;
        self.txn
            .open_table(RECEIPTS)?
            .insert(receipt.batch, v.as_slice())?;
        self.event(EventKind::ReceiptIssued {
            batch: receipt.batch,
            tx: receipt.tx,
        })?;
        let mut tx = self.tx(receipt.tx)?;
        self.move_tx(&mut tx, TxState::Committed)?;
        if tx.attention == Some(receipt.batch) {
            tx.attention = None;
        }
        tx.committed = Some(CommitRef {
            revision: match receipt.kind {
                BatchKind::Commit { revision } => revision,
                BatchKind::Rollback { .. } => 0,
            },
            batch: receipt.batch,
        });
        self.put_tx(&tx)?;
        for link in links {
            let mut rec = self.tx(link.tx)?;
            let (state, by) = match link.undone_by {
                Some(by) => (TxState::RolledBack, Some(by)),
                None => (TxState::Committed, None),
            };
            if rec.state != state {
                self.move_tx(&mut rec, state)?;
            }
            rec.rolled_back_by = by;
            self.put_tx(&rec)?;
        }
        Ok(())
    }

    /// The in-flight batch of `tx`, if any (a commit or rollback under way or
    /// interrupted).
    pub fn inflight_batch_of(&self, tx: u64) -> Result<Option<BatchRecord>> {
        let inflight = self.txn.open_table(INFLIGHT)?;
        let batches = self.txn.open_table(BATCHES)?;
        for item in inflight.iter()? {
            let id = item?.0.value();
            if let Some(b) = get_rec::<u64, BatchRecord>(&batches, "batches", id)? {
                if b.tx == tx {
                    return Ok(Some(b));
                }
            }
        }
        Ok(None)
    }

    /// Whether a batch of `tx` is in flight.
    pub fn has_inflight_batch(&self, tx: u64) -> Result<bool> {
        Ok(self.inflight_batch_of(tx)?.is_some())
    }

    /// Set `rec.state = to` if the tx state machine allows it (the caller writes it).
    fn move_tx(&mut self, rec: &mut TxRecord, to: TxState) -> Result<()> {
        if !rec.state.can_become(to) {
            return Err(illegal(Transition::Tx {
                tx: rec.tx,
                from: rec.state,
                to,
            }));
        }
        rec.state = to;
        Ok(())
    }

    /// Prune a tx for `journal gc`: an open one is aborted first (with its event).
    pub(super) fn prune_tx(&mut self, rec: &mut TxRecord) -> Result<bool> {
        let aborted = rec.state == TxState::Open;
        if aborted {
            self.move_tx(rec, TxState::Aborted)?;
            self.event(EventKind::TxAborted { tx: rec.tx })?;
        }
        rec.pruned = true;
        self.put_tx(rec)?;
        Ok(aborted)
    }
}

fn illegal(t: Transition) -> Error {
    JournalError::IllegalTransition(t).into()
}
