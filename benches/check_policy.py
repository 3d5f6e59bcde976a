#!/usr/bin/env python3
"""Check write policy, measured on a Rust repository's own `cargo check`
(docs/benchmarks.md, "Check write policy"; docs/commands.md, "Checks").

A one-line change of one source file, toggled each run, checked three ways:
  direct    `cargo check` run in the tree with the change written: what a check whose
            build directory passes through to the real tree costs (no such switch
            exists; this is that cost, minus the overlay's few ms)
  overlay   `ultra-edit preview --plan P --check 'cargo check'`: the check on the
            overlay with the candidate applied, `target/` read from the real tree
            (the lower layer) and everything cargo writes copied up and thrown away
            (the choice); the preview is then aborted
  plan      the same preview with `--no-check`, to subtract
Each is timed by /usr/bin/time -v (wall, user+system CPU of the process and the
processes it waited for, max RSS). One more overlay check, untimed, waits at its end
for this script to measure its upper directory from outside (the command cannot see
it through the overlay): the bytes and files cargo copied up or wrote there.

    python3 benches/check_policy.py REPO [RUNS] [FILE]
    # REPO: a clone whose target/ was built once with the same cargo command
    # (default command `cargo check --all-features`, CARGO_CMD= to change it)

Every loop is bounded by RUNS (default 3). REPO must be a scratch clone: the script
writes FILE (default src/lib.rs) in it and runs `ultra-edit init` there.
"""
import json, os, re, shutil, statistics, subprocess, sys, tempfile, time

UE = os.environ.get("UE", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "debug", "ultra-edit"))
CARGO = os.environ.get("CARGO_CMD", "cargo check --all-features")
MARK_A = "// check-policy bench: a\n"
MARK_B = "// check-policy bench: b\n"


def timed(cmd, cwd):
    """Run cmd under /usr/bin/time -v; (wall s, cpu s, max rss KiB, stderr text)."""
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, cwd=cwd, capture_output=True, text=True)
    err = p.stderr
    def field(name):
        m = re.search(re.escape(name) + r": ([0-9.:]+)", err)
        return m.group(1) if m else "0"
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")]
    secs = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) > 2 else 0)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)"))
    return secs, cpu, rss, err, p.returncode, p.stdout


def abort(repo, out):
    tx = json.loads(out)["tx"] if out.strip() else None
    if tx is not None:
        subprocess.run([UE, "--root", repo, "abort", str(tx)], check=True, stdout=subprocess.DEVNULL)


def upper_size(repo, plan):
    """(bytes, files) in the upper directory of an overlay check, measured while its
    command waits (handshake through files outside the root, which pass through)."""
    sig = tempfile.mkdtemp(prefix="ue-check-policy-")
    done, measured = os.path.join(sig, "done"), os.path.join(sig, "measured")
    check = f"{CARGO}; rc=$?; touch {done}; n=0; while [ ! -e {measured} ] && [ $n -lt 600 ]; do sleep 0.2; n=$((n+1)); done; exit $rc"
    p = subprocess.Popen([UE, "--root", repo, "--json", "preview", "--plan", plan, "--check", check], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    size = (0, 0)
    for _ in range(6000):
        if os.path.exists(done) or p.poll() is not None:
            break
        time.sleep(0.1)
    runs = os.path.join(repo, ".ultra-edit", "sandbox")
    for run in os.listdir(runs) if os.path.isdir(runs) else []:
        up = os.path.join(runs, run, "upper")
        if os.path.isdir(up):
            total, files = 0, 0
            for d, _, fs in os.walk(up):
                for f in fs:
                    total += os.lstat(os.path.join(d, f)).st_size
                    files += 1
            size = (total, files)
    open(measured, "w").close()
    out, _ = p.communicate()
    abort(repo, out)
    shutil.rmtree(sig, ignore_errors=True)
    return size


def set_mark(path, mark):
    text = open(path).read()
    for m in (MARK_A, MARK_B):
        text = text.replace(m, "")
    with open(path, "w") as f:
        f.write(text + mark)


def main():
    repo = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rel = sys.argv[3] if len(sys.argv) > 3 else "src/lib.rs"
    path = os.path.join(repo, rel)
    if not os.path.isdir(os.path.join(repo, ".ultra-edit")):
        subprocess.run([UE, "--root", repo, "init"], check=True, stdout=subprocess.DEVNULL)
    set_mark(path, MARK_A)
    subprocess.run(CARGO, shell=True, cwd=repo, check=True, capture_output=True)
    rows = {"direct": [], "overlay": [], "plan": []}
    upper = []
    for i in range(runs):
        # direct: the change written, cargo run in the tree; then back (untimed).
        set_mark(path, MARK_B)
        rows["direct"].append(timed(["sh", "-c", CARGO], repo)[:3])
        set_mark(path, MARK_A)
        subprocess.run(CARGO, shell=True, cwd=repo, check=True, capture_output=True)
        plan = os.path.join(repo, "..", "check-policy-plan.json")
        with open(plan, "w") as f:
            json.dump({"edits": [{"op": "replace_text", "path": rel, "old": MARK_A, "new": MARK_B}]}, f)
        for kind, extra in (("plan", ["--no-check"]), ("overlay", ["--check", CARGO])):
            secs, cpu, rss, err, rc, out = timed([UE, "--root", repo, "--json", "preview", "--plan", plan] + extra, repo)
            rows[kind].append((secs, cpu, rss))
            abort(repo, out)
        if i == 0:
            upper.append(upper_size(repo, plan))
        print(f"run {i + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} s wall {v[-1][1]:.2f} s cpu" for k, v in rows.items()) + (f", upper {upper[-1][0]} B in {upper[-1][1]} files" if upper else ""), flush=True)
    print(f"\n`{CARGO}` in {repo}, {runs} runs, medians:")
    print(f"{'how':>10} {'wall s':>8} {'cpu s':>8} {'max RSS MiB':>12}")
    for k, v in rows.items():
        print(f"{k:>10} {statistics.median(x[0] for x in v):>8.2f} {statistics.median(x[1] for x in v):>8.2f} {statistics.median(x[2] for x in v) / 1024:>12.0f}")
    if upper:
        print(f"in the overlay's upper directory when the check ended: {upper[0][0] / 2**20:.1f} MiB in {upper[0][1]} files")
    set_mark(path, "")


if __name__ == "__main__":
    main()
