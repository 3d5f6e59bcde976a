//! A large file's commit and rollback write the new image mostly from the file on
//! disk (`journal::splice`): the bytes are exact for edits at the start, the middle,
//! the end and far apart, and a file changed between the gate and the temp write is
//! refused as stale and left as it was.
//!
//! In process, with the `failpoints` feature: the failpoints `image::before_splice`
//! and `image::spliced` are given callbacks that act only for this test's thread
//! (thread-local state; a large image is staged on the committing thread), so other
//! tests of the process running meanwhile are not touched.

#![cfg(feature = "failpoints")]

use std::cell::{Cell, RefCell};
use std::fs;
use std::path::PathBuf;

use ultra_edit::{Error, Journal};

use crate::support::*;

use super::edits;

thread_local! {
    /// Images spliced by this thread.
    static SPLICED: Cell<usize> = const { Cell::new(0) };
    /// A file this thread's next splice finds changed, and what it then holds.
    static CHANGE: RefCell<Option<(PathBuf, Vec<u8>)>> = const { RefCell::new(None) };
}

fn hooks() {
    fail::cfg_callback("image::spliced", || SPLICED.with(|n| n.set(n.get() + 1))).unwrap();
    fail::cfg_callback("image::before_splice", || {
        if let Some((path, bytes)) = CHANGE.with(|c| c.borrow_mut().take()) {
            fs::write(path, bytes).unwrap();
        }
    })
    .unwrap();
}

fn spliced() -> usize {
    SPLICED.with(Cell::get)
}

/// 400,000 numbered lines of 27 bytes and a last one without its newline: 10.8 MB,
/// over the 8 MiB above which images are streamed.
fn big() -> Vec<u8> {
    let mut out = Vec::with_capacity(11 << 20);
    for i in 0..400_000u32 {
        out.extend_from_slice(format!("{i:08} line of the file ..\n").as_bytes());
    }
    out.extend_from_slice(b"last line");
    out
}

/// `bytes` with the lines (1-based, each one, in ascending order) replaced by `with`.
fn replaced(bytes: &[u8], lines: &[usize], with: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for (n, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        if lines.contains(&(n + 1)) {
            out.extend_from_slice(with.as_bytes());
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// Exact bytes (blake3) after a commit and after its rollback, through the splice
/// (one image each way), for one-line edits at the first, middle and last line, two
/// far apart and one that changes the size.
#[test]
fn a_large_commit_and_rollback_are_spliced_exactly() {
    hooks();
    let dir = tempfile::tempdir().unwrap();
    let original = big();
    let path = dir.path().join("big.txt");
    fs::write(&path, &original).unwrap();
    let j = Journal::init(dir.path()).unwrap();
    let grown = format!("{}\n", "x".repeat(5000));
    let cases: [(&str, Vec<usize>, &str); 5] = [
        ("start", vec![1], "the first line\n"),
        ("middle", vec![200_000], "the middle line\n"),
        ("end", vec![400_000], "the end, replaced\n"),
        ("far apart", vec![3, 399_990], "far\n"),
        ("grown", vec![250_000], &grown),
    ];
    for (name, lines, with) in cases {
        let list: Vec<serde_json::Value> = lines
            .iter()
            .map(|&l| serde_json::json!({"op":"replace_lines","path":"big.txt","start":l,"end":l,"content":with}))
            .collect();
        let want = replaced(&original, &lines, with);
        let p = j.preview(&plan(&edits(&list))).unwrap();
        let before = spliced();
        let r = j.commit(p.tx, Default::default()).unwrap();
        assert_eq!(
            spliced() - before,
            1,
            "{name}: the commit spliced its image"
        );
        assert_eq!(
            blake3::hash(&fs::read(&path).unwrap()),
            blake3::hash(&want),
            "{name}: commit"
        );
        j.rollback(r.tx, Default::default()).unwrap();
        assert_eq!(
            spliced() - before,
            2,
            "{name}: the rollback spliced its image"
        );
        assert_eq!(
            blake3::hash(&fs::read(&path).unwrap()),
            blake3::hash(&original),
            "{name}: rollback"
        );
    }
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".ultra-edit")
        .collect();
    assert_eq!(left, vec!["big.txt".to_string()], "a temp was left");
}

/// A file written by someone else between the gate and the temp write (the failpoint
/// `image::before_splice`) is caught: the splice's bytes do not hash to the image, the
/// temp is removed and written from the journal, and the install's last check refuses
/// the file as stale — the commit is `StaleSnapshot` naming it, and the file holds the
/// other writer's bytes, untouched.
#[test]
fn a_file_changed_between_the_gate_and_the_temp_write_is_refused_as_stale() {
    hooks();
    let dir = tempfile::tempdir().unwrap();
    let original = big();
    let path = dir.path().join("big.txt");
    fs::write(&path, &original).unwrap();
    let j = Journal::init(dir.path()).unwrap();
    let list = [
        serde_json::json!({"op":"replace_lines","path":"big.txt","start":7,"end":7,"content":"ours\n"}),
    ];
    let p = j.preview(&plan(&edits(&list))).unwrap();
    // Theirs: one byte changed far from our edit, the size kept.
    let mut theirs = original.clone();
    theirs[5_000_000] = b'#';
    CHANGE.with(|c| *c.borrow_mut() = Some((path.clone(), theirs.clone())));
    let before = spliced();
    let err = j.commit(p.tx, Default::default()).unwrap_err();
    assert!(CHANGE.with(|c| c.borrow().is_none()), "the failpoint ran");
    assert_eq!(
        spliced(),
        before,
        "no image was spliced from the changed file"
    );
    match &err {
        Error::StaleSnapshot { tx, paths, .. } => {
            assert_eq!((*tx, paths.clone()), (p.tx, vec!["big.txt".to_string()]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        blake3::hash(&fs::read(&path).unwrap()),
        blake3::hash(&theirs)
    );
    let left: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".ultra-edit")
        .collect();
    assert_eq!(left, vec!["big.txt".to_string()], "a temp was left");
}
