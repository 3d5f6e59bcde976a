#!/usr/bin/env python3
"""Commands as transactions, measured (docs/commands.md, docs/benchmarks.md).

For trees of 1k, 10k and 100k small files and a one-file `sed -i`, prints the median
wall time of:
  direct    the command run directly (`sh -c CMD` in the tree)
  preview   `ultra-edit preview --run CMD` (process start, journal open, namespace,
            overlay, command, capture, revision recorded), then the tx is aborted
  plan      `ultra-edit preview --plan` of the same change (a replace_text): what any
            preview costs (process start, journal open, a durable journal write)
  git cold  a shadow-git checkpoint as Cline and Roo Code take it, into a new shadow
            repository: `git --git-dir=SHADOW --work-tree=ROOT add -A && git commit`
  git warm  the same checkpoint right after another one (a warm index)
and the ratios: preview - direct (the overhead over the command), preview - plan (what
the sandbox adds to a preview), and git warm / preview.

    python3 benches/sandbox.py [SIZES...]     # default 1000 10000 100000
    UE=target/release/ultra-edit python3 benches/sandbox.py

Runs: 5 per measure (3 for the cold checkpoint). Every loop is bounded by count.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

UE = os.environ.get("UE", os.path.join(os.path.dirname(__file__), "..", "target", "debug", "ultra-edit"))
RUNS = 5


def make_tree(root, n):
    per = 100
    for i in range(n):
        d = os.path.join(root, "src", f"d{i // per:04d}")
        if i % per == 0:
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:06d}.txt"), "w") as f:
            f.write(f"file {i}\nvalue = x\n")


def timed(cmd, cwd, env=None):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return (time.perf_counter() - t) * 1000


def bench(n):
    base = tempfile.mkdtemp(prefix="ue-sandbox-bench-")
    root = os.path.join(base, "root")
    os.makedirs(root)
    make_tree(root, n)
    target = "src/d0000/f000000.txt"
    subprocess.run([UE, "--root", root, "init"], check=True, stdout=subprocess.DEVNULL)
    direct, preview = [], []
    for i in range(RUNS):
        a, b = ("x", "y") if i % 2 == 0 else ("y", "x")
        direct.append(timed(["sh", "-c", f"sed -i s/{a}/{b}/ {target}"], root))
    for i in range(RUNS):
        cur = open(os.path.join(root, target)).read()
        a, b = ("x", "y") if "= x" in cur else ("y", "x")
        preview.append(timed([UE, "--root", root, "--json", "preview", "--run", f"sed -i s/{a}/{b}/ {target}"], root))
        log = subprocess.run([UE, "--root", root, "--json", "log", "--limit", "1"], capture_output=True, text=True, check=True)
        tx = __import__("json").loads(log.stdout)["txs"][0]["tx"]
        subprocess.run([UE, "--root", root, "abort", str(tx)], check=True, stdout=subprocess.DEVNULL)
    plan = []
    for i in range(RUNS):
        cur = open(os.path.join(root, target)).read()
        a, b = ("x", "y") if "= x" in cur else ("y", "x")
        planf = os.path.join(base, "plan.json")
        with open(planf, "w") as f:
            f.write('{"edits":[{"op":"replace_text","path":"%s","old":"= %s","new":"= %s"}]}' % (target, a, b))
        plan.append(timed([UE, "--root", root, "--json", "preview", "--plan", planf], root))
        log = subprocess.run([UE, "--root", root, "--json", "log", "--limit", "1"], capture_output=True, text=True, check=True)
        tx = __import__("json").loads(log.stdout)["txs"][0]["tx"]
        subprocess.run([UE, "--root", root, "abort", str(tx)], check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    cold, warm = [], []
    for i in range(3):
        shadow = os.path.join(base, f"shadow{i}")
        git = ["git", f"--git-dir={shadow}", f"--work-tree={root}"]
        subprocess.run(["git", "init", "-q", "--bare", shadow], check=True)
        t = time.perf_counter()
        subprocess.run(git + ["add", "-A"], check=True, env=env)
        subprocess.run(git + ["commit", "-qm", "checkpoint"], check=True, env=env)
        cold.append((time.perf_counter() - t) * 1000)
        if i == 0:
            for j in range(RUNS):
                cur = open(os.path.join(root, target)).read()
                a, b = ("x", "y") if "= x" in cur else ("y", "x")
                subprocess.run(["sed", "-i", f"s/{a}/{b}/", target], cwd=root, check=True)
                t = time.perf_counter()
                subprocess.run(git + ["add", "-A"], check=True, env=env)
                subprocess.run(git + ["commit", "-qm", "checkpoint"], check=True, env=env)
                warm.append((time.perf_counter() - t) * 1000)
    shutil.rmtree(base, ignore_errors=True)
    return [statistics.median(v) for v in (direct, preview, plan, cold, warm)]


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1000, 10000, 100000]
    print(f"binary: {os.path.relpath(UE)}; median of {RUNS} runs (3 for a cold checkpoint), ms")
    print(f"{'files':>8} {'direct':>8} {'preview':>8} {'overhead':>9} {'plan':>8} {'sandbox':>8} {'git cold':>9} {'git warm':>9} {'warm/preview':>13}")
    rows = []
    for n in sizes:
        d, p, pl, c, w = bench(n)
        rows.append((n, p - d))
        print(f"{n:>8} {d:>8.1f} {p:>8.1f} {p - d:>9.1f} {pl:>8.1f} {p - pl:>8.1f} {c:>9.1f} {w:>9.1f} {w / p:>12.1f}x", flush=True)
    if len(rows) > 1 and rows[0][1] > 0:
        print(f"overhead at {rows[-1][0]} files / at {rows[0][0]} files: {rows[-1][1] / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
