use super::xdl::{bogosqrt, diff_lines, Hunk};
use super::*;
use crate::edit::lines::split_lines;

const OURS: &str = "candidate";
const THEIRS: &str = "disk";
const BASE: &str = "snapshot";

fn merge(base: &str, ours: &str, theirs: &str) -> MergeResult {
    merge3(
        base.as_bytes(),
        ours.as_bytes(),
        theirs.as_bytes(),
        OURS,
        THEIRS,
    )
}

fn text(result: &MergeResult) -> String {
    String::from_utf8_lossy(&result.merged).into_owned()
}

/// Asserts a clean merge with the given output.
fn assert_clean(base: &str, ours: &str, theirs: &str, expected: &str) {
    let result = merge(base, ours, theirs);
    assert_eq!(text(&result), expected);
    assert!(result.is_clean(), "{:?}", result.conflicts);
}

#[test]
fn clean_non_overlapping_changes() {
    assert_clean(
        "1\n2\n3\n4\n5\n6\n7\n",
        "1\ntwo\n3\n4\n5\n6\n7\n",
        "1\n2\n3\n4\n5\nsix\n7\n",
        "1\ntwo\n3\n4\n5\nsix\n7\n",
    );
}

#[test]
fn identical_change_taken_once() {
    assert_clean(
        "a\nb\nc\n",
        "a\nB\nB2\nc\n",
        "a\nB\nB2\nc\n",
        "a\nB\nB2\nc\n",
    );
    // Identical change next to a one-sided one.
    assert_clean(
        "a\nb\nc\nd\ne\n",
        "a\nB\nc\nd\nE\n",
        "a\nB\nc\nd\ne\n",
        "a\nB\nc\nd\nE\n",
    );
}

#[test]
fn one_sided_changes() {
    assert_clean("a\nb\nc\n", "a\nX\nc\n", "a\nb\nc\n", "a\nX\nc\n");
    assert_clean("a\nb\nc\n", "a\nb\nc\n", "a\nc\n", "a\nc\n");
    assert_clean("", "", "new\n", "new\n");
}

#[test]
fn insert_at_start_and_end() {
    assert_clean(
        "a\nb\nc\n",
        "top\na\nb\nc\n",
        "a\nb\nc\nend\n",
        "top\na\nb\nc\nend\n",
    );
}

#[test]
fn delete_vs_modify_conflict() {
    let result = merge("a\nb\nc\n", "a\nc\n", "a\nB\nc\n");
    assert_eq!(
        text(&result),
        "a\n<<<<<<< candidate\n=======\nB\n>>>>>>> disk\nc\n"
    );
    let region = &result.conflicts;
    assert_eq!(region.len(), 1);
    assert_eq!(
        (region[0].ours_start, region[0].ours_lines),
        (2, 0),
        "empty ours range points before line 2"
    );
    assert_eq!((region[0].merged_start, region[0].merged_lines), (2, 4));
    assert_eq!(
        (region[0].base.as_str(), region[0].theirs.as_str()),
        ("b\n", "B\n")
    );
}

#[test]
fn conflict_region_exact_values() {
    // Both rewrote 2..4; the common A and C are moved outside the markers.
    let result = merge("1\n2\n3\n4\n5\n", "1\nA\nB\nC\n5\n", "1\nA\nX\nC\n5\n");
    assert_eq!(
        text(&result),
        "1\nA\n<<<<<<< candidate\nB\n=======\nX\n>>>>>>> disk\nC\n5\n"
    );
    let expected = ConflictRegion {
        merged_start: 3,
        merged_lines: 5,
        base_start: 2,
        base_lines: 3,
        ours_start: 3,
        ours_lines: 1,
        theirs_start: 3,
        theirs_lines: 1,
        ours: "B\n".into(),
        theirs: "X\n".into(),
        base: "2\n3\n4\n".into(),
    };
    assert_eq!(result.conflicts, vec![expected]);
}

#[test]
fn second_conflict_line_numbers_follow_output() {
    let base = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let result = merge(
        base,
        "a\nB1\nc\nd\ne\nf\nG1\nh\n",
        "a\nB2\nc\nd\ne\nf\nG2\nh\n",
    );
    let starts: Vec<_> = result
        .conflicts
        .iter()
        .map(|c| (c.merged_start, c.merged_lines, c.base_start, c.ours_start))
        .collect();
    assert_eq!(starts, [(2, 5, 2, 2), (11, 5, 7, 7)]);
    let lines: Vec<&str> = std::str::from_utf8(&result.merged)
        .unwrap_or_default()
        .lines()
        .collect();
    assert_eq!(lines.get(10), Some(&"<<<<<<< candidate"));
}

#[test]
fn both_insert_at_same_point() {
    let result = merge("a\nb\n", "a\nX\nb\n", "a\nY\nb\n");
    assert_eq!(
        text(&result),
        "a\n<<<<<<< candidate\nX\n=======\nY\n>>>>>>> disk\nb\n"
    );
    let c = &result.conflicts[0];
    assert_eq!((c.base_start, c.base_lines), (2, 0));
    assert_eq!(c.base, "");
}

#[test]
fn touching_changes_conflict_like_git() {
    // Adjacent lines changed on each side: git treats touching hunks as a conflict.
    let result = merge("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n");
    assert_eq!(
        text(&result),
        "a\n<<<<<<< candidate\nB\nc\n=======\nb\nC\n>>>>>>> disk\nd\n"
    );
    assert_eq!(result.conflicts.len(), 1);
}

#[test]
fn conflicts_joined_across_punctuation_only_lines() {
    let base = "x1\n}\n\n}\n{\nx2\n";
    let result = merge(base, "o1\n}\n\n}\n{\no2\n", "t1\n}\n\n}\n{\nt2\n");
    assert_eq!(result.conflicts.len(), 1, "{}", text(&result));
    // With four lines holding letters in between, they stay apart.
    let base = "x1\nk\nl\nm\nn\nx2\n";
    let result = merge(base, "o1\nk\nl\nm\nn\no2\n", "t1\nk\nl\nm\nn\nt2\n");
    assert_eq!(result.conflicts.len(), 2, "{}", text(&result));
}

#[test]
fn crlf_preserved() {
    assert_clean(
        "a\r\nb\r\nc\r\nd\r\n",
        "A\r\nb\r\nc\r\nd\r\n",
        "a\r\nb\r\nc\r\nD\r\n",
        "A\r\nb\r\nc\r\nD\r\n",
    );
    // CRLF everywhere: markers end in CRLF too (as git writes them).
    let result = merge("a\r\nb\r\n", "a\r\nX\r\n", "a\r\nY");
    assert_eq!(
        text(&result),
        "a\r\n<<<<<<< candidate\r\nX\r\n=======\r\nY\r\n>>>>>>> disk\r\n"
    );
    // A CRLF change against an LF one is a real change.
    assert_clean(
        "a\nb\nc\nd\n",
        "a\r\nb\nc\nd\n",
        "a\nb\nc\nd\r\n",
        "a\r\nb\nc\nd\r\n",
    );
}

#[test]
fn missing_final_newline() {
    assert_clean("a\nb\nc", "A\nb\nc", "a\nb\nC", "A\nb\nC");
    assert_clean("a\nb\nc", "a\nb\nc\n", "A\nb\nc", "A\nb\nc\n");
    let result = merge("a\nb", "a\nX", "a\nY");
    assert_eq!(
        text(&result),
        "a\n<<<<<<< candidate\nX\n=======\nY\n>>>>>>> disk\n"
    );
    assert_eq!(result.conflicts[0].ours, "X");
}

#[test]
fn invalid_utf8_kept_exactly() {
    let base = b"\xff1\nb\nc\nd\n\xfe";
    let ours = b"\xff1\nB\nc\nd\n\xfe";
    let theirs = b"\xff1\nb\nc\nD\n\xfe";
    let result = merge3(base, ours, theirs, OURS, THEIRS);
    assert_eq!(result.merged, b"\xff1\nB\nc\nD\n\xfe");
    assert!(result.is_clean());
}

#[test]
fn labels_are_written_after_markers() {
    let result = merge3(b"a\n", b"b\n", b"c\n", "mine", "");
    assert_eq!(result.merged, b"<<<<<<< mine\nb\n=======\nc\n>>>>>>> \n");
}

#[test]
fn conflict_region_serializes() {
    let result = merge("a\n", "b\n", "c\n");
    let json = serde_json::to_string(&result.conflicts).unwrap_or_default();
    let back: Result<Vec<ConflictRegion>, _> = serde_json::from_str(&json);
    assert_eq!(back.ok(), Some(result.conflicts));
}

#[test]
fn diff_slides_changes_down_like_xdiff() {
    // Inserting "b\n" into "a b c" is ambiguous; xdiff puts it after the existing b.
    let old = split_lines(b"a\nb\nc\n");
    let new = split_lines(b"a\nb\nb\nc\n");
    let hunks = diff_lines(&old, &new);
    assert_eq!(
        hunks,
        [Hunk {
            i1: 2,
            chg1: 0,
            i2: 2,
            chg2: 1
        }]
    );
}

#[test]
fn bogosqrt_matches_xdiff() {
    let roots: Vec<usize> = [0, 1, 3, 4, 10, 16, 100].map(bogosqrt).to_vec();
    assert_eq!(roots, [1, 2, 2, 4, 4, 8, 16]);
}

// -----------------------------------------------------------------------
// Comparison with `git merge-file`

/// A (name, base, ours, theirs) fixture.
type Fixture = (String, Vec<u8>, Vec<u8>, Vec<u8>);

fn fixture(name: &str, base: &str, ours: &str, theirs: &str) -> Fixture {
    let bytes = |s: &str| s.as_bytes().to_vec();
    (name.to_string(), bytes(base), bytes(ours), bytes(theirs))
}

fn hand_fixtures() -> Vec<Fixture> {
    vec![
        fixture(
            "clean",
            "1\n2\n3\n4\n5\n6\n7\n",
            "1\ntwo\n3\n4\n5\n6\n7\n",
            "1\n2\n3\n4\n5\nsix\n7\n",
        ),
        fixture("identical", "a\nb\nc\n", "a\nB\nB2\nc\n", "a\nB\nB2\nc\n"),
        fixture("ours-only", "a\nb\nc\n", "a\nX\nc\n", "a\nb\nc\n"),
        fixture("theirs-only", "a\nb\nc\n", "a\nb\nc\n", "a\nc\n"),
        fixture("start-end", "a\nb\nc\n", "top\na\nb\nc\n", "a\nb\nc\nend\n"),
        fixture("delete-modify", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n"),
        fixture(
            "refined",
            "1\n2\n3\n4\n5\n",
            "1\nA\nB\nC\n5\n",
            "1\nA\nX\nC\n5\n",
        ),
        fixture(
            "two-conflicts",
            "a\nb\nc\nd\ne\nf\ng\nh\n",
            "a\nB1\nc\nd\ne\nf\nG1\nh\n",
            "a\nB2\nc\nd\ne\nf\nG2\nh\n",
        ),
        fixture("same-point", "a\nb\n", "a\nX\nb\n", "a\nY\nb\n"),
        fixture("touching", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n"),
        fixture(
            "punct-join",
            "x1\n}\n\n}\n{\nx2\n",
            "o1\n}\n\n}\n{\no2\n",
            "t1\n}\n\n}\n{\nt2\n",
        ),
        fixture(
            "crlf-clean",
            "a\r\nb\r\nc\r\nd\r\n",
            "A\r\nb\r\nc\r\nd\r\n",
            "a\r\nb\r\nc\r\nD\r\n",
        ),
        fixture("crlf-conflict", "a\r\nb\r\n", "a\r\nX\r\n", "a\r\nY"),
        fixture("no-eol-clean", "a\nb\nc", "A\nb\nc", "a\nb\nC"),
        fixture("no-eol-conflict", "a\nb", "a\nX", "a\nY"),
        fixture("eol-vs-line", "a\nb", "a\nb\n", "A\nb"),
        fixture("empty-base", "", "x\n", "y\n"),
        fixture(
            "slide",
            "a\nb\nc\nd\n",
            "a\nb\nb\nc\nd\n",
            "a\nb\nc\nd\nd\n",
        ),
    ]
}

/// Deterministic generator (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33).unwrap_or(0) % n.max(1)
    }
}

/// Code-like lines that repeat (braces, blank lines, common statements).
const COMMON: [&str; 6] = [
    "}\n",
    "\n",
    "{\n",
    "    x += 1;\n",
    "    return;\n",
    "// --\n",
];

fn new_line(rng: &mut Lcg, tag: &str, serial: &mut usize, vocab: usize) -> String {
    *serial += 1;
    match rng.below(10) {
        0..=2 => COMMON[rng.below(COMMON.len())].to_string(),
        3 => format!("{tag} {}\n", rng.below(vocab)),
        _ => format!("{tag} {serial}\n"),
    }
}

/// Random edits (delete / replace / insert) at about `rate` percent of lines.
fn mutate(lines: &[String], rng: &mut Lcg, tag: &str, rate: usize, vocab: usize) -> Vec<String> {
    let (mut out, mut serial, mut i) = (Vec::new(), 0, 0);
    while i <= lines.len() {
        let roll = rng.below(100);
        let fresh = |rng: &mut Lcg, serial: &mut usize| -> Vec<String> {
            (0..1 + rng.below(3))
                .map(|_| new_line(rng, tag, serial, vocab))
                .collect()
        };
        if roll < rate / 3 {
            i += 1 + rng.below(2); // delete
        } else if roll < 2 * rate / 3 {
            out.extend(fresh(rng, &mut serial)); // replace
            i += 1 + rng.below(2);
        } else if roll < rate {
            out.extend(fresh(rng, &mut serial)); // insert
            out.extend(lines.get(i).cloned());
            i += 1;
        } else {
            out.extend(lines.get(i).cloned());
            i += 1;
        }
    }
    out
}

/// A multi-hunk triple; `vocab` small = many repeated lines.
fn generated(seed: u64, len: usize, rate: usize, vocab: usize) -> Fixture {
    let mut rng = Lcg(seed);
    let base: Vec<String> = (0..len)
        .map(|i| match rng.below(10) {
            0..=2 => COMMON[rng.below(COMMON.len())].to_string(),
            3 => format!("line {}\n", rng.below(vocab)),
            _ => format!("line {i} of base\n"),
        })
        .collect();
    let shared = mutate(&base, &mut rng, "both", rate / 3, vocab);
    let ours = mutate(&shared, &mut rng, "ours", rate, vocab);
    let theirs = mutate(&shared, &mut rng, "theirs", rate, vocab);
    let join = |lines: &[String]| lines.concat().into_bytes();
    (
        format!("gen-{seed}"),
        join(&base),
        join(&ours),
        join(&theirs),
    )
}

/// `git merge-file -p` on the triple (with `--diff3` for that style):
/// (merged, conflict count), or None if git is not installed.
fn git_merge_file(
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    style: ConflictStyle,
) -> Option<(Vec<u8>, usize)> {
    use std::process::Command;
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in [("base", base), ("ours", ours), ("theirs", theirs)] {
        std::fs::write(dir.path().join(name), bytes).expect("write fixture");
    }
    let style_args: &[&str] = match style {
        ConflictStyle::Merge => &[],
        ConflictStyle::Diff3 => &["--diff3"],
    };
    let output = Command::new("git")
        .args(["-c", "merge.conflictStyle=merge", "merge-file", "-p"])
        .args(style_args)
        .args([
            "-L", OURS, "-L", BASE, "-L", THEIRS, "ours", "base", "theirs",
        ])
        .current_dir(dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("running git: {e}"),
    };
    let code = output.status.code().expect("git exited by signal");
    assert!(
        (0..128).contains(&code),
        "git merge-file failed ({code}): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some((output.stdout, usize::try_from(code).unwrap_or(0)))
}

/// Runs all fixtures through both, in both conflict styles; returns the names
/// (with the style) that differ.
fn compare_with_git(fixtures: &[Fixture]) -> Option<Vec<String>> {
    let mut differing = Vec::new();
    for style in [ConflictStyle::Merge, ConflictStyle::Diff3] {
        let labels = Labels {
            ours: OURS,
            base: BASE,
            theirs: THEIRS,
        };
        for (name, base, ours, theirs) in fixtures {
            let (git_bytes, git_conflicts) = git_merge_file(base, ours, theirs, style)?;
            let result = merge3_styled(base, ours, theirs, &labels, style);
            if style == ConflictStyle::Merge {
                assert_eq!(result, merge3(base, ours, theirs, OURS, THEIRS), "{name}");
            }
            let name = format!("{name} ({style:?})");
            if result.merged != git_bytes || result.conflicts.len().min(127) != git_conflicts {
                eprintln!(
                    "--- {name}: ours {} conflicts, git {git_conflicts}\n--- ours:\n{}--- git:\n{}",
                    result.conflicts.len(),
                    String::from_utf8_lossy(&result.merged),
                    String::from_utf8_lossy(&git_bytes)
                );
                differing.push(name);
            }
        }
    }
    Some(differing)
}

#[test]
fn matches_git_merge_file() {
    let mut fixtures = hand_fixtures();
    fixtures.extend((1..=10).map(|seed| generated(seed, 40, 12, 1000)));
    fixtures.extend((11..=14).map(|seed| generated(seed, 60, 20, 8)));
    let Some(differing) = compare_with_git(&fixtures) else {
        eprintln!("skipping matches_git_merge_file: git is not installed");
        return;
    };
    assert!(differing.is_empty(), "differ from git: {differing:?}");
}

/// Long runs of common lines between heavily edited runs of a few
/// repeated lines: exercises xdiff's long-snake heuristic.
fn blocks(seed: u64, count: usize) -> Fixture {
    let mut rng = Lcg(seed);
    let mut sides = [String::new(), String::new(), String::new()];
    for block in 0..count {
        for line in 0..25 {
            sides
                .iter_mut()
                .for_each(|s| s.push_str(&format!("block {block} line {line}\n")));
        }
        for side in &mut sides {
            for _ in 0..40 {
                side.push_str(["a\n", "b\n", "c\n"][rng.below(3)]);
            }
        }
    }
    let [base, ours, theirs] = sides.map(String::into_bytes);
    (format!("blocks-{seed}"), base, ours, theirs)
}

/// Line-ending variants of a fixture: `style` 1 = CRLF everywhere,
/// 2 = CRLF in ours only, 3 = every file without its final newline.
fn with_eol_style(f: Fixture, style: u64) -> Fixture {
    let crlf = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .replace('\n', "\r\n")
            .into_bytes()
    };
    let chop = |b: &[u8]| b.strip_suffix(b"\n").unwrap_or(b).to_vec();
    let (name, base, ours, theirs) = f;
    match style {
        1 => (name, crlf(&base), crlf(&ours), crlf(&theirs)),
        2 => (name, base, crlf(&ours), theirs),
        3 => (name, chop(&base), chop(&ours), chop(&theirs)),
        _ => (name, base, ours, theirs),
    }
}

/// Wider random comparison with git (slow; `cargo test -- --ignored`).
/// `MERGE_FUZZ_CASES` sets the number of cases (default 1000).
#[test]
#[ignore]
fn fuzz_against_git() {
    let cases: u64 = std::env::var("MERGE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let mut fixtures = Vec::new();
    for seed in 100..100 + cases {
        let n = usize::try_from(seed).unwrap_or(0);
        let fixture = generated(seed, 5 + n % 60, 5 + n % 30, 3 + n % 20);
        fixtures.push(with_eol_style(fixture, seed % 5));
    }
    // Large rewrites: edit costs past xdiff's heuristic thresholds.
    for seed in 0..cases / 100 {
        fixtures.push(generated(seed, 1500, 60, 40));
        fixtures.push(blocks(seed, 40));
    }
    // ~52k lines a side: past 65k diagonals xdiff's cost limit rises above
    // 256 and its long-snake heuristic comes into play.
    fixtures.push(blocks(cases, 800));
    let Some(differing) = compare_with_git(&fixtures) else {
        return;
    };
    eprintln!("{} of {} differ", differing.len(), fixtures.len());
    assert!(differing.is_empty(), "differ from git: {differing:?}");
}

mod model {
    use super::*;
    use proptest::prelude::*;

    /// One edit of the model: replace base lines `start..start + covered`
    /// (0-based) with `lines`, made by ours or by theirs.
    #[derive(Debug, Clone)]
    struct ModelEdit {
        ours: bool,
        start: usize,
        covered: usize,
        lines: Vec<String>,
    }

    /// (gap, kind 0 = delete / 1 = replace / 2 = insert, base lines, new lines, ours?)
    type RawEdit = (usize, u8, usize, usize, bool);

    /// Lays the raw edits out left to right, at least one unchanged line apart.
    fn layout(raw: &[RawEdit], n: usize, final_newline: bool) -> Vec<ModelEdit> {
        let (mut edits, mut pos) = (Vec::new(), 0);
        for (e, &(gap, kind, len, new_count, ours)) in raw.iter().enumerate() {
            let start = pos + if e == 0 { gap } else { gap.max(1) };
            let covered = if kind == 2 { 0 } else { len };
            let new_count = if kind == 0 { 0 } else { new_count };
            // An insertion after a last line without newline would join it.
            if start + covered > n || (!final_newline && start == n) {
                break;
            }
            let tag = if ours { "o" } else { "t" };
            let lines = (0..new_count).map(|k| format!("{tag}{e}.{k}\n")).collect();
            edits.push(ModelEdit {
                ours,
                start,
                covered,
                lines,
            });
            pos = start + covered;
        }
        edits
    }

    /// Base lines with the chosen edits applied, concatenated.
    fn apply(base: &[String], edits: &[&ModelEdit]) -> Vec<u8> {
        let mut out = String::new();
        let mut at = 0;
        for edit in edits {
            base.get(at..edit.start)
                .into_iter()
                .flatten()
                .for_each(|l| out.push_str(l));
            edit.lines.iter().for_each(|l| out.push_str(l));
            at = edit.start + edit.covered;
        }
        base.get(at..)
            .into_iter()
            .flatten()
            .for_each(|l| out.push_str(l));
        out.into_bytes()
    }

    fn base_lines(crlf: &[bool], final_newline: bool) -> Vec<String> {
        let n = crlf.len();
        (0..n)
            .map(|i| match (i + 1 == n && !final_newline, crlf.get(i)) {
                (true, _) => format!("b{i}"),
                (false, Some(true)) => format!("b{i}\r\n"),
                _ => format!("b{i}\n"),
            })
            .collect()
    }

    fn raw_edits() -> impl Strategy<Value = Vec<RawEdit>> {
        prop::collection::vec(
            (0usize..3, 0u8..3, 1usize..3, 1usize..3, any::<bool>()),
            0..7,
        )
    }

    fn small_text() -> impl Strategy<Value = String> {
        "(a\n|b\n|}\n|\n|c\r\n|d){0,12}"
    }

    proptest! {
        /// Disjoint edits split between the sides merge cleanly into
        /// base with both edit sets applied.
        #[test]
        fn disjoint_edits_merge_cleanly(
            crlf in prop::collection::vec(any::<bool>(), 1..25),
            final_newline in any::<bool>(),
            raw in raw_edits(),
        ) {
            let base = base_lines(&crlf, final_newline);
            let edits = layout(&raw, base.len(), final_newline);
            let side = |ours: bool| apply(&base, &edits.iter().filter(|e| e.ours == ours).collect::<Vec<_>>());
            let (ours, theirs) = (side(true), side(false));
            let expected = apply(&base, &edits.iter().collect::<Vec<_>>());
            let result = merge3(&base.concat().into_bytes(), &ours, &theirs, OURS, THEIRS);
            prop_assert!(result.is_clean(), "conflicts: {:?}", result.conflicts);
            prop_assert_eq!(result.merged, expected);
        }

        /// One side unchanged, or both sides equal: the merge is that side.
        #[test]
        fn trivial_merges(base in small_text(), other in small_text()) {
            let (b, x) = (base.as_bytes(), other.as_bytes());
            for (ours, theirs) in [(x, b), (b, x), (x, x)] {
                let result = merge3(b, ours, theirs, OURS, THEIRS);
                prop_assert!(result.is_clean());
                prop_assert_eq!(&result.merged[..], x);
            }
        }

        /// Each reported region is exactly its marked block in the output.
        #[test]
        fn regions_match_output(base in small_text(), ours in small_text(), theirs in small_text()) {
            let result = merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes(), OURS, THEIRS);
            let lines = split_lines(&result.merged);
            for c in &result.conflicts {
                prop_assert_eq!(c.merged_lines, c.ours_lines + c.theirs_lines + 3);
                let region = lines.get(c.merged_start - 1..c.merged_start - 1 + c.merged_lines);
                let text = String::from_utf8_lossy(&region.unwrap_or_default().concat()).into_owned();
                let nl = |s: &str| if s.is_empty() || s.ends_with('\n') { s.to_string() } else { format!("{s}\n") };
                let expected = format!("<<<<<<< {OURS}\n{}=======\n{}>>>>>>> {THEIRS}\n", nl(&c.ours), nl(&c.theirs));
                prop_assert_eq!(text.replace('\r', ""), expected.replace('\r', ""));
            }
        }
    }
}

#[test]
fn diff3_style_shows_the_base_and_does_not_refine() {
    let labels = Labels {
        ours: OURS,
        base: BASE,
        theirs: THEIRS,
    };
    let diff3 = |base: &str, ours: &str, theirs: &str| {
        merge3_styled(
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
            &labels,
            ConflictStyle::Diff3,
        )
    };
    let r = diff3("a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n");
    assert_eq!(
        text(&r),
        "a\n<<<<<<< candidate\nX\n||||||| snapshot\nb\n=======\nY\n>>>>>>> disk\nc\n"
    );
    assert_eq!(r.conflicts.len(), 1);
    assert_eq!(
        (r.conflicts[0].merged_start, r.conflicts[0].merged_lines),
        (2, 7)
    );
    // The line both sides share stays inside the markers (merge style moves it out).
    let r = diff3("a\nb\nc\nd\n", "a\nS\nX\nd\n", "a\nS\nY\nd\n");
    assert_eq!(
        text(&r),
        "a\n<<<<<<< candidate\nS\nX\n||||||| snapshot\nb\nc\n=======\nS\nY\n>>>>>>> disk\nd\n"
    );
    assert_eq!(
        text(&merge("a\nb\nc\nd\n", "a\nS\nX\nd\n", "a\nS\nY\nd\n")),
        "a\nS\n<<<<<<< candidate\nX\n=======\nY\n>>>>>>> disk\nd\n"
    );
    // A base section without a final newline gets one, as a side does.
    let r = diff3("x", "y", "z");
    assert_eq!(
        text(&r),
        "<<<<<<< candidate\ny\n||||||| snapshot\nx\n=======\nz\n>>>>>>> disk\n"
    );
}
