//! Size: 10 000 files in one batch, a 100 MiB file within a memory bound (peak RSS by
//! GNU time), and a needle that would make naive matching quadratic.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use ultra_edit::journal::records::BlobHash;
use ultra_edit::{EditError, Journal};

use crate::support::*;

use super::*;

#[test]
fn ten_thousand_files_in_one_batch_commit_and_roll_back_exactly() {
    let started = Instant::now();
    let dir = crate::stress::fast_tempdir();
    const N: usize = 10_000;
    for i in 0..N {
        let p = dir.path().join(format!("d{:03}/f{i:05}.txt", i % 200));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, format!("file {i}\nvalue = {i}\n")).unwrap();
        if i % 7 == 0 {
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let j = Journal::init(dir.path()).unwrap();
    let before = tree_state(dir.path());
    // 8 500 text edits, 750 deletions, 750 creations in new nested directories.
    let mut list = Vec::with_capacity(N);
    for i in 0..N {
        let path = format!("d{:03}/f{i:05}.txt", i % 200);
        list.push(if i < 8500 {
            serde_json::json!({"op":"replace_text","path":path,"old":format!("value = {i}\n"),"new":format!("value = {}\r\n", i * 2)})
        } else if i < 9250 {
            serde_json::json!({"op":"delete_file","path":path})
        } else {
            serde_json::json!({"op":"create_file","path":format!("new/n{}/c{i}.txt", i % 25),"content":format!("c{i}")})
        });
    }
    let p = j.preview(&plan(&edits(&list))).unwrap();
    assert_eq!(p.files.len(), N);
    let preview_took = started.elapsed();
    let r = j.commit(p.tx, Default::default()).unwrap();
    assert_eq!(r.files.len(), N);
    for i in 0..N {
        let path = dir.path().join(format!("d{:03}/f{i:05}.txt", i % 200));
        if i < 8500 {
            assert_eq!(
                fs::read(&path).unwrap(),
                format!("file {i}\nvalue = {}\r\n", i * 2).into_bytes()
            );
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, if i % 7 == 0 { 0o755 } else { 0o644 }, "{i}");
        } else if i < 9250 {
            assert!(!path.exists());
        } else {
            let c = dir.path().join(format!("new/n{}/c{i}.txt", i % 25));
            assert_eq!(fs::read(c).unwrap(), format!("c{i}").into_bytes());
        }
    }
    let after = tree_state(dir.path());
    assert!(after.keys().all(|k| !k.contains(".ue-")), "temp left");
    let commit_took = started.elapsed() - preview_took;
    j.rollback(r.tx, Default::default()).unwrap();
    assert_eq!(
        tree_state(dir.path()),
        before,
        "rollback of 10 000 files is not byte-exact"
    );
    assert!(j.verify().unwrap().ok);
    println!(
        "10 000 files: preview {preview_took:?}, commit {commit_took:?}, total with rollback {:?}",
        started.elapsed()
    );
}

/// Peak resident memory (KiB) of a child, by `/usr/bin/time -f %M`, when available.
fn peak_rss_kib(root: &Path, args: &[&str]) -> (Output, Option<u64>) {
    let time_ok = Path::new("/usr/bin/time").exists();
    let mut cmd = if time_ok {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "UE_MAXRSS=%M", "--"])
            .arg(env!("CARGO_BIN_EXE_ultra-edit"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_ultra-edit"))
    };
    let out = cmd
        .arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("FAILPOINTS")
        .output()
        .unwrap();
    let rss = String::from_utf8_lossy(&out.stderr).lines().find_map(|l| {
        l.strip_prefix("UE_MAXRSS=")
            .and_then(|v| v.trim().parse().ok())
    });
    (out, rss)
}

/// The memory bounds (docs/benchmarks.md, "Peak memory"), as peak RSS of the
/// `ultra-edit` process above that of `ultra-edit log` on the same workspace (RSS, not
/// time: a loaded machine does not move it). A commit streams the post-image from the
/// journal into its temp and hashes the disk file in 1 MiB pieces: it holds no copy of
/// the file, only redb's 16 MiB page cache and buffers (release build, 106 MB file:
/// 0.2x the file; before, 1.2x). A rollback hashes the disk file as it reads it and
/// diffs a window of the journal's chunks around the edits (`journal::window`): no
/// copy either (before, 2.9x here). Preview and revise hold two copies (the snapshot
/// and the candidate the edit engine builds): 2.3x in a release build. This debug build
/// measured preview 2.2x, revise 2.3x, commit 0.23x, rollback 0.24x. Bounds: commit
/// and rollback 0.5x the file + 32 MiB (a copy of the file anywhere in them fails),
/// preview 3x as before, revise 3.5x. Here (debug build) a 100 MiB file: large enough
/// that the fixed cache does not dominate, small enough for CI; `UE_BIG_MIB=200` runs
/// the 200 MiB of docs/benchmarks.md. The rollback's bytes are checked by their blake3.
#[test]
fn a_large_file_preview_commit_and_rollback_stay_within_their_memory_bounds() {
    let mib: u64 = std::env::var("UE_BIG_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let run = big_file_run(mib as usize);
    let (Some(base), Some(p), Some(r), Some(c), Some(b)) = (
        run.baseline_rss,
        run.preview_rss,
        run.revise_rss,
        run.commit_rss,
        run.rollback_rss,
    ) else {
        panic!("peak RSS is measured with GNU time: install it (`apt-get install time`) so that /usr/bin/time -f %M works");
    };
    println!(
        "{mib} MiB: preview {:?} {p} KiB, revise {r} KiB, commit {:?} {c} KiB, rollback {:?} {b} KiB, baseline {base} KiB",
        run.preview_took, run.commit_took, run.rollback_took
    );
    let file_kib = mib * 1024;
    for (what, rss, bound) in [
        // Issue 34: one copy of the file (the snapshot), the candidate as it plus a
        // spliced region; bounded like the issue's target, 1.25x + 32 MiB.
        ("preview", p, 5 * file_kib / 4 + 32 * 1024),
        ("revise", r, 5 * file_kib / 4 + 32 * 1024),
        ("commit", c, file_kib / 2 + 32 * 1024),
        ("rollback", b, file_kib / 2 + 32 * 1024),
    ] {
        let used = rss.saturating_sub(base);
        assert!(
            used <= bound,
            "{what} of a {mib} MiB file used {used} KiB above the {base} KiB baseline ({:.2}x the file; bound {bound} KiB)",
            used as f64 / file_kib as f64
        );
    }
}

struct BigFileRun {
    preview_took: std::time::Duration,
    commit_took: std::time::Duration,
    rollback_took: std::time::Duration,
    baseline_rss: Option<u64>,
    preview_rss: Option<u64>,
    revise_rss: Option<u64>,
    commit_rss: Option<u64>,
    rollback_rss: Option<u64>,
}

/// Preview and commit, through the CLI, two edits in the middle of a `mib` MiB text file (32-byte
/// numbered lines, every 1000th ending in CRLF with non-ASCII bytes, no final newline),
/// and require the exact bytes on disk; then roll the commit back and require the
/// original bytes (their blake3).
fn big_file_run(mib: usize) -> BigFileRun {
    let ws = workspace();
    let lines = mib * 1024 * 1024 / 32;
    let big = big_text(mib);
    ws.write("big.txt", &big);
    let k = lines / 2 + 1;
    let target = format!("line {k:010} payload .......\n");
    let at = k * 32;
    assert_eq!(&big[at..at + 32], target.as_bytes());
    // The edits lie within 9 lines of each other (LF lines around a CRLF one when
    // `k` is a multiple of 1000 away): one region, as a rollback's diff window needs.
    let anchor = format!("line {:010} payload .......", k + 6);
    let after_anchor = (k + 6) * 32 + 31;
    assert_eq!(&big[after_anchor - 31..after_anchor], anchor.as_bytes());
    let plan_file = ws.dir.path().join("plan.json");
    fs::write(
        &plan_file,
        serde_json::json!({"edits":[
            {"op":"replace_text","path":"big.txt","old":target,"new":"REPLACED\n"},
            {"op":"insert_after","path":"big.txt","anchor":anchor,"text":"!"}]})
        .to_string(),
    )
    .unwrap();
    let plan_arg = plan_file.to_string_lossy().into_owned();
    let (_, baseline_rss) = peak_rss_kib(ws.root(), &["log"]);
    let t0 = Instant::now();
    let (out, preview_rss) = peak_rss_kib(ws.root(), &["--json", "preview", "--plan", &plan_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let preview_took = t0.elapsed();
    let tx = json_of(&out)["tx"].as_u64().unwrap();
    // The preview's diff is the whole files' diff, byte for byte, and its candidate's
    // hash the blake3 of the whole candidate (issue 34: it holds neither whole).
    let previewed = [
        &big[..at],
        b"REPLACED\n".as_slice(),
        &big[at + target.len()..after_anchor],
        b"!".as_slice(),
        &big[after_anchor..],
    ]
    .concat();
    let check_revision = |out: &Output, candidate: &[u8], what: &str| {
        let json = json_of(out);
        let file: ultra_edit::journal::records::FileRevision =
            serde_json::from_value(json["files"][0].clone()).unwrap();
        assert_eq!(
            file.candidate.hash(),
            Some(BlobHash::of(candidate)),
            "{what}"
        );
        assert_eq!(file.candidate.size(), candidate.len() as u64, "{what}");
        let want = ultra_edit::edit::candidate_diff("big.txt", Some(&big), Some(candidate));
        assert_eq!(file.diff, want, "{what}: the diff");
        assert!(want.unified.contains("+REPLACED\n"), "{}", want.unified);
    };
    check_revision(&out, &previewed, "preview");
    // A revision of the same file: the line two lines above the target (1-based
    // line k - 1, bytes (k - 2) * 32 ..) replaced.
    let revised = (k - 2) * 32;
    fs::write(
        &plan_file,
        serde_json::json!({"edits":[{"op":"replace_lines","path":"big.txt","start":k - 1,"end":k - 1,"content":"line revised\n"}]})
            .to_string(),
    )
    .unwrap();
    let (out, revise_rss) = peak_rss_kib(
        ws.root(),
        &["--json", "revise", &tx.to_string(), "--plan", &plan_arg],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(previewed);
    let revised_candidate = [
        &big[..revised],
        b"line revised\n".as_slice(),
        &big[revised + 32..at],
        b"REPLACED\n".as_slice(),
        &big[at + target.len()..after_anchor],
        b"!".as_slice(),
        &big[after_anchor..],
    ]
    .concat();
    check_revision(&out, &revised_candidate, "revise");
    drop(revised_candidate);
    let t0 = Instant::now();
    let (out, commit_rss) = peak_rss_kib(ws.root(), &["--json", "commit", &tx.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commit_took = t0.elapsed();
    let expect = [
        &big[..revised],
        b"line revised\n".as_slice(),
        &big[revised + 32..at],
        b"REPLACED\n".as_slice(),
        &big[at + target.len()..after_anchor],
        b"!".as_slice(),
        &big[after_anchor..],
    ]
    .concat();
    let got = ws.read("big.txt");
    assert!(
        got == expect,
        "{mib} MiB commit is not byte-exact (len {} vs {})",
        got.len(),
        expect.len()
    );
    drop((got, expect));
    // The rollback brings back exactly the original bytes: the same blake3.
    let original = blake3::hash(&big);
    let original_len = big.len();
    drop(big);
    let t0 = Instant::now();
    let (out, rollback_rss) = peak_rss_kib(ws.root(), &["--json", "rollback", &tx.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rollback_took = t0.elapsed();
    let back = ws.read("big.txt");
    assert_eq!(back.len(), original_len, "{mib} MiB rollback: length");
    assert_eq!(
        blake3::hash(&back),
        original,
        "{mib} MiB rollback is not byte-exact"
    );
    BigFileRun {
        preview_took,
        commit_took,
        rollback_took,
        baseline_rss,
        preview_rss,
        revise_rss,
        commit_rss,
        rollback_rss,
    }
}

/// A `mib` MiB text file: 32-byte numbered lines (`line 0000000007 payload .......`,
/// line `i` at byte `32 * i`), every 1000th ending in CRLF with non-ASCII bytes, then
/// `tail without newline`. Built by patching digits into templates (fast even in a
/// debug build).
fn big_text(mib: usize) -> Vec<u8> {
    let lines = mib * 1024 * 1024 / 32;
    let plain = *b"line 0000000000 payload .......\n";
    let crlf: [u8; 32] = "line 0000000000 \u{e9}\u{e9} crlf ----\r\n"
        .as_bytes()
        .try_into()
        .unwrap();
    let mut big = Vec::with_capacity(lines * 32 + 32);
    for i in 0..lines {
        let mut line = if i % 1000 == 0 { crlf } else { plain };
        let mut n = i;
        for d in (5..15).rev() {
            line[d] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        big.extend_from_slice(&line);
    }
    big.extend_from_slice(b"tail without newline");
    big
}

/// A commit of a large file interrupted after its commit point (a real process death
/// at the failpoint `batch::after_commit_point`) is rolled forward by `recover` in a
/// new process through the commit's own streamed path: the file gets exactly the
/// post-image (its blake3), and the recovery's peak RSS above the `log` baseline stays
/// within the commit's bound, 0.5x the file + 32 MiB. A 64 MiB file: recovery that
/// read the disk file whole and the blob whole (as it did) holds two copies, 2x the
/// file, and fails the bound.
#[cfg(feature = "failpoints")]
#[test]
fn recovery_rolls_a_large_file_forward_streamed_within_the_commit_memory_bound() {
    use std::os::unix::process::ExitStatusExt;
    let mib = 64;
    let ws = workspace();
    let big = big_text(mib);
    ws.write("big.txt", &big);
    // A line ending in LF (line k is at index k - 1; every 1000th index ends in CRLF).
    let k = 1_000_002;
    let tx = ws
        .preview(&format!(
            r#"{{"edits":[{{"op":"replace_lines","path":"big.txt","start":{k},"end":{k},"content":"line one million\n"}}]}}"#
        ))
        .tx;
    let at = (k - 1) * 32;
    let expect = blake3::hash(
        &[
            &big[..at],
            b"line one million\n".as_slice(),
            &big[at + 32..],
        ]
        .concat(),
    );
    let original = blake3::hash(&big);
    drop(big);
    let (_, base) = peak_rss_kib(ws.root(), &["log"]);
    let out = run_ue(
        ws.root(),
        &["commit", &tx.to_string()],
        Some("batch::after_commit_point=return"),
    );
    assert_eq!(
        out.status.signal(),
        Some(6),
        "the commit did not abort at the failpoint: {out:?}"
    );
    assert_eq!(
        blake3::hash(&ws.read("big.txt")),
        original,
        "the crash came before any file was written"
    );
    let (out, rss) = peak_rss_kib(ws.root(), &["--json", "recover"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&out);
    assert_eq!(report["actions"][0]["rolls_forward"], true, "{report}");
    assert_eq!(
        report["actions"][0]["rewritten"],
        serde_json::json!(["big.txt"]),
        "{report}"
    );
    assert_eq!(
        blake3::hash(&ws.read("big.txt")),
        expect,
        "recovery did not write the exact post-image"
    );
    let (Some(base), Some(rss)) = (base, rss) else {
        panic!("peak RSS is measured with GNU time: install it (`apt-get install time`) so that /usr/bin/time -f %M works");
    };
    let file_kib = mib as u64 * 1024;
    let used = rss.saturating_sub(base);
    let bound = file_kib / 2 + 32 * 1024;
    println!("recovery of a {mib} MiB file: {rss} KiB peak, {used} KiB above the baseline");
    assert!(
        used <= bound,
        "recovery of a {mib} MiB file used {used} KiB above the {base} KiB baseline ({:.2}x the file; bound {bound} KiB)",
        used as f64 / file_kib as f64
    );
}

/// Text matching is a byte search of the needle at every offset, so a needle that
/// almost matches everywhere makes it quadratic: a plan can make a preview spin for
/// minutes (release build: 8 MiB of `a` and a 64 KiB needle `a…ab` took 18 s). A linear
/// search (two-way, as `memchr::memmem`) bounds it by the file size.
#[test]
fn a_pathological_needle_does_not_make_matching_quadratic() {
    use ultra_edit::edit::{apply_file_edits, Edit, FileBase};
    let base = vec![b'a'; 4 << 20];
    let needle = format!("{}b", "a".repeat(32 << 10));
    let edit = Edit::ReplaceText {
        path: "f".into(),
        old: needle,
        new: "x".into(),
        occurrence: None,
    };
    let t0 = Instant::now();
    let r = apply_file_edits(
        "f",
        FileBase {
            bytes: Some(&base),
            mode: None,
        },
        &[(0, &edit)],
    );
    let took = t0.elapsed();
    assert!(matches!(r, Err(EditError::TargetNotFound { .. })), "{r:?}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "searching a 32 KiB needle in 4 MiB took {took:?}"
    );
}

/// Issue 34: a large file's candidate kept as its snapshot plus one spliced region
/// (the preview's path from 8 MiB up) records exactly what the assembled candidate
/// records: the same files (snapshot and candidate states, so hashes and sizes), the
/// same diff bytes and counts, the same validation, the same summary and the same
/// stored candidate bytes. The threshold is forced both ways on the same edits of a
/// 3 MiB CRLF file (conflict markers in it, non-ASCII bytes, no final newline): edits
/// in the middle, at both ends, far apart, adding a marker and LF endings, removing
/// a marker, leaving the file unchanged; then a revise touching the same file and one
/// touching a second large file.
#[test]
fn a_spliced_candidate_records_exactly_what_the_assembled_one_records() {
    let lines = 3 * 1024 * 1024 / 32;
    let mut big = Vec::with_capacity(lines * 32);
    for i in 0..lines {
        let line = match i {
            1000 => "<<<<<<< ours (kept in the file)\r\n".to_string(),
            2000 => "=======\r\n".to_string(),
            3000 => ">>>>>>> theirs (kept)\r\n".to_string(),
            i if i % 500 == 7 => format!("line {i:08} caf\u{e9} ........\r\n"),
            i => format!("line {i:08} payload .......\r\n"),
        };
        big.extend_from_slice(line.as_bytes());
    }
    big.truncate(big.len() - 2);
    let other: Vec<u8> = big
        .iter()
        .map(|b| if *b == b'p' { b'q' } else { *b })
        .collect();
    let mid = lines / 2;
    let last = format!("line {:08} payload .......", lines - 1);
    let plans = [
        format!(r#"{{"edits":[{{"op":"replace_lines","path":"big.txt","start":{mid},"end":{mid},"content":"one line\r\n"}}]}}"#),
        format!(r#"{{"edits":[{{"op":"replace_lines","path":"big.txt","start":1,"end":2,"content":""}},{{"op":"replace_text","path":"big.txt","old":"{last}","new":"the end"}}]}}"#),
        r#"{"edits":[{"op":"insert_after","path":"big.txt","anchor":"line 00050000 payload .......\r\n","text":"<<<<<<< new\nlf line\n"}]}"#.to_string(),
        r#"{"edits":[{"op":"replace_text","path":"big.txt","old":">>>>>>> theirs (kept)\r\n","new":""}]}"#.to_string(),
        r#"{"edits":[{"op":"replace_text","path":"big.txt","old":"line 00060000 payload","new":"line 00060000 payload"}]}"#.to_string(),
        r#"{"edits":[{"op":"replace_text","path":"big.txt","old":"payload","new":"PAYLOAD","occurrence":"all"}]}"#.to_string(),
    ];
    let revisions = [
        format!(r#"{{"edits":[{{"op":"replace_lines","path":"big.txt","start":{},"end":{},"content":"revised\r\n"}}]}}"#, mid + 3, mid + 3),
        r#"{"edits":[{"op":"replace_text","path":"other.txt","old":"line 00070000 qayload","new":"line 70000"}]}"#.to_string(),
    ];
    // Everything a revision records but its tx, handle and times.
    let recorded = |ws: &Ws, p: &ultra_edit::Preview| {
        let blobs: Vec<Option<Vec<u8>>> = p
            .files
            .iter()
            .map(|f| {
                let h = f.candidate.hash()?;
                let bytes = ws.journal.blob(&h).unwrap().unwrap();
                assert_eq!(BlobHash::of(&bytes), h, "{}: stored bytes", f.path);
                Some(bytes)
            })
            .collect();
        (
            serde_json::to_value(&p.files).unwrap(),
            serde_json::to_value(&p.validation).unwrap(),
            serde_json::to_value(&p.summary).unwrap(),
            (p.lines_added, p.lines_removed, p.ready_to_commit),
            blobs,
        )
    };
    for (n, plan_json) in plans.iter().enumerate() {
        let mut seen = Vec::new();
        for splice_from in [Some(0), Some(usize::MAX)] {
            ultra_edit::set_splice_from(splice_from);
            let ws = workspace();
            ws.write("big.txt", &big);
            ws.write("other.txt", &other);
            let got = ws.journal.preview(&plan(plan_json));
            let mut runs = Vec::new();
            match got {
                Ok(p) => {
                    runs.push(recorded(&ws, &p));
                    for r in &revisions {
                        let p = ws
                            .journal
                            .revise(p.tx, ultra_edit::ReviseOptions::new(), &plan(r))
                            .unwrap();
                        runs.push(recorded(&ws, &p));
                        // The interdiff (diffed from the journal's chunks around the
                        // change for large files) is the whole blobs' diff.
                        let inter = ws
                            .journal
                            .interdiff(p.tx, p.revision - 1, p.revision)
                            .unwrap();
                        assert!(!inter.files.is_empty(), "plan {n}: an empty interdiff");
                        for f in &inter.files {
                            let side = |s: &ultra_edit::journal::records::FileState| {
                                s.hash().map(|h| ws.journal.blob(&h).unwrap().unwrap())
                            };
                            let want = ultra_edit::edit::candidate_diff(
                                &f.path,
                                side(&f.from).as_deref(),
                                side(&f.to).as_deref(),
                            );
                            assert_eq!(f.diff, want, "plan {n}: the interdiff of {}", f.path);
                        }
                    }
                }
                Err(e) => runs.push((
                    serde_json::Value::String(e.to_string()),
                    serde_json::Value::Null,
                    serde_json::Value::Null,
                    (0, 0, false),
                    Vec::new(),
                )),
            }
            seen.push(runs);
        }
        ultra_edit::set_splice_from(None);
        assert_eq!(seen[0], seen[1], "plan {n}: spliced and assembled differ");
    }
}
