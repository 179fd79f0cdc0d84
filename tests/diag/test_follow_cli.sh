#!/bin/bash
# oomfix diagnose --follow: a writer appends to the log while oomfix follows it; the verdict goes
# from none to the OOM, the last one agrees with a full diagnosis, a replaced log is read again.
set -u
: "${OOMFIX:?}" "${TESTS_DIR:?}"
CASES="$TESTS_DIR/diag/cases-verdicts"
T=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else no "$what"; fi; }

echo "1..10"
src="$CASES/d-fatal-late/train.log"
size=$(stat -c %s "$src")
# the first piece stops before the first OOM message, the rest comes in three pieces
first=$(grep -b -m1 -i 'out of memory' "$src" | cut -d: -f1)
first=$((first / 2))
head -c "$first" "$src" >"$T/log.txt"
timeout 30 "$OOMFIX" diagnose --follow --json "$T/log.txt" >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.5
rest=$((size - first))
third=$((rest / 3))
tail -c "$rest" "$src" >"$T/rest"
for k in 0 1 2; do
	if [ $k = 2 ]; then len=$((rest - 2 * third)); else len=$third; fi
	dd if="$T/rest" bs=1 skip=$((k * third)) count=$len status=none >>"$T/log.txt"
	sleep 0.4
done
printf '\nResult:\n - 1 failure\n' >>"$T/log.txt"
wait $pid
rc=$?
check "follow ends by itself once the run has ended (not killed by the timeout)" test "$rc" != 124
check "it printed more than one verdict" test "$(wc -l <"$T/out")" -ge 2
check "the first verdict is no OOM" python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); assert r["oom"] is False, r' "$T/out"
"$OOMFIX" diagnose --json "$T/log.txt" >"$T/full.json"
check "the last verdict is the full diagnosis of the grown log" python3 -c '
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
full = json.load(open(sys.argv[2]))
assert last["run_ended"] is True, last
for k in ("oom", "timing", "phase", "failed_step", "total_steps", "signatures", "evidence"):
    assert last[k] == full[k], (k, last[k], full[k])
assert last["oom"] is True
' "$T/out" "$T/full.json"
# the exit status carries the verdict: 10 + the timing letter's place (A = 10 ... E = 14)
want=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["timing"]
order = ["before_training", "first_steps", "sampling", "intermittent", "environment"]
print(10 + order.index(t) if t in order else 15)' "$T/full.json")
check "follow's exit status carries the verdict of an OOM run ($want, friction list)" test "$rc" = "$want"

# the web UI moves log.txt aside when a job restarts and writes a new one
printf 'Running 1 job\nLoading Flux model\nCUDA out of memory. Tried to allocate 2.00 GiB\n' >"$T/r.txt"
timeout 30 "$OOMFIX" diagnose --follow "$T/r.txt" >"$T/rout" 2>&1 &
pid=$!
sleep 0.5
mv "$T/r.txt" "$T/r_old.txt"
sleep 0.4
printf 'Running 1 job\nLoading Flux model\n' >"$T/r.txt"
sleep 0.5
printf '\nResult:\n - 1 completed job\n' >>"$T/r.txt"
wait $pid
rrc=$?
check "follow of a run that ended without an OOM exits 0" test "$rrc" = 0
check "a replaced log is read again from the start" grep -q "replaced or truncated" "$T/rout"
check "... and its verdict is that of the new log" bash -c 'tail -2 "$0" | grep -q "^line 5: No GPU out-of-memory"' "$T/rout"

"$OOMFIX" diagnose --follow - </dev/null >/dev/null 2>"$T/e2"
check "--follow on standard input is a usage error (64)" test $? = 64
"$OOMFIX" diagnose --follow "$T/none.log" >/dev/null 2>"$T/e3"
check "--follow on a missing log exits 66" test $? = 66
exit $((fails > 0))
