#!/bin/bash
# One decision, every front end (SPEC §3.4), as a table printed in TAP: for each answer of the
# closed set (a fix, a fresh worker, unknown timing, exhausted, not OOM, survived, an untried
# change) every front end — `oomfix fix … next`, `oomfix plan`, `oomfix diagnose`, `oomfix retry`,
# and in the UI (headless, --script) `a`, the Plan view's Enter and the walk-through — gives the
# same answer in the same words. The words are taken once, from `oomfix plan --json` (its
# "next"), and looked for in what each front end prints or shows, blanks and line breaks
# squeezed (each wraps in its own way). A front end that decided alone would say other words.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
TESTS_DIR=${TESTS_DIR:?set TESTS_DIR to the tests folder}
R=$TESTS_DIR/retry
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 LC_ALL=C.UTF-8 HOME=$WORK/home
unset LANGUAGE

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
flat() { tr -s '\n ' '  ' < "$1"; }
# shows FILE TEXT: FILE, its lines joined and its blanks squeezed, holds TEXT
shows() {
	flat "$1" | grep -qF -- "$2" && return 0
	echo "# not in $(basename "$1"): $2"
	{ flat "$1" | head -c 1200 | fold -w 100; echo; } | sed 's/^/#   /'
	return 1
}
# ui DIR NAME KEYS...: runs the UI headless on DIR's job and log, the keys then a dump in NAME
ui() {
	local d=$1 name=$2
	shift 2
	printf '%s\n' "$@" "dump $name" > "$d/$name.script"
	(cd "$d" && "$OOMFIX" job.yaml run.log --size 200x60 --script "$name.script") 2> "$d/$name.err"
	# the status rows (a message or a question wraps over up to four, above the footer)
	tail -n 5 "$d/$name" > "$d/$name.status"
}

# name | job | log | the answer plan_decide gives
CASES='apply|flux_load.yaml|flux_load.log
fresh_worker|conservative.yaml|safe_worker.log
when_unknown|conservative.yaml|training_no_step.log
exhausted|sdxl_big_previews.yaml|sdxl_load.log
not_oom|conservative.yaml|safe_not_oom.log
survived|zimage_largest_bucket.yaml|bucket_skips.log
untried|flux_load.yaml|flux_load.log'

# fresh CASE DIR: the case's job and log in DIR; for `untried` a change is saved after the log
fresh() {
	local c=$1 d=$2 job log
	job=$(echo "$CASES" | grep "^$c|" | cut -d'|' -f2)
	log=$(echo "$CASES" | grep "^$c|" | cut -d'|' -f3)
	rm -rf "$d"
	mkdir -p "$d"
	cp "$R/jobs/$job" "$d/job.yaml"
	cp "$R/logs/$log" "$d/run.log"
	if [ "$c" = untried ]; then
		touch -d '1 hour ago' "$d/run.log"
		"$OOMFIX" fix -i --log "$d/run.log" "$d/job.yaml" next 2> /dev/null
	fi
	cp "$d/job.yaml" "$d/before.yaml"
}

for c in $(echo "$CASES" | cut -d'|' -f1); do
	d=$WORK/$c
	fresh "$c" "$d"
	"$OOMFIX" plan --json --log "$d/run.log" "$d/job.yaml" > "$d/plan.json" 2> /dev/null
	answer=$(jq -r '.next.answer' "$d/plan.json")
	text=$(jq -r '.next.text' "$d/plan.json")
	fix=$(jq -r '.next.fix // empty' "$d/plan.json")
	check "$c: plan_decide's answer is $c" test "$answer" = "$c"
	# what a front end that names the fix it applies says: "low_vram — Use the model's ..."
	named=${text#Next change: }
	named=${named%.}

	# ---- oomfix fix JOB LOG next
	"$OOMFIX" fix --log "$d/run.log" "$d/job.yaml" next > "$d/next.out" 2> "$d/next.err"
	st=$?
	if [ "$c" = apply ]; then
		"$OOMFIX" fix --log "$d/run.log" "$d/job.yaml" "$fix" > "$d/named.out" 2> /dev/null
		check "$c: fix next applies the decision's fix ($fix)" cmp -s "$d/next.out" "$d/named.out"
	else
		check "$c: fix next says the decision's words" shows "$d/next.err" "$text"
		check "$c: fix next changes nothing (exit $st)" test "$st" -ne 0 -o "$c" = fresh_worker
	fi

	# ---- diagnose --json carries the same decision as plan --json in "next" (their first_fix is
	# the verdict's, SPEC §3.5: what the timing rule names, a survived run's included)
	"$OOMFIX" diagnose --json --job "$d/job.yaml" "$d/run.log" > "$d/diag.json" 2> /dev/null
	check "$c: diagnose --json's next is plan's" \
		test "$(jq -c '.next' "$d/diag.json")" = "$(jq -c '.next' "$d/plan.json")"

	# ---- oomfix plan, oomfix diagnose
	"$OOMFIX" plan --log "$d/run.log" "$d/job.yaml" > "$d/plan.out" 2>&1
	"$OOMFIX" diagnose --job "$d/job.yaml" "$d/run.log" > "$d/diag.out" 2>&1
	if [ "$c" = apply ]; then
		check "$c: plan names the decision's fix" shows "$d/plan.out" "First fix: $named"
		check "$c: diagnose names the decision's fix" shows "$d/diag.out" "Change first: $named"
	else
		check "$c: plan says the decision's words" shows "$d/plan.out" "$text"
		check "$c: diagnose says the decision's words" shows "$d/diag.out" "$text"
	fi

	# ---- oomfix retry (each try's run plays the case's log back, with a failed run's status)
	fresh "$c" "$d/r"
	if [ "$c" = untried ]; then
		(cd "$d/r" && "$OOMFIX" retry --log run.log --events 3 job.yaml -- cat run.log \
			3> ev.jsonl > /dev/null 2> err)
	else
		[ "$c" = survived ] && status=0 || status=1
		(cd "$d/r" && "$OOMFIX" retry --max-tries 2 --events 3 job.yaml -- \
			sh -c "cat run.log; exit $status" 3> ev.jsonl > /dev/null 2> err)
	fi
	st=$?
	case $c in
	apply)
		check "$c: retry applies the decision's fix after try 1" \
			test "$(jq -rs 'map(select(.event == "fix"))[0].fix' "$d/r/ev.jsonl")" = "$fix" ;;
	survived)
		# without a probe a run that survived its OOMs and finished is a job that fits
		check "$c: retry: the run finished, it fits (0), the skips named" \
			bash -c "[ $st -eq 0 ] && grep -q 'It survived out-of-memory skips' '$d/r/err'"
		check "$c: retry changes nothing" cmp -s "$d/r/job.yaml" "$d/r/before.yaml" ;;
	*)
		check "$c: retry says the decision's words" shows "$d/r/err" "$text"
		check "$c: retry's end event carries them" \
			bash -c "jq -rs '.[-1].text' '$d/r/ev.jsonl' > '$d/r/end.txt'"
		check "$c: ... the same words" shows "$d/r/end.txt" "$text"
		check "$c: retry changes nothing (exit $st)" \
			bash -c "[ $st -ne 0 ] && cmp -s '$d/r/job.yaml' '$d/r/before.yaml'" ;;
	esac

	# ---- the UI: a, the Plan view's Enter, the walk-through
	fresh "$c" "$d/a"
	ui "$d/a" a.txt a
	check "$c: UI a says the decision's words" shows "$d/a/a.txt.status" "$text"
	if [ "$c" = apply ]; then
		check "$c: UI a applies it" bash -c "head -1 '$d/a/a.txt' | grep -qF '[+]'"
	else
		check "$c: UI a changes nothing" bash -c "! head -1 '$d/a/a.txt' | grep -qF '[+]'"
	fi
	fresh "$c" "$d/p"
	ui "$d/p" enter.txt Tab Enter
	check "$c: UI Plan Enter says the decision's words" shows "$d/p/enter.txt.status" "$text"
	if [ "$c" = apply ]; then
		check "$c: UI Plan Enter on the marked step applies it" shows "$d/p/enter.txt.status" "$text Applied."
	else
		check "$c: UI Plan Enter asks first" shows "$d/p/enter.txt.status" "Apply the picked change anyway?"
	fi
	fresh "$c" "$d/w"
	ui "$d/w" walk.txt w
	check "$c: UI walk-through shows the decision's words" shows "$d/w/walk.txt" "$text"
done

echo "1..$n"
[ "$fails" -eq 0 ]
