//! The soak's batch steps: commit and rollback under crashes, kills and injected
//! faults, recovery, and concurrent commits.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Child;
use std::time::Duration;

use super::model::*;
use super::{Fault, Op, Predict, Run, Side, Soak, CRASH_POINTS, R};

impl Soak {
    pub(super) fn pick_commit(&mut self) -> Op {
        let tx = self.pick_tx(self.open_txs());
        let rev = self.m.txs.get(&tx).and_then(|t| {
            let n = t.revs.len() as u64;
            (self.rng.chance(20)).then(|| self.rng.below(n + 1) as u32)
        });
        Op::Commit { tx, rev }
    }

    /// Mostly the newest committed tx (so chains of rollbacks form), else any.
    pub(super) fn pick_rollback(&mut self) -> Op {
        let committed: Vec<u64> = self
            .m
            .txs
            .iter()
            .filter(|(_, t)| t.state == "committed")
            .map(|(id, _)| *id)
            .collect();
        let newest = self
            .m
            .txs
            .iter()
            .filter(|(_, t)| t.state == "committed")
            .max_by_key(|(_, t)| t.applied)
            .map(|(id, _)| *id);
        let x = match newest {
            Some(n) if self.rng.chance(55) => n,
            _ => self.pick_tx(committed),
        };
        let force = self.rng.chance(30);
        Op::Rollback { x, force }
    }

    /// A retry of a commit or rollback that may have landed (issue 29, item 3): the
    /// commit of a committed tx, or the rollback of a rolled-back one; the model
    /// predicts "already" or the refusal.
    pub(super) fn retry(&mut self) -> R {
        let pool = |state: &str| -> Vec<u64> {
            self.m
                .txs
                .iter()
                .filter(|(_, t)| t.state == state && t.rollback_of.is_none())
                .map(|(id, _)| *id)
                .collect()
        };
        let (committed, rolled_back) = (pool("committed"), pool("rolled_back"));
        let op = match (
            committed.is_empty(),
            rolled_back.is_empty(),
            self.rng.chance(50),
        ) {
            (false, _, true) | (false, true, _) => {
                let tx = self.rng.pick(&committed);
                // Mostly the revision committed; sometimes the latest.
                let rev = self.m.txs[&tx]
                    .committed_rev
                    .filter(|_| self.rng.chance(70))
                    .map(|n| n as u32);
                Op::Commit { tx, rev }
            }
            (_, false, _) => Op::Rollback {
                x: self.rng.pick(&rolled_back),
                force: self.rng.chance(30),
            },
            (true, true, _) => return self.preview(),
        };
        self.batch(op, Fault::None)
    }

    pub(super) fn pick_op(&mut self) -> Op {
        if self.rng.chance(50) {
            self.pick_commit()
        } else {
            self.pick_rollback()
        }
    }

    pub(super) fn predict(&self, op: &Op) -> Predict {
        match *op {
            Op::Commit { tx, rev } => {
                let Some(t) = self.m.txs.get(&tx) else {
                    return Predict::Fail(1, "unknown_tx");
                };
                let asked = rev.map_or(t.revs.len() - 1, |n| n as usize);
                // A retry of the commit that landed: its receipt, "already".
                if t.state == "committed"
                    && t.rollback_of.is_none()
                    && t.committed_rev == Some(asked)
                {
                    return Predict::Already(tx);
                }
                if t.state != "open" || t.rollback_of.is_some() {
                    return Predict::Fail(1, "wrong_state");
                }
                let Some(r) = t.revs.get(asked) else {
                    return Predict::Fail(1, "unknown_revision");
                };
                if !r.ok {
                    return Predict::Fail(4, "validation_failed");
                }
                if r.batch().iter().any(|f| self.m.attention.contains(&f.path)) {
                    return Predict::Fail(7, "attention_owns_files");
                }
                // Every file any revision up to this one named (issue 29, item 4).
                if self
                    .m
                    .gated(tx, asked)
                    .iter()
                    .any(|(p, s)| *s != self.m.disk(p))
                {
                    return Predict::Fail(3, "stale_snapshot");
                }
                Predict::Land(r.batch())
            }
            Op::Rollback { x, force } => {
                let Some(t) = self.m.txs.get(&x) else {
                    return Predict::Fail(1, "unknown_tx");
                };
                // A retry of a rollback that landed: the rollback tx `by` is committed
                // and its change is on disk (not every file back at its pre-image).
                if let (true, Some(by)) = (t.state == "rolled_back", t.rolled_back_by) {
                    if let Some(b) = self.m.txs.get(&by).filter(|b| b.state == "committed") {
                        let files = b.batch.as_deref().unwrap_or_default();
                        if files.is_empty() || !files.iter().all(|f| f.pre == self.m.disk(&f.path))
                        {
                            return Predict::Already(by);
                        }
                    }
                }
                let Some(batch) = t.batch.as_ref().filter(|_| t.state == "committed") else {
                    return Predict::Fail(1, "wrong_state");
                };
                // Its change live again through a redo (its newest rollback rolled back by
                // a tx still committed): refused, naming the redo (`StateReason::Redone`).
                if self.m.redone(x) {
                    return Predict::Fail(1, "wrong_state");
                }
                // A batch that needs attention owns its files (checked before staleness).
                if batch.iter().any(|f| self.m.attention.contains(&f.path)) {
                    return Predict::Fail(7, "attention_owns_files");
                }
                // Every file already back at its old content: nothing to roll back, forced
                // or not.
                if !batch.is_empty() && batch.iter().all(|f| f.pre == self.m.disk(&f.path)) {
                    return Predict::Fail(1, "wrong_state");
                }
                if !force && batch.iter().any(|f| f.post != self.m.disk(&f.path)) {
                    return Predict::Fail(3, "stale_rollback");
                }
                Predict::Land(
                    batch
                        .iter()
                        .filter(|f| self.m.disk(&f.path) != f.pre)
                        .map(|f| BFile {
                            path: f.path.clone(),
                            pre: self.m.disk(&f.path),
                            post: f.pre.clone(),
                        })
                        .collect(),
                )
            }
        }
    }

    pub(super) fn land(&mut self, op: &Op, batch: Vec<BFile>, rb: u64) {
        match *op {
            Op::Commit { tx, rev } => {
                let latest = self.m.txs[&tx].revs.len() - 1;
                self.m
                    .land_commit(tx, rev.map_or(latest, |n| n as usize), batch)
            }
            Op::Rollback { x, .. } => {
                if !self.m.txs.contains_key(&rb) {
                    let rev = Rev {
                        files: BTreeMap::new(),
                        ok: true,
                        conflicted: false,
                        merged_conflicts: false,
                    };
                    self.m.new_tx(rb, rev, Some(x));
                }
                self.m.tx(rb).free = false;
                self.m.land_rollback(x, rb, batch);
            }
        }
    }

    /// The rollback tx a rollback of `x` recorded (if it got that far) joins the model
    /// as a free tx; `check_log` then holds it to "not open unless its batch landed".
    pub(super) fn adopt_rollback_tx(&mut self, x: u64, id: u64) {
        if self.m.txs.contains_key(&id) {
            return;
        }
        let Ok(log) = self.log() else { return };
        if let Some(e) = log
            .get(&id)
            .filter(|e| e["rollback_of"].as_u64() == Some(x))
        {
            let rev = Rev {
                files: BTreeMap::new(),
                ok: true,
                conflicted: false,
                merged_conflicts: false,
            };
            self.m.new_tx(id, rev, Some(x));
            let t = self.m.tx(id);
            t.free = true;
            t.state = e["state"].as_str().unwrap_or("?").into();
            t.revs = vec![t.revs[0].clone(); e["revisions"].as_u64().unwrap_or(1) as usize];
        }
    }

    /// Run a commit or rollback under `fault` and settle the outcome into the model.
    pub(super) fn batch(&mut self, op: Op, fault: Fault) -> R {
        let pred = self.predict(&op);
        let rb = self.m.next_id;
        let mut args = vec!["--json".to_string()];
        match op {
            Op::Commit { tx, rev } => {
                args.extend(["commit".into(), tx.to_string()]);
                if let Some(n) = rev {
                    args.extend(["--revision".into(), n.to_string()]);
                }
            }
            Op::Rollback { x, force } => {
                args.extend(["rollback".into(), x.to_string()]);
                if force {
                    args.push("--force".into());
                }
            }
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (r, expect_side) = match &fault {
            Fault::None => {
                self.note(args.join(" "));
                (self.run(&argv, None), None)
            }
            Fault::Crash(fp, _) | Fault::Inject(fp) => {
                let side = match &fault {
                    Fault::Crash(_, s) => *s,
                    _ => None,
                };
                self.note(format!("FAILPOINTS='{fp}' {}", args.join(" ")));
                (self.run(&argv, Some(fp)), side)
            }
            Fault::Kill(us) => {
                self.note(format!("{} killed after {us} µs", args.join(" ")));
                let mut child = self.spawn(&argv);
                std::thread::sleep(Duration::from_micros(*us));
                let _ = child.kill();
                let r = Run::of(child.wait_with_output().unwrap());
                self.noted(&r);
                (r, None)
            }
        };
        let landed_batch = match &pred {
            Predict::Land(b) => b.clone(),
            Predict::Fail(..) | Predict::Already(_) => Vec::new(),
        };
        if let Predict::Already(of) = pred {
            // Answered before the lock, from the journal: nothing written, whatever the
            // fault (a kill may land before the answer).
            if r.signal.is_none()
                && !(matches!(fault, Fault::Inject(_))
                    && r.code == Some(1)
                    && r.kind() == "journal")
            {
                r.expect(0, &[])?;
                ensure!(
                    r.json["already"] == true && r.json["tx"].as_u64() == Some(of),
                    "a retry of a landed {} should answer tx {of}'s receipt with already: true: {}",
                    args[1],
                    r.json
                );
            }
            let rec = self.run(&["--json", "recover"], None);
            rec.expect(0, &[])?;
            ensure!(
                rec.json["batches_found"] == 0,
                "a retry left a batch: {}",
                rec.json
            );
            return self.check_disk("after a retry that landed already");
        }
        if let (Predict::Fail(code, kind), true) = (&pred, r.signal.is_some()) {
            // Killed before it could refuse (at the lock): nothing to settle.
            let rec = self.run(&["--json", "recover"], None);
            rec.expect(0, &[])?;
            ensure!(
                rec.json["batches_found"] == 0,
                "a refused {kind} ({code}) left a batch: {}",
                rec.json
            );
            return Ok(());
        }
        let refused_for_attention = matches!(pred, Predict::Fail(7, _));
        if r.signal.is_some() || (r.code == Some(7) && !refused_for_attention) {
            return self.settle(&op, landed_batch, rb, expect_side);
        }
        // A rollback that landed before answers its receipt again with `"already":
        // true`, exit 0, and writes nothing (issue 29 item 3): the model must have the
        // tx rolled back (a retried commit is matched below).
        if let (Some(0), true, Op::Rollback { x, .. }) = (r.code, r.json["already"] == true, &op) {
            let landed = self.m.txs.get(x).is_some_and(|t| t.state == "rolled_back");
            ensure!(
                landed && matches!(pred, Predict::Fail(1, "wrong_state")),
                "an `already` answer for a rollback the model has not landed: {}",
                r.text
            );
            return self.check_disk("after an `already` answer");
        }
        match (&pred, r.code) {
            (Predict::Land(b), Some(0)) => {
                let got = r.json["tx"].as_u64();
                let want = match op {
                    Op::Commit { tx, .. } => tx,
                    Op::Rollback { .. } => rb,
                };
                ensure!(got == Some(want), "receipt of tx {got:?}, expected {want}");
                let b = b.clone();
                self.land(&op, b, rb);
                self.check_disk("after a successful batch")
            }
            // A retried commit of the revision that landed answers that commit's
            // receipt with `already` and writes nothing (issue 29, item 3); the model
            // does not keep which revision landed, so the answer says which.
            (Predict::Fail(1, "wrong_state"), Some(0))
                if r.json["already"] == true
                    && matches!(op, Op::Commit { tx, .. }
                        if self.m.txs.get(&tx).is_some_and(|t| t.state == "committed")
                            && r.json["tx"].as_u64() == Some(tx)) =>
            {
                self.check_disk("after a retried commit")
            }
            (Predict::Fail(code, kind), _) => {
                if matches!(fault, Fault::Inject(_)) && r.code == Some(1) && r.kind() == "journal" {
                    return Ok(()); // the injected fault came first
                }
                r.expect(*code, &[kind])
            }
            (Predict::Land(_), _) if !matches!(fault, Fault::None) => {
                r.expect(1, &["commit_failed", "journal", "io"])?;
                // "No file changed" / "the tree's files are not affected": the disk is as
                // before now, and recovery must not land the batch afterwards.
                self.check_disk(&format!("{} says the tree was not affected", r.kind()))?;
                let rec = self.run(&["--json", "recover"], None);
                rec.expect(0, &[])?;
                self.check_disk("recovery after an error that said no file changed")?;
                if let Op::Rollback { x, .. } = op {
                    self.adopt_rollback_tx(x, rb);
                }
                Ok(())
            }
            (Predict::Land(_), _) => {
                Err(format!("expected success, got {}: {}", r.brief(), r.text))
            }
            // Settled above.
            (Predict::Already(_), _) => Ok(()),
        }
    }

    /// After a crash, a kill or an ambiguous error: maybe someone writes a file, maybe
    /// recovery itself crashes, then recovery (and, when it needs attention, an abort
    /// attempt and a fix); the disk then decides which side the batch is on.
    pub(super) fn settle(&mut self, op: &Op, batch: Vec<BFile>, rb: u64, want: Option<Side>) -> R {
        let forced = std::mem::take(&mut self.attention_step);
        let foreign = (forced || self.rng.chance(25)).then(|| {
            // Often a file of the batch: the way a batch comes to need attention.
            let p = match batch.len() as u64 {
                n @ 1.. if forced || self.rng.chance(50) => {
                    batch[self.rng.below(n) as usize].path.as_str()
                }
                _ => self.rng.pick(&PATHS),
            };
            let p = PATHS.iter().copied().find(|q| *q == p).unwrap_or(PATHS[0]);
            let f = self.foreign(p);
            self.note(format!("outside write {p} → {}", f.short()));
            (p.to_string(), f)
        });
        let tx_of = match *op {
            Op::Commit { tx, .. } => tx,
            Op::Rollback { .. } => rb,
        };
        for _ in 0..self.rng.below(3) {
            let n = self.rng.below(4);
            let fp = format!("recovery::after_file={n}*off->return");
            self.note(format!("FAILPOINTS='{fp}' recover"));
            let r = self.run(&["--json", "recover"], Some(&fp));
            ensure!(
                r.signal == Some(6) || matches!(r.code, Some(0) | Some(7)),
                "recover: {}",
                r.text
            );
        }
        self.note("recover".into());
        let mut r = self.run(&["--json", "recover"], None);
        let mut aborted = false;
        if r.code == Some(7) {
            ensure!(
                foreign.is_some(),
                "recovery needs attention without a foreign write: {}",
                r.text
            );
            // While it needs attention, other txs on its files: a preview is made, a
            // commit or rollback that writes them is refused (issue 29 item 1).
            // (After a commit: a rollback's own tx joins the model only once settled.)
            if matches!(op, Op::Commit { .. }) && (forced || self.rng.chance(50)) {
                self.m.attention = batch.iter().map(|f| f.path.clone()).collect();
                let held = self.while_attention();
                self.m.attention.clear();
                held?;
            }
            if self.rng.chance(40) {
                self.note(format!("abort {tx_of}"));
                let a = self.run(&["--json", "abort", &tx_of.to_string()], None);
                aborted = a.code == Some(0);
            }
            let (p, _) = foreign.clone().unwrap();
            let pre = batch.iter().find(|f| f.path == p).map(|f| f.pre.clone());
            match pre.and_then(|f| self.m.bytes(&f).map(|b| (f, b))) {
                Some((f, bytes)) if self.rng.chance(40) => {
                    self.note(format!("restore {p} and recover"));
                    fs::write(self.root().join(&p), bytes).unwrap();
                    fs::set_permissions(self.root().join(&p), fs::Permissions::from_mode(f.mode))
                        .unwrap();
                    r = self.run(&["--json", "recover"], None);
                }
                _ => {
                    self.note("recover --overwrite".into());
                    r = self.run(&["--json", "recover", "--overwrite"], None);
                }
            }
        }
        r.expect(0, &[])?;
        let disk = self.scan()?;
        let get = |p: &str| disk.get(p).cloned().unwrap_or_default();
        let kept = |p: &str| {
            foreign
                .as_ref()
                .is_some_and(|(fp, f)| fp == p && get(p) == *f)
        };
        let files: Vec<&BFile> = batch.iter().filter(|f| !kept(&f.path)).collect();
        let side = if files.is_empty() {
            let log = self.log()?;
            let before = self.m.txs.get(&tx_of).map(|t| t.state.clone());
            match log.get(&tx_of).and_then(|e| e["state"].as_str()) {
                Some("committed") if before.as_deref() != Some("committed") => Side::Post,
                _ => Side::Pre,
            }
        } else if files.iter().all(|f| get(&f.path) == f.pre) {
            Side::Pre
        } else if files.iter().all(|f| get(&f.path) == f.post) {
            Side::Post
        } else {
            let mixed: Vec<String> = files
                .iter()
                .map(|f| {
                    format!(
                        "{}: disk {} pre {} post {}",
                        f.path,
                        get(&f.path).short(),
                        f.pre.short(),
                        f.post.short()
                    )
                })
                .collect();
            return Err(format!(
                "batch neither all-old nor all-new after recovery: {mixed:?}"
            ));
        };
        ensure!(
            want.is_none_or(|w| w == side),
            "the failpoint's documented outcome is the {want:?} side, recovery left the {side:?} side"
        );
        ensure!(
            !(aborted && side == Side::Post),
            "abort of tx {tx_of} succeeded while its batch needed attention, and recovery then landed the batch"
        );
        // Replay into the model: the batch (if it landed), then a foreign write that stayed.
        if side == Side::Post {
            self.land(op, batch.clone(), rb);
        } else if let Op::Rollback { x, .. } = op {
            self.adopt_rollback_tx(*x, rb);
        }
        if aborted && side == Side::Pre && tx_of != rb {
            self.m.tx(tx_of).state = "aborted".into();
        }
        if let Some((p, f)) = foreign {
            if get(&p) == f {
                self.m.outside(&p, &f);
            } else {
                ensure!(
                    batch.iter().any(|b| b.path == p && get(&p) == if side == Side::Post { b.post.clone() } else { b.pre.clone() }),
                    "recovery overwrote {p}, which someone wrote, with bytes that are not its batch's {side:?} side"
                );
            }
        }
        self.check_disk("after recovery")
    }

    /// With a batch that needs attention (its files in `self.m.attention`, the disk
    /// ahead of the model by one outside write): preview a new tx that writes one of
    /// its files (a preview may be made), commit it, and roll back a committed tx that
    /// wrote one of them, if any; the model predicts the refusals (exit 7,
    /// `attention_owns_files`). Nothing changes on disk, so no disk check here.
    fn while_attention(&mut self) -> R {
        let owned = self.m.attention.clone();
        let p = owned[self.rng.below(owned.len() as u64) as usize].clone();
        self.m.uniq += 1;
        let plan = serde_json::json!({"edits": [{"op": "write_file", "path": p, "content": format!("attention k{}\n", self.m.uniq)}]});
        let file = self.plan_file(&plan);
        self.note(format!("preview {plan} (batch needs attention)"));
        let r = self.run(&["--json", "preview", "--plan", &file], None);
        let id = self.m.next_id;
        let exp = Expect {
            bad: false,
            ready_known: false,
            cands: BTreeMap::new(),
        };
        let rev = self.revision(&r, id, None, &exp, &BTreeMap::new(), false)?;
        ensure!(
            rev.ok,
            "a preview of an owned file is ready to commit: {}",
            r.text
        );
        self.m.new_tx(id, rev, None);
        let op = Op::Commit { tx: id, rev: None };
        ensure!(
            matches!(self.predict(&op), Predict::Fail(7, _)),
            "the model lets tx {id} commit {p}, which a batch that needs attention owns"
        );
        self.batch(op, Fault::None)?;
        let writers: Vec<u64> = self
            .m
            .txs
            .iter()
            .filter(|(_, t)| t.state == "committed")
            .filter(|(_, t)| {
                t.batch
                    .as_ref()
                    .is_some_and(|b| b.iter().any(|f| owned.contains(&f.path)))
            })
            .map(|(id, _)| *id)
            .collect();
        if !writers.is_empty() {
            let x = writers[self.rng.below(writers.len() as u64) as usize];
            let force = self.rng.chance(50);
            self.batch(Op::Rollback { x, force }, Fault::None)?;
        }
        Ok(())
    }

    /// The sequence of issue 29 item 1, on purpose: a commit dies right after its commit
    /// point, someone writes one of its files, recovery leaves the batch needing
    /// attention; then a preview and a commit of that file and a rollback of an earlier
    /// commit of it (refused while the batch needs attention), then the batch is settled
    /// (`recover --overwrite`, or the file put back).
    pub(super) fn attention(&mut self) -> R {
        let ready: Vec<u64> = self
            .open_txs()
            .into_iter()
            .filter(|&tx| {
                matches!(
                    self.predict(&Op::Commit { tx, rev: None }),
                    Predict::Land(ref b) if !b.is_empty()
                )
            })
            .collect();
        if ready.is_empty() {
            return self.preview();
        }
        let tx = ready[self.rng.below(ready.len() as u64) as usize];
        self.attention_step = true;
        let fp = "batch::after_commit_point=return".to_string();
        let r = self.batch(
            Op::Commit { tx, rev: None },
            Fault::Crash(fp, Some(Side::Post)),
        );
        self.attention_step = false;
        r
    }

    pub(super) fn crash(&mut self) -> R {
        let op = self.pick_op();
        let (point, side) = self.rng.pick(&CRASH_POINTS);
        let n = self.rng.below(3);
        let fp = if point == "revert::after_restore_file" {
            format!(
                "fs::rename={}*off->1*return(13)->off;{point}={n}*off->return",
                self.rng.below(3)
            )
        } else {
            format!("{point}={n}*off->return")
        };
        self.batch(op, Fault::Crash(fp, Some(side)))
    }

    /// 2–3 processes commit different open txs at once. Each lands or is stale because
    /// one that landed touched its files; landed ones replay in batch order.
    pub(super) fn concurrent(&mut self) -> R {
        let mut pool: Vec<u64> = self
            .open_txs()
            .into_iter()
            .filter(|&tx| {
                matches!(
                    self.predict(&Op::Commit { tx, rev: None }),
                    Predict::Land(_)
                )
            })
            .collect();
        if pool.len() < 2 {
            return self.preview();
        }
        let n = 2 + self.rng.below(2).min(pool.len() as u64 - 2) as usize;
        let txs: Vec<u64> = (0..n)
            .map(|_| pool.remove(self.rng.below(pool.len() as u64) as usize))
            .collect();
        self.note(format!("concurrent commits of {txs:?}"));
        let kids: Vec<Child> = txs
            .iter()
            .map(|tx| self.spawn(&["--json", "commit", &tx.to_string(), "--lock-timeout", "60"]))
            .collect();
        let runs: Vec<Run> = kids
            .into_iter()
            .map(|c| Run::of(c.wait_with_output().unwrap()))
            .collect();
        let mut landed = Vec::new();
        for (tx, r) in txs.iter().zip(&runs) {
            self.note(format!("  commit {tx} → {}", r.brief()));
            if r.code == Some(0) {
                landed.push((r.json["batch"].as_u64().unwrap(), *tx));
            } else {
                r.expect(3, &["stale_snapshot"])?;
            }
        }
        landed.sort();
        for &(_, tx) in &landed {
            let Predict::Land(batch) = self.predict(&Op::Commit { tx, rev: None }) else {
                return Err(format!("tx {tx} landed on a stale snapshot (lost update)"));
            };
            let latest = self.m.txs[&tx].revs.len() - 1;
            self.m.land_commit(tx, latest, batch);
        }
        for tx in txs.iter().filter(|t| !landed.iter().any(|l| l.1 == **t)) {
            let stale = matches!(
                self.predict(&Op::Commit { tx: *tx, rev: None }),
                Predict::Fail(3, _)
            );
            ensure!(
                stale,
                "commit of {tx} refused as stale though no landed commit touched its files"
            );
        }
        self.check_disk("after concurrent commits")
    }
}
