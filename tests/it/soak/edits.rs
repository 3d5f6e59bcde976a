//! The soak's edit steps: preview, revise, rebase, abort, someone else's writes.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::model::*;
use super::{Run, Soak, R, TARGET_KINDS};
use serde_json::json;

impl Soak {
    pub(super) fn open_txs(&self) -> Vec<u64> {
        let m = &self.m;
        m.txs
            .iter()
            .filter(|(_, t)| t.state == "open" && t.rollback_of.is_none())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Mostly an open tx; sometimes any tx (or none) to exercise the refusals.
    pub(super) fn pick_tx(&mut self, pool: Vec<u64>) -> u64 {
        if !pool.is_empty() && self.rng.chance(88) {
            return self.rng.pick(&pool);
        }
        1 + self.rng.below(self.m.next_id)
    }

    pub(super) fn preview(&mut self) -> R {
        let disk: BTreeMap<String, Fs> = self.m.files.clone();
        let (plan, exp) = self
            .m
            .plan(&mut self.rng, &|p| disk.get(p).cloned().unwrap_or_default());
        let file = self.plan_file(&plan);
        self.note(format!("preview {plan}"));
        let r = self.run(&["--json", "preview", "--plan", &file], None);
        self.check_disk("after preview")?;
        if exp.bad {
            return r.expect(6, TARGET_KINDS);
        }
        // A plan that changes nothing is refused and records nothing (no tx).
        if r.code == Some(4) && r.kind() == "nothing_to_change" {
            ensure!(
                !exp.ready_known || exp.cands.iter().all(|(p, c)| *c == self.m.disk(p)),
                "nothing_to_change, but the model's candidates change files: {}",
                r.text
            );
            return r.expect(4, &["nothing_to_change"]);
        }
        let id = self.m.next_id;
        let rev = self.revision(&r, id, None, &exp, &BTreeMap::new(), true)?;
        self.m.new_tx(id, rev, None);
        Ok(())
    }

    /// Check a new revision against the model and return it. `old` are the files of the
    /// revision it builds on; `exact`: the model predicts the candidates and readiness.
    pub(super) fn revision(
        &mut self,
        r: &Run,
        tx: u64,
        n: Option<usize>,
        exp: &Expect,
        old: &BTreeMap<String, (Fs, Fs)>,
        exact: bool,
    ) -> R<Rev> {
        ensure!(
            r.code == Some(0) || r.code == Some(4),
            "expected a revision, got {}: {}",
            r.brief(),
            r.text
        );
        let j = &r.json;
        ensure!(
            j["tx"].as_u64() == Some(tx) && j["revision"].as_u64() == Some(n.unwrap_or(0) as u64),
            "new revision numbered {}/{}, expected tx {tx} revision {n:?}",
            j["tx"],
            j["revision"]
        );
        let mut files = BTreeMap::new();
        for f in j["files"].as_array().unwrap() {
            let p = f["path"].as_str().unwrap().to_string();
            let (s, c) = (
                Fs::from_json(&f["snapshot"]),
                Fs::from_json(&f["candidate"]),
            );
            let want_snap = old
                .get(&p)
                .map(|o| o.0.clone())
                .unwrap_or_else(|| self.m.disk(&p));
            if exact || old.contains_key(&p) {
                ensure!(
                    s == want_snap,
                    "snapshot of {p}: {} != {}",
                    s.short(),
                    want_snap.short()
                );
            }
            if let (true, Some(want)) = (exact, exp.cands.get(&p).or(old.get(&p).map(|o| &o.1))) {
                ensure!(
                    c == *want,
                    "candidate of {p}: {} != model {}",
                    c.short(),
                    want.short()
                );
            }
            files.insert(p, (s, c));
        }
        // (A --rebase merge may also bring back files of the older base revision.)
        ensure!(
            !exact || files
                .keys()
                .all(|p| exp.cands.contains_key(p) || old.contains_key(p))
                && exp.cands.iter().all(|(p, c)| files.contains_key(p)
                    || *c == old.get(p).map_or_else(|| self.m.disk(p), |o| o.0.clone())),
            "revision files {:?} are not the plan's and the base's (an edit that changes nothing may be left out)",
            files.keys()
        );
        let ready = j["ready_to_commit"].as_bool() == Some(true);
        ensure!(
            ready == (r.code == Some(0)),
            "exit code and ready_to_commit disagree"
        );
        if exact && exp.ready_known {
            let changes = files.values().any(|(s, c)| s.hash != c.hash);
            ensure!(
                ready == changes,
                "ready_to_commit is {ready}, the model expects {changes}"
            );
        }
        let conflicted = j["validation"].as_array().into_iter().flatten().any(|i| {
            i["severity"] == "error"
                && matches!(
                    i["code"].as_str(),
                    Some("merge_conflict" | "conflict_markers")
                )
        });
        let merged_conflicts = j["validation"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["severity"] == "error" && i["code"] == "merge_conflict");
        Ok(Rev {
            files,
            ok: ready,
            conflicted,
            merged_conflicts,
        })
    }

    pub(super) fn revise(&mut self) -> R {
        let tx = self.pick_tx(self.open_txs());
        let Some(t) = self.m.txs.get(&tx).cloned() else {
            return Ok(());
        };
        if t.rollback_of.is_some() && t.state == "open" {
            return Ok(()); // the model has not its revisions; check_log reports the state
        }
        let latest = t.revs.len() - 1;
        let base = if latest > 0 && self.rng.chance(30) {
            self.rng.below(latest as u64) as usize
        } else {
            latest
        };
        let rebase = base != latest && self.rng.chance(70);
        let over = t.revs[base].files.clone();
        let disk = self.m.files.clone();
        let (plan, exp) = self.m.plan(&mut self.rng, &|p| {
            over.get(p)
                .map(|f| f.1.clone())
                .unwrap_or_else(|| disk.get(p).cloned().unwrap_or_default())
        });
        let file = self.plan_file(&plan);
        let (b, mut args) = (base.to_string(), vec!["--json", "revise"]);
        let txs = tx.to_string();
        args.extend([txs.as_str(), "--plan", &file]);
        if base != latest || self.rng.chance(20) {
            args.extend(["--base", &b]);
        }
        if rebase {
            args.push("--rebase");
        }
        self.note(format!("{args:?} {plan}"));
        let r = self.run(&args, None);
        self.check_disk("after revise")?;
        if t.state != "open" {
            return r.expect(1, &["wrong_state"]);
        }
        if base != latest && !rebase {
            return r.expect(3, &["stale_revision"]);
        }
        if exp.bad {
            return r.expect(6, TARGET_KINDS);
        }
        let old = t.revs[latest].files.clone();
        let mut exp = exp;
        exp.ready_known = !t.revs[latest].conflicted;
        let rev = self.revision(&r, tx, Some(latest + 1), &exp, &old, !rebase)?;
        self.m.tx(tx).revs.push(rev);
        Ok(())
    }

    pub(super) fn rebase(&mut self) -> R {
        let tx = self.pick_tx(self.open_txs());
        let Some(t) = self.m.txs.get(&tx).cloned() else {
            return Ok(());
        };
        if t.rollback_of.is_some() && t.state == "open" {
            return Ok(()); // the model has not its revisions; check_log reports the state
        }
        self.note(format!("rebase {tx}"));
        let r = self.run(&["--json", "rebase", &tx.to_string()], None);
        self.check_disk("after rebase")?;
        if t.state != "open" {
            return r.expect(1, &["wrong_state"]);
        }
        let latest = t.revs.last().unwrap();
        if latest.merged_conflicts {
            return r.expect(4, &["unresolved_conflicts"]);
        }
        // Every file any revision named, as the gate checks them (issue 29, item 4).
        if self
            .m
            .gated(tx, t.revs.len() - 1)
            .iter()
            .all(|(p, s)| *s == self.m.disk(p))
        {
            return r.expect(1, &["nothing_to_rebase"]);
        }
        // Snapshots become the disk; candidates are the merge, taken from the output.
        let old: BTreeMap<String, (Fs, Fs)> = latest
            .files
            .iter()
            .map(|(p, (_, c))| (p.clone(), (self.m.disk(p), c.clone())))
            .collect();
        let exp = Expect {
            bad: false,
            ready_known: false,
            cands: BTreeMap::new(),
        };
        let rev = self.revision(&r, tx, Some(t.revs.len()), &exp, &old, false)?;
        self.m.tx(tx).revs.push(rev);
        Ok(())
    }

    /// A revise that changes a file back to its snapshot (it leaves the revision's
    /// files), then sometimes someone writes that file and the tx is committed: the
    /// gate checks it all the same (issue 29, item 4), as the model predicts.
    pub(super) fn revert_in_revise(&mut self) -> R {
        let open = self.open_txs();
        let Some(tx) = (!open.is_empty()).then(|| self.rng.pick(&open)) else {
            return self.preview();
        };
        let t = self.m.txs[&tx].clone();
        let latest = t.revs.len() - 1;
        let changed: Vec<(String, Fs)> = t.revs[latest]
            .files
            .iter()
            .filter(|(_, (s, c))| s != c && c.hash.is_some())
            .map(|(p, (s, _))| (p.clone(), s.clone()))
            .collect();
        if changed.is_empty() || t.revs[latest].conflicted {
            return self.revise();
        }
        let (p, snap) = changed[self.rng.below(changed.len() as u64) as usize].clone();
        let edit = match self.m.bytes(&snap) {
            None if snap.hash.is_none() => json!({"op": "delete_file", "path": p}),
            None => return self.revise(),
            Some(bytes) => match String::from_utf8(bytes) {
                Ok(text) => {
                    json!({"op": "write_file", "path": p, "content": text, "mode": format!("{:04o}", snap.mode)})
                }
                Err(_) => return self.revise(),
            },
        };
        let plan = json!({"agent": "soak", "description": "change back", "edits": [edit]});
        let file = self.plan_file(&plan);
        self.note(format!("revise {tx} (change {p} back) {plan}"));
        let r = self.run(
            &["--json", "revise", &tx.to_string(), "--plan", &file],
            None,
        );
        self.check_disk("after revise")?;
        let exp = Expect {
            bad: false,
            ready_known: true,
            cands: BTreeMap::from([(p.clone(), snap)]),
        };
        let old = t.revs[latest].files.clone();
        let rev = self.revision(&r, tx, Some(latest + 1), &exp, &old, true)?;
        ensure!(
            !rev.files.contains_key(&p),
            "{p}, changed back to its snapshot, is still in the revision's files"
        );
        self.m.tx(tx).revs.push(rev);
        if self.rng.chance(60) {
            let f = self.foreign(&p);
            self.m.outside(&p, &f);
            self.note(format!("outside write {p} → {}", f.short()));
        }
        self.batch(super::Op::Commit { tx, rev: None }, super::Fault::None)
    }

    pub(super) fn abort(&mut self) -> R {
        let tx = self.pick_tx(self.open_txs());
        self.note(format!("abort {tx}"));
        let r = self.run(&["--json", "abort", &tx.to_string()], None);
        self.check_disk("after abort")?;
        match self.m.txs.get(&tx).map(|t| t.state.clone()) {
            None => r.expect(1, &["unknown_tx"]),
            Some(s) if s == "open" => {
                r.expect(0, &[])?;
                let t = self.m.tx(tx);
                t.state = "aborted".into();
                t.free = false;
                Ok(())
            }
            // Aborting again changes nothing and says so.
            Some(s) if s == "aborted" => {
                r.expect(0, &[])?;
                ensure!(
                    r.json["already"] == true && r.json["state"] == "aborted",
                    "abort of an aborted tx: {}",
                    r.json
                );
                Ok(())
            }
            Some(_) => r.expect(1, &["wrong_state"]),
        }
    }

    pub(super) fn outside_write(&mut self) -> R {
        let p = self.rng.pick(&PATHS);
        let f = self.foreign(p);
        self.m.outside(p, &f);
        self.note(format!("outside write {p} → {}", f.short()));
        self.check_disk("after the outside write")
    }

    /// Someone edits, creates, deletes or chmods `p`; returns its new state (the caller
    /// puts it in the model).
    pub(super) fn foreign(&mut self, p: &str) -> Fs {
        let abs = self.root().join(p);
        // The disk, not the model: after a crash they may differ.
        let old = fs::read(&abs).ok();
        let mode = fs::metadata(&abs).map_or(0, |m| m.permissions().mode() & 0o7777);
        let cur = match &old {
            Some(b) => self.m.remember(b, mode),
            None => Fs::ABSENT,
        };
        match (cur.hash.is_some(), self.rng.below(10)) {
            (true, 0..=1) => {
                fs::remove_file(&abs).unwrap();
                Fs::ABSENT
            }
            (true, 2) => {
                let mode = if cur.mode == 0o600 { 0o644 } else { 0o600 };
                fs::set_permissions(&abs, fs::Permissions::from_mode(mode)).unwrap();
                Fs { mode, ..cur }
            }
            _ => {
                self.m.uniq += 1;
                let mut bytes = old.unwrap_or_default();
                bytes.extend(format!("k{} outside\n", self.m.uniq).bytes());
                fs::create_dir_all(abs.parent().unwrap()).unwrap();
                fs::write(&abs, &bytes).unwrap();
                let mode = if cur.hash.is_some() { cur.mode } else { 0o644 };
                fs::set_permissions(&abs, fs::Permissions::from_mode(mode)).unwrap();
                self.m.remember(&bytes, mode)
            }
        }
    }
}
