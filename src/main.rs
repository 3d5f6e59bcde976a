//! The `ultra-edit` command: a thin layer over the `ultra_edit` library.

mod cli;

fn main() {
    #[cfg(feature = "failpoints")]
    let _scenario = fail::FailScenario::setup();
    let code = cli::run();
    std::process::exit(code);
}
