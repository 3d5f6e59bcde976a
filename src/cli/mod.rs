//! Command-line interface (docs/design.md, "CLI contract"): raw args (clap) → library
//! call → output (human, or one JSON object with `--json`) → exit code per error kind.

mod advice;
mod args;
mod color;
mod commands;
mod diffview;
mod help;
mod pager;
mod progress;
mod render;
mod signals;

/// Parse the arguments, run the command, print, and return the exit code.
pub fn run() -> i32 {
    let parsed = help::command()
        .try_get_matches()
        .and_then(|m| <args::Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed.and_then(run_options_before_the_command) {
        Ok(cli) => cli,
        Err(e) => return usage(e),
    };
    if let args::Command::Help { topic } = &cli.command {
        return help::print(topic, cli.json);
    }
    let json = cli.json;
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(failed) => {
            let commands::Failed {
                error,
                root,
                invocation,
                origin,
            } = *failed;
            let misplaced = root
                .as_deref()
                .map(|root| advice::misplaced(&error, root))
                .unwrap_or_default();
            render::error(&error, json, &misplaced, &invocation, origin);
            error.exit_code()
        }
    }
}

/// `run`'s command takes every word after `run`'s own options, hyphens too (so
/// `run -- sed -i …` works). A command whose first word is an option (`run --plan F`,
/// `run --check C` after the command) is run's option misplaced, never a shell command
/// (`sh -c '--plan F'` fails): a usage error that says where run's options go.
fn run_options_before_the_command(cli: args::Cli) -> Result<args::Cli, clap::Error> {
    if let args::Command::Run { command, .. } = &cli.command {
        if let Some(first) = command.first().filter(|w| w.starts_with('-')) {
            return Err(help::command().error(
                clap::error::ErrorKind::UnknownArgument,
                format!(
                    "`{first}` is not an option of `run` here, and a command cannot start with it: \
                     put run's options before `--` and the command after it \
                     (`ultra-edit run [OPTIONS] -- CMD`); to commit an edit plan, \
                     `ultra-edit preview --plan FILE` then `ultra-edit commit TX`"
                ),
            ));
        }
    }
    Ok(cli)
}

/// A command line clap refused (exit 2), or `--help` / `--version` (exit 0). Under
/// `--json` anywhere on the line, a refusal is the documented error object on stdout
/// too, kind `usage`.
fn usage(e: clap::Error) -> i32 {
    use clap::error::ErrorKind;
    let code = e.exit_code();
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) && code == 0
    {
        let _ = e.print();
        return code;
    }
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    let command = subcommand();
    let e = with_plan_tip(e, &command);
    render::usage_error(&e.render().to_string(), code, json, &command);
    code
}

/// clap's error, with a tip to use `--plan` when `preview` or `revise` got a stray
/// argument that looks like a plan file: one that exists (relative to the current
/// directory, as `--plan` reads it) or whose name ends in `.json`.
fn with_plan_tip(mut e: clap::Error, command: &str) -> clap::Error {
    use clap::builder::StyledStr;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument
        || !matches!(command, "ultra-edit preview" | "ultra-edit revise")
    {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return e;
    };
    let looks_like_a_plan =
        !arg.starts_with('-') && (arg.ends_with(".json") || std::path::Path::new(arg).is_file());
    if !looks_like_a_plan {
        return e;
    }
    let tip = StyledStr::from(format!(
        "to read the plan from the file '{arg}', use '--plan {arg}'"
    ));
    let tips = match e.get(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => {
            let mut tips = tips.clone();
            tips.push(tip);
            tips
        }
        _ => vec![tip],
    };
    e.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    e
}

/// The subcommand the command line names, as words: `ultra-edit journal gc` (just
/// `ultra-edit` when it names none).
fn subcommand() -> String {
    let mut words = vec!["ultra-edit".to_string()];
    let mut at = help::command();
    // args_os: an argument that is not UTF-8 is no subcommand (std::env::args panics).
    for arg in std::env::args_os().skip(1).take_while(|a| a != "--") {
        if let Some(sub) = arg.to_str().and_then(|a| at.find_subcommand(a)) {
            words.push(sub.get_name().to_string());
            at = sub.clone();
        }
    }
    words.join(" ")
}
