#!/usr/bin/env bash
# Measure the ways to make n freshly written 4 KiB files durable (benches/sync_strategies.c)
# for n = 1, 10, 100, 1000 on $TMPDIR's filesystem (default /tmp), and print a table:
# median and minimum microseconds per strategy, and each median against sequential
# fsyncs. Not for CI (timing). The numbers are in docs/benchmarks.md, "Sync strategies".
#
#   benches/sync_strategies.sh          # 11 repetitions (5 for n = 1000)
#   REPS=21 benches/sync_strategies.sh
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${REPS:-11}
export TMPDIR=${TMPDIR:-/tmp}
T=${CARGO_TARGET_DIR:-/tmp/bench-target}
mkdir -p "$T"
gcc -O2 -Wall -pthread -o "$T/ue-syncs" benches/sync_strategies.c
WORK=$(mktemp -d "$TMPDIR/ue-syncs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fs=$(df -T "$WORK" | awk 'NR==2 {print $2}')
echo "filesystem: $fs ($TMPDIR), load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cpus"
echo
echo "| files | strategy | median µs | min µs | median / seq |"
echo "|---:|---|---:|---:|---:|"
for n in 1 10 100 1000; do
    reps=$REPS
    [ "$n" -ge 1000 ] && reps=$(( REPS < 5 ? REPS : 5 ))
    mkdir "$WORK/$n"
    "$T/ue-syncs" "$WORK/$n" "$n" "$reps" | awk -F'\t' '
        $2 == "seq" { seq = $3 }
        { printf "| %s | %s | %s | %s | %.2f× |\n", $1, $2, $3, $4, (seq > 0 ? $3 / seq : 1) }'
    rm -rf "${WORK:?}/$n"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
