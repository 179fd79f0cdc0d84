#!/bin/bash
# oomfix diagnose from the outside: exit codes, stdin and FIFOs, the readable report, JSON.
set -u
: "${OOMFIX:?}" "${TESTS_DIR:?}"
CASES="$TESTS_DIR/diag/cases-verdicts"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0 fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else no "$what"; fi; }
status() { "$OOMFIX" diagnose "$@" >"$T/out" 2>"$T/err"; echo $?; }
valid_json() { python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8"))' "$1"; }

echo "1..20"
check "no LOG is a usage error (64)" test "$(status)" = 64
check "unknown option is a usage error (64)" test "$(status --frobnicate x.log)" = 64
check "two logs is a usage error (64)" test "$(status a.log b.log)" = 64
check "a missing log exits 66" test "$(status "$T/none.log")" = 66
check "the error names the missing file" grep -q "none.log" "$T/err"
check "a directory exits 66" test "$(status "$T")" = 66
check "the error says it is a directory" grep -q "directory" "$T/err"
printf 'config:\n  name: [unclosed\n' >"$T/bad.yaml"
# a bad job does not stop the diagnosis of the log (SPEC §3.6): its problem is reported beside
check "a job file that is not YAML: the log is still diagnosed (exit 0)" test "$(status --job "$T/bad.yaml" "$CASES/empty/train.log")" = 0
check "the job error has file:line:col" grep -Eq 'bad\.yaml:[0-9]+:[0-9]+' "$T/out"
check "a log on stdin is read ('-')" \
	bash -c '"$0" diagnose --json - <"$1" | grep -q "\"timing\": \"first_steps\""' \
	"$OOMFIX" "$CASES/b-bar-glued-traceback/train.log"
mkfifo "$T/fifo"
cat "$CASES/c-sampling-after-save/train.log" >"$T/fifo" &
check "a FIFO is read as a stream" test "$(status --json "$T/fifo")" = 0
wait
check "... and diagnosed" grep -q '"timing": "sampling"' "$T/out"
check "the size a signature keeps is in the JSON" \
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert any(s["id"]=="tried_to_allocate" and s.get("value")=="1.50 GiB" for s in r["signatures"])' "$T/out"
"$OOMFIX" diagnose --json "$CASES/binary/train.log" >"$T/b.json" 2>"$T/b.err"
check "binary input is refused with exit 65" test $? -eq 65
check "... saying it is not a text log" grep -q 'not a text log' "$T/b.err"
check "... and writing no half JSON" test ! -s "$T/b.json"
"$OOMFIX" diagnose --json "$CASES/invalid-utf8-nul/train.log" >"$T/u.json"
check "invalid UTF-8 and NULs come out as valid JSON" valid_json "$T/u.json"
"$OOMFIX" diagnose "$CASES/d-fatal-late/train.log" >"$T/report" 2>&1
check "the report marks row D of the table" grep -Eq '^> D ' "$T/report"
check "the report lists the evidence line of the message" grep -Eq '^ +[0-9]+  Error running job: CUDA out of memory' "$T/report"
"$OOMFIX" diagnose "$CASES/crlf-ansi/train.log" >"$T/ansi" 2>&1
check "no escape byte reaches the terminal" bash -c '! grep -q $'"'"'\x1b'"'"' "$0"' "$T/ansi"
exit $((fails > 0))
