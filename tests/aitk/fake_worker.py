#!/usr/bin/env python3
"""A small fake of the AI Toolkit web UI's worker, for `oomfix retry aitk:NAME` tests.

It behaves as ui/cron/worker.ts and ui/cron/actions/startJob.ts do (ostris/ai-toolkit), with the
stand-in trainer (tests/standin/aitk_standin.py) in place of run.py, and writes the job's row as
the trainer (extensions_built_in/sd_trainer/DiffusionTrainer.py) does:

* every ~50 ms it takes the next `queued` job (lowest queue_position) and sets it `running`
  (stop and return_to_queue cleared, info "Starting job...");
* in <TRAINING_FOLDER>/<name>/ it moves an existing log.txt to logs/<n>_log.txt (the lowest free
  n from 0), writes the job_config to .job_config.json (indented, sqlite_db_path overwritten),
  and runs the stand-in on it with stdout and stderr into log.txt; the pid goes into the row and
  pid.txt;
* while the run goes on it writes `step` from the training bar in the log (BEGIN IMMEDIATE ...
  COMMIT with a 30 s timeout, as the trainer does) and polls `stop`: when it is set, the status
  becomes `stopped` ("Job stopped") and the run gets SIGINT (the trainer raises in maybe_stop);
  `return_to_queue` likewise, with the status `queued` ("Job queued");
* at the end: `completed` ("Training completed") after exit 0, else `error` with the exception
  text as info, step reset to 0. As in the trainer, the status `error` is written when run.py
  prints "Error running job: E" and before its traceback, which the stand-in prints half a second
  later (the trainer's output goes through the fake to log.txt for that).

    fake_worker.py ROOT [--seconds N] [STAND-IN OPTIONS...]

It runs until ROOT/stop_fake_worker exists, SIGTERM, or N seconds (default 300); a run still
going on is then stopped with SIGTERM. The stand-in options (--vram, --delay, --fail, ...) are
passed to every run.
"""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "..", "standin", "aitk_standin.py")
BAR = re.compile(r"(\d+)/(\d+) \[")

done = False


def on_term(sig, frame):
    global done
    done = True


def connect(db):
    con = sqlite3.connect(db, timeout=30.0)
    con.isolation_level = None  # autocommit, explicit transactions as the trainer does
    return con


def write(db, sql, args):
    """One write as the trainer makes it: BEGIN IMMEDIATE, the UPDATE, COMMIT."""
    con = connect(db)
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(sql, args)
        finally:
            con.execute("COMMIT")
    finally:
        con.close()


def read(db, sql, args=()):
    con = connect(db)
    try:
        return con.execute(sql, args).fetchone()
    finally:
        con.close()


def training_folder(db, root):
    r = read(db, "SELECT value FROM Settings WHERE key = 'TRAINING_FOLDER'")
    return r[0] if r and r[0] else os.path.join(root, "output")


def take_next(db):
    """The next queued job, set running in the same transaction (the worker's startJob)."""
    con = connect(db)
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            r = con.execute("SELECT id, name, job_config FROM Job WHERE status = 'queued' "
                            "ORDER BY queue_position, rowid LIMIT 1").fetchone()
            if r:
                con.execute("UPDATE Job SET status = 'running', stop = 0, return_to_queue = 0, "
                            "info = 'Starting job...' WHERE id = ?", (r[0],))
        finally:
            con.execute("COMMIT")
        return r
    finally:
        con.close()


def last_step(log_path, name):
    try:
        with open(log_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 8192))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    step = None
    for seg in re.split(r"[\r\n]", tail):
        if seg.startswith(name + ":"):
            m = BAR.search(seg)
            if m:
                step = int(m.group(1))
    return step


def error_text(log_path):
    """str(e) of the exception that ended the run: the text after the last 'XError: '."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "Job process terminated with exit code 1."
    for line in reversed(lines):
        m = re.match(r"^[\w.]*(Error|Exception): (.*)$", line)
        if m:
            return m.group(2)
    return "Job process terminated with exit code 1."


def run_job(db, root, job_id, name, job_config, standin_args):
    folder = os.path.join(training_folder(db, root), name)
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "log.txt")
    if os.path.exists(log_path):
        logs = os.path.join(folder, "logs")
        os.makedirs(logs, exist_ok=True)
        num = 0
        while os.path.exists(os.path.join(logs, "%d_log.txt" % num)):
            num += 1
        os.rename(log_path, os.path.join(logs, "%d_log.txt" % num))
    cfg = json.loads(job_config)
    cfg["config"]["process"][0]["sqlite_db_path"] = os.path.join(root, "aitk_db.db")
    cfg_path = os.path.join(folder, ".job_config.json")
    with open(cfg_path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
    logf = open(log_path, "ab", buffering=0)
    proc = subprocess.Popen([sys.executable, STANDIN] + standin_args + [cfg_path],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, cwd=root,
                            env=dict(os.environ, AITK_JOB_ID=job_id, IS_AI_TOOLKIT_UI="1",
                                     PYTHONUNBUFFERED="1", STANDIN_ON_ERROR_SECONDS="0.5"))
    errored = []
    # The trainer's output reaches log.txt through here so that the row is written in the
    # trainer's order: run.py prints "Error running job: E", on_error writes status 'error' with
    # str(E) while the stand-in pauses (STANDIN_ON_ERROR_SECONDS), and only then does the
    # traceback come. A follower that stops reading at the status misses it.
    def copy_out():
        # raw chunks, not lines: tqdm's bars are joined by \r and must reach the log as they come
        fd = proc.stdout.fileno()
        pending = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            logf.write(chunk)
            if errored:
                continue
            pending = (pending + chunk)[-65536:]
            k = pending.find(b"Error running job: ")
            if k >= 0 and b"\n" in pending[k:]:
                line = pending[k:pending.index(b"\n", k)]
                msg = line[len(b"Error running job: "):].decode("utf-8", "replace").strip()
                write(db, "UPDATE Job SET status = 'error', info = ?, step = 0 WHERE id = ?",
                      (msg, job_id))
                errored.append(msg)
        logf.close()
    copier = threading.Thread(target=copy_out, daemon=True)
    copier.start()
    write(db, "UPDATE Job SET pid = ? WHERE id = ?", (proc.pid, job_id))
    with open(os.path.join(folder, "pid.txt"), "w") as f:
        f.write(str(proc.pid))
    written = None
    stopped = False
    while proc.poll() is None:
        time.sleep(0.05)
        step = last_step(log_path, name)
        if step is not None and step != written:
            write(db, "UPDATE Job SET step = ? WHERE id = ?", (step, job_id))
            written = step
        flags = read(db, "SELECT stop, return_to_queue FROM Job WHERE id = ?", (job_id,))
        if not stopped and flags[0] == 1:
            # maybe_stop(): the status first, then the exception that ends the run
            write(db, "UPDATE Job SET status = 'stopped', info = 'Job stopped' WHERE id = ?",
                  (job_id,))
            stopped = True
            proc.send_signal(signal.SIGINT)
        elif not stopped and flags[1] == 1:
            # maybe_stop() with return_to_queue: queued again, then the same exception
            write(db, "UPDATE Job SET status = 'queued', info = 'Job queued' WHERE id = ?",
                  (job_id,))
            stopped = True
            proc.send_signal(signal.SIGINT)
        if done:
            proc.terminate()
    copier.join()
    if stopped:
        write(db, "UPDATE Job SET step = 0 WHERE id = ?", (job_id,))
    elif errored:
        pass
    elif proc.returncode == 0:
        write(db, "UPDATE Job SET status = 'completed', info = 'Training completed' WHERE id = ?",
              (job_id,))
    else:
        write(db, "UPDATE Job SET status = 'error', info = ?, step = 0 WHERE id = ?",
              (error_text(log_path), job_id))


def main(argv):
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    root = argv[0]
    rest = argv[1:]
    seconds = 300.0
    if len(rest) >= 2 and rest[0] == "--seconds":
        seconds = float(rest[1])
        rest = rest[2:]
    db = os.path.join(root, "aitk_db.db")
    signal.signal(signal.SIGTERM, on_term)
    until = time.time() + seconds
    while not done and time.time() < until and not os.path.exists(
            os.path.join(root, "stop_fake_worker")):
        r = take_next(db)
        if r:
            run_job(db, root, r[0], r[1], r[2], rest)
        else:
            time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
