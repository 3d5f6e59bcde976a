//! The `ultra-edit` command: a thin layer over the `ultra_edit` library.

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
