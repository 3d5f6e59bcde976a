#!/usr/bin/env bash
# Demo on real input: a copy of this repository's own src/ tree.
# Builds ultra-edit and the test suite in the profile `cargo test --all-features` uses
# (so the README's second command compiles nothing), previews a multi-file edit,
# revises it (printing what the revision changed), commits it, shows what changed,
# rolls it back, proves every file is byte-identical to the start (sha256 of
# every file and its mode), and dumps the journal.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# Headings in bold on a terminal only; nothing but plain text into a pipe or a file.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
# The demo prints everything in one go: no pager (ultra-edit pages on a terminal).
export ULTRA_EDIT_PAGER=cat

step "build ultra-edit and the tests (cargo test --all-features --no-run; a first build takes minutes)"
# Off a terminal cargo prints a line per crate it starts and nothing while the last,
# largest ones compile: print the time every 30 s so a log never goes quiet for long.
if [ -t 2 ]; then
  cargo test --all-features --no-run --manifest-path "$here/Cargo.toml"
else
  cargo test --all-features --no-run --manifest-path "$here/Cargo.toml" &
  build=$!
  (
    start=$SECONDS
    while sleep 30; do
      kill -0 "$build" 2>/dev/null || exit 0
      echo "  … still building ($((SECONDS - start)) s)" >&2
    done
  ) &
  ticker=$!
  status=0
  wait "$build" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  [ "$status" = 0 ] || exit "$status"
fi
ue="${CARGO_TARGET_DIR:-$here/target}/debug/ultra-edit"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"
cp -R "$here/src" "$work/ws/src"
cd "$work/ws"

# Hash of every file (bytes + mode), .ultra-edit/ excluded.
tree_hash() {
  find . -path ./.ultra-edit -prune -o -type f -print0 | LC_ALL=C sort -z |
    while IFS= read -r -d '' f; do
      printf '%s %s %s\n' "$(stat -c %a "$f")" "$(sha256sum "$f" | cut -c1-64)" "$f"
    done
}

step "init a workspace on a copy of src/ ($(find src -type f | wc -l) files)"
"$ue" init
tree_hash > "$work/before.txt"

step "preview: rename DEFAULT_LOCK_TIMEOUT in two files, add a module, delete one"
cat > "$work/plan.json" <<'JSON'
{"description": "rename the lock timeout constant", "agent": "demo",
 "edits": [
  {"op": "replace_text", "path": "src/workspace.rs",
   "old": "pub const DEFAULT_LOCK_TIMEOUT", "new": "pub const COMMIT_LOCK_TIMEOUT"},
  {"op": "replace_text", "path": "src/lib.rs",
   "old": "DEFAULT_LOCK_TIMEOUT", "new": "COMMIT_LOCK_TIMEOUT"},
  {"op": "create_file", "path": "src/demo/notes.rs", "content": "//! Added by the demo.\n"},
  {"op": "delete_file", "path": "src/failpoint.rs"}
 ]}
JSON
tx=$("$ue" --json preview --plan "$work/plan.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tx"])')
"$ue" show "$tx"

step "revise tx $tx: also update the constant's one other use (matches revision 0's candidate)"
cat > "$work/revise.json" <<'JSON'
{"edits": [
  {"op": "replace_text", "path": "src/workspace.rs",
   "old": "lock_timeout: DEFAULT_LOCK_TIMEOUT", "new": "lock_timeout: COMMIT_LOCK_TIMEOUT"}
 ]}
JSON
"$ue" revise "$tx" --plan "$work/revise.json"

step "commit tx $tx"
"$ue" commit "$tx"
tree_hash > "$work/committed.txt"
echo "files changed on disk:"
diff "$work/before.txt" "$work/committed.txt" | grep '^[<>]' || true

step "rollback tx $tx"
"$ue" rollback "$tx"
tree_hash > "$work/after.txt"
if cmp -s "$work/before.txt" "$work/after.txt"; then
  echo "byte-identical: all $(wc -l < "$work/after.txt") files (bytes and modes) equal the start"
else
  echo "MISMATCH after rollback:"; diff "$work/before.txt" "$work/after.txt"; exit 1
fi

step "log"
"$ue" log

step "journal dump (first 40 lines of $("$ue" journal dump | wc -l); --with-diffs adds each revision's diff)"
"$ue" journal dump | head -n 40
