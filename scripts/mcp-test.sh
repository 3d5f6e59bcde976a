#!/usr/bin/env bash
# End-to-end test of `ultra-edit serve` with a real MCP client: the official Python SDK
# (`mcp`, from PyPI, pinned in tests/mcp/requirements.txt) installed into a virtual
# environment under the cargo target directory, driving the server over stdio
# (tests/mcp/test_server.py). Exits non-zero if any test fails.
#
#   ./scripts/mcp-test.sh            # uses CARGO_TARGET_DIR, default target/
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
venv="$target_dir/mcp-venv"
python="${PYTHON:-python3}"

# Reuse the venv while it works; rebuild it if its interpreter went away.
if ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/mcp/requirements.txt

cargo build --bin ultra-edit --target-dir "$target_dir"
"$venv/bin/python" tests/mcp/test_server.py "$target_dir/debug/ultra-edit"
