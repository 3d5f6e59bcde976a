//! [`JournalError`]: the journal could not be read or written, or refused a state change.

use super::Error;
use crate::journal::records::{BatchState, TxState};

impl Error {
    /// A damaged or missing blob's error ([`JournalError::Corrupt`],
    /// [`JournalError::Missing`]) with what needs the blob: `needed` says which file of
    /// which tx, revision or batch, and what for (issue 33, item 12: the hashes alone
    /// do not tell a person what is lost). Other errors are returned as they are.
    pub(crate) fn needed_by(self, needed: impl FnOnce() -> String) -> Error {
        match self {
            Error::Journal(JournalError::Corrupt { table, message }) => {
                Error::Journal(JournalError::Corrupt {
                    table,
                    message: format!("{message} (it is {})", needed()),
                })
            }
            Error::Journal(JournalError::Missing { what }) => {
                Error::Journal(JournalError::Missing {
                    what: format!("{what} ({})", needed()),
                })
            }
            e => e,
        }
    }
}

/// Errors decoding or reading the journal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// redb failed (I/O, corruption, lock protocol).
    #[error("journal storage error: {0}; if the disk is full or not writable, fix that and retry; if the journal file is damaged, see \"When the journal is damaged\" in the README (the tree's files are not affected)")]
    Storage(String),
    /// A record starts with a format byte this binary does not know.
    #[error("journal record in table {table} has unknown format byte {byte}; it was written by a newer ultra-edit or is damaged (see \"When the journal is damaged\" in the README)")]
    UnknownFormat {
        /// Table name.
        table: &'static str,
        /// The first byte found.
        byte: u8,
    },
    /// A record could not be decoded.
    #[error("journal record in table {table} is damaged: {message}; a verify of the journal lists every damaged record, and \"When the journal is damaged\" in the README says how to recover")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// Decoder message.
        message: String,
    },
    /// The journal's schema is newer than this binary.
    #[error("journal schema version {found} is newer than this ultra-edit (supports up to {supported}); upgrade ultra-edit, the journal was not modified")]
    SchemaTooNew {
        /// Version found in the meta table.
        found: u64,
        /// [`crate::SCHEMA_VERSION`].
        supported: u64,
    },
    /// A verb panicked, most likely inside redb on a damaged journal file.
    #[error("internal failure ({message}); the journal file may be damaged: see \"When the journal is damaged\" in the README, and keep a copy of .ultra-edit/ for a bug report")]
    Panicked {
        /// The panic message.
        message: String,
    },
    /// An earlier write through this handle failed with an I/O error (a full disk, a
    /// failing device), and redb refuses every later use of the same handle
    /// (redb's `StorageError::PreviousIo`: "close and re-open the database"). The
    /// journal file is not damaged by it: open the journal again (a new handle; a new
    /// CLI process does that), and the open's recovery settles any batch the failure
    /// left in flight — a commit whose receipt was returned is recorded with that
    /// receipt (docs/commit-protocol.md, "Errors inside a batch").
    #[error("this journal handle refuses further use after an earlier I/O error ({cause}); nothing recorded is lost: open the journal again, and its recovery settles any batch left in flight")]
    HandleFailed {
        /// redb's message.
        cause: String,
    },
    /// `journal verify` found problems (listed in its report).
    #[error("journal verify found {problems} problem(s); the journal was not modified; see \"When the journal is damaged\" in the README")]
    Damaged {
        /// How many.
        problems: usize,
    },
    /// A state change that its state machine does not allow was attempted; nothing of
    /// the write it was part of was recorded. Either another process changed the
    /// record meanwhile, or this is a bug.
    #[error("journal refused {0}; nothing was written (another process may have changed it meanwhile: run the command again)")]
    IllegalTransition(Transition),
    /// A record that another record references is missing.
    #[error("journal is missing {what}; a verify of the journal lists every damaged record, and \"When the journal is damaged\" in the README says how to recover")]
    Missing {
        /// Description of the missing record.
        what: String,
    },
}

/// A refused state change (see [`JournalError::IllegalTransition`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Transition {
    /// Of a transaction ([`TxState::can_become`]).
    #[error("to move tx {tx} from {from} to {to}")]
    Tx {
        /// Transaction id.
        tx: u64,
        /// Its recorded state.
        from: TxState,
        /// The state asked for.
        to: TxState,
    },
    /// Of a batch ([`BatchState::can_become`]), judged against the recorded batch.
    #[error("to move batch {batch} from {from} to {to}")]
    Batch {
        /// Batch id.
        batch: u64,
        /// Its recorded state.
        from: BatchState,
        /// The state asked for.
        to: BatchState,
    },
    /// A new batch that does not start `Committing` (or `Prepared`, as earlier versions
    /// wrote it), or a batch id already used.
    #[error("to insert batch {batch} in state {state} (a batch starts committing, or prepared as earlier versions wrote it, under a new id)")]
    NewBatch {
        /// Batch id.
        batch: u64,
        /// The state it was given.
        state: BatchState,
    },
    /// A revision that is not the next one of its open tx.
    #[error(
        "to record revision {revision} of tx {tx}, whose next revision is {next} (state {state})"
    )]
    Revision {
        /// Transaction id.
        tx: u64,
        /// The revision number given.
        revision: u32,
        /// The tx's next revision number.
        next: u32,
        /// The tx's state.
        state: TxState,
    },
}

/// A redb error as a [`JournalError`]: [`JournalError::HandleFailed`] when redb
/// refuses the handle after an earlier I/O error, else [`JournalError::Storage`].
fn from_redb(storage: Option<&redb::StorageError>, text: String) -> JournalError {
    match storage {
        Some(redb::StorageError::PreviousIo) => JournalError::HandleFailed { cause: text },
        _ => JournalError::Storage(text),
    }
}

macro_rules! storage_from {
    ($($t:ty => $storage:expr),* $(,)?) => {$(
        impl From<$t> for JournalError {
            fn from(e: $t) -> Self {
                let storage: fn(&$t) -> Option<&redb::StorageError> = $storage;
                from_redb(storage(&e), e.to_string())
            }
        }
        impl From<$t> for Error {
            fn from(e: $t) -> Self { Error::Journal(JournalError::from(e)) }
        }
    )*};
}
storage_from!(
    redb::Error => |e| match e {
        redb::Error::PreviousIo => Some(&redb::StorageError::PreviousIo),
        _ => None,
    },
    redb::DatabaseError => |e| match e {
        redb::DatabaseError::Storage(s) => Some(s),
        _ => None,
    },
    redb::TransactionError => |e| match e {
        redb::TransactionError::Storage(s) => Some(s),
        _ => None,
    },
    redb::TableError => |e| match e {
        redb::TableError::Storage(s) => Some(s),
        _ => None,
    },
    redb::StorageError => |e| Some(e),
    redb::CommitError => |e| match e {
        redb::CommitError::Storage(s) => Some(s),
        _ => None,
    },
);
