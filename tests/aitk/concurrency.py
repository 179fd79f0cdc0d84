#!/usr/bin/env python3
"""oomfix saving a web UI job while the trainer writes progress into the same row.

A second process updates the row as the trainer does (its own connection with a 30 s timeout,
BEGIN IMMEDIATE; UPDATE Job SET step=?; COMMIT, every few ms) while oomfix saves the job again
and again. Every one of the writer's updates must survive (the final step is its last value and
every value it read back was its own) and every save must land (each exits 0, the config holds
the last value, the journal has one entry per save). Then a process killed mid-save: the
database stays intact and the row holds one whole version. Prints TAP and the counts."""
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uidb  # noqa: E402

OOMFIX = os.environ["OOMFIX"]
SAVES = int(os.environ.get("AITK_SAVES", "200"))
n = 0
failed = 0


def ok(cond, what, detail=""):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    if not cond:
        failed += 1
        for line in str(detail).splitlines()[:30]:
            print("#   " + line)


WRITER = r"""
import os, sqlite3, sys, time, random
db, name, stop = sys.argv[1], sys.argv[2], sys.argv[3]
step = 0
mismatch = 0
while not os.path.exists(stop):
    step += 1
    with sqlite3.connect(db, timeout=30.0) as conn:
        conn.isolation_level = None
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            cur.execute("UPDATE Job SET step = ? WHERE name = ?", (str(step), name))
        finally:
            cur.execute("COMMIT")
        got = cur.execute("SELECT step FROM Job WHERE name = ?", (name,)).fetchone()[0]
        if got != step:
            mismatch += 1
    conn.close()
    time.sleep(random.uniform(0.001, 0.004))
print(step, mismatch, flush=True)
"""


def concurrency(mode):
    root = tempfile.mkdtemp(prefix="oomfix-conc-")
    db = uidb.create(root, mode, [{"name": "busy job", "status": "stopped", "step": 0}])
    stop = os.path.join(root, "stop")
    w = subprocess.Popen([sys.executable, "-c", WRITER, db, "busy job", stop],
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.05)
    codes = []
    errs = []
    t0 = time.time()
    for i in range(SAVES):
        p = subprocess.run([OOMFIX, "--aitk", root, "set", "-i", "aitk:busy job",
                            "config.process[0].train.steps=%d" % (1000 + i)],
                           capture_output=True, text=True)
        codes.append(p.returncode)
        if p.returncode:
            errs.append(p.stderr)
    elapsed = time.time() - t0
    open(stop, "w").close()
    out, _ = w.communicate(timeout=60)
    updates, mismatch = (int(x) for x in out.split())
    r = uidb.row(db, "busy job")
    cfg = json.loads(r["job_config"])
    journal = open(os.path.join(root, "output", "busy job", "job_config.json.oomfix.md"),
                   encoding="utf-8").read()
    entries = journal.count("\n## ")
    print("# %s: the writer made %d updates, oomfix made %d saves (%d landed) in %.1f s"
          % (mode, updates, len(codes), codes.count(0), elapsed))
    ok(codes.count(0) == SAVES, "%s: every one of %d saves landed" % (mode, SAVES), "\n".join(errs))
    ok(cfg["config"]["process"][0]["train"]["steps"] == 1000 + SAVES - 1 and entries == SAVES,
       "%s: the config holds the last save, one journal entry per save" % mode,
       "steps=%s entries=%d" % (cfg["config"]["process"][0]["train"]["steps"], entries))
    ok(updates > SAVES and mismatch == 0 and r["step"] == updates,
       "%s: none of the writer's %d updates was lost" % (mode, updates),
       "final step %s, mismatches %d" % (r["step"], mismatch))
    shutil.rmtree(root)


def kill_mid_save(mode):
    root = tempfile.mkdtemp(prefix="oomfix-kill-")
    db = uidb.create(root, mode, [{"name": "k", "status": "error", "step": 3}])
    versions = {uidb.row(db, "k")["job_config"]}
    killed_alive = 0
    rounds = 30
    bad = []
    for i in range(rounds):
        p = subprocess.Popen([OOMFIX, "--aitk", root, "set", "-i", "aitk:k",
                              "config.process[0].train.steps=%d" % (5000 + i)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(random.uniform(0.0, 0.012))
        if p.poll() is None:
            killed_alive += 1
        p.send_signal(signal.SIGKILL)
        p.wait()
        con = sqlite3.connect(db, timeout=30)
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        cfg = con.execute("SELECT job_config FROM Job WHERE name='k'").fetchone()[0]
        nrows = con.execute("SELECT COUNT(*) FROM Job").fetchone()[0]
        con.close()
        try:
            steps = json.loads(cfg)["config"]["process"][0]["train"]["steps"]
        except ValueError:
            steps = None
        if integrity != "ok" or nrows != 1 or steps not in [3000] + list(range(5000, 5000 + i + 1)):
            bad.append("round %d: integrity %s rows %d steps %s" % (i, integrity, nrows, steps))
    print("# %s: %d of %d oomfix processes were killed while still running" %
          (mode, killed_alive, rounds))
    ok(not bad and killed_alive > 0,
       "%s: killed mid-save, the database is intact and holds one whole version" % mode,
       "\n".join(bad))
    shutil.rmtree(root)


for m in ("wal", "delete"):
    concurrency(m)
    kill_mid_save(m)
print("1..%d" % n)
sys.exit(1 if failed else 0)
