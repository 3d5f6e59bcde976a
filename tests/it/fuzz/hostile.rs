//! Hostile plans through preview and commit: paths that try to leave the root.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use ultra_edit::{EditError, Error, Journal, Plan};

use crate::support::*;

use super::fuzz;

/// Paths that name ordinary files of the workspace (some of them by a detour).
const BENIGN_PATHS: &[&str] = &[
    "src/lib.rs",
    "src/a.rs",
    "crlf.txt",
    "new.txt",
    "deep/er/new.txt",
    "src/./a.rs",
    "src//a.rs",
    "src/x/../a.rs",
    "{ROOT}/README.md",
    "ünï/cödé.txt",
];

/// Paths a hostile plan may name. `{ROOT}` is replaced by the workspace root, `{OUT}`
/// by a directory outside it, `{LONG}` by a 4 200-byte path, `{LONGCOMP}` by a
/// 256-byte name.
const HOSTILE_PATHS: &[&str] = &[
    "../escape.txt",
    "../../x",
    "a/../../x",
    "{OUT}/victim.txt",
    "{ROOT}/../escape.txt",
    "{ROOT}/src/b.rs",
    "linkdir/x",
    "linkdir/victim.txt",
    "link.rs",
    "hard.rs",
    ".git/config",
    "sub/.git/HEAD",
    ".ultra-edit/journal.redb",
    ".ultra-edit/commit.lock",
    "src/.ue-1-0-0000000000000000.tmp",
    "src/a.rs/",
    "src/a.rs/x",
    "src",
    ".",
    "..",
    "/",
    "",
    "a\u{0}b",
    "pipe",
    "very/deep/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p.txt",
    "{LONG}",
    "{LONGCOMP}",
];

/// (path, op, text): three benign paths to two hostile ones.
fn hostile_edit() -> impl Strategy<Value = (&'static str, u8, String)> {
    (
        prop_oneof![
            3 => prop::sample::select(BENIGN_PATHS),
            2 => prop::sample::select(HOSTILE_PATHS),
        ],
        0u8..10,
        "(x|\n|\u{0}|helper|    1\n){0,3}",
    )
}

/// Every entry under `root` but `.ultra-edit/`, without following links or opening
/// anything but regular files (a fifo is never read): files as `blake3 mode links`,
/// directories as `dir mode`, links as `link -> target`, others by their type.
fn full_state(root: &Path) -> BTreeMap<String, String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if rel == ".ultra-edit" {
                continue;
            }
            let md = std::fs::symlink_metadata(&p).unwrap();
            let ft = md.file_type();
            let mode = md.mode() & 0o7777;
            let v = if ft.is_symlink() {
                format!("link -> {}", std::fs::read_link(&p).unwrap().display())
            } else if ft.is_dir() {
                walk(root, &p, out);
                format!("dir {mode:o}")
            } else if ft.is_file() {
                let h = blake3::hash(&std::fs::read(&p).unwrap());
                format!("{} {mode:o} links={}", h.to_hex(), md.nlink())
            } else if ft.is_fifo() {
                format!("fifo {mode:o}")
            } else {
                format!("other {mode:o}")
            };
            out.insert(rel, v);
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn hostile_plans_never_escape_the_root() {
    use std::os::unix::fs::symlink;
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.txt"), "outside\n").unwrap();
    symlink(outside.path(), ws.path("linkdir")).unwrap();
    symlink(ws.path("src/a.rs"), ws.path("link.rs")).unwrap();
    std::fs::hard_link(ws.path("src/b.rs"), ws.path("hard.rs")).unwrap();
    ws.write(".git/config", b"[core]\n");
    ws.write("sub/.git/HEAD", b"ref: x\n");
    let _ = Command::new("mkfifo").arg(ws.path("pipe")).status();
    let root = ws.root().canonicalize().unwrap();
    let out_state = full_state(outside.path());
    let journal = Journal::open(&root).unwrap();
    let subst = |p: &str| -> String {
        match p {
            "{LONG}" => "d/".repeat(2100),
            "{LONGCOMP}" => "x".repeat(256),
            _ => p
                .replace("{ROOT}", &root.to_string_lossy())
                .replace("{OUT}", &outside.path().to_string_lossy()),
        }
    };
    let tally = std::cell::RefCell::new(BTreeMap::<&str, usize>::new());
    let count = |what: &'static str| *tally.borrow_mut().entry(what).or_default() += 1;
    fuzz(
        "hostile plans",
        400,
        Duration::from_secs(6),
        prop::collection::vec(hostile_edit(), 1..4),
        |edits| {
            let edits: Vec<serde_json::Value> = edits
                .iter()
                .map(|(p, op, text)| {
                    let path = subst(p);
                    match op {
                        0 => serde_json::json!({"op":"replace_text","path":path,"old":"helper","new":text}),
                        1 => serde_json::json!({"op":"insert_after","path":path,"anchor":"\n","text":text,"occurrence":1}),
                        2 => serde_json::json!({"op":"replace_lines","path":path,"start":1,"end":1,"content":text}),
                        3 => serde_json::json!({"op":"replace_file","path":path,"content":text,"mode":"0700"}),
                        4 => serde_json::json!({"op":"create_file","path":path,"content":text}),
                        5 => serde_json::json!({"op":"delete_file","path":path}),
                        6 => serde_json::json!({"op":"replace_text","path":path,"old":"u","new":text,"occurrence":"all"}),
                        7 => serde_json::json!({"op":"prepend","path":path,"text":text}),
                        8 => serde_json::json!({"op":"append","path":path,"text":text}),
                        _ => serde_json::json!({"op":"create_file","path":path,"content_base64":"AAEC"}),
                    }
                })
                .collect();
            let json = serde_json::json!({ "edits": edits }).to_string();
            let before = full_state(&root);
            let plan = match Plan::from_json(json.as_bytes()) {
                Ok(p) => p,
                Err(EditError::InvalidPlan { .. }) => {
                    count("invalid plan");
                    return Ok(());
                }
                Err(e) => return Err(TestCaseError::fail(format!("parse: {e:?}"))),
            };
            let allowed = match journal.preview(&plan) {
                Ok(p) => {
                    prop_assert_eq!(
                        full_state(&root),
                        before.clone(),
                        "preview changed the tree"
                    );
                    let paths: Vec<String> = p.files.iter().map(|f| f.path.to_string()).collect();
                    match journal.commit(p.tx, Default::default()) {
                        Ok(r) => {
                            count("committed");
                            let mut paths: Vec<String> =
                                r.files.iter().map(|f| f.path.to_string()).collect();
                            paths.extend(r.created_dirs.iter().map(|d| d.to_string()));
                            paths.extend(r.removed_dirs.iter().map(|d| d.to_string()));
                            paths
                        }
                        Err(Error::ValidationFailed { .. }) => {
                            count("refused at commit: validation");
                            Vec::new()
                        }
                        Err(e) => {
                            return Err(TestCaseError::fail(format!("commit of {paths:?}: {e:?}")))
                        }
                    }
                }
                Err(Error::Path(_)) => {
                    count("refused at preview: path");
                    Vec::new()
                }
                Err(Error::Edit(_)) => {
                    count("refused at preview: edit");
                    Vec::new()
                }
                Err(e) => {
                    return Err(TestCaseError::fail(format!(
                        "preview: untyped refusal {e:?}"
                    )))
                }
            };
            prop_assert_eq!(
                full_state(outside.path()),
                out_state.clone(),
                "a write landed outside the root"
            );
            let after = full_state(&root);
            for k in before.keys().chain(after.keys()) {
                if before.get(k) != after.get(k) {
                    prop_assert!(
                        allowed.contains(k),
                        "{k} changed but is not in the receipt {allowed:?} ({:?} -> {:?})",
                        before.get(k),
                        after.get(k)
                    );
                    prop_assert!(
                        !k.starts_with(".git")
                            && !k.contains("/.git")
                            && k != "link.rs"
                            && k != "hard.rs"
                            && k != "linkdir",
                        "{k} changed"
                    );
                }
            }
            Ok(())
        },
    );
    println!("hostile plans: {:?}", tally.borrow());
    assert!(
        tally.borrow().get("committed").copied().unwrap_or(0) > 5,
        "too few plans reached a commit"
    );
}
