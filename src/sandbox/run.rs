//! `preview --run`, `revise --run` and `run`: a command's writes as a revision.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;

use super::capture::{self, Found};
use super::layers::{self, Layers};
use super::ns::{self, Passthrough, PreludeOp};
use super::scope::{Scope, Verdict};
use crate::edit::{Edit, ExpectedBase, Issue, Plan, Severity};
use crate::error::{RefusedPath, Result, SandboxError, Verb};
use crate::failpoint::crash_point;
use crate::fs::RelPath;
use crate::journal::records::{CommandOrigin, Receipt, RevisionOrigin};
use crate::revision::Working;
use crate::tx::{Preview, PreviewOptions, ReviseOptions};
use crate::workspace::Journal;

/// What to run and how ([`Journal::preview_run`], [`Journal::revise_run`],
/// [`Journal::run`]). `#[non_exhaustive]`: start from [`RunOptions::new`] and set
/// fields with the `with_*` methods (or assign them).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOptions {
    /// The command line, run as `sh -c COMMAND`.
    pub command: String,
    /// How long it may run before it is killed with its process group and nothing is
    /// recorded. Default [`super::DEFAULT_TIMEOUT`] (10 minutes).
    pub timeout: Duration,
    /// Record what a command that exits non-zero wrote (default: nothing is recorded,
    /// [`SandboxError::CommandFailed`]).
    pub keep_on_failure: bool,
    /// Keep paths the repository's ignore rules ignore (default: dropped and counted).
    pub include_ignored: bool,
    /// Refuse ([`SandboxError::OutOfScope`]) instead of dropping writes under `.git/`,
    /// `.jj/`, `.hg/`, `.svn/` or the state directory.
    pub strict: bool,
    /// A check command run on the recorded candidate ([`super::CheckOptions`]).
    pub check: Option<super::CheckOptions>,
    /// Where the command's output goes besides the kept tail (default: kept only).
    pub passthrough: Passthrough,
    /// The working directory (default: this process's). One outside the root is
    /// replaced by the root: the command always starts inside the overlay.
    pub cwd: Option<PathBuf>,
    /// The tx's agent (a preview's; ignored by a revise).
    pub agent: Option<String>,
    /// The policy for this revision instead of the journal's.
    pub policy: Option<crate::Policy>,
}

impl RunOptions {
    /// `command` with every default.
    pub fn new(command: impl Into<String>) -> RunOptions {
        RunOptions {
            command: command.into(),
            timeout: super::DEFAULT_TIMEOUT,
            keep_on_failure: false,
            include_ignored: false,
            strict: false,
            check: None,
            passthrough: Passthrough::None,
            cwd: None,
            agent: None,
            policy: None,
        }
    }

    /// [`RunOptions::timeout`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
    /// [`RunOptions::keep_on_failure`].
    pub fn with_keep_on_failure(mut self, keep: bool) -> Self {
        self.keep_on_failure = keep;
        self
    }
    /// [`RunOptions::include_ignored`].
    pub fn with_include_ignored(mut self, include: bool) -> Self {
        self.include_ignored = include;
        self
    }
    /// [`RunOptions::strict`].
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }
    /// [`RunOptions::check`].
    pub fn with_check(mut self, check: super::CheckOptions) -> Self {
        self.check = Some(check);
        self
    }
    /// [`RunOptions::passthrough`].
    pub fn with_passthrough(mut self, passthrough: Passthrough) -> Self {
        self.passthrough = passthrough;
        self
    }
    /// [`RunOptions::cwd`].
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }
    /// [`RunOptions::agent`].
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }
    /// [`RunOptions::policy`].
    pub fn with_policy(mut self, policy: crate::Policy) -> Self {
        self.policy = Some(policy);
        self
    }
}

/// A file of the base a command runs on: its bytes and mode, `None` if absent.
type BaseFile = Option<(Vec<u8>, u32)>;

/// The working directory a command runs in: the one given, else this process's, when
/// it is inside the root (seen through the overlay there); else the root itself, so
/// that relative paths of the command land in the overlay, not outside it.
pub(crate) fn working_dir(given: Option<&Path>, root: &Path) -> PathBuf {
    let dir = given
        .map(Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .and_then(|d| std::fs::canonicalize(d).ok());
    match dir {
        Some(d) if d.starts_with(root) => d,
        _ => root.to_path_buf(),
    }
}

/// Prelude ops that make the overlay show `files`' candidates where they differ from
/// their snapshots.
pub(crate) fn prelude_of(
    root: &Path,
    files: &BTreeMap<RelPath, Working>,
) -> Result<Vec<PreludeOp>> {
    let c = |p: PathBuf| -> Result<CString> {
        CString::new(p.as_os_str().as_bytes().to_vec()).map_err(|_| {
            SandboxError::Unavailable {
                cause: "a path contains a NUL byte".into(),
                setting: "Use paths without NUL bytes.".into(),
            }
            .into()
        })
    };
    let mut ops = Vec::new();
    for (rel, w) in files {
        if w.candidate == w.snapshot {
            continue;
        }
        match (w.candidate_whole(), w.candidate.mode()) {
            (Some(bytes), Some(mode)) => {
                let parts: Vec<&str> = rel.as_str().split('/').collect();
                for i in 1..parts.len() {
                    ops.push(PreludeOp::Mkdir(c(root.join(parts[..i].join("/")))?));
                }
                ops.push(PreludeOp::Write(
                    c(root.join(rel.as_str()))?,
                    bytes.into_owned(),
                    mode,
                ));
            }
            _ => ops.push(PreludeOp::Delete(c(root.join(rel.as_str()))?)),
        }
    }
    Ok(ops)
}

/// What a command wrote, as edits against its base, with its origin and the
/// warnings of the scope rules.
struct Captured {
    edits: Vec<Edit>,
    origin: CommandOrigin,
    warnings: Vec<Issue>,
}

/// At most this many paths are named in a scope warning.
const NAMED: usize = 5;

fn named(paths: &[String]) -> String {
    let mut s = paths
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > NAMED {
        s += &format!(" and {} more", paths.len() - NAMED);
    }
    s
}

impl Journal {
    /// Run the command on an overlay showing `prior`'s candidates over the disk, and
    /// turn what it wrote into edits against that view.
    fn capture_command(
        &self,
        opts: &RunOptions,
        prior: &BTreeMap<RelPath, Working>,
    ) -> Result<Captured> {
        // `sh -c ''` runs nothing and exits 0: refused as the empty check is, rather
        // than answered `nothing_to_change` after making the layers.
        if opts.command.trim().is_empty() {
            return Err(SandboxError::EmptyCommand {
                what: EMPTY_COMMAND.into(),
            }
            .into());
        }
        let root = self.ws.root.clone();
        let state_dir = self.state_dir().to_path_buf();
        layers::sweep(&state_dir);
        let cwd = working_dir(opts.cwd.as_deref(), &root);
        // While the layers exist, a signal (the CLI's Ctrl-C, SIGTERM) is a request:
        // the command is killed, the layers removed, then the process ends
        // ([`SandboxError::Interrupted`]), leaving no run directory behind.
        let guard = self.ws.guard();
        let layers = Layers::create(&state_dir)?;
        let spec = ns::Spec {
            root: &root,
            cwd: &cwd,
            command: &opts.command,
            prelude: prelude_of(&root, prior)?,
            timeout: opts.timeout,
            passthrough: opts.passthrough,
            interrupt: self.ws.interrupt.as_deref(),
        };
        let out = ns::run(spec, &layers.upper, &layers.work)?;
        // Crash tests: the command ran, its writes are in the upper directory only.
        crash_point!("sandbox::after_command");
        if !out.success() && !opts.keep_on_failure {
            return Err(SandboxError::CommandFailed {
                command: opts.command.clone(),
                status: out.status,
                signal: out.signal,
                output_tail: out.tail,
            }
            .into());
        }
        let mut found = capture::scan(&layers.upper, &root)?;
        // Crash tests: the upper directory is read, the layers not yet removed.
        crash_point!("sandbox::after_scan");
        drop(layers);
        drop(guard);
        if self.ws.interrupt_requested() {
            return Err(SandboxError::Interrupted {
                command: opts.command.clone(),
            }
            .into());
        }
        // A file the prelude wrote where the disk has none lives only in the upper
        // layer: when the command removes it (`rm`, or `mv` away), overlayfs removes it
        // outright and leaves no whiteout. Absent from the upper layer, it is a deletion
        // of the prior candidate.
        for (rel, w) in prior {
            if w.candidate.exists()
                && w.candidate != w.snapshot
                && !found.changes.contains_key(rel.as_str())
            {
                found
                    .changes
                    .insert(rel.as_str().to_string(), Found::Deleted);
            }
        }
        let mut scope = Scope::new(&root, &state_dir);
        let (mut vcs, mut ignored) = (Vec::new(), Vec::new());
        let mut keep = |path: &str, vcs: &mut Vec<String>, ignored: &mut Vec<String>| match scope
            .classify(path)
        {
            Verdict::Vcs => {
                vcs.push(path.to_string());
                false
            }
            Verdict::Ignored if !opts.include_ignored => {
                ignored.push(path.to_string());
                false
            }
            _ => true,
        };
        let mut changes = BTreeMap::new();
        for (path, f) in found.changes {
            if keep(&path, &mut vcs, &mut ignored) {
                changes.insert(path, f);
            }
        }
        let refused: Vec<RefusedPath> = found
            .refused
            .into_iter()
            .filter(|r| keep(&r.path, &mut vcs, &mut ignored))
            .collect();
        let mut non_utf8: Vec<String> = std::mem::take(&mut found.non_utf8)
            .into_iter()
            .filter(|p| keep(p, &mut vcs, &mut ignored))
            .collect();
        non_utf8.sort();
        if opts.strict && !vcs.is_empty() {
            return Err(SandboxError::OutOfScope {
                paths: vcs.into_iter().take(20).collect(),
            }
            .into());
        }
        if !non_utf8.is_empty() {
            return Err(SandboxError::NonUtf8Names { paths: non_utf8 }.into());
        }
        if !refused.is_empty() {
            return Err(SandboxError::Unrepresentable { paths: refused }.into());
        }
        let mut edits = Vec::new();
        for (path, f) in changes {
            let base = self.base_file(prior, &path)?;
            match f {
                Found::File { bytes, mode } => {
                    if base
                        .as_ref()
                        .is_some_and(|(b, m)| *b == bytes && *m == mode)
                    {
                        continue;
                    }
                    let (content, content_base64) = match String::from_utf8(bytes) {
                        Ok(s) => (Some(s), None),
                        Err(e) => (
                            None,
                            Some(base64::engine::general_purpose::STANDARD.encode(e.into_bytes())),
                        ),
                    };
                    // The write carries the base the command saw, so a file that
                    // changed between the run and the revision is refused
                    // (`base_changed`), never overwritten.
                    let expected_base = Some(match &base {
                        Some((b, _)) => ExpectedBase::Hash(blake3::hash(b).to_hex().to_string()),
                        None => ExpectedBase::Shape {
                            content_hash: String::new(),
                            bytes: None,
                            file_exists: Some(false),
                        },
                    });
                    edits.push(Edit::WriteFile {
                        path,
                        content,
                        content_base64,
                        mode: Some(mode),
                        expected_base,
                    });
                }
                Found::Deleted => {
                    if base.is_some() {
                        edits.push(Edit::DeleteFile { path });
                    }
                }
            }
        }
        let mut warnings = Vec::new();
        if !vcs.is_empty() {
            warnings.push(Issue {
                code: "out_of_scope_dropped".into(),
                severity: Severity::Warning,
                path: String::new(),
                message: format!(
                    "the command wrote {} path(s) under .git/, .jj/, .hg/, .svn/ or the state directory, which a transaction never holds: dropped, and left unchanged on disk ({})",
                    vcs.len(),
                    named(&vcs)
                ),
            });
        }
        if !ignored.is_empty() {
            warnings.push(Issue {
                code: "ignored_dropped".into(),
                severity: Severity::Warning,
                path: String::new(),
                message: format!(
                    "the command wrote {} path(s) the repository's ignore rules ignore: dropped, and not written to disk ({}); keep them by including ignored paths",
                    ignored.len(),
                    named(&ignored)
                ),
            });
        }
        let origin = CommandOrigin {
            command: opts.command.clone(),
            status: out.status,
            duration_ms: out.duration_ms,
            output_tail: out.tail,
            dropped_vcs: vcs.len() as u64,
            dropped_ignored: ignored.len() as u64,
        };
        if edits.is_empty() {
            return Err(SandboxError::NothingChanged {
                command: opts.command.clone(),
                dropped_vcs: origin.dropped_vcs,
                dropped_ignored: origin.dropped_ignored,
            }
            .into());
        }
        Ok(Captured {
            edits,
            origin,
            warnings,
        })
    }

    /// `path` in the base a command ran on: `prior`'s candidate, else the disk.
    fn base_file(&self, prior: &BTreeMap<RelPath, Working>, path: &str) -> Result<BaseFile> {
        if let Some(w) = prior.get(path) {
            return Ok(match (w.candidate_whole(), w.candidate.mode()) {
                (Some(b), Some(m)) => Some((b.into_owned(), m)),
                _ => None,
            });
        }
        let abs = self.ws.root.join(path);
        match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.is_file() => {
                use std::os::unix::fs::PermissionsExt;
                let bytes = std::fs::read(&abs).map_err(|source| crate::error::IoError {
                    op: "read",
                    path: abs.clone(),
                    source,
                })?;
                Ok(Some((bytes, m.permissions().mode() & 0o777)))
            }
            // Absent, or not a regular file (the plan's path checks refuse that).
            _ => Ok(None),
        }
    }

    /// Run `opts.command` on a copy-on-write view of the workspace and record what it
    /// wrote inside the root as revision 0 of a new tx (docs/commands.md). The real
    /// tree is not written; the tx commits and rolls back as any other. The revision's
    /// [`Preview::command`] carries the command line, exit status, duration and output
    /// tail; writes dropped by the scope rules are counted there and warned of in the
    /// validation (`out_of_scope_dropped`, `ignored_dropped`). With `opts.check`, the
    /// check runs on the candidate and its outcome is in the validation.
    ///
    /// Errors: [`SandboxError`] (`sandbox_unavailable`, `command_failed`,
    /// `command_timed_out`, `command_interrupted`, `unrepresentable_files`,
    /// `out_of_scope`, `nothing_to_change`, `empty_command` for a command of whitespace
    /// only), and those of [`Journal::preview`] (the
    /// plan of what it wrote must pass the path rules). Nothing is recorded on error.
    pub fn preview_run(&self, opts: &RunOptions) -> Result<Preview> {
        self.ws.writable()?;
        let cap = self.capture_command(opts, &BTreeMap::new())?;
        let plan = Plan {
            description: Some(format!("$ {}", opts.command)),
            agent: opts.agent.clone(),
            edits: cap.edits,
            policy: opts.policy,
        };
        let recorded = RevisionOrigin::Command(cap.origin).to_recorded_json();
        let extra = |files: &BTreeMap<RelPath, Working>| {
            captured_issues(self, &cap.warnings, opts.check.as_ref(), files)
        };
        self.preview_recorded(
            &plan,
            PreviewOptions::default(),
            Some(recorded),
            Some(&extra),
        )
    }

    /// Run `opts.command` on the latest revision of the open tx `tx`: the overlay shows
    /// its candidates over the disk (an edit plan's result, say), and what the command
    /// changes relative to them becomes the next revision. Errors: those of
    /// [`Journal::preview_run`] and [`Journal::revise`].
    pub fn revise_run(&self, tx: impl Into<crate::TxRef>, opts: &RunOptions) -> Result<Preview> {
        let tx = self.tx_number(tx.into())?;
        self.ws.writable()?;
        let (_, latest) = self.latest_open(tx, Verb::Revise)?;
        let prior = crate::revision::load_candidates(&self.ws, &latest)?;
        let cap = self.capture_command(opts, &prior)?;
        drop(prior);
        let plan = Plan {
            description: None,
            agent: None,
            edits: cap.edits,
            policy: opts.policy,
        };
        let recorded = RevisionOrigin::Command(cap.origin).to_recorded_json();
        let extra = |files: &BTreeMap<RelPath, Working>| {
            captured_issues(self, &cap.warnings, opts.check.as_ref(), files)
        };
        self.revise_recorded(
            tx,
            ReviseOptions::new().with_base(latest.revision),
            &plan,
            Some(recorded),
            Some(&extra),
        )
    }

    /// [`Journal::preview_run`] then [`Journal::commit`] of its revision: one step for
    /// scripts. A revision that is not ready to commit (a failed check, a syntax error)
    /// stays an open tx and the commit's [`crate::Error::ValidationFailed`] is returned.
    pub fn run(
        &self,
        opts: &RunOptions,
        commit: crate::CommitOptions,
    ) -> Result<(Preview, Receipt)> {
        let preview = self.preview_run(opts)?;
        let receipt = self.commit(preview.tx, commit)?;
        Ok((preview, receipt))
    }
}

/// [`SandboxError::EmptyCommand`]'s `what` for a command to run (not a check).
pub const EMPTY_COMMAND: &str = "the command";

/// The issues a captured revision's validation gets besides the usual ones: the
/// capture's warnings (what the scope rules dropped), then the outcome of `check`
/// run on the candidate `files`, if one was asked for.
fn captured_issues(
    journal: &Journal,
    warnings: &[Issue],
    check: Option<&super::CheckOptions>,
    files: &BTreeMap<RelPath, Working>,
) -> Result<Vec<Issue>> {
    let mut issues = warnings.to_vec();
    if let Some(check) = check {
        issues.extend(super::check::run_check(journal, check, files)?);
    }
    Ok(issues)
}
