#!/usr/bin/env bash
# Run the built test binaries (library, CLI, integration) as a normal user, uid/gid
# 65534, when this script runs as root: CI runs as root, and a file's owner, a
# directory's permissions and what chown(2) allows differ for a normal user
# (README, "Tests"). Tests that need root say "skipped" and return.
#
#   scripts/test-as-user.sh        # after `cargo test --all-features` built them
#
# Not root, or a checkout uid 65534 cannot reach (a home directory of mode 0700): says
# so and exits 0, since the tests then already ran as this user or cannot run as that
# one. Soak and fuzz loops are short here (UE_SOAK_SECS, UE_FUZZ_SECS): .ci/run gives
# them their time as root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
    echo "test-as-user: not root, so the tests already ran as a normal user (uid $(id -u))"
    exit 0
fi
mapfile -t bins < <(cargo test --all-features --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\)).*/\1/p')
[ "${#bins[@]}" -ge 3 ] || { echo "test-as-user: found ${#bins[@]} test binaries, expected 3" >&2; exit 1; }
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if ! as_user test -x "${bins[0]}" || ! as_user test -x target/debug/ultra-edit; then
    echo "test-as-user: skipped, uid 65534 cannot reach $(pwd)/target (a parent directory is closed to it)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0777 "$tmp"
for b in "${bins[@]}"; do
    log="$tmp/$(basename "$b").log"
    if as_user env HOME="$tmp" TMPDIR="$tmp" UE_SOAK_SECS=10 UE_FUZZ_SECS=5 \
        "$b" --test-threads 2 >"$log" 2>&1; then
        echo "$(basename "$b") as uid 65534: $(grep -E '^test result' "$log" | tail -1)"
    else
        tail -n 60 "$log"
        echo "FAILED: $b as uid 65534" >&2
        exit 1
    fi
done
