//! `journal gc` and `journal stats`: keep the journal bounded and measurable.
//!
//! Retention (README, "Journal upkeep"): a policy names the
//! transactions to keep — the N newest, or those younger than D days. Every other
//! transaction, unless a batch of it is in flight or it is an open preview, is
//! *pruned*: its revisions (plans, diffs, snapshot and candidate references) are
//! dropped and the tx is marked `pruned`; its record, batches and receipts stay as
//! history. Open previews are work in progress and are kept whatever their age, unless
//! the policy says `abort_open` (then an old one is aborted and pruned).
//! Blobs that no remaining revision, no batch of a kept transaction and no in-flight
//! batch reference are then deleted — so the rollback material of every kept commit
//! stays, and nothing of an in-flight batch is touched. Finally the file is compacted.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::journal::records::{FileState, TxState};
use crate::journal::GcCounts;
use crate::workspace::{guarded, Journal};

/// Which transactions `gc` keeps. At least one field must be set; with both, a tx is
/// kept when either keeps it.
#[derive(Debug, Clone, Copy, Default)]
pub struct GcPolicy {
    /// Keep the N newest transactions.
    pub keep_last: Option<usize>,
    /// Keep transactions created in the last D days (of 86 400 000 ms).
    pub keep_days: Option<u64>,
    /// Also abort and prune open previews the policy does not keep (default: every
    /// open preview is kept).
    pub abort_open: bool,
    /// Compute and report what would be pruned and dropped, and change nothing (the
    /// same pruning runs in a journal write transaction that is then aborted; no
    /// compaction).
    pub dry_run: bool,
}

/// A transaction `gc` pruned (or, in a dry run, would prune).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrunedTx {
    /// Transaction id.
    pub tx: u64,
    /// Its state before gc (`committed`, `rolled_back`, `aborted`, `open`).
    pub state: String,
    /// Who made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Creation time, ms since the Unix epoch.
    pub created_ms: u64,
    /// True for a committed tx (a commit, or a rollback that is itself committed) that
    /// could be rolled back until now: it can no longer be once pruned. False for one
    /// that already could not (its change was rolled back and redone, so the redo's tx
    /// owns it: [`crate::StateReason::Redone`]), and for every other state.
    pub loses_rollback: bool,
}

/// What `gc` did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GcReport {
    /// True if nothing was changed: the counts and lists say what a real run would do.
    #[serde(default)]
    pub dry_run: bool,
    /// What was removed.
    pub removed: GcCounts,
    /// Every transaction pruned, oldest first.
    #[serde(default)]
    pub pruned: Vec<PrunedTx>,
    /// The committed transactions among `pruned`: they can no longer be rolled back.
    #[serde(default)]
    pub rollbacks_lost: Vec<u64>,
    /// Whether redb compacted the file (false if another process had it busy).
    pub compacted: bool,
    /// File size before, in bytes.
    pub file_bytes_before: Option<u64>,
    /// File size after, in bytes, with this handle still open (the CLI reports it
    /// after closing: redb then writes its allocator state, which can add a few KiB).
    pub file_bytes_after: Option<u64>,
}

/// Counts and sizes of the journal (`journal stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JournalStats {
    /// Schema version of the file.
    pub schema_version: u64,
    /// Transactions (pruned ones included).
    pub txs: u64,
    /// Transactions pruned by gc.
    pub txs_pruned: u64,
    /// Revision records.
    pub revisions: u64,
    /// Blobs stored.
    pub blobs: u64,
    /// The blobs' full lengths, each distinct content once: what the blobs hold as
    /// file content (`journal verify` reports the same figure under the same name).
    #[serde(default)]
    pub blob_bytes_content: u64,
    /// Bytes the blob store holds, each distinct piece once: inline blobs, every
    /// chunk, every manifest page (schema v6), and each manifest's own list of hashes
    /// (32 bytes a hash). redb's page overhead is not included: the file's growth is
    /// `file_bytes` (docs/on-disk-format.md, "Blobs").
    pub blob_bytes_unique: u64,
    /// Bytes the revisions and batches refer to, counting every reference: what the
    /// journal would hold without content addressing.
    pub blob_bytes_referenced: u64,
    /// Batch records.
    pub batches: u64,
    /// Receipts.
    pub receipts: u64,
    /// Events.
    pub events: u64,
    /// Size of the journal file in bytes.
    pub file_bytes: Option<u64>,
}

fn pruned_tx(tx: &crate::journal::records::TxRecord, unrollbackable: &BTreeSet<u64>) -> PrunedTx {
    PrunedTx {
        tx: tx.tx,
        state: tx.state.to_string(),
        agent: tx.agent.clone(),
        description: tx.description.clone(),
        created_ms: tx.created_ms,
        loses_rollback: tx.state == TxState::Committed && !unrollbackable.contains(&tx.tx),
    }
}

/// The committed txs that a rollback can no longer undo whatever gc does: their change
/// was rolled back and then redone ([`crate::commit::redone`]). Only txs some rollback
/// names are asked (one scan, then one walk each).
fn unrollbackable(r: &crate::journal::Reader) -> Result<BTreeSet<u64>> {
    let mut targets = BTreeSet::new();
    r.scan_txs(|_, t| {
        if let Some(of) = t.ok().and_then(|t| t.rollback_of) {
            targets.insert(of);
        }
        Ok(())
    })?;
    let mut out = BTreeSet::new();
    for tx in targets {
        if crate::commit::redone(r, tx)?.is_some() {
            out.insert(tx);
        }
    }
    Ok(out)
}

impl Journal {
    /// Apply a retention policy (see the module docs), under the commit lock, in one
    /// journal write transaction; then compact the file.
    ///
    /// Needs `&mut self` because compaction needs the database to itself within this
    /// process. Errors: [`Error::InvalidPolicy`] when neither field is set,
    /// [`Error::LockTimeout`], journal errors.
    pub fn gc(&mut self, policy: GcPolicy) -> Result<GcReport> {
        guarded(|| {
            if policy.keep_last.is_none() && policy.keep_days.is_none() {
                return Err(Error::InvalidPolicy {
                    message: format!(
                        "a keep rule is needed{}: give --keep-last N (keep the N newest transactions) or --keep-days D (keep those younger than D days); gc has no default rule, so that it never prunes what was not named",
                        if policy.dry_run { ", with --dry-run too (it lists what that rule would prune)" } else { "" }
                    ),
                });
            }
            let before = self.ws.store.file_size();
            let pruned = std::cell::RefCell::new(Vec::new());
            let removed = {
                let _lock = self.lock()?;
                let newest = self.newest_ids(policy.keep_last.unwrap_or(0))?;
                let unrollbackable = unrollbackable(&self.ws.store.read()?)?;
                let cutoff = policy.keep_days.map(|d| {
                    self.ws
                        .store
                        .now_ms()
                        .saturating_sub(d.saturating_mul(86_400_000))
                });
                let run = |w: &mut crate::journal::Writer| {
                    w.gc(|tx| {
                        let keep = (tx.state == TxState::Open && !policy.abort_open)
                            || newest.contains(&tx.tx)
                            || cutoff.is_some_and(|c| tx.created_ms >= c);
                        if !keep {
                            pruned.borrow_mut().push(pruned_tx(tx, &unrollbackable));
                        }
                        keep
                    })
                };
                match policy.dry_run {
                    true => self.ws.store.write_dry_run(run)?,
                    false => self.ws.store.write(run)?,
                }
            };
            // Nothing runs in the background now (the writes above waited for any
            // completion, whose thread held the other reference): the store is ours.
            let compacted = !policy.dry_run
                && match Arc::get_mut(&mut self.ws) {
                    Some(ws) => ws.store.compact()?,
                    None => false,
                };
            let mut pruned = pruned.into_inner();
            pruned.sort_by_key(|p| p.tx);
            Ok(GcReport {
                dry_run: policy.dry_run,
                removed,
                rollbacks_lost: pruned
                    .iter()
                    .filter(|p| p.loses_rollback)
                    .map(|p| p.tx)
                    .collect(),
                pruned,
                compacted,
                file_bytes_before: before,
                file_bytes_after: self.ws.store.file_size(),
            })
        })
    }

    fn newest_ids(&self, n: usize) -> Result<std::collections::BTreeSet<u64>> {
        let mut out = std::collections::BTreeSet::new();
        self.ws.store.read()?.txs_newest_first(|tx| {
            if out.len() < n {
                out.insert(tx.tx);
            }
            Ok(out.len() < n)
        })?;
        Ok(out)
    }

    /// Bytes in the pages the journal's storage engine has allocated: the used part
    /// of the file, which grows by a little per commit while the file itself grows in
    /// jumps (`None` when the journal was opened read-only). Not part of
    /// [`Journal::stats`] because it needs redb's write transaction (aborted, so
    /// nothing is written or synced), which waits for any writer of the journal.
    pub fn allocated_bytes(&self) -> Result<Option<u64>> {
        guarded(|| self.ws.store.allocated_bytes())
    }

    /// Counts and sizes (see [`JournalStats`]).
    pub fn stats(&self) -> Result<JournalStats> {
        guarded(|| {
            let r = self.ws.store.read()?;
            let mut s = JournalStats {
                schema_version: crate::journal::SCHEMA_VERSION,
                file_bytes: self.ws.store.file_size(),
                ..Default::default()
            };
            let size = FileState::size;
            r.scan_txs(|_, t| {
                s.txs += 1;
                s.txs_pruned += u64::from(t.is_ok_and(|t| t.pruned));
                Ok(())
            })?;
            r.scan_revisions(|_, rev| {
                s.revisions += 1;
                for f in rev?.files {
                    s.blob_bytes_referenced += size(&f.snapshot) + size(&f.candidate);
                }
                Ok(())
            })?;
            r.scan_batches(|_, b| {
                s.batches += 1;
                for f in b?.files {
                    s.blob_bytes_referenced += size(&f.pre) + size(&f.post);
                }
                Ok(())
            })?;
            s.blobs = r.blob_count()?;
            s.blob_bytes_unique = r.stored_blob_bytes()?;
            s.blob_bytes_content = r.blob_content_bytes()?;
            r.scan_receipts(|_, _| {
                s.receipts += 1;
                Ok(())
            })?;
            r.scan_events(|_, _| {
                s.events += 1;
                Ok(())
            })?;
            Ok(s)
        })
    }
}
