#!/usr/bin/env python3
"""TAP runner for diagnosis cases.

  run_cases.py own DIAG_RUN CASES_DIR   -- our cases: diag_run with the job facts in expect.json
  run_cases.py shared OOMFIX CASES_DIR  -- the shared cases: oomfix diagnose --job --json
                                           (skipped when CASES_DIR does not exist)
  run_cases.py cli OOMFIX CASES_DIR GEN -- like shared, for tests/diag/cases-archs-captures: "no_job" runs
                                           without --job; "generated_log" logs are written by
                                           GEN --log NAME FILE (too big to commit)
  run_cases.py plan OOMFIX CASES_DIR    -- like cli (tests/diag/cases-plan-phase), and a case with a job
                                           also runs `oomfix plan --json --log LOG JOB`, whose
                                           first fix and verdict must agree
A case's "report_has" lists phrases the readable report (without --json) must hold.
Each case is one TAP test; a failure prints every field that differs.
"""
import json
import os
import subprocess
import sys
import tempfile

FIELDS = ("oom", "timing", "phase", "failed_step", "other_failure", "model_kind", "survived",
          "timing_unknown", "fitted_alone")


def compare(got, exp, out):
    for k in FIELDS:
        if k in exp and got.get(k) != exp[k]:
            out.append("%s: got %r, expected %r" % (k, got.get(k), exp[k]))
    ids = sorted(s["id"] for s in got.get("signatures", []))
    if ids != sorted(exp.get("signatures", [])):
        out.append("signatures: got %r, expected %r" % (ids, sorted(exp["signatures"])))
    for k, v in exp.get("counts", {}).items():
        c = [s["count"] for s in got["signatures"] if s["id"] == k]
        if c != [v]:
            out.append("count of %s: got %r, expected %r" % (k, c, v))
    for k in ("total_steps", "lines"):
        if k in exp and got.get(k) != exp[k]:
            out.append("%s: got %r, expected %r" % (k, got.get(k), exp[k]))
    if "accept_first_fix" in exp:
        if got.get("first_fix") not in exp["accept_first_fix"] and not (
                got.get("first_fix") is None and exp["accept_first_fix"] == []):
            out.append("first_fix: got %r, expected one of %r"
                       % (got.get("first_fix"), exp["accept_first_fix"]))
    if "memory" in exp and got.get("memory") != exp["memory"]:
        out.append("memory: got %r, expected %r" % (got.get("memory"), exp["memory"]))
    hints = sorted(h["id"] for h in got.get("hints", []))
    if "hints" in exp and hints != sorted(exp["hints"]):
        out.append("hints: got %r, expected %r" % (hints, sorted(exp["hints"])))
    if "job_error" in exp and (got.get("job_error") is None) != (exp["job_error"] is None):
        out.append("job_error: got %r, expected %r" % (got.get("job_error"), exp["job_error"]))
    for key in ("signatures", "evidence"):
        for s in got.get(key, []):
            if not isinstance(s.get("line"), int) or s["line"] < 1:
                out.append("%s entry without a line number: %r" % (key, s))


def check_plan(prog, d, log, exp, out):
    """`plan --log` reads the same verdict and must name the same first fix as diagnose."""
    p = subprocess.run([prog, "plan", "--json", "--log", log, os.path.join(d, "job.yaml")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        out.append("plan: exit status %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
        return
    got = json.loads(p.stdout.decode("utf-8"))
    v = got.get("verdict") or {}
    for k in ("timing", "phase", "failed_step"):
        if k in exp and v.get(k) != exp[k]:
            out.append("plan verdict %s: got %r, expected %r" % (k, v.get(k), exp[k]))
    if got.get("model_kind") != exp.get("model_kind"):
        out.append("plan model_kind: got %r, expected %r" % (got.get("model_kind"), exp.get("model_kind")))
    ff = got.get("first_fix")
    if not (ff in exp.get("accept_first_fix", []) or (ff is None and not exp.get("accept_first_fix"))):
        out.append("plan first_fix: got %r, expected one of %r" % (ff, exp.get("accept_first_fix")))


def main():
    mode, prog, cases = sys.argv[1], sys.argv[2], sys.argv[3]
    gen = sys.argv[4] if len(sys.argv) > 4 else None
    tmp = tempfile.TemporaryDirectory()
    if not os.path.isdir(cases):
        print("1..0 # SKIP %s does not exist" % cases)
        return 0
    names = sorted(n for n in os.listdir(cases) if os.path.isfile(os.path.join(cases, n, "expect.json")))
    print("1..%d" % len(names))
    failed = 0
    for i, name in enumerate(names, 1):
        d = os.path.join(cases, name)
        with open(os.path.join(d, "expect.json")) as f:
            exp = json.load(f)
        log = os.path.join(d, "train.log")
        if exp.get("generated_log"):
            log = os.path.join(tmp.name, name + ".log")
            subprocess.run([sys.executable, gen, "--log", name, log], check=True)
        if mode == "own":
            cmd = [prog] + exp.get("args", []) + [log]
        elif exp.get("no_job"):
            cmd = [prog, "diagnose", "--json", log]
        else:
            cmd = [prog, "diagnose", "--job", os.path.join(d, "job.yaml"), "--json", log]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        problems = []
        if "exit" in exp:  # a log that must be refused: the status says it, no JSON is read
            if p.returncode != exp["exit"]:
                problems.append("exit status %d, expected %d" % (p.returncode, exp["exit"]))
        elif p.returncode != 0:
            problems.append("exit status %d: %s" % (p.returncode, p.stderr.decode(errors="replace")))
        else:
            try:
                got = json.loads(p.stdout.decode("utf-8"))  # also proves it is valid UTF-8
            except (ValueError, UnicodeDecodeError) as e:
                problems.append("not JSON: %s" % e)
            else:
                compare(got, exp, problems)
        if exp.get("report_has") and not problems:  # the words a person reads
            r = subprocess.run([c for c in cmd if c != "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            text = " ".join(r.stdout.decode("utf-8", "replace").split())
            for want in exp["report_has"]:
                if want not in text:
                    problems.append("report lacks %r" % want)
        if mode == "plan" and not exp.get("no_job") and "job_error" not in exp and not problems:
            check_plan(prog, d, log, exp, problems)
        if problems:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for pr in problems:
                print("#   " + pr)
        else:
            print("ok %d - %s" % (i, name))
        if exp.get("generated_log"):
            os.unlink(log)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
