//! Crash points for the crash-injection tests (design brief, "Failpoints").
//!
//! `crash_point!("batch::after_intent")` sits right *after* the step it names. Built with
//! the cargo feature `failpoints`, the `fail` crate evaluates it against the
//! `FAILPOINTS` environment variable; any configured `return` action calls
//! `std::process::abort()`, a real process death with no destructors and no flushing.
//! Without the feature the macro expands to nothing.

/// A point where a test may kill the process. See the module docs.
macro_rules! crash_point {
    ($name:literal) => {
        fail::fail_point!($name, |_| { std::process::abort() })
    };
}
pub(crate) use crash_point;
