//! Inputs at the edges (docs/threat-model.md): empty files, binary files with NUL
//! bytes, CRLF and mixed line endings, a BOM, no trailing newline, unicode file names, a
//! file deleted / created / turned into a directory (or a symlink) between preview and
//! commit, 10 000 files in one batch, a 100 MiB file.
//!
//! Each case is either handled exactly (the bytes on disk are asserted byte for byte,
//! and a rollback restores the previous tree byte for byte) or refused with a typed
//! error that leaves the tree unchanged; each test asserts which.

mod changed;
mod content;
mod full_disk;
mod large;
mod ownership;
mod rollback_reads;
mod splice;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use ultra_edit::{Error, Receipt};

use crate::support::*;

fn edits(list: &[serde_json::Value]) -> String {
    serde_json::json!({ "edits": list }).to_string()
}

/// Preview and commit `json`; returns the receipt.
fn commit(ws: &Ws, json: &str) -> Receipt {
    let p = ws.preview(json);
    assert!(p.ready_to_commit, "{:?}", p.validation);
    ws.journal.commit(p.tx, Default::default()).unwrap()
}

/// Roll `r` back and require the tree to be `before` again, byte for byte.
fn rollback_to(ws: &Ws, r: &Receipt, before: &BTreeMap<String, String>) {
    ws.journal.rollback(r.tx, Default::default()).unwrap();
    assert_eq!(
        &ws.tree(),
        before,
        "rollback of tx {} is not byte-exact",
        r.tx
    );
}

/// [`workspace`] on tmpfs when there is one (for the tests that build many).
fn fast_workspace() -> Ws {
    workspace_in(crate::stress::fast_tempdir())
}

fn preview_err(ws: &Ws, json: &str) -> Error {
    ws.journal.preview(&plan(json)).unwrap_err()
}

fn ue(root: &Path, args: &[&str]) -> Output {
    run_ue(root, args, None)
}
