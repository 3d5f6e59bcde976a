#!/usr/bin/env python3
"""Large files and large batches against what the disk allows (issue 34,
docs/benchmarks.md, "Large files and large batches").

One run, every figure side by side with its baseline measured moments apart:

  preview   `ultra-edit preview --plan` of a one-line `replace_lines` in the middle of a
            text file of LINES lines (default 2,000,000 lines, about 107 MB), against
            `diff -u` of the same pair plus `cp` + `fsync` of the file (the rollback
            material a preview must make durable)
  commit    `ultra-edit commit` of it, against `cp` + `fsync` of the file
  rollback  `ultra-edit rollback` of that commit, against `cp` + `fsync`
  memory    peak RSS (GNU time, %M) of each of the three, against 1.25x the file + 32 MB
  per file  `ultra-edit commit` of a one-line edit to each of N files of 4 KiB in one
            directory (N = 1000 and 10000), ms per file, and the same per file for the
            fsync floor as a process on the same files (benches/floor.c: temp, fsync,
            rename each, the directory fsynced once), so that what the filesystem itself
            adds per file at 10000 shows beside ours
  1 GiB     (--gib) preview, commit and rollback of a 1 GiB file: completion and peak RSS

    python3 benches/large.py                 # the full run (minutes)
    python3 benches/large.py --reps 5        # more repetitions of the large file (medians)
    python3 benches/large.py --file-reps 3   # more of the n-file commits (default 1, after a warm-up)
    python3 benches/large.py --gib           # also the 1 GiB file (about 4 GiB of disk)
    python3 benches/large.py --short         # CI (.ci/run): 2.7 MB, 10/100 files, 1 rep, debug build
    UE=path/to/ultra-edit python3 benches/large.py

The binary is `$UE`, else the release build (built here with `cargo build --release`),
or the debug build in `--short` mode. Files go to `$TMPDIR` (default /tmp). Every loop is
bounded by count; `os.sync()` (untimed) before each timed operation.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LINE_PAD = "payload of a line of text, padded .........\n"  # 45 bytes


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


SHORT = "--short" in sys.argv
GIB = "--gib" in sys.argv
REPS = int(arg("--reps", "1" if SHORT else "3"))
LINES = int(arg("--lines", "50000" if SHORT else "2000000"))
FILES = [int(x) for x in arg("--files", "10,100" if SHORT else "1000,10000").split(",")]
FILE_REPS = int(arg("--file-reps", "1"))
FLOOR = []


def binary():
    if os.environ.get("UE"):
        return os.environ["UE"]
    # The short mode uses the debug build `cargo test --all-features` makes (CI has it
    # already: scripts/demo.sh builds it), so that it builds nothing more.
    prof = ["--all-features"] if SHORT else ["--release"]
    subprocess.run(["cargo", "build", "--quiet", "--bin", "ultra-edit", *prof], cwd=REPO, check=True)
    return os.path.join(REPO, "target", "debug" if SHORT else "release", "ultra-edit")


UE = binary()


def write_big(path, lines):
    """`lines` numbered lines of 54 bytes (the last without its newline): 108 MB at 2M."""
    with open(path, "wb", buffering=1 << 20) as f:
        chunk = []
        for i in range(lines):
            chunk.append(f"{i:08d} {LINE_PAD}")
            if len(chunk) == 65536:
                f.write("".join(chunk).encode())
                chunk = []
        f.write("".join(chunk).encode()[:-1])


CPU = {}  # what -> CPU seconds (user + sys) of each run of it, by GNU time


def timed(cmd, cwd=None, what=None):
    """Wall seconds and peak RSS (bytes) of `cmd` as a child (GNU time), and its stdout;
    its CPU seconds (user + sys, of the child and its children) go to CPU[what]. On a
    loaded machine the wall time waits for a core; the CPU time does not."""
    os.sync()
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "UE_MAXRSS=%M UE_CPU=%U %S", "--", *cmd], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    line = next(l for l in p.stderr.splitlines() if l.startswith("UE_MAXRSS="))
    rss, user, system = line.replace("UE_MAXRSS=", "").replace("UE_CPU=", "").split()
    if what:
        CPU.setdefault(what, []).append(float(user) + float(system))
    return took, int(rss) * 1024, p.stdout


def cp_fsync(src, dst):
    """`cp` + `fsync` of the copy, as one process (coreutils `sync FILE` fsyncs it)."""
    t, _, _ = timed(["sh", "-c", f"cp --reflink=never '{src}' '{dst}' && sync '{dst}'"], what="cp")
    os.remove(dst)
    return t


def ue(root, *args, what=None):
    return timed([UE, "--root", root, "--json", *args], what=what)


def big_file(lines, reps, work):
    root = os.path.join(work, "big")
    os.makedirs(root)
    path = os.path.join(root, "big.txt")
    write_big(path, lines)
    size = os.path.getsize(path)
    subprocess.run([UE, "--root", root, "init"], check=True, stdout=subprocess.DEVNULL)
    k = lines // 2
    other = os.path.join(work, "edited.txt")
    plan = os.path.join(work, "plan.json")
    res = {m: [] for m in ("diff", "cp", "preview", "commit", "rollback")}
    rss = {m: [] for m in ("preview", "commit", "rollback")}
    for rep in range(reps):
        new = f"line {k} edited in repetition {rep}\n"
        with open(plan, "w") as f:
            json.dump({"edits": [{"op": "replace_lines", "path": "big.txt", "start": k,
                                  "end": k, "content": new}]}, f)
        # The pair `diff -u` compares: the file and the same with line k replaced.
        with open(path, "rb") as src, open(other, "wb") as dst:
            for i, line in enumerate(src):
                dst.write(new.encode() if i == k - 1 else line)
        res["diff"].append(timed(["sh", "-c", f"diff -u '{path}' '{other}' >/dev/null; [ $? -le 1 ]"], what="diff")[0])
        res["cp"].append(cp_fsync(path, os.path.join(work, "copy")))
        t, m, out = ue(root, "preview", "--plan", plan, what="preview")
        tx = json.loads(out)["tx"]
        res["preview"].append(t); rss["preview"].append(m)
        t, m, _ = ue(root, "commit", str(tx), what="commit")
        res["commit"].append(t); rss["commit"].append(m)
        t, m, _ = ue(root, "rollback", str(tx), what="rollback")
        res["rollback"].append(t); rss["rollback"].append(m)
        res["cp"].append(cp_fsync(path, os.path.join(work, "copy")))
    shutil.rmtree(root)
    os.remove(other)
    med = {m: statistics.median(v) for m, v in res.items()}
    peak = {m: max(v) for m, v in rss.items()}
    return size, med, peak


def files_commit(n, reps, work):
    """ms per file of a CLI commit of a one-line edit to each of n files of 4 KiB in one
    directory (preview untimed), and of the fsync floor as a process on the same files
    (benches/floor.c: temp, fsync, rename each, then the directory's fsync), as
    benches/compare.sh lays them out."""
    root = os.path.join(work, f"files{n}")
    os.makedirs(root)
    body = "".join(f"    let value_{i} = compute({i}); // line {i}\n" for i in range(110))[:4096]
    for i in range(n):
        with open(os.path.join(root, f"f{i:04d}.rs"), "w") as f:
            f.write(body)
    subprocess.run([UE, "--root", root, "init"], check=True, stdout=subprocess.DEVNULL)
    plan = os.path.join(work, f"plan{n}.json")
    ours, base = [], []
    for rep in range(reps + 1):
        with open(plan, "w") as f:
            json.dump({"edits": [{"op": "replace_lines", "path": f"f{i:04d}.rs",
                                  "start": 1, "end": 1, "content": f"// rep {rep}\n"}
                                 for i in range(n)]}, f)
        _, _, out = ue(root, "preview", "--plan", plan)
        t, _, _ = ue(root, "commit", str(json.loads(out)["tx"]), what=f"commit{n}" if rep else None)
        tf, _, _ = timed([*FLOOR, "sync", root, str(n), f"// floor {rep}\n" + body[:4000]],
                         what=f"floor{n}" if rep else None)
        if rep > 0:  # the first is a warm-up
            ours.append(t * 1e3 / n); base.append(tf * 1e3 / n)
    shutil.rmtree(root)
    return statistics.median(ours), statistics.median(base)


def floor_cmd(work):
    """benches/floor.c built with gcc, else the same steps in Python."""
    exe = os.path.join(work, "ue-floor")
    if shutil.which("gcc") and subprocess.run(
            ["gcc", "-O2", "-pthread", "-o", exe, os.path.join(HERE, "floor.c")]).returncode == 0:
        return [exe]
    src = os.path.join(work, "floor.py")
    with open(src, "w") as f:
        f.write(FLOOR_PY)
    return [sys.executable, src]


FLOOR_PY = r'''
import os, sys
mode, root, n, content = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].encode()
dfd = os.open(root, os.O_RDONLY)
for i in range(n):
    fd = os.open(f".floor-{i}.tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
    os.write(fd, content)
    os.fsync(fd)
    os.close(fd)
for i in range(n):
    os.rename(f".floor-{i}.tmp", f"f{i:04d}.rs", src_dir_fd=dfd, dst_dir_fd=dfd)
os.fsync(dfd)
'''


def main():
    global FLOOR
    work = tempfile.mkdtemp(prefix="ue-large-", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        FLOOR = floor_cmd(work)
        load = open("/proc/loadavg").read().split()[:3]
        size, med, peak = big_file(LINES, REPS, work)
        per = {n: files_commit(n, FILE_REPS, work) for n in FILES}
        gib = None
        cpu = {m: statistics.median(v) for m, v in CPU.items()}  # before the 1 GiB run
        if GIB:
            gib = big_file((1 << 30) // 54, 1, work)
        load2 = open("/proc/loadavg").read().split()[:3]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = size / 1e6
    print(f"ultra-edit {UE}; {REPS} repetition(s), medians; load {' '.join(load)} -> {' '.join(load2)}")
    print(f"file: {size} bytes, {LINES} lines; one-line replace_lines of line {LINES // 2}")
    print()
    print("| figure | ultra-edit | baseline | ratio | target | |")
    print("|---|---:|---:|---:|---:|---|")

    def row(what, a, b, unit, target):
        r = a / b
        ok = "met" if r <= target else "**missed**"
        print(f"| {what} | {a:.{2 if unit == 's' else 3}f} {unit} | {b:.{2 if unit == 's' else 3}f} {unit} | {r:.2f}× | ≤ {target}× | {ok} |")

    base_preview = med["diff"] + med["cp"]
    print(f"| `diff -u` of the pair / `cp` + `fsync` of the file | | {med['diff']:.2f} s / {med['cp']:.2f} s | | | |")
    row("preview ÷ (`diff -u` + `cp` + `fsync`)", med["preview"], base_preview, "s", 2)
    row("commit ÷ `cp` + `fsync`", med["commit"], med["cp"], "s", 2)
    row("rollback ÷ `cp` + `fsync`", med["rollback"], med["cp"], "s", 2.5)
    for m in ("preview", "commit", "rollback"):
        bound = 1.25 * size + 32e6
        ok = "met" if peak[m] <= bound else "**missed**"
        print(f"| peak memory of {m} ÷ file | {peak[m] / 1e6:.0f} MB | {mb:.0f} MB | {peak[m] / size:.2f}× | ≤ 1.25× + 32 MB ({bound / 1e6:.0f} MB) | {ok} |")
    if len(FILES) >= 2:
        a, b = FILES[0], FILES[-1]
        (oa, fa), (ob, fb) = per[a], per[b]
        print(f"| commit ms per file, {a} files (fsync floor as a process) | {oa:.3f} ms | {fa:.3f} ms | {oa / fa:.2f}× | | |")
        print(f"| commit ms per file, {b} files (fsync floor as a process) | {ob:.3f} ms | {fb:.3f} ms | {ob / fb:.2f}× | | |")
        row(f"commit ms per file, {b} files ÷ {a} files", ob, oa, "ms", 1.2)
        print(f"| the floor's ms per file, {b} files ÷ {a} files | {fb:.3f} ms | {fa:.3f} ms | {fb / fa:.2f}× | | |")
        print(f"| commit ÷ floor per file, {b} files against {a} files | {ob / fb:.2f}× | {oa / fa:.2f}× | {(ob / fb) / (oa / fa):.2f}× | | |")
    print()
    print("CPU seconds (user + sys, GNU time; medians) beside the wall times above:")
    print()
    print("| step | wall | CPU | baseline wall | baseline CPU | CPU ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    cp_cpu = cpu.get("cp", 0.0)
    base_cpu = {"preview": cpu.get("diff", 0.0) + cp_cpu, "commit": cp_cpu, "rollback": cp_cpu}
    base_wall = {"preview": base_preview, "commit": med["cp"], "rollback": med["cp"]}
    for m in ("preview", "commit", "rollback"):
        r = f"{cpu[m] / base_cpu[m]:.2f}×" if base_cpu[m] > 0 else "n/a"
        print(f"| {m} | {med[m]:.2f} s | {cpu[m]:.2f} s | {base_wall[m]:.2f} s | {base_cpu[m]:.2f} s | {r} |")
    for n in FILES:
        if f"commit{n}" in cpu and f"floor{n}" in cpu:
            o, fl = cpu[f"commit{n}"], cpu[f"floor{n}"]
            print(f"| commit of {n} files, per file | {per[n][0]:.3f} ms | {o * 1e3 / n:.3f} ms | {per[n][1]:.3f} ms | {fl * 1e3 / n:.3f} ms | {o / fl:.2f}× |" if fl > 0 else
                  f"| commit of {n} files, per file | {per[n][0]:.3f} ms | {o * 1e3 / n:.3f} ms | {per[n][1]:.3f} ms | {fl * 1e3 / n:.3f} ms | n/a |")
    if gib:
        gsize, gmed, gpeak = gib
        bound = 1.25 * gsize + 32e6
        for m in ("preview", "commit", "rollback"):
            ok = "met" if gpeak[m] <= bound else "**missed**"
            print(f"| 1 GiB file ({gsize} bytes): {m} {gmed[m]:.1f} s, peak memory | {gpeak[m] / 1e6:.0f} MB | {gsize / 1e6:.0f} MB | {gpeak[m] / gsize:.2f}× | ≤ 1.25× + 32 MB ({bound / 1e6:.0f} MB) | {ok} |")


if __name__ == "__main__":
    main()
