//! Schema v4: every file state (a revision's snapshot and candidate, a batch's pre- and
//! post-image and foreign bytes, a receipt's files) gains `owner: Option<Owner>`, so a
//! commit, a rollback and recovery keep a file's owner and group.
//!
//! Records written before v4 did not record owners: they become `owner: None`, which a
//! comparison ignores (`FileState::matches`), so their commits still roll back; such a
//! rollback gives the files the owner the process creates them with, as v3 did.
//!
//! The step decodes each record of the three tables with the v3 layout below and writes
//! it back in the v4 layout, inside the migration's single write transaction.

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::Deserialize;

use crate::edit::{CandidateDiff, Issue};
use crate::error::Result;
use crate::fs::RelPath;
use crate::journal::codec;
use crate::journal::records::*;

#[derive(Deserialize)]
struct FileRevisionV3 {
    path: RelPath,
    snapshot: FileStateV3,
    candidate: FileStateV3,
    diff: CandidateDiff,
}

#[derive(Deserialize)]
struct RevisionRecordV3 {
    tx: u64,
    revision: u32,
    base: Option<u32>,
    created_ms: u64,
    plan: String,
    files: Vec<FileRevisionV3>,
    validation: Vec<Issue>,
    conflicts: Vec<FileConflict>,
}

#[derive(Deserialize)]
struct BatchFileV3 {
    path: RelPath,
    pre: FileStateV3,
    post: FileStateV3,
}

impl From<BatchFileV3> for BatchFile {
    fn from(f: BatchFileV3) -> Self {
        BatchFile {
            path: f.path,
            pre: f.pre.into(),
            post: f.post.into(),
        }
    }
}

#[derive(Deserialize)]
struct ForeignWriteV3 {
    path: RelPath,
    found: FileStateV3,
    note: String,
}

#[derive(Deserialize)]
struct BatchRecordV3 {
    batch: u64,
    tx: u64,
    kind: BatchKind,
    state: BatchState,
    nonce: u64,
    files: Vec<BatchFileV3>,
    create_dirs: Vec<RelPath>,
    remove_dirs: Vec<RelPath>,
    history: Vec<StateChange>,
    foreign: Vec<ForeignWriteV3>,
}

#[derive(Deserialize)]
struct ReceiptV3 {
    tx: u64,
    batch: u64,
    kind: BatchKind,
    files: Vec<BatchFileV3>,
    created_dirs: Vec<RelPath>,
    removed_dirs: Vec<RelPath>,
    bytes_written: u64,
    at_ms: u64,
    by_recovery: bool,
}

/// Rewrite every revision, batch and receipt in the v4 layout.
pub fn run(txn: &WriteTransaction) -> Result<()> {
    rewrite_revisions(txn)?;
    rewrite::<BatchRecordV3, BatchRecord>(txn, "batches", |b| BatchRecord {
        batch: b.batch,
        tx: b.tx,
        kind: b.kind,
        state: b.state,
        nonce: b.nonce,
        files: b.files.into_iter().map(Into::into).collect(),
        create_dirs: b.create_dirs,
        remove_dirs: b.remove_dirs,
        history: b.history,
        foreign: b
            .foreign
            .into_iter()
            .map(|f| ForeignWrite {
                path: f.path,
                found: f.found.into(),
                note: f.note,
            })
            .collect(),
    })?;
    rewrite::<ReceiptV3, Receipt>(txn, "receipts", |r| Receipt {
        tx: r.tx,
        batch: r.batch,
        kind: r.kind,
        files: r.files.into_iter().map(Into::into).collect(),
        created_dirs: r.created_dirs,
        removed_dirs: r.removed_dirs,
        bytes_written: r.bytes_written,
        at_ms: r.at_ms,
        by_recovery: r.by_recovery,
    })
}

/// Decode every value of the `u64`-keyed table `name` as `Old`, convert it, and write
/// it back.
fn rewrite<Old, New>(
    txn: &WriteTransaction,
    name: &'static str,
    convert: impl Fn(Old) -> New,
) -> Result<()>
where
    Old: serde::de::DeserializeOwned,
    New: serde::Serialize,
{
    let mut table = txn.open_table(TableDefinition::<u64, &[u8]>::new(name))?;
    let mut upgraded = Vec::new();
    for item in table.iter()? {
        let (k, v) = item?;
        let old: Old = codec::decode(name, v.value())?;
        upgraded.push((k.value(), codec::encode(&convert(old))?));
    }
    for (k, v) in upgraded {
        table.insert(k, v.as_slice())?;
    }
    Ok(())
}

/// The revisions table, keyed `(tx, revision)`.
fn rewrite_revisions(txn: &WriteTransaction) -> Result<()> {
    let def = TableDefinition::<(u64, u32), &[u8]>::new("revisions");
    let mut table = txn.open_table(def)?;
    let mut upgraded = Vec::new();
    for item in table.iter()? {
        let (k, v) = item?;
        let r: RevisionRecordV3 = codec::decode("revisions", v.value())?;
        let new = RevisionRecord {
            tx: r.tx,
            revision: r.revision,
            base: r.base,
            created_ms: r.created_ms,
            plan: r.plan,
            files: r
                .files
                .into_iter()
                .map(|f| FileRevision {
                    path: f.path,
                    snapshot: f.snapshot.into(),
                    candidate: f.candidate.into(),
                    diff: f.diff,
                })
                .collect(),
            validation: r.validation,
            conflicts: r.conflicts,
        };
        upgraded.push((k.value(), codec::encode(&new)?));
    }
    for (k, v) in upgraded {
        table.insert(k, v.as_slice())?;
    }
    Ok(())
}
