#!/bin/bash
# Screen-dump golden tests: run the UI headless (--script) over the fixtures and compare each
# dump with tests/ui/golden/NAME.txt. With REGEN=1 the dumps are written as the new goldens
# instead (tests/ui/regen.sh), so a change of screen is reviewed as a diff in git.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
GOLD=$HERE/golden
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 LC_ALL=C.UTF-8 HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config
unset LANGUAGE ESCDELAY
# The fit line's card: an nvidia-smi that fails stands for none (a machine with a card would
# change the screens).
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexit 9\n' > "$WORK/bin/nvidia-smi"
chmod +x "$WORK/bin/nvidia-smi"
export PATH="$WORK/bin:$PATH"

n=0
fails=0
# case NAME SIZE FILES KEYS...: run the keys, dump the screen, compare.
case_() {
	local name=$1 size=$2 files=$3
	shift 3
	local dir=$WORK/$name
	mkdir -p "$dir"
	cp "$FIX"/* "$dir/"
	printf '%s\n' "$@" "dump screen.txt" > "$dir/script"
	n=$((n + 1))
	# shellcheck disable=SC2086
	if ! (cd "$dir" && "$OOMFIX" $files --size "$size" --script script) 2> "$dir/err"; then
		echo "not ok $n - $name: oomfix failed: $(head -c 300 "$dir/err")"
		fails=$((fails + 1))
		return
	fi
	if [ "${REGEN:-0}" = 1 ]; then
		cp "$dir/screen.txt" "$GOLD/$name.txt"
		echo "ok $n - $name (regenerated)"
		return
	fi
	if diff -u "$GOLD/$name.txt" "$dir/screen.txt" > "$dir/diff"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name: screen differs from golden/$name.txt"
		sed 's/^/# /' "$dir/diff"
		fails=$((fails + 1))
	fi
}

for size in 80x24 200x60; do
	case_ "log-$size" "$size" "job.yaml train.log"
	case_ "training-$size" "$size" "job.yaml train.log" Tab Tab Tab
	case_ "datasets-$size" "$size" "job.yaml" Tab Down Down Down
	case_ "plan-$size" "$size" "job.yaml train.log" Tab
	case_ "diff-after-a-$size" "$size" "job.yaml train.log" a d
	case_ "walk-$size" "$size" "job.yaml train.log" w
	case_ "help-$size" "$size" "job.yaml train.log" '?'
done
# 60x20 is the smallest size: the diagnosis under the log, the table compacted to its row.
case_ "log-60x20" 60x20 "job.yaml train.log"
# The too-small screen recovers when the terminal grows again.
case_ "resize-back-80x24" 50x16 "job.yaml train.log" "resize 80x24"
case_ "advanced-after-a-80x24" 80x24 "job.yaml train.log" a S-Tab PgDn
# Where an absent value comes from: inherited from Training, following Quantize, from is_flux.
case_ "datasets-legacy-80x24" 80x24 "legacy.yaml" Tab
case_ "model-legacy-80x24" 80x24 "legacy.yaml" Tab Tab Tab
# The help explains the log's marks (> ! ~): the Log group, paged down to.
case_ "help-marks-80x24" 80x24 "job.yaml train.log" "?" PgDn PgDn Down Down Down Down Down Down
# A terminal shrunk to one cell and grown back draws the whole screen again.
case_ "tiny-back-80x24" 1x1 "job.yaml train.log" "resize 80x24"
# Editing in place: the label stays where it was, the old value is not left in the field, and
# a text longer than the field shows its end (where the typing is) after a '<'.
case_ "edit-in-place-80x24" 80x24 "job.yaml" Down Enter Backspace "text:16"
case_ "edit-long-80x24" 80x24 "job.yaml" Tab Enter \
	"text:/data/a/rather/long/dataset/folder/that/does/not/fit/in/the/field/at/all"
# The save screen's diff runs past the bottom: the question leaves room for where it is. From
# step 3 on, each a asks first (the last change has not been run): y applies it anyway.
case_ "save-scroll-80x24" 80x24 "job.yaml train.log" w a a a y a y a y a y
# A failure that is not out of memory: no OOM table, the evidence right under the verdict, and
# a refuses to apply a memory fix.
case_ "log-not-oom-80x24" 80x24 "job.yaml missing.log" a
# Only a job: the log's keys say a log is needed instead of doing nothing.
case_ "log-no-log-80x24" 80x24 "job.yaml" S-Tab S-Tab S-Tab /
# Only a log: the first change does not promise that a applies it.
case_ "log-no-job-80x24" 80x24 "train.log" n
# A log that holds the trainer's echo of the settings offers to open them read-only.
case_ "log-offers-settings-80x24" 80x24 "train.log"
# Plan without a job: no hint that a applies a step (it cannot); long lines wrap, not clip.
case_ "plan-no-job-80x24" 80x24 "train.log" n Tab
# m shows the longer lesson: the screen moves to it rather than adding it out of sight.
case_ "walk-more-80x24" 80x24 "job.yaml train.log" w m
# A dataset's batch size follows Training: after a, what it was is "inherited", not "default".
case_ "datasets-after-a-80x24" 80x24 "job.yaml train.log" a Tab Tab Tab Tab
# Too small with unsaved changes: q cannot ask, so the screen does not offer it.
case_ "too-small-dirty-50x16" 80x24 "job.yaml train.log" a "resize 50x16"
# One change, then a run: after a, the diagnosis says it is out of date and a asks first.
case_ "a-twice-80x24" 80x24 "job.yaml train.log" a a
case_ "out-of-date-80x24" 80x24 "job.yaml train.log" a
# At the smallest size the out-of-date sentence takes its short form: the marked row stays in sight.
case_ "out-of-date-60x20" 60x20 "job.yaml train.log" a
# A long verdict (E, a conservative job at model load) at 60x20: the table's header gives way,
# so at least the marked row's first line (its letter and cause) is in sight.
case_ "verdict-e-60x20" 60x20 "conservative.yaml cublas-load.log"
# The Plan is a list: j moves the selection (>), Enter applies the selected step.
case_ "plan-pick-80x24" 80x24 "job.yaml train.log" Tab j j Enter
echo "1..$n"
exit $((fails > 0))
