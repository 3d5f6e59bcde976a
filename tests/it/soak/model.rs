//! The soak's model: a seeded PRNG, the expected files (path → hash and mode) and every
//! transaction (state, revisions, landed batch, rollback links), plus the edit plans
//! the soak generates and the candidates the model expects from them.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

/// The paths every plan draws from: top level and nested directories. None has the
/// extension of a language the grammars parse (feature `syntax`): the soak's random
/// lines would be syntax errors, which the model does not predict.
pub const PATHS: [&str; 6] = [
    "a.txt",
    "b.txt",
    "run.sh",
    "src/c.txt",
    "src/deep/d.txt",
    "docs/new/e.md",
];

/// splitmix64: small, seedable, good enough to pick operations.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// One path's state: its blake3 (None when absent) and permission bits (0 when absent).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fs {
    pub hash: Option<String>,
    pub mode: u32,
}

impl Fs {
    pub const ABSENT: Fs = Fs {
        hash: None,
        mode: 0,
    };
    pub fn of(bytes: &[u8], mode: u32) -> Fs {
        Fs {
            hash: Some(blake3::hash(bytes).to_hex().to_string()),
            mode,
        }
    }
    /// A `FileState` of the JSON output.
    pub fn from_json(v: &Value) -> Fs {
        if v["exists"].as_bool() == Some(true) {
            Fs {
                hash: v["hash"].as_str().map(str::to_string),
                mode: v["mode"].as_u64().unwrap_or(0) as u32,
            }
        } else {
            Fs::ABSENT
        }
    }
    pub fn short(&self) -> String {
        match &self.hash {
            Some(h) => format!("{}:{:o}", &h[..8], self.mode),
            None => "absent".into(),
        }
    }
}

/// One file of a batch.
#[derive(Debug, Clone)]
pub struct BFile {
    pub path: String,
    pub pre: Fs,
    pub post: Fs,
}

/// One revision: per path (snapshot, candidate), and whether it may be committed.
#[derive(Debug, Clone)]
pub struct Rev {
    pub files: BTreeMap<String, (Fs, Fs)>,
    pub ok: bool,
    /// Its validation has a merge conflict or conflict markers (they stay in later
    /// revisions until a plan rewrites those files).
    pub conflicted: bool,
    /// Its own merge (a `rebase` or `revise --rebase`) left conflicts (`merge_conflict`):
    /// a `rebase` of the tx is refused (`unresolved_conflicts`) until a later revision.
    pub merged_conflicts: bool,
}

impl Rev {
    pub fn batch(&self) -> Vec<BFile> {
        self.files
            .iter()
            .filter(|(_, (s, c))| s != c)
            .map(|(p, (s, c))| BFile {
                path: p.clone(),
                pre: s.clone(),
                post: c.clone(),
            })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Tx {
    /// `open`, `committed`, `aborted`, `rolled_back` (as `log` prints them).
    pub state: String,
    /// The state is whatever `log` says (a behaviour the docs leave open, e.g. an
    /// interrupted rollback's tx or the original of an undone redo); checked by invariants.
    pub free: bool,
    pub revs: Vec<Rev>,
    pub batch: Option<Vec<BFile>>,
    pub rollback_of: Option<u64>,
    pub rolled_back_by: Option<u64>,
    /// Sequence number of the landing that last made this tx's change live.
    pub applied: u64,
}

/// Where a change to a path came from: a tx's landed batch, or someone's outside write.
pub type Changes = Vec<(u64, Option<u64>)>;

#[derive(Default)]
pub struct Model {
    pub files: BTreeMap<String, Fs>,
    pub txs: BTreeMap<u64, Tx>,
    pub next_id: u64,
    pub seq: u64,
    pub changes: BTreeMap<String, Changes>,
    pub blobs: HashMap<String, Vec<u8>>,
    pub uniq: u64,
    /// The files of a batch that needs attention (while the soak holds one unsettled):
    /// a commit or rollback that writes one of them is refused (`attention_owns_files`).
    pub attention: Vec<String>,
}

impl Model {
    pub fn disk(&self, p: &str) -> Fs {
        self.files.get(p).cloned().unwrap_or(Fs::ABSENT)
    }
    pub fn bytes(&self, f: &Fs) -> Option<Vec<u8>> {
        f.hash.as_ref().and_then(|h| self.blobs.get(h).cloned())
    }
    pub fn remember(&mut self, bytes: &[u8], mode: u32) -> Fs {
        let f = Fs::of(bytes, mode);
        self.blobs.insert(f.hash.clone().unwrap(), bytes.to_vec());
        f
    }
    fn set(&mut self, p: &str, f: &Fs, by: Option<u64>) {
        self.seq += 1;
        self.changes
            .entry(p.to_string())
            .or_default()
            .push((self.seq, by));
        if f.hash.is_some() {
            self.files.insert(p.to_string(), f.clone());
        } else {
            self.files.remove(p);
        }
    }
    pub fn outside(&mut self, p: &str, f: &Fs) {
        self.set(p, f, None)
    }
    pub fn tx(&mut self, id: u64) -> &mut Tx {
        self.txs.get_mut(&id).expect("tx in model")
    }
    pub fn new_tx(&mut self, id: u64, rev: Rev, rollback_of: Option<u64>) {
        self.txs.insert(
            id,
            Tx {
                state: "open".into(),
                free: false,
                revs: vec![rev],
                batch: None,
                rollback_of,
                rolled_back_by: None,
                applied: 0,
            },
        );
        self.next_id = self.next_id.max(id + 1);
    }
    fn land(&mut self, id: u64, batch: Vec<BFile>) {
        for f in &batch {
            self.set(&f.path, &f.post, Some(id));
        }
        self.seq += 1;
        let seq = self.seq;
        let t = self.tx(id);
        t.state = "committed".into();
        t.batch = Some(batch);
        t.applied = seq;
    }
    pub fn land_commit(&mut self, id: u64, batch: Vec<BFile>) {
        self.land(id, batch)
    }
    /// Rollback `r` of `x` landed: `x` is rolled back. The txs further down the chain
    /// (the one `x` had rolled back, which a redo makes live again, and so on) are
    /// settled by the library from the disk (docs/commit-protocol.md, "State
    /// machines"): they are free, held to the invariants — a tx shown committed has
    /// its change on disk.
    pub fn land_rollback(&mut self, x: u64, r: u64, batch: Vec<BFile>) {
        self.land(r, batch);
        let seq = self.seq;
        let xt = self.tx(x);
        xt.state = "rolled_back".into();
        xt.rolled_back_by = Some(r);
        let mut below = xt.rollback_of;
        let mut seen = std::collections::BTreeSet::new();
        while let Some(y) = below.filter(|y| seen.insert(*y)) {
            let yt = self.tx(y);
            yt.free = true;
            below = yt.rollback_of;
        }
        // Every tx whose change `r` re-applies (even distance up the chain) is live again
        // where its post-images are back (a redo of a forced rollback brings back what
        // the force overwrote, not necessarily the original post-images).
        let mut d = 0;
        let mut cur = Some(r);
        while let Some(c) = cur {
            let t = &self.txs[&c];
            let back = t
                .batch
                .iter()
                .flatten()
                .all(|f| self.disk(&f.path) == f.post);
            if d % 2 == 0 && back {
                self.tx(c).applied = seq;
            }
            cur = self.txs[&c].rollback_of;
            d += 1;
        }
    }
    /// Whether `x`'s change is live through a redo: its newest rollback tx was rolled
    /// back, by a tx that is still committed.
    pub fn redone(&self, x: u64) -> bool {
        let newest = self
            .txs
            .iter()
            .filter(|(_, t)| t.rollback_of == Some(x))
            .map(|(id, _)| *id)
            .max();
        let Some(b) = newest.map(|b| &self.txs[&b]) else {
            return false;
        };
        b.state == "rolled_back"
            && b.rolled_back_by
                .and_then(|c| self.txs.get(&c))
                .is_some_and(|c| c.state == "committed")
    }
    /// Whether tx `r`'s landing undid `x`'s change: `x` is up `r`'s rollback chain at an
    /// odd distance.
    pub fn undoes(&self, r: u64, x: u64) -> bool {
        let (mut d, mut cur) = (0, Some(r));
        while let Some(c) = cur {
            if c == x {
                return d % 2 == 1;
            }
            cur = self.txs.get(&c).and_then(|t| t.rollback_of);
            d += 1;
        }
        false
    }
}

/// What the model expects of a plan: a target error (exit 6), or per path the
/// candidate (`None` when the model cannot compute it).
pub struct Expect {
    pub bad: bool,
    /// Whether the model knows if the revision will be ready to commit.
    pub ready_known: bool,
    pub cands: BTreeMap<String, Fs>,
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() || hay.len() < needle.len() {
        return 0;
    }
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).unwrap()
}

fn lines(b: &[u8]) -> Vec<&[u8]> {
    b.split_inclusive(|c| *c == b'\n').collect()
}

impl Model {
    /// New text: a few fresh lines, sometimes a copy of a line of `like` (so later
    /// targets can be ambiguous), sometimes no final newline.
    fn text(&mut self, rng: &mut Rng, like: Option<&[u8]>) -> String {
        let mut s = String::new();
        for _ in 0..=rng.below(3) {
            if let (Some(l), true) = (like, rng.chance(10)) {
                if let Some(line) = lines(l).first() {
                    s += &String::from_utf8_lossy(line);
                    continue;
                }
            }
            self.uniq += 1;
            let word = rng.pick(&["alpha", "beta", "gamma", "délta", "e\r"]);
            s += &format!("k{} {word}\n", self.uniq);
        }
        if rng.chance(15) {
            s.pop();
        }
        s
    }

    /// A plan of 1–3 edits on distinct paths over `base` (path → candidate the plan is
    /// written against), with the candidates the model expects.
    pub fn plan(&mut self, rng: &mut Rng, base: &dyn Fn(&str) -> Fs) -> (Value, Expect) {
        let n = 1 + rng.below(3) as usize;
        let mut paths: Vec<&str> = PATHS.to_vec();
        let mut edits = Vec::new();
        let mut exp = Expect {
            bad: false,
            ready_known: true,
            cands: BTreeMap::new(),
        };
        for _ in 0..n {
            let p = paths.remove(rng.below(paths.len() as u64) as usize);
            let b = base(p);
            let (edit, cand) = self.edit(rng, p, &b);
            match cand {
                Some(Some(c)) => {
                    exp.cands.insert(p.to_string(), c);
                }
                Some(None) => {}
                None => exp.bad = true,
            }
            edits.push(edit);
        }
        let plan =
            json!({"agent": "soak", "description": format!("soak {}", self.uniq), "edits": edits});
        (plan, exp)
    }

    /// One edit of `p` over `b`: the op and `Some(Some(candidate))`, `Some(None)` when
    /// the candidate cannot be predicted, or `None` when the target must be refused.
    #[allow(clippy::type_complexity)]
    fn edit(&mut self, rng: &mut Rng, p: &str, b: &Fs) -> (Value, Option<Option<Fs>>) {
        let Some(_) = b.hash else {
            if rng.chance(8) {
                return (json!({"op": "delete_file", "path": p}), None);
            }
            let t = self.text(rng, None);
            let mode = if rng.chance(30) { 0o755 } else { 0o644 };
            // Always an explicit mode: without one a re-created path takes its snapshot
            // mode, which this model does not track (tests/it/fidelity.rs covers it).
            let e = json!({"op": "create_file", "path": p, "content": t, "mode": format!("{mode:04o}")});
            return (e, Some(Some(self.remember(t.as_bytes(), mode))));
        };
        let Some(bytes) = self.bytes(b) else {
            // Bytes unknown (a merge result): whole-file ops only.
            return if rng.chance(30) {
                (
                    json!({"op": "delete_file", "path": p}),
                    Some(Some(Fs::ABSENT)),
                )
            } else {
                let t = self.text(rng, None);
                let f = self.remember(t.as_bytes(), b.mode);
                (
                    json!({"op": "replace_file", "path": p, "content": t}),
                    Some(Some(f)),
                )
            };
        };
        let ls = lines(&bytes);
        let uniq: Vec<&[u8]> = ls
            .iter()
            .copied()
            .filter(|l| count(&bytes, l) == 1 && std::str::from_utf8(l).is_ok())
            .collect();
        let dup: Vec<&[u8]> = ls
            .iter()
            .copied()
            .filter(|l| count(&bytes, l) > 1 && std::str::from_utf8(l).is_ok())
            .collect();
        let mode = b.mode;
        let splice = |m: &mut Model, at: std::ops::Range<usize>, with: &[u8]| {
            let mut out = bytes[..at.start].to_vec();
            out.extend_from_slice(with);
            out.extend_from_slice(&bytes[at.end..]);
            Some(Some(m.remember(&out, mode)))
        };
        let s = |l: &[u8]| String::from_utf8(l.to_vec()).unwrap();
        match rng.below(100) {
            0..=24 if !uniq.is_empty() => {
                let old = rng.pick(&uniq);
                let new = self.text(rng, Some(&bytes));
                let at = find(&bytes, old);
                let e = json!({"op": "replace_text", "path": p, "old": s(old), "new": new});
                (e, splice(self, at..at + old.len(), new.as_bytes()))
            }
            25..=39 if !uniq.is_empty() => {
                let anchor = rng.pick(&uniq);
                let text = self.text(rng, Some(&bytes));
                let at = find(&bytes, anchor) + anchor.len();
                let e = json!({"op": "insert_after", "path": p, "anchor": s(anchor), "text": text});
                (e, splice(self, at..at, text.as_bytes()))
            }
            40..=54 if !ls.is_empty() => {
                let start = 1 + rng.below(ls.len() as u64) as usize;
                let end = start + rng.below((ls.len() - start + 1).min(2) as u64) as usize;
                let mut content = self.text(rng, Some(&bytes));
                if !content.ends_with('\n') {
                    content.push('\n');
                }
                let from: usize = ls[..start - 1].iter().map(|l| l.len()).sum();
                let to: usize = ls[..end].iter().map(|l| l.len()).sum();
                let e = json!({"op": "replace_lines", "path": p, "start": start, "end": end, "content": content});
                (e, splice(self, from..to, content.as_bytes()))
            }
            55..=69 => {
                let t = self.text(rng, Some(&bytes));
                let f = self.remember(t.as_bytes(), mode);
                (
                    json!({"op": "replace_file", "path": p, "content": t}),
                    Some(Some(f)),
                )
            }
            70..=81 => (
                json!({"op": "delete_file", "path": p}),
                Some(Some(Fs::ABSENT)),
            ),
            82..=87 if !dup.is_empty() => {
                let old = rng.pick(&dup);
                (
                    json!({"op": "replace_text", "path": p, "old": s(old), "new": "x\n"}),
                    None,
                )
            }
            88..=93 => {
                self.uniq += 1;
                let old = format!("no such line {}\n", self.uniq);
                (
                    json!({"op": "replace_text", "path": p, "old": old, "new": "x\n"}),
                    None,
                )
            }
            94..=96 => (
                json!({"op": "create_file", "path": p, "content": "x\n"}),
                None,
            ),
            _ => {
                let t = self.text(rng, None);
                let f = self.remember(t.as_bytes(), mode);
                (
                    json!({"op": "replace_file", "path": p, "content": t}),
                    Some(Some(f)),
                )
            }
        }
    }
}
