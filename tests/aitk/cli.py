#!/usr/bin/env python3
"""CLI tests of web UI jobs (aitk:NAME) against real database files, in WAL and rollback-journal
mode: the happy paths, and one test per fault in the issue. Prints TAP."""
import json
import re
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uidb  # noqa: E402
from tap import ok, end  # noqa: E402

OOMFIX = os.environ["OOMFIX"]
SRC = os.environ["SOURCE_ROOT"]
LOG = os.path.join(SRC, "examples", "train.log")
ODD = "it's \"ünï\" job 1"  # spaces, quotes and non-ASCII


def run(*args, cwd=None, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([OOMFIX] + list(args), cwd=cwd, env=e, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def fresh(mode="wal", jobs=None, log_for=("my lora",)):
    root = tempfile.mkdtemp(prefix="oomfix-aitk-")
    jobs = jobs if jobs is not None else [
        {"name": "my lora", "status": "error", "step": 6,
         "info": "CUDA out of memory. Tried to allocate 2.00 GiB"},
        {"name": ODD, "status": "stopped", "step": 10},
        {"name": "runner", "status": "running", "step": 50},
        {"name": "finished", "status": "completed", "step": 3000},
    ]
    db = uidb.create(root, mode, jobs)
    for name in log_for:
        d = os.path.join(root, "output", name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(LOG, os.path.join(d, "log.txt"))
    return root, db


def backup_of(root, name):
    return os.path.join(root, "output", name, "job_config.json~")


def happy(mode):
    root, db = fresh(mode, log_for=("my lora", ODD))
    before = uidb.row(db, "my lora")
    rc, out, err = run("--aitk", root, "jobs")
    ok(rc == 0 and out.splitlines()[1].startswith("my lora") and "B batch_size" in out,
       "%s: jobs lists the failed job first with its verdict" % mode, out + err)
    rc, out, err = run("jobs", "--json", cwd=os.path.join(root, "output"))
    js = json.loads(out) if rc == 0 else []
    first = js[0] if js else {}
    ok(rc == 0 and first.get("name") == "my lora" and first.get("timing") == "first_steps" and
       first.get("timing_letter") == "B" and first.get("oom") is True and
       first.get("first_fix") == "batch_size" and first.get("log", "").endswith("my lora/log.txt")
       and first.get("updated_at", "").endswith("Z") and set(first) == {
           "name", "status", "step", "total_steps", "updated_at", "info", "log", "oom", "timing",
           "timing_letter", "first_fix"},
       "%s: jobs --json from a folder below the database" % mode, out + err)
    # one vocabulary (SPEC §3.6): the timing by its name, the letter its own field; oom is null
    # for a job without a log (nothing is known), never false
    nolog = [r for r in js if r.get("log") is None]
    ok(rc == 0 and nolog and all(r["oom"] is None and r["timing"] is None and
                                 r["timing_letter"] is None for r in nolog),
       "%s: jobs --json: oom null without a log" % mode, out + err)
    rc, out, err = run("--aitk", root, "jobs", "--names")
    ok(rc == 0 and sorted(out.splitlines()) == sorted(["my lora", ODD, "runner", "finished"]),
       "%s: jobs --names" % mode, out + err)
    rc, out, err = run("--aitk", root, "diagnose", "--job", "aitk:my lora")
    ok(rc == 0 and "step 6" in out, "%s: diagnose --job aitk: without LOG uses log.txt" % mode,
       out + err)
    rc, out, err = run("--aitk", root, "fix", "--diff", "aitk:my lora", "batch_size")
    ok(rc == 0 and '-          "batch_size": 4,' in out and '+          "batch_size": 1,' in out,
       "%s: fix --diff shows an indented diff of the one-line config" % mode, out + err)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:my lora", "next")
    after = uidb.row(db, "my lora")
    old, new = before["job_config"], after["job_config"]
    # the only difference is the value 4 → 1: every other byte is the same, still one line
    i = 0
    while i < len(old) and old[i] == new[i]:
        i += 1
    ok(rc == 0 and "\n" not in new and old[:i] + "4" + old[i + 1:] == old and
       new == old[:i] + "1" + old[i + 1:] and list(json.loads(new)) == list(json.loads(old)),
       "%s: fix -i writes compact JSON, key order and untouched bytes kept" % mode,
       err + "\n" + new)
    ok(after["ut"] == "integer" and after["updated_at"] > before["updated_at"] and
       after["name"] == before["name"] and after["id"] == before["id"] and
       after["status"] == before["status"] and after["step"] == before["step"],
       "%s: updated_at is integer ms, other columns untouched" % mode, str(after))
    bak = backup_of(root, "my lora")
    ok(os.path.exists(bak) and open(bak, encoding="utf-8").read() == old,
       "%s: the previous job_config is kept beside the log" % mode)
    jr = os.path.join(root, "output", "my lora", "job_config.json.oomfix.md")
    ok(os.path.exists(jr) and "batch_size`: 4 → 1" in open(jr, encoding="utf-8").read(),
       "%s: the journal is written beside the log" % mode)
    rc, out, err = run("--aitk", root, "get", "aitk:my lora", "config.process[0].train.batch_size")
    ok(rc == 0 and out == "1\n", "%s: get reads the saved value" % mode, out + err)
    rc, out, err = run("--aitk", root, "restore", "aitk:my lora")
    ok(rc == 0 and uidb.row(db, "my lora")["job_config"] == old,
       "%s: restore puts the previous version back" % mode, err)
    # the odd name: spaces, quotes, non-ASCII — in the log path too
    rc, out, err = run("--aitk", root, "set", "-i", "aitk:" + ODD,
                       "config.process[0].train.lr=2e-4")
    cfg = json.loads(uidb.row(db, ODD)["job_config"])
    ok(rc == 0 and cfg["config"]["process"][0]["train"]["lr"] == 2e-4 and
       os.path.exists(backup_of(root, ODD)), "%s: set -i on a job named %s" % (mode, ODD), err)
    rc, out, err = run("--aitk", root, "plan", "aitk:" + ODD)
    ok(rc == 0 and "Verdict:" in out, "%s: plan of the odd name uses its log" % mode, out + err)
    # queue
    rc, out, err = run("--aitk", root, "queue", "aitk:my lora")
    r = uidb.row(db, "my lora")
    con = sqlite3.connect(db)
    q = con.execute("SELECT is_running FROM Queue WHERE gpu_ids='0'").fetchall()
    maxpos = con.execute("SELECT MAX(queue_position) FROM Job WHERE name != 'my lora'").fetchone()[0]
    con.close()
    ok(rc == 0 and r["status"] == "queued" and r["info"] == "Job queued" and r["stop"] == 0 and
       r["queue_position"] == maxpos + 1000 and q == [(1,)],
       "%s: queue does what the start button does" % mode, str(r) + err)
    # queued again: it keeps its place, even behind a job queued after it, and nothing is written
    # (updated_at and the GPU queue's flag are set to values a write would change)
    rc, out, err = run("--aitk", root, "queue", "aitk:" + ODD)
    con = sqlite3.connect(db)
    con.execute("UPDATE Job SET updated_at = 1000 WHERE name = 'my lora'")
    con.execute("UPDATE Queue SET is_running = 0")
    con.commit()
    con.close()
    first = uidb.row(db, "my lora")
    rc, out, err = run("--aitk", root, "queue", "aitk:my lora")
    again = uidb.row(db, "my lora")
    con = sqlite3.connect(db)
    q = con.execute("SELECT is_running FROM Queue").fetchall()
    con.close()
    ok(rc == 0 and again == first and again["updated_at"] == 1000 and
       again["queue_position"] < uidb.row(db, ODD)["queue_position"] and q == [(0,)],
       "%s: queueing a queued job writes nothing and keeps its place" % mode,
       "%s\n%s\n%s" % (first, again, err))
    ok(out == "" and "aitk:my lora: already queued" in err and "queued (it was" not in err,
       "%s: queue says the job was queued already" % mode, out + err)
    rc, out, err = run("--aitk", root, "queue", "aitk:runner")
    ok(rc == 75 and "stop it first" in err and uidb.row(db, "runner")["status"] == "running",
       "%s: queue refuses a running job" % mode, err)
    shutil.rmtree(root)


def faults():
    root, db = fresh()
    empty = tempfile.mkdtemp(prefix="oomfix-nodb-")
    rc, out, err = run("jobs", cwd=empty)
    ok(rc == 66 and empty in err and "--aitk" in err, "no aitk_db.db: says where it looked", err)
    rc, out, err = run("--aitk", empty, "get", "aitk:x", "config.name")
    ok(rc == 66 and "no aitk_db.db" in err, "--aitk folder without a database", err)
    # E23 (review 4): --aitk on a folder without the database names the nearest one that has it
    # (above it, or right inside it) rather than telling the user to use --aitk
    parent = tempfile.mkdtemp(prefix="oomfix-e23-")
    ait = os.path.join(parent, "ai-toolkit")
    uidb.create(ait, "wal", [{"name": "a", "status": "stopped"}])
    os.makedirs(os.path.join(ait, "output", "a"))
    os.makedirs(os.path.join(parent, "other"))
    for where, word, what in ((os.path.join(ait, "output", "a"), "above", "a job's run folder"),
                              (parent, "inside", "the folder that holds ai-toolkit")):
        rc, out, err = run("--aitk", where, "jobs")
        ok(rc == 66 and "a folder %s it has one: --aitk %s" % (word, ait) in err,
           "E23: --aitk on %s names the ai-toolkit folder %s it" % (what, word), err)
    rc, out, err = run("--aitk", os.path.join(parent, "other"), "jobs")
    ok(rc == 66 and "is it the ai-toolkit folder?" in err and "give the" not in err,
       "E23: --aitk on a folder with none near asks whether it is the ai-toolkit folder", err)
    shutil.rmtree(parent)
    with open(os.path.join(empty, "aitk_db.db"), "w") as f:
        f.write("this is not a database, just text\n" * 100)
    rc, out, err = run("--aitk", empty, "jobs")
    ok(rc == 65 and "not an SQLite database" in err, "a file that is not SQLite", err)
    os.unlink(os.path.join(empty, "aitk_db.db"))
    con = sqlite3.connect(os.path.join(empty, "aitk_db.db"))
    con.execute("CREATE TABLE Other (x)")
    con.commit()
    con.close()
    rc, out, err = run("--aitk", empty, "jobs")
    ok(rc == 65 and "no Job table" in err, "a database without a Job table", err)
    shutil.rmtree(empty)

    # an older column set: open what is there
    old = tempfile.mkdtemp(prefix="oomfix-old-")
    con = sqlite3.connect(os.path.join(old, "aitk_db.db"))
    con.execute('CREATE TABLE "Job" ("id" TEXT NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, '
                '"gpu_ids" TEXT NOT NULL, "job_config" TEXT NOT NULL, '
                '"status" TEXT NOT NULL DEFAULT \'stopped\')')
    con.execute("INSERT INTO Job VALUES ('1', 'old', '0', ?, 'error')",
                (uidb.job_config("old", old + "/output"),))
    con.commit()
    con.close()
    rc, out, err = run("--aitk", old, "jobs", "--json")
    ok(rc == 0 and json.loads(out)[0]["step"] is None and json.loads(out)[0]["updated_at"] is None,
       "an older column set lists what is there", out + err)
    rc, out, err = run("--aitk", old, "set", "-i", "aitk:old", "config.process[0].train.steps=100")
    con = sqlite3.connect(os.path.join(old, "aitk_db.db"))
    saved = con.execute("SELECT job_config FROM Job WHERE name='old'").fetchone()[0]
    con.close()
    ok(rc == 0 and '"steps":100' in saved,
       "an older column set saves (no updated_at to set)", err)
    shutil.rmtree(old)

    rc, out, err = run("--aitk", root, "get", "aitk:my_lora", "config.name")
    ok(rc == 66 and "'my lora'" in err and "close names" in err, "no such job lists close names", err)

    con = sqlite3.connect(db)
    uidb.add_job(con, {"name": "broken", "job_config": '{"job":"extension","config":{"name":'},
                 os.path.join(root, "output"))
    uidb.add_job(con, {"name": "notajob", "job_config": '{"hello":"world"}'},
                 os.path.join(root, "output"))
    con.commit()
    con.close()
    rc, out, err = run("--aitk", root, "get", "aitk:broken", "config")
    ok(rc == 65 and "not valid JSON" in err and ":1:" in err, "job_config that is not JSON", err)
    rc, out, err = run("--aitk", root, "plan", "aitk:notajob")
    ok(rc == 65, "job_config that is not a job", err)
    rc, out, err = run("--aitk", root, "jobs")
    ok(rc == 0 and "broken" in out, "jobs still lists a job with a broken config", out + err)

    rc, out, err = run("--aitk", root, "diagnose", "--job", "aitk:finished")
    ok(rc == 66 and "run folder does not exist" in err and os.path.join("output", "finished") in err,
       "a job whose log folder does not exist", err)

    # locked longer than the timeout: exit 75, nothing written
    before = uidb.row(db, "my lora")
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sqlite3,sys,time\n"
                               "c=sqlite3.connect(sys.argv[1],isolation_level=None)\n"
                               "c.execute('BEGIN IMMEDIATE')\n"
                               "print('locked',flush=True)\n"
                               "time.sleep(5)\n"
                               "c.execute('COMMIT')\n", db], stdout=subprocess.PIPE)
    holder.stdout.readline()
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:my lora", "batch_size",
                       env={"OOMFIX_DB_BUSY_MS": "700"})
    holder.kill()
    holder.wait()
    ok(rc == 75 and "locked" in err and uidb.row(db, "my lora") == before and
       not os.path.exists(backup_of(root, "my lora")),
       "a database locked longer than the timeout: 75, nothing written", err)

    # protected fields
    for path in ("config.name=other", "config.process[0].sqlite_db_path=/x.db",
                 "config.process[0].training_folder=/elsewhere"):
        rc, out, err = run("--aitk", root, "set", "-i", "aitk:my lora", path)
        ok(rc == 65 and "cannot be changed" in err and uidb.row(db, "my lora") == before,
           "protected field refused: " + path.split("=")[0], err)

    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:runner", "batch_size")
    ok(rc == 75 and "stop it first" in err, "saving a running job is refused", err)

    # updated_at held as text keeps its text form
    con = sqlite3.connect(db)
    con.execute("UPDATE Job SET updated_at='2026-08-21 13:31:02' WHERE name='my lora'")
    con.commit()
    con.close()
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:my lora", "batch_size")
    r = uidb.row(db, "my lora")
    ok(rc == 0 and r["ut"] == "text" and len(r["updated_at"]) == 19 and r["updated_at"][10] == " "
       and r["updated_at"] > "2026-08-21 13:31:02",
       "updated_at held as text is written as text", str(r["updated_at"]) + err)
    shutil.rmtree(root)


def runs():
    root, db = fresh()
    d = os.path.join(root, "output", "my lora", "logs")
    os.makedirs(d)
    with open(os.path.join(d, "0_log.txt"), "w") as f:
        f.write("Loading Flux model\nLoading transformer\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of "
                "memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB\n")
    shutil.copy(LOG, os.path.join(d, "10_log.txt"))  # numbers sort as numbers: 10 after 0
    rc, out, err = run("--aitk", root, "runs", "--json", "aitk:my lora")
    js = json.loads(out) if rc == 0 else []
    ok(rc == 0 and [os.path.basename(r["log"]) for r in js] == ["log.txt", "10_log.txt", "0_log.txt"]
       and [r["timing"] for r in js] == ["first_steps", "first_steps", "before_training"]
       and [r["timing_letter"] for r in js] == ["B", "B", "A"],
       "runs lists the trail of tries newest first, each with its verdict", out + err)
    rc, out, err = run("--aitk", root, "runs", "aitk:finished")
    ok(rc == 0 and "no run logs yet" in out, "runs of a job that never ran", out + err)
    shutil.rmtree(root)


def journal_entry(when, fixes, changes, note=None):
    import time as _t
    stamp = _t.strftime("%Y-%m-%dT%H:%M:%S+00:00", _t.gmtime(when))
    out = "\n## %s\n\n%s\n\n" % (stamp, ("Fixes: " + ", ".join(fixes)) if fixes else "Manual edits")
    if note:
        out += note + "\n\n"
    return out + "".join("- `%s`: %s\n" % c for c in changes)


def runs_history_D3():
    """D3/D10: runs is a history: each run with the fix saved after it (from the journal), its
    phase and its time, numbered like the files; not the fix the job would get now."""
    root, db = fresh()
    run_dir = os.path.join(root, "output", "my lora")
    d = os.path.join(run_dir, "logs")
    os.makedirs(d)
    load = os.path.join(d, "0_log.txt")
    with open(load, "w") as f:
        f.write("Loading Flux model\nLoading transformer\nTraceback (most recent call last):\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 "
                "has a total capacity of 23.64 GiB\n")
    train = os.path.join(d, "1_log.txt")
    shutil.copy(LOG, train)
    cur = os.path.join(run_dir, "log.txt")
    t0 = 1764700000
    os.utime(load, (t0, t0))
    os.utime(train, (t0 + 100, t0 + 100))
    os.utime(cur, (t0 + 200, t0 + 200))
    with open(os.path.join(run_dir, "job_config.json.oomfix.md"), "w") as f:
        f.write("# Change journal for job_config.json\n")
        f.write(journal_entry(t0 + 10, ["low_vram"], [("config.process[0].model.low_vram", "false → true")]))
        f.write(journal_entry(t0 + 110, ["gradient_checkpointing"],
                              [("config.process[0].train.gradient_checkpointing", "false → true")]))
        f.write(journal_entry(t0 + 120, [], [("config.process[0].train.lr", "0.0001 → 0.0002")]))
    rc, out, err = run("--aitk", root, "runs", "--json", "aitk:my lora")
    js = json.loads(out) if rc == 0 else []
    ok(rc == 0 and [r.get("run") for r in js] == [None, 1, 0]
       and [[e["fixes"] for e in r.get("saved_after", [])] for r in js]
       == [[], [["gradient_checkpointing"], []], [["low_vram"]]]
       and js[2].get("phase") == "model_load" and js[1].get("phase") == "training"
       and js[2].get("written_at", "").startswith("2025-12-02T18:"),
       "D3: runs --json gives each run the fixes saved after it, its phase and time", out + err)
    rc, out, err = run("--aitk", root, "runs", "aitk:my lora")
    ok(rc == 0 and "run 0, log written" in out and "then saved: low_vram" in out
       and "then saved: gradient_checkpointing, then manual edits" in out
       and out.index("current run") < out.index("run 1,") < out.index("run 0,")
       and "disable_sampling" not in out,
       "D3/D10: runs prints the history newest first, numbered like logs/<n>_log.txt", out + err)
    # E19: "ended", not "finished", for a run that died: run.py's summary follows a failure too
    ok(rc == 0 and all("finished" not in r and "ended" in r and r.get("stopped") is False
                       for r in js),
       "E19: runs --json says ended and stopped, not finished", out + err)
    # E19: one journal entry before the oldest run is one entry, not "1 entries"
    jr = open(os.path.join(run_dir, "job_config.json.oomfix.md"), encoding="utf-8").read()
    with open(os.path.join(run_dir, "job_config.json.oomfix.md"), "w") as f:
        f.write("# Change journal for job_config.json\n")
        f.write(journal_entry(t0 - 50, ["batch_size"], [("config.process[0].train.batch_size", "2 → 1")]))
        f.write(jr.split("\n", 1)[1])
    rc, out, err = run("--aitk", root, "runs", "aitk:my lora")
    ok(rc == 0 and "(1 earlier journal entry comes before the oldest run)" in out,
       "E19: one earlier journal entry is said in the singular", out + err)
    shutil.rmtree(root)


def review3():
    """The web UI job defects of the third review: where a save went (D2), no "applied" before
    a refusal (D12), --names in the table's order (D14), oom in jobs --json (D15), a name
    without aitk: (D16), and what restore put back."""
    root, db = fresh()
    run_dir = os.path.join(root, "output", "my lora")
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:my lora", "batch_size")
    ok(rc == 0 and "Saved into the web UI database %s (job 'my lora')" % db in err
       and "previous version in %s/job_config.json~" % run_dir in err
       and "change journal in %s/job_config.json.oomfix.md" % run_dir in err
       and "Saved aitk:my lora" not in err,
       "D2: a web UI job's save names the database and the job, the backup and journal paths", err)
    jr = open(os.path.join(run_dir, "job_config.json.oomfix.md"), encoding="utf-8").read()
    ok(jr.startswith("# Change journal for aitk:my lora\n"),
       "D2: the journal is headed with the job, not job_config.json", jr[:80])
    rc, out, err = run("--aitk", root, "restore", "aitk:my lora")
    ok(rc == 0 and "batch_size: 1 → 4" in err and "undoes this restore" in err,
       "restore prints the values it put back and that a second restore undoes it", err)
    rc, out, err = run("--aitk", root, "set", "-i", "aitk:my lora", "config.process[0].train.lr=2e-4")
    ok(rc == 0 and "Saved into the web UI database %s (job 'my lora')" % db in err,
       "D2: set -i says where the save went too", err)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:runner", "batch_size")
    ok(rc == 75 and "applied" not in out + err and "stop it first" in err,
       "D12: fix -i on a running job says nothing was applied before refusing", out + err)
    # the database holds the finished job first; the table puts the failed one first
    root2, db2 = fresh(jobs=[{"name": "finished", "status": "completed", "step": 3000},
                             {"name": "my lora", "status": "error", "step": 6}])
    rc, out, err = run("--aitk", root2, "jobs", "--names")
    rc2, out2, err2 = run("--aitk", root2, "jobs", "--json")
    order = [j["name"] for j in json.loads(out2)] if rc2 == 0 else []
    ok(rc == 0 and out.splitlines() == order and order == ["my lora", "finished"],
       "D14: jobs --names lists in the table's order", out + out2 + err + err2)
    shutil.rmtree(root2)
    rc2, out2, err2 = run("--aitk", root, "jobs", "--json")
    by = {j["name"]: j for j in json.loads(out2)} if rc2 == 0 else {}
    ok(by.get("my lora", {}).get("oom") is True and "oom" in by.get("runner", {"x": 1})
       and by["runner"]["oom"] is None,
       "D15: jobs --json says oom: true, false or null (no log)", out2)
    rc, out, err = run("--aitk", root, "queue", "my lora")
    ok(rc == 64 and "did you mean 'aitk:my lora'?" in err and uidb.row(db, "my lora")["status"] == "error",
       "D16: queue of a name without aitk: suggests aitk:NAME", err)
    rc, out, err = run("--aitk", root, "runs", "my lora")
    rc2, out2, err2 = run("--aitk", root, "plan", "my lora")
    ok(rc == 66 and "did you mean 'aitk:my lora'?" in err and rc2 == 66
       and "did you mean 'aitk:my lora'?" in err2,
       "D16: runs and plan of a name without aitk: suggest aitk:NAME too", err + err2)
    shutil.rmtree(root)


def json_file():
    d = tempfile.mkdtemp(prefix="oomfix-json-")
    p = os.path.join(d, "job.json")
    with open(p, "w") as f:
        f.write(uidb.job_config("j", "output"))
    rc, out, err = run("fix", "--diff", p, "batch_size")
    ok(rc == 0 and '+          "batch_size": 1,' in out, "a .json job file gets the indented diff",
       out + err)
    orig = open(p).read()
    rc, out, err = run("fix", "-i", p, "batch_size")
    fixed = open(p).read()
    ok(rc == 0 and fixed != orig and "\n" not in fixed and '"batch_size":1,' in fixed,
       "a .json job file saved in place stays compact JSON", err)
    rc, out, err = run("restore", p)
    ok(rc == 0 and open(p).read() == orig and open(p + "~").read() == fixed,
       "restore of a file puts JOB~ back and keeps the replaced version", err)
    rc, out, err = run("restore", os.path.join(d, "missing.yaml"))
    ok(rc == 66, "restore without a job", err)
    shutil.rmtree(d)


def no_gc(name, root):
    """A job without gradient checkpointing: its B verdict's first fix has the longest id."""
    cfg = json.loads(uidb.job_config(name, os.path.join(root, "output")))
    cfg["config"]["process"][0]["train"]["gradient_checkpointing"] = False
    return json.dumps(cfg, separators=(",", ":"))


def jobs_table():
    """D4: `oomfix jobs` cuts neither the names (two jobs that differ at their end read
    differently) nor the verdicts; the running job comes before the queued ones."""
    root = tempfile.mkdtemp(prefix="oomfix-aitk-")
    v1, v2 = "portrait_flux_lora_rank32_v1", "portrait_flux_lora_rank32_v2"
    uidb.create(root, "wal", [
        {"name": v1, "status": "error", "step": 6, "job_config": no_gc(v1, root)},
        {"name": v2, "status": "error", "step": 6},
        {"name": "waiting", "status": "queued"},
        {"name": "runner", "status": "running"},
    ])
    for name in (v1, v2):
        os.makedirs(os.path.join(root, "output", name))
        shutil.copy(LOG, os.path.join(root, "output", name, "log.txt"))
    rc, out, err = run("--aitk", root, "jobs")
    lines = out.splitlines()
    ok(rc == 0 and any(l.startswith(v1 + " ") for l in lines) and
       any(l.startswith(v2 + " ") for l in lines), "D4: jobs shows the whole names", out + err)
    ok(any(l.startswith(v1 + " ") and re.search(r" B gradient_checkpointing( |$)", l)
           for l in lines),
       "D4: jobs does not cut the verdict", out + err)
    head = lines[0] if lines else ""
    ok(all(l.index(" error ") == head.index(" STATUS ") for l in lines if " error " in l),
       "D4: the columns stay aligned with the wider names", out + err)
    names = [l.split()[0] for l in lines[1:]]
    ok(names.index("runner") < names.index("waiting"),
       "jobs lists the running job before the queued one", out + err)
    shutil.rmtree(root)


def survived():
    """One decision (SPEC §3.4): a run that survived its OOM skips and finished has no first
    change in the job list either, as `plan` and `a` say nothing must change."""
    root, db = fresh(jobs=[{"name": "skipped", "status": "completed", "step": 3000},
                           {"name": "my lora", "status": "error", "step": 6,
                            "info": "CUDA out of memory. Tried to allocate 2.00 GiB"}],
                     log_for=("my lora",))
    d = os.path.join(root, "output", "skipped")
    os.makedirs(d)
    shutil.copy(os.path.join(SRC, "tests", "retry", "logs", "bucket_skips.log"),
                os.path.join(d, "log.txt"))
    rc, out, err = run("--aitk", root, "jobs", "--json")
    js = {r["name"]: r for r in json.loads(out)} if rc == 0 else {}
    sk, ml = js.get("skipped", {}), js.get("my lora", {})
    ok(rc == 0 and sk.get("oom") is True and sk.get("first_fix") is None and
       ml.get("first_fix") == "batch_size",
       "jobs --json: a survived run's first_fix is null, a failed one's its fix", out + err)
    rc, out, err = run("--aitk", root, "jobs")
    row = [l for l in out.splitlines() if l.startswith("skipped ")]
    ok(rc == 0 and row and "drop_largest_bucket" not in row[0] and " survived" in row[0],
       "jobs: a survived run shows no first change, and says it survived", out + err)
    shutil.rmtree(root)


def trail_after_rename_E4():
    """E4 (review 4): a fix saved after a web UI run stays with that run when the worker's next
    start moves its log.txt to logs/0_log.txt, whatever the times say."""
    root, db = fresh()
    run_dir = os.path.join(root, "output", "my lora")
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:my lora", "batch_size")
    ok(rc == 0, "E4: fix -i on the failed web UI job", err)
    jr = open(os.path.join(run_dir, "job_config.json.oomfix.md"), encoding="utf-8").read()
    ok("<!-- oomfix run log: " in jr, "E4: the journal entry names its run's log by its identity", jr)
    # the worker's next start, as startJob.ts does it, then a run that fits, all in one second
    os.makedirs(os.path.join(run_dir, "logs"), exist_ok=True)
    os.rename(os.path.join(run_dir, "log.txt"), os.path.join(run_dir, "logs", "0_log.txt"))
    with open(os.path.join(run_dir, "log.txt"), "w") as f:
        f.write("Loading Flux model\nmy lora: 100%|##########| 3000/3000 [1:00:00<00:00]\n")
    t = time.time()
    for n in ("logs/0_log.txt", "log.txt"):
        os.utime(os.path.join(run_dir, n), (t, t))
    rc, out, err = run("--aitk", root, "runs", "--json", "aitk:my lora")
    js = json.loads(out) if rc == 0 else []
    got = [(r.get("run"), [f for e in r.get("saved_after", []) for f in e["fixes"]]) for r in js]
    ok(got == [(None, []), (0, ["batch_size"])],
       "E4: after the worker moved the log, the fix stays with the run it followed", "%s\n%s" % (got, out + err))
    shutil.rmtree(root)


def all_done(name, root):
    """A job whose every training-step fix is in place: checkpointing, batch 1, one 512 bucket,
    low_vram."""
    cfg = json.loads(uidb.job_config(name, os.path.join(root, "output")))
    p = cfg["config"]["process"][0]
    p["train"]["gradient_checkpointing"] = True
    p["train"]["batch_size"] = 1
    for d in p["datasets"]:
        d["resolution"] = [512]
        d.pop("batch_size", None)
    p["model"]["low_vram"] = True
    return json.dumps(cfg, separators=(",", ":"))


def nothing_left_E16():
    """E16 (review 4): a failure with nothing left to change reads "nothing left" in the job
    list, not a bare "-"."""
    root = tempfile.mkdtemp(prefix="oomfix-aitk-")
    uidb.create(root, "wal", [{"name": "done all", "status": "error", "step": 6,
                               "job_config": all_done("done all", root)}])
    os.makedirs(os.path.join(root, "output", "done all"))
    shutil.copy(LOG, os.path.join(root, "output", "done all", "log.txt"))
    rc, out, err = run("--aitk", root, "jobs")
    row = [l for l in out.splitlines() if l.startswith("done all ")]
    ok(rc == 0 and row and " nothing left" in row[0] and " - " not in row[0],
       "E16: jobs says 'nothing left' where no change is left", out + err)
    rc, out, err = run("--aitk", root, "jobs", "--json")
    js = json.loads(out) if rc == 0 else []
    ok(rc == 0 and js and js[0].get("first_fix") is None,
       "E16: ... and its JSON first_fix stays null", out + err)
    shutil.rmtree(root)


happy("wal")
happy("delete")
survived()
faults()
runs()
runs_history_D3()
review3()
json_file()
jobs_table()
nothing_left_E16()
trail_after_rename_E4()
sys.exit(end())
