#!/usr/bin/env bash
# `oomfix retry` against the stand-in trainer (tests/standin/aitk_standin.py), printed as TAP.
#
# Scenarios: several starting jobs and card sizes, each must reach a job that fits in the fewest
# tries — every try fails in one phase and gets the one fix that acts on it, so the expected
# fixes below are worked out from SPEC §3.4 and the stand-in's memory model, not read from
# oomfix. Every applied fix is also checked against the phase the try's own log shows (read
# back with `oomfix diagnose --json`, the phase table written out here again). Then the probe,
# Ctrl-C with real signals (and no process of the run left behind), and the exits 65 and 69.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
TESTS_DIR=${TESTS_DIR:?}
STANDIN="$TESTS_DIR/standin/aitk_standin.py"
JOBS="$TESTS_DIR/retry/jobs"
LOGS="$TESTS_DIR/retry/logs"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export LC_ALL=C.UTF-8 LANGUAGE=
# Each try's estimate needs a card: an nvidia-smi that fails stands for none here, so a machine
# with a GPU runs the scenarios as one without (the card comes from --vram or the OOM message).
mkdir -p "$WORK/nosmi"
printf '#!/bin/sh\nexit 9\n' >"$WORK/nosmi/nvidia-smi"
chmod +x "$WORK/nosmi/nvidia-smi"
export PATH="$WORK/nosmi:$PATH"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description, command...: the command's output is shown only when it fails
	local d=$1
	shift
	if "$@" >"$WORK/why" 2>&1; then ok "$d"; else not_ok "$d"; sed 's/^/# /' "$WORK/why"; fi
}

if ! command -v python3 >/dev/null || ! python3 -c 'import yaml' 2>/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP python3 with PyYAML (python3-yaml) and jq are needed"
	exit 0
fi

# SPEC §3.4: the fixes that change each failing phase's memory.
acts_on() { # phase fix
	case $1 in
	model_load) [[ $2 == low_vram ]] ;;
	caching) [[ " num_frames drop_largest_bucket low_vram " == *" $2 "* ]] ;;
	baseline_sampling | sampling) [[ " lighter_sampling disable_sampling low_vram " == *" $2 "* ]] ;;
	training | saving) [[ " gradient_checkpointing num_frames batch_size drop_largest_bucket low_vram " == *" $2 "* ]] ;;
	*) false ;;
	esac
}

# scenario NAME JOB VRAM EXPECTED_FIXES...: retry until it fits; the fixes are the expected ones,
# in order, one per failed try, each acting on the phase its try failed in.
scenario() {
	local name=$1 job=$2 vram=$3
	shift 3
	local want="$*" dir="$WORK/$name"
	mkdir -p "$dir"
	cp "$JOBS/$job" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --grace 2 job.yaml -- python3 "$STANDIN" --vram "$vram" job.yaml \
		>out.txt 2>err.txt)
	local rc=$?
	local got
	got=$(sed -n 's/^oomfix retry: try [0-9]*: .* → \([a-z_]*\):.*/\1/p' "$dir/err.txt" | tr '\n' ' ')
	got=${got% }
	echo "$name: $(( $(echo "$want" | wc -w) + 1 )) tries: ${want:-none}" >>"$WORK/tries"
	[ $rc -eq 0 ] || { echo "exit $rc"; cat "$dir/err.txt"; return 1; }
	[ "$got" = "$want" ] || { echo "fixes: got '$got', want '$want'"; cat "$dir/err.txt"; return 1; }
	grep -q "try $(( $(echo "$want" | wc -w) + 1 )): the run finished: the job fits" "$dir/err.txt" || return 1
	# Each fix acts on the phase its try failed in, as the try's log shows.
	local k=1 f phase
	for f in $want; do
		phase=$("$OOMFIX" diagnose --json "$dir/job.yaml.oomfix-runs/$k.log" | jq -r .phase)
		acts_on "$phase" "$f" || { echo "try $k: $f does not act on $phase"; return 1; }
		grep -q "oomfix retry, try $k (" "$dir/job.yaml.oomfix.md" || { echo "no journal entry for try $k"; return 1; }
		k=$((k + 1))
	done
	# The job that fits is the one saved; the previous version is kept.
	python3 "$STANDIN" --vram "$vram" "$dir/job.yaml" >/dev/null 2>&1 || { echo "saved job does not fit"; return 1; }
	if [ -n "$want" ]; then [ -f "$dir/job.yaml~" ] || { echo "no backup"; return 1; }; fi
	# the original is kept once, however many fixes were saved (restore --first)
	if [ -n "$want" ]; then
		cmp -s "$dir/job.yaml.oomfix-runs/0.yaml" "$JOBS/$job" || { echo "no original kept"; return 1; }
	else
		[ ! -e "$dir/job.yaml.oomfix-runs/0.yaml" ] || { echo "an original kept with no change"; return 1; }
	fi
	[ "$(cd "$dir/job.yaml.oomfix-runs" && ls -- *.log | wc -l)" -eq $(( $(echo "$want" | wc -w) + 1 )) ]
}

check "FLUX load on 20 GB: low_vram (FLUX honours it), 2 tries" \
	scenario flux20 flux_load.yaml 20 low_vram
check "Z-Image on 12 GB: load, then the first steps: 3 tries" \
	scenario zimage12 zimage_small_card.yaml 12 low_vram gradient_checkpointing
check "Z-Image on 12 GB: load, baseline sample, first steps: 4 tries" \
	scenario every12 zimage_every_phase.yaml 12 low_vram lighter_sampling gradient_checkpointing
# (a caching OOM shortens the dataset's clips, as `fix --log` does: the 81-frame previews are
# the next try's failure, and lighter previews its fix)
check "Wan 2.1 1.3B 81 frames on 12 GB: load, latent caching, then the previews: 4 tries" \
	scenario wan12 wan_video.yaml 12 low_vram num_frames lighter_sampling
check "SDXL with 2048 previews on 12 GB: the sample during training: 2 tries" \
	scenario sdxl12 sdxl_big_previews.yaml 12 lighter_sampling
check "Z-Image batch 8 on 12 GB: the first steps, batch 1 (checkpointing already on): 2 tries" \
	scenario batch12 zimage_big_batch.yaml 12 batch_size
check "Z-Image 1024 bucket on 11.5 GB now and then: drop the largest bucket: 2 tries" \
	scenario bucket11 zimage_largest_bucket.yaml 11.5 drop_largest_bucket
# E10 (review 4): after a failed training step, retry shortens the dataset's clips and leaves the
# previews' frames, as `oomfix fix --log` does on the same log
retry_e10() {
	local dir="$WORK/e10"
	mkdir -p "$dir" && cp "$JOBS/wan_big_batch.yaml" "$dir/job.yaml" && cp "$dir/job.yaml" "$dir/orig.yaml"
	(cd "$dir" && "$OOMFIX" retry --max-tries 2 job.yaml -- python3 "$STANDIN" --vram 16 job.yaml \
		>/dev/null 2>err.txt)
	grep -q "try 1: B: .* → num_frames: config.process\[0\].datasets\[0\].num_frames: 81 → 41" "$dir/err.txt" ||
		{ echo "not the dataset's clips"; cat "$dir/err.txt"; return 1; }
	! grep -q "sample.num_frames" "$dir/err.txt" || { echo "the previews were shortened"; cat "$dir/err.txt"; return 1; }
	[ "$("$OOMFIX" get "$dir/job.yaml" "config.process[0].sample.num_frames")" = 40 ] || return 1
	"$OOMFIX" fix --log "$dir/job.yaml.oomfix-runs/1.log" --diff "$dir/orig.yaml" next 2>/dev/null |
		grep '^[-+] ' | sed 's/^\(.\) */\1/' > "$dir/fix.diff"
	diff -u "$dir/orig.yaml" "$dir/job.yaml" | grep '^[-+] ' | sed 's/^\(.\) */\1/' > "$dir/retry.diff"
	cmp -s "$dir/fix.diff" "$dir/retry.diff" || { echo "fix --log and retry differ:"; cat "$dir/fix.diff" "$dir/retry.diff"; return 1; }
}
check "E10: after a training-step OOM retry shortens the clips, not the previews, as fix --log does" retry_e10
# E11 (review 4): a bucket drop that did not move the failing step is not made again while the
# order has another fix for it: batch size 1 comes before a second drop, and the loop says why
retry_e11() {
	local dir="$WORK/e11"
	mkdir -p "$dir" && cp "$JOBS/zimage_bucket_batch8.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --grace 2 --max-tries 4 job.yaml -- python3 "$STANDIN" --vram 11.5 \
		--bucket-steps 8 job.yaml >/dev/null 2>err.txt) || { echo "exit $?"; cat "$dir/err.txt"; return 1; }
	local got
	got=$(sed -n 's/^oomfix retry: try [0-9]*: .* → \([a-z_]*\):.*/\1/p' "$dir/err.txt" | tr '\n' ' ')
	[ "$got" = "drop_largest_bucket batch_size " ] || { echo "fixes: $got"; cat "$dir/err.txt"; return 1; }
	grep -q "try 2: D: .* step 12 → batch_size" "$dir/err.txt" || return 1
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' |
		grep -qF "The last change (drop_largest_bucket) did not move the failure: it still came at step 12." ||
		{ echo "not said why"; cat "$dir/err.txt"; return 1; }
	# the 768 bucket stays: only one bucket was dropped
	[ "$("$OOMFIX" get "$dir/job.yaml" "config.process[0].datasets[0].resolution")" = "[512, 768]" ] ||
		{ "$OOMFIX" get "$dir/job.yaml" "config.process[0].datasets[0].resolution"; return 1; }
	grep -q "try 3: the run finished: the job fits" "$dir/err.txt"
}
check "E11: a bucket drop that did not move the failure is followed by batch size 1, not a second drop" retry_e11
check "a job that fits already: 1 try, no change" \
	scenario fits24 zimage_small_card.yaml 24

# The table of tries before the closing line (a run of two tries or more): one row a try, its
# log (its end kept), the letter of its verdict and the step as `oomfix diagnose` reads the log,
# the fix saved after it (the one the try's own line named), "fits" on the last; none for one try.
summary_table() { # scenario fixes...
	local dir="$WORK/$1" k=1 f letter step row
	shift
	local -a fixes=("$@")
	local tries=$(( ${#fixes[@]} + 1 ))
	sed -n '/^oomfix retry: the tries of this run, each with the fix saved after it:$/,$p' \
		"$dir/err.txt" >"$dir/table.txt"
	[ "$(sed -n 2p "$dir/table.txt" | tr -s ' ')" = " TRY LOG ESTIMATE VERDICT STEP FIX SAVED AFTER IT" ] ||
		{ echo "no table heading"; cat "$dir/err.txt"; return 1; }
	# after the rows, where a try's estimate and its run disagree, a line says so; then the close
	local close
	close=$(sed -n "$((tries + 3)),\$p" "$dir/table.txt" | grep -v '^  ' | head -1)
	[ "$close" = "oomfix retry: try $tries: the run finished: the job fits." ] ||
		{ echo "the closing line does not follow the table"; cat "$dir/table.txt"; return 1; }
	sed -n "$((tries + 3)),\$p" "$dir/table.txt" | sed '/^oomfix retry: try/,$d' |
		grep -vqE '^  (try [0-9]+: the estimate said|[a-z])' &&
		{ echo "something else between the table and the closing line"; cat "$dir/table.txt"; return 1; }
	[ "$(head -n $((tries + 2)) "$dir/table.txt" | wc -L)" -le 80 ] || { echo "wider than 80"; cat "$dir/table.txt"; return 1; }
	for f in "${fixes[@]}" -; do
		row=$(sed -n "$((k + 2))p" "$dir/table.txt" | tr -s ' ')
		if [ "$f" = - ]; then
			letter=fits step=-
		else
			letter=$("$OOMFIX" diagnose --json "$dir/job.yaml.oomfix-runs/$k.log" |
				jq -r '{before_training:"A",first_steps:"B",sampling:"C",intermittent:"D",environment:"E"}[.timing]')
			step=$("$OOMFIX" diagnose --json "$dir/job.yaml.oomfix-runs/$k.log" | jq -r '.failed_step // "-"')
		fi
		[[ $row == " $k "*"runs/$k.log "@(fits|tight|no|-)" $letter"*" $step $f" ]] ||
			{ echo "row $k: '$row', want try $k, $k.log, $letter, step $step, fix $f"; return 1; }
		k=$((k + 1))
	done
}
check "the table of tries: 4 tries, one row each, before the closing line" \
	summary_table every12 low_vram lighter_sampling gradient_checkpointing
check "the table of tries: 2 tries" summary_table sdxl12 lighter_sampling
check "no table of tries after one try" \
	bash -c '! grep -q "the tries of this run" "$1/fits24/err.txt" && grep -q "try 1: the run finished" "$1/fits24/err.txt"' _ "$WORK"

# restore --first: the job before the retry's first change, however many fixes followed (D39).
restore_first() {
	local dir="$WORK/zimage12"
	cp "$dir/job.yaml" "$dir/fitted.yaml"
	"$OOMFIX" restore --first "$dir/job.yaml" 2>/dev/null || return 1
	cmp -s "$dir/job.yaml" "$JOBS/zimage_small_card.yaml" && cmp -s "$dir/job.yaml~" "$dir/fitted.yaml" || return 1
	tail -n 3 "$dir/job.yaml.oomfix.md" | grep -q "low_vram" || return 1
	# a job no retry changed has no original: 66, untouched
	"$OOMFIX" restore --first "$WORK/fits24/job.yaml" 2>"$WORK/fits24/err.txt"
	[ $? -eq 66 ] && grep -q "no original to restore" "$WORK/fits24/err.txt" &&
		cmp -s "$WORK/fits24/job.yaml" "$JOBS/zimage_small_card.yaml"
}
check "restore --first puts back the job before the retry's two fixes; none kept: 66" restore_first

# A second retry numbers its logs after the first one's.
second_run() {
	local dir="$WORK/flux20"
	(cd "$dir" && "$OOMFIX" retry job.yaml -- python3 "$STANDIN" --vram 20 job.yaml >/dev/null 2>err2.txt) &&
		[ -f "$dir/job.yaml.oomfix-runs/3.log" ] && grep -q "try 1 of at most 6 (run 3), log job.yaml.oomfix-runs/3.log" "$dir/err2.txt" &&
		grep -q "try 1: the run finished" "$dir/err2.txt"
}
check "a second retry keeps the earlier logs (3.log)" second_run

# --events FD: one JSON object per line, in the order the loop goes, agreeing with the sentences.
events() {
	local dir="$WORK/events"
	mkdir -p "$dir" && cp "$JOBS/zimage_small_card.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --events 3 job.yaml -- python3 "$STANDIN" --vram 12 job.yaml \
		3>ev.jsonl >/dev/null 2>err.txt) || { cat "$dir/err.txt"; return 1; }
	local seq
	seq=$(jq -r .event "$dir/ev.jsonl" | tr '\n' ' ')
	[ "$seq" = "try verdict fix try verdict fix try verdict end " ] || { echo "events: $seq"; return 1; }
	[ "$(jq -r 'select(.event=="fix") | .fix' "$dir/ev.jsonl" | tr '\n' ' ')" = "low_vram gradient_checkpointing " ] ||
		return 1
	[ "$(jq -r 'select(.event=="verdict") | "\(.timing)/\(.timing_letter)"' "$dir/ev.jsonl" | tr '\n' ' ')" = "before_training/A first_steps/B null/null " ] || return 1
	jq -se 'map(select(.event=="fix" and .fix=="low_vram")) | .[0].changes == ["config.process[0].model.low_vram: false → true"]' \
		"$dir/ev.jsonl" >/dev/null || return 1
	jq -se 'map(select(.event=="end")) | length == 1 and .[0].status == 0 and .[0].outcome == "fits" and .[0].try == 3' "$dir/ev.jsonl" >/dev/null || return 1
	# each try's log named in the events is the one the loop wrote
	local l
	for l in $(jq -r 'select(.event=="try") | .log' "$dir/ev.jsonl"); do [ -s "$dir/$l" ] || return 1; done
	# the descriptor is not passed on to the runs
	(cd "$dir" && "$OOMFIX" retry --events 3 --max-tries 1 job.yaml -- sh -c 'ls -l /proc/$$/fd/' \
		3>ev2.jsonl >/dev/null 2>/dev/null)
	grep -q "pipe:\|/dev/null" "$dir/job.yaml.oomfix-runs/4.log" || { echo "no fd list"; return 1; }
	! grep -q "ev2.jsonl" "$dir/job.yaml.oomfix-runs/4.log" || { echo "the run inherited the events"; return 1; }
	jq -se '.[-1] | .event == "end" and .outcome == "fits" and .status == 0' "$dir/ev2.jsonl" >/dev/null
}
check "--events 3: try, verdict, fix and end as JSON lines; not passed on to the run" events
events_error() {
	local dir="$WORK/events2"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --events 3 job.yaml -- ./no-such-trainer 3>ev.jsonl >/dev/null 2>&1)
	[ $? -eq 69 ] && jq -se '.[-1] | .event == "end" and .outcome == "error" and (.text | test("no-such-trainer"))' \
		"$dir/ev.jsonl" >/dev/null &&
		"$OOMFIX" retry --events 99 job.yaml -- true 2>/dev/null; [ $? -eq 64 ]
}
check "--events: a CMD that cannot be run ends with outcome error; a closed descriptor is a usage error" events_error

# --log LOG: the failure in LOG is known, so its fix comes before the first run.
from_log() {
	local dir="$WORK/fromlog"
	mkdir -p "$dir" && cp "$JOBS/flux_load.yaml" "$dir/job.yaml"
	(cd "$dir" && python3 "$STANDIN" --vram 20 job.yaml >first.log 2>&1)
	sleep 1.1 # the journal keeps whole seconds: the change must be seen as newer than the log
	(cd "$dir" && "$OOMFIX" retry --log first.log job.yaml -- python3 "$STANDIN" --vram 20 job.yaml \
		>/dev/null 2>err.txt) || { cat "$dir/err.txt"; return 1; }
	grep -q "the log given: A: .* → low_vram: config.process\[0\].model.low_vram: (absent) → true" \
		"$dir/err.txt" || { cat "$dir/err.txt"; return 1; }
	# one run, and it fitted
	[ "$(cd "$dir/job.yaml.oomfix-runs" && ls -- *.log)" = "1.log" ] && grep -q "try 1: the run finished" "$dir/err.txt" &&
		grep -q "oomfix retry, the log given (A:" "$dir/job.yaml.oomfix.md" || return 1
	# that log is now older than the change: a second --log with it is refused, the job untouched
	cp "$dir/job.yaml" "$dir/after.yaml"
	(cd "$dir" && "$OOMFIX" retry --log first.log job.yaml -- true >/dev/null 2>err2.txt)
	[ $? -eq 75 ] && grep -q "older than the last change" "$dir/err2.txt" && cmp -s "$dir/job.yaml" "$dir/after.yaml" ||
		{ cat "$dir/err2.txt"; return 1; }
	# a log without an OOM changes nothing first: the job runs as it is
	(cd "$dir" && "$OOMFIX" retry --log job.yaml.oomfix-runs/1.log job.yaml -- \
		python3 "$STANDIN" --vram 20 job.yaml >/dev/null 2>err3.txt) &&
		grep -q "shows no GPU out-of-memory error; the first run is of the job as it is" "$dir/err3.txt" &&
		cmp -s "$dir/job.yaml" "$dir/after.yaml"
}
check "--log: the known failure's fix first (FLUX: 1 run); an older log is refused (75); no OOM: run as is" from_log

# The log decides, not the exit status alone: behind `| cat` the trainer's status is lost.
piped() {
	local dir="$WORK/piped"
	mkdir -p "$dir" && cp "$JOBS/flux_load.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry job.yaml -- sh -c "python3 '$STANDIN' --vram 20 job.yaml | cat" \
		>/dev/null 2>err.txt) || { cat "$dir/err.txt"; return 1; }
	grep -q "try 1: the command exited 0, but its log shows the job ran out of memory" "$dir/err.txt" &&
		grep -q "try 1: A: .* → low_vram" "$dir/err.txt" && grep -q "try 2: the run finished" "$dir/err.txt"
}
check "a command that exits 0 over an OOM (a pipe): the log decides, low_vram, then it fits" piped
# An OOM whose log does not show when (no step): no fix on a guess, 69, the job untouched.
unknown_when() {
	local dir="$WORK/unknown"
	mkdir -p "$dir" && cp "$JOBS/zimage_small_card.yaml" "$dir/job.yaml" && cp "$dir/job.yaml" "$dir/orig.yaml"
	(cd "$dir" && "$OOMFIX" retry --events 3 job.yaml -- cat "$TESTS_DIR/retry/logs/training_no_step.log" \
		3>ev.jsonl >/dev/null 2>err.txt)
	[ $? -eq 69 ] || { cat "$dir/err.txt"; return 1; }
	grep -q "try 1: ?: out of memory, training (the log does not show the step)" "$dir/err.txt" &&
		tr -s '\n ' ' ' <"$dir/err.txt" | grep -q "so no change is chosen on a guess" && cmp -s "$dir/job.yaml" "$dir/orig.yaml" &&
		jq -se '.[-1].outcome == "unknown" and .[-1].status == 69' "$dir/ev.jsonl" >/dev/null
}
check "an OOM in training with no step shown: no fix on a guess, 69 (outcome unknown), no change" unknown_when

# ---- the exits that stop the loop -----------------------------------------------------------
stop_case() { # name job expected-rc pattern oomfix-options... -- stand-in options...
	local name=$1 job=$2 want=$3 pat=$4
	shift 4
	local opts=() sopts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	sopts=("$@")
	local dir="$WORK/$name"
	mkdir -p "$dir"
	cp "$JOBS/$job" "$dir/job.yaml"
	cp "$dir/job.yaml" "$dir/orig.yaml"
	(cd "$dir" && "$OOMFIX" retry "${opts[@]}" job.yaml -- python3 "$STANDIN" "${sopts[@]}" job.yaml \
		>out.txt 2>err.txt)
	local rc=$?
	[ $rc -eq "$want" ] || { echo "exit $rc, want $want"; cat "$dir/err.txt"; return 1; }
	grep -q -- "$pat" "$dir/err.txt" || { echo "no '$pat'"; cat "$dir/err.txt"; return 1; }
}
not_oom() {
	stop_case notoom conservative.yaml 65 "not for GPU memory (missing_file)" -- --fail python || return 1
	cmp -s "$WORK/notoom/job.yaml" "$WORK/notoom/orig.yaml" # nothing was changed
}
check "a run that fails for another reason: 65, the job untouched" not_oom
# A trainer behind a pipe exits 0 over any error: a log that ends on a traceback is no "fits".
piped_not_oom() {
	local dir="$WORK/pipednotoom"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml" && cp "$dir/job.yaml" "$dir/orig.yaml"
	(cd "$dir" && "$OOMFIX" retry job.yaml -- cat "$TESTS_DIR/retry/logs/safe_not_oom.log" \
		>out.txt 2>err.txt)
	local rc=$?
	[ $rc -eq 65 ] || { echo "exit $rc, want 65"; cat "$dir/err.txt"; return 1; }
	! grep -q "fits" "$dir/err.txt" && grep -q "exited 0, but its log shows the run failed" "$dir/err.txt" &&
		cmp -s "$dir/job.yaml" "$dir/orig.yaml" || { cat "$dir/err.txt"; return 1; }
}
check "a command that exits 0 over a failure that is not of memory: 65, never 'fits'" piped_not_oom
env_e() {
	stop_case env conservative.yaml 69 "E: out of memory with the card held elsewhere.*fresh_worker" \
		-- --vram 16 --other-process 10 || return 1
	cmp -s "$WORK/env/job.yaml" "$WORK/env/orig.yaml"
}
check "a conservative job on a card another process holds: E, 69, no change" env_e
exhausted() {
	stop_case exhausted sdxl_big_previews.yaml 69 "exhausted for this phase (loading the model)" -- --vram 6 ||
		return 1
	cmp -s "$WORK/exhausted/job.yaml" "$WORK/exhausted/orig.yaml"
}
check "SDXL on 6 GB: nothing acts on its model load: 69, no change" exhausted
max_tries() {
	stop_case maxtries zimage_every_phase.yaml 69 "stopping after 2 tries (the next fix would be lighter_sampling)" \
		--max-tries 2 -- --vram 12 || return 1
	# one change per run: the change after the last try is not made
	[ "$(grep -c '^Fixes:' "$WORK/maxtries/job.yaml.oomfix.md")" -eq 1 ]
}
check "--max-tries 2 on a job that needs 4: 69 after 2 runs, one change" max_tries
no_cmd() {
	local dir="$WORK/nocmd"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry job.yaml -- ./no-such-trainer job.yaml >/dev/null 2>err.txt)
	[ $? -eq 69 ] && grep -q "cannot run ./no-such-trainer" "$dir/err.txt"
}
check "a CMD that cannot be run: 69" no_cmd
usage() {
	"$OOMFIX" retry 2>/dev/null; [ $? -eq 64 ] || return 1
	"$OOMFIX" retry job.yaml python3 x 2>/dev/null; [ $? -eq 64 ] || return 1
	"$OOMFIX" retry --max-tries 0 job.yaml -- true 2>/dev/null; [ $? -eq 64 ] || return 1
	"$OOMFIX" retry --probe x job.yaml -- true 2>/dev/null; [ $? -eq 64 ] || return 1
	"$OOMFIX" retry aitk:my_job -- true 2>/dev/null; [ $? -eq 64 ] || return 1
	"$OOMFIX" retry "$WORK/missing.yaml" -- true 2>/dev/null; [ $? -eq 66 ] || return 1
	"$OOMFIX" retry --help | grep -q -- "--probe STEPS"
}
check "usage errors: 64; a missing job: 66; --help" usage

survived() {
	# three steps per bucket: the 1024 bucket is skipped three times, then a smaller one fits
	# again, so the run finishes (D, survived): the job is kept and the skips are named
	stop_case survived zimage_largest_bucket.yaml 0 "It survived out-of-memory skips (D:" \
		-- --vram 11.5 --bucket-steps 3 || return 1
	grep -q "skipping batch 3/3" "$WORK/survived/job.yaml.oomfix-runs/1.log" &&
		cmp -s "$WORK/survived/job.yaml" "$WORK/survived/orig.yaml"
}
check "a run that finishes after surviving OOM skips: 0, the skips named, no change" survived

# ---- probe ------------------------------------------------------------------------------------
probe() {
	local dir="$WORK/probe"
	mkdir -p "$dir" && cp "$JOBS/zimage_small_card.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --probe 5 --grace 5 job.yaml -- \
		python3 "$STANDIN" --vram 12 --delay 0.05 job.yaml >out.txt 2>err.txt)
	local rc=$?
	[ $rc -eq 0 ] || { echo "exit $rc"; cat "$dir/err.txt"; return 1; }
	# try 2 failed at step 8, so try 3 must get to step 13 and through a sampling round during
	# training: the first is at step 20 (sample_every 20); the baseline sample does not count
	grep -q "try 3: passed the probe at step 20: the job fits" "$dir/err.txt" || { cat "$dir/err.txt"; return 1; }
	# the closing line says what the probe did not see
	grep -q "Not seen: steps 21 to 40, buckets or clip lengths not drawn yet" "$dir/err.txt" || return 1
	grep -q "Job stopped" "$dir/job.yaml.oomfix-runs/3.log" || return 1
	! grep -q "40/40" "$dir/job.yaml.oomfix-runs/3.log" || return 1
	[ "$(grep -c '^Fixes:' "$dir/job.yaml.oomfix.md")" -eq 2 ]
}
check "--probe 5: the third try is stopped at step 20 (5 past the failure at 8, and the first sampling round during training) and kept" probe
probe_skips() {
	# the 1024 bucket fails at steps 9, 10 and 11 (skipped, the bar goes on) and aborts the run
	# at 12: step 10 is past the probe's 10 steps, but not 10 steps past the skip at step 9
	local dir="$WORK/probe2"
	mkdir -p "$dir" && cp "$JOBS/zimage_largest_bucket.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --probe 10 --max-tries 1 job.yaml -- \
		python3 "$STANDIN" --vram 11.5 job.yaml >out.txt 2>err.txt)
	[ $? -eq 69 ] && ! grep -q "passed the probe" "$dir/err.txt"
}
check "--probe: steps that were skipped for memory do not pass it" probe_skips
# probe_case NAME JOB SED MAX_TRIES STANDIN_ARGS...: a --probe 5 retry of a job edited by SED
probe_case() {
	local dir="$WORK/$1" job=$2 sedx=$3 max=$4
	shift 4
	mkdir -p "$dir" && sed "$sedx" "$JOBS/$job" >"$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --probe 5 --grace 3 --max-tries "$max" job.yaml -- \
		python3 "$STANDIN" --delay 0.01 "$@" job.yaml >out.txt 2>err.txt)
}
probe_late_sample() {
	# the baseline sample fits, the first sample during training (step 20) does not: the probe
	# waits for that round instead of passing at step 5, and the failure gets its fix; after it
	# (sample_every 500 on 40 steps) no round comes, and the probe says so instead of waiting
	probe_case plate conservative.yaml 's/x/x/' 2 --vram 24 --late-sample 30 || { cat "$WORK/plate/err.txt"; return 1; }
	local e="$WORK/plate/err.txt"
	grep -q "try 1: C: out of memory while sampling at step 20 → lighter_sampling" "$e" &&
		grep -q "try 2: passed the probe at step 25: the job fits" "$e" &&
		tr '\n' ' ' <"$e" | sed 's/  */ /g' | grep -q "No preview sampling round comes during training (sample_every 500, the job has 40 steps)" ||
		{ cat "$e"; return 1; }
}
check "--probe: a run that would die at its first sample during training is not passed at step 5" probe_late_sample
probe_late_bucket() {
	# eight steps per bucket: the 1024 bucket comes at step 17, after the probe's 5 steps but
	# before the first round during training (20): the run dies there, and the bucket is dropped
	probe_case pbucket zimage_largest_bucket.yaml 's/x/x/' 2 --vram 11.5 --bucket-steps 8 || { cat "$WORK/pbucket/err.txt"; return 1; }
	local e="$WORK/pbucket/err.txt"
	grep -q "try 1: D: .* → drop_largest_bucket" "$e" && ! grep -q "try 1: passed the probe" "$e" &&
		grep -q "try 2: passed the probe at step 25" "$e" || { cat "$e"; return 1; }
}
check "--probe: a bucket drawn after the probe's steps but before its sampling round is seen" probe_late_bucket
probe_sampling_off() {
	probe_case poff conservative.yaml 's/^      train:$/      train:\n        disable_sampling: true/' 1 --vram 24 ||
		{ cat "$WORK/poff/err.txt"; return 1; }
	grep -q "try 1: passed the probe at step 5: the job fits" "$WORK/poff/err.txt" &&
		grep -q "Sampling is off, so no sampling round" "$WORK/poff/err.txt"
}
check "--probe with sampling off: no round is needed, and it is said" probe_sampling_off
probe_first_try_E8() {
	# nothing was changed: no advice to keep settings or raise steps that no retry lowered
	local e="$WORK/poff/err.txt"
	tr '\n' ' ' <"$e" | sed 's/  */ /g' |
		grep -q "Nothing was changed: the job as it is passed the probe. Run the whole job next." &&
		! grep -q "Keep the memory settings" "$e" && ! grep -q "Raise train.steps" "$e" ||
		{ cat "$e"; return 1; }
}
check "E8: a first-try probe pass says nothing was changed and advises the whole run" probe_first_try_E8
runs_stopped_E19() {
	# the run the probe stopped is not "no OOM" alone: the trail says it was stopped, and where
	local d="$WORK/poff"
	"$OOMFIX" runs "$d/job.yaml" | grep -q "run 1, .*: no OOM; stopped at step 5 before its end" &&
		"$OOMFIX" runs --json "$d/job.yaml" | jq -e '.[0].stopped == true and .[0].ended == false and (.[0] | has("finished") | not)' >/dev/null ||
		{ "$OOMFIX" runs "$d/job.yaml"; return 1; }
	"$OOMFIX" diagnose "$d/job.yaml.oomfix-runs/1.log" | tr '\n' ' ' | tr -s ' ' |
		grep -q "the run was stopped before its end (Ctrl-C, a hang-up or a retry's probe), after training step 5"
}
check "E19: a run the probe stopped reads as stopped, in the trail and its diagnosis" runs_stopped_E19
probe_after_fix_E8() {
	# a change was saved: the advice to keep it stays
	tr '\n' ' ' <"$WORK/plate/err.txt" | sed 's/  */ /g' | grep -q "Keep the memory settings" &&
		! grep -q "Nothing was changed" "$WORK/plate/err.txt"
}
check "E8: after a saved change the probe pass keeps its advice" probe_after_fix_E8

# ---- Ctrl-C -----------------------------------------------------------------------------------
alive() { kill -0 "$1" 2>/dev/null; }
wait_for() { # file seconds
	local i=0
	while [ ! -s "$1" ] && [ $i -lt $(($2 * 20)) ]; do sleep 0.05; i=$((i + 1)); done
	[ -s "$1" ]
}
ctrl_c() {
	local dir="$WORK/ctrlc"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	(cd "$dir" && STANDIN_PID_FILE="$dir/child.pid" exec "$OOMFIX" retry --grace 3 job.yaml -- \
		python3 "$STANDIN" --delay 0.2 job.yaml >out.txt 2>err.txt) &
	local pid=$!
	wait_for "$dir/child.pid" 10 || { echo "the run did not start"; kill "$pid"; return 1; }
	local child
	child=$(cat "$dir/child.pid")
	sleep 0.5
	kill -INT "$pid"
	wait "$pid"
	local rc=$?
	[ $rc -eq 130 ] || { echo "exit $rc"; cat "$dir/err.txt"; return 1; }
	alive "$child" && { echo "the trainer $child is still running"; return 1; }
	grep -q "Job stopped" "$dir/job.yaml.oomfix-runs/1.log" || { echo "the trainer got no SIGINT"; return 1; }
	grep -q "interrupted" "$dir/err.txt"
}
check "Ctrl-C: SIGINT reaches the trainer, which stops; exit 130; nothing left" ctrl_c
stubborn() {
	# a run that ignores SIGINT and SIGTERM, with a child of its own in the same group
	local dir="$WORK/stubborn"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	(cd "$dir" && exec "$OOMFIX" retry --grace 0.5 job.yaml -- \
		sh -c 'trap "" INT TERM; sleep 300 & echo $! > sleep.pid; echo $$ > sh.pid; wait' \
		>out.txt 2>err.txt) &
	local pid=$!
	wait_for "$dir/sleep.pid" 10 || { kill "$pid"; return 1; }
	wait_for "$dir/sh.pid" 10 || { kill "$pid"; return 1; }
	local start=$SECONDS
	kill -INT "$pid"
	wait "$pid"
	local rc=$?
	[ $rc -eq 130 ] || { echo "exit $rc"; return 1; }
	[ $((SECONDS - start)) -lt 10 ] || { echo "took too long"; return 1; }
	local s
	for s in "$(cat "$dir/sleep.pid")" "$(cat "$dir/sh.pid")"; do
		alive "$s" && { echo "process $s is still running"; kill -9 "$s"; return 1; }
	done
	return 0
}
check "Ctrl-C on a run that ignores SIGINT and SIGTERM: SIGKILL after the grace; no orphan" stubborn
sigterm_twice() {
	# a second Ctrl-C skips the grace period
	local dir="$WORK/twice"
	mkdir -p "$dir" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	(cd "$dir" && exec "$OOMFIX" retry --grace 30 job.yaml -- \
		sh -c 'trap "" INT; echo $$ > sh.pid; while :; do sleep 0.1; done' >out.txt 2>err.txt) &
	local pid=$!
	wait_for "$dir/sh.pid" 10 || { kill "$pid"; return 1; }
	local start=$SECONDS
	kill -INT "$pid"
	sleep 0.3
	kill -INT "$pid"
	wait "$pid"
	local rc=$?
	[ $rc -eq 130 ] && [ $((SECONDS - start)) -lt 10 ] && ! alive "$(cat "$dir/sh.pid")"
}
check "a second Ctrl-C does not wait for the 30 s grace" sigterm_twice

# The estimate (SPEC §12): each try tells the estimate of the job it runs; with the card known
# (--vram), a step fix goes down to the first rung whose band top fits it, at once, and says so.
# On 105 GiB the band of this full fine-tune puts the [512, 768] buckets over the card and [512]
# under it.
estimate_rungs() {
	local dir="$WORK/rungs"
	mkdir -p "$dir" && cp "$JOBS/zimage_largest_bucket.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --vram 105GiB --probe 5 --events 3 job.yaml -- python3 "$STANDIN" \
		--vram 11.5 job.yaml 3>ev.jsonl >/dev/null 2>err.txt) || { cat "$dir/err.txt"; return 1; }
	[ "$(grep -c "Estimate of this try's job: peak [0-9.]* GiB at training, 105.0 GiB card:" "$dir/err.txt")" -eq 2 ] || { echo "no estimate per try"; cat "$dir/err.txt"; return 1; }
	grep -q 'resolution: \[512, 768, 1024\] → \[512\]' "$dir/err.txt" || { echo "not two rungs"; cat "$dir/err.txt"; return 1; }
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' | grep -qF "drop_largest_bucket: 2 rungs at once: the estimate says [512, 768] would not fit the 105.0 GiB card." || { echo "not said"; return 1; }
	[ "$(jq -r 'select(.event == "fix") | .ruled_out' "$dir/ev.jsonl")" = "[512, 768]" ] || return 1
	[ "$(jq -r 'select(.event == "try") | .estimate.verdict' "$dir/ev.jsonl" | tr '\n' ' ')" = "tight fits " ] || { cat "$dir/ev.jsonl"; return 1; }
	[ "$(jq -r 'select(.event == "fix") | .rungs' "$dir/ev.jsonl")" = 2 ] || return 1
	# without a card before the first OOM message, the first try's estimate has no verdict
	# (an nvidia-smi that fails stands for none: a card's nvidia-smi would give the verdict)
	mkdir -p "$dir/none/bin" && cp "$JOBS/zimage_largest_bucket.yaml" "$dir/none/job.yaml"
	printf '#!/bin/sh\nexit 9\n' >"$dir/none/bin/nvidia-smi" && chmod +x "$dir/none/bin/nvidia-smi"
	(cd "$dir/none" && PATH="$dir/none/bin:$PATH" "$OOMFIX" retry --max-tries 1 job.yaml -- python3 "$STANDIN" \
		--vram 11.5 job.yaml >/dev/null 2>err.txt)
	tr '\n' ' ' <"$dir/none/err.txt" | grep -q "Estimate of this try's job: peak [0-9.]* GiB at training (--vram gives a *verdict)" || { cat "$dir/none/err.txt"; return 1; }
}
check "--vram: each try tells its estimate; a step fix goes down two rungs at once" estimate_rungs
# SPEC §12.2: an OOM message with numbers measures how far short the job was (here held 79.12 GiB
# of a 79.25 GiB card, asking 6 GiB more): the step fix goes far enough to cover it, by the
# model's difference, and says so in words and in its event.
shortfall_rungs() {
	local dir="$WORK/shortfall"
	mkdir -p "$dir" && cp "$JOBS/zimage_largest_bucket.yaml" "$dir/job.yaml"
	(cd "$dir" && "$OOMFIX" retry --max-tries 2 --events 3 job.yaml -- \
		sh -c "cat '$LOGS/bucket_oom_short6.log'; exit 1" 3>ev.jsonl >/dev/null 2>err.txt)
	[ $? -eq 69 ] || { echo "exit $?"; cat "$dir/err.txt"; return 1; }
	grep -q 'resolution: \[512, 768, 1024\] → \[512\]' "$dir/err.txt" || { echo "not two rungs"; cat "$dir/err.txt"; return 1; }
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' | grep -qF "drop_largest_bucket: 2 rungs at once: the out-of-memory message says the job was 5.9 GiB short of the card; by the estimate they take off 8.2 GiB." || { echo "not said"; cat "$dir/err.txt"; return 1; }
	[ "$(jq -r 'select(.event == "fix") | [.rungs, .covered, (.shortfall > 6000000000 and .shortfall < 6400000000), .removed >= .shortfall] | map(tostring) | join(" ")' "$dir/ev.jsonl" | head -1)" = "2 true true true" ] || { cat "$dir/ev.jsonl"; return 1; }
}
check "an OOM message's shortfall sizes the step fix: two rungs cover 5.9 GiB" shortfall_rungs

# Each try's OOM is kept (SPEC §12.2): the next try's estimate names what it measured, and
# `oomfix measurements` lists it.
measured_tries() {
	local dir="$WORK/measured"
	mkdir -p "$dir" && cp "$JOBS/wan_video.yaml" "$dir/job.yaml"
	(cd "$dir" && OOMFIX_MEASUREMENTS="$dir/m.db" "$OOMFIX" retry --vram 24 --max-tries 4 job.yaml \
		-- python3 "$STANDIN" --vram 24 job.yaml >/dev/null 2>err.txt)
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' | grep -q "try 2 of at most 4.*Estimate of this try's job:.*(measured: caching needed at least [0-9.]* GiB)" || { cat "$dir/err.txt"; return 1; }
	# the closing table sets the estimate beside what the run did: said no, it fitted
	grep -q "^  TRY  *LOG  *ESTIMATE  *VERDICT" "$dir/err.txt" || return 1
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' | grep -q "try 3: the estimate said it would not fit; the run fitted: the estimate is conservative here." || { echo "no comparison"; return 1; }
	OOMFIX_MEASUREMENTS="$dir/m.db" "$OOMFIX" measurements --json >"$dir/m.json" || return 1
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['measurements']; m={x['phase']: x['log'] for x in r}; assert len(r)==2 and m['caching'].endswith('1.log') and m['baseline_sample'].endswith('2.log'), r" "$dir/m.json"
}
check "retry: a try's OOM is kept, and the next try's estimate names it" measured_tries

# While a try runs, nvidia-smi is asked at most once a second what the trainer holds (SPEC
# §12.2): the fake lists the stand-in (found by its command line; oomfix's own holds it too,
# but is not the trainer's) at 9000 MiB and a foreign
# process at 6 GiB; the try that finished keeps its training peak, the trainer's alone.
watched_try() {
	local dir="$WORK/watched"
	mkdir -p "$dir/bin" && cp "$JOBS/conservative.yaml" "$dir/job.yaml"
	cat >"$dir/bin/nvidia-smi" <<'SH'
#!/bin/sh
case "$1" in
--query-gpu=*) echo "0, GPU-w, NVIDIA GeForce RTX 4090, 24564, 1000" ;;
--query-compute-apps=*)
	echo "GPU-w, 1, 6144"
	for f in /proc/[0-9]*/cmdline; do
		if tr '\0' ' ' <"$f" 2>/dev/null | grep -aq '^[^ ]*python[0-9.]* [^ ]*aitk_standin'; then
			p=${f#/proc/}; echo "GPU-w, ${p%/cmdline}, 9000"
		fi
	done ;;
*) exit 9 ;;
esac
SH
	chmod +x "$dir/bin/nvidia-smi"
	(cd "$dir" && PATH="$dir/bin:$PATH" OOMFIX_MEASUREMENTS="$dir/m.db" "$OOMFIX" retry --vram 24 \
		--max-tries 1 job.yaml -- python3 "$STANDIN" --vram 24 --delay 0.1 job.yaml >/dev/null 2>err.txt) ||
		{ cat "$dir/err.txt"; return 1; }
	OOMFIX_MEASUREMENTS="$dir/m.db" "$OOMFIX" measurements --json >"$dir/m.json" || return 1
	[ "$(jq -r '.measurements[] | select(.phase == "training") | "\(.kind) \(.bytes / 1048576 | floor) \(.log | endswith("1.log"))"' "$dir/m.json")" = "peak 9000 true" ] || { cat "$dir/m.json"; return 1; }
}
check "retry: a try followed with nvidia-smi keeps the trainer's training peak" watched_try

# One card (SPEC §12.2, review 4 E2): another process holds 6 GiB of the 24 GB card; the job
# fits the card alone but not beside it. retry asks nvidia-smi before the try and stops with the
# E answer, naming the process; the job is not cut.
shared_card() {
	local dir="$WORK/shared"
	mkdir -p "$dir/bin" && cp "$TESTS_DIR/estimate/examples/train_lora_flux_24gb.yaml" "$dir/job.yaml"
	cp "$dir/job.yaml" "$dir/orig.yaml"
	cat >"$dir/bin/nvidia-smi" <<'SH'
#!/bin/sh
case "$1" in
--query-gpu=*) echo "0, GPU-aaa, NVIDIA GeForce RTX 3090, 24576, 6400" ;;
--query-compute-apps=*) echo "GPU-aaa, 4242, 5837" ;;
*) exit 9 ;;
esac
SH
	chmod +x "$dir/bin/nvidia-smi"
	local rc=0
	(cd "$dir" && PATH="$dir/bin:$PATH" "$OOMFIX" retry job.yaml -- python3 "$STANDIN" \
		--vram 24 --other-process 6 job.yaml >/dev/null 2>err.txt) || rc=$?
	[ "$rc" -eq 69 ] || { echo "status $rc"; cat "$dir/err.txt"; return 1; }
	tr '\n' ' ' <"$dir/err.txt" | tr -s ' ' | grep -q "before try 1: other processes hold 6.2 GiB on GPU 0 now (pid 4242 (5.7 GiB)); the job fits the card alone but not beside them" || { cat "$dir/err.txt"; return 1; }
	grep -q "fresh_worker" "$dir/err.txt" || return 1
	cmp -s "$dir/job.yaml" "$dir/orig.yaml" || { echo "the job was changed"; return 1; }
	[ ! -e "$dir/job.yaml.oomfix-runs/1.log" ] || { echo "a try ran"; return 1; }
	! grep -q "keep them" "$dir/err.txt"
}
check "retry on a card another process holds: stops before the try with E, naming it, job untouched" shared_card

sed 's/^/# /' "$WORK/tries" 2>/dev/null
echo "1..$n"
[ $failed -eq 0 ]
