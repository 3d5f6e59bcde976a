//! `journal verify`: check that the journal is internally consistent.
//!
//! Checks (each failure is one line of [`VerifyReport::problems`]):
//! - every blob's bytes hash (blake3) to its key, and so do each of its manifest pages
//!   and chunks (docs/on-disk-format.md, "Blobs"): a missing or damaged piece is named;
//! - every record decodes;
//! - every reference resolves: a revision's tx, every snapshot/candidate/pre/post blob,
//!   a tx's revisions, committed batch, rollback links; a receipt's batch;
//! - every batch's state history is a legal path of the state machine
//!   ([`BatchState::can_become`]) from its intent (`committing`, or `prepared` in
//!   journals of earlier versions) to its current state, both as its
//!   record keeps it and as the event log's `batch_state` events tell it (a second
//!   process that settled a live batch would show there);
//! - the in-flight index holds exactly the non-terminal batches;
//! - a batch has a receipt iff it is `committed`;
//! - event sequence numbers are gap-free from 1;
//! - the events name what the records hold: each tx has one `tx_created` event with
//!   its `rollback_of`, and `revision_recorded` events for revisions 0, 1, … in order,
//!   as many as it has revisions; each `batch_state` and `receipt_issued` event names
//!   a batch of the tx it gives (a flipped id in an event would otherwise make `journal
//!   dump` tell another tx's history without a word).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::journal::records::*;
use crate::journal::{gc_dropped_images, Reader};
use crate::workspace::Journal;

/// The outcome of [`Journal::verify`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct VerifyReport {
    /// True when `problems` is empty.
    pub ok: bool,
    /// Transactions checked.
    pub txs: u64,
    /// Revisions checked.
    pub revisions: u64,
    /// Blobs checked (hash recomputed).
    pub blobs: u64,
    /// The blobs' full lengths, each distinct content once (as
    /// [`crate::JournalStats::blob_bytes_content`]; before issue 33 this field was
    /// `blob_bytes`, which is still read).
    #[serde(alias = "blob_bytes")]
    pub blob_bytes_content: u64,
    /// Bytes the blob store holds, each distinct piece once (as
    /// [`crate::JournalStats::blob_bytes_unique`]: chunks, inline blobs, manifest pages
    /// and hash lists, without redb's page overhead).
    #[serde(default)]
    pub blob_bytes_unique: u64,
    /// Batches checked.
    pub batches: u64,
    /// Receipts checked.
    pub receipts: u64,
    /// Events checked.
    pub events: u64,
    /// One precise entry per problem found.
    pub problems: Vec<Problem>,
}

/// The record a [`Problem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "record")]
pub enum Subject {
    /// A blob, by its key.
    Blob {
        /// The key.
        hash: BlobHash,
    },
    /// A transaction record.
    Tx {
        /// Its id.
        tx: u64,
    },
    /// A revision record.
    Revision {
        /// Its tx.
        tx: u64,
        /// Its number.
        revision: u32,
    },
    /// A batch record.
    Batch {
        /// Its id.
        batch: u64,
    },
    /// A receipt (keyed by its batch).
    Receipt {
        /// Its batch.
        batch: u64,
    },
    /// An event of the log.
    Event {
        /// Its sequence number.
        seq: u64,
    },
    /// The index of in-flight batches.
    InflightIndex,
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Subject::Blob { hash } => write!(f, "blob {hash}"),
            Subject::Tx { tx } => write!(f, "tx {tx}"),
            Subject::Revision { tx, revision } => write!(f, "revision {tx}/{revision}"),
            Subject::Batch { batch } => write!(f, "batch {batch}"),
            Subject::Receipt { batch } => write!(f, "receipt {batch}"),
            Subject::Event { seq } => write!(f, "event {seq}"),
            Subject::InflightIndex => f.write_str("in-flight index"),
        }
    }
}

/// One problem `journal verify` found: the record it is about, and what is wrong.
/// Printed as `"{subject}: {what}"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The record.
    pub subject: Subject,
    /// What is wrong with it.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.subject, self.what)
    }
}

impl VerifyReport {
    fn problem(&mut self, subject: Subject, what: impl Into<String>) {
        self.problems.push(Problem {
            subject,
            what: what.into(),
        });
    }
}

impl Journal {
    /// Check the journal's internal consistency (see the module docs). Damage is reported
    /// in the report, not as an error; an error means the journal could not be read at
    /// all.
    pub fn verify(&self) -> Result<VerifyReport> {
        crate::workspace::guarded(|| {
            let r = self.ws.store.read()?;
            let mut v = VerifyReport::default();
            let blobs = check_blobs(&r, &mut v)?;
            v.blob_bytes_unique = r.stored_blob_bytes()?;
            let txs = check_txs(&r, &mut v)?;
            check_revisions(&r, &mut v, &blobs, &txs)?;
            let batches = check_batches(&r, &mut v, &blobs, &txs)?;
            check_receipts(&r, &mut v, &batches)?;
            check_inflight(&r, &mut v, &batches)?;
            check_events(&r, &mut v)?;
            check_batch_events(&r, &mut v)?;
            check_event_subjects(&r, &mut v, &txs, &batches)?;
            check_tx_links(&mut v, &txs, &batches);
            v.ok = v.problems.is_empty();
            Ok(v)
        })
    }
}

/// The blobs present, and among them the damaged ones.
struct Blobs {
    present: BTreeSet<BlobHash>,
    damaged: BTreeSet<BlobHash>,
}

fn check_blobs(r: &Reader, v: &mut VerifyReport) -> Result<Blobs> {
    let mut blobs = Blobs {
        present: BTreeSet::new(),
        damaged: BTreeSet::new(),
    };
    // Reassembly checks every blob's bytes against its key (and that its chunks exist).
    r.scan_blobs(|key, bytes| {
        v.blobs += 1;
        match bytes {
            Ok(b) => v.blob_bytes_content += b.len() as u64,
            Err(e) => {
                v.problem(Subject::Blob { hash: key }, e.without_advice());
                blobs.damaged.insert(key);
            }
        }
        blobs.present.insert(key);
        Ok(())
    })?;
    Ok(blobs)
}

fn check_txs(r: &Reader, v: &mut VerifyReport) -> Result<BTreeMap<u64, TxRecord>> {
    let mut txs = BTreeMap::new();
    r.scan_txs(|id, rec| {
        v.txs += 1;
        match rec {
            Ok(t) if t.tx == id => {
                txs.insert(id, t);
            }
            Ok(t) => v.problem(Subject::Tx { tx: id }, format!("record says tx {}", t.tx)),
            Err(e) => v.problem(Subject::Tx { tx: id }, e.without_advice()),
        }
        Ok(())
    })?;
    Ok(txs)
}

/// A record needs the blob of `r`: a problem if it is missing, and, if it is damaged,
/// one naming the record and file that need it (the blob's own problem names only its
/// hash).
fn need_blob(v: &mut VerifyReport, blobs: &Blobs, r: &BlobRef<'_>, of: Subject) {
    if !blobs.present.contains(&r.hash) {
        v.problem(
            of,
            format!("{} {}: blob {} is missing", r.path, r.role, r.hash),
        );
    } else if blobs.damaged.contains(&r.hash) {
        v.problem(
            of,
            format!(
                "{} {}: needs blob {}, which is damaged; showing and rolling back this record's transaction refuse, other transactions are unaffected",
                r.path, r.role, r.hash
            ),
        );
    }
}

fn check_revisions(
    r: &Reader,
    v: &mut VerifyReport,
    blobs: &Blobs,
    txs: &BTreeMap<u64, TxRecord>,
) -> Result<()> {
    let mut seen: BTreeMap<u64, u32> = BTreeMap::new();
    r.scan_revisions(|(tx, n), rec| {
        v.revisions += 1;
        let rev = match rec {
            Ok(rev) => rev,
            Err(e) => {
                v.problem(Subject::Revision { tx, revision: n }, e.without_advice());
                return Ok(());
            }
        };
        if !txs.contains_key(&tx) {
            v.problem(
                Subject::Revision { tx, revision: n },
                format!("tx {tx} does not exist"),
            );
        }
        for r in rev.blob_refs() {
            need_blob(v, blobs, &r, Subject::Revision { tx, revision: n });
        }
        *seen.entry(tx).or_default() += 1;
        Ok(())
    })?;
    for (id, t) in txs {
        let found = seen.get(id).copied().unwrap_or(0);
        if t.pruned && found == 0 {
            continue; // gc dropped its revisions
        }
        if found != t.revisions {
            v.problem(
                Subject::Tx { tx: *id },
                format!("says {} revision(s), journal holds {found}", t.revisions),
            );
        }
    }
    Ok(())
}

fn check_batches(
    r: &Reader,
    v: &mut VerifyReport,
    blobs: &Blobs,
    txs: &BTreeMap<u64, TxRecord>,
) -> Result<BTreeMap<u64, BatchRecord>> {
    let mut out = BTreeMap::new();
    r.scan_batches(|id, rec| {
        v.batches += 1;
        let b = match rec {
            Ok(b) => b,
            Err(e) => {
                v.problem(Subject::Batch { batch: id }, e.without_advice());
                return Ok(());
            }
        };
        let pruned = match txs.get(&b.tx) {
            Some(t) => gc_dropped_images(t.pruned, &b),
            None => {
                v.problem(
                    Subject::Batch { batch: id },
                    format!("tx {} does not exist", b.tx),
                );
                false
            }
        };
        // gc drops the images of pruned txs' finished batches: their hashes stay as history.
        for r in b.blob_refs().iter().filter(|_| !pruned) {
            need_blob(v, blobs, r, Subject::Batch { batch: id });
        }
        if let Some(p) = illegal_history(&b) {
            v.problem(Subject::Batch { batch: id }, p);
        }
        out.insert(id, b);
        Ok(())
    })?;
    Ok(out)
}

/// Why a batch's history is not a legal path ending in its state, if it is not.
fn illegal_history(b: &BatchRecord) -> Option<String> {
    let states: Vec<BatchState> = b.history.iter().map(|h| h.state).collect();
    // A batch starts at its intent: `committing` (the intent is the commit point), or
    // `prepared` in journals of earlier versions (docs/commit-protocol.md).
    if !matches!(
        states.first(),
        Some(BatchState::Committing | BatchState::Prepared)
    ) {
        return Some(format!(
            "history does not start at committing or prepared: {states:?}"
        ));
    }
    if let Some(w) = states.windows(2).find(|w| !w[0].can_become(w[1])) {
        return Some(format!("illegal transition {} -> {}", w[0], w[1]));
    }
    if states.last() != Some(&b.state) {
        return Some(format!(
            "state {} is not the last of its history {states:?}",
            b.state
        ));
    }
    None
}

fn check_receipts(
    r: &Reader,
    v: &mut VerifyReport,
    batches: &BTreeMap<u64, BatchRecord>,
) -> Result<()> {
    let mut with_receipt = BTreeSet::new();
    r.scan_receipts(|id, rec| {
        v.receipts += 1;
        match rec {
            Ok(rc) if rc.batch == id => {
                with_receipt.insert(id);
            }
            Ok(rc) => v.problem(
                Subject::Receipt { batch: id },
                format!("record says batch {}", rc.batch),
            ),
            Err(e) => v.problem(Subject::Receipt { batch: id }, e.without_advice()),
        }
        Ok(())
    })?;
    for (id, b) in batches {
        let committed = b.state == BatchState::Committed;
        if committed != with_receipt.contains(id) {
            v.problem(
                Subject::Batch { batch: *id },
                format!(
                    "is {} but {} a receipt",
                    b.state,
                    if committed { "has no" } else { "has" }
                ),
            );
        }
    }
    Ok(())
}

fn check_inflight(
    r: &Reader,
    v: &mut VerifyReport,
    batches: &BTreeMap<u64, BatchRecord>,
) -> Result<()> {
    let inflight: BTreeSet<u64> = r.inflight()?.into_iter().collect();
    for (id, b) in batches {
        if b.state.is_terminal() == inflight.contains(id) {
            v.problem(
                Subject::Batch { batch: *id },
                format!(
                    "is {} but {} the in-flight index",
                    b.state,
                    if inflight.contains(id) {
                        "is in"
                    } else {
                        "is missing from"
                    }
                ),
            );
        }
    }
    for id in inflight.iter().filter(|id| !batches.contains_key(id)) {
        v.problem(
            Subject::InflightIndex,
            format!("names batch {id}, which does not exist"),
        );
    }
    Ok(())
}

fn check_events(r: &Reader, v: &mut VerifyReport) -> Result<()> {
    let mut expect = 1;
    r.scan_events(|seq, ev| {
        v.events += 1;
        if seq != expect {
            v.problem(
                Subject::Event { seq },
                format!("expected seq {expect} (gap)"),
            );
        }
        expect = seq + 1;
        if let Err(e) = ev {
            v.problem(Subject::Event { seq }, e.without_advice());
        }
        Ok(())
    })
}

/// The events against the records they tell of (module docs). A problem per tx or batch
/// whose events disagree, naming the first event that does.
fn check_event_subjects(
    r: &Reader,
    v: &mut VerifyReport,
    txs: &BTreeMap<u64, TxRecord>,
    batches: &BTreeMap<u64, BatchRecord>,
) -> Result<()> {
    // Per tx: its `tx_created` events' `rollback_of`, and the revisions its
    // `revision_recorded` events name, in order.
    let mut created: BTreeMap<u64, Vec<(u64, Option<u64>)>> = BTreeMap::new();
    let mut revisions: BTreeMap<u64, Vec<(u64, u32)>> = BTreeMap::new();
    let mut problems: Vec<(Subject, String)> = Vec::new();
    r.scan_events(|seq, ev| {
        let Ok(ev) = ev else {
            return Ok(()); // reported by check_events
        };
        match ev {
            EventKind::TxCreated { tx, rollback_of } => {
                created.entry(tx).or_default().push((seq, rollback_of));
            }
            EventKind::RevisionRecorded { tx, revision } => {
                revisions.entry(tx).or_default().push((seq, revision));
            }
            EventKind::BatchState { batch, tx, .. } | EventKind::ReceiptIssued { batch, tx } => {
                match batches.get(&batch) {
                    Some(b) if b.tx != tx => problems.push((
                        Subject::Event { seq },
                        format!(
                            "names batch {batch} of tx {tx}, but batch {batch} is tx {}'s",
                            b.tx
                        ),
                    )),
                    None if txs.contains_key(&tx) => problems.push((
                        Subject::Event { seq },
                        format!("names batch {batch}, which does not exist"),
                    )),
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    for (id, t) in txs {
        match created.get(id).map(Vec::as_slice) {
            Some([(_, of)]) if *of == t.rollback_of => {}
            Some([(seq, of)]) => problems.push((
                Subject::Tx { tx: *id },
                format!(
                    "its tx_created event (event {seq}) says rollback_of {of:?}, the record {:?}",
                    t.rollback_of
                ),
            )),
            None | Some([]) => problems.push((
                Subject::Tx { tx: *id },
                "has no tx_created event".to_string(),
            )),
            Some(many) => problems.push((
                Subject::Tx { tx: *id },
                format!("has {} tx_created events", many.len()),
            )),
        }
        let seen = revisions.get(id).map(Vec::as_slice).unwrap_or_default();
        let wrong = seen
            .iter()
            .enumerate()
            .find(|(i, (_, rev))| *rev as usize != *i);
        if let Some((i, (seq, rev))) = wrong {
            problems.push((
                Subject::Tx { tx: *id },
                format!("its revision_recorded event {seq} names revision {rev} where revision {i} comes next"),
            ));
        } else if seen.len() != t.revisions as usize {
            problems.push((
                Subject::Tx { tx: *id },
                format!(
                    "has {} revision_recorded event(s) for {} revision(s)",
                    seen.len(),
                    t.revisions
                ),
            ));
        }
    }
    let named: BTreeSet<&u64> = created.keys().chain(revisions.keys()).collect();
    for id in named.into_iter().filter(|id| !txs.contains_key(id)) {
        problems.push((
            Subject::Tx { tx: *id },
            "is named by events but does not exist".to_string(),
        ));
    }
    for (subject, what) in problems {
        v.problem(subject, what);
    }
    Ok(())
}

/// Walk the event log: each batch's `batch_state` events, in order, must start at
/// `committing` (or `prepared`, earlier versions) and move along [`BatchState::can_become`].
fn check_batch_events(r: &Reader, v: &mut VerifyReport) -> Result<()> {
    let mut last: BTreeMap<u64, (u64, BatchState)> = BTreeMap::new();
    let mut broken: BTreeSet<u64> = BTreeSet::new();
    r.scan_events(|seq, ev| {
        let Ok(EventKind::BatchState { batch, state, .. }) = ev else {
            return Ok(());
        };
        if broken.contains(&batch) {
            return Ok(());
        }
        let what = match last.get(&batch) {
            None if !matches!(state, BatchState::Committing | BatchState::Prepared) => {
                Some(format!(
                    "its first batch_state event (event {seq}) is {state}, not committing or prepared"
                ))
            }
            Some((at, from)) if !from.can_become(state) => Some(format!(
                "its batch_state events go {from} (event {at}) -> {state} (event {seq}), which the state machine does not allow"
            )),
            _ => None,
        };
        match what {
            Some(what) => {
                v.problem(Subject::Batch { batch }, what);
                broken.insert(batch);
            }
            None => {
                last.insert(batch, (seq, state));
            }
        }
        Ok(())
    })
}

fn check_tx_links(
    v: &mut VerifyReport,
    txs: &BTreeMap<u64, TxRecord>,
    batches: &BTreeMap<u64, BatchRecord>,
) {
    for (id, t) in txs {
        if let Some(c) = t.committed {
            match batches.get(&c.batch) {
                Some(b) if b.tx == *id && b.state == BatchState::Committed => {}
                _ => v.problem(
                    Subject::Tx { tx: *id },
                    format!("committed batch {} is not a committed batch of it", c.batch),
                ),
            }
        }
        for (what, other) in [
            ("rollback_of", t.rollback_of),
            ("rolled_back_by", t.rolled_back_by),
        ] {
            if let Some(o) = other.filter(|o| !txs.contains_key(o)) {
                v.problem(
                    Subject::Tx { tx: *id },
                    format!("{what} names tx {o}, which does not exist"),
                );
            }
        }
        if let Some(p) = rollback_links_disagree(*id, t, txs) {
            v.problem(Subject::Tx { tx: *id }, p);
        }
    }
}

/// Why the rollback links of `t` disagree with each other or with the states, if they
/// do: a tx is `rolled_back` exactly when it names the tx that rolled it back, and that
/// tx is a rollback of it that landed (committed, or itself rolled back since). (A
/// committed rollback whose target is committed again is not a disagreement: a later
/// rollback made the target's change live again and superseded it.)
fn rollback_links_disagree(id: u64, t: &TxRecord, txs: &BTreeMap<u64, TxRecord>) -> Option<String> {
    match (t.state, t.rolled_back_by) {
        (TxState::RolledBack, None) => {
            return Some("is rolled_back but names no tx that rolled it back".into())
        }
        (TxState::RolledBack, Some(_)) => {}
        (state, Some(by)) => return Some(format!("is {state} but says tx {by} rolled it back")),
        (_, None) => {}
    }
    if let Some(by) = t.rolled_back_by.and_then(|b| txs.get(&b)) {
        if by.rollback_of != Some(id) {
            return Some(format!(
                "says tx {} rolled it back, but that tx is not a rollback of it",
                by.tx
            ));
        }
        if !matches!(by.state, TxState::Committed | TxState::RolledBack) {
            return Some(format!(
                "says tx {} rolled it back, but that tx is {}",
                by.tx, by.state
            ));
        }
    }
    None
}
