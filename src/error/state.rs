//! Errors as data: why a verb does not fit a transaction's state ([`StateReason`]),
//! what a batch that needs attention left on disk ([`Attention`], [`Outcome`]), and the
//! next step ([`NextStep`]) that the CLI, the MCP server and an embedder each put in
//! their own words (docs/embedding.md, "Errors as data").

use serde::{Deserialize, Serialize};

use crate::journal::records::{BatchState, TxRecord, TxState};

/// The verb a [`super::Error::WrongState`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verb {
    /// `commit`.
    Commit,
    /// Apply a revision (the intent of a commit, under the lock).
    Apply,
    /// `revise`.
    Revise,
    /// `rebase`.
    Rebase,
    /// `show`.
    Show,
    /// `abort`.
    Abort,
    /// `rollback`.
    RollBack,
    /// `revert`.
    Revert,
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verb::Commit => "be committed",
            Verb::Apply => "be applied",
            Verb::Revise => "be revised",
            Verb::Rebase => "be rebased",
            Verb::Show => "be shown",
            Verb::Abort => "be aborted",
            Verb::RollBack => "be rolled back",
            Verb::Revert => "be reverted",
        })
    }
}

/// Why a transaction's state does not allow a verb.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StateReason {
    /// A revision of it was applied by a batch.
    Committed {
        /// The revision applied.
        revision: u32,
        /// The batch that applied it.
        batch: u64,
    },
    /// Another revision of it was applied by a batch: a commit of revision `asked` is
    /// refused, and neither is it "already committed" (the change on disk is
    /// `revision`'s).
    OtherRevisionCommitted {
        /// The revision applied.
        revision: u32,
        /// The batch that applied it.
        batch: u64,
        /// The revision the commit asked for (its latest when it named none).
        asked: u32,
    },
    /// A rollback transaction restored the files it changed.
    RolledBack {
        /// The rollback transaction (the tx's `rolled_back_by`, as `log` shows it).
        by: u64,
        /// The tx whose rollback redoes the change now: `by` while `by`'s own change
        /// is live; `None` when nothing would redo it, because `by`'s change is
        /// already undone (rolled back, or its files hold their old content again, so
        /// they hold this tx's new content), and `rollback` of `by` would be refused.
        redo: Option<u64>,
    },
    /// It was aborted.
    Aborted,
    /// It is open: not committed yet.
    NotCommitted,
    /// `journal gc` dropped its revisions and images.
    Pruned,
    /// A batch of it is in flight (a commit under way or interrupted) or needs
    /// attention: recovery, not a verb, settles it.
    BatchInFlight {
        /// The batch.
        batch: u64,
        /// Its state.
        state: BatchState,
    },
    /// It changed while the verb ran (another process revised, committed or aborted it).
    ChangedMeanwhile,
    /// It is the rollback transaction of tx `of`, which only `rollback` applies.
    RollbackTx {
        /// The tx it rolls back.
        of: u64,
    },
    /// Every file it changed already holds its old content again (another
    /// transaction, or an edit, undid its change): there is nothing to roll back.
    AlreadyUndone,
    /// Its change is live again through a redo: its rollback `undone_by` was itself
    /// rolled back, and `redo` (the top of that chain of rollbacks, still committed)
    /// holds the change now. Rolling back `redo` undoes it and keeps every label in
    /// `log` true; a second rollback of this tx would leave `redo` marked committed
    /// with its change undone.
    Redone {
        /// The rollback that first undid it.
        undone_by: u64,
        /// The committed tx whose rollback undoes the change now.
        redo: u64,
    },
}

impl StateReason {
    /// The reason a tx's own state gives (its state and links) for `verb`. That `journal
    /// gc` pruned it is the reason only where the verb needs what gc dropped (`show`,
    /// `rollback`); a pruned committed tx is, for `commit`, first of all committed.
    pub(crate) fn of(rec: &TxRecord, verb: Verb) -> StateReason {
        if rec.pruned && matches!(verb, Verb::Show | Verb::RollBack | Verb::Revert) {
            return StateReason::Pruned;
        }
        match (rec.state, rec.committed, rec.rolled_back_by) {
            (TxState::Committed, Some(c), _) => StateReason::Committed {
                revision: c.revision,
                batch: c.batch,
            },
            // The journal alone says `by` redoes it; the verbs that refuse it check
            // `by` against the disk (`Journal::with_redo`).
            (TxState::RolledBack, _, Some(by)) => StateReason::RolledBack { by, redo: Some(by) },
            (TxState::Aborted, _, _) => StateReason::Aborted,
            _ => StateReason::NotCommitted,
        }
    }

    /// What the reason says, ending with "so it cannot {verb}".
    pub(crate) fn describe(&self, verb: Verb) -> String {
        match self {
            StateReason::Committed { revision, batch } => {
                format!("revision {revision} was applied by batch {batch}, so it cannot {verb}")
            }
            StateReason::OtherRevisionCommitted {
                revision,
                batch,
                asked,
            } => format!(
                "revision {revision} was applied by batch {batch}, not revision {asked}, so revision {asked} cannot {verb}"
            ),
            StateReason::RolledBack { by, .. } => {
                format!("tx {by} rolled it back, so it cannot {verb}")
            }
            // An aborted tx never reached the disk: undoing it has nothing to undo.
            StateReason::Aborted if matches!(verb, Verb::RollBack | Verb::Revert) => {
                format!("it never changed a file, so it cannot {verb}")
            }
            StateReason::Aborted => {
                format!("an aborted tx accepts nothing further, so it cannot {verb}")
            }
            StateReason::NotCommitted => format!("it is not committed, so it cannot {verb}"),
            StateReason::Pruned => {
                format!("the journal's gc dropped its revisions and images, so it cannot {verb}")
            }
            StateReason::BatchInFlight {
                batch,
                state: BatchState::NeedsAttention,
            } => format!("its batch {batch} needs attention (a file holds bytes that are neither its old nor its new content), so it cannot {verb}"),
            StateReason::BatchInFlight { batch, state } => format!(
                "its batch {batch} is {state} (a commit under way, or interrupted), so it cannot {verb}"
            ),
            StateReason::ChangedMeanwhile => format!(
                "it changed, or a commit of it is under way, while it was read, so it cannot {verb} now"
            ),
            StateReason::RollbackTx { of } => {
                format!("it is the rollback of tx {of}, which only a rollback applies, so it cannot {verb}")
            }
            StateReason::AlreadyUndone => format!(
                "every file it changed already holds its old content again, so there is nothing to roll back and it cannot {verb}"
            ),
            StateReason::Redone { undone_by, redo } => format!(
                "tx {undone_by} rolled it back and tx {redo} redid it, so its change is tx {redo}'s now and it cannot {verb} itself"
            ),
        }
    }
}

/// What a batch that could neither finish nor revert by itself left behind
/// ([`super::Error::NeedsAttention`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Attention {
    /// Files hold bytes that are neither the batch's old nor its new content (someone
    /// wrote them); they were left untouched and their bytes kept in the journal.
    ForeignBytes {
        /// Why the batch was being settled (the error that stopped it), if it stopped.
        cause: Option<String>,
        /// The files, root-relative.
        paths: Vec<String>,
    },
    /// The batch stopped after its commit point and the journal could not record a
    /// revert: the batch stays past its commit point and the next recovery completes
    /// it.
    RevertNotRecorded {
        /// What stopped the batch.
        cause: String,
        /// The journal's error.
        journal: String,
        /// The files that already hold the new content.
        installed: Vec<String>,
    },
    /// The journal write of the commit point (the intent) failed and the journal could
    /// not be asked whether it reached the disk anyway: the next recovery completes the
    /// batch if it did; else nothing was done. No file was touched yet.
    CommitPointUnknown {
        /// The error writing the commit point.
        cause: String,
        /// The error asking the journal whether the commit point is there.
        again: String,
    },
    /// The batch landed — every file holds its new content durably and the receipt was
    /// returned — but the journal could not record its completion (the write after
    /// the receipt, docs/commit-protocol.md step 7): the batch stays `committing`, and
    /// the next recovery completes it with the same receipt.
    CompletionNotRecorded {
        /// The journal's error.
        journal: String,
        /// The files of the batch, root-relative: all hold the new content.
        files: Vec<String>,
    },
    /// The revert after an error could not finish: the batch stays `reverting`, and the
    /// next recovery finishes the revert. Each file holds its old or its new content.
    RevertIncomplete {
        /// What stopped the batch.
        cause: String,
        /// What stopped the revert.
        error: String,
    },
}

/// Whether a batch that needs attention may still land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The next recovery completes it: its change lands.
    WillLand,
    /// The next recovery reverts it: every file returns to its old content.
    WillRevert,
    /// The next recovery decides from the journal: it lands if its commit point became
    /// durable, else it is reverted.
    MayLand,
    /// Nothing settles it until the foreign bytes are gone (put back, or overwritten
    /// with `recover --overwrite`).
    NeedsAPerson,
}

impl Attention {
    /// Whether the batch may still land.
    pub fn outcome(&self) -> Outcome {
        match self {
            Attention::ForeignBytes { .. } => Outcome::NeedsAPerson,
            Attention::RevertNotRecorded { .. } => Outcome::WillLand,
            Attention::CommitPointUnknown { .. } => Outcome::MayLand,
            Attention::CompletionNotRecorded { .. } => Outcome::WillLand,
            Attention::RevertIncomplete { .. } => Outcome::WillRevert,
        }
    }
}

impl std::fmt::Display for Attention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attention::ForeignBytes { cause, paths } => {
                if let Some(cause) = cause {
                    write!(f, "the batch stopped ({cause}); while reverting, ")?;
                }
                write!(
                    f,
                    "{} hold(s) bytes that are neither the old nor the new content; left untouched, their bytes kept in the journal",
                    paths.join(", ")
                )
            }
            Attention::RevertNotRecorded {
                cause,
                journal,
                installed,
            } => {
                write!(f, "the batch stopped ({cause}) and the journal could not record the revert ({journal}); ")?;
                if installed.is_empty() {
                    f.write_str("no file holds the new content yet")?;
                } else {
                    write!(
                        f,
                        "{} already {} the new content ({})",
                        super::count(installed.len(), "file"),
                        if installed.len() == 1 { "holds" } else { "hold" },
                        super::and_list(installed)
                    )?;
                }
                f.write_str(", and the next recovery completes the batch")
            }
            Attention::CommitPointUnknown { cause, again } => write!(
                f,
                "the journal write of the commit point failed ({cause}) and the journal cannot say whether it reached the disk ({again}); no file was touched, and the next recovery completes the batch if its commit point reached the disk, else there is nothing to undo"
            ),
            Attention::CompletionNotRecorded { journal, files } => write!(
                f,
                "the batch landed ({} {} the new content: {}) but the journal could not record its completion ({journal}); the batch stays committing and the next recovery completes it with the same receipt",
                super::count(files.len(), "file"),
                if files.len() == 1 { "holds" } else { "hold" },
                super::and_list(files)
            ),
            Attention::RevertIncomplete { cause, error } => write!(
                f,
                "the batch stopped ({cause}) and the revert could not finish ({error}); the batch stays reverting, each file holds its old or its new content, and the next recovery finishes the revert"
            ),
        }
    }
}

/// The step that gets past an error, as data: the CLI renders it as a command, the MCP
/// server as a tool call, an embedder as it likes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
#[non_exhaustive]
pub enum NextStep {
    /// Create the workspace's journal (`init`).
    Init,
    /// List the transactions (`log`).
    Log,
    /// Show a transaction (`show`).
    Show {
        /// Its id.
        tx: u64,
    },
    /// Rebase the preview onto the disk (`rebase`), or preview again.
    Rebase {
        /// The tx.
        tx: u64,
    },
    /// Write the plan against the latest revision, or revise with rebase.
    ReviseOnLatest {
        /// The tx.
        tx: u64,
        /// Its latest revision.
        latest: u32,
    },
    /// Resolve the conflicts of the latest revision in a new revision (`resolve` in
    /// an editor, or `revise`).
    Resolve {
        /// The tx.
        tx: u64,
    },
    /// Make a revision that fixes what validation found (`revise`).
    Revise {
        /// The tx.
        tx: u64,
    },
    /// Commit it (`commit`).
    Commit {
        /// The tx.
        tx: u64,
    },
    /// Drop it (`abort`), or revise it with a new plan: its latest revision changes
    /// nothing (every file holds its candidate already), so there is nothing to commit.
    Abort {
        /// The tx.
        tx: u64,
    },
    /// Roll it back (`rollback`).
    RollBack {
        /// The tx.
        tx: u64,
    },
    /// Roll back the rollback that undid it: redo (`rollback`).
    Redo {
        /// The rollback tx whose rollback redoes it now.
        by: u64,
    },
    /// Nothing redoes the rolled-back tx `tx`: the change of `by`, the rollback that
    /// undid it, is itself undone already, so the files `by` restored hold `tx`'s new
    /// content again (`log` lists the history).
    NothingToRedo {
        /// The rolled-back tx.
        tx: u64,
        /// The rollback that undid it.
        by: u64,
    },
    /// Roll it back with force (`rollback --force`): the changed files' current bytes
    /// are kept in the journal first.
    ForceRollBack {
        /// The tx.
        tx: u64,
    },
    /// Roll back the later tx `later` that wrote the same files first, then `tx`; a
    /// forced rollback of `tx` would undo `later`'s change to them too.
    RollBackLaterFirst {
        /// The newest later tx that wrote one of the files.
        later: u64,
        /// The tx whose rollback was refused.
        tx: u64,
    },
    /// Run the roll back of `of` again.
    RollBackAgain {
        /// The tx to roll back.
        of: u64,
    },
    /// Start over with a new preview.
    PreviewAgain,
    /// Read what the journal kept of a pruned tx (`log`, `journal dump --tx`).
    History {
        /// The tx.
        tx: u64,
    },
    /// Let recovery settle the batch (`recover`, or any next command).
    Recover,
    /// Put the files back and recover, or recover overwriting them (`recover
    /// --overwrite`; their bytes are kept in the journal).
    RecoverForeign,
    /// A person decides what the files of batch `batch` (of tx `tx`) should hold: they
    /// hold a later commit's content, which `recover --overwrite` will not undo. To give
    /// them the batch's content, move them aside (or put back the bytes the batch found,
    /// which `journal dump --tx` lists) and recover with `--overwrite`
    /// ([`super::Error::OverwriteUndoesCommit`]).
    DecideByHand {
        /// The transaction of the batch.
        tx: u64,
        /// The batch that needs attention.
        batch: u64,
    },
    /// Run the same command again.
    Retry,
    /// Accept that the files get this process's owner (`--allow-owner-change`), or run
    /// as their owner or as root.
    AllowOwnerChange {
        /// The tx.
        tx: u64,
    },
    /// Wait for the lock holder, or wait longer (`--lock-timeout`).
    WaitForLock,
    /// Remount the workspace's filesystem read-write, then run the command again.
    RemountWritable,
    /// Run the command as the journal's owner, or have its owner (or root) give this
    /// user access to the state directory.
    RunAsJournalOwner {
        /// The state directory's owner (uid).
        owner: u32,
    },
    /// Run recovery (`recover`) as root or as the user who owns the batch's files: an
    /// interrupted batch writes files this user cannot give their owner.
    RecoverAsOwner {
        /// The owner (uid) of the first such file.
        uid: u32,
    },
    /// Mount the filesystem with POSIX ACL support, or remove the files' ACLs and
    /// preview again.
    MountWithAcls,
    /// Fix the disk (full, read-only) or restore the journal ("When the journal is
    /// damaged" in the README).
    RepairJournal,
}
