#!/bin/bash
# Benchmark: bytes written to the terminal per second while the UI follows a log that grows by
# 100 lines a second (each line a training-bar frame, as a trainer writes to a file), measured
# with tmux pipe-pane over 10 s in an 80x24 and a 200x60 terminal.
#   bench/ui_follow.sh [OOMFIX] [SECONDS]    (defaults: build/src/cli/oomfix, 10)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OOMFIX=${1:-$here/../build/src/cli/oomfix}
OOMFIX=$(cd "$(dirname "$OOMFIX")" && pwd)/$(basename "$OOMFIX")
SECS=${2:-10}
command -v tmux > /dev/null || { echo "tmux is needed" >&2; exit 69; }
T=$(mktemp -d "${TMPDIR:-/tmp}/oomfix-uifollow.XXXXXX")
SOCK=oomfix-uifollow-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2> /dev/null; rm -rf "$T"' EXIT
cp "$here/../tests/ui/fixtures/job.yaml" "$T/job.yaml"

tm start-server
tm new-session -d -s keep -x 80 -y 24
for size in 80x24 200x60; do
	cols=${size%x*}
	rows=${size#*x}
	printf 'Running 1 job\n# Running job: mug_flux_lora_v1\nLoading Flux model\n' > "$T/log.txt"
	tm new-session -d -s "f$cols" -x "$cols" -y "$rows" -c "$T" \
		"exec env LC_ALL=C.UTF-8 TERM=tmux-256color '$OOMFIX' job.yaml log.txt"
	sleep 1.5 # the first screen and the verdict
	: > "$T/bytes"
	tm pipe-pane -o -t "f$cols" "cat >> '$T/bytes'"
	sleep 0.3
	python3 - "$T/log.txt" "$SECS" << 'PY'
import sys, time
path, secs = sys.argv[1], float(sys.argv[2])
f = open(path, "a")
start = time.monotonic()
n = 0
while True:
    now = time.monotonic()
    if now - start >= secs:
        break
    while n < (now - start) * 100:  # 100 lines a second
        n += 1
        f.write("mug_flux_lora_v1:  %2d%%|###   | %d/100000 [%02d:%02d<9:00:00,  2.50s/it, lr: 1e-04 loss: 0.%04d]\n"
                % (n * 100 // 100000, n, n // 60 % 60, n % 60, n % 10000))
    f.flush()
    time.sleep(0.01)
print(n, file=open(path + ".n", "w"))
PY
	sleep 0.5
	tm pipe-pane -t "f$cols"
	b=$(stat -c %s "$T/bytes")
	lines=$(cat "$T/log.txt.n")
	echo "$size: $lines lines appended in ${SECS} s; $b bytes written to the terminal = $((b / SECS)) bytes/s"
	tm capture-pane -p -t "f$cols" | sed -n 2p | sed 's/^/  header: /'
	tm kill-session -t "f$cols"
done
