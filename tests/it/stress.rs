//! Many committers at once (docs/architecture.md, "Concurrency").
//!
//! Eight committers, 25 commits each, on six overlapping files: every commit either lands
//! with a receipt or fails with `StaleSnapshot` (and is previewed again, up to a bound);
//! readers (`log`, `show`, `journal dump`) run during the commits and must succeed. At
//! the end no update is lost: replaying every receipt in journal order from the initial
//! tree gives exactly the final tree, each receipt's pre-image is the previous receipt's
//! post-image of that path (a chain), each landed commit's line is in each of its files
//! exactly once, and `journal verify` passes.
//!
//! - [`processes_commit_concurrently_and_no_update_is_lost`]: each committer is a thread
//!   of the test that runs the `ultra-edit` binary once per step (`--json preview`, then
//!   `commit`), so every step is a separate process with its own journal handle.
//! - [`threads_share_one_journal_and_no_update_is_lost`]: the same through the library,
//!   eight threads sharing one `Arc<Journal>`.
//!
//! Every loop is bounded by a count and by a deadline; when a deadline cuts a run short
//! the checks still run on what landed, and the test prints how far it got.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use ultra_edit::{BlobHash, DumpDetail, DumpFilter, Error, Journal, Plan};

/// Committers.
const WORKERS: usize = 8;
/// Commits per committer.
const COMMITS_EACH: usize = 25;
/// Previews of one step before the committer gives up on it (a stale commit is
/// previewed again).
const MAX_ATTEMPTS: usize = 60;
/// The shared files, all edited by every committer.
const FILES: [&str; 6] = [
    "shared/a.txt",
    "shared/b.txt",
    "shared/deep/c.txt",
    "d.txt",
    "e.txt",
    "f.sh",
];

/// `path -> (bytes, mode)` of every regular file under the root but `.ultra-edit/`.
type Tree = BTreeMap<String, (Vec<u8>, u32)>;

fn disk_tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".ultra-edit" {
                continue;
            }
            let md = fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                walk(root, &p, out);
            } else {
                let mode = md.permissions().mode() & 0o7777;
                out.insert(rel, (fs::read(&p).unwrap(), mode));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// A temp dir on tmpfs (`/dev/shm`) when there is one: these tests are about
/// concurrency, not durability (the crash and power-cut suites are), and without the
/// cost of real fsyncs twice as many commits fit in the time budget.
pub(crate) fn fast_tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

/// A workspace holding the six shared files, each ending with an `END` line that every
/// edit inserts before (so each edit resolves whatever the others did).
fn setup() -> tempfile::TempDir {
    let dir = fast_tempdir();
    for (i, rel) in FILES.iter().enumerate() {
        let p = dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, format!("# shared file {i}\r\nEND\n")).unwrap();
        let mode = if rel.ends_with(".sh") { 0o755 } else { 0o644 };
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
    Journal::init(dir.path()).unwrap();
    dir
}

/// The files step `k` of committer `w` touches: one shared file, every third step two,
/// every fifth step also a new file of its own. Any two committers' steps often share a
/// file (so commits go stale), not so often that most work is wasted on retries.
fn step_files(w: usize, k: usize) -> Vec<usize> {
    let mut set = BTreeSet::new();
    set.insert((w + k) % FILES.len());
    if k.is_multiple_of(3) {
        set.insert((3 * w + 5 * k + 1) % FILES.len());
    }
    set.into_iter().collect()
}

fn line_of(w: usize, k: usize) -> String {
    format!("w{w} k{k}\n")
}

fn created_path(w: usize, k: usize) -> Option<String> {
    (k % 5 == 4).then(|| format!("new/w{w}/k{k}.txt"))
}

fn step_plan(w: usize, k: usize) -> String {
    let mut edits: Vec<serde_json::Value> = step_files(w, k)
        .into_iter()
        .map(|i| {
            serde_json::json!({"op": "insert_before", "path": FILES[i], "anchor": "END\n",
                               "text": line_of(w, k)})
        })
        .collect();
    if let Some(p) = created_path(w, k) {
        edits.push(serde_json::json!({"op": "create_file", "path": p,
                                      "content": format!("created by w{w} k{k}\n")}));
    }
    serde_json::json!({"agent": format!("w{w}"), "description": format!("step {k}"),
                       "edits": edits})
    .to_string()
}

/// A landed commit: committer, step, tx.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Landed {
    w: usize,
    k: usize,
    tx: u64,
}

/// Receipts in journal order: (tx, files).
type Receipts = Vec<(u64, Vec<ReceiptFile>)>;

/// One file of a receipt, as the replay needs it.
#[derive(Debug, Clone)]
struct ReceiptFile {
    path: String,
    pre: (bool, Option<BlobHash>, u32),
    post: (bool, Option<BlobHash>, u32),
}

fn state_key(exists: bool, hash: Option<BlobHash>, mode: u32) -> (bool, Option<BlobHash>, u32) {
    // A path that does not exist has no hash and no mode worth comparing.
    if exists {
        (true, hash, mode)
    } else {
        (false, None, 0)
    }
}

/// Replay `receipts` (in journal order) from `initial` with the blobs of the journal;
/// checks the chain (each pre equals the path's current state) on the way.
fn replay(
    initial: &Tree,
    receipts: &[(u64, Vec<ReceiptFile>)],
    blobs: &dyn Fn(&BlobHash) -> Vec<u8>,
) -> Tree {
    let mut tree = initial.clone();
    for (tx, files) in receipts {
        for f in files {
            let current = match tree.get(&f.path) {
                Some((bytes, mode)) => (true, Some(BlobHash::of(bytes)), *mode),
                None => (false, None, 0),
            };
            assert_eq!(
                current, f.pre,
                "receipt of tx {tx}: the pre-image of {} is not the post-image of the \
                 previous receipt that touched it (a lost or phantom update)",
                f.path
            );
            match f.post {
                (true, Some(hash), mode) => {
                    let bytes = blobs(&hash);
                    assert_eq!(BlobHash::of(&bytes), hash, "blob {hash} of tx {tx}");
                    tree.insert(f.path.clone(), (bytes, mode));
                }
                (true, None, _) => panic!("receipt of tx {tx}: {} exists without hash", f.path),
                (false, _, _) => {
                    tree.remove(&f.path);
                }
            }
        }
    }
    tree
}

/// The checks both stress tests end with.
fn check_no_update_lost(
    initial: &Tree,
    final_tree: &Tree,
    replayed: &Tree,
    receipts: &[(u64, Vec<ReceiptFile>)],
    landed: &[Landed],
) {
    assert!(
        final_tree.keys().all(|k| !k.contains(".ue-")),
        "temp file left in the tree: {:?}",
        final_tree
            .keys()
            .filter(|k| k.contains(".ue-"))
            .collect::<Vec<_>>()
    );
    let receipt_txs: Vec<u64> = receipts.iter().map(|(tx, _)| *tx).collect();
    let mut landed_txs: Vec<u64> = landed.iter().map(|l| l.tx).collect();
    landed_txs.sort();
    let mut sorted_receipts = receipt_txs.clone();
    sorted_receipts.sort();
    assert_eq!(
        sorted_receipts, landed_txs,
        "receipts in the journal != commits that reported success"
    );
    if replayed != final_tree {
        let diff: Vec<&String> = replayed
            .keys()
            .chain(final_tree.keys())
            .filter(|k| replayed.get(*k) != final_tree.get(*k))
            .collect();
        panic!("replaying the receipts from the initial tree does not give the final tree; differing paths: {diff:?}");
    }
    // Directly: every landed step's line is in each of its files exactly once, and no
    // line of a step that did not land is anywhere.
    let landed_steps: BTreeSet<(usize, usize)> = landed.iter().map(|l| (l.w, l.k)).collect();
    for (i, rel) in FILES.iter().enumerate() {
        let text = String::from_utf8(final_tree[*rel].0.clone()).unwrap();
        assert!(text.ends_with("END\n"), "{rel}: {text:?}");
        assert_eq!(final_tree[*rel].1, initial[*rel].1, "{rel}: mode changed");
        for w in 0..WORKERS {
            for k in 0..COMMITS_EACH {
                let n = text.matches(&line_of(w, k)).count();
                let want =
                    usize::from(landed_steps.contains(&(w, k)) && step_files(w, k).contains(&i));
                assert_eq!(n, want, "{rel}: line {:?} appears {n} times", line_of(w, k));
            }
        }
    }
    for &(w, k) in &landed_steps {
        if let Some(p) = created_path(w, k) {
            assert_eq!(
                final_tree.get(&p).map(|(b, _)| b.clone()),
                Some(format!("created by w{w} k{k}\n").into_bytes()),
                "{p}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------
// (a) processes

fn ue(root: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ultra-edit"));
    cmd.arg("--root")
        .arg(root)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1")
        .env_remove("FAILPOINTS");
    let mut child = cmd.spawn().expect("spawn ultra-edit");
    if let Some(s) = stdin {
        let mut input = child.stdin.take().unwrap();
        input.write_all(s.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn describe(args: &[&str], out: &Output) -> String {
    format!(
        "`ultra-edit {}` exited {:?}\nstdout: {}\nstderr: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json_line(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}): {text}"))
}

/// Shared state of one stress run.
struct Run {
    stop: AtomicBool,
    failures: Mutex<Vec<String>>,
    landed: Mutex<Vec<Landed>>,
    stale: AtomicUsize,
    gave_up: AtomicUsize,
    reads: AtomicUsize,
    deadline: Instant,
}

impl Run {
    fn new(budget: Duration) -> Arc<Run> {
        Arc::new(Run {
            stop: AtomicBool::new(false),
            failures: Mutex::new(Vec::new()),
            landed: Mutex::new(Vec::new()),
            stale: AtomicUsize::new(0),
            gave_up: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            deadline: Instant::now() + budget,
        })
    }
    fn fail(&self, what: String) {
        self.stop.store(true, Ordering::SeqCst);
        self.failures.lock().unwrap().push(what);
    }
    fn go_on(&self) -> bool {
        !self.stop.load(Ordering::SeqCst) && Instant::now() < self.deadline
    }
    fn finish(&self) {
        let failures = self.failures.lock().unwrap();
        assert!(
            failures.is_empty(),
            "{} failure(s):\n{}",
            failures.len(),
            failures.join("\n---\n")
        );
    }
    /// Print how far the run got, and require that at least half the commits landed.
    fn report(&self, label: &str, started: Instant) {
        let landed = self.landed.lock().unwrap().len();
        println!(
            "{label}: {landed} of {} commits landed, {} stale commits previewed again, {} steps \
             gave up, {} concurrent reads ok, {:?}",
            WORKERS * COMMITS_EACH,
            self.stale.load(Ordering::Relaxed),
            self.gave_up.load(Ordering::Relaxed),
            self.reads.load(Ordering::Relaxed),
            started.elapsed()
        );
        assert!(
            landed >= WORKERS * COMMITS_EACH / 2,
            "{label}: only {landed} commits landed before the deadline"
        );
    }
}

/// One committer process loop: preview, commit; a stale commit is previewed again.
fn process_committer(root: &Path, w: usize, run: &Run) {
    for k in 0..COMMITS_EACH {
        let plan = step_plan(w, k);
        let mut attempt = 0;
        loop {
            if !run.go_on() {
                return;
            }
            if attempt == MAX_ATTEMPTS {
                run.gave_up.fetch_add(1, Ordering::Relaxed);
                break;
            }
            attempt += 1;
            let args = ["--json", "preview"];
            let out = ue(root, &args, Some(&plan));
            if out.status.code() != Some(0) {
                return run.fail(format!("w{w} k{k}: preview: {}", describe(&args, &out)));
            }
            let tx = json_line(&out)["tx"].as_u64().unwrap().to_string();
            let args = ["--json", "commit", &tx, "--lock-timeout", "60"];
            let out = ue(root, &args, None);
            match out.status.code() {
                Some(0) => {
                    let receipt = json_line(&out);
                    if receipt["tx"].as_u64() != tx.parse().ok() {
                        return run.fail(format!("w{w} k{k}: receipt names another tx: {receipt}"));
                    }
                    run.landed.lock().unwrap().push(Landed {
                        w,
                        k,
                        tx: tx.parse().unwrap(),
                    });
                    break;
                }
                Some(3) if json_line(&out)["error"]["kind"] == "stale_snapshot" => {
                    run.stale.fetch_add(1, Ordering::Relaxed);
                }
                _ => return run.fail(format!("w{w} k{k}: commit: {}", describe(&args, &out))),
            }
        }
    }
}

/// Readers during the commits: `log`, `show` of a recent tx, `journal dump`.
fn process_reader(root: &Path, run: &Run) {
    for i in 0..400 {
        if !run.go_on() || run.landed.lock().unwrap().len() == WORKERS * COMMITS_EACH {
            return;
        }
        let last_tx = run.landed.lock().unwrap().last().map(|l| l.tx.to_string());
        let args: Vec<&str> = match (i % 3, last_tx.as_deref()) {
            (0, _) => vec!["--json", "log", "--limit", "5"],
            (1, Some(tx)) => vec!["--json", "show", tx],
            (1, None) => vec!["log"],
            _ => vec!["--json", "journal", "dump"],
        };
        let out = ue(root, &args, None);
        if !out.status.success() {
            return run.fail(format!("reader: {}", describe(&args, &out)));
        }
        thread::sleep(Duration::from_millis(20));
        if args[0] == "--json" && args[1] == "journal" {
            // Every line of a dump taken during commits is a whole JSON object.
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if serde_json::from_str::<serde_json::Value>(line).is_err() {
                    return run.fail(format!("reader: dump line is not JSON: {line}"));
                }
            }
        }
        run.reads.fetch_add(1, Ordering::Relaxed);
    }
}

fn hash_field(v: &serde_json::Value) -> Option<BlobHash> {
    v.as_str().and_then(BlobHash::from_hex)
}

fn state_of(v: &serde_json::Value) -> (bool, Option<BlobHash>, u32) {
    state_key(
        v["exists"].as_bool().unwrap(),
        hash_field(&v["hash"]),
        v["mode"].as_u64().unwrap() as u32,
    )
}

/// Receipts (in journal order) and blobs from `journal dump --json --with-blobs`.
fn receipts_from_dump(root: &Path) -> (Receipts, BTreeMap<BlobHash, Vec<u8>>) {
    let args = ["--json", "journal", "dump", "--with-blobs"];
    let out = ue(root, &args, None);
    assert!(out.status.success(), "{}", describe(&args, &out));
    let mut receipts = Vec::new();
    let mut blobs = BTreeMap::new();
    let mut last_seq = 0;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let seq = v["event"]["seq"].as_u64().unwrap();
        assert_eq!(seq, last_seq + 1, "event seqs are not gap-free");
        last_seq = seq;
        let kind = &v["event"]["kind"];
        if let Some(b) = kind.get("blob_stored") {
            let hash = hash_field(&b["hash"]).unwrap();
            let content = v["blob"]["content"].as_str().expect("--with-blobs content");
            let bytes = match v["blob"]["encoding"].as_str() {
                Some("text") => content.as_bytes().to_vec(),
                Some("base64") => base64::engine::general_purpose::STANDARD
                    .decode(content)
                    .unwrap(),
                other => panic!("blob encoding {other:?}"),
            };
            blobs.insert(hash, bytes);
        }
        if kind.get("receipt_issued").is_some() {
            let r = &v["detail"]["receipt"];
            let files = r["files"]
                .as_array()
                .unwrap_or_else(|| panic!("receipt_issued without detail.receipt.files: {v}"))
                .iter()
                .map(|f| ReceiptFile {
                    path: f["path"].as_str().unwrap().to_string(),
                    pre: state_of(&f["pre"]),
                    post: state_of(&f["post"]),
                })
                .collect();
            receipts.push((r["tx"].as_u64().unwrap(), files));
        }
    }
    (receipts, blobs)
}

#[test]
fn processes_commit_concurrently_and_no_update_is_lost() {
    let started = Instant::now();
    let dir = setup();
    let root = dir.path().to_path_buf();
    let initial = disk_tree(&root);
    let run = Run::new(Duration::from_secs(60));
    thread::scope(|s| {
        for w in 0..WORKERS {
            let (root, run) = (&root, &run);
            s.spawn(move || process_committer(root, w, run));
        }
        s.spawn(|| process_reader(&root, &run));
    });
    run.finish();
    let landed = run.landed.lock().unwrap().clone();
    let final_tree = disk_tree(&root);
    let (receipts, blobs) = receipts_from_dump(&root);
    let replayed = replay(&initial, &receipts, &|h| {
        blobs
            .get(h)
            .cloned()
            .unwrap_or_else(|| panic!("blob {h} not in the dump"))
    });
    check_no_update_lost(&initial, &final_tree, &replayed, &receipts, &landed);
    let args = ["--json", "journal", "verify"];
    let out = ue(&root, &args, None);
    assert!(out.status.success(), "{}", describe(&args, &out));
    assert_eq!(json_line(&out)["ok"], true);
    run.report("processes", started);
}

// ---------------------------------------------------------------------------------
// (b) threads sharing one journal handle

fn thread_committer(j: &Journal, w: usize, run: &Run) {
    for k in 0..COMMITS_EACH {
        let plan = Plan::from_json(step_plan(w, k).as_bytes()).unwrap();
        let mut attempt = 0;
        loop {
            if !run.go_on() {
                return;
            }
            if attempt == MAX_ATTEMPTS {
                run.gave_up.fetch_add(1, Ordering::Relaxed);
                break;
            }
            attempt += 1;
            let tx = match j.preview(&plan) {
                Ok(p) => p.tx,
                Err(e) => return run.fail(format!("w{w} k{k}: preview: {e:?}")),
            };
            match j.commit(tx, Default::default()) {
                Ok(r) if r.tx == tx => {
                    run.landed.lock().unwrap().push(Landed { w, k, tx });
                    break;
                }
                Ok(r) => return run.fail(format!("w{w} k{k}: receipt of another tx: {r:?}")),
                Err(Error::StaleSnapshot { .. }) => {
                    run.stale.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => return run.fail(format!("w{w} k{k}: commit: {e:?}")),
            }
        }
    }
}

fn thread_reader(j: &Journal, run: &Run) {
    for i in 0..2000 {
        if !run.go_on() || run.landed.lock().unwrap().len() == WORKERS * COMMITS_EACH {
            return;
        }
        let last_tx = run.landed.lock().unwrap().last().map(|l| l.tx);
        let res = match (i % 3, last_tx) {
            (0, _) => j.log(Some(5)).map(drop),
            (1, Some(tx)) => j.show(tx, None).map(drop),
            (1, None) => j.log(None).map(drop),
            _ => {
                let mut n = 0u64;
                j.dump(DumpFilter::default(), |e| {
                    n += 1;
                    assert_eq!(e.event.seq, n, "dump seqs not gap-free");
                    Ok(true)
                })
            }
        };
        if let Err(e) = res {
            return run.fail(format!("reader: {e:?}"));
        }
        run.reads.fetch_add(1, Ordering::Relaxed);
        thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn threads_share_one_journal_and_no_update_is_lost() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Journal>();
    let started = Instant::now();
    let dir = setup();
    let initial = disk_tree(dir.path());
    let j = Arc::new(Journal::open(dir.path()).unwrap());
    let run = Run::new(Duration::from_secs(30));
    let mut handles = Vec::new();
    for w in 0..WORKERS {
        let (j, run) = (Arc::clone(&j), Arc::clone(&run));
        handles.push(thread::spawn(move || thread_committer(&j, w, &run)));
    }
    {
        let (j, run) = (Arc::clone(&j), Arc::clone(&run));
        handles.push(thread::spawn(move || thread_reader(&j, &run)));
    }
    for h in handles {
        if let Err(p) = h.join() {
            std::panic::resume_unwind(p);
        }
    }
    run.finish();
    let landed = run.landed.lock().unwrap().clone();
    let final_tree = disk_tree(dir.path());
    let mut receipts = Vec::new();
    j.dump(DumpFilter::default(), |e| {
        if let Some(DumpDetail::Receipt(r)) = e.detail {
            let files = r
                .files
                .iter()
                .map(|f| ReceiptFile {
                    path: f.path.to_string(),
                    pre: state_key(f.pre.exists(), f.pre.hash(), f.pre.mode().unwrap_or(0)),
                    post: state_key(f.post.exists(), f.post.hash(), f.post.mode().unwrap_or(0)),
                })
                .collect();
            receipts.push((r.tx, files));
        }
        Ok(true)
    })
    .unwrap();
    let replayed = replay(&initial, &receipts, &|h| {
        j.blob(h)
            .unwrap()
            .unwrap_or_else(|| panic!("blob {h} missing"))
    });
    check_no_update_lost(&initial, &final_tree, &replayed, &receipts, &landed);
    let report = j.verify().unwrap();
    assert!(report.ok, "journal verify: {:?}", report.problems);
    run.report("threads", started);
}
