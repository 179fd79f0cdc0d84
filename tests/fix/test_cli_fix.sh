#!/usr/bin/env bash
# `oomfix fix` and `oomfix plan` from the outside: the diff patches the original into exactly the
# printed YAML, -i saves with a backup and a journal entry, a failing fix leaves the file
# byte-identical, exit codes follow sysexits. Prints TAP.
set -u

OOMFIX=${OOMFIX:?OOMFIX must point at the built binary}
TESTS_DIR=${TESTS_DIR:?}
FIXTURES="$TESTS_DIR/fix/fixtures"
EXAMPLES="${SHARED_FIXTURES:-/nonexistent}/aitk-examples"
CASES="${SHARED_FIXTURES:-/nonexistent}/cases"
FIXES="gradient_checkpointing batch_size drop_largest_bucket lighter_sampling disable_sampling num_frames low_vram"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # description, command...
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
skip_test() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# The diff, applied with patch(1) to a copy of the original, gives exactly the printed YAML.
diff_round_trip() { # job fix
	local job=$1 fix=$2 rc
	"$OOMFIX" fix "$job" "$fix" >"$tmp/out.yaml" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 65 ]; then
		grep -q "not applicable" "$tmp/err" && [ ! -s "$tmp/out.yaml" ]
		return
	fi
	[ $rc -eq 0 ] || { cat "$tmp/err" >&2; return 1; }
	"$OOMFIX" fix --diff "$job" "$fix" >"$tmp/d.patch" 2>/dev/null || return 1
	cp "$job" "$tmp/copy.yaml"
	if [ -s "$tmp/d.patch" ]; then
		patch -s --no-backup-if-mismatch "$tmp/copy.yaml" <"$tmp/d.patch" >/dev/null || return 1
	fi
	cmp -s "$tmp/copy.yaml" "$tmp/out.yaml"
}

jobs=()
for f in "$FIXTURES"/*.yaml; do jobs+=("$f"); done
if [ -d "$EXAMPLES" ]; then
	for f in "$EXAMPLES"/*.yaml "$EXAMPLES"/*.yml; do
		case $f in *omnigen2*) continue ;; esac
		[ -f "$f" ] && jobs+=("$f")
	done
fi
for job in "${jobs[@]}"; do
	for fix in $FIXES; do
		check "fix --diff | patch == fix: $(basename "$job") $fix" diff_round_trip "$job" "$fix"
	done
done
[ -d "$EXAMPLES" ] || skip_test "examples: diff round trip" "no shared fixtures"

# Several fixes in one run, each on the result of the previous one.
several() {
	"$OOMFIX" fix "$FIXTURES/per_dataset_batch.yaml" batch_size drop_largest_bucket \
		lighter_sampling >"$tmp/multi.yaml" 2>/dev/null || return 1
	"$OOMFIX" fix "$tmp/multi.yaml" batch_size drop_largest_bucket lighter_sampling \
		>"$tmp/again.yaml" 2>"$tmp/err" || return 1
	# batch and sampling are clamps (already done); the bucket steps one more rung
	grep -q "batch_size: already done" "$tmp/err" &&
		grep -q "lighter_sampling: already done" "$tmp/err" &&
		grep -q "gradient_accumulation: 4" "$tmp/multi.yaml" &&
		grep -q "resolution: \[512, 768\]" "$tmp/multi.yaml" &&
		grep -q "resolution: \[512\]" "$tmp/again.yaml"
}
check "several fixes apply in order" several

# -i: saved in place, JOB~ is the previous version, the journal names the fixes and changes.
in_place() {
	cp "$FIXTURES/per_dataset_batch.yaml" "$tmp/job.yaml"
	"$OOMFIX" fix "$tmp/job.yaml" batch_size >"$tmp/expected.yaml" 2>/dev/null || return 1
	"$OOMFIX" fix -i "$tmp/job.yaml" batch_size >"$tmp/stdout" 2>/dev/null || return 1
	[ ! -s "$tmp/stdout" ] &&
		cmp -s "$tmp/job.yaml" "$tmp/expected.yaml" &&
		cmp -s "$tmp/job.yaml~" "$FIXTURES/per_dataset_batch.yaml" &&
		grep -q "batch_size" "$tmp/job.yaml.oomfix.md" &&
		grep -q "train.batch_size\`*: 3 → 1" "$tmp/job.yaml.oomfix.md" &&
		grep -q "gradient_accumulation\`*: 1 → 4" "$tmp/job.yaml.oomfix.md"
}
check "fix -i saves with a backup and a journal entry" in_place

# -i when every fix is already done: the file and its mtime stay, no journal entry.
in_place_noop() {
	cp "$FIXTURES/conservative.yaml" "$tmp/c.yaml"
	touch -d '2001-01-01 00:00:00' "$tmp/c.yaml"
	"$OOMFIX" fix -i "$tmp/c.yaml" batch_size gradient_checkpointing 2>"$tmp/err" || return 1
	grep -q "already done" "$tmp/err" &&
		cmp -s "$tmp/c.yaml" "$FIXTURES/conservative.yaml" &&
		[ "$(stat -c %Y "$tmp/c.yaml")" = "$(date -d '2001-01-01 00:00:00' +%s)" ] &&
		[ ! -e "$tmp/c.yaml~" ] && [ ! -e "$tmp/c.yaml.oomfix.md" ]
}
check "fix -i with nothing to do leaves the file alone" in_place_noop

# A fix that does not apply: exit 65, nothing written, the file byte-identical, no backup.
failing() {
	cp "$FIXTURES/per_dataset_batch.yaml" "$tmp/f.yaml"
	"$OOMFIX" fix -i "$tmp/f.yaml" batch_size num_frames >"$tmp/stdout" 2>"$tmp/err"
	[ $? -eq 65 ] && cmp -s "$tmp/f.yaml" "$FIXTURES/per_dataset_batch.yaml" &&
		[ ! -e "$tmp/f.yaml~" ] && [ ! -e "$tmp/f.yaml.oomfix.md" ] &&
		grep -q "num_frames: not applicable" "$tmp/err" && [ ! -s "$tmp/stdout" ]
}
check "a failing fix -i leaves the file byte-identical (exit 65)" failing

not_applicable_stdout() {
	"$OOMFIX" fix "$FIXTURES/no_low_vram.yaml" low_vram >"$tmp/stdout" 2>/dev/null
	[ $? -eq 65 ] && [ ! -s "$tmp/stdout" ]
}
check "low_vram on sdxl is not applicable (exit 65, no output)" not_applicable_stdout

already_done() {
	"$OOMFIX" fix "$FIXTURES/conservative.yaml" disable_sampling >"$tmp/stdout" 2>"$tmp/err" &&
		cmp -s "$tmp/stdout" "$FIXTURES/conservative.yaml" &&
		grep -q "disable_sampling: already done (" "$tmp/err"
}
check "an already-done fix prints the file unchanged and says so (exit 0)" already_done

out_file() {
	cp "$FIXTURES/wan_video.yaml" "$tmp/w.yaml"
	"$OOMFIX" fix "$tmp/w.yaml" num_frames >"$tmp/expected.yaml" 2>/dev/null || return 1
	"$OOMFIX" fix -o "$tmp/w-out.yaml" "$tmp/w.yaml" num_frames >"$tmp/stdout" 2>/dev/null || return 1
	cmp -s "$tmp/w-out.yaml" "$tmp/expected.yaml" && cmp -s "$tmp/w.yaml" "$FIXTURES/wan_video.yaml" &&
		[ ! -s "$tmp/stdout" ] && grep -q "num_frames: 61 # oomfix: was 121; five seconds" "$tmp/w-out.yaml"
}
check "fix -o OUT writes OUT and leaves JOB alone" out_file

no_keep() {
	"$OOMFIX" fix --no-keep-batch "$FIXTURES/legacy_accum.yaml" batch_size >"$tmp/nk.yaml" 2>/dev/null &&
		grep -q "gradient_accumulation_steps: 2 # legacy name" "$tmp/nk.yaml" &&
		"$OOMFIX" fix --keep-batch "$FIXTURES/legacy_accum.yaml" batch_size >"$tmp/k.yaml" 2>/dev/null &&
		grep -q "gradient_accumulation_steps: 4 # oomfix: was 2; legacy name" "$tmp/k.yaml"
}
check "--keep-batch / --no-keep-batch" no_keep

next_no_log() {
	"$OOMFIX" fix "$FIXTURES/legacy_accum.yaml" next >"$tmp/n.yaml" 2>"$tmp/err" &&
		grep -q "next: gradient_checkpointing" "$tmp/err" &&
		grep -q "gradient_checkpointing: true # oomfix: was false; turned off" "$tmp/n.yaml"
}
check "fix next without a log takes the first plan step not done" next_no_log

next_all_done() {
	"$OOMFIX" fix "$FIXTURES/conservative.yaml" next >"$tmp/stdout" 2>/dev/null
	[ $? -eq 65 ] && [ ! -s "$tmp/stdout" ]
}
check "fix next with every step done exits 65" next_all_done

# Exit codes.
expect_rc() { # rc, command...
	local want=$1; shift
	"$@" >/dev/null 2>&1
	[ $? -eq "$want" ]
}
check "unknown fix: 64" expect_rc 64 "$OOMFIX" fix "$FIXTURES/conservative.yaml" bogus
check "no fix named: 64" expect_rc 64 "$OOMFIX" fix "$FIXTURES/conservative.yaml"
check "-o and -i together: 64" expect_rc 64 "$OOMFIX" fix -i -o "$tmp/x" "$FIXTURES/conservative.yaml" batch_size
check "unknown option: 64" expect_rc 64 "$OOMFIX" fix --bogus "$FIXTURES/conservative.yaml" batch_size
check "missing job: 66" expect_rc 66 "$OOMFIX" fix "$tmp/none.yaml" batch_size
check "plan without JOB: 64" expect_rc 64 "$OOMFIX" plan
check "plan missing job: 66" expect_rc 66 "$OOMFIX" plan "$tmp/none.yaml"
check "fix --help: 0" expect_rc 0 "$OOMFIX" fix --help
printf 'job: extension\nconfig: [unclosed\n' >"$tmp/bad.yaml"
check "invalid YAML: 65" expect_rc 65 "$OOMFIX" fix "$tmp/bad.yaml" batch_size
bad_place() {
	"$OOMFIX" fix "$tmp/bad.yaml" batch_size 2>&1 >/dev/null | grep -q "bad.yaml:[0-9]*:[0-9]*:"
}
check "invalid YAML error names file:line:col" bad_place
if [ -d "$EXAMPLES" ]; then
	check "invalid upstream example: 65" expect_rc 65 "$OOMFIX" fix "$EXAMPLES/train_lora_omnigen2_24gb.yaml" batch_size
	check "plan on the invalid example: 65" expect_rc 65 "$OOMFIX" plan "$EXAMPLES/train_lora_omnigen2_24gb.yaml"
else
	skip_test "invalid upstream example" "no shared fixtures"
fi
check "--help lists the exit codes" sh -c "'$OOMFIX' fix --help | grep -q '65'"

# plan --json
plan_json() {
	"$OOMFIX" plan --json "$FIXTURES/wan_video.yaml" >"$tmp/p.json" || return 1
	if command -v jq >/dev/null; then
		[ "$(jq -r .model_kind "$tmp/p.json")" = video ] &&
			[ "$(jq '.checklist | length' "$tmp/p.json")" = 6 ] &&
			[ "$(jq -r '.plan[0].fix' "$tmp/p.json")" = num_frames ] &&
			[ "$(jq -r '.plan[1].status' "$tmp/p.json")" = done ] &&
			[ "$(jq -r '.first_fix' "$tmp/p.json")" = num_frames ] &&
			[ "$(jq -r '.verdict' "$tmp/p.json")" = null ] &&
			[ "$(jq -r '.checklist[] | select(.item == "frames") | .done' "$tmp/p.json")" = false ]
	else
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["model_kind"]=="video" and d["first_fix"]=="num_frames" and len(d["checklist"])==6' "$tmp/p.json"
	fi
}
check "plan --json" plan_json

plan_text() {
	"$OOMFIX" plan "$FIXTURES/per_dataset_batch.yaml" >"$tmp/p.txt" || return 1
	grep -q "\[x\] Gradient checkpointing on" "$tmp/p.txt" &&
		grep -q "\[ \] Batch size lowered" "$tmp/p.txt" &&
		grep -q "2\. to do  batch_size" "$tmp/p.txt" &&
		grep -q "First fix.*batch_size" "$tmp/p.txt" &&
		grep -q "scale up" "$tmp/p.txt"
}
check "plan text: checklist, plan, first fix, scale-up" plan_text

# A job written as JSON (the trainer reads .json jobs with a JSON parser) stays JSON after
# every fix, with new keys on their own lines like their siblings.
json_stays_json() { # fix
	"$OOMFIX" fix "$FIXTURES/ui_job.json" "$1" >"$tmp/j.json" 2>/dev/null &&
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/j.json"
}
for fix in gradient_checkpointing batch_size drop_largest_bucket lighter_sampling disable_sampling low_vram; do
	check "JSON job stays valid JSON after $fix" json_stays_json "$fix"
done
json_all() {
	"$OOMFIX" fix "$FIXTURES/ui_job.json" disable_sampling low_vram >"$tmp/j.json" 2>/dev/null &&
		grep -q '^          "disable_sampling": true$' "$tmp/j.json" &&
		grep -q '^          "low_vram": true$' "$tmp/j.json"
}
check "JSON job: inserted keys are quoted and on their own lines" json_all

# One decision, every front end (SPEC §3.4): an OOM whose log does not show when gets no fix on a
# guess from `fix next` (65, nothing written) and the same sentence from `plan` and `diagnose`.
when_unknown_next() {
	local log="$FIXTURES/oom_when_unknown.log" job="$FIXTURES/legacy_accum.yaml" said
	"$OOMFIX" fix --log "$log" "$job" next >"$tmp/wu.yaml" 2>"$tmp/wu.err"
	[ $? -eq 65 ] && [ ! -s "$tmp/wu.yaml" ] || return 1
	grep -q "next: The log does not show when" "$tmp/wu.err" || return 1
	! grep -q "every step" "$tmp/wu.err" || return 1
	command -v jq >/dev/null || return 0
	"$OOMFIX" plan --json --log "$log" "$job" >"$tmp/wu.json" || return 1
	said=$(jq -r 'select(.next.answer == "when_unknown" and .next.fix == null) | .next.text' "$tmp/wu.json")
	[ -n "$said" ] && grep -qF "next: $said" "$tmp/wu.err" || return 1
	"$OOMFIX" diagnose --json --job "$job" "$log" >"$tmp/wu2.json" || return 1
	[ "$(jq -r .next.text "$tmp/wu2.json")" = "$said" ] || return 1
	"$OOMFIX" plan --log "$log" "$job" | tr -s ' \n' ' ' | grep -qF "$said"
}
check "fix next on an OOM whose log does not show when: no fix on a guess, the words plan and diagnose give" when_unknown_next

# With a log: the verdict decides the first fix, and `fix next` follows it.
if [ -d "$CASES" ] && command -v jq >/dev/null; then
	for c in "$CASES"/*/; do
		name=$(basename "$c")
		case_plan() {
			"$OOMFIX" plan --json --log "$1/train.log" "$1/job.yaml" >"$tmp/cp.json" 2>/dev/null || return 1
			local got
			got=$(jq -r '.first_fix' "$tmp/cp.json")
			if [ "$(jq -r '.oom' "$1/expect.json")" = true ]; then
				jq -e --arg f "$got" '.accept_first_fix | index($f) != null' "$1/expect.json" >/dev/null
			else
				[ "$got" = null ]
			fi
		}
		check "plan --log: first fix accepted for $name" case_plan "$c"
	done
	next_log() {
		local c
		c=$(echo "$CASES"/04-*)
		"$OOMFIX" fix --log "$c/train.log" "$c/job.yaml" next >"$tmp/n4.yaml" 2>"$tmp/err" &&
			grep -q "next: num_frames" "$tmp/err" && grep -q "num_frames: 57" "$tmp/n4.yaml"
	}
	check "fix --log next follows the verdict (LTX 121 → 57)" next_log
else
	skip_test "plan --log on the shared cases" "no shared fixtures or jq"
fi

# A fix must act on the phase that failed (SPEC §3.4). The issue's walk: a FLUX job whose model
# load runs out of memory, `fix -i --log LOG JOB next` after each run. The FLUX loader honours
# low_vram, so that is the answer; once it is on nothing else acts on a model load, and `next`
# says so (65, file untouched) instead of stacking batch size, buckets or sampling.
LOADLOG="$TESTS_DIR/diag/cases-verdicts/a-model-load/train.log"
flux_load_walk() {
	cp "$FIXTURES/per_dataset_batch.yaml" "$tmp/fl.yaml"
	"$OOMFIX" fix -i --log "$LOADLOG" "$tmp/fl.yaml" next 2>"$tmp/err" || return 1
	grep -q "next: low_vram" "$tmp/err" || return 1
	[ "$("$OOMFIX" get "$tmp/fl.yaml" config.process[0].model.low_vram)" = true ] || return 1
	cp "$tmp/fl.yaml" "$tmp/fl.before"
	# the next run fails the same way: its log is written after the change was saved
	cp "$LOADLOG" "$tmp/run2.log"
	"$OOMFIX" fix -i --log "$tmp/run2.log" "$tmp/fl.yaml" next 2>"$tmp/err"
	[ $? -eq 65 ] || return 1
	grep -q "exhausted for this phase (loading the model)" "$tmp/err" || return 1
	cmp -s "$tmp/fl.yaml" "$tmp/fl.before"
}
check "fix --log next on a FLUX model load: low_vram, then exhausted (never batch size)" flux_load_walk

# One change, then a run (SPEC §3.4): `next` from the log the last saved change came from would
# stack a second change on one nobody has tried. Refused with 75 and the file untouched; a newer
# log, or --force, chooses again.
untried_change() {
	cp "$SOURCE_ROOT/examples/job.yaml" "$tmp/u.yaml" || return 1
	cp "$SOURCE_ROOT/examples/train.log" "$tmp/u.log"
	touch -d '1 hour ago' "$tmp/u.log"
	"$OOMFIX" fix -i --log "$tmp/u.log" "$tmp/u.yaml" next 2>"$tmp/err" || return 1
	cp "$tmp/u.yaml" "$tmp/u.before"
	"$OOMFIX" fix -i --log "$tmp/u.log" "$tmp/u.yaml" next 2>"$tmp/err"
	[ $? -eq 75 ] || return 1
	grep -q "older than the last change saved" "$tmp/err" || return 1
	cmp -s "$tmp/u.yaml" "$tmp/u.before" || return 1
	"$OOMFIX" fix --force --log "$tmp/u.log" "$tmp/u.yaml" next >/dev/null 2>&1 || return 1
	touch "$tmp/u.log"
	"$OOMFIX" fix -i --log "$tmp/u.log" "$tmp/u.yaml" next 2>"$tmp/err" || return 1
	! cmp -s "$tmp/u.yaml" "$tmp/u.before"
}
check "fix --log next refuses a log older than the last saved change (75, untouched); a newer log or --force chooses" untried_change

# A job reached through a symlink is saved through to its target; the backup and the journal go
# beside the target, and the message names the backup where it really is. The link stays a link.
symlinked_job() {
	mkdir -p "$tmp/real" "$tmp/links"
	cp "$SOURCE_ROOT/examples/job.yaml" "$tmp/real/job.yaml"
	ln -sf ../real/job.yaml "$tmp/links/job.yaml"
	"$OOMFIX" fix -i "$tmp/links/job.yaml" batch_size 2>"$tmp/err" || return 1
	[ -L "$tmp/links/job.yaml" ] && [ -f "$tmp/real/job.yaml~" ] &&
		[ -f "$tmp/real/job.yaml.oomfix.md" ] && [ ! -e "$tmp/links/job.yaml~" ] &&
		[ ! -e "$tmp/links/job.yaml.oomfix.md" ] && grep -qF "$tmp/real/job.yaml~" "$tmp/err" &&
		[ "$("$OOMFIX" get "$tmp/real/job.yaml" config.process[0].train.batch_size)" = 1 ]
}
check "fix -i through a symlink: the target is saved, its backup and journal beside it, the message names them" symlinked_job
plan_marks() {
	"$OOMFIX" plan --json --log "$LOADLOG" "$FIXTURES/per_dataset_batch.yaml" >"$tmp/pm.json" || return 1
	jq -e '.first_fix == "low_vram" and .fixes_exhausted == false
	       and ([.plan[] | select(.helps) | .fix] == ["low_vram"])' "$tmp/pm.json" >/dev/null || return 1
	"$OOMFIX" plan --log "$LOADLOG" "$FIXTURES/per_dataset_batch.yaml" >"$tmp/pm.txt" || return 1
	[ "$(grep -c '(does not help this failure)' "$tmp/pm.txt")" -eq 5 ]
}
if command -v jq >/dev/null; then
	check "plan --log marks the steps that do not act on a model load" plan_marks
else
	skip_test "plan --log marks" "no jq"
fi
SDXL="$TESTS_DIR/diag/cases-plan-phase/a-sdxl-model-load-low-vram-not-applicable"
sdxl_exhausted() {
	"$OOMFIX" diagnose --json --job "$SDXL/job.yaml" "$SDXL/train.log" >"$tmp/sx.json" || return 1
	jq -e '.first_fix == null and .fixes_exhausted == true' "$tmp/sx.json" >/dev/null || return 1
	"$OOMFIX" diagnose --job "$SDXL/job.yaml" "$SDXL/train.log" >"$tmp/sx.txt" || return 1
	grep -q "exhausted for this phase" "$tmp/sx.txt" && grep -q "a card with more" "$tmp/sx.txt" &&
		! grep -q "fresh_worker: stop" <(sed -n '/Rollback plan/,$p' "$tmp/sx.txt")
}
if command -v jq >/dev/null; then
	check "SDXL model load: exhausted, not fresh_worker (no E verdict)" sdxl_exhausted
fi

echo "1..$n"
[ $failed -eq 0 ]
