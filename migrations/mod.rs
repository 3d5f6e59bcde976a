//! Schema steps of the journal, one file per step (design brief, "Journal").
//!
//! The schema version lives in the `meta` table under `schema_version`. On open, a
//! journal older than [`SCHEMA_VERSION`] is brought up to date by running every step
//! from its version to this one; a newer journal is refused and never rewritten.
//! `v0001_initial.rs` is schema v1: the tables themselves.

#[path = "v0001_initial.rs"]
pub mod v0001_initial;

/// The schema version this binary writes.
pub const SCHEMA_VERSION: u64 = 1;

/// A step from `from` to `from + 1`, run inside one redb write transaction.
pub struct Step {
    /// The version the step starts from.
    pub from: u64,
    /// The step itself.
    pub run: fn(&redb::WriteTransaction) -> Result<(), redb::Error>,
}

/// Every step, in order. Version 0 is "no tables yet".
pub const STEPS: &[Step] = &[Step {
    from: 0,
    run: v0001_initial::run,
}];
