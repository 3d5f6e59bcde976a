#!/usr/bin/env python3
"""A real concurrent writer (no lock) on a 48 MB file during `commit` and
`rollback`: writes through an fd opened before the commit (so writes after the rename
land on the old inode and never on the new file). The commit must be refused as stale
(exit 3) with the file untouched by us, or land the exact post-image. Modes:
  pwrite: overwrite 8 random bytes at random offsets in a loop
  trunc:  truncate to half, then write the tail back, in a loop
  extend: append 64 KiB, then truncate back, in a loop
Usage: concurrent_writer.py UE WORK ROUNDS
"""
import hashlib, json, os, random, subprocess, sys, threading, time

UE, WORK, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])
ROOT = os.path.join(WORK, "ws")
os.makedirs(ROOT, exist_ok=True)
rng = random.Random(7)
P = os.path.join(ROOT, "big.txt")


def ue(*a):
    r = subprocess.run([UE, "--root", ROOT, "--json", *a], capture_output=True)
    j = None
    for line in r.stdout.decode().splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            pass
    return r.returncode, j, r.stderr.decode()


def h(b):
    return hashlib.sha256(b).hexdigest()[:16]


if not os.path.isdir(os.path.join(ROOT, ".ultra-edit")):
    subprocess.run([UE, "--root", ROOT, "init"], check=True, capture_output=True)
base = b"".join(b"L%08d some text of the line %d\n" % (i, i * 7) for i in range(1_200_000))
results = {}
findings = []
for rnd in range(ROUNDS):
    mode = ["pwrite", "trunc", "extend"][rnd % 3]
    verb = "commit" if rnd % 2 == 0 else "rollback"
    with open(P, "wb") as f:
        f.write(base)
    line = rng.randint(1, 1_200_000)
    plan = {"edits": [{"op": "replace_lines", "path": "big.txt", "start": line, "end": line,
                       "content": "CHANGED %d\n" % rnd}]}
    pf = os.path.join(WORK, "p.json")
    json.dump(plan, open(pf, "w"))
    rc, j, err = ue("preview", "--plan", pf)
    assert rc == 0, err
    tx = j["tx"]
    post = base.splitlines(True)
    post[line - 1] = b"CHANGED %d\n" % rnd
    post = b"".join(post)
    pre_for_verb, want = base, post
    if verb == "rollback":
        rc, j, err = ue("commit", str(tx))
        assert rc == 0, err
        pre_for_verb, want = post, base
    fd = os.open(P, os.O_RDWR)
    stop = threading.Event()
    wrote = [0]

    def writer():
        time.sleep(rng.uniform(0, 0.3))
        n = len(pre_for_verb)
        while not stop.is_set():
            if mode == "pwrite":
                os.pwrite(fd, b"WRITER!!", rng.randint(0, n - 9))
            elif mode == "trunc":
                os.ftruncate(fd, n // 2)
                os.pwrite(fd, pre_for_verb[n // 2:], n // 2)
            else:
                os.pwrite(fd, b"x" * 65536, n)
                os.ftruncate(fd, n)
            wrote[0] += 1
            time.sleep(0.002)

    t = threading.Thread(target=writer)
    t.start()
    rc, j, err = ue(verb, str(tx))
    stop.set()
    t.join()
    os.close(fd)
    now = open(P, "rb").read()
    temps = [n for n in os.listdir(ROOT) if n.startswith(".ue-")]
    rcv, jv, _ = ue("journal", "verify")
    outcome = "landed" if rc == 0 else f"rc{rc}"
    key = (verb, mode, outcome)
    results[key] = results.get(key, 0) + 1
    bad = None
    if rc == 0 and h(now) != h(want):
        bad = f"landed but the file is not the exact image: {h(now)} want {h(want)} (len {len(now)} vs {len(want)})"
    if rc != 0 and rc != 3:
        bad = f"rc {rc}: {err[-400:]}"
    if rc == 3 and h(now) == h(want):
        bad = "refused as stale but the file holds our image"
    if temps:
        bad = f"temps left {temps}"
    if rcv != 0:
        bad = f"verify rc {rcv} {jv}"
    print(rnd, verb, mode, "writes", wrote[0], outcome, "BAD: " + bad if bad else "ok", flush=True)
    if bad:
        findings.append((rnd, verb, mode, bad))
    # settle for the next round: the tx is open (commit refused) or committed
print("results", results)
print("findings", findings)
sys.exit(1 if findings else 0)
