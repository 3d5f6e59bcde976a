//! # Ultra Edit
//!
//! File edits as database transactions: preview an edit in memory, revise it, commit it
//! to many files at once — all of them or none — and roll any commit back to the exact
//! previous bytes. Every revision, snapshot hash, candidate diff and rollback blob is
//! recorded in a redb journal at `<root>/.ultra-edit/journal.redb`, and a recovery pass
//! on every open completes or reverts any batch a crash interrupted.
//!
//! ```no_run
//! use ultra_edit::{Journal, Plan, CommitOptions, RollbackOptions};
//! # fn main() -> Result<(), ultra_edit::Error> {
//! let mut journal = Journal::init(std::path::Path::new("."))?;
//! journal.set_reingest_hook(|paths| println!("reingest {paths:?}"));
//! let plan = Plan::from_json(br#"{"edits":[{"op":"create_file","path":"hello.txt","content":"hi\n"}]}"#)?;
//! let preview = journal.preview(&plan)?;
//! let receipt = journal.commit(preview.tx, CommitOptions::default())?;
//! journal.rollback(receipt.tx, RollbackOptions::default())?;
//! # Ok(()) }
//! ```
//!
//! The lifecycle and its invariants, the journal, the commit protocol, the recovery
//! table and the CLI contract are described in `docs/design.md`; the rest of `docs/`
//! has the protocol's crash table, the on-disk format and the threat model.

mod access;
mod attention;
mod batch;
mod bytes;
pub mod clock;
mod commit;
mod conflicts;
mod dump;
pub mod edit;
mod engine;
pub mod error;
mod failpoint;
pub mod fs;
mod gc;
pub mod handle;
mod host;
mod interdiff;
pub mod interrupt;
pub mod journal;
mod lock;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod policy;
mod rebase;
mod recovery;
pub mod registry;
mod resolution;
mod revert;
mod revision;
#[doc(hidden)]
pub use revision::set_splice_from;
#[cfg(feature = "sandbox")]
pub mod sandbox;
pub mod syntax;
mod tx;
mod verify;
mod workspace;

pub use attention::AttentionEntry;
pub use clock::{Clock, ManualClock, SystemClock};
pub use commit::{CommitOptions, CommitReport, OverwriteAction, Overwritten, RollbackOptions};
pub use conflicts::{ConflictEntry, ConflictSide};
pub use dump::{DumpDetail, DumpEntry, DumpFilter};
pub use edit::{Edit, EditError, Issue, Plan, Severity};
pub use error::{
    Attention, Error, IoError, JournalError, MarkedFile, NextStep, Outcome, OwnedPath, PathError,
    ResolveError, Result, StaleWriter, StateReason, Transition, Verb,
};
#[cfg(feature = "sandbox")]
pub use error::{RefusedPath, SandboxError};
pub use gc::{GcPolicy, GcReport, JournalStats, PrunedTx};
pub use handle::{HandleParseError, JournalId, TxHandle, TxRef};
pub use host::Written;
pub use interdiff::{Interdiff, InterdiffFile};
pub use interrupt::Interrupt;
pub use journal::records::{
    BatchFile, BatchKind, BatchRecord, BatchState, BlobHash, BlobRef, BlobRole, CommandOrigin,
    CommitRef, Event, EventKind, FileConflict, FileMeta, FileRevision, FileState, ForeignWrite,
    Owner, Receipt, RevisionOrigin, RevisionRecord, StateChange, TxRecord, TxState, Xattrs,
    DEFAULT_NEW_FILE_MODE,
};
pub use journal::{GcCounts, SCHEMA_VERSION};
pub use policy::{Checks, Identical, Markers, Policy, ReadOnlyFiles, SamePath, SyntaxErrors};
pub use recovery::{RecoveryAction, RecoveryReport};
pub use registry::{KnownRoot, Registry};
pub use resolution::{Resolvable, ResolveFile, ResolveOptions};
pub use revert::{AgentRange, RevertOptions};
pub use tx::{AbortReport, FileSummary, LogEntry, Preview, PreviewOptions, ReviseOptions, Size};
pub use verify::{Problem, Subject, VerifyReport};
pub use workspace::{
    Journal, OpenOptions, PendingBatch, RecoverOptions, ReingestHook, Touched,
    DEFAULT_LOCK_TIMEOUT, STATE_DIR,
};
