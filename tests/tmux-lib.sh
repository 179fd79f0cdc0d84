# tmux-lib.sh — what the end-to-end tests in a real terminal share. Sourced (bash) after setting
# TMUX_TEST (a short name for the private tmux server) and, optionally, TMUX_CONF_EXTRA (more
# tmux.conf lines). Skips the whole test (TAP plan 1..0) when tmux is not installed.
#
# Gives: WORK (a temporary folder, removed at exit with the tmux server and any background job),
# T (tmux on the private server), TAP counters n/fails with ok, nok and check, screen SESSION
# (the pane as text) and wait_for SESSION TEXT [SECONDS] (10 s unless said; prints the screen when
# in vain), and near NAME PATH.
if ! command -v tmux > /dev/null; then
	echo "1..0 # SKIP tmux is not installed"
	exit 0
fi
WORK=$(mktemp -d)
SOCK=oomfix-${TMUX_TEST:?set TMUX_TEST before sourcing tmux-lib.sh}-$$
T() { tmux -L "$SOCK" -f "$WORK/tmux.conf" "$@"; }
tmux_cleanup() {
	local j
	j=$(jobs -p)
	[ -n "$j" ] && kill $j 2> /dev/null
	T kill-server 2> /dev/null
	# a UI killed with unsaved changes writes its emergency save as it goes: until it is done
	# the folder may refill, so try again a few times
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rm -rf "$WORK" 2> /dev/null && break
		sleep 0.3
	done
}
trap tmux_cleanup EXIT
# remain-on-exit keeps a pane readable after the program ends.
printf 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 0\n%s' \
	"${TMUX_CONF_EXTRA:-}" > "$WORK/tmux.conf"

# near NAME PATH: a link WORK/NAME to PATH (made absolute and free of `..`), printed. A check that
# waits for a command or a path on screen names it this way, so that what the screen shows has the
# same length wherever the repository was cloned (a long path would scroll a line editor's text).
near() {
	local dir
	dir=$(cd "$(dirname "$2")" && pwd -P) || return 1
	ln -s "$dir/$(basename "$2")" "$WORK/$1" && printf '%s\n' "$WORK/$1"
}

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
screen() { T capture-pane -p -t "$1"; }
wait_for() { # SESSION TEXT [SECONDS]
	for _ in $(seq $((${3:-10} * 10))); do
		screen "$1" | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	echo "# waited in vain for '$2'; screen:"
	screen "$1" | sed 's/^/#   /'
	return 1
}
wait_read() { # SESSION [SECONDS]: the log on screen has been read (its verdict is in, its lines
	# counted), so that a key that needs the verdict (a) is not pressed while the worker reads
	# (slow under ASan)
	for _ in $(seq $((${2:-30} * 10))); do
		screen "$1" | grep -qE "Diagnosing the log|\(counting\.\.\.\)" || return 0
		sleep 0.1
	done
	echo "# the log was still being read; screen:"
	screen "$1" | sed 's/^/#   /'
	return 1
}
