#!/usr/bin/env python3
"""`oomfix retry aitk:NAME` with real processes: a real database file (made as the UI's ORM makes
it), a fake of the UI's worker (fake_worker.py) running the stand-in trainer, and oomfix
following the worker through the database. Prints TAP.

Scenarios: a FLUX job whose model load runs out of memory on a 20 GB card (2 tries: low_vram), a
Z-Image job on 12 GB (3 tries), a run that fails for another reason (65), the probe (the stop
flag ends the run), max tries (69), Ctrl-C while queued (the job stays queued, said so) and while
running (the run goes on), and a job already running (75)."""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import uidb  # noqa: E402

OOMFIX = os.environ["OOMFIX"]
TESTS = os.environ.get("TESTS_DIR", os.path.dirname(HERE))
JOBS = os.path.join(TESTS, "retry", "jobs")
WORKER = os.path.join(HERE, "fake_worker.py")

n = 0
failed = 0
tries = []


def ok(cond, what, detail=""):
    global n, failed
    n += 1
    if cond:
        print("ok %d - %s" % (n, what))
    else:
        failed += 1
        print("not ok %d - %s" % (n, what))
        for line in str(detail).splitlines()[-40:]:
            print("#   " + line)
    sys.stdout.flush()


try:
    import yaml
except ImportError:
    print("1..0 # SKIP python3 with PyYAML (python3-yaml) is needed")
    sys.exit(0)


def config_of(yaml_file, name, tf):
    """A scenario job (tests/retry/jobs) as the UI keeps it: compact JSON, its name, the paths."""
    with open(os.path.join(JOBS, yaml_file), encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    cfg["config"]["name"] = name
    p = cfg["config"]["process"][0]
    p["training_folder"] = tf
    p["sqlite_db_path"] = "./aitk_db.db"
    cfg.setdefault("meta", {"name": "[name]", "version": "1.0"})
    return json.dumps(cfg, separators=(",", ":"), ensure_ascii=False)


class Setup:
    def __init__(self, yaml_file, name, worker_args, mode="wal", status="error"):
        self.root = tempfile.mkdtemp(prefix="oomfix-retry-ui-")
        self.name = name
        tf = os.path.join(self.root, "output")
        self.db = uidb.create(self.root, mode, [{
            "name": name, "status": status, "step": 0, "total_steps": 40,
            "job_config": config_of(yaml_file, name, tf)}])
        self.run_dir = os.path.join(tf, name)
        self.worker = None
        if worker_args is not None:
            self.start_worker(worker_args)

    def start_worker(self, args):
        self.worker = subprocess.Popen([sys.executable, WORKER, self.root, "--seconds", "200"] +
                                       args, stdin=subprocess.DEVNULL)

    def retry(self, *args, timeout=120):
        p = subprocess.run([OOMFIX, "retry", "--aitk", self.root] + list(args) +
                           ["aitk:" + self.name], capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def row(self):
        return uidb.row(self.db, self.name)

    def config(self):
        return json.loads(self.row()["job_config"])

    def close(self):
        if self.worker:
            self.worker.terminate()
            try:
                self.worker.wait(20)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
        subprocess.run(["rm", "-rf", self.root])


def fixes_of(err):
    return re.findall(r"^oomfix retry: try \d+: .* → ([a-z_]+):", err, re.M)


def scenario(title, yaml_file, vram, want, extra=(), mode="wal"):
    s = Setup(yaml_file, "ui " + yaml_file.split(".")[0], ["--vram", str(vram)] + list(extra),
              mode=mode)
    try:
        rc, out, err = s.retry()
        got = fixes_of(err)
        k = len(want) + 1
        tries.append("%s: %d tries: %s" % (title, k, " ".join(want) or "none"))
        good = rc == 0 and got == want and ("try %d: the run finished: the job fits" % k) in err
        ok(good, "%s: %d tries, fixes %s" % (title, k, want), "exit %d, fixes %s\n%s" % (rc, got, err))
        r = s.row()
        ok(r["status"] == "completed", title + ": the job ends completed in the database", r["status"])
        cfg = s.config()
        p = cfg["config"]["process"][0]
        ok(cfg["config"]["name"] == s.name and p["sqlite_db_path"] == "./aitk_db.db" and
           r["ut"] == "integer", title + ": name, sqlite_db_path and integer updated_at kept", r)
        # the worker moved each earlier run's log aside; each try's copy is complete
        logs = sorted(os.listdir(os.path.join(s.run_dir, "logs"))) if want else []
        ok(logs == ["%d_log.txt" % i for i in range(len(want))],
           title + ": the earlier runs are in logs/<n>_log.txt", logs)
        copies = os.path.join(s.run_dir, "job_config.json.oomfix-runs")
        same = True
        for i in range(len(want)):
            with open(os.path.join(copies, "%d.log" % (i + 1)), "rb") as a, \
                    open(os.path.join(s.run_dir, "logs", "%d_log.txt" % i), "rb") as b:
                same &= a.read() == b.read()
        with open(os.path.join(copies, "%d.log" % k), "rb") as a, \
                open(os.path.join(s.run_dir, "log.txt"), "rb") as b:
            same &= a.read() == b.read()
        ok(same, title + ": each try's copy is that run's whole log")
        if want:
            with open(os.path.join(copies, "1.log"), encoding="utf-8") as f:
                first = f.read()
            ok("Traceback (most recent call last)" in first and "OutOfMemoryError" in first,
               title + ": the traceback printed after the status turned error was read too",
               first[-600:])
        if want:
            with open(os.path.join(s.run_dir, "job_config.json.oomfix.md"), encoding="utf-8") as f:
                journal = f.read()
            ok(all(("oomfix retry, try %d (" % i) in journal for i in range(1, k)) and
               os.path.exists(os.path.join(s.run_dir, "job_config.json~")),
               title + ": a journal entry per try, the previous job_config kept", journal)
        # E4 (review 4): the trail tells the true history: each fix after the run it answered
        # (logs/<i>_log.txt, as the worker moved them), nothing after the run that fitted
        p = subprocess.run([OOMFIX, "runs", "--json", "--aitk", s.root, "aitk:" + s.name],
                           capture_output=True, timeout=60)
        runs = json.loads(p.stdout) if p.returncode == 0 else []
        got_trail = [[f for e in r.get("saved_after", []) for f in e["fixes"]] for r in runs]
        want_trail = [[]] + [[want[i]] for i in reversed(range(len(want)))]
        ok(got_trail == want_trail and [r.get("run") for r in runs] ==
           [None] + list(reversed(range(len(want)))),
           title + ": E4: oomfix runs puts each fix after the run it answered",
           "%s\n%s" % (got_trail, p.stdout.decode("utf-8", "replace")[:2000]))
        return s, err
    except Exception as ex:  # a hang or a crash fails the test, not the script
        ok(False, title, repr(ex))
        return s, ""


s, err = scenario("FLUX load on 20 GB", "flux_load.yaml", 20, ["low_vram"])
if err:
    ok(s.config()["config"]["process"][0]["model"].get("low_vram") is True,
       "FLUX: low_vram is on in the database row", s.row()["job_config"])
s.close()
s, err = scenario("Z-Image on 12 GB", "zimage_small_card.yaml", 12,
                  ["low_vram", "gradient_checkpointing"])
s.close()
s, err = scenario("a job that fits already", "zimage_small_card.yaml", 24, [])
s.close()

# ---- the exits that stop the loop ---------------------------------------------------------------
s, err = scenario("FLUX load on 20 GB, rollback journal", "flux_load.yaml", 20, ["low_vram"],
                  mode="delete")
s.close()

s = Setup("conservative.yaml", "ui notoom", ["--fail", "python"])
before = s.row()["job_config"]
rc, out, err = s.retry()
ok(rc == 65 and "not for GPU memory" in err and s.row()["job_config"] == before,
   "a run that fails for another reason: 65, the job untouched", "exit %d\n%s" % (rc, err))
s.close()

s = Setup("zimage_every_phase.yaml", "ui maxtries", ["--vram", "12"])
rc, out, err = s.retry("--max-tries", "2")
ok(rc == 69 and "stopping after 2 tries (the next fix would be lighter_sampling)" in err and
   len(fixes_of(err)) == 1, "--max-tries 2 on a job that needs 4: 69 after 2 runs, one change",
   "exit %d\n%s" % (rc, err))
s.close()

# ---- probe: the stop flag ends the run ------------------------------------------------------------
s = Setup("zimage_small_card.yaml", "ui probe", ["--vram", "12", "--delay", "0.05"])
rc, out, err = s.retry("--probe", "5")
r = s.row()
# 5 past the failure at 8 is step 13, but the probe also wants a sampling round during training:
# the first is at step 20 (the baseline sample does not count). The log is read at the follow
# pace (100 ms), so the pass may be seen a step or two after it.
m = re.search(r"try 3: passed the probe at step (\d+): the job fits", err)
ok(rc == 0 and m and 20 <= int(m.group(1)) <= 30 and "Not seen: steps" in err,
   "--probe 5: the third try passes at the first sampling round during training (step 20) or just after",
   "exit %d\n%s" % (rc, err))
ok(r["status"] == "stopped" and r["stop"] == 1,
   "--probe: the run was ended by the stop flag (status stopped, stop = 1)", r)
try:
    with open(os.path.join(s.run_dir, "log.txt"), encoding="utf-8") as f:
        log = f.read()
except OSError as ex:
    log = repr(ex)
ok("Job stopped" in log and "40/40" not in log, "--probe: the trainer stopped before the end",
   log[-400:])
s.close()

# ---- Ctrl-C -------------------------------------------------------------------------------------
s = Setup("conservative.yaml", "ui queued", None)
p = subprocess.Popen([OOMFIX, "retry", "--aitk", s.root, "aitk:ui queued"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     env=dict(os.environ, OOMFIX_QUEUE_HINT_MS="150"))
for _ in range(100):
    if s.row()["status"] == "queued":
        break
    time.sleep(0.05)
time.sleep(0.3)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=20)
err = err.decode("utf-8", "replace")
ok(p.returncode == 130 and "still queued (oomfix queued it)" in err and
   s.row()["status"] == "queued", "Ctrl-C while queued: 130, the job stays queued and it is said",
   "exit %d\n%s" % (p.returncode, err))
ok(err.count("still queued after 0 s: the web UI's worker takes queued jobs") == 1,
   "no worker takes the job: what it needs is said, once",
   "exit %d\n%s" % (p.returncode, err))
s.close()

s = Setup("conservative.yaml", "ui queued before", None, status="queued")
p = subprocess.Popen([OOMFIX, "retry", "--aitk", s.root, "aitk:ui queued before"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
time.sleep(0.5)
qpos = s.row()["queue_position"]
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=20)
err = err.decode("utf-8", "replace")
ok(p.returncode == 130 and "is queued already" in err and "still queued, as it was before" in err
   and qpos == 0 and s.row()["status"] == "queued",
   "a job queued already is followed, not queued again (its place kept); Ctrl-C says so",
   "exit %d, queue_position %s\n%s" % (p.returncode, qpos, err))
s.close()

s = Setup("conservative.yaml", "ui running", ["--delay", "0.2"])
p = subprocess.Popen([OOMFIX, "retry", "--aitk", s.root, "aitk:ui running"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
for _ in range(200):
    if (s.row()["step"] or 0) >= 2:
        break
    time.sleep(0.05)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=20)
err = err.decode("utf-8", "replace")
r = s.row()
ok(p.returncode == 130 and "goes on running in the web UI" in err and r["status"] == "running" and
   r["stop"] == 0, "Ctrl-C while running: 130, the UI's run goes on (no stop, no signal)",
   "exit %d, %s\n%s" % (p.returncode, r["status"], err))
time.sleep(1.5)
ok(s.row()["step"] > r["step"], "... and its steps still advance", s.row())
s.close()

# the run goes back to the queue (its return_to_queue flag): the next run is the try
s = Setup("conservative.yaml", "ui requeue", ["--delay", "0.1"])
p = subprocess.Popen([OOMFIX, "retry", "--aitk", s.root, "aitk:ui requeue"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
for _ in range(200):
    if (s.row()["step"] or 0) >= 3:
        break
    time.sleep(0.05)
con = sqlite3.connect(s.db, timeout=30)
con.execute("UPDATE Job SET return_to_queue = 1 WHERE name = 'ui requeue'")
con.commit()
con.close()
try:
    out, err = p.communicate(timeout=90)
except subprocess.TimeoutExpired:
    p.kill()
    out, err = p.communicate()
err = err.decode("utf-8", "replace")
copy = os.path.join(s.run_dir, "job_config.json.oomfix-runs", "1.log")
try:
    with open(copy, "rb") as a, open(os.path.join(s.run_dir, "log.txt"), "rb") as b:
        same = a.read() == b.read()
except OSError:
    same = False
ok(p.returncode == 0 and "went back to the queue" in err and
   "try 1: the run finished: the job fits" in err and same and
   os.path.exists(os.path.join(s.run_dir, "logs", "0_log.txt")),
   "a run returned to the queue: its next run is followed, and its log is the try's",
   "exit %d\n%s" % (p.returncode, err))
s.close()

s = Setup("conservative.yaml", "ui busy", None, status="running")
rc, out, err = s.retry()
ok(rc == 75 and "is running in the web UI" in err and s.row()["status"] == "running",
   "a job already running: 75, nothing queued", "exit %d\n%s" % (rc, err))
p = subprocess.run([OOMFIX, "retry", "--aitk", s.root, "aitk:ui busy", "--", "true"],
                   capture_output=True)
ok(p.returncode == 64 and b"takes no CMD" in p.stderr, "aitk:NAME with a CMD: 64", p.stderr)
s.close()

# ---- diagnose --follow of a web UI job: its status too, and the next run's log ------------------
def follow_case(as_json):
    s = Setup("conservative.yaml", "ui follow", None)
    try:
        os.makedirs(s.run_dir, exist_ok=True)
        with open(os.path.join(s.run_dir, "log.txt"), "w") as f:  # the last run: it ended
            subprocess.run([sys.executable, os.path.join(TESTS, "standin", "aitk_standin.py"),
                            "--vram", "24", os.path.join(JOBS, "conservative.yaml")], stdout=f,
                           stderr=subprocess.STDOUT)
        rc, _, err = subprocess.run([OOMFIX, "queue", "--aitk", s.root, "aitk:ui follow"],
                                    capture_output=True).returncode, None, None
        args = [OOMFIX, "diagnose", "--aitk", s.root, "--follow", "--job", "aitk:ui follow"]
        if as_json:
            args.insert(2, "--json")
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.6)  # it must wait while the job is queued, though the old log has ended
        alive = p.poll() is None
        s.start_worker(["--delay", "0.05"])
        out, err = p.communicate(timeout=60)
        return s, alive, p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    except Exception as ex:
        return s, False, -1, "", repr(ex)


s, alive, rc, out, err = follow_case(False)
want = ["web UI status: queued", "web UI status: running",
        "The log was replaced or truncated: reading it again.", "web UI status: completed"]
pos = [out.find(w) for w in want]
ok(alive and rc == 0 and all(p >= 0 for p in pos) and pos == sorted(pos),
   "diagnose --follow aitk:NAME: queued, running, the new run's log, completed; then it ends",
   "alive %s, exit %d\n%s%s" % (alive, rc, out, err))
s.close()
s, alive, rc, out, err = follow_case(True)
objs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
ok(rc == 0 and objs and objs[0].get("status") == "queued" and objs[-1].get("status") == "completed",
   "diagnose --follow --json aitk:NAME: each object carries the job's status", out + err)
s.close()

for t in tries:
    print("# " + t)
print("1..%d" % n)
sys.exit(1 if failed else 0)
