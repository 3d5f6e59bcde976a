//! The whole host glue of an MCP server with several ingest roots, over a
//! [`Registry`]: `edit_preview`, `edit_commit`, `edit_rollback` and `apply_batch` in
//! m1nd's shapes. The part between the `glue` markers is what docs/embedding.md shows
//! ("The host glue"); `main` runs it on temporary directories, restarting the host
//! between a preview and its commit, and asserts every step:
//! `cargo run --no-default-features --example embed_registry`.

use std::fs;

// glue: begin
use std::path::{Path, PathBuf};
use std::time::Duration;
use ultra_edit::{CommitOptions, OpenOptions, Plan, Policy, Registry, RollbackOptions};
type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
pub struct Edits {
    roots: Vec<PathBuf>,
    registry: Registry,
}

impl Edits {
    pub fn new(roots: Vec<PathBuf>, runtime_dir: &Path) -> Res<Edits> {
        let registry = Registry::with_options(runtime_dir.join("ultra-edit"), || {
            OpenOptions::default()
                .with_max_preview_age(Duration::from_secs(300))
                .with_policy(Policy::permissive())
        })?;
        Ok(Edits { roots, registry })
    }

    fn root_of(&self, file: &str) -> Res<&PathBuf> {
        let found = self.roots.iter().find(|r| Path::new(file).starts_with(r));
        Ok(found.ok_or_else(|| format!("{file} is in no ingest root"))?)
    }

    /// edit_preview {file_path, agent_id, new_content} -> preview_id
    pub fn edit_preview(&self, file: &str, agent: &str, content: &str) -> Res<String> {
        let journal = self.registry.open_or_create(self.root_of(file)?)?;
        let plan = Plan::new().agent(agent).write_file(file, content);
        Ok(journal.preview(&plan)?.handle.to_string())
    }

    /// edit_commit {preview_id} -> the absolute paths to re-ingest
    pub fn edit_commit(&self, preview_id: &str) -> Res<Vec<PathBuf>> {
        let handle: ultra_edit::TxHandle = preview_id.parse()?;
        let journal = self.registry.journal_of(&handle)?;
        let receipt = journal.commit(handle, CommitOptions::default())?;
        Ok(reingest(&journal, &receipt))
    }

    /// edit_rollback {preview_id} of a committed preview -> the paths to re-ingest
    pub fn edit_rollback(&self, preview_id: &str) -> Res<Vec<PathBuf>> {
        let handle: ultra_edit::TxHandle = preview_id.parse()?;
        let journal = self.registry.journal_of(&handle)?;
        let receipt = journal.rollback(handle, RollbackOptions::default())?;
        Ok(reingest(&journal, &receipt))
    }

    /// apply_batch {agent_id, edits[{file_path, new_content}]}: all or nothing, one root
    pub fn apply_batch(&self, agent: &str, edits: &[(&str, &str)]) -> Res<Vec<PathBuf>> {
        let root = self.root_of(edits.first().ok_or("no edits")?.0)?;
        let plan = (edits.iter()).fold(Plan::new().agent(agent), |p, (f, c)| p.write_file(*f, *c));
        let journal = self.registry.open_or_create(root)?;
        let receipt = journal.commit(journal.preview(&plan)?.handle, CommitOptions::default())?;
        Ok(reingest(&journal, &receipt))
    }
}
fn reingest(journal: &ultra_edit::Journal, receipt: &ultra_edit::Receipt) -> Vec<PathBuf> {
    let touched = journal.touched(receipt); // what m1nd re-ingests: absolute paths
    touched.into_iter().map(|t| t.absolute).collect()
}
// glue: end

fn main() -> Res<()> {
    let (a, b, runtime) = (
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    );
    let roots = vec![a.path().canonicalize()?, b.path().canonicalize()?];
    let file_a = roots[0].join("a.py").display().to_string();
    let file_b = roots[1].join("b.py").display().to_string();
    let host = Edits::new(roots.clone(), runtime.path())?;
    let pa = host.edit_preview(&file_a, "dev", "A = 1\n")?;
    let pb = host.edit_preview(&file_b, "dev", "B = 1\n")?;
    drop(host);
    // A restart: the new registry routes each id to its root's journal.
    let host = Edits::new(roots.clone(), runtime.path())?;
    assert_eq!(host.edit_commit(&pb)?, [roots[1].join("b.py")]);
    assert_eq!(host.registry.opened(), [roots[1].clone()]);
    assert_eq!(host.edit_commit(&pa)?, [roots[0].join("a.py")]);
    assert_eq!(fs::read_to_string(&file_a)?, "A = 1\n");
    host.edit_rollback(&pa)?;
    assert!(!Path::new(&file_a).exists());
    let c = roots[0].join("c.py").display().to_string();
    let written = host.apply_batch("dev", &[(&file_a, "A = 2\n"), (&c, "C\n")])?;
    assert_eq!(written.len(), 2);
    // A batch across two roots is refused whole, writing nothing.
    let err = host.apply_batch("dev", &[(&file_a, "A = 3\n"), (&file_b, "B = 3\n")]);
    let kind = err
        .unwrap_err()
        .downcast::<ultra_edit::Error>()
        .map(|e| e.kind());
    assert_eq!(kind.ok(), Some("path_refused"));
    assert_eq!(fs::read_to_string(&file_a)?, "A = 2\n");
    assert_eq!(host.registry.roots()?.len(), 2);
    println!("embed_registry: every step checked");
    Ok(())
}
