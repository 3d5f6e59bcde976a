//! Interrupts during a batch: what Ctrl-C, `kill` or a closed terminal does to a commit
//! (docs/commit-protocol.md, "Interrupts").
//!
//! A process that dies in the middle of a batch leaves the workspace half-written until
//! the next recovery — correct, but a build or `git status` run in between sees it. An
//! [`Interrupt`] lets the process stop cleanly instead: the library marks the span
//! where dying would leave files half-written ([`Interrupt::guarding`], from a batch's
//! intent until its completion is durable) and checks [`Interrupt::requested`] where a
//! batch can still stop with every file as it was (between the staged temps, before
//! the first rename). A signal handler defers a signal inside that span and lets it
//! act as usual outside it; the CLI installs one for SIGINT, SIGTERM and SIGHUP
//! (`src/cli/signals.rs`). The library installs no handler: an embedder passes its own
//! `Interrupt` ([`crate::OpenOptions::interrupt`]) and decides what requests it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// A request to stop, shared by whoever asks (a signal handler, an embedder's cancel
/// button) and the journal handles opened with it. Every method is one atomic
/// operation, so a signal handler may call [`Interrupt::request`] and
/// [`Interrupt::guarding`] (async-signal-safe).
#[derive(Debug, Default)]
pub struct Interrupt {
    requested: AtomicBool,
    guards: AtomicUsize,
    batch_began: AtomicBool,
}

impl Interrupt {
    /// A new interrupt, not requested, guarding nothing.
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Ask the batches of the handles opened with it to stop where they still can:
    /// one still staging its temps reverts (every file as it was, the temps removed,
    /// the batch aborted) and fails with [`crate::Error::Interrupted`]; one already
    /// replacing files finishes. It stays requested: later batches stop before their
    /// first rename too.
    pub fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }

    /// Whether [`Interrupt::request`] was called.
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// Whether a batch of a handle opened with it is between its intent and its durable
    /// completion (or recovery is settling one): a process that dies now leaves files
    /// half-written until the next recovery, so a signal handler should
    /// [`Interrupt::request`] instead of letting the signal end the process.
    pub fn guarding(&self) -> bool {
        self.guards.load(Ordering::SeqCst) > 0
    }

    /// Whether a batch of a handle opened with it has reached its intent (in this
    /// process, ever; recovery does not count). A process that prints a batch's
    /// receipt after the batch's own span ends (the CLI) defers signals from then on
    /// too, so that a signal between the durable completion and the printed receipt
    /// does not end it silently with a status that reads as "interrupted, nothing
    /// done" (found by the breaker).
    pub fn batch_began(&self) -> bool {
        self.batch_began.load(Ordering::SeqCst)
    }

    /// Mark the span of one recovery pass until the guard drops.
    pub(crate) fn guard(self: &Arc<Self>) -> Guard {
        self.guards.fetch_add(1, Ordering::SeqCst);
        Guard(self.clone())
    }

    /// Mark the span of one batch until the guard drops, and that a batch began
    /// ([`Interrupt::batch_began`]).
    pub(crate) fn batch_guard(self: &Arc<Self>) -> Guard {
        self.batch_began.store(true, Ordering::SeqCst);
        self.guard()
    }
}

/// One batch's span of [`Interrupt::guarding`]; ends on drop.
#[derive(Debug)]
pub(crate) struct Guard(Arc<Interrupt>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.guards.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_nest_and_a_request_stays() {
        let i = Arc::new(Interrupt::new());
        assert!(!i.guarding() && !i.requested());
        let a = i.guard();
        assert!(!i.batch_began(), "a recovery pass is not a batch");
        let b = i.guard();
        drop(a);
        assert!(i.guarding());
        drop(b);
        assert!(!i.guarding());
        drop(i.batch_guard());
        assert!(i.batch_began() && !i.guarding());
        i.request();
        assert!(i.requested());
        assert!(i.requested());
    }
}
