//! Command-line interface (docs/design.md, "CLI contract"): raw args (clap) → library
//! call → output (human, or one JSON object with `--json`) → exit code per error kind.

mod advice;
mod args;
mod commands;
mod render;

use clap::Parser;

/// Parse the arguments, run the command, print, and return the exit code.
pub fn run() -> i32 {
    let cli = args::Cli::parse();
    let json = cli.json;
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            render::error(&e, json);
            e.exit_code()
        }
    }
}
