//! Progress on a terminal for the commands that can take long: `preview`, `revise`,
//! `commit`, `rollback` (issue 33, item 14). A spinner with the command's words is
//! drawn on standard error once the work has run for [`DELAY`] (1 s), and cleared
//! when it ends; nothing is drawn when standard error is not a terminal, so a script's
//! stderr holds only the command's own messages.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long work runs before its spinner is drawn: a quick command draws nothing.
pub const DELAY: Duration = Duration::from_secs(1);

/// Whether a spinner is drawn: on a terminal's standard error, once the work has
/// taken at least [`DELAY`]. `stderr_is_terminal` and `elapsed` are the caller's (the
/// CLI passes `isatty(2)` and the time since the work began).
pub fn draws(stderr_is_terminal: bool, elapsed: Duration) -> bool {
    stderr_is_terminal && elapsed >= DELAY
}

/// A spinner for the work under way: drawn from [`DELAY`] on while it lives (a thread
/// waits for the delay), cleared when dropped.
pub struct Spinner {
    done: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    /// Start the spinner for `message` (e.g. `"commit tx 3: writing 12 file(s)"`); a
    /// no-op off a terminal.
    pub fn start(message: String) -> Spinner {
        let on_terminal = std::io::stderr().is_terminal();
        if !on_terminal {
            return Spinner {
                done: None,
                thread: None,
            };
        }
        let (done, wait) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ue-progress".into())
            .spawn(move || {
                // Ended (or dropped) before the delay: nothing is drawn.
                if wait.recv_timeout(DELAY) != Err(RecvTimeoutError::Timeout) {
                    return;
                }
                if !draws(on_terminal, DELAY) {
                    return;
                }
                let bar = indicatif::ProgressBar::with_draw_target(
                    None,
                    indicatif::ProgressDrawTarget::stderr(),
                )
                .with_elapsed(DELAY);
                bar.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                );
                bar.set_message(message);
                bar.enable_steady_tick(Duration::from_millis(120));
                // Until the work ends (a message, or the sender dropped).
                let _ = wait.recv();
                bar.finish_and_clear();
            })
            .ok();
        Spinner {
            done: Some(done),
            thread,
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Run `work` with a spinner saying `message` ([`Spinner`]).
pub fn with<T>(message: impl Into<String>, work: impl FnOnce() -> T) -> T {
    let _spinner = Spinner::start(message.into());
    work()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drawn only on a terminal, and only from one second on.
    #[test]
    fn a_spinner_is_drawn_on_a_terminal_after_a_second_only() {
        let ms = Duration::from_millis;
        assert!(!draws(true, ms(0)));
        assert!(!draws(true, ms(999)));
        assert!(draws(true, ms(1000)));
        assert!(draws(true, ms(26_000)));
        assert!(!draws(false, ms(1000)));
        assert!(!draws(false, ms(26_000)));
    }
}
