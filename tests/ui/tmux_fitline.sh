#!/bin/bash
# The fit line under the field panels (SPEC §12), in a real terminal (tmux): the estimate of the
# job being edited, its peak and phase, the card, the verdict and a small bar per phase; it
# changes at once when the batch size is lowered or Low VRAM turned on; 80x24 and 60x20 (the bars
# go first), ASCII under LANG=C, no colour; the card from --vram, else the log's OOM message,
# else no verdict; an arch without a table row; and the Diff's estimate before -> after.
# Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=fitline
. "$HERE/../tmux-lib.sh"
# batch 4, so that training is the peak phase (at batch 2 the load of the bf16 transformer is)
sed 's/batch_size: 2 /batch_size: 4 /' "$FIX/job.yaml" > "$WORK/job.yaml"
grep -q "batch_size: 4 " "$WORK/job.yaml" || { echo "Bail out! the fixture's batch_size line moved"; exit 1; }
cp "$FIX/shared-card.log" "$WORK/train.log"
sed 's/arch: "flux"/arch: "nosuchmodel"/' "$FIX/job.yaml" > "$WORK/odd.yaml"
# An nvidia-smi that fails stands for none (a machine with a card would give its size).
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexit 9\n' > "$WORK/bin/nvidia-smi"
chmod +x "$WORK/bin/nvidia-smi"
echo "1..24"
start() { # start SESSION COLSxROWS LOCALE ARGS...
	local s=$1 cols=${2%x*} rows=${2#*x} loc=$3
	shift 3
	T new-session -d -s "$s" -x "$cols" -y "$rows" -c "$WORK" \
		"exec env PATH='$WORK/bin:$PATH' LC_ALL=$loc TERM=tmux-256color HOME='$WORK' NO_COLOR=1 '$OOMFIX' $*"
}
keys() { local s=$1; shift; T send-keys -t "$s" "$@"; sleep 0.3; }
fitrow() { screen "$1" | grep -F "Estimate:" | head -1; }
peak() { fitrow "$1" | sed -n 's/.*peak \([0-9.]*\) GiB.*/\1/p'; }
barrow() { screen "$1" | grep -E '^ +model load \[' | head -1; }
widest() { LC_ALL=C.UTF-8 wc -L; }

# 80x24, UTF-8, no colour, --vram 24
start big 80x24 C.UTF-8 --vram 24 job.yaml
wait_for big "Estimate:" > /dev/null
screen big > "$WORK/big.txt"
check "80x24: the fit line names the peak, its phase, the card and the verdict" \
	grep -qE "Estimate: peak [0-9.]+ GiB at training, 24.0 GiB card: (fits|tight at|will not fit at)" "$WORK/big.txt"
check "80x24: a bar per phase, in one row" \
	bash -c 'grep -qE "^ +model load \[[█░]+\]. +caching \[[█░]+\]. +training \[[█░]+\]. +sampling \[[█░]+\]" "$0"' "$WORK/big.txt"
check "80x24: the fields are all still shown" grep -qF "Data Type" "$WORK/big.txt"
check "80x24: no line wider than 80" test "$(widest < "$WORK/big.txt")" -le 80
before=$(peak big)
bars_before=$(barrow big)
# lower the batch size (the first row of Training): the line changes at once
keys big Enter C-u
T send-keys -t big -l 1
keys big Enter
wait_for big "Batch Size              1" > /dev/null
after=$(peak big)
check "lowering the batch size lowers the estimated peak at once ($before -> $after GiB)" \
	awk -v a="$before" -v b="$after" 'BEGIN { exit !(b + 0 > 0 && b + 0 < a + 0) }'
# the Diff shows the estimate before -> after
keys big d
screen big > "$WORK/diff.txt"
check "the Diff shows the estimate before the change" grep -qF "Estimate before: peak $before GiB at training" "$WORK/diff.txt"
check "... and after it" grep -qE "→ after: peak $after GiB at " "$WORK/diff.txt"
keys big Escape
# Low VRAM in the Model panel: the model load bar shrinks at once
keys big Tab Tab Tab
wait_for big "Low VRAM" > /dev/null
lb_before=$(barrow big)
keys big Down Down Space
wait_for big "Low VRAM               [x]" > /dev/null
lb_after=$(barrow big)
check "turning on Low VRAM changes the bars at once" test -n "$lb_after" -a "$lb_before" != "$lb_after"
count() { printf '%s' "$1" | sed -n 's/.*model load \[\([^]]*\)\].*/\1/p' | grep -o '█' | wc -l; }
check "... the model load bar is shorter ($(count "$lb_before") -> $(count "$lb_after") cells)" \
	test "$(count "$lb_after")" -lt "$(count "$lb_before")"
check "the bars row was there before the edits too" test -n "$bars_before"

# 60x20, LANG=C: ASCII, the words without the bars, nothing wider than 60
start small 60x20 C --vram 24 job.yaml
wait_for small "Estimate:" > /dev/null
screen small > "$WORK/small.txt"
check "60x20: the words of the fit line are there, the verdict too" \
	bash -c 'tr "\n" " " < "$0" | grep -qE "24.0 GiB card: +(fits|tight at|will not fit at)"' "$WORK/small.txt"
check "60x20: the bars are dropped before the words" bash -c '! grep -qF "model load [" "$0"' "$WORK/small.txt"
check "60x20: the fields keep their rows" grep -qF "Data Type" "$WORK/small.txt"
check "60x20: no line wider than 60" test "$(widest < "$WORK/small.txt")" -le 60
check "LANG=C: only ASCII on screen" bash -c '! LC_ALL=C grep -q "[^ -~]" "$0"' "$WORK/small.txt"
# LANG=C with room for the bars: ASCII fills
start asc 80x24 C --vram 24 job.yaml
wait_for asc "Estimate:" > /dev/null
check "LANG=C: the bars use # and ." bash -c 'grep -qE "^ +model load \[[#.]+\]" <(tmux -L "$0" -f "$1" capture-pane -p -t asc)' "$SOCK" "$WORK/tmux.conf"

# the card: none given and no nvidia-smi, no log: no verdict, and how to get one
start nocard 80x24 C.UTF-8 job.yaml
wait_for nocard "Estimate:" > /dev/null
check "no card known: the estimate without a verdict, naming --vram" bash -c 'grep -qE "Estimate: peak [0-9.]+ GiB at training \(--vram gives a verdict\)" <(tmux -L "$0" -f "$1" capture-pane -p -t nocard)' "$SOCK" "$WORK/tmux.conf"
# ... the log's OOM message gives it (47.53 GiB)
start logcard 80x24 C.UTF-8 job.yaml train.log
keys logcard Escape
wait_for logcard "GPU memory when it failed" > /dev/null
keys logcard 1
wait_for logcard "Estimate:" > /dev/null
check "no --vram: the card of the log's OOM message" bash -c 'grep -qF "47.5 GiB card:" <(tmux -L "$0" -f "$1" capture-pane -p -t logcard)' "$SOCK" "$WORK/tmux.conf"
# ... nvidia-smi gives it, asked in the background: a 4090 (24564 MiB)
mkdir -p "$WORK/smi"
printf '#!/bin/sh\nsleep 2\ncase "$1" in --query-gpu=*) echo "0, GPU-aaa, NVIDIA GeForce RTX 4090, 24564, 0" ;; esac\nexit 0\n' > "$WORK/smi/nvidia-smi"
chmod +x "$WORK/smi/nvidia-smi"
T new-session -d -s smi -x 80 -y 24 -c "$WORK" \
	"exec env PATH='$WORK/smi:$PATH' LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' NO_COLOR=1 '$OOMFIX' job.yaml"
wait_for smi "Estimate:" > /dev/null
first=$(fitrow smi)
wait_for smi "24.0 GiB card:" > /dev/null
check "nvidia-smi: the first screen does not wait for it, its card comes after" \
	bash -c '[[ "$0" == *"(--vram gives a verdict)"* ]] && tmux -L "$1" -f "$2" capture-pane -p -t smi | grep -qE "Estimate: peak [0-9.]+ GiB at training, 24.0 GiB card: "' "$first" "$SOCK" "$WORK/tmux.conf"
# an arch without a table row: no number
start odd 80x24 C.UTF-8 --vram 24 odd.yaml
wait_for odd "Estimate:" > /dev/null
check "an arch without a table row: no estimate, said so" bash -c 'grep -qF "no estimate for arch '"'"'nosuchmodel'"'"'" <(tmux -L "$0" -f "$1" capture-pane -p -t odd)' "$SOCK" "$WORK/tmux.conf"
# a run of this job that ran out of memory (the CLI read its log with the job): the fit line
# shows what it measured, and the verdict follows it
mkdir -p "$WORK/own"
sed 's/batch_size: 4 /batch_size: 2 /' "$WORK/job.yaml" > "$WORK/own/job.yaml"
cp "$HERE/../diag/cases-memory-trainers/m-torch25-this-process-step-4/train.log" "$WORK/own/oom.log"
OOMFIX_MEASUREMENTS="$WORK/own/m.db" "$OOMFIX" diagnose --job "$WORK/own/job.yaml" "$WORK/own/oom.log" > /dev/null
T new-session -d -s own -x 100 -y 30 -c "$WORK/own" \
	"exec env PATH='$WORK/bin:$PATH' OOMFIX_MEASUREMENTS='$WORK/own/m.db' LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' NO_COLOR=1 '$OOMFIX' --vram 23.52GiB job.yaml"
wait_for own "Estimate:" > /dev/null
check "a measured run: the fit line names what it measured" \
	bash -c 'tmux -L "$0" -f "$1" capture-pane -p -t own | tr -s " \n" " " | grep -qF "(measured: training needed at least"' "$SOCK" "$WORK/tmux.conf"
check "... and the verdict follows it: will not fit at training" \
	bash -c 'tmux -L "$0" -f "$1" capture-pane -p -t own | tr -s " \n" " " | grep -qF "card: will not fit at training"' "$SOCK" "$WORK/tmux.conf"
# one card (SPEC §12.2, review 4 E3): nvidia-smi shows another process holding 6.2 GiB; the
# fit line says the job fits alone but not beside it, as `oomfix estimate` and `retry` do
mkdir -p "$WORK/tenant/bin"
cp "$HERE/../estimate/examples/train_lora_flux_24gb.yaml" "$WORK/tenant/job.yaml"
printf '#!/bin/sh\ncase "$1" in --query-gpu=*) echo "0, GPU-aaa, NVIDIA GeForce RTX 3090, 24576, 6400" ;; --query-compute-apps=*) echo "GPU-aaa, 4242, 5837" ;; esac\nexit 0\n' > "$WORK/tenant/bin/nvidia-smi"
chmod +x "$WORK/tenant/bin/nvidia-smi"
T new-session -d -s tenant -x 100 -y 30 -c "$WORK/tenant" \
	"exec env PATH='$WORK/tenant/bin:$PATH' LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' NO_COLOR=1 '$OOMFIX' job.yaml"
wait_for tenant "other processes hold" > /dev/null
# wait_joined SESSION REGEX: the screen, its rows joined, matches (the fit line is redrawn as the
# estimate and nvidia-smi's answer come in; a wrapped row joins the next)
wait_joined() {
	for _ in $(seq 100); do
		screen "$1" | tr -s " \n" " " | grep -qE -- "$2" && return 0
		sleep 0.1
	done
	echo "# waited in vain for /$2/; screen:"
	screen "$1" | sed 's/^/#   /'
	return 1
}
check "a card another process holds: the fit line says it fits alone, not beside it" \
	wait_joined tenant "24.0 GiB card: fits; with the 6.2 GiB others hold: will not fit at"
# ... and at 60x20 the verdict is not cut short: the words take a third row
T new-session -d -s tenant60 -x 60 -y 20 -c "$WORK/tenant" \
	"exec env PATH='$WORK/tenant/bin:$PATH' LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' NO_COLOR=1 '$OOMFIX' job.yaml"
wait_for tenant60 "others hold" > /dev/null
check "60x20: the whole verdict beside the others, on three rows" \
	bash -c 'tmux -L "$0" -f "$1" capture-pane -p -t tenant60 | tr -s " \n" " " | grep -qE "with the 6.2 GiB others hold: will not fit at model load"' "$SOCK" "$WORK/tmux.conf"
exit $((fails > 0))
