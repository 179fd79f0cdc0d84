#!/bin/bash
# The Japanese command-line reports in a real terminal (tmux) at 100x30, 80x24 and 60x20, printed
# as TAP: `oomfix diagnose` (the example log, and a Wan video job with its log when the shared
# fixtures are there), `oomfix plan --log`, and the --help of oomfix, retry and fix. On every
# screen: no line wider than the terminal (the terminal would break it anywhere), no katakana word
# split over two lines, no line that starts with closing punctuation, no 「。 」 inside a line.
TMUX_TEST=jascr
TMUX_CONF_EXTRA='set -g history-limit 5000'
. "$(dirname "$0")/../tmux-lib.sh"
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
	echo "1..0 # SKIP python3 is needed to measure cells"
	exit 0
fi
cp -r "$SOURCE_ROOT/examples" "$WORK/ex"
WAN=${SHARED_FIXTURES:-/nonexistent}/cases/06-wan21-video-preview-sample
[ -f "$WAN/job.yaml" ] && cp -r "$WAN" "$WORK/wan"

# layout.py FILE COLS: the checks above, one line of explanation per problem. --help is text
# laid out for 80 columns (as in English): at 60 its limit is 80 cells, the reports' the width.
cat > "$WORK/layout.py" << 'PYEOF'
import re, sys, unicodedata
lines = open(sys.argv[1], encoding='utf-8').read().rstrip('\n').split('\n')
cols = int(sys.argv[2])
def cells(s):
    return sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in s)
def kata(c):
    return '\u30a1' <= c <= '\u30fa' or c == '\u30fc'
bad = 0
for i, l in enumerate(lines):
    # the command that shows the change stays whole on its own line, to be copied
    if cells(l) > cols and not l.startswith('  oomfix fix --diff '):
        print('line %d is %d cells: %s' % (i + 1, cells(l), l)); bad += 1
    s = l.strip()
    if s and s[0] in '、。）」』，．？！':
        print('line %d starts with %s: %s' % (i + 1, s[0], l)); bad += 1
    if re.search('。 +\\S', l):
        print('line %d has 「。 」: %s' % (i + 1, l)); bad += 1
    if i + 1 < len(lines):
        a, b = l.rstrip(), lines[i + 1].strip()
        if a and b and kata(a[-1]) and kata(b[0]):
            print('katakana word split at lines %d-%d: %s | %s' % (i + 1, i + 2, a, b)); bad += 1
if not any('\u3040' <= c <= '\u30ff' for c in ''.join(lines)):
    print('no Japanese on the screen'); bad += 1
sys.exit(1 if bad else 0)
PYEOF

shot() { # NAME COLSxROWS LIMIT COMMAND...: runs the command in a terminal of that size and checks
	# its output, each line within LIMIT cells. The shell stays (sleep) until the pane is read:
	# when it exits at once, a loaded tmux can mark the pane dead before it has drawn the end of
	# the output, and __END__ never shows ("ends" failed under load).
	local name=$1 size=$2 limit=$3 s=s$n
	shift 3
	printf '%q ' "$@" > "$WORK/cmd"
	T new-session -d -s "$s" -x "${size%x*}" -y "${size#*x}" -c "$WORK" \
		"LANGUAGE=ja LANG=C.UTF-8 LC_ALL= NO_COLOR=1 $(cat "$WORK/cmd") > /dev/tty 2>&1; echo; echo __END__; sleep 60"
	if ! wait_for "$s" __END__ 20 > "$WORK/why"; then
		nok "$name at $size ends"
		sed 's/^/# /' "$WORK/why"
		return
	fi
	# -J joins what the terminal wrapped, so a line too long shows as one line too wide
	T capture-pane -p -J -S - -t "$s" | sed '/^__END__$/,$d' > "$WORK/screen"
	T kill-session -t "$s"
	if "$PY" "$WORK/layout.py" "$WORK/screen" "$limit" > "$WORK/why" 2>&1; then
		ok "$name at $size: lines fit, no split katakana word, kinsoku kept"
	else
		nok "$name at $size: lines fit, no split katakana word, kinsoku kept"
		sed 's/^/# /' "$WORK/why"
	fi
}

for size in 100x30 80x24 60x20; do
	w=${size%x*}
	shot "diagnose" "$size" "$w" "$OOMFIX" diagnose ex/train.log
	shot "diagnose --job" "$size" "$w" "$OOMFIX" diagnose --job ex/job.yaml ex/train.log
	if [ -d "$WORK/wan" ]; then
		shot "diagnose --job (Wan 2.1)" "$size" "$w" "$OOMFIX" diagnose --job wan/job.yaml wan/train.log
		shot "plan --log (Wan 2.1)" "$size" "$w" "$OOMFIX" plan --log wan/train.log wan/job.yaml
	fi
	shot "plan --log" "$size" "$w" "$OOMFIX" plan --log ex/train.log ex/job.yaml
	[ "$w" -lt 80 ] && w=80
	shot "--help" "$size" "$w" "$OOMFIX" --help
	shot "retry --help" "$size" "$w" "$OOMFIX" retry --help
	shot "fix --help" "$size" "$w" "$OOMFIX" fix --help
done
echo "1..$n"
