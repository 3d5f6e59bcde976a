//! `journal dump`: every record in journal order, streamed.
//!
//! The event log (table `events`) is walked in `seq` order inside one read transaction;
//! each event is handed to the caller with the record it refers to, one at a time, so
//! memory stays flat however long the journal is.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::journal::records::*;
use crate::workspace::Journal;

/// The record an event refers to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DumpDetail {
    /// For `tx_created`: the tx as it is now.
    Tx(TxRecord),
    /// For `revision_recorded`: the revision (snapshots, candidates, diffs, validation).
    Revision(RevisionRecord),
    /// For the event of a batch's intent (`committing`; `prepared` in journals of
    /// earlier versions): the batch as it is now (files' pre and post).
    Batch(BatchRecord),
    /// For `receipt_issued`: the receipt.
    Receipt(Receipt),
}

/// One line of the dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpEntry {
    /// The event.
    pub event: Event,
    /// The record it refers to, where there is one.
    pub detail: Option<DumpDetail>,
}

impl DumpEntry {
    /// The tx this entry is about, if any.
    pub fn tx(&self) -> Option<u64> {
        match &self.event.kind {
            EventKind::TxCreated { tx, .. }
            | EventKind::RevisionRecorded { tx, .. }
            | EventKind::BatchState { tx, .. }
            | EventKind::ReceiptIssued { tx, .. }
            | EventKind::TxAborted { tx } => Some(*tx),
            EventKind::BlobStored { .. } | EventKind::Recovery { .. } | EventKind::Gc { .. } => {
                None
            }
        }
    }
}

/// Which entries [`Journal::dump`] yields (default: every one).
/// `#[non_exhaustive]`: start from [`DumpFilter::new`] (or `Default`)
/// and set fields with the `with_*` methods (or assign them), so a field added later
/// does not break a host's code.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct DumpFilter {
    /// Only entries about this tx (blob events are dropped: blobs are shared): a tx
    /// number of this journal or a handle, which another journal refuses
    /// ([`crate::Error::ForeignHandle`]).
    pub tx: Option<crate::TxRef>,
    /// Start at this event seq.
    pub since_seq: u64,
    /// Only events at or after this time (ms since epoch).
    pub since_ms: Option<u64>,
    /// Only events of these kinds ([`EventKind::name`]); empty for all.
    pub kinds: Vec<String>,
}

impl DumpFilter {
    /// Every entry.
    pub fn new() -> DumpFilter {
        DumpFilter::default()
    }
    /// [`DumpFilter::tx`]: only entries about this tx.
    pub fn with_tx(mut self, tx: impl Into<crate::TxRef>) -> Self {
        self.tx = Some(tx.into());
        self
    }
    /// [`DumpFilter::since_seq`].
    pub fn with_since_seq(mut self, seq: u64) -> Self {
        self.since_seq = seq;
        self
    }
    /// [`DumpFilter::since_ms`] (ms since the Unix epoch).
    pub fn with_since_ms(mut self, ms: u64) -> Self {
        self.since_ms = Some(ms);
        self
    }
    /// [`DumpFilter::kinds`]: only events of these kinds ([`EventKind::name`]).
    pub fn with_kinds<S: Into<String>>(mut self, kinds: impl IntoIterator<Item = S>) -> Self {
        self.kinds = kinds.into_iter().map(Into::into).collect();
        self
    }
}

impl Journal {
    /// Visit every journal entry in order; stop early when `visit` returns false.
    pub fn dump(
        &self,
        filter: DumpFilter,
        mut visit: impl FnMut(DumpEntry) -> Result<bool>,
    ) -> Result<()> {
        crate::workspace::guarded(|| {
            let tx = filter.tx.map(|t| self.tx_number(t)).transpose()?;
            let r = self.ws.store.read()?;
            r.events(filter.since_seq, |event| {
                let detail = match &event.kind {
                    EventKind::TxCreated { tx, .. } => r.tx(*tx)?.map(DumpDetail::Tx),
                    EventKind::RevisionRecorded { tx, revision } => {
                        r.revision(*tx, *revision)?.map(DumpDetail::Revision)
                    }
                    // The batch's record goes with the event of its intent: `committing`
                    // (`prepared` in journals of earlier versions, whose later
                    // `committing` is their separate commit point).
                    EventKind::BatchState {
                        batch,
                        state: state @ (BatchState::Prepared | BatchState::Committing),
                        ..
                    } => r
                        .batch(*batch)?
                        .filter(|b| b.history.first().map(|h| h.state) == Some(*state))
                        .map(DumpDetail::Batch),
                    EventKind::ReceiptIssued { batch, .. } => {
                        r.receipt(*batch)?.map(DumpDetail::Receipt)
                    }
                    _ => None,
                };
                let entry = DumpEntry { event, detail };
                let skip = (tx.is_some() && entry.tx() != tx)
                    || filter.since_ms.is_some_and(|t| entry.event.at_ms < t)
                    || (!filter.kinds.is_empty()
                        && !filter.kinds.iter().any(|k| k == entry.event.kind.name()));
                if skip {
                    return Ok(true);
                }
                visit(entry)
            })
        })
    }

    /// The bytes of a blob, for `--with-blobs` and embedders.
    pub fn blob(&self, hash: &BlobHash) -> Result<Option<Vec<u8>>> {
        crate::workspace::guarded(|| self.ws.store.read()?.blob(hash))
    }
}
