//! Schema v5: the journal gets an identity, so that a transaction can be named across
//! journals (`TxHandle`, src/handle.rs).
//!
//! A new table `identity` (`&str` → bytes) holds `nonce`: 16 random bytes drawn by this
//! step, once per journal. The journal's id is derived from the nonce and the canonical
//! root it is opened for (`JournalId::derive`), so nothing else needs storing for it;
//! `root`, the root the journal was made for, is written by the first writable open
//! after the step (a step does not know the root: a journal may live in a state
//! directory outside it) and is then never changed: it is how a journal in a state
//! directory outside the root refuses to serve another root, and how a handle of the
//! original is told apart from a foreign one in a copy (docs/embedding.md, "Handles").
//!
//! Nothing existing is rewritten; a journal of any earlier version gets a fresh nonce.

use redb::{ReadableTable, TableDefinition, WriteTransaction};

use crate::error::Result;

/// The `identity` table.
pub const IDENTITY: TableDefinition<&str, &[u8]> = TableDefinition::new("identity");

/// Create `identity` and draw the journal's nonce (unless a nonce is there already).
pub fn run(txn: &WriteTransaction) -> Result<()> {
    let mut table = txn.open_table(IDENTITY)?;
    if table.get("nonce")?.is_none() {
        let nonce = crate::handle::random_nonce();
        table.insert("nonce", nonce.as_slice())?;
    }
    Ok(())
}
