//! Schema v1: create every table (see docs/on-disk-format.md).
//!
//! | table       | key                  | value                          |
//! |-------------|----------------------|--------------------------------|
//! | meta        | &str                 | u64 (`schema_version`)         |
//! | txs         | u64 tx id            | TxRecord                       |
//! | revisions   | (u64 tx, u32 rev)    | RevisionRecord                 |
//! | blobs       | [u8; 32] blake3      | raw bytes                      |
//! | batches     | u64 batch id         | BatchRecord                    |
//! | inflight    | u64 batch id         | ()  (non-terminal batches)     |
//! | receipts    | u64 batch id         | Receipt                        |
//! | events      | u64 seq              | EventRecord                    |
//!
//! Record values are `[format byte 1] ++ bincode 2 (standard config)` of the serde types
//! in `src/journal/records.rs`.

use redb::{TableDefinition, WriteTransaction};

/// Create the v1 tables (idempotent: opening an existing table is a no-op).
pub fn run(txn: &WriteTransaction) -> Result<(), redb::Error> {
    txn.open_table(TableDefinition::<&str, u64>::new("meta"))?;
    txn.open_table(TableDefinition::<u64, &[u8]>::new("txs"))?;
    txn.open_table(TableDefinition::<(u64, u32), &[u8]>::new("revisions"))?;
    txn.open_table(TableDefinition::<&[u8; 32], &[u8]>::new("blobs"))?;
    txn.open_table(TableDefinition::<u64, &[u8]>::new("batches"))?;
    txn.open_table(TableDefinition::<u64, ()>::new("inflight"))?;
    txn.open_table(TableDefinition::<u64, &[u8]>::new("receipts"))?;
    txn.open_table(TableDefinition::<u64, &[u8]>::new("events"))?;
    Ok(())
}
