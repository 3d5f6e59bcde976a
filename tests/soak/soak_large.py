#!/usr/bin/env python3
"""Model-based soak of LARGE files (> 8 MiB) through the release CLI.

Usage: soak_large.py UE_BINARY WORKDIR [--secs N] [--ops N] [--seed S]
  (SOAK_WEIGHTS=preview,revise,commit,killed commit,rollback,killed rollback,revert,
  abort,person: the ops' weights, default 6,3,4,2,2,2,1,1,2; with the `blake3` module
  the preview's candidate hashes are checked too.) Exits 1 with the first mismatch
  (`FINDING seed=S op=N: ...`; WORKDIR/soak-S.log has every command); the workspace is
  left in WORKDIR/ws.

Files of 9-40 MB (LF text, CRLF text, binary-ish, no trailing newline, long lines),
random ops: preview/revise with the text ops of docs/plan.md, commit, rollback, revert,
abort; a "person" editing files between ops (no lock); SIGKILL of commit and rollback
after 0-800 ms, then any command (recovery first). After every op: disk bytes (sha256)
and mode against the model, `journal verify` clean, `log` states agreeing.
"""
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time

try:
    import blake3  # optional: checks the preview's candidate hash too
except ImportError:  # pragma: no cover
    blake3 = None

UE = sys.argv[1]
WORK = sys.argv[2]
args = sys.argv[3:]
SECS = float(args[args.index("--secs") + 1]) if "--secs" in args else 600
OPS = int(args[args.index("--ops") + 1]) if "--ops" in args else 400
SEED = int(args[args.index("--seed") + 1]) if "--seed" in args else int(time.time())
rng = random.Random(SEED)
ROOT = os.path.join(WORK, "ws")
LOG = open(os.path.join(WORK, f"soak-{SEED}.log"), "w")
MB = 1 << 20


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, file=LOG, flush=True)


class Finding(Exception):
    pass


def ue(*argv, kill_after=None, stdin=None):
    cmd = [UE, "--root", ROOT, "--json", "--no-pager", *argv]
    log("$", " ".join(argv), f"(kill after {kill_after:.3f}s)" if kill_after is not None else "")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    killed = False
    if kill_after is not None:
        try:
            out, err = p.communicate(input=stdin, timeout=kill_after)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            out, err = p.communicate()
            killed = True
    else:
        out, err = p.communicate(input=stdin, timeout=600)
    rc = p.returncode
    j = None
    for line in out.decode(errors="replace").splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            pass
    log("  rc", rc, "killed" if killed else "", err.decode(errors="replace")[-400:].replace("\n", " | "))
    return rc, j, killed, err.decode(errors="replace")


# ---------------------------------------------------------------- files


def gen_text(n_bytes, crlf=False, trailing_nl=True, long_lines=False, tag="L"):
    eol = b"\r\n" if crlf else b"\n"
    words = [b"alpha", b"beta", b"gamma", b"delta", b"omega", b"kappa", b"sigma"]
    out = []
    size = 0
    i = 0
    while size < n_bytes:
        w = words[i % 7] if i % 997 else b"zeta"
        if long_lines:
            body = (w + b" ") * rng.randint(500, 1500)
        else:
            body = w + b" " + str(rng.random()).encode()
        line = b"%s%08d %s" % (tag.encode(), i, body) + eol
        out.append(line)
        size += len(line)
        i += 1
    data = b"".join(out)
    if not trailing_nl:
        data = data[: -len(eol)]
    return data


def gen_binary(n_bytes):
    # random bytes with NULs, some newlines and a few ascii markers
    parts = []
    size = 0
    i = 0
    while size < n_bytes:
        p = rng.randbytes(4000) + b"\nMARK%08d\n" % i
        parts.append(p)
        size += len(p)
        i += 1
    return b"".join(parts)


SPECS = {
    "a_lf.txt": lambda: gen_text(12 * MB, tag="A"),
    "b_crlf.txt": lambda: gen_text(10 * MB, crlf=True, tag="B"),
    "c_bin.dat": lambda: gen_binary(int(9.5 * MB)),
    "d_nonl.txt": lambda: gen_text(15 * MB, trailing_nl=False, tag="D"),
    "e_long.txt": lambda: gen_text(20 * MB, long_lines=True, tag="E"),
    "sub/f_big.txt": lambda: gen_text(40 * MB, tag="F"),
}

# ---------------------------------------------------------------- model

disk = {}  # path -> bytes or None
modes = {}  # path -> mode
opentx = {}  # tx -> {"snap": {path: bytes|None}, "cand": {path: bytes|None}, "revs": n}
committed = {}  # tx -> {path: (pre, post)}  (only the last few kept for rollback choices)
states = {}  # tx -> expected log state
stats = {}


def bump(k):
    stats[k] = stats.get(k, 0) + 1


def sha(b):
    return None if b is None else hashlib.sha256(b).hexdigest()[:16]


def read_disk(p):
    try:
        with open(os.path.join(ROOT, p), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def check_disk(ctx):
    for p, want in disk.items():
        got = read_disk(p)
        if sha(got) != sha(want):
            raise Finding(f"{ctx}: {p} on disk {sha(got)} ({None if got is None else len(got)} B), model {sha(want)} ({None if want is None else len(want)} B)")
        if got is not None:
            m = os.stat(os.path.join(ROOT, p)).st_mode & 0o7777
            if m != modes[p]:
                raise Finding(f"{ctx}: {p} mode {oct(m)}, model {oct(modes[p])}")
    # no temps left behind
    for d, _, names in os.walk(ROOT):
        if ".ultra-edit" in d:
            continue
        for n in names:
            if n.startswith(".ue-") and n.endswith(".tmp"):
                raise Finding(f"{ctx}: temp left behind {os.path.join(d, n)}")


def check_journal(ctx):
    rc, j, _, err = ue("journal", "verify")
    if rc != 0 or not j or not j.get("ok"):
        raise Finding(f"{ctx}: journal verify rc={rc} {json.dumps(j)[:600]} {err[-300:]}")
    rc, j, _, err = ue("log")
    if rc != 0:
        raise Finding(f"{ctx}: log rc={rc} {err[-300:]}")
    got = {t["tx"]: t for t in j["txs"]}
    for tx, st in states.items():
        if tx not in got:
            raise Finding(f"{ctx}: tx {tx} missing from log")
        if got[tx]["state"] != st:
            raise Finding(f"{ctx}: tx {tx} log state {got[tx]['state']}, model {st}")
    for tx, t in got.items():
        if tx not in states:
            raise Finding(f"{ctx}: unknown tx {tx} in log: {t['state']} {t.get('description')}")
    if j.get("needs_attention"):
        raise Finding(f"{ctx}: needs_attention {j['needs_attention']}")


# ---------------------------------------------------------------- edits


def lines_of(b):
    """offsets of line starts (a line = bytes up to and including \\n)."""
    starts = [0]
    i = b.find(b"\n")
    while i != -1:
        if i + 1 < len(b):
            starts.append(i + 1)
        i = b.find(b"\n", i + 1)
    return starts


def pick_pos(n):
    where = rng.choice(["start", "middle", "end", "any", "any"])
    if where == "start":
        return rng.randint(0, min(n - 1, 5000))
    if where == "end":
        return rng.randint(max(0, n - 5000), n - 1)
    if where == "middle":
        return rng.randint(n // 2 - 5000, n // 2 + 5000)
    return rng.randint(0, n - 1)


def unique_target(base, p, pos):
    """A byte string found exactly once in base, near pos (a line tag)."""
    if p.startswith("c_bin"):
        k = base.find(b"MARK", pos)
        if k == -1:
            k = base.rfind(b"MARK", 0, pos)
        return base[k:k + 12]
    tag = {"a": b"A", "b": b"B", "d": b"D", "e": b"E", "s": b"F"}[os.path.basename(p)[0] if not p.startswith("sub") else "s"]
    k = base.find(b"\n" + tag, pos)
    if k == -1:
        k = base.rfind(b"\n" + tag, 0, pos)
    return base[k + 1:k + 10]


def make_edits(base, p, eol):
    """1-3 non-overlapping edits of one file: (plan edits, expected bytes)."""
    n = len(base)
    kind = rng.choice(["replace_text", "replace_text", "replace_text_all", "replace_lines", "replace_lines_chunk",
                       "insert_before", "insert_after", "prepend", "append", "far_apart"])
    if kind == "far_apart" or kind == "replace_text":
        count = 2 if kind == "far_apart" else 1
        targets = []
        for k in range(count):
            pos = rng.randint(0, 5000) if (kind == "far_apart" and k == 0) else (
                rng.randint(n - 8000, n - 1) if kind == "far_apart" else pick_pos(n))
            t = unique_target(base, p, pos)
            if base.count(t) != 1 or any(t == x for x, _ in targets):
                continue
            new = t + b" EDIT%d" % rng.randint(0, 10 ** 6) + (eol if rng.random() < 0.3 else b"")
            targets.append((t, new))
        if not targets:
            return None
        # overlapping? (distinct unique tags never overlap)
        exp = base
        for t, new in targets:
            exp = exp.replace(t, new, 1)
        ed = [{"op": "replace_text", "path": p, "old": t.decode(), "new": new.decode()}
              for t, new in targets]
        return ed, exp
    if kind == "replace_text_all":
        if p.startswith("c_bin"):
            return None
        w = b"zeta" if rng.random() < 0.7 else b"omega"
        new = w.upper()
        if base.count(w) == 0:
            return None
        return [{"op": "replace_text", "path": p, "old": w.decode(), "new": new.decode(), "occurrence": "all"}], base.replace(w, new)
    if p.startswith("c_bin") and kind.startswith("replace_lines"):
        kind = "append"
    if kind in ("replace_lines", "replace_lines_chunk"):
        starts = lines_of(base)
        nl = len(starts)
        if kind == "replace_lines":
            s = rng.choice([1, nl // 2, nl, rng.randint(1, nl)])
            e = min(nl, s + rng.randint(0, 3))
        else:  # a whole chunk's worth (and more): 8-64 KiB of lines deleted or shrunk
            s = rng.randint(1, max(1, nl - 50))
            e = s
            while e < nl and starts[e] - starts[s - 1] < rng.choice([8 << 10, 16 << 10, 64 << 10]):
                e += 1
        content = b"" if (kind == "replace_lines_chunk" and rng.random() < 0.6) else b"REPLACED %d" % rng.randint(0, 999) + eol
        lo = starts[s - 1]
        hi = starts[e] if e < nl else n
        # replacing the last line that has no newline: content's newline stays as given
        exp = base[:lo] + content + base[hi:]
        return [{"op": "replace_lines", "path": p, "start": s, "end": e, "content": content.decode()}], exp
    if kind in ("insert_before", "insert_after"):
        t = unique_target(base, p, pick_pos(n))
        if base.count(t) != 1:
            return None
        text = b"INS %d" % rng.randint(0, 999) + eol
        k = base.find(t)
        exp = base[:k] + text + base[k:] if kind == "insert_before" else base[:k + len(t)] + text + base[k + len(t):]
        return [{"op": kind, "path": p, "anchor": t.decode(), "text": text.decode()}], exp
    if kind == "prepend":
        # insertion that shifts everything
        text = (b"PRE %d" % rng.randint(0, 999) + eol) * rng.choice([1, 1, 300])
        return [{"op": "prepend", "path": p, "text": text.decode()}], text + base
    if kind == "append":
        text = b"APP %d" % rng.randint(0, 999) + eol
        return [{"op": "append", "path": p, "text": text.decode()}], base + text
    return None


def eol_of(p):
    return b"\r\n" if p.startswith("b_crlf") else b"\n"


def plan_for(bases):
    """edits for 1-2 files of `bases` ({path: bytes}); returns (plan, {path: expected})."""
    ps = [p for p in bases if bases[p] is not None]
    chosen = rng.sample(ps, min(len(ps), rng.choice([1, 1, 2])))
    edits, exp = [], {}
    for p in chosen:
        for _ in range(5):
            r = make_edits(bases[p], p, eol_of(p))
            if r and r[1] != bases[p]:
                edits += r[0]
                exp[p] = r[1]
                break
    if not edits:
        return None
    return {"description": "soak", "agent": "soak", "edits": edits}, exp


def run_plan(verb, plan, *extra):
    pf = os.path.join(WORK, "plan.json")
    with open(pf, "w") as f:
        json.dump(plan, f)
    return ue(verb, *extra, "--plan", pf)


def check_candidates(ctx, j, exp):
    if blake3 is None or not j:
        return
    files = {f["path"]: f for f in j.get("files", [])}
    for p, b in exp.items():
        f = files.get(p)
        if f is None:
            raise Finding(f"{ctx}: {p} not in the revision")
        h = blake3.blake3(b).hexdigest()
        if f["candidate"]["hash"] != h or f["candidate"]["size"] != len(b):
            raise Finding(f"{ctx}: {p} candidate {f['candidate']['hash'][:12]} {f['candidate']['size']} B, model {h[:12]} {len(b)} B")


# ---------------------------------------------------------------- ops


def op_preview():
    r = plan_for(disk)
    if not r:
        return
    plan, exp = r
    rc, j, _, err = run_plan("preview", plan)
    if rc not in (0,):
        raise Finding(f"preview rc={rc}: {err[-500:]}")
    tx = j["tx"]
    check_candidates("preview", j, exp)
    opentx[tx] = {"snap": {p: disk[p] for p in exp}, "cand": dict(exp)}
    states[tx] = "open"
    bump("preview")


def op_revise():
    if not opentx:
        return
    tx = rng.choice(list(opentx))
    t = opentx[tx]
    # base: the latest candidates (files the tx does not touch yet: the disk)
    bases = {p: (t["cand"][p] if p in t["cand"] else disk[p]) for p in disk}
    r = plan_for(bases)
    if not r:
        return
    plan, exp = r
    new_files = [p for p in exp if p not in t["cand"]]
    rc, j, _, err = run_plan("revise", plan, str(tx))
    if rc != 0:
        raise Finding(f"revise {tx} rc={rc}: {err[-500:]}")
    # a revise that adds a file snapshots the disk as it is now for that file
    for p in new_files:
        t["snap"][p] = disk[p]
    t["cand"].update(exp)
    check_candidates("revise", j, t["cand"])
    bump("revise")


def settle_after_kill(what, tx_files_pre, tx_files_post):
    """After a SIGKILL: run a command (recovery first) and find which side landed."""
    # Any command runs recovery first (a reading one opens the journal for writing when
    # a batch is in flight).
    rc, j, _, err = ue(*rng.choice([["recover"], ["log"], ["journal", "verify"], ["show", "1"]]))
    if rc != 0:
        raise Finding(f"recover after killed {what}: rc={rc} {err[-500:]}")
    got = {p: read_disk(p) for p in tx_files_pre}
    if all(sha(got[p]) == sha(tx_files_post[p]) for p in got):
        return "post"
    if all(sha(got[p]) == sha(tx_files_pre[p]) for p in got):
        return "pre"
    raise Finding(f"after killed {what}: a mix: " + ", ".join(
        f"{p}: disk {sha(got[p])} pre {sha(tx_files_pre[p])} post {sha(tx_files_post[p])}" for p in got))


def op_commit(kill):
    if not opentx:
        return
    tx = rng.choice(list(opentx))
    t = opentx[tx]
    fresh = all(sha(disk[p]) == sha(t["snap"][p]) for p in t["snap"])
    pre = {p: disk[p] for p in t["cand"]}
    ka = rng.uniform(0, 0.8) if kill else None
    rc, j, killed, err = ue("commit", str(tx), kill_after=ka)
    if killed:
        bump("commit_killed")
        side = settle_after_kill(f"commit {tx}", pre, t["cand"])
        if side == "post" and not fresh:
            raise Finding(f"killed commit {tx} landed over a stale snapshot")
        if side == "post" and pre != t["cand"]:
            land(tx)
        elif side == "post":
            land(tx)
        return
    if fresh:
        if rc != 0:
            raise Finding(f"commit {tx} of a fresh preview rc={rc}: {err[-500:]}")
        land(tx)
        bump("commit")
    else:
        if rc != 3:
            raise Finding(f"commit {tx} of a stale preview rc={rc} (want 3): {err[-500:]}")
        bump("commit_stale")


def land(tx):
    t = opentx.pop(tx)
    committed[tx] = {p: (disk[p], t["cand"][p]) for p in t["cand"]}
    for p, b in t["cand"].items():
        disk[p] = b
    states[tx] = "committed"
    trim()


def trim():
    while len(committed) > 4:
        del committed[min(committed)]


def find_new_tx(of):
    rc, j, _, _ = ue("log")
    for t in j["txs"]:
        if t["tx"] not in states:
            return t
    return None


def op_rollback(kill):
    live = [tx for tx in committed if states.get(tx) == "committed" and tx not in redone]
    if not live:
        return
    tx = rng.choice(live)
    files = committed[tx]
    fresh = all(sha(disk[p]) == sha(post) for p, (pre, post) in files.items())
    ka = rng.uniform(0, 0.8) if kill else None
    rc, j, killed, err = ue("rollback", str(tx), kill_after=ka)
    pre_now = {p: disk[p] for p in files}
    target = {p: pre for p, (pre, post) in files.items()}
    if killed:
        bump("rollback_killed")
        side = settle_after_kill(f"rollback {tx}", pre_now, target)
        nt = find_new_tx(tx)
        if side == "post" and pre_now != target:
            if not fresh:
                raise Finding(f"killed rollback of {tx} landed over changed files")
            if nt is None:
                raise Finding(f"killed rollback of {tx} landed but no new tx in log")
            rolled(tx, nt["tx"], files)
        elif nt is not None:
            # started but reverted: the rollback tx is aborted
            states[nt["tx"]] = nt["state"]
            if nt["state"] != "aborted":
                raise Finding(f"killed rollback of {tx} did not land but tx {nt['tx']} is {nt['state']}")
        return
    if fresh:
        if rc != 0:
            raise Finding(f"rollback {tx} rc={rc}: {err[-500:]}")
        rolled(tx, j["tx"], files)
        bump("rollback")
    else:
        if rc == 0:
            raise Finding(f"rollback {tx} over changed files succeeded: {json.dumps(j)[:300]}")
        nt = find_new_tx(tx)
        if nt is not None:
            states[nt["tx"]] = nt["state"]
        bump(f"rollback_refused_rc{rc}")


rollback_of = {}  # rollback tx -> the tx it rolled back
redone = set()  # committed again by a rollback of its rollback: not rollbackable itself


def undone(tx):
    """`tx` is rolled back: what it rolled back (if it is a rollback) is in effect again."""
    states[tx] = "rolled_back"
    if tx in rollback_of:
        redo(rollback_of[tx])


def redo(tx):
    """`tx` is in effect again through a rollback of its rollback: committed, but only
    the newest rollback of the chain can be rolled back; what it rolled back is undone."""
    states[tx] = "committed"
    redone.add(tx)
    if tx in rollback_of:
        undone(rollback_of[tx])


def rolled(tx, ntx, files):
    for p, (pre, post) in files.items():
        disk[p] = pre
    rollback_of[ntx] = tx
    undone(tx)
    states[ntx] = "committed"
    committed[ntx] = {p: (post, pre) for p, (pre, post) in files.items()}
    trim()


def op_revert():
    live = [tx for tx in committed if states.get(tx) == "committed" and tx not in redone
            and all(sha(disk[p]) == sha(post) for p, (pre, post) in committed[tx].items())]
    if not live:
        return
    tx = rng.choice(live)
    files = committed[tx]
    rc, j, _, err = ue("revert", str(tx))
    if rc != 0:
        raise Finding(f"revert {tx} rc={rc}: {err[-500:]}")
    ntx = j["tx"]
    exp = {p: pre for p, (pre, post) in files.items()}
    check_candidates(f"revert {tx}", j, exp)
    opentx[ntx] = {"snap": {p: disk[p] for p in files}, "cand": exp}
    states[ntx] = "open"
    bump("revert")


def op_abort():
    if not opentx:
        return
    tx = rng.choice(list(opentx))
    rc, j, _, err = ue("abort", str(tx))
    if rc != 0:
        raise Finding(f"abort {tx} rc={rc}: {err[-500:]}")
    del opentx[tx]
    states[tx] = "aborted"
    bump("abort")


def op_person():
    p = rng.choice(list(disk))
    b = disk[p]
    path = os.path.join(ROOT, p)
    how = rng.choice(["append", "inplace", "rewrite_mid"])
    if how == "append":
        new = b + b"person line\n"
        with open(path, "ab") as f:
            f.write(b"person line\n")
    elif how == "inplace":
        k = rng.randint(0, len(b) - 10)
        patch = b"PERSON!!"
        new = b[:k] + patch + b[k + 8:]
        with open(path, "r+b") as f:
            f.seek(k)
            f.write(patch)
    else:
        k = rng.randint(0, len(b) - 10)
        new = b[:k] + b"person inserted\n" + b[k:]
        with open(path, "wb") as f:
            f.write(new)
    disk[p] = new
    bump("person_" + how)


def main():
    os.makedirs(ROOT, exist_ok=True)
    log("seed", SEED)
    if not os.path.isdir(os.path.join(ROOT, ".ultra-edit")):
        subprocess.run([UE, "--root", ROOT, "init"], check=True, capture_output=True)
    os.makedirs(os.path.join(ROOT, "sub"), exist_ok=True)
    for p, g in SPECS.items():
        b = g()
        with open(os.path.join(ROOT, p), "wb") as f:
            f.write(b)
        disk[p] = b
        modes[p] = 0o644
        os.chmod(os.path.join(ROOT, p), 0o644)
    t0 = time.time()
    weights = os.environ.get("SOAK_WEIGHTS", "6,3,4,2,2,2,1,1,2")
    w = [int(x) for x in weights.split(",")]
    ops = list(zip([op_preview, op_revise, lambda: op_commit(False), lambda: op_commit(True),
                    lambda: op_rollback(False), lambda: op_rollback(True), op_revert, op_abort,
                    op_person], w))
    funcs = [f for f, w in ops for _ in range(w)]
    i = 0
    try:
        while i < OPS and time.time() - t0 < SECS:
            f = rng.choice(funcs)
            f()
            check_disk(f"op {i}")
            check_journal(f"op {i}")
            i += 1
    except Finding as e:
        print(f"FINDING seed={SEED} op={i}: {e}")
        log("FINDING", e)
        print("stats", stats)
        sys.exit(1)
    print(f"ok seed={SEED} ops={i} secs={time.time() - t0:.0f} stats={stats}")


main()
