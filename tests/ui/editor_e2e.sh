#!/bin/bash
# End-to-end tests of the editor's first-touch behaviour in a real terminal (tmux), at the sizes
# and locales a new user meets: refused values, LANG=C, the timing table at 80x24, long
# evidence, the Advanced cursor, toggles that go back, files changed on disk. Skipped without
# tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
if ! command -v tmux > /dev/null; then
	echo "1..0 # SKIP tmux is not installed"
	exit 0
fi
WORK=$(mktemp -d)
SOCK=oomfix-ed-$$
T() { tmux -L "$SOCK" -f "$WORK/tmux.conf" "$@"; }
cleanup() { T kill-server 2> /dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
printf 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 0\n' > "$WORK/tmux.conf"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
screen() { T capture-pane -p -t "$1"; }
# wait_for SESSION TEXT: up to 10 s for TEXT to appear on the screen
wait_for() {
	for _ in $(seq 100); do
		screen "$1" | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	echo "# waited in vain for '$2'; screen:"
	screen "$1" | sed 's/^/#   /'
	return 1
}
# on SESSION TEXT: TEXT is on the screen now (after a short settle)
on() { sleep 0.3; screen "$1" | grep -qF -- "$2" || { echo "# not on screen: '$2'"; screen "$1" | sed 's/^/#   /'; return 1; }; }
off() { sleep 0.3; ! screen "$1" | grep -qF -- "$2"; }
fresh() { rm -rf "$WORK/$1"; mkdir -p "$WORK/$1"; cp "$FIX"/* "$WORK/$1/"; }
# start SESSION DIR COLS ROWS ENV ARGS...: ENV is extra env assignments ("" for none)
start() {
	local s=$1 d=$2 c=$3 r=$4 envs=$5
	shift 5
	T new-session -d -s "$s" -x "$c" -y "$r" -c "$WORK/$d" \
		"exec env -u NO_COLOR -u LANGUAGE LC_ALL= LANG=C.UTF-8 $envs TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*"
}
keys() { local s=$1; shift; for k in "$@"; do T send-keys -t "$s" "$k"; sleep 0.05; done; }
typ() { T send-keys -t "$1" -l -- "$2"; sleep 0.05; }

# 1. an out-of-range value is refused with the rule; the typed text stays; the job stays open
fresh range
start range range 80 24 "" job.yaml
wait_for range "Batch Size" > /dev/null
keys range Enter C-u; typ range -3; keys range Enter
check "range: -3 is refused with the rule" on range "at least 1"
check "range: the typed -3 stays in the editor" on range "-3"
keys range Escape
check "range: the panel still shows the job" on range "Gradient Accumulation"
keys range s
check "range: nothing was changed, so nothing to save" on range "Nothing to save"
keys range Down Down Down Down Enter C-u; typ range -1; keys range Enter
check "range: a learning rate of -1 is refused" on range "greater than 0"
keys range Escape q

echo "1..$n"
[ "$fails" -eq 0 ]
