#!/usr/bin/env python3
"""Counts test results from meson's testlog.json files and prints `N passed, N failed`.

TAP tests are counted by their `ok` / `not ok` lines (each cmocka case and each shell check is one
test); other tests count once. A TAP test that crashed or timed out before it printed a result
counts as one failure; a test that must fail and did (EXPECTEDFAIL) counts as one pass. Exit
status 1 when anything failed or nothing ran."""
import json
import re
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        print(f"cannot read {path}: {e}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        out = t.get("stdout") or ""
        p = f = s = 0
        for l in out.splitlines():
            m = re.match(r"^(not ok|ok)\b(.*)$", l)
            if not m:
                continue
            if re.search(r"#\s*SKIP", m.group(2), re.I):
                s += 1
            elif m.group(1) == "ok":
                p += 1
            else:
                f += 1
        if result == "EXPECTEDFAIL":
            p, f, s = 1, 0, 0  # a test that must fail (its `not ok` lines are the point) did
        if p + f + s == 0:
            if result in ("OK", "EXPECTEDFAIL"):
                p = 1
            elif result == "SKIP":
                s = 1
            else:
                f = 1
        elif result not in ("OK", "EXPECTEDFAIL", "SKIP") and f == 0:
            f = 1  # a crash or timeout after some results
        if f:
            print(f"FAILED: {t.get('name')} ({result})", file=sys.stderr)
        passed += p
        failed += f
        skipped += s

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
