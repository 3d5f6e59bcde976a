#!/usr/bin/env python3
"""Per-file cost of a many-file commit at two sizes, against floors doing the same I/O
(issue 34, docs/benchmarks.md, "Per-file cost at 10,000 files").

For each layout (all files in one directory; the same files spread over 10
directories) and each n (default 1,000 and 10,000 files of 4 KiB), REPS repetitions
(default 3, after one untimed warm-up) of, in rotating order:

  ours   `ultra-edit commit` of a one-line edit to each file (preview untimed)
  sync   benches/floor.c sync: temps written and fsynced one by one, renamed, dirs fsynced
  like   benches/floor.c like: ultra-edit's I/O pattern without its journal: temps
         fsynced on 8 threads at once, then per file the target opened and read, held
         (the first 256), renamed, then the directories fsynced, the holds closed

and prints the medians in ms per file, every repetition, and the ratios
10,000 ÷ 1,000 side by side, with the load average before and after. With --phases
(needs `perf` and root or perf_event_paranoid ≤ 1), each `ours` repetition is followed
by a second, untimed commit (another line of each file) under `perf record` of its
fsync/fdatasync/rename/openat tracepoints, and the per-file
time of each protocol step is printed beside the floors' own phases (floor.c prints
them): where the growth is.

    python3 benches/many_files.py                     # 1,000 / 10,000 files, 3 reps
    python3 benches/many_files.py --reps 5 --phases
    python3 benches/many_files.py --short             # CI: 20 / 200 files, 1 rep, debug build
    UE=target/release/ultra-edit python3 benches/many_files.py

Files go to $TMPDIR (default /tmp); every loop is bounded by count; `os.sync()`
(untimed) before each timed run.
"""
import collections, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


SHORT = "--short" in sys.argv
PHASES = "--phases" in sys.argv
REPS = int(arg("--reps", "1" if SHORT else "3"))
SIZES = [int(x) for x in arg("--files", "20,200" if SHORT else "1000,10000").split(",")]
LAYOUTS = [int(x) for x in arg("--dirs", "1,10").split(",")]
BODY = "".join(f"    let value_{i} = compute({i}); // line {i}\n" for i in range(110))[:4096]


def binary():
    if os.environ.get("UE"):
        return os.environ["UE"]
    prof = ["--all-features"] if SHORT else ["--release"]
    subprocess.run(["cargo", "build", "--quiet", "--bin", "ultra-edit", *prof], cwd=REPO, check=True)
    return os.path.join(REPO, "target", "debug" if SHORT else "release", "ultra-edit")


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def run(cmd):
    """Wall seconds of `cmd` and its stdout; exits naming the command if it fails."""
    os.sync()
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd[:6])}\n{p.stderr}")
    return took, p.stdout


def paths(n, dirs):
    if dirs == 1:
        return [f"f{i:04d}.rs" for i in range(n)]
    return [f"d{i % dirs}/f{i:05d}.rs" for i in range(n)]


SYSCALLS = ["fsync", "fdatasync", "renameat", "renameat2", "rename", "openat"]


def ours_phases(ue, root, tx, n, work):
    """One commit under `perf record` of syscall tracepoints: wall ms of each protocol
    step, found from the syscalls that bound it (the first redb sync is the journal's
    open, the next two the intent, then n temp fsyncs, the renames, the directory
    fsyncs, then the completion's two)."""
    data = os.path.join(work, "perf.data")
    ev = ",".join(f"syscalls:sys_{k}_{s}" for s in SYSCALLS for k in ("enter", "exit"))
    os.sync()
    t = time.perf_counter()
    p = subprocess.run(["perf", "record", "-q", "-o", data, "-e", ev, "--", ue, "--root", root,
                        "--json", "commit", str(tx)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"perf record of the commit failed: {p.stderr}")
    txt = subprocess.run(["perf", "script", "-i", data, "-F", "tid,time,event"],
                         capture_output=True, text=True).stdout
    os.remove(data)
    rows = []
    for line in txt.splitlines():
        m = re.match(r"\s*(\d+)\s+([\d.]+):\s+syscalls:sys_(enter|exit)_(\w+)", line)
        if m:
            rows.append((float(m.group(2)), int(m.group(1)), m.group(3), m.group(4)))
    pend, calls = {}, []
    for t0, tid, ke, name in rows:
        if ke == "enter":
            pend[(tid, name)] = t0
        elif (tid, name) in pend:
            calls.append((pend.pop((tid, name)), t0, name))
    calls.sort()
    fds = [c for c in calls if c[2] == "fdatasync"]
    fss = [c for c in calls if c[2] == "fsync"]
    ren = [c for c in calls if c[2].startswith("rename")]
    staged = [c for c in fss if c[0] < ren[0][0]]
    dirsync = [c for c in fss if c[0] >= ren[-1][0]]
    after = [c for c in fds if c[0] >= dirsync[-1][1]]
    start = rows[0][0]
    ph = collections.OrderedDict()
    ph["start + journal open"] = fds[0][1] - start
    ph["lock, recover, tx load, gate"] = fds[1][0] - fds[0][1]
    ph["intent"] = fds[2][1] - fds[1][0]
    ph["stage"] = max(c[1] for c in staged) - fds[2][1]
    ph["install"] = dirsync[0][0] - max(c[1] for c in staged)
    ph["  of it: renames"] = sum(c[1] - c[0] for c in ren)
    ph["dir fsync"] = max(c[1] for c in dirsync) - dirsync[0][0]
    ph["completion"] = after[1][1] - max(c[1] for c in dirsync)
    ph["close + exit"] = rows[-1][0] - after[1][1]
    return took, {k: v * 1e3 for k, v in ph.items()}


FLOOR_PHASES = ("stage", "install", "dirsync", "release")


def floor_phases(out):
    m = re.search(r"floor-phases (.*)", out)
    if not m:
        return {}
    return {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def bench(ue, floor, n, dirs, reps, work):
    root = os.path.join(work, f"ws-{n}-{dirs}")
    os.makedirs(root)
    ps = paths(n, dirs)
    for p in ps:
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(BODY)
    subprocess.run([ue, "--root", root, "init"], check=True, stdout=subprocess.DEVNULL)
    plan = os.path.join(work, "plan.json")
    times = {"ours": [], "sync": [], "like": []}
    phases = {"ours": [], "sync": [], "like": []}
    kinds = list(times)
    for rep in range(reps + 1):
        # Rotate the order so that drift of the disk favours none of the three.
        for k in kinds[rep % 3:] + kinds[:rep % 3]:
            if k == "ours":
                with open(plan, "w") as f:
                    json.dump({"edits": [{"op": "replace_lines", "path": p, "start": 1, "end": 1,
                                          "content": f"// rep {rep}\n"} for p in ps]}, f)
                _, out = run([ue, "--root", root, "--json", "preview", "--plan", plan])
                t, _ = run([ue, "--root", root, "--json", "commit", str(json.loads(out)["tx"])])
                ph = {}
                if PHASES and rep:
                    # A second commit, traced (perf's own start-up is not in the figure
                    # above): the same edit again, one line further down.
                    with open(plan, "w") as f:
                        json.dump({"edits": [{"op": "replace_lines", "path": p, "start": 2, "end": 2,
                                              "content": f"// traced {rep}\n"} for p in ps]}, f)
                    _, out = run([ue, "--root", root, "--json", "preview", "--plan", plan])
                    _, ph = ours_phases(ue, root, json.loads(out)["tx"], n, work)
            else:
                t, out = run([*floor, k, root, str(n), f"// floor {rep}\n" + BODY[:4000], str(dirs)])
                ph = floor_phases(out)
            if rep:  # the first round is a warm-up
                times[k].append(t * 1e3 / n)
                phases[k].append(ph)
    shutil.rmtree(root)
    return times, phases


def floor_cmd(work):
    exe = os.path.join(work, "ue-floor")
    if not shutil.which("gcc"):
        sys.exit("gcc not found: benches/floor.c is the floor")
    subprocess.run(["gcc", "-O2", "-pthread", "-o", exe, os.path.join(HERE, "floor.c")], check=True)
    return [exe]


def med_phase(list_of_dicts, n):
    keys = list_of_dicts[0].keys() if list_of_dicts and list_of_dicts[0] else []
    return {k: statistics.median(d[k] for d in list_of_dicts) * 1e3 / n for k in keys}


def main():
    ue = binary()
    work = tempfile.mkdtemp(prefix="ue-many-", dir=os.environ.get("TMPDIR", "/tmp"))
    res = {}
    try:
        floor = floor_cmd(work)
        l0 = load()
        for dirs in LAYOUTS:
            for n in SIZES:
                res[(n, dirs)] = bench(ue, floor, n, dirs, REPS, work)
        l1 = load()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    a, b = SIZES[0], SIZES[-1]
    print(f"ultra-edit {ue}; {REPS} repetition(s) after a warm-up, medians; load {l0} -> {l1}")
    print()
    print(f"| layout | what | ms per file, {a} files | ms per file, {b} files | {b} ÷ {a} | repetitions at {a} / at {b} |")
    print("|---|---|---:|---:|---:|---|")
    names = {"ours": "ultra-edit commit (CLI)", "sync": "floor: sequential fsyncs",
             "like": "floor: ultra-edit's I/O pattern"}
    for dirs in LAYOUTS:
        lay = "1 directory" if dirs == 1 else f"{dirs} directories"
        for k in ("ours", "sync", "like"):
            ta, tb = res[(a, dirs)][0][k], res[(b, dirs)][0][k]
            ma, mb = statistics.median(ta), statistics.median(tb)
            reps = f"{' '.join(f'{x:.3f}' for x in ta)} / {' '.join(f'{x:.3f}' for x in tb)}"
            print(f"| {lay} | {names[k]} | {ma:.3f} | {mb:.3f} | {mb / ma:.2f}× | {reps} |")
        oa, ob = statistics.median(res[(a, dirs)][0]["ours"]), statistics.median(res[(b, dirs)][0]["ours"])
        la, lb = statistics.median(res[(a, dirs)][0]["like"]), statistics.median(res[(b, dirs)][0]["like"])
        print(f"| {lay} | ours ÷ like-for-like floor | {oa / la:.2f}× | {ob / lb:.2f}× | {(ob / lb) / (oa / la):.2f}× | |")
    print()
    print("Phases, µs per file (medians; ours from syscall tracepoints with --phases, the floors' from floor.c):")
    print()
    print(f"| layout | phase | ours {a} | ours {b} | like {a} | like {b} | sync {a} | sync {b} |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for dirs in LAYOUTS:
        lay = "1 directory" if dirs == 1 else f"{dirs} directories"
        o = {n: med_phase(res[(n, dirs)][1]["ours"], n) for n in (a, b)}
        f = {k: {n: med_phase(res[(n, dirs)][1][k], n) for n in (a, b)} for k in ("like", "sync")}
        # ours' steps against the floor phase that does the same work
        pairs = [("start + journal open", None), ("lock, recover, tx load, gate", None),
                 ("intent", None), ("stage", "stage"), ("install", "install"),
                 ("  of it: renames", None), ("dir fsync", "dirsync"), ("completion", None),
                 ("close + exit", "release")]
        for mine, theirs in pairs:
            cell = lambda d, key: f"{d[key]:.1f}" if key and key in d else ""
            print(f"| {lay} | {mine}{' / ' + theirs if theirs else ''} | {cell(o[a], mine)} | {cell(o[b], mine)} | "
                  f"{cell(f['like'][a], theirs)} | {cell(f['like'][b], theirs)} | "
                  f"{cell(f['sync'][a], theirs)} | {cell(f['sync'][b], theirs)} |")


if __name__ == "__main__":
    main()
