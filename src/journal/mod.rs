//! The journal: a redb database at `<root>/.ultra-edit/journal.redb`.
//!
//! [`Store`] owns the database and gives typed access to its tables through [`Reader`]
//! (one read transaction) and [`Writer`] (one durable write transaction). Every write
//! transaction commits with `Durability::Immediate`: when [`Store::write`] returns, the
//! records are on disk. The database is opened in redb's `ConcurrencyMode::MultiWriter`
//! so other processes (an embedding server, `journal dump`, another agent's CLI) can
//! keep it open at the same time (docs/design.md, "Journal").

pub(crate) mod blobs;
pub mod codec;
mod gc;
pub(crate) mod pending;
mod reader;
pub mod records;
pub(crate) mod splice;
mod store;
mod transitions;
pub(crate) mod window;
mod writer;

use redb::{ReadableTable, TableDefinition};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::Result;
use records::*;

#[path = "../../migrations/mod.rs"]
mod migrations;
pub(crate) use gc::gc_dropped_images;
pub use gc::GcCounts;
pub use migrations::SCHEMA_VERSION;
pub use reader::Reader;
pub(crate) use store::file_is_half_made;
pub(crate) use store::on_read_only_media;
pub use store::{Identity, Store};
pub use transitions::ChainLink;
pub use writer::Writer;

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const TXS: TableDefinition<u64, &[u8]> = TableDefinition::new("txs");
const REVISIONS: TableDefinition<(u64, u32), &[u8]> = TableDefinition::new("revisions");
const BATCHES: TableDefinition<u64, &[u8]> = TableDefinition::new("batches");
const INFLIGHT: TableDefinition<u64, ()> = TableDefinition::new("inflight");
const RECEIPTS: TableDefinition<u64, &[u8]> = TableDefinition::new("receipts");
const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
/// The journal's settings (`&str` → raw bytes; docs/on-disk-format.md): `check`, the
/// default check command (UTF-8). Created by the first setting written; a journal
/// without it has no settings, and a version that does not know it ignores it.
const SETTINGS: TableDefinition<&str, &[u8]> = TableDefinition::new("settings");

/// An event as stored (its seq is the key).
#[derive(Serialize, Deserialize)]
struct EventRecord {
    at_ms: u64,
    kind: EventKind,
}

fn get_rec<K: redb::Key + 'static, T: DeserializeOwned>(
    table: &impl ReadableTable<K, &'static [u8]>,
    name: &'static str,
    key: K::SelfType<'_>,
) -> Result<Option<T>> {
    match table.get(key)? {
        Some(v) => Ok(Some(codec::decode(name, v.value())?)),
        None => Ok(None),
    }
}
