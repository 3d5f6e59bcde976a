//! The host calls on a [`Registry`] (src/host.rs): preview, write (with and without
//! an expected preview), write from staged files, roll back — what m1nd's handlers
//! call, one line each (docs/embedding.md, "Host calls"). Exact bytes, kinds and
//! paths.

use std::fs;
use std::path::PathBuf;

use tempfile::TempDir;
use ultra_edit::{Error, Registry};

struct Host {
    _dirs: (TempDir, TempDir, TempDir),
    roots: Vec<PathBuf>,
    registry: Registry,
}

/// Two roots `a` and `b`, and a host registry in a runtime directory of its own.
fn host() -> Host {
    let (a, b, run) = (tempdir(), tempdir(), tempdir());
    let roots = vec![canon(&a), canon(&b)];
    let registry = Registry::for_host(run.path().join("ultra-edit")).unwrap();
    Host {
        _dirs: (a, b, run),
        roots,
        registry,
    }
}

fn tempdir() -> TempDir {
    tempfile::tempdir().unwrap()
}

fn canon(d: &TempDir) -> PathBuf {
    d.path().canonicalize().unwrap()
}

fn read(p: &PathBuf) -> Option<Vec<u8>> {
    fs::read(p).ok()
}

#[test]
fn host_write_files_commits_all_files_in_one_tx_and_rollback_tx_restores_the_bytes() {
    let h = host();
    let (x, y) = (h.roots[0].join("x.txt"), h.roots[0].join("sub/y.txt"));
    fs::write(&x, b"old x\n").unwrap();
    let files = [(&x, &b"new x\n"[..]), (&y, &b"new y\n"[..])];
    let w = h
        .registry
        .write_files(&h.roots, "dev", files, None)
        .unwrap();
    assert_eq!(read(&x).unwrap(), b"new x\n");
    assert_eq!(read(&y).unwrap(), b"new y\n");
    // Sorted by root-relative path: `sub/y.txt` before `x.txt`.
    assert_eq!(w.files, vec![y.clone(), x.clone()]);
    assert_eq!(w.tx.tx, 1);
    // What a host's tool returns as JSON.
    let json = serde_json::json!({"tx": w.tx.to_string(), "files": [y, x]});
    assert_eq!(serde_json::to_value(&w).unwrap(), json);

    let back = h.registry.rollback_tx(&w.tx.to_string()).unwrap();
    assert_eq!(back.tx, w.tx);
    assert_eq!(back.files, vec![y.clone(), x.clone()]);
    assert_eq!(read(&x).unwrap(), b"old x\n");
    assert_eq!(read(&y), None);
    // The directory the commit created is gone with it (exact rollback).
    assert!(!h.roots[0].join("sub").exists());
}

#[test]
fn host_write_files_with_the_expected_preview_commits_that_preview() {
    let h = host();
    let x = h.roots[1].join("x.txt");
    fs::write(&x, b"v1\n").unwrap();
    let p = (h.registry.preview_files(&h.roots, "dev", [(&x, "v2\n")])).unwrap();
    assert_eq!(read(&x).unwrap(), b"v1\n", "a preview writes nothing");
    let text = p.handle.to_string();
    let w = (h
        .registry
        .write_files(&h.roots, "dev", [(&x, "v2\n")], Some(&text)))
    .unwrap();
    assert_eq!(w.tx, p.handle);
    assert_eq!(w.files, vec![x.clone()]);
    assert_eq!(read(&x).unwrap(), b"v2\n");
    // The journal is the second root's: its handle routes there.
    let j = h.registry.journal_of(&p.handle).unwrap();
    assert_eq!(j.root(), h.roots[1].as_path());
}

#[test]
fn host_write_files_refuses_a_preview_of_other_bytes_and_writes_nothing() {
    let h = host();
    let x = h.roots[0].join("x.txt");
    fs::write(&x, b"v1\n").unwrap();
    let p = (h.registry.preview_files(&h.roots, "dev", [(&x, "v2\n")])).unwrap();
    let text = p.handle.to_string();
    let e = (h
        .registry
        .write_files(&h.roots, "dev", [(&x, "v3\n")], Some(&text)))
    .unwrap_err();
    match &e {
        Error::PreviewWritesOther { handle, paths } => {
            assert_eq!(*handle, p.handle);
            assert_eq!(paths, &vec!["x.txt".to_string()]);
        }
        other => panic!("expected PreviewWritesOther, got {other:?}"),
    }
    assert_eq!(e.kind(), "preview_writes_other");
    assert_eq!(read(&x).unwrap(), b"v1\n");
    // A preview that also writes a file not given is refused too.
    let y = h.roots[0].join("y.txt");
    let both = [(&x, "v2\n"), (&y, "y\n")];
    let q = (h.registry.preview_files(&h.roots, "dev", both)).unwrap();
    let q = q.handle.to_string();
    let e = (h
        .registry
        .write_files(&h.roots, "dev", [(&x, "v2\n")], Some(&q)))
    .unwrap_err();
    assert_eq!(e.kind(), "preview_writes_other");
    assert_eq!((read(&x).unwrap(), read(&y)), (b"v1\n".to_vec(), None));
    // The preview is still open and commits as it was made.
    let w = (h
        .registry
        .write_files(&h.roots, "dev", [(&x, "v2\n")], Some(&text)))
    .unwrap();
    assert_eq!(w.tx, p.handle);
    assert_eq!(read(&x).unwrap(), b"v2\n");
}

#[test]
fn host_write_files_with_a_preview_made_stale_is_stale_snapshot() {
    let h = host();
    let x = h.roots[0].join("x.txt");
    fs::write(&x, b"v1\n").unwrap();
    let p = (h.registry.preview_files(&h.roots, "dev", [(&x, "v2\n")])).unwrap();
    fs::write(&x, b"someone else\n").unwrap();
    let text = p.handle.to_string();
    let e = (h
        .registry
        .write_files(&h.roots, "dev", [(&x, "v2\n")], Some(&text)))
    .unwrap_err();
    assert_eq!(e.kind(), "stale_snapshot");
    assert_eq!(read(&x).unwrap(), b"someone else\n");
}

#[test]
fn host_rename_files_commits_the_staged_bytes_and_consumes_the_staged_files() {
    let h = host();
    let (x, y) = (h.roots[0].join("x.txt"), h.roots[0].join("y.txt"));
    let (sx, sy) = (h.roots[0].join(".x.tmp"), h.roots[0].join(".y.tmp"));
    fs::write(&x, b"old\n").unwrap();
    fs::write(&sx, b"staged x\n").unwrap();
    fs::write(&sy, b"staged y\n").unwrap();
    let staged = [(&sx, &x), (&sy, &y)];
    let w = h
        .registry
        .rename_files(&h.roots, "dev", staged, None)
        .unwrap();
    assert_eq!(read(&x).unwrap(), b"staged x\n");
    assert_eq!(read(&y).unwrap(), b"staged y\n");
    assert_eq!((read(&sx), read(&sy)), (None, None));
    assert_eq!(w.files, vec![x.clone(), y.clone()]);
    // The staged files were never part of the tx: a rollback restores the targets only.
    h.registry.rollback_tx(&w.tx.to_string()).unwrap();
    assert_eq!(read(&x).unwrap(), b"old\n");
    assert_eq!((read(&y), read(&sx)), (None, None));
}

#[test]
fn host_rename_files_that_fails_writes_nothing_and_still_removes_the_staged_files() {
    let h = host();
    let x = h.roots[0].join("x.txt");
    let sx = h.roots[0].join(".x.tmp");
    fs::write(&x, b"v1\n").unwrap();
    let p = (h.registry.preview_files(&h.roots, "dev", [(&x, "v2\n")])).unwrap();
    fs::write(&sx, b"v3\n").unwrap();
    let text = p.handle.to_string();
    let e = (h
        .registry
        .rename_files(&h.roots, "dev", [(&sx, &x)], Some(&text)))
    .unwrap_err();
    assert_eq!(e.kind(), "preview_writes_other");
    assert_eq!((read(&x).unwrap(), read(&sx)), (b"v1\n".to_vec(), None));
    // A pair whose staged file is its target is refused before anything is read.
    let e = (h.registry.rename_files(&h.roots, "dev", [(&x, &x)], None)).unwrap_err();
    assert_eq!(e.kind(), "registry");
    assert!(
        e.to_string().contains("named as its own staged file"),
        "{e}"
    );
}

#[test]
fn host_calls_refuse_bad_input_with_typed_errors_and_open_nothing() {
    let h = host();
    let outside = tempdir();
    let f = canon(&outside).join("f.txt");
    let e = h
        .registry
        .write_files(&h.roots, "dev", [(&f, "x")], None)
        .unwrap_err();
    assert_eq!(e.kind(), "registry");
    assert!(e.to_string().contains("in none of the roots given"), "{e}");
    let none: [(PathBuf, &str); 0] = [];
    let e = h
        .registry
        .write_files(&h.roots, "dev", none, None)
        .unwrap_err();
    assert!(e.to_string().contains("no files were given"), "{e}");
    let e = h.registry.rollback_tx("zz").unwrap_err();
    assert_eq!(e.kind(), "registry");
    let e = h.registry.rollback_tx("0123456789abcdef-1").unwrap_err();
    assert_eq!(e.kind(), "unknown_journal");
    assert_eq!(h.registry.opened(), Vec::<PathBuf>::new());
    assert!(h.registry.roots().unwrap().is_empty());
    assert_eq!(read(&f), None);
}

/// The registry resolves a root path once and re-checks it with one `stat`: a symlink
/// retargeted to another root routes to that root's journal; a root renamed away with
/// another directory put in its place is resolved again (to the same path, so the
/// same journal: roots are paths); a root path that names nothing is refused.
#[test]
fn registry_root_resolved_once_follows_a_retargeted_symlink_and_a_replaced_root() {
    let (a, b, run, links) = (tempdir(), tempdir(), tempdir(), tempdir());
    let registry = Registry::for_host(run.path().join("ultra-edit")).unwrap();
    let link = canon(&links).join("root");
    std::os::unix::fs::symlink(canon(&a), &link).unwrap();
    let ja = registry.open_or_create(&link).unwrap();
    assert_eq!(ja.root(), canon(&a).as_path());
    // The same path again: the journal already open.
    assert!(std::sync::Arc::ptr_eq(
        &ja,
        &registry.open_or_create(&link).unwrap()
    ));
    // Retarget the symlink: the next call resolves again and opens b's journal.
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(canon(&b), &link).unwrap();
    let jb = registry.open_or_create(&link).unwrap();
    assert_eq!(jb.root(), canon(&b).as_path());
    assert_ne!(ja.id(), jb.id());

    // A root renamed away and another directory made at its path.
    let r = canon(&links).join("r");
    fs::create_dir(&r).unwrap();
    let j1 = registry.open_or_create(&r).unwrap();
    fs::rename(&r, canon(&links).join("r-old")).unwrap();
    fs::create_dir(&r).unwrap();
    let j2 = registry.open_or_create(&r).unwrap();
    // Roots are paths (docs/embedding.md): the path's journal, as before the cache.
    assert_eq!(j2.root(), r.as_path());
    assert!(std::sync::Arc::ptr_eq(&j1, &j2));
    // And a root path that names nothing any more is the error it was before.
    fs::remove_dir(&r).unwrap();
    let e = registry
        .open_or_create(&r)
        .err()
        .expect("a missing root is refused");
    assert_eq!(e.kind(), "io");
}

/// A preview that changes nothing (the content the file holds) commits through
/// `write_files` with it as the expected preview, as a write of the same bytes would:
/// nothing is written and no error is made of it.
#[test]
fn host_write_files_with_a_preview_that_changes_nothing_commits_it() {
    let h = host();
    let x = h.roots[0].join("x.txt");
    fs::write(&x, b"same\n").unwrap();
    let p = (h.registry.preview_files(&h.roots, "dev", [(&x, "same\n")])).unwrap();
    let text = p.handle.to_string();
    let w = h
        .registry
        .write_files(&h.roots, "dev", [(&x, "same\n")], Some(&text));
    let w = w.unwrap();
    assert_eq!((w.tx, w.files), (p.handle, vec![]));
    assert_eq!(read(&x).unwrap(), b"same\n");
}
