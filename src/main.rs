//! The `ultra-edit` command: a thin layer over the `ultra_edit` library.

/// `eprintln!` for the whole binary (this definition shadows std's in `main` and in
/// every module of `cli`), without std's panic when standard error cannot be written:
/// a pipe nobody reads any more (`ultra-edit show 9 2>&1 | true`, a log reader that
/// went away) made every error panic, and the panic's own report panicked again, so
/// the process exited 101 instead of the error's code (1, 2, 3, …). What cannot be
/// written is dropped; the exit code still says what happened. Found by the breaker.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` without the panic, as [`eprintln!`] above.
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod cli;

fn main() {
    #[cfg(feature = "failpoints")]
    let _scenario = fail::FailScenario::setup();
    // The library turns panics (redb's, on a damaged journal) into errors whose message
    // carries the panic's; keep the default hook from printing a backtrace notice too.
    std::panic::set_hook(Box::new(|_| {}));
    let code = std::panic::catch_unwind(cli::run).unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!("error: internal failure ({msg}); please report it with a copy of .ultra-edit/");
        1
    });
    std::process::exit(code);
}
