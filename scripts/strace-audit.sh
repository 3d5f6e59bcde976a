#!/usr/bin/env bash
# Ordering audit of a real CLI commit (docs/commit-protocol.md, "Commit protocol"):
# runs `ultra-edit commit` of 6 files in 3 directories under `strace -f -y` and checks,
# from the system calls themselves, that
#   1. every temp (.ue-*.tmp) got its fchown, fsetxattr and fchmod before its fsync;
#   2. every temp's fsync returned before the first rename;
#   3. the commit point was durable before the first rename: the journal's last page
#      write before it was followed by fdatasync, the header write, fdatasync (redb's
#      two-phase commit);
#   4. after the last rename, every target's directory was fsynced, and then the
#      completion's journal commit (page writes, fdatasync, header, fdatasync) was
#      durable before the receipt reached stdout. (The library returns the receipt
#      before its completion, which a thread of the handle writes; the CLI waits for
#      it with Journal::flush before printing: strace -f follows that thread.)
# Exits non-zero, naming the first violation, if any order is broken.
#
#   scripts/strace-audit.sh              # build, run and audit (a few seconds)
#   scripts/strace-audit.sh --self-test  # the checker must reject reordered traces
#
# Needs strace and python3 (.ci/run installs strace). Binary: $UE_BIN, else
# $CARGO_TARGET_DIR (or target)/debug/ultra-edit, built with cargo.
set -euo pipefail
cd "$(dirname "$0")/.."

check() { # check TRACE_FILE
    python3 - "$1" <<'PY'
import re, sys

lines = open(sys.argv[1]).read().splitlines()
# Each syscall as (index of its completion, name, first argument, raw text, index of
# its start): a call strace split ("<unfinished ...>" / "<... resumed>") starts at its
# first line and completes at its resumed line.
calls, pending = [], {}
for i, line in enumerate(lines):
    m = re.match(r"^(\d+)\s+(.*)$", line)
    pid, body = (m.group(1), m.group(2)) if m else ("0", line)
    r = re.match(r"^<\.\.\. (\w+) resumed>(.*)$", body)
    if r:
        start = pending.pop((pid, r.group(1)), None)
        if start is not None:
            calls.append((i, r.group(1), start[0], start[1] + r.group(2), start[2]))
        continue
    c = re.match(r"^(\w+)\((.*)$", body)
    if not c:
        continue
    name, rest = c.group(1), c.group(2)
    arg = rest.split(",")[0].rstrip(")")
    if rest.endswith("<unfinished ...>"):
        pending[(pid, name)] = (arg.split(" <unfinished")[0], body, i)
    else:
        calls.append((i, name, arg, body, i))
calls.sort()

def path_of(arg):  # "7</a/b/.ue-1-0-x.tmp>" -> "/a/b/.ue-1-0-x.tmp"
    m = re.search(r"<(.*)>", arg)
    return m.group(1) if m else arg

def fail(msg):
    print("strace-audit: FAIL: " + msg)
    sys.exit(1)

def ok(result):
    return re.search(r"= 0\b", result) is not None

renames = [c for c in calls if c[1].startswith("rename")]
if not renames:
    fail("no rename in the trace")
first_rename, last_rename = renames[0][0], renames[-1][0]

# 1 and 2: the temps. Metadata calls must return before the fsync starts; the fsync
# must return before the first rename.
need_xattr = any(c[1] == "fsetxattr" for c in calls)
temps = {}
for i, name, arg, raw, start in calls:
    p = path_of(arg)
    if ".ue-" in p and p.endswith(".tmp"):
        temps.setdefault(p, {})
        if name in ("fchown", "fsetxattr", "fchmod", "fsync") and ok(raw):
            temps[p].setdefault(name, (start, i))
if not temps:
    fail("no temp file was fsynced")
for p, seen in sorted(temps.items()):
    if "fsync" not in seen:
        fail(f"temp {p} was never fsynced")
    for meta in ("fchown", "fsetxattr", "fchmod"):
        if meta not in seen:
            if meta == "fsetxattr" and not need_xattr:
                continue
            fail(f"temp {p}: no {meta}")
        if seen[meta][1] > seen["fsync"][0]:
            fail(f"temp {p}: {meta} after its fsync started (metadata not durable)")
    if seen["fsync"][1] > first_rename:
        fail(f"temp {p} fsynced after the first rename")

# The journal's calls: page writes, header writes (320 bytes at offset 0), syncs.
def journal(i, name, arg, raw, start):
    return path_of(arg).endswith("journal.redb")
jcalls = [c for c in calls if journal(*c)]
def kind(c):
    i, name, arg, raw, start = c
    if name in ("fdatasync", "fsync"):
        return "sync"
    if name == "pwrite64":
        return "header" if re.search(r", 320, 0\)", raw) else "page"
    return None

def durable_commit_after(last_page, before, what):
    """After the page write at index last_page: sync, header, sync, all before `before`."""
    seq = [kind(c) for c in jcalls if last_page < c[0] < before and kind(c)]
    want = ["sync", "header", "sync"]
    it = iter(seq)
    if not all(any(k == w for k in it) for w in want):
        fail(f"{what}: the journal commit was not durable in time (saw {seq})")

# 3: the commit point (the intent) before the first rename.
pages = [c[0] for c in jcalls if kind(c) == "page" and c[0] < first_rename]
if not pages:
    fail("no journal write before the first rename: where is the commit point?")
durable_commit_after(pages[-1], first_rename, "commit point")

# 4: the directories, then the completion, then the receipt on stdout.
out = [c[0] for c in calls if c[1] == "write" and re.match(r"1<", c[2])]
receipt = next((i for i in out if i > last_rename), None)
if receipt is None:
    fail("no receipt written to stdout after the renames")
dirs = set()
for i, name, arg, raw, start in renames:
    m = re.search(r'renameat2?\([^,]*, "[^"]*", (\d+<[^>]*>), "([^"]*)"', raw)
    if m:
        dirs.add(path_of(m.group(1)))
if not dirs:
    fail("could not read the renames' directories")
for d in sorted(dirs):
    synced = [c[0] for c in calls if c[1] == "fsync" and path_of(c[2]) == d
              and last_rename < c[0] < receipt and ok(c[3])]
    if not synced:
        fail(f"directory {d} not fsynced between the last rename and the receipt")
last_dir_sync = max(c[0] for c in calls if c[1] == "fsync" and path_of(c[2]) in dirs
                    and last_rename < c[0] < receipt)
pages = [c[0] for c in jcalls if kind(c) == "page" and last_dir_sync < c[0] < receipt]
if not pages:
    fail("no journal write (the completion) between the directory fsyncs and the receipt")
durable_commit_after(pages[-1], receipt, "completion")
print(f"strace-audit: ok: {len(temps)} temps (metadata, then fsync) before the first "
      f"rename; commit point durable before it; {len(dirs)} directories fsynced and the "
      f"completion durable before the receipt")
PY
}

if [ "${1:-}" = "--self-test" ]; then
    # A tiny trace in the right order passes; each reordering of it must fail.
    t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
    good() {
        cat <<'EOF'
1 pwrite64(4</w/.ultra-edit/journal.redb>, "x", 4096, 8192) = 4096
1 fdatasync(4</w/.ultra-edit/journal.redb>) = 0
1 pwrite64(4</w/.ultra-edit/journal.redb>, "redb", 320, 0) = 320
1 fdatasync(4</w/.ultra-edit/journal.redb>) = 0
2 fsetxattr(7</w/d/.ue-1-0-ab.tmp>, "user.k", "v", 1, 0) = 0
2 fchown(7</w/d/.ue-1-0-ab.tmp>, 0, 0) = 0
2 fchmod(7</w/d/.ue-1-0-ab.tmp>, 0644) = 0
2 fsync(7</w/d/.ue-1-0-ab.tmp> <unfinished ...>
1 fchmod(8</w/d/.ue-1-1-ab.tmp>, 0644) = 0
1 fchown(8</w/d/.ue-1-1-ab.tmp>, 0, 0) = 0
1 fsetxattr(8</w/d/.ue-1-1-ab.tmp>, "user.k", "v", 1, 0) = 0
1 fsync(8</w/d/.ue-1-1-ab.tmp>) = 0
2 <... fsync resumed>) = 0
1 renameat(9</w/d>, ".ue-1-0-ab.tmp", 10</w/d>, "a") = 0
1 renameat(9</w/d>, ".ue-1-1-ab.tmp", 10</w/d>, "b") = 0
1 fsync(9</w/d>) = 0
1 pwrite64(4</w/.ultra-edit/journal.redb>, "y", 4096, 12288) = 4096
1 fdatasync(4</w/.ultra-edit/journal.redb>) = 0
1 pwrite64(4</w/.ultra-edit/journal.redb>, "redb", 320, 0) = 320
1 fdatasync(4</w/.ultra-edit/journal.redb>) = 0
1 write(1</tmp/out>, "{\"tx\":1}\n", 9) = 9
EOF
    }
    good > "$t/good"
    check "$t/good" >/dev/null || { echo "self-test: the right order was rejected" >&2; exit 1; }
    # Each edit breaks the order: "s A B" swaps lines A and B, "d A" deletes line A.
    bad=0 n=0
    for edit in "s 12 14" "s 6 8" "s 9 12" "s 2 14" "d 4" "d 12" "d 10" "s 16 17" \
        "s 16 21" "s 20 21" "s 15 16"; do
        set -- $edit
        good | awk -v op="$1" -v a="$2" -v b="${3:-0}" '{ l[NR] = $0 } END {
            if (op == "s") { t = l[a]; l[a] = l[b]; l[b] = t }
            for (i = 1; i <= NR; i++) if (!(op == "d" && i == a)) print l[i] }' > "$t/bad"
        n=$((n + 1))
        if check "$t/bad" >/dev/null; then
            echo "self-test: '$edit' was not caught" >&2
            bad=1
        fi
    done
    [ "$bad" = 0 ] && echo "strace-audit self-test: ok ($n broken orders rejected)"
    exit "$bad"
fi

command -v strace >/dev/null || { echo "strace-audit: strace is not installed" >&2; exit 2; }
BIN=${UE_BIN:-}
if [ -z "$BIN" ]; then
    cargo build --quiet --all-features --bin ultra-edit
    BIN=${CARGO_TARGET_DIR:-target}/debug/ultra-edit
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/src/a" "$W/src/b"
edits=
for f in src/a/x.rs src/a/y.rs src/b/z.rs src/b/w.rs src/top.rs README.md; do
    printf 'old %s\n' "$f" > "$W/$f"
    # Extended attributes where the filesystem has them (the temp gets fsetxattr).
    python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.audit", sys.argv[2].encode())' "$W/$f" "$f" 2>/dev/null || true
    edits+="${edits:+,}{\"op\":\"replace_file\",\"path\":\"$f\",\"content\":\"new $f\\n\"}"
done
"$BIN" --root "$W" init >/dev/null
tx=$(printf '{"edits":[%s]}' "$edits" | "$BIN" --root "$W" --json preview | python3 -c 'import json,sys; print(json.load(sys.stdin)["tx"])')
strace -f -y -qq -o "$W/trace" \
    -e trace=pwrite64,write,fsync,fdatasync,fchown,fchmod,fsetxattr,rename,renameat,renameat2 \
    "$BIN" --root "$W" --json commit "$tx" > "$W/receipt.json"
grep -q '"batch"' "$W/receipt.json" || { echo "strace-audit: the commit printed no receipt" >&2; exit 1; }
grep -q fsetxattr "$W/trace" ||
    echo "strace-audit: no user xattrs on this filesystem; fsetxattr is not checked" >&2
check "$W/trace"
