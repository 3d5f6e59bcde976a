//! m1nd's edit behaviour, re-expressed on the library: a small handler layer shaped
//! like m1nd-mcp's `edit_preview` / `edit_commit` / `apply_batch` handlers (their
//! inputs `file_path, agent_id, new_content, description`; `preview_id, agent_id,
//! confirm`; `edits[{file_path, new_content}], atomic`), over one journal per ingest
//! root, each kept in a state directory outside its root (m1nd's runtime directory),
//! with a five-minute max preview age and a clock the tests move. Every test asserts
//! exact values: ids, hashes, counts, bytes on disk and error kinds.
//!
//! The layer is written the way an embedder would write it against the slim library:
//! no MCP types, no CLI, only `Journal`, `Plan`, `Edit::WriteFile`, handles and the
//! errors' data (`kind`, `tx`, `next_step`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tempfile::TempDir;
use ultra_edit::edit::Edit;
use ultra_edit::{
    BlobHash, CommitOptions, Error, Journal, ManualClock, NextStep, OpenOptions, Plan, Policy,
    SamePath, TxHandle, TxState,
};

/// m1nd's preview lifetime: five minutes.
const TTL: Duration = Duration::from_secs(5 * 60);
/// A fixed start for the test clock: 2026-12-01T00:00:00Z.
const T0: u64 = 1_796_083_200_000;

// ---- the handler layer ------------------------------------------------------------

struct EditPreviewInput<'a> {
    file_path: &'a str,
    agent_id: &'a str,
    new_content: &'a str,
    description: Option<&'a str>,
}

#[derive(Debug, PartialEq)]
struct SourceFileSnapshot {
    file_path: String,
    file_exists: bool,
    content_hash: String,
    bytes: u64,
    line_count: u64,
}

#[derive(Debug, PartialEq)]
struct CandidateDiffReport {
    unified_diff: String,
    lines_added: usize,
    lines_removed: usize,
    bytes_written: u64,
}

#[derive(Debug)]
struct EditPreviewOutput {
    preview_id: String,
    file_path: String,
    snapshot: SourceFileSnapshot,
    diff: CandidateDiffReport,
    candidate_line_count: u64,
    ready_to_commit: bool,
}

struct EditCommitInput<'a> {
    preview_id: &'a str,
    agent_id: &'a str,
    confirm: bool,
}

#[derive(Debug, PartialEq)]
struct EditCommitOutput {
    preview_id: String,
    file_path: String,
    bytes_written: u64,
    lines_added: usize,
    lines_removed: usize,
    /// What m1nd re-ingests: absolute paths.
    reingest: Vec<PathBuf>,
}

/// A refusal as m1nd's handlers report it: a kind and a message (no CLI advice).
#[derive(Debug, PartialEq)]
struct Refused {
    kind: String,
    message: String,
    next_step: Option<NextStep>,
}

impl From<Error> for Refused {
    fn from(e: Error) -> Self {
        let kind = match &e {
            Error::StaleSnapshot { .. } => "source_modified".to_string(),
            Error::UnknownTx { .. } => "preview_not_found".to_string(),
            other => other.kind().to_string(),
        };
        Refused {
            kind,
            message: e.to_string(),
            next_step: e.next_step(),
        }
    }
}

fn refused(kind: &str, message: String) -> Refused {
    Refused {
        kind: kind.into(),
        message,
        next_step: None,
    }
}

struct BatchItem<'a> {
    file_path: &'a str,
    new_content: &'a str,
}

#[derive(Debug, PartialEq)]
struct BatchResult {
    file_path: String,
    success: bool,
    error: Option<String>,
}

#[derive(Debug, PartialEq)]
struct ApplyBatchOutput {
    all_succeeded: bool,
    files_written: usize,
    results: Vec<BatchResult>,
}

/// m1nd's session state, as far as edits go: its ingest roots, one journal each.
struct M1nd {
    journals: Vec<Journal>,
}

impl M1nd {
    /// Open (or create) one journal per root under `runtime/<n>`, with m1nd's TTL, the
    /// given clock and last-write-wins for a path given twice in a batch.
    fn open(roots: &[&Path], runtime: &Path, clock: &ManualClock) -> M1nd {
        let journals = roots
            .iter()
            .enumerate()
            .map(|(i, root)| {
                let opts = OpenOptions::default()
                    .with_state_dir(runtime.join(format!("journal-{i}")))
                    .with_clock(std::sync::Arc::new(clock.clone()))
                    .with_max_preview_age(TTL)
                    .with_policy(Policy::default().with_same_path_twice(SamePath::LastWriteWins));
                Journal::init_with(root, opts).unwrap()
            })
            .collect();
        M1nd { journals }
    }

    /// The journal whose root holds `file_path` (absolute), else the first root's.
    fn journal_for(&self, file_path: &str) -> &Journal {
        let p = Path::new(file_path);
        self.journals
            .iter()
            .find(|j| p.is_absolute() && p.starts_with(j.root()))
            .unwrap_or(&self.journals[0])
    }

    /// The journal a preview id names: by the journal id in the handle.
    fn journal_of(&self, preview_id: &str) -> Result<(&Journal, TxHandle), Refused> {
        let not_found = || {
            refused(
                "preview_not_found",
                format!("preview_id not found: {preview_id}"),
            )
        };
        let handle: TxHandle = preview_id.parse().map_err(|_| not_found())?;
        let j = self
            .journals
            .iter()
            .find(|j| j.id() == handle.journal)
            .ok_or_else(not_found)?;
        Ok((j, handle))
    }

    fn edit_preview(&self, input: EditPreviewInput) -> Result<EditPreviewOutput, Refused> {
        let j = self.journal_for(input.file_path);
        let plan = Plan {
            description: input.description.map(str::to_string),
            agent: Some(input.agent_id.to_string()),
            edits: vec![Edit::WriteFile {
                path: input.file_path.to_string(),
                content: Some(input.new_content.to_string()),
                content_base64: None,
                mode: None,
                expected_base: None,
            }],
            policy: None,
        };
        let p = j.preview(&plan)?;
        let rel = j.relative(input.file_path).map_err(Error::from)?;
        let summary = p
            .summary
            .iter()
            .find(|f| f.path == rel.as_str())
            .expect("the plan's file is in the summary");
        let file = p.files.iter().find(|f| f.path == rel);
        let abs = j.root().join(rel.as_str());
        Ok(EditPreviewOutput {
            preview_id: p.handle.to_string(),
            file_path: abs.display().to_string(),
            snapshot: SourceFileSnapshot {
                file_path: abs.display().to_string(),
                file_exists: summary.snapshot.is_some(),
                content_hash: file
                    .and_then(|f| f.snapshot.hash())
                    .map(|h| h.to_string())
                    .unwrap_or_default(),
                bytes: summary.snapshot.map_or(0, |s| s.bytes),
                line_count: summary.snapshot.map_or(0, |s| s.lines),
            },
            diff: CandidateDiffReport {
                unified_diff: file.map(|f| f.diff.unified.clone()).unwrap_or_default(),
                lines_added: p.lines_added,
                lines_removed: p.lines_removed,
                bytes_written: summary.candidate.map_or(0, |s| s.bytes),
            },
            candidate_line_count: summary.candidate.map_or(0, |s| s.lines),
            ready_to_commit: p.ready_to_commit,
        })
    }

    fn edit_commit(&self, input: EditCommitInput) -> Result<EditCommitOutput, Refused> {
        if !input.confirm {
            return Err(refused(
                "confirm_required",
                "confirm must be true to commit".into(),
            ));
        }
        let (j, handle) = self.journal_of(input.preview_id)?;
        let p = j.show(handle, None)?;
        if p.agent.as_deref() != Some(input.agent_id) {
            return Err(refused(
                "agent_mismatch",
                "preview belongs to a different agent".into(),
            ));
        }
        let receipt = j.commit(handle, CommitOptions::default())?;
        let touched = j.touched(&receipt);
        Ok(EditCommitOutput {
            preview_id: input.preview_id.to_string(),
            file_path: touched
                .first()
                .map(|t| t.absolute.display().to_string())
                .unwrap_or_default(),
            bytes_written: receipt.bytes_written,
            lines_added: p.lines_added,
            lines_removed: p.lines_removed,
            reingest: touched.into_iter().map(|t| t.absolute).collect(),
        })
    }

    fn apply_batch(&self, agent_id: &str, edits: &[BatchItem], atomic: bool) -> ApplyBatchOutput {
        let plan_of = |items: &[&BatchItem]| Plan {
            description: None,
            agent: Some(agent_id.into()),
            edits: items
                .iter()
                .map(|i| Edit::WriteFile {
                    path: i.file_path.into(),
                    content: Some(i.new_content.into()),
                    content_base64: None,
                    mode: None,
                    expected_base: None,
                })
                .collect(),
            policy: None,
        };
        let run = |items: &[&BatchItem]| -> Result<usize, Refused> {
            let j = self.journal_for(items[0].file_path);
            let p = j.preview(&plan_of(items))?;
            match j.commit(p.handle, CommitOptions::default()) {
                Ok(r) => Ok(r.files.len()),
                Err(e) => {
                    j.abort(p.handle).ok();
                    Err(e.into())
                }
            }
        };
        let mut results: Vec<BatchResult> = edits
            .iter()
            .map(|e| BatchResult {
                file_path: e.file_path.into(),
                success: false,
                error: None,
            })
            .collect();
        let mut written = 0;
        if atomic {
            let all: Vec<&BatchItem> = edits.iter().collect();
            match run(&all) {
                Ok(n) => {
                    written = n;
                    results.iter_mut().for_each(|r| r.success = true);
                }
                Err(e) => results
                    .iter_mut()
                    .for_each(|r| r.error = Some(format!("{}: {}", e.kind, e.message))),
            }
        } else {
            for (item, r) in edits.iter().zip(&mut results) {
                match run(&[item]) {
                    Ok(n) => {
                        written += n;
                        r.success = true;
                    }
                    Err(e) => r.error = Some(format!("{}: {}", e.kind, e.message)),
                }
            }
        }
        ApplyBatchOutput {
            all_succeeded: results.iter().all(|r| r.success),
            files_written: written,
            results,
        }
    }
}

// ---- fixtures -----------------------------------------------------------------------

struct World {
    roots: Vec<TempDir>,
    runtime: TempDir,
    clock: ManualClock,
    m1nd: M1nd,
}

impl World {
    fn new(n_roots: usize) -> World {
        let roots: Vec<TempDir> = (0..n_roots).map(|_| tempfile::tempdir().unwrap()).collect();
        let runtime = tempfile::tempdir().unwrap();
        let clock = ManualClock::at(T0);
        let paths: Vec<&Path> = roots.iter().map(|r| r.path()).collect();
        let m1nd = M1nd::open(&paths, runtime.path(), &clock);
        World {
            roots,
            runtime,
            clock,
            m1nd,
        }
    }

    fn root(&self, i: usize) -> PathBuf {
        self.roots[i].path().canonicalize().unwrap()
    }

    fn path(&self, i: usize, rel: &str) -> String {
        self.root(i).join(rel).display().to_string()
    }

    fn write(&self, i: usize, rel: &str, bytes: &str) {
        fs::write(self.root(i).join(rel), bytes).unwrap();
    }

    fn read(&self, i: usize, rel: &str) -> Option<String> {
        fs::read_to_string(self.root(i).join(rel)).ok()
    }

    fn reopen(&mut self) {
        let paths: Vec<PathBuf> = (0..self.roots.len()).map(|i| self.root(i)).collect();
        let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        self.m1nd = M1nd {
            journals: Vec::new(),
        };
        self.m1nd = M1nd::open(&refs, self.runtime.path(), &self.clock);
    }
}

const OLD: &str = "def hello():\n    return 42\n";
const NEW: &str = "def hello():\n    return 99\n\n# bumped\n";

fn preview<'a>(file_path: &'a str, new_content: &'a str) -> EditPreviewInput<'a> {
    EditPreviewInput {
        file_path,
        agent_id: "dev",
        new_content,
        description: Some("bump"),
    }
}

fn commit(preview_id: &str) -> EditCommitInput<'_> {
    EditCommitInput {
        preview_id,
        agent_id: "dev",
        confirm: true,
    }
}

// ---- the tests ----------------------------------------------------------------------

#[test]
fn m1nd_preview_of_an_existing_file() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let path = w.path(0, "hello.py");
    let out = w.m1nd.edit_preview(preview(&path, NEW)).unwrap();
    let id = w.m1nd.journals[0].id();
    assert_eq!(out.preview_id, format!("{id}-1"));
    assert_eq!(out.file_path, path);
    assert_eq!(
        out.snapshot,
        SourceFileSnapshot {
            file_path: path.clone(),
            file_exists: true,
            content_hash: BlobHash::of(OLD.as_bytes()).to_string(),
            bytes: 27,
            line_count: 2,
        }
    );
    assert_eq!(
        out.diff,
        CandidateDiffReport {
            unified_diff: "--- a/hello.py\n+++ b/hello.py\n@@ -1,2 +1,4 @@ hello\n def hello():\n-    return 42\n+    return 99\n+\n+# bumped\n".into(),
            lines_added: 3,
            lines_removed: 1,
            bytes_written: 37,
        }
    );
    assert_eq!(out.candidate_line_count, 4);
    assert!(out.ready_to_commit);
    // A preview writes nothing.
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(OLD));
}

#[test]
fn m1nd_preview_of_a_missing_file_then_commit_creates_it() {
    let w = World::new(1);
    let path = w.path(0, "ghost.py");
    let out = w
        .m1nd
        .edit_preview(preview(&path, "print('hi')\n"))
        .unwrap();
    assert_eq!(
        out.snapshot,
        SourceFileSnapshot {
            file_path: path.clone(),
            file_exists: false,
            content_hash: String::new(),
            bytes: 0,
            line_count: 0,
        }
    );
    assert_eq!(
        (
            out.diff.lines_added,
            out.diff.lines_removed,
            out.diff.bytes_written
        ),
        (1, 0, 12)
    );
    assert!(out.ready_to_commit);
    let done = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap();
    assert_eq!(
        done,
        EditCommitOutput {
            preview_id: out.preview_id.clone(),
            file_path: path.clone(),
            bytes_written: 12,
            lines_added: 1,
            lines_removed: 0,
            reingest: vec![PathBuf::from(&path)],
        }
    );
    assert_eq!(fs::read(&path).unwrap(), b"print('hi')\n");
}

#[test]
fn m1nd_commit_writes_exactly_new_content() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let path = w.path(0, "hello.py");
    // Bytes a text tool might normalize: CRLF, no final newline, non-ASCII (valid
    // Python: a candidate that does not parse would be a syntax_error).
    let content = "a = 'línea 1'\r\nb = 'línea 2'";
    let out = w.m1nd.edit_preview(preview(&path, content)).unwrap();
    let done = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap();
    assert_eq!(done.bytes_written, content.len() as u64);
    assert_eq!(fs::read(&path).unwrap(), content.as_bytes());
    let j = &w.m1nd.journals[0];
    assert_eq!(
        j.tx(out.preview_id.parse::<TxHandle>().unwrap())
            .unwrap()
            .state,
        TxState::Committed
    );
}

#[test]
fn m1nd_a_preview_older_than_the_max_age_is_refused() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let path = w.path(0, "hello.py");
    let out = w.m1nd.edit_preview(preview(&path, NEW)).unwrap();
    // One millisecond past the max age (exactly at it is expired too: the next test).
    w.clock.advance(TTL + Duration::from_millis(1));
    let e = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap_err();
    assert_eq!(e.kind, "preview_expired");
    assert_eq!(
        e.message,
        "preview tx 1 expired: it was made 300001 ms ago and the max preview age is 300000 ms; nothing was written, preview again"
    );
    assert_eq!(e.next_step, Some(NextStep::PreviewAgain));
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(OLD));
    let j = &w.m1nd.journals[0];
    assert_eq!(j.preview_age(1).unwrap(), 300_001);
    // A per-call max age overrides the journal's.
    let opts = CommitOptions::new().with_max_preview_age(Duration::from_secs(3600));
    j.commit(1, opts).unwrap();
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(NEW));
}

/// m1nd expires a preview at age >= TTL: one millisecond before the max age it
/// commits, exactly at it it is expired (and swept by `abort_expired`).
#[test]
fn m1nd_a_preview_exactly_at_the_max_age_is_expired() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let at = w
        .m1nd
        .edit_preview(preview(&w.path(0, "hello.py"), NEW))
        .unwrap();
    w.clock.advance(TTL);
    let e = w.m1nd.edit_commit(commit(&at.preview_id)).unwrap_err();
    assert_eq!(e.kind, "preview_expired");
    assert_eq!(
        e.message,
        "preview tx 1 expired: it was made 300000 ms ago and the max preview age is 300000 ms; nothing was written, preview again"
    );
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(OLD));
    let j = &w.m1nd.journals[0];
    assert_eq!(
        j.abort_expired(TTL).unwrap(),
        [at.preview_id.parse::<TxHandle>().unwrap()]
    );
    let before = w
        .m1nd
        .edit_preview(preview(&w.path(0, "hello.py"), NEW))
        .unwrap();
    w.clock.advance(TTL - Duration::from_millis(1));
    assert_eq!(j.abort_expired(TTL).unwrap(), Vec::<TxHandle>::new());
    w.m1nd.edit_commit(commit(&before.preview_id)).unwrap();
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(NEW));
}

#[test]
fn m1nd_expired_previews_are_aborted_without_the_commit_lock() {
    let w = World::new(1);
    w.write(0, "a.py", OLD);
    let j = &w.m1nd.journals[0];
    let old = w
        .m1nd
        .edit_preview(preview(&w.path(0, "a.py"), "old\n"))
        .unwrap();
    w.clock.advance(Duration::from_secs(240));
    let young = w
        .m1nd
        .edit_preview(preview(&w.path(0, "a.py"), "young\n"))
        .unwrap();
    w.clock.advance(Duration::from_secs(61));
    // Someone holds the commit lock: the sweep does not wait for it.
    let held = fs::File::open(j.state_dir()).unwrap();
    fs2::FileExt::lock_exclusive(&held).unwrap();
    let aborted = j.abort_expired(TTL).unwrap();
    assert_eq!(aborted, vec![old.preview_id.parse::<TxHandle>().unwrap()]);
    fs2::FileExt::unlock(&held).unwrap();
    assert_eq!(j.tx(1).unwrap().state, TxState::Aborted);
    assert_eq!(j.tx(2).unwrap().state, TxState::Open);
    assert_eq!(j.abort_expired(TTL).unwrap(), Vec::<TxHandle>::new());
    let e = w.m1nd.edit_commit(commit(&old.preview_id)).unwrap_err();
    assert_eq!(e.kind, "wrong_state");
    w.m1nd.edit_commit(commit(&young.preview_id)).unwrap();
    assert_eq!(w.read(0, "a.py").as_deref(), Some("young\n"));
}

/// Aborting one preview never waits for the commit lock, which another tx's batch
/// may hold: the abort is one journal write that checks the tx's state.
#[test]
fn m1nd_an_abort_does_not_take_the_commit_lock() {
    let mut w = World::new(1);
    let p = w
        .m1nd
        .edit_preview(preview(&w.path(0, "a.py"), "a\n"))
        .unwrap();
    let handle: TxHandle = p.preview_id.parse().unwrap();
    w.m1nd.journals[0].set_lock_timeout(Duration::from_millis(100));
    let j = &w.m1nd.journals[0];
    let held = fs::File::open(j.state_dir()).unwrap();
    fs2::FileExt::lock_exclusive(&held).unwrap();
    let report = j.abort(handle);
    fs2::FileExt::unlock(&held).unwrap();
    let report = report.unwrap();
    assert!(!report.already);
    assert_eq!(report.record.state, TxState::Aborted);
    assert_eq!(j.tx(handle).unwrap().state, TxState::Aborted);
    // flush_tx takes the handle like every other verb, and refuses another journal's.
    assert!(j.flush_tx(handle).is_ok());
    let foreign = TxHandle {
        journal: ultra_edit::JournalId(j.id().0 ^ 1),
        tx: 1,
    };
    assert_eq!(j.flush_tx(foreign).unwrap_err().kind(), "foreign_handle");
}

#[test]
fn m1nd_a_file_changed_after_preview_is_refused_as_source_modified() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let out = w
        .m1nd
        .edit_preview(preview(&w.path(0, "hello.py"), NEW))
        .unwrap();
    w.write(0, "hello.py", "outside\n");
    let e = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap_err();
    assert_eq!(e.kind, "source_modified");
    assert_eq!(
        e.message,
        "stale snapshot of tx 1: hello.py changed on disk since the preview (changed: hello.py outside ultra-edit), so the preview must be rebased onto the disk (or made again)"
    );
    assert_eq!(e.next_step, Some(NextStep::Rebase { tx: 1 }));
    assert_eq!(w.read(0, "hello.py").as_deref(), Some("outside\n"));
    // The same refusal from the library, as data: kind, subject, next step.
    let e = w.m1nd.journals[0]
        .commit(1, CommitOptions::default())
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.tx(), e.paths(), e.next_step()),
        (
            "stale_snapshot",
            Some(1),
            vec!["hello.py".to_string()],
            Some(NextStep::Rebase { tx: 1 })
        )
    );
    // A file absent at preview that appears meanwhile is a change too.
    let ghost = w
        .m1nd
        .edit_preview(preview(&w.path(0, "ghost.py"), "mine\n"))
        .unwrap();
    w.write(0, "ghost.py", "theirs\n");
    let e = w.m1nd.edit_commit(commit(&ghost.preview_id)).unwrap_err();
    assert_eq!(e.kind, "source_modified");
    assert!(
        e.message.contains("ghost.py changed on disk"),
        "{}",
        e.message
    );
    assert_eq!(w.read(0, "ghost.py").as_deref(), Some("theirs\n"));
}

#[test]
fn m1nd_confirm_false_is_refused_and_changes_nothing() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let out = w
        .m1nd
        .edit_preview(preview(&w.path(0, "hello.py"), NEW))
        .unwrap();
    let e = w
        .m1nd
        .edit_commit(EditCommitInput {
            preview_id: &out.preview_id,
            agent_id: "dev",
            confirm: false,
        })
        .unwrap_err();
    assert_eq!(e.kind, "confirm_required");
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(OLD));
    assert_eq!(w.m1nd.journals[0].tx(1).unwrap().state, TxState::Open);
    // The same preview commits once confirmed.
    w.m1nd.edit_commit(commit(&out.preview_id)).unwrap();
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(NEW));
}

#[test]
fn m1nd_an_unknown_preview_id_is_refused() {
    let w = World::new(1);
    w.write(0, "hello.py", OLD);
    let id = w.m1nd.journals[0].id();
    for bogus in [
        "preview_dev_001".to_string(),
        "0123456789abcdef-1".to_string(),
        format!("{id}-99"),
    ] {
        let e = w.m1nd.edit_commit(commit(&bogus)).unwrap_err();
        assert_eq!(e.kind, "preview_not_found", "{bogus}");
    }
    let e = w.m1nd.edit_commit(commit(&format!("{id}-99"))).unwrap_err();
    assert_eq!(e.message, "no transaction 99 in this journal");
    assert_eq!(w.read(0, "hello.py").as_deref(), Some(OLD));
}

#[test]
fn m1nd_an_atomic_batch_with_one_refused_file_writes_nothing() {
    let w = World::new(1);
    w.write(0, "a.py", "a\n");
    fs::create_dir(w.root(0).join(".git")).unwrap();
    let (a, b, bad) = (
        w.path(0, "a.py"),
        w.path(0, "b.py"),
        w.path(0, ".git/config"),
    );
    let out = w.m1nd.apply_batch(
        "dev",
        &[
            BatchItem {
                file_path: &a,
                new_content: "A\n",
            },
            BatchItem {
                file_path: &b,
                new_content: "B\n",
            },
            BatchItem {
                file_path: &bad,
                new_content: "[core]\n",
            },
        ],
        true,
    );
    assert!(!out.all_succeeded);
    assert_eq!(out.files_written, 0);
    assert!(out.results.iter().all(|r| !r.success
        && r.error
            .as_deref()
            .is_some_and(|e| e.starts_with("path_refused: "))));
    assert_eq!(w.read(0, "a.py").as_deref(), Some("a\n"));
    assert_eq!(w.read(0, "b.py"), None);
    assert!(!w.root(0).join(".git/config").exists());
    // No open preview is left behind, and the journal recorded no preview at all
    // (the plan was refused before anything was recorded).
    assert!(w.m1nd.journals[0].log(None).unwrap().is_empty());
}

#[test]
fn m1nd_a_non_atomic_batch_reports_per_file_results() {
    let w = World::new(1);
    w.write(0, "a.py", "a\n");
    fs::create_dir(w.root(0).join(".git")).unwrap();
    let (a, b, bad) = (
        w.path(0, "a.py"),
        w.path(0, "b.py"),
        w.path(0, ".git/config"),
    );
    let out = w.m1nd.apply_batch(
        "dev",
        &[
            BatchItem {
                file_path: &a,
                new_content: "A\n",
            },
            BatchItem {
                file_path: &bad,
                new_content: "[core]\n",
            },
            BatchItem {
                file_path: &b,
                new_content: "B\n",
            },
        ],
        false,
    );
    assert!(!out.all_succeeded);
    assert_eq!(out.files_written, 2);
    let flags: Vec<(bool, bool)> = out
        .results
        .iter()
        .map(|r| (r.success, r.error.is_some()))
        .collect();
    assert_eq!(flags, [(true, false), (false, true), (true, false)]);
    assert!(out.results[1]
        .error
        .as_deref()
        .unwrap()
        .starts_with("path_refused: "));
    assert_eq!(w.read(0, "a.py").as_deref(), Some("A\n"));
    assert_eq!(w.read(0, "b.py").as_deref(), Some("B\n"));
}

#[test]
fn m1nd_the_same_path_twice_in_a_batch_last_write_wins_by_policy() {
    let w = World::new(1);
    w.write(0, "a.py", "a\n");
    let a = w.path(0, "a.py");
    let out = w.m1nd.apply_batch(
        "dev",
        &[
            BatchItem {
                file_path: &a,
                new_content: "first\n",
            },
            BatchItem {
                file_path: &a,
                new_content: "second\n",
            },
        ],
        true,
    );
    assert!(out.all_succeeded, "{out:?}");
    assert_eq!(out.files_written, 1);
    assert_eq!(w.read(0, "a.py").as_deref(), Some("second\n"));
    // The journal's default (strict) policy refuses the same batch.
    let strict = crate::support::workspace();
    let plan = Plan::from_json(
        br#"{"edits":[{"op":"write_file","path":"x","content":"1"},{"op":"write_file","path":"x","content":"2"}]}"#,
    )
    .unwrap();
    let e = strict.journal.preview(&plan).unwrap_err();
    assert_eq!(e.kind(), "overlapping_edits");
}

#[test]
fn m1nd_two_roots_whose_tx_numbers_collide_never_cross() {
    let w = World::new(2);
    w.write(0, "same.py", "root 0\n");
    w.write(1, "same.py", "root 1\n");
    let p0 = w
        .m1nd
        .edit_preview(preview(&w.path(0, "same.py"), "zero\n"))
        .unwrap();
    let p1 = w
        .m1nd
        .edit_preview(preview(&w.path(1, "same.py"), "one\n"))
        .unwrap();
    // Both journals minted tx 1; the handles differ.
    let h0: TxHandle = p0.preview_id.parse().unwrap();
    let h1: TxHandle = p1.preview_id.parse().unwrap();
    assert_eq!((h0.tx, h1.tx), (1, 1));
    assert_ne!(h0, h1);
    // The second root's preview commits to the second root only.
    w.m1nd.edit_commit(commit(&p1.preview_id)).unwrap();
    assert_eq!(w.read(0, "same.py").as_deref(), Some("root 0\n"));
    assert_eq!(w.read(1, "same.py").as_deref(), Some("one\n"));
    // Handing one journal the other's handle is refused, with nothing written.
    let e = w.m1nd.journals[0]
        .commit(h1, CommitOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), "foreign_handle");
    assert_eq!(w.m1nd.journals[0].tx(1).unwrap().state, TxState::Open);
    assert_eq!(w.read(0, "same.py").as_deref(), Some("root 0\n"));
    w.m1nd.edit_commit(commit(&p0.preview_id)).unwrap();
    assert_eq!(w.read(0, "same.py").as_deref(), Some("zero\n"));
    // One batch never spans two roots: a journal is confined to its root, so a plan
    // naming a file of the other root is refused whole, with nothing recorded
    // (docs/embedding.md, "Several roots").
    let across = Plan::from_json(
        format!(
            r#"{{"edits":[{{"op":"write_file","path":"same.py","content":"x"}},{{"op":"write_file","path":"{}","content":"x"}}]}}"#,
            w.path(1, "same.py")
        )
        .as_bytes(),
    )
    .unwrap();
    let e = w.m1nd.journals[0].preview(&across).unwrap_err();
    assert_eq!(e.kind(), "path_refused");
    assert_eq!(e.paths(), [w.path(1, "same.py")]);
    assert_eq!(w.m1nd.journals[0].log(None).unwrap().len(), 1);
    // Neither root holds a journal: both live in m1nd's runtime directory.
    assert!(!w.root(0).join(".ultra-edit").exists() && !w.root(1).join(".ultra-edit").exists());
}

#[test]
fn m1nd_a_preview_survives_dropping_and_reopening_the_handle() {
    let mut w = World::new(2);
    w.write(1, "keep.py", OLD);
    let out = w
        .m1nd
        .edit_preview(preview(&w.path(1, "keep.py"), NEW))
        .unwrap();
    w.reopen();
    let done = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap();
    assert_eq!(done.bytes_written, 37);
    assert_eq!(w.read(1, "keep.py").as_deref(), Some(NEW));
}

#[test]
fn m1nd_identical_content_is_not_ready_by_default_and_allowed_by_policy() {
    let w = World::new(1);
    w.write(0, "same.py", OLD);
    let out = w
        .m1nd
        .edit_preview(preview(&w.path(0, "same.py"), OLD))
        .unwrap();
    // m1nd: ready_to_commit = !candidate_equals_source.
    assert!(!out.ready_to_commit);
    assert_eq!(out.diff.lines_added + out.diff.lines_removed, 0);
    let e = w.m1nd.edit_commit(commit(&out.preview_id)).unwrap_err();
    assert_eq!(e.kind, "validation_failed");
    // A plan that allows it: ready, and its commit writes no file.
    let j = &w.m1nd.journals[0];
    let plan = Plan::from_json(
        br#"{"policy":{"identical_content":"allow"},"edits":[{"op":"write_file","path":"same.py","content":"def hello():\n    return 42\n"}]}"#,
    )
    .unwrap();
    let p = j.preview(&plan).unwrap();
    assert!(p.ready_to_commit);
    assert_eq!(p.validation[0].code, "candidate_equals_source");
    assert_eq!(p.summary.len(), 1);
    assert!(!p.summary[0].changed);
    let r = j.commit(p.handle, CommitOptions::default()).unwrap();
    assert_eq!((r.files.len(), r.bytes_written), (0, 0));
    assert_eq!(w.read(0, "same.py").as_deref(), Some(OLD));
}
