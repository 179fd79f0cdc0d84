#!/usr/bin/env bash
# Following a run with nvidia-smi beside it (SPEC §12.2): a fake nvidia-smi on PATH whose numbers
# follow a trainer stand-in over time — its memory rises phase by phase while a foreign process
# holds 6 GiB of the same card — and `oomfix diagnose --follow --job` keeps each phase's peak of
# the trainer's processes only; the next estimate of the job uses them. The stand-in moves to
# its next phase only after the follower has asked nvidia-smi three more times, so every phase
# is sampled whatever the machine's speed (no fixed sleeps). Prints TAP.
set -u

OOMFIX=${OOMFIX:?OOMFIX must point at the built binary}
TESTS_DIR=${TESTS_DIR:?}
JOB="$TESTS_DIR/retry/jobs/conservative.yaml"

tmp=$(mktemp -d)
foreign=
cleanup() {
	[ -n "$foreign" ] && kill "$foreign" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$tmp"/*.txt 2>/dev/null | head -60; fi; }
command -v jq >/dev/null || { echo "1..0 # SKIP jq is needed"; exit 0; }

# The fake: one 24 GB card; the processes are the trainer (its pid and MiB from files the
# stand-in writes) and the foreign one. Each --query-compute-apps answer is counted.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<SH
#!/bin/sh
case "\$1" in
--query-gpu=*) echo "0, GPU-fake-0, NVIDIA GeForce RTX 4090, 24564, 1000" ;;
--query-compute-apps=*)
	[ -f "$tmp/foreign.pid" ] && echo "GPU-fake-0, \$(cat "$tmp/foreign.pid"), 6144"
	[ -f "$tmp/trainer.pid" ] && [ -f "$tmp/mem" ] && echo "GPU-fake-0, \$(cat "$tmp/trainer.pid"), \$(cat "$tmp/mem")"
	echo x >>"$tmp/polls" ;;
*) exit 9 ;;
esac
SH
chmod +x "$tmp/bin/nvidia-smi"
polls() { [ -f "$tmp/polls" ] && wc -l <"$tmp/polls" || echo 0; }
# Waits until the follower has asked three more times (at most 60 s: then the test fails).
three_more() {
	local want=$(($(polls) + 3)) i=0
	while [ "$(polls)" -lt "$want" ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && { echo "no poll" >&2; return 1; }
		sleep 0.1
	done
}

# The stand-in: prints the run's log phase by phase (its stdout is the log, so it has the log
# open, as the trainer under the web UI's worker has), and sets its memory after each phase's
# first line.
phase() { # MiB, then the lines
	local mib=$1
	shift
	printf '%s\n' "$@"
	echo "$mib" >"$tmp/mem"
	three_more
}
trainer() {
	sh -c 'echo $PPID' >"$tmp/trainer.pid"
	phase 5800 "Running 1 job" "Loading zimage model" "Loading transformer" || return 1
	phase 7100 "Caching latents for /data/safe" \
		"Caching latents to disk:   0%|          | 0/8 [00:00<?, ?it/s]" || return 1
	phase 9300 "Caching latents to disk: 100%|██████████| 8/8 [00:16<00:00, 1.62s/it]" \
		"Generating baseline samples before training" \
		"Generating Samples:   0%|          | 0/1 [00:00<?, ?it/s]" || return 1
	local frames=() s
	for s in $(seq 1 40); do
		frames+=("zimage_safe:  $((s * 100 / 40))%|█         | $s/40 [00:02<01:18, 1.62s/it, lr: 1.0e-04 loss: 3.370e-01]")
	done
	phase 14200 "Generating Samples: 100%|██████████| 1/1 [00:02<00:00, 1.62s/it]" \
		"zimage_safe:   0%|          | 0/40 [00:00<?, ?it/s]" "${frames[@]}" || return 1
	phase 15300 "" "Saved checkpoint to /app/ai-toolkit/output/zimage_safe/zimage_safe.safetensors" \
		"Generating Samples:   0%|          | 0/1 [00:00<?, ?it/s]" || return 1
	printf '%s\n' "Generating Samples: 100%|██████████| 1/1 [00:02<00:00, 1.62s/it]" "" \
		"========================================" "Result:" " - 1 completed job" \
		"========================================"
}

sleep 600 &
foreign=$!
echo "$foreign" >"$tmp/foreign.pid"
export OOMFIX_MEASUREMENTS="$tmp/measurements.db"
cp "$JOB" "$tmp/job.yaml"
: >"$tmp/log"
PATH="$tmp/bin:$PATH" "$OOMFIX" diagnose --follow --job "$tmp/job.yaml" "$tmp/log" \
	>"$tmp/follow.txt" 2>"$tmp/follow-err.txt" &
follower=$!
(trainer >>"$tmp/log") 2>"$tmp/trainer-err.txt"
trainer_rc=$?
i=0
while kill -0 "$follower" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
wait "$follower"
check "the stand-in ran through every phase while the follower asked nvidia-smi" '[ $trainer_rc -eq 0 ]'
check "the follower ended with the run" '! kill -0 $follower 2>/dev/null && grep -q "The run has ended" "$tmp/follow.txt"'

"$OOMFIX" measurements --json >"$tmp/rows.txt" 2>&1
peak() { jq -r --arg p "$1" '[.measurements[] | select(.phase == $p)][0] | "\(.kind) \(.bytes / 1048576 | floor)"' "$tmp/rows.txt"; }
check "model load: the trainer's peak, a peak" '[ "$(peak model_load)" = "peak 5800" ]'
check "caching: its peak" '[ "$(peak caching)" = "peak 7100" ]'
check "baseline sample: its peak" '[ "$(peak baseline_sample)" = "peak 9300" ]'
check "training: its peak, without the foreign process's 6 GiB" '[ "$(peak training)" = "peak 14200" ]'
check "sampling: its peak" '[ "$(peak sampling)" = "peak 15300" ]'
check "the card is the one the trainer was on" '[ "$(jq -r ".measurements[0].card / 1048576 | floor" "$tmp/rows.txt")" = 24564 ]'
check "nothing else was kept" '[ "$(jq ".measurements | length" "$tmp/rows.txt")" = 5 ]'

# The next estimate of the job uses the run: training measured on this card.
"$OOMFIX" estimate --vram 24 --json "$tmp/job.yaml" >"$tmp/est.txt" 2>&1
check "the next estimate's training is the measured peak" \
	'[ "$(jq -r ".phases[] | select(.phase == \"training\") | .basis" "$tmp/est.txt")" = measured ] && [ "$(jq -r ".phases[] | select(.phase == \"training\") | .bytes / 1048576 | floor" "$tmp/est.txt")" = 14200 ]'

# Without nvidia-smi the follow is as before and keeps nothing.
export OOMFIX_MEASUREMENTS="$tmp/none.db"
mkdir -p "$tmp/nosmi"
printf '%s\n' "Loading zimage model" "" "Result:" " - 1 completed job" >"$tmp/log2"
PATH="$tmp/nosmi:/usr/bin:/bin" "$OOMFIX" diagnose --follow --job "$tmp/job.yaml" "$tmp/log2" >"$tmp/follow2.txt" 2>&1
check "without nvidia-smi: the follow ends, nothing is kept" \
	'grep -q "The run has ended" "$tmp/follow2.txt" && [ "$("$OOMFIX" measurements --json | jq ".measurements | length")" = 0 ]'

echo "1..$n"
[ $failed -eq 0 ]
