//! Crash points for the crash-injection tests (docs/design.md, "Failpoints").
//!
//! `crash_point!("batch::after_intent")` sits right *after* the step it names. Built with
//! the cargo feature `failpoints`, the `fail` crate evaluates it against the
//! `FAILPOINTS` environment variable; any configured `return` action calls
//! `std::process::abort()`, a real process death with no destructors and no flushing.
//! Without the feature the macro expands to nothing.

/// A point where a test may kill the process. See the module docs.
#[cfg(feature = "failpoints")]
macro_rules! crash_point {
    ($name:literal) => {
        fail::fail_point!($name, |_| { std::process::abort() })
    };
}
/// Without `failpoints`: nothing (the `fail` crate is not even a dependency).
#[cfg(not(feature = "failpoints"))]
macro_rules! crash_point {
    ($name:literal) => {
        ()
    };
}
pub(crate) use crash_point;

/// A point where a test may inject an I/O error into a filesystem operation.
///
/// Built with `failpoints`, `FAILPOINTS="fs::rename=2*off->return(28)"` makes the third
/// rename fail with errno 28 (ENOSPC); `return` without an argument gives EIO. The
/// enclosing function must return `std::io::Result<_>`.
#[cfg(feature = "failpoints")]
macro_rules! io_fault {
    ($name:literal) => {
        fail::fail_point!($name, |errno: Option<String>| {
            Err($crate::failpoint::injected_error(errno))
        })
    };
}
/// Without `failpoints`: nothing.
#[cfg(not(feature = "failpoints"))]
macro_rules! io_fault {
    ($name:literal) => {
        ()
    };
}
pub(crate) use io_fault;

/// The error an [`io_fault!`] injects: the errno given as its argument, else EIO.
#[cfg_attr(not(feature = "failpoints"), allow(dead_code))]
pub(crate) fn injected_error(errno: Option<String>) -> std::io::Error {
    let code = errno.and_then(|e| e.trim().parse().ok()).unwrap_or(5);
    std::io::Error::from_raw_os_error(code)
}
