#!/bin/bash
# The command line's defects of the third review, one check per defect (named by its number),
# printed as TAP: runs of a job file (D20), a job and a log given the other way round and an
# unknown fix (D28), plain ASCII without a UTF-8 locale (D31), the labelled report (D41).
set -u
. "$(dirname "$0")/lib.sh"

cp "$FIX/job.yaml" "$FIX/train.log" "$WORK/"
cd "$WORK" || exit 1

# D20: runs of a job file, from JOB.oomfix-runs/<n>.log and the change journal
mkdir job.yaml.oomfix-runs
printf 'Loading Flux model\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n' >job.yaml.oomfix-runs/1.log
cp train.log job.yaml.oomfix-runs/2.log
touch -d '2026-01-01 10:00:00' job.yaml.oomfix-runs/1.log
touch -d '2026-01-01 11:00:00' job.yaml.oomfix-runs/2.log
cat >job.yaml.oomfix.md <<JOURNAL
# Change journal for job.yaml

## 2026-01-01T10:00:00+00:00

Fixes: low_vram

oomfix retry, try 1 (A: out of memory before training, loading the model); its log: job.yaml.oomfix-runs/1.log

- \`config.process[0].model.low_vram\`: false → true

## 2026-01-01T11:00:00+00:00

Fixes: batch_size

oomfix retry, try 2 (B: out of memory in training step 6); its log: job.yaml.oomfix-runs/2.log

- \`config.process[0].train.batch_size\`: 2 → 1
JOURNAL
check "D20: runs JOB works for a job file" st 0 runs job.yaml
check "D20: newest first, numbered like the files" bash -c 'grep -n "^run [0-9]" "$0" | tr "\n" " " | grep -q "run 2, .*run 1, "' "$WORK/out"
check "D20/D3: each run with the fix saved after it, from the journal" bash -c 'grep -A1 "^run 1," "$0" | grep -q "then saved: low_vram" && grep -A1 "^run 2," "$0" | grep -q "then saved: batch_size"' "$WORK/out"
check "D20: runs --json of a job file" st 0 runs --json job.yaml
check "D20: runs --json numbers and phases" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["run"] for x in r] == [2, 1], r
assert r[1]["phase"] == "model_load" and r[1]["saved_after"][0]["fixes"] == ["low_vram"], r
assert r[0]["saved_after"][0]["changes"] == ["config.process[0].train.batch_size: 2 → 1"], r
' "$WORK/out"

# D28: a job given as the log, a log given as the job, an unknown fix
check "D28: diagnose JOB.yaml is refused (64)" st 64 diagnose job.yaml
check "D28: ... and says it is a job file" has err "looks like a job file, not a training log"
check "D28: plan LOG is refused (65)" st 65 plan train.log
check "D28: ... and says it is not a job" has err "does not look like a job"
check "D28: fix JOB nope exits 64" st 64 fix job.yaml nope
check "D28: ... and lists the fixes" bash -c 'grep -q "gradient_checkpointing batch_size drop_largest_bucket" "$0"' "$WORK/err"

# D31: no UTF-8 arrows or dashes without a UTF-8 locale; the job text itself is left alone
check "D31: plan under LANG=C" bash -c "LC_ALL=C LANG=C '$OOMFIX' plan --log train.log job.yaml >'$WORK/out' 2>'$WORK/err'"
check "D31: ... prints -> and no UTF-8 arrow or dash" bash -c '! grep -q $'"'"'\xe2\x86\x92\|\xe2\x80\x94'"'"' "$0" && grep -q -- " -> " "$0"' "$WORK/out"
check "D31: fix under LANG=C says -> on stderr" bash -c "LC_ALL=C '$OOMFIX' fix job.yaml batch_size 2>&1 >/dev/null | grep -q 'batch size [0-9]* -> 1'"
check "D31: a UTF-8 locale keeps the arrow" bash -c "'$OOMFIX' plan --log train.log job.yaml | grep -q '→'"

# D41: the report's columns are named, the last one too
check "D41: diagnose prints the report" st 0 diagnose train.log
check "D41: the signature table has a heading for every column" bash -c 'grep -qE "^  SIGNATURE +COUNT +LINE +WHAT IT SAYS$" "$0"' "$WORK/out"
check "D41: the skip number is worded" bash -c 'grep -qE "^  oom_skip +[0-9]+ +[0-9]+ +skip [0-9]+ in a row$" "$0"' "$WORK/out"

echo "1..$n"
exit $((fails > 0))
