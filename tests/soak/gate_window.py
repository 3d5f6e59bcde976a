#!/usr/bin/env python3
"""A real write in the window between the gate and the temp write, held open by
the failpoint `image::before_splice=sleep(1500)` (release CLI built --all-features).
For commit and rollback, what the other writer does in the window:
  inside:   flips a byte inside the region our edit replaces (the splice skips it)
  outside:  flips a byte far from our edit
  truncate: cuts the file to half
  extend:   appends a line
  same:     rewrites the file by rename with identical bytes (new inode)
Expected: exit 3 (stale) with the other writer's bytes kept, except `same`, which lands
the exact image. Never a temp left, journal verify clean.
Usage: gate_window.py UE WORK
"""
import hashlib, json, os, subprocess, sys, time

UE, WORK = sys.argv[1], sys.argv[2]
ROOT = os.path.join(WORK, "ws")
os.makedirs(ROOT, exist_ok=True)
P = os.path.join(ROOT, "big.txt")
N = 400_000
base = b"".join(b"L%08d some text of the line %d\n" % (i, i * 7) for i in range(N))
LINE = 200_001
subprocess.run([UE, "--root", ROOT, "init"], capture_output=True)


def ue(*a, fp=None):
    env = dict(os.environ)
    if fp:
        env["FAILPOINTS"] = fp
    return subprocess.Popen([UE, "--root", ROOT, "--json", *a], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


def done(p):
    out, err = p.communicate()
    j = None
    for line in out.decode().splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            pass
    return p.returncode, j, err.decode()


def h(b):
    return hashlib.sha256(b).hexdigest()[:12]


def other(how, now):
    off = now.find(b"L%08d" % (LINE - 1))
    if how == "inside":
        b = bytearray(now); b[off + 3] ^= 1
        with open(P, "r+b") as f:
            f.seek(off + 3); f.write(bytes([b[off + 3]]))
        return bytes(b)
    if how == "outside":
        b = bytearray(now); b[1000] ^= 1
        with open(P, "r+b") as f:
            f.seek(1000); f.write(bytes([b[1000]]))
        return bytes(b)
    if how == "truncate":
        os.truncate(P, len(now) // 2)
        return now[: len(now) // 2]
    if how == "extend":
        with open(P, "ab") as f:
            f.write(b"theirs\n")
        return now + b"theirs\n"
    if how == "same":
        tmp = P + ".other"
        with open(tmp, "wb") as f:
            f.write(now)
        os.rename(tmp, P)
        return now


post = base.replace(b"L%08d" % (LINE - 1), b"CHANGED", 1)
bad = []
for verb in ["commit", "rollback"]:
    for how in ["inside", "outside", "truncate", "extend", "same"]:
        with open(P, "wb") as f:
            f.write(base)
        plan = {"edits": [{"op": "replace_text", "path": "big.txt", "old": "L%08d" % (LINE - 1), "new": "CHANGED"}]}
        json.dump(plan, open(os.path.join(WORK, "p.json"), "w"))
        rc, j, err = done(ue("preview", "--plan", os.path.join(WORK, "p.json")))
        assert rc == 0, err
        tx = j["tx"]
        now, want = base, post
        if verb == "rollback":
            rc, j, err = done(ue("commit", str(tx)))
            assert rc == 0, err
            now, want = post, base
        p = ue(verb, str(tx), fp="image::before_splice=sleep(1500)")
        time.sleep(0.9)  # the gate of a 12 MB file takes well under this
        theirs = other(how, now)
        rc, j, err = done(p)
        disk = open(P, "rb").read()
        temps = [n for n in os.listdir(ROOT) if n.startswith(".ue-")]
        v = subprocess.run([UE, "--root", ROOT, "journal", "verify"], capture_output=True)
        exp_land = how == "same"
        ok = (rc == 0 and h(disk) == h(want)) if exp_land else (rc == 3 and h(disk) == h(theirs))
        ok = ok and not temps and v.returncode == 0
        msg = f"{verb:8} {how:8} rc={rc} disk={h(disk)} want={h(want)} theirs={h(theirs)} temps={temps} verify={v.returncode}"
        print(("ok   " if ok else "BAD  ") + msg, flush=True)
        if not ok:
            bad.append((msg, err[-600:]))
        # leave nothing open for the next case
        if rc != 0 and verb == "commit":
            done(ue("abort", str(tx)))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
