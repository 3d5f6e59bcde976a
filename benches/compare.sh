#!/usr/bin/env bash
# Side-by-side comparison of ultra-edit against the fsync floor, the unsafe baseline,
# git and diff -u, in one run on this machine; fsync counts per commit (strace); writes
# the result between the markers of docs/benchmarks.md. Not for CI (minutes, timing).
#
#   benches/compare.sh            # 21 repetitions of each measurement
#   REPS=31 benches/compare.sh    # more
#   NO_DOCS=1 benches/compare.sh  # print only
#
# Target dir: $CARGO_TARGET_DIR, else /tmp/bench-target. Workspaces go to $TMPDIR
# (default /tmp): its filesystem is what is measured, and is named in the output.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${CARGO_TARGET_DIR:-/tmp/bench-target}
REPS=${REPS:-21}
export TMPDIR=${TMPDIR:-/tmp}
DOC=docs/benchmarks.md
export CARGO_TERM_COLOR=never

echo "== build (release)" >&2
cargo build --release --quiet --bin ultra-edit --target-dir "$T"
COMPARE_BIN=$(cargo bench --no-run --bench compare --target-dir "$T" 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)
[ -x "$COMPARE_BIN" ] || { echo "could not find the compare bench binary" >&2; exit 1; }
CLI=$T/release/ultra-edit
FLOOR_ARGS=()
FLOOR_BIN=
if command -v gcc >/dev/null; then
    FLOOR_BIN=$T/ue-floor
    gcc -O2 -Wall -pthread -o "$FLOOR_BIN" benches/floor.c
    FLOOR_ARGS=(--floor-bin "$FLOOR_BIN")
else
    echo "gcc not found: the process floor is the compare binary in floor mode" >&2
fi

WORK=$(mktemp -d "$TMPDIR/ue-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "== timings ($REPS repetitions)" >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cargo bench --quiet --bench compare --target-dir "$T" -- \
    --reps "$REPS" --linear 1000,10000 --growth-windows 600 --cli "$CLI" "${FLOOR_ARGS[@]}" --out "$WORK/table.md" >&2
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- fsync counts: strace on one CLI commit of n files of 4 KiB in one directory ----
fourk() { # a 4 KiB source-like file
    local i=0 s=
    while [ ${#s} -lt 4096 ]; do s+="    let value_$i = compute($i); // line $i"$'\n'; i=$((i + 1)); done
    printf '%s' "$s"
}
plan_for() { # replace line 1 of f0000.rs … f(n-1).rs
    local n=$1 i sep=
    printf '{"edits":['
    for ((i = 0; i < n; i++)); do
        printf '%s{"op":"replace_lines","path":"f%04d.rs","start":1,"end":1,"content":"// traced\\n"}' "$sep" "$i"
        sep=,
    done
    printf ']}'
}
# classify strace -y lines: fsync(5</path>) = 0 <0.000123>
classify() { # file → "journal dirs files other total" counts and ms
    # With -f, a call another thread interrupts is split: "fsync(7</p> <unfinished ...>"
    # (counted by its path) and "<... fsync resumed>) = 0 <0.000123>" (its time).
    awk '
        /(fsync|fdatasync)\(/ {
            p = ""
            if (match($0, /\(([0-9]+)<[^>]*>/)) { p = substr($0, RSTART, RLENGTH); sub(/^\([0-9]+</, "", p); sub(/>$/, "", p) }
            if (p ~ /journal\.redb$/) k = "journal"
            else if (p ~ /\.tmp$/) k = "files"
            else if (p ~ /\.git\//) k = "git"
            else { k = "dirs" }
            n[k]++; n["total"]++
            if ($0 ~ /unfinished \.\.\.>$/) { pend[$1] = k; next }
            match($0, /<[0-9.]+>$/); t = substr($0, RSTART + 1, RLENGTH - 2) * 1000
            ms[k] += t; ms["total"] += t
            next
        }
        /<\.\.\. (fsync|fdatasync) resumed>/ {
            k = pend[$1]
            match($0, /<[0-9.]+>$/); t = substr($0, RSTART + 1, RLENGTH - 2) * 1000
            ms[k] += t; ms["total"] += t
        }
        END {
            split("journal files dirs git total", ks, " ")
            for (i = 1; i <= 5; i++) printf "%s=%d/%.2f ", ks[i], n[ks[i]], ms[ks[i]]
            print ""
        }' "$1"
}
cell() { # "journal=3/1.20 …" key → "3 (1.20 ms)"
    tr ' ' '\n' <<<"$1" | awk -F'[=/]' -v k="$2" '$1 == k { printf "%d (%.1f ms)", $2, $3 }'
}

SYNC_MD=$WORK/syncs.md
lib_phase() { # strace file, phase → "total/journal" of the last BEGIN…END of that phase
    awk -v ph="$2" '
        /write\(2.*BEGIN / { on = ($0 ~ ("BEGIN " ph)); c = 0; j = 0; next }
        /write\(2.*END / { if (on) { t = c; jj = j } on = 0; next }
        on && /(fsync|fdatasync)\(/ { c++; if ($0 ~ /journal\.redb/) j++ }
        END { printf "%d (journal %d)", t, jj }' "$1"
}
if command -v strace >/dev/null; then
    echo "== fsync counts (strace)" >&2
    {
        echo "| n files | lib commit | lib rollback | CLI commit: total | journal.redb | staged files | directories | floor (floor.c) | git add -A && git commit |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    } >"$SYNC_MD"
    for n in 1 10 100; do
        W=$WORK/sync-$n
        mkdir -p "$W"
        body=$(fourk)
        for ((i = 0; i < n; i++)); do printf '%s' "$body" >"$W/$(printf 'f%04d.rs' "$i")"; done
        "$CLI" --root "$W" init >/dev/null
        # library: the second of two commit/rollback rounds in one process
        UE_COMPARE_LIB_SYNCS=1 strace -f -y -e trace=fsync,fdatasync,write -o "$WORK/lib-$n.strace" \
            "$COMPARE_BIN" "$W" "$n" 2>/dev/null
        # CLI: one commit process
        plan_for "$n" >"$WORK/plan-$n.json"
        tx=$("$CLI" --root "$W" --json preview --plan "$WORK/plan-$n.json" | grep -o '"tx":[0-9]*' | head -1 | cut -d: -f2)
        sync
        strace -f -y -T -e trace=fsync,fdatasync -o "$WORK/ue-$n.strace" "$CLI" --root "$W" commit "$tx" >/dev/null
        ue=$(classify "$WORK/ue-$n.strace")
        # the floor, same files
        if [ -n "$FLOOR_BIN" ]; then
            strace -f -y -T -e trace=fsync,fdatasync -o "$WORK/floor-$n.strace" "$FLOOR_BIN" sync "$W" "$n" "$body" >/dev/null
            floor_total=$(cell "$(classify "$WORK/floor-$n.strace")" total)
        else
            floor_total="(no gcc)"
        fi
        # git, same change
        (cd "$W" && git init -q && git add -A && git -c user.email=b@example.invalid -c user.name=b commit -q -m init)
        for ((i = 0; i < n; i++)); do printf '// git\n%s' "$body" >"$W/$(printf 'f%04d.rs' "$i")"; done
        sync
        (cd "$W" && strace -f -y -T -e trace=fsync,fdatasync -o "$WORK/git-$n.strace" \
            sh -c 'git add -A && git -c user.email=b@example.invalid -c user.name=b commit -q -m x' >/dev/null)
        gt=$(classify "$WORK/git-$n.strace")
        echo "| $n | $(lib_phase "$WORK/lib-$n.strace" commit) | $(lib_phase "$WORK/lib-$n.strace" rollback) | $(cell "$ue" total) | $(cell "$ue" journal) | $(cell "$ue" files) | $(cell "$ue" dirs) | $floor_total | $(cell "$gt" total) |" >>"$SYNC_MD"
    done
    # the redb floor (benches/compare.rs, redb_floor) as a process on a copy of a journal,
    # and one preview process: what redb alone costs a writing process, against the CLI's
    cp "$WORK/sync-1/.ultra-edit/journal.redb" "$WORK/redb-floor.redb"
    rf() { # k commits → syncs of the redb floor process
        UE_COMPARE_REDB_FLOOR=$1 strace -f -y -e trace=fsync,fdatasync,sync_file_range,syncfs \
            -o "$WORK/redb-floor-$1.strace" "$COMPARE_BIN" "$WORK/redb-floor.redb" 2>/dev/null
        grep -cE '(fsync|fdatasync|sync_file_range|syncfs)\(' "$WORK/redb-floor-$1.strace" || true
    }
    rf_commit=$(rf 2)
    rf_preview=$(rf 1)
    echo '{"edits":[{"op":"replace_lines","path":"f0000.rs","start":2,"end":2,"content":"// traced preview\n"}]}' >"$WORK/plan-preview.json"
    strace -f -y -e trace=fsync,fdatasync,sync_file_range,syncfs -o "$WORK/preview.strace" \
        "$CLI" --root "$WORK/sync-1" preview --plan "$WORK/plan-preview.json" >/dev/null
    pv=$(grep -cE '(fsync|fdatasync|sync_file_range|syncfs)\(' "$WORK/preview.strace" || true)
    {
        echo
        echo "Counted with \`strace -f -y -e trace=fsync,fdatasync\`: the library columns on the second"
        echo "commit (and rollback of it) made through one open \`Journal\`; the CLI columns on one"
        echo "\`ultra-edit commit\` process, with the time spent inside those calls in parentheses (as"
        echo "strace sees it: strace slows every call). The floor is \`benches/floor.c\` on the same"
        echo "files: n file fsyncs + 1 directory fsync."
        echo
        echo "The redb floor as a process (\`redb_floor\` in benches/compare.rs on a copy of the"
        echo "journal: open for writing, k empty \`Immediate\` commits, close): $rf_commit syncs with the 2"
        echo "commits of a CLI commit, $rf_preview with the 1 of a preview. One \`ultra-edit preview\` process"
        echo "(one line of one file): $pv syncs."
    } >>"$SYNC_MD"
else
    echo "(strace not installed: \`apt-get install -y strace\` to count fsyncs)" >"$SYNC_MD"
fi

# ---- peak memory of a commit (CLI, max RSS by /usr/bin/time) ----
MEM_MD=$WORK/mem.md
if [ -x /usr/bin/time ]; then
    echo "== peak memory" >&2
    peak() { # bytes of one file → max RSS (KiB) of the CLI commit of a one-line change to it
        local W=$WORK/mem-$1 tx
        mkdir -p "$W"
        yes '    let value = compute(0); // a line of the file' | head -c "$1" >"$W/big.rs"
        "$CLI" --root "$W" init >/dev/null
        echo '{"edits":[{"op":"replace_lines","path":"big.rs","start":1,"end":1,"content":"// edited\n"}]}' >"$WORK/mem-plan.json"
        tx=$("$CLI" --root "$W" --json preview --plan "$WORK/mem-plan.json" | grep -o '"tx":[0-9]*' | head -1 | cut -d: -f2)
        /usr/bin/time -f %M -o "$WORK/mem-$1.txt" "$CLI" --root "$W" commit "$tx" >/dev/null
        cat "$WORK/mem-$1.txt"
    }
    small=$(peak 4096)
    big=$(peak $((10 << 20)))
    huge=$(peak $((50 << 20)))
    {
        echo "Peak memory (max RSS) of one \`ultra-edit commit\` of a one-line change: file of 4 KiB: $small KiB;"
        echo "10 MiB: $big KiB; 50 MiB: $huge KiB. Above the 4 KiB commit (the fixed part):"
        awk -v s="$small" -v b="$big" -v h="$huge" 'BEGIN {
            printf "%.2f× the file at 10 MiB, %.2f× at 50 MiB (target ≤ 3× the largest file plus a fixed amount: %s).\n",
                (b - s) / 10240, (h - s) / 51200, ((b - s) / 10240 <= 3 && (h - s) / 51200 <= 3) ? "met" : "**missed**" }'
    } >"$MEM_MD"
else
    echo "(/usr/bin/time not installed: peak memory not measured)" >"$MEM_MD"
fi

# ---- machine ----
fs_type=$(df -T "$TMPDIR" | awk 'NR == 2 { print $2 }')
fs_dev=$(df -T "$TMPDIR" | awk 'NR == 2 { print $1 }')
mount_opts=$(awk -v d="$(df "$TMPDIR" | awk 'NR == 2 { print $6 }')" '$2 == d { print $4 }' /proc/mounts | head -1)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$( (git status --porcelain --untracked-files=no -- src migrations 2>/dev/null || true) | wc -l)
[ "$dirty" -gt 0 ] && rev="$rev + uncommitted changes to src/ (working tree)"
BLOCK=$WORK/block.md
{
    echo "<!-- BEGIN benches/compare.sh output: regenerated by the script, edit outside the markers -->"
    echo "Run of \`benches/compare.sh\` (REPS=$REPS) on $(date -u '+%Y-%m-%d %H:%M UTC'), tree $rev."
    echo
    echo "Machine: $(nproc) cores, $cpu, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, Linux $(uname -r);"
    echo "temp dir \`$TMPDIR\` on $fs_type ($fs_dev, $mount_opts); $(rustc --version); $(git --version); $(diff --version | head -1)."
    echo "Load average (1, 5, 15 min) before the timings: $load_before; after: $load_after (other work shares the machine)."
    echo
    cat "$WORK/table.md"
    echo
    cat "$MEM_MD"
    echo
    echo "fsync/fdatasync calls per commit of n files of 4 KiB in one directory:"
    echo
    cat "$SYNC_MD"
    echo "<!-- END benches/compare.sh output -->"
} >"$BLOCK"

cat "$BLOCK"
if [ -z "${NO_DOCS:-}" ]; then
    if [ -f "$DOC" ] && grep -q '^<!-- BEGIN benches/compare.sh' "$DOC"; then
        awk -v block="$BLOCK" '
            /^<!-- BEGIN benches\/compare.sh/ { while ((getline l < block) > 0) print l; skip = 1; next }
            /^<!-- END benches\/compare.sh/ { skip = 0; next }
            !skip { print }' "$DOC" >"$WORK/doc.md"
        cp "$WORK/doc.md" "$DOC"
    else
        { [ -f "$DOC" ] && cat "$DOC" && echo; cat "$BLOCK"; } >"$WORK/doc.md"
        cp "$WORK/doc.md" "$DOC"
    fi
    echo "wrote $DOC" >&2
fi
