//! Schema steps of the journal, one file per step (docs/design.md, "Journal"; docs/on-disk-format.md).
//!
//! The schema version lives in the `meta` table under `schema_version`. On open, a
//! journal older than [`SCHEMA_VERSION`] is brought up to date by running every step
//! from its version to this one; a newer journal is refused and never rewritten.
//!
//! Policy (see docs/on-disk-format.md): before the steps of an existing journal run,
//! the file is copied to `journal.redb.v<old>.bak` and that copy is fsynced; all steps
//! then run in ONE redb write transaction, so a crash during a migration leaves the
//! old journal exactly as it was (and the backup besides). Steps never delete data a
//! later step or a rollback could need.
//!
//! - `v0001_initial.rs` — schema v1: the tables themselves.
//! - `v0002_tx_pruned.rs` — schema v2: `TxRecord.pruned`, for `journal gc`.
//! - `v0003_chunked_blobs.rs` — schema v3: blobs as content-defined chunks.
//! - `v0004_file_owner.rs` — schema v4: file states record owner and group.
//! - `v0005_journal_id.rs` — schema v5: the journal's identity (a random nonce, and the
//!   root it was made for), from which transaction handles are made.
//! - `v0006_manifest_pages.rs` — schema v6: a large blob's chunk list is a tree of
//!   content-addressed manifest pages (`blob_pages`); v3–v5 flat lists stay readable.

#[path = "v0001_initial.rs"]
pub mod v0001_initial;
#[path = "v0002_tx_pruned.rs"]
pub mod v0002_tx_pruned;
#[path = "v0003_chunked_blobs.rs"]
pub mod v0003_chunked_blobs;
#[path = "v0004_file_owner.rs"]
pub mod v0004_file_owner;
#[path = "v0005_journal_id.rs"]
pub mod v0005_journal_id;
#[path = "v0006_manifest_pages.rs"]
pub mod v0006_manifest_pages;

/// The schema version this binary writes.
pub const SCHEMA_VERSION: u64 = 6;

/// A step from `from` to `from + 1`, run inside the migration's write transaction.
pub struct Step {
    /// The version the step starts from.
    pub from: u64,
    /// The step itself.
    pub run: fn(&redb::WriteTransaction) -> crate::error::Result<()>,
}

/// Every step, in order. Version 0 is "no tables yet".
pub const STEPS: &[Step] = &[
    Step {
        from: 0,
        run: |txn| v0001_initial::run(txn).map_err(Into::into),
    },
    Step {
        from: 1,
        run: v0002_tx_pruned::run,
    },
    Step {
        from: 2,
        run: v0003_chunked_blobs::run,
    },
    Step {
        from: 3,
        run: v0004_file_owner::run,
    },
    Step {
        from: 4,
        run: v0005_journal_id::run,
    },
    Step {
        from: 5,
        run: v0006_manifest_pages::run,
    },
];
