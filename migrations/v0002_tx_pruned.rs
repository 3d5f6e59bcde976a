//! Schema v2: every `TxRecord` gains `pruned: bool`, set by `journal gc` when it drops
//! a transaction's revisions and the blobs only they referenced.
//!
//! The step decodes each v1 record with the v1 layout below and writes it back in the
//! v2 layout (`pruned: false`), all inside the migration's single write transaction.

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::Deserialize;

use crate::error::Result;
use crate::journal::codec;
use crate::journal::records::{CommitRef, TxRecord, TxState};

/// `TxRecord` as schema v1 wrote it.
#[derive(Deserialize)]
struct TxRecordV1 {
    tx: u64,
    created_ms: u64,
    agent: Option<String>,
    description: Option<String>,
    state: TxState,
    revisions: u32,
    committed: Option<CommitRef>,
    rollback_of: Option<u64>,
    rolled_back_by: Option<u64>,
    attention: Option<u64>,
}

/// Rewrite every tx record in the v2 layout.
pub fn run(txn: &WriteTransaction) -> Result<()> {
    let def = TableDefinition::<u64, &[u8]>::new("txs");
    let mut table = txn.open_table(def)?;
    let mut upgraded = Vec::new();
    for item in table.iter()? {
        let (k, v) = item?;
        let old: TxRecordV1 = codec::decode("txs", v.value())?;
        let new = TxRecord {
            tx: old.tx,
            created_ms: old.created_ms,
            agent: old.agent,
            description: old.description,
            state: old.state,
            revisions: old.revisions,
            committed: old.committed,
            rollback_of: old.rollback_of,
            rolled_back_by: old.rolled_back_by,
            attention: old.attention,
            pruned: false,
        };
        upgraded.push((k.value(), codec::encode(&new)?));
    }
    for (k, v) in upgraded {
        table.insert(k, v.as_slice())?;
    }
    Ok(())
}
