#!/bin/bash
# Benchmark: time to the first screen of the terminal UI on a big log, against `less` on the same
# file, in the same tmux terminal (80x24), best of 3, page cache warm; the time until the verdict
# is shown; and the bytes written to the terminal for one cursor move in the Log view.
#   bench/ui_open.sh [OOMFIX] [SIZE_MB]    (defaults: build/src/cli/oomfix, 1024)
# The time is taken from starting the program in a fresh tmux window until capture-pane (polled
# every 10 ms) shows the log's first line, so it includes starting tmux's pane for both programs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OOMFIX=${1:-$here/../build/src/cli/oomfix}
OOMFIX=$(cd "$(dirname "$OOMFIX")" && pwd)/$(basename "$OOMFIX")
SIZE=${2:-1024}
command -v tmux > /dev/null || { echo "tmux is needed" >&2; exit 69; }
T=$(mktemp -d "${TMPDIR:-/tmp}/oomfix-uibench.XXXXXX")
SOCK=oomfix-uibench-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2> /dev/null; rm -rf "$T"' EXIT

echo "generating a ${SIZE} MiB log in $T ..."
python3 "$here/gen_log.py" "$SIZE" "$T/big.log" 2> /dev/null
cp "$here/../tests/ui/fixtures/job.yaml" "$T/job.yaml"
ls -l "$T/big.log" | awk '{print "  " $5 " bytes"}'
cat "$T/big.log" > /dev/null # page cache
FIRST=$(head -1 "$T/big.log")

now() { date +%s.%N; }
# until SESSION TEXT: seconds from $t0 until TEXT is on the screen (polled every 10 ms, 30 s max)
until_shown() {
	for _ in $(seq 3000); do
		if tm capture-pane -p -t "$1" 2> /dev/null | grep -qF -- "$2"; then
			awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f\n", a - b }'
			return 0
		fi
		sleep 0.01
	done
	echo "timeout"
}
run() { # run NAME CMD: starts CMD in a new 80x24 window; sets t0
	t0=$(now)
	tm new-session -d -s "$1" -x 80 -y 24 -c "$T" "exec env LC_ALL=C.UTF-8 TERM=tmux-256color $2"
}
best() { awk 'BEGIN { b = 1e9 } $1 != "timeout" && $1 < b { b = $1 } END { print b }'; }

tm start-server
tm new-session -d -s keep -x 80 -y 24 # keeps the server up between runs
: > "$T/oomfix.t"; : > "$T/less.t"; : > "$T/verdict.t"
for i in 1 2 3; do
	run "o$i" "'$OOMFIX' job.yaml big.log"
	until_shown "o$i" "$FIRST" >> "$T/oomfix.t"
	until_shown "o$i" "First change:" >> "$T/verdict.t"
	[ "$i" = 3 ] || tm kill-session -t "o$i"
	run "l$i" "less big.log"
	until_shown "l$i" "$FIRST" >> "$T/less.t"
	tm kill-session -t "l$i"
done
o=$(best < "$T/oomfix.t")
l=$(best < "$T/less.t")
v=$(best < "$T/verdict.t")
echo "first screen (log's first line shown), best of 3:"
echo "  oomfix job.yaml big.log   ${o} s   (runs: $(tr '\n' ' ' < "$T/oomfix.t"))"
echo "  less big.log              ${l} s   (runs: $(tr '\n' ' ' < "$T/less.t"))"
awk -v a="$o" -v b="$l" 'BEGIN { printf "  ratio oomfix/less        %.2f\n", a / b }'
echo "verdict shown (\"First change:\"), best of 3: ${v} s   (runs: $(tr '\n' ' ' < "$T/verdict.t"))"

# Bytes for one cursor move in the Log view, with the big log open and the verdict shown.
tm pipe-pane -o -t o3 "cat >> '$T/bytes'"
sleep 0.3
b0=$(stat -c %s "$T/bytes" 2> /dev/null || echo 0)
tm send-keys -t o3 Down
sleep 0.5
b1=$(stat -c %s "$T/bytes" 2> /dev/null || echo 0)
tm send-keys -t o3 g
sleep 0.5
b2=$(stat -c %s "$T/bytes" 2> /dev/null || echo 0)
tm send-keys -t o3 G
sleep 0.5
b3=$(stat -c %s "$T/bytes" 2> /dev/null || echo 0)
tm pipe-pane -t o3
echo "bytes written: one cursor move (Down) $((b1 - b0)), g (top) $((b2 - b1)), G (end) $((b3 - b2))"
tm capture-pane -p -t o3 | sed -n 2p | sed 's/^/  header after G: /'
tm send-keys -t o3 q
