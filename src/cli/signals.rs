//! SIGINT (Ctrl-C), SIGTERM and SIGHUP during a command (docs/commit-protocol.md,
//! "Interrupts").
//!
//! Outside a batch a signal ends the process as usual: nothing is half-written then (a
//! journal write is one redb transaction). From a batch's intent until the process
//! exits (the receipt printed), and while recovery settles a batch, the handler only
//! records the request ([`Interrupt::request`]): a batch still staging its temps
//! reverts and the command exits 130; one already replacing files finishes, and the
//! command prints its receipt and says so. SIGKILL cannot be caught; recovery settles
//! what it interrupts.

use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::low_level::{emulate_default_handler, register};
use ultra_edit::Interrupt;

/// Install the handler for SIGINT, SIGTERM and SIGHUP and return the interrupt it
/// requests, for [`ultra_edit::OpenOptions::interrupt`]. `None` (the signals keep their
/// default action) when a handler cannot be installed.
pub fn install() -> Option<Arc<Interrupt>> {
    let interrupt = Arc::new(Interrupt::new());
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        let i = interrupt.clone();
        // SAFETY: the action is async-signal-safe: atomic operations, and
        // `emulate_default_handler`, which signal-hook documents as async-signal-safe
        // (it restores the default action and raises the signal again).
        let installed = unsafe {
            register(signal, move || {
                // After a batch began, the rest of the command (its receipt) is
                // quick, and dying there would read as "interrupted, nothing done".
                if i.guarding() || i.batch_began() {
                    i.request();
                } else {
                    let _ = emulate_default_handler(signal);
                }
            })
        };
        if installed.is_err() {
            return None;
        }
    }
    Some(interrupt)
}
