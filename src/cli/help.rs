//! `ultra-edit help [TOPIC…]` and what each subcommand's `--json` help says.
//!
//! clap's own `help` subcommand is replaced by this one so that `help plan` can print
//! the plan format (docs/plan.md, compiled in) next to `help preview`,
//! `help journal dump` and the rest, which print that command's help.

use clap::CommandFactory;

use super::args::Cli;

/// The plan format: docs/plan.md, one section per op.
pub const PLAN: &str = include_str!("../../docs/plan.md");

/// What `--json` prints, per subcommand path (`"journal dump"`).
const JSON_HELP: &[(&str, &str)] = &[
    ("init", "Print one JSON object, {root, journal, created}, instead of text (created is false when the journal was there already: init is idempotent)"),
    ("preview", "Print the revision as one JSON object instead of text: {tx, handle, revision, latest_revision, state, base, files: [{path, snapshot, candidate, diff: {unified, lines_added, lines_removed, binary, lossy}}], validation, ready_to_commit, conflicts, conflict_list, …}"),
    ("revise", "Print the new revision as one JSON object instead of text: preview's fields (the whole change against the snapshot) plus interdiff {from, to, files, lines_added, lines_removed}, what it changed relative to the previous revision"),
    ("rebase", "Print the new revision as one JSON object instead of text (preview's fields; conflict_list names each conflict's file, lines and sides)"),
    ("show", "Print the revision as one JSON object instead of text (preview's fields; committed {revision, batch} names the revision a commit applied, null for an open or aborted tx); with --from/--to, the interdiff {tx, from, to, files: [{path, from, to, diff}], lines_added, lines_removed}"),
    ("resolve", "Print the new revision as one JSON object instead of text (preview's fields); the editor's own output goes to standard error"),
    ("commit", "Print the receipt as one JSON object instead of text: {tx, batch, kind, files: [{path, pre, post}], created_dirs, removed_dirs, bytes_written, at_ms, by_recovery}"),
    ("abort", "Print the transaction record as one JSON object instead of text: {tx, state, revisions, agent, description, …}"),
    ("rollback", "Print the rollback's receipt as one JSON object instead of text: {tx (the new tx), batch, kind: {rollback: {of, forced}}, files: [{path, pre, post}], …}"),
    ("revert", "Print the revert's revision 0 as one JSON object instead of text: preview's fields (description \"revert of tx N\"; conflict_list names each conflict's file, lines and sides: disk, tx, before tx)"),
    ("log", "Print one JSON object instead of text: {txs: [{tx, handle, created_ms, agent, description, state, files, lines_added, lines_removed, revisions, committed, rollback_of, rolled_back_by, pruned, …}]}"),
    ("recover", "Print the recovery report as one JSON object instead of text: {batches_found, completed, reverted, needs_attention, temps_removed, actions}"),
    ("journal", "Print JSON instead of text; each journal command's help says what it prints"),
    ("journal dump", "Print JSON lines instead of text: one object per record, in journal order ({event, detail?, blob? with --with-blobs}; revisions always with their diffs)"),
    ("journal verify", "Print the report as one JSON object instead of text: {ok, txs, revisions, blobs, blob_bytes_content, blob_bytes_unique, batches, receipts, events, problems} (the sizes named as journal stats names them)"),
    ("journal gc", "Print the report as one JSON object instead of text: {dry_run, removed, pruned, rollbacks_lost, compacted, file_bytes_before, file_bytes_after}"),
    ("journal stats", "Print the counts as one JSON object instead of text: {schema_version, txs, txs_pruned, revisions, blobs, …}"),
    ("serve", "No effect: serve speaks MCP's JSON-RPC on standard input/output"),
    ("help", "No effect: help is text"),
];

/// The clap command with each subcommand's `--json` help saying what it prints: each
/// subcommand gets its own copy of the global `--json` flag (same id, still global),
/// which clap keeps in place of the propagated one.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    'paths: for (path, help) in JSON_HELP {
        let json = clap::Arg::new("json")
            .long("json")
            .global(true)
            .action(clap::ArgAction::SetTrue)
            .help(*help);
        // Found and changed in place: `Command::mut_subcommand` moves the whole command
        // tree in and out once per call, an eighth of every process's start-up
        // instructions (docs/benchmarks.md, "The CLI process").
        let mut at = &mut cmd;
        for word in path.split(' ') {
            match at.find_subcommand_mut(word) {
                Some(sub) => at = sub,
                None => continue 'paths,
            }
        }
        *at = std::mem::take(at).arg(json);
    }
    cmd
}

/// `help [TOPIC…]`: the plan format for `plan`, a (sub)command's long help for its
/// name, the top-level help for nothing. An unknown topic is a usage error (exit 2,
/// under `--json` also the usage error object on stdout) that lists the topics.
pub fn print(topic: &[String], json: bool) -> i32 {
    if topic.len() == 1 && topic.first().is_some_and(|t| t == "plan") {
        // Not `print!`: a reader that stops early (`help plan | head`) is no failure.
        super::render::emit(PLAN);
        return 0;
    }
    let mut cmd = command();
    // Built, each subcommand knows its path (`ultra-edit journal dump`), which its usage
    // line names as `commit --help` does; unbuilt it would say `Usage: dump …`.
    cmd.build();
    let mut at = &mut cmd;
    for word in topic {
        match at.find_subcommand_mut(word) {
            Some(sub) => at = sub,
            None => {
                let message = format!(
                    "error: no help topic {:?}; topics: plan, and the commands ({})",
                    topic.join(" "),
                    Cli::command()
                        .get_subcommands()
                        .map(|c| c.get_name().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                super::render::usage_error(&message, 2, json, "ultra-edit help");
                return 2;
            }
        }
    }
    let _ = at.print_long_help();
    0
}
