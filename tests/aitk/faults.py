#!/usr/bin/env python3
"""Database faults, each against a real aitk_db.db made as the web UI makes it (uidb.py): a
truncated and a damaged file, the databases of an older and a newer UI, a read-only file and a
read-only folder, a writer holding the lock past the busy timeout, a full disk during a save, a
job_config that is not JSON or not an object, and job names with quotes, newlines and escape
sequences. Every case checks the exit status (sysexits), a message that names the database and
the job (with no raw control character), `PRAGMA integrity_check` still ok, and the row
unchanged when the save did not complete. Prints TAP; the '# |' lines are a table of what each
case printed. Needs root for the full disk (a small tmpfs) and, when run as root, setpriv to be
another user for the read-only cases; without them those cases are skipped with the reason."""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uidb  # noqa: E402
from tap import ok, skip, end  # noqa: E402

OOMFIX = os.environ["OOMFIX"]
SRC = os.environ["SOURCE_ROOT"]
LOG = os.path.join(SRC, "examples", "train.log")
JOB = "my lora"
NOBODY = 65534

table = []


def run(*args, env=None, user=None, oomfix=OOMFIX):
    e = dict(os.environ)
    e.update(env or {})
    cmd = [oomfix] + list(args)
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    p = subprocess.run(cmd, env=e, capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def fresh(mode="wal", jobs=None, root=None, training_folder=None):
    root = root or tempfile.mkdtemp(prefix="oomfix-fault-")
    jobs = jobs if jobs is not None else (
        [{"name": JOB, "status": "error", "step": 6}] +
        [{"name": "job %d" % i, "status": "stopped"} for i in range(40)])
    db = uidb.create(root, mode, jobs, training_folder=training_folder)
    tf = training_folder or os.path.join(root, "output")
    for j in jobs:
        d = os.path.join(tf, j["name"])
        os.makedirs(d, exist_ok=True)
        shutil.copy(LOG, os.path.join(d, "log.txt"))
    return root, db


def integrity(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        con.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def clean(s):
    """No raw control character but the newline that ends a line."""
    return not any((ord(c) < 32 and c not in "\n") or 0x7f <= ord(c) <= 0x9f for c in s)


def check(case, rc, err, want_rc, want, db, job_shown, row_before=None, row_after=None,
          whole=True):
    """The common checks: exit status, what the message says, where and about which job."""
    table.append((case, rc, err.strip().replace("\n", " / ")))
    ok(rc == want_rc, "%s: exit %d" % (case, want_rc), "got %d: %s" % (rc, err))
    named = ("'%s'" % job_shown) in err or ("aitk:%s:" % job_shown) in err
    ok(want in err and db in err and named and clean(err),
       "%s: the message names the database and the job" % case, err)
    if whole:
        ok(integrity(db), "%s: PRAGMA integrity_check still ok" % case)
    if row_before is not None:
        ok(row_after == row_before, "%s: the row is unchanged" % case,
           "%s\n%s" % (row_before, row_after))


def backup(root, name):
    return os.path.join(root, "output", name, "job_config.json~")


# ---- damaged files ----------------------------------------------------------------------------

def truncated():
    root, db = fresh("delete")
    size = os.path.getsize(db)
    with open(db, "r+b") as f:
        f.truncate(size // 2)
    before = digest(db)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
    check("truncated aitk_db.db", rc, err, 65, "damaged", db, JOB, whole=False)
    ok(digest(db) == before and not os.path.exists(backup(root, JOB)),
       "truncated aitk_db.db: the file is left as it was")
    shutil.rmtree(root)


def corrupt():
    root, db = fresh("delete")
    con = sqlite3.connect(db)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    rootpage = con.execute("SELECT rootpage FROM sqlite_master WHERE name='Job'").fetchone()[0]
    con.close()
    with open(db, "r+b") as f:
        f.seek((rootpage - 1) * page)
        f.write(b"\x0d\xff\xff\xff" + b"\xa5" * (page - 4))  # a leaf page that lies
    before = digest(db)
    rc, out, err = run("--aitk", root, "get", "aitk:" + JOB, "config.name")
    check("corrupt Job page", rc, err, 65, "damaged", db, JOB, whole=False)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
    ok(rc == 65 and digest(db) == before and not os.path.exists(backup(root, JOB)),
       "corrupt Job page: a save writes nothing", err)
    shutil.rmtree(root)


# ---- other versions of the UI -----------------------------------------------------------------

def older_ui():
    # before queue_position, stop, return_to_queue, pid, info...; no Settings nor Queue table
    root = tempfile.mkdtemp(prefix="oomfix-fault-")
    db = os.path.join(root, "aitk_db.db")
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "Job" ("id" TEXT NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, '
                '"gpu_ids" TEXT NOT NULL, "job_config" TEXT NOT NULL, '
                '"status" TEXT NOT NULL DEFAULT \'stopped\', "updated_at" DATETIME NOT NULL)')
    con.execute("INSERT INTO Job VALUES ('1', ?, '0', ?, 'error', 1000)",
                (JOB, uidb.job_config(JOB, root + "/output")))
    con.commit()
    con.close()
    os.makedirs(os.path.join(root, "output", JOB))
    shutil.copy(LOG, os.path.join(root, "output", JOB, "log.txt"))
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
    r = uidb.row(db, JOB)
    ok(rc == 0 and '"batch_size":1,' in r["job_config"] and r["updated_at"] > 1000 and
       integrity(db), "older UI (fewer columns, no Settings): a fix is saved", err)
    rc, out, err = run("--aitk", root, "queue", "aitk:" + JOB)
    table.append(("older UI: queue without queue_position/stop/Queue", rc,
                  (err or out).strip()))
    r = uidb.row(db, JOB)
    ok(rc == 0 and r["status"] == "queued" and integrity(db),
       "older UI: queue sets the status the older worker reads", err)
    shutil.rmtree(root)

    # a Job table without job_config: not a database oomfix can use
    root = tempfile.mkdtemp(prefix="oomfix-fault-")
    db = os.path.join(root, "aitk_db.db")
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "Job" ("id" TEXT PRIMARY KEY, "name" TEXT, "config" TEXT)')
    con.execute("INSERT INTO Job VALUES ('1', ?, '{}')", (JOB,))
    con.commit()
    con.close()
    rc, out, err = run("--aitk", root, "get", "aitk:" + JOB, "config.name")
    check("older UI: Job without job_config", rc, err, 65, "job_config column", db, JOB)
    shutil.rmtree(root)

    # no Job table at all
    root = tempfile.mkdtemp(prefix="oomfix-fault-")
    db = os.path.join(root, "aitk_db.db")
    con = sqlite3.connect(db)
    con.execute('CREATE TABLE "Settings" ("id" INTEGER PRIMARY KEY, "key" TEXT, "value" TEXT)')
    con.commit()
    con.close()
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
    check("missing Job table", rc, err, 65, "no Job table", db, JOB)
    shutil.rmtree(root)


def newer_ui():
    root, db = fresh()
    con = sqlite3.connect(db)
    con.execute('ALTER TABLE "Job" ADD COLUMN "priority" INTEGER NOT NULL DEFAULT 7')
    con.execute('ALTER TABLE "Job" ADD COLUMN "notes" TEXT')
    con.execute("UPDATE Job SET notes = 'keep me' WHERE name = ?", (JOB,))
    con.execute('CREATE TABLE "Dataset" ("id" TEXT PRIMARY KEY, "path" TEXT)')
    con.commit()
    con.close()
    before = uidb.row(db, JOB)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
    after = uidb.row(db, JOB)
    ok(rc == 0 and after["priority"] == 7 and after["notes"] == "keep me" and
       after["job_config"] != before["job_config"] and integrity(db),
       "newer UI (extra columns, extra table): saved, the columns it does not know untouched",
       err)
    rc, out, err = run("--aitk", root, "queue", "aitk:" + JOB)
    ok(rc == 0 and uidb.row(db, JOB)["notes"] == "keep me", "newer UI: queue", err)
    shutil.rmtree(root)


# ---- permissions ------------------------------------------------------------------------------

def as_other_user():
    """(uid, binary) to run oomfix without write permission, or (None, reason)."""
    if os.geteuid() != 0:
        return os.geteuid(), OOMFIX
    if not shutil.which("setpriv"):
        return None, "running as root and setpriv is missing: root may write anything"
    return NOBODY, None


def share_with(root, uid, binary):
    """Lets uid read everything under root and run a copy of oomfix from there."""
    for d, dirs, files in os.walk(root):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)
    if binary is None:
        binary = os.path.join(root, "oomfix-bin")
        shutil.copy(OOMFIX, binary)
        os.chmod(binary, 0o755)
    return binary


def read_only_file():
    uid, binary = as_other_user()
    if uid is None:
        skip("read-only database file", binary)
        return
    root, db = fresh()
    binary = share_with(root, uid, binary)
    os.chmod(root, 0o777)  # the folder is writable (the -wal and -shm can be made)
    os.chmod(os.path.join(root, "output", JOB), 0o777)
    os.chmod(db, 0o444)
    before = uidb.row(db, JOB)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size", user=uid,
                       oomfix=binary)
    check("read-only aitk_db.db", rc, err, 73, "cannot write the database", db, JOB, before,
          uidb.row(db, JOB))
    ok(not os.path.exists(backup(root, JOB)), "read-only aitk_db.db: no backup left behind")
    shutil.rmtree(root)


def read_only_folder(mode):
    uid, binary = as_other_user()
    if uid is None:
        skip("read-only folder (%s)" % mode, binary)
        return
    root, db = fresh(mode)
    binary = share_with(root, uid, binary)
    os.chmod(db, 0o666)  # the file may be written, the folder holding it may not
    os.chmod(root, 0o555)
    os.chmod(os.path.join(root, "output", JOB), 0o777)
    before = uidb.row(db, JOB)
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size", user=uid,
                       oomfix=binary)
    check("read-only folder, %s journal" % mode, rc, err, 73, "cannot write the database", db,
          JOB, before, uidb.row(db, JOB))
    if mode == "wal":
        ok("-shm" in err, "read-only folder, WAL: the message says WAL needs its -shm", err)
    os.chmod(root, 0o755)
    shutil.rmtree(root)


# ---- a writer holding the lock ------------------------------------------------------------------

def locked():
    root, db = fresh()
    before = uidb.row(db, JOB)
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sqlite3,sys,time\n"
                               "c=sqlite3.connect(sys.argv[1],isolation_level=None)\n"
                               "c.execute('BEGIN IMMEDIATE')\n"
                               "c.execute(\"UPDATE Job SET step=step WHERE name='job 1'\")\n"
                               "print('locked',flush=True)\n"
                               "time.sleep(30)\n", db], stdout=subprocess.PIPE)
    holder.stdout.readline()
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size",
                       env={"OOMFIX_DB_BUSY_MS": "500"})
    rc2, out2, err2 = run("--aitk", root, "queue", "aitk:" + JOB, env={"OOMFIX_DB_BUSY_MS": "500"})
    holder.kill()
    holder.wait()
    check("locked past the busy timeout (fix)", rc, err, 75, "locked", db, JOB, before,
          uidb.row(db, JOB))
    check("locked past the busy timeout (queue)", rc2, err2, 75, "locked", db, JOB)
    ok(not os.path.exists(backup(root, JOB)), "locked: no backup left behind")
    shutil.rmtree(root)


# ---- a full disk --------------------------------------------------------------------------------

def fill(folder):
    """Fills the file system of folder; returns the filler's path."""
    p = os.path.join(folder, "filler")
    try:
        with open(p, "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    return p


def full_disk():
    if os.geteuid() != 0:
        skip("full disk during a save", "mounting a small tmpfs needs root")
        return
    mnt = tempfile.mkdtemp(prefix="oomfix-full-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt],
                       capture_output=True)
    if p.returncode != 0:
        skip("full disk during a save", "cannot mount a tmpfs here: " + p.stderr.decode().strip())
        os.rmdir(mnt)
        return
    try:
        # the database on the full disk, the run folders (backup, journal) elsewhere: the
        # database write itself meets the full disk
        tf = tempfile.mkdtemp(prefix="oomfix-full-out-")
        few = [{"name": JOB, "status": "error"}, {"name": "other", "status": "stopped"}]
        root, db = fresh("wal", few, root=os.path.join(mnt, "aitk"), training_folder=tf)
        reader = sqlite3.connect(db)  # the UI's open connection keeps -wal and -shm in place
        reader.execute("SELECT count(*) FROM Job").fetchone()
        before = uidb.row(db, JOB)
        filler = fill(mnt)
        rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
        after = uidb.row(db, JOB)
        os.unlink(filler)
        reader.close()
        check("full disk during a save (the database)", rc, err, 74, "disk is full", db, JOB,
              before, after)
        shutil.rmtree(tf)
        shutil.rmtree(root)

        # everything on the full disk: keeping the previous version fails first
        root, db = fresh("delete", few, root=os.path.join(mnt, "aitk2"))
        before = uidb.row(db, JOB)
        filler = fill(mnt)
        rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + JOB, "batch_size")
        after = uidb.row(db, JOB)
        os.unlink(filler)
        table.append(("full disk during a save (the backup)", rc, err.strip()))
        ok(rc in (73, 74) and db in err and "'%s'" % JOB in err and clean(err),
           "full disk during a save (the backup): 73/74 naming the database and the job", err)
        ok(integrity(db) and after == before, "full disk (the backup): row unchanged, db ok")
        shutil.rmtree(root)
    finally:
        subprocess.run(["umount", "-l", mnt])
        os.rmdir(mnt)


# ---- job_config and names -----------------------------------------------------------------------

def bad_configs():
    cases = [("not JSON", '{"job":"extension","config":{"name":', "not valid JSON"),
             ("an array", '[{"job":"extension"}]', "not a JSON object"),
             ("a string", '"job"', "not a JSON object"),
             ("empty", "", "not valid JSON")]
    jobs = [{"name": "bad %d" % i, "job_config": c[1] or " "} for i, c in enumerate(cases)]
    root, db = fresh(jobs=jobs + [{"name": JOB}])
    con = sqlite3.connect(db)
    con.execute("UPDATE Job SET job_config = '' WHERE name = 'bad 3'")
    con.commit()
    con.close()
    for i, (what, cfg, want) in enumerate(cases):
        name = "bad %d" % i
        before = uidb.row(db, name)
        rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + name, "batch_size")
        check("job_config %s" % what, rc, err, 65, want, db, name, before,
              uidb.row(db, name))
    shutil.rmtree(root)


ODD = ["say \"hi\" it's", "two\nlines", "red\x1b[31mX\x1b[0m\x07bell", "osc\x1b]52;c;aGk=\x07"]


def shown(name):
    """A name as messages show it (text_visible): controls as ^X."""
    out = ""
    for c in name:
        o = ord(c)
        out += "^" + chr(o + 64) if o < 32 else c
    return out


def odd_names():
    jobs = [{"name": nm, "status": "stopped"} for nm in ODD]
    jobs.append({"name": "run\x1b[2Jning", "status": "running"})
    root, db = fresh(jobs=jobs)
    for nm in ODD:
        rc, out, err = run("--aitk", root, "get", "aitk:" + nm, "config.process[0].train.batch_size")
        ok(rc == 0 and out == "4\n", "name %r: get reads its row" % nm, out + err)
        rc, out, err = run("--aitk", root, "fix", "-i", "aitk:" + nm, "batch_size")
        r = uidb.row(db, nm)
        ok(rc == 0 and '"batch_size":1,' in r["job_config"] and r["name"] == nm and
           integrity(db), "name %r: a fix is saved to its row, the name untouched" % nm, err)
    before = uidb.row(db, "run\x1b[2Jning")
    rc, out, err = run("--aitk", root, "fix", "-i", "aitk:run\x1b[2Jning", "batch_size")
    check("a running job named with an escape sequence", rc, err, 75, "stop it first", db,
          "run^[[2Jning", before, uidb.row(db, "run\x1b[2Jning"))
    rc, out, err = run("--aitk", root, "get", "aitk:no\x1b]0;pwned\x07such", "config.name")
    check("no job named with an escape sequence", rc, err, 66, "no job named", db,
          "no^[]0;pwned^Gsuch")
    shutil.rmtree(root)


# Names a list and a table show: an escape sequence, a newline, a TAB, UTF-8, and a plain one.
LISTED = {"esc\x1b[31mred\x1b[0m": "esc^[[31mred^[[0m", "two\nlines": "two^Jlines",
          "tab\there": "tab^Ihere", "ünï 日本語": "ünï 日本語", "plain": "plain"}


def on_tty(*args):
    """Runs oomfix with its standard output on a terminal (a pty); stderr is a pipe."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([OOMFIX] + list(args), stdout=slave, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other end closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    err = p.stderr.read()
    p.wait()
    return (p.returncode, out.decode("utf-8", "replace").replace("\r\n", "\n"),
            err.decode("utf-8", "replace"))


def cells(s):
    """Terminal cells of s (a wide character takes two)."""
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def odd_names_listed():
    """jobs --names, jobs and queue show a name from the database, never its raw controls."""
    jobs = [{"name": nm, "status": "stopped"} for nm in LISTED]
    jobs.append({"name": "odd status", "status": "stop\x1b]0;pwned\x07ped"})
    root, db = fresh(jobs=jobs)
    safe = ["ünï 日本語", "plain", "odd status"]
    odd = [nm for nm in LISTED if LISTED[nm] != nm]
    # into a pipe (a completion, a script): exact names only, the others named on stderr
    rc, out, err = run("--aitk", root, "jobs", "--names")
    ok(rc == 0 and sorted(out.splitlines()) == sorted(safe),
       "jobs --names into a pipe: the names as stored, one a line, without those a line cannot "
       "carry", repr(out) + err)
    ok(all(("  " + LISTED[nm]) in err.splitlines() for nm in odd) and "--json" in err and
       clean(err), "jobs --names into a pipe: stderr names the names left out, made visible",
       repr(err))
    # on a terminal: every name, its controls made visible
    rc, out, err = on_tty("--aitk", root, "jobs", "--names")
    ok(rc == 0 and sorted(out.splitlines()) == sorted(list(LISTED.values()) + ["odd status"])
       and clean(out) and err == "", "jobs --names on a terminal: every name, made visible",
       repr(out) + err)
    # the table: visible names (an escape sequence shown, not dropped), aligned columns
    rc, out, err = run("--aitk", root, "jobs")
    lines = out.splitlines()
    head = lines[0] if lines else ""
    rows = [l for l in lines[1:] if " stopped " in l]
    ok(rc == 0 and clean(out) and clean(err) and
       all(any(l.startswith(LISTED[nm] + " ") for l in lines) for nm in LISTED),
       "jobs shows every name visible, with no raw control", repr(out) + err)
    ok(len(rows) == len(LISTED) and
       all(cells(l[:l.index(" stopped ")]) == cells(head[:head.index(" STATUS ")])
           for l in rows) and
       any(" stop^[]0;  " in l for l in lines),
       "jobs: a TAB in a name does not move the columns; a status shown visible", repr(out))
    # queue: its messages name the job and its status visible
    for nm in odd:
        rc, out, err = run("--aitk", root, "queue", "aitk:" + nm)
        ok(rc == 0 and clean(err) and ("aitk:%s: queued (it was stopped)" % LISTED[nm]) in err,
           "queue of %r names it visible" % nm, repr(err))
    rc, out, err = run("--aitk", root, "queue", "aitk:odd status")
    ok(rc == 0 and clean(err) and "(it was stop^[]0;pwned^Gped)" in err,
       "queue shows the status it found visible", repr(err))
    nm = "esc\x1b[31mred\x1b[0m"
    rc, out, err = run("--aitk", root, "queue", nm)
    ok(rc == 64 and clean(err) and ("did you mean 'aitk:%s'?" % LISTED[nm]) in err,
       "queue of a name without aitk: suggests it visible", repr(err))
    shutil.rmtree(root)


truncated()
corrupt()
older_ui()
newer_ui()
read_only_file()
read_only_folder("wal")
read_only_folder("delete")
locked()
full_disk()
bad_configs()
odd_names()
odd_names_listed()
for case, rc, msg in table:
    msg = msg.strip().replace("\n", " / ").replace("|", "\\|")
    print("# | %s | %d | %s |" % (case, rc, msg))
sys.exit(end())
