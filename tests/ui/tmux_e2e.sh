#!/bin/bash
# End-to-end tests in a real terminal: oomfix runs inside a detached tmux session on a private
# server; keys are sent with send-keys and the screen read with capture-pane. Covers applying
# the first fix and saving, live resize, SIGHUP with unsaved edits (emergency save and the
# terminal restored), escape sequences in a log (shown as text; no clipboard write, no title
# change), the bytes written for one cursor move (pipe-pane), and a big log whose first screen
# comes before its verdict. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
# set-clipboard on makes tmux store any OSC 52 it receives as a paste buffer, which is how a
# clipboard write would show.
TMUX_CONF_EXTRA='set -g set-clipboard on
'
TMUX_TEST=e2e
. "$HERE/../tmux-lib.sh"
fmt() { T display-message -p -t "$1" "$2"; }
wait_dead() {
	for _ in $(seq 100); do
		[ "$(fmt "$1" '#{pane_dead}')" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
# dead_status SESSION: the exit status of a program started with start_st. tmux 3.3 does not
# always record a pane's exit status (it may see the pty close and never the child's status),
# so the shell around oomfix writes it to a file; wait up to 5 s for it.
dead_status() {
	local st=
	for _ in $(seq 50); do
		[ -s "$WORK/$1.status" ] && st=$(cat "$WORK/$1.status") && break
		sleep 0.1
	done
	echo "$st"
}
fresh() { rm -rf "$WORK/$1"; mkdir -p "$WORK/$1"; cp "$FIX/job.yaml" "$FIX/train.log" "$FIX/escapes.log" "$WORK/$1/"; }
start() { # start SESSION DIR COLS ROWS ARGS...
	local s=$1 d=$2 c=$3 r=$4
	shift 4
	T new-session -d -s "$s" -x "$c" -y "$r" -c "$WORK/$d" \
		"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*"
}
start_st() { # like start, but the exit status is kept for dead_status
	local s=$1 d=$2 c=$3 r=$4
	shift 4
	T new-session -d -s "$s" -x "$c" -y "$r" -c "$WORK/$d" \
		"env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*; echo \$? > '$WORK/$s.status'"
}

# 1. apply the first fix, save with y, quit
fresh save
start_st save save 80 24 job.yaml train.log
wait_for save "Diagnosis" && ok "starts on the Log view" || nok "starts on the Log view"
T send-keys -t save a
wait_for save "[+]" > /dev/null
T send-keys -t save s
wait_for save "Write these changes?" > /dev/null
T send-keys -t save y
check "save: status says saved" wait_for save "Saved job.yaml"
T send-keys -t save q
check "quit: exits" wait_dead save
status=$(dead_status save)
check "quit: exit status 0 (got '$status')" test "$status" = 0
check "save: batch_size changed" grep -q '^        batch_size: 1  # oomfix: was 2; two at a time' "$WORK/save/job.yaml"
check "save: accumulation raised" grep -q '^        gradient_accumulation: 2$' "$WORK/save/job.yaml"
check "save: backup job.yaml~ exists" cmp -s "$WORK/save/job.yaml~" "$FIX/job.yaml"
check "quit: terminal back from the alternate screen" test "$(fmt save '#{alternate_on}')" = 0

# 2. live resize: 80x24 -> 200x60 redraws with the side-by-side layout, and back
fresh resize
start resize resize 80 24 job.yaml train.log
wait_for resize "Diagnosis" > /dev/null
T resize-window -t resize -x 200 -y 60
check "resize: the diagnosis moves beside the log" wait_for resize "|Diagnosis"
check "resize: the tab bar spans 200 columns" bash -c "[ \$(tmux -L '$SOCK' capture-pane -p -t resize | head -1 | wc -L) -gt 150 ]"
T resize-window -t resize -x 50 -y 16
check "resize: too small is said clearly" wait_for resize "Terminal too small"
T resize-window -t resize -x 80 -y 24
check "resize: recovers when enlarged" wait_for resize "Diagnosis"

# 3. bytes written for one cursor move (target: a few hundred at most)
T send-keys -t resize g
sleep 0.5
T pipe-pane -o -t resize "cat >> '$WORK/bytes.log'"
sleep 0.3
before=$(stat -c %s "$WORK/bytes.log" 2> /dev/null || echo 0)
T send-keys -t resize Down
sleep 0.8
after=$(stat -c %s "$WORK/bytes.log" 2> /dev/null || echo 0)
T send-keys -t resize Tab Tab Tab
sleep 0.5
mid=$(stat -c %s "$WORK/bytes.log")
T send-keys -t resize j
sleep 0.8
end=$(stat -c %s "$WORK/bytes.log")
T pipe-pane -t resize
echo "# bytes for one cursor move: log view $((after - before)), Training panel $((end - mid))"
check "one cursor move in the log writes few bytes" test $((after - before)) -gt 0 -a $((after - before)) -lt 400
check "one cursor move in a panel writes few bytes" test $((end - mid)) -gt 0 -a $((end - mid)) -lt 400
T send-keys -t resize q
wait_dead resize > /dev/null

# 4. SIGHUP with unsaved edits: JOB.oomfix-save written, terminal restored, then recovery offered
fresh hup
start hup hup 80 24 job.yaml train.log
wait_for hup "Diagnosis" > /dev/null
T send-keys -t hup a
wait_for hup "[+]" > /dev/null
T pipe-pane -o -t hup "cat >> '$WORK/hup.out'"
sleep 0.3
kill -HUP "$(fmt hup '#{pane_pid}')"
check "SIGHUP: the process ends" wait_dead hup
check "SIGHUP: JOB.oomfix-save written" test -f "$WORK/hup/job.yaml.oomfix-save"
check "SIGHUP: it holds the edit" grep -q '^        batch_size: 1' "$WORK/hup/job.yaml.oomfix-save"
check "SIGHUP: the job file is untouched" cmp -s "$WORK/hup/job.yaml" "$FIX/job.yaml"
check "SIGHUP: alternate screen left" test "$(fmt hup '#{alternate_on}')" = 0
# The handler writes the terminal's own reset strings: leave the alternate screen, show the
# cursor again (rmcup, cnorm of tmux-256color).
check "SIGHUP: cursor shown again (cnorm written)" grep -qF $'\e[?25h' "$WORK/hup.out"
check "SIGHUP: alternate screen left (rmcup written)" grep -qF $'\e[?1049l' "$WORK/hup.out"
start hup2 hup 80 24 job.yaml train.log
check "restart: recovery offered" wait_for hup2 "Recover the unsaved edits"
T send-keys -t hup2 y
check "restart: recovered as unsaved changes" wait_for hup2 "[+]"
T kill-session -t hup2

# 5. a log that tries to drive the terminal
fresh esc
start esc esc 80 24 escapes.log
wait_for esc "Diagnosis" > /dev/null
T send-keys -t esc g
sleep 0.3
screen esc > "$WORK/esc.txt"
check "escapes: OSC 52 visible as text" grep -qF 'clip-esc ^[]52;c;ZXZpbA==^G end' "$WORK/esc.txt"
check "escapes: C1 OSC visible as bytes" grep -qF 'clip-c1 \xC2\x9D52;c;ZXZpbA==^G end' "$WORK/esc.txt"
check "escapes: colour codes visible, not applied" grep -qF '^[[31mred text^[[0m' "$WORK/esc.txt"
check "escapes: no clipboard write reached the terminal" test -z "$(T list-buffers 2> /dev/null)"
check "escapes: the title was not changed" bash -c "! tmux -L '$SOCK' display-message -p -t esc '#{pane_title}' | grep -q PWNED"
T send-keys -t esc q
wait_dead esc > /dev/null

# 6. a big log: the first screen and its first line come at once, "Diagnosing" meanwhile, then
# the verdict; q while the worker reads quits at once
fresh big
head -64 "$FIX/train.log" > "$WORK/big/big.log" # up to the abort: the last skip was the failure
# blanks (on the last line) fill the first 64 KiB: a log mostly NUL there is refused as not text
head -c 70000 /dev/zero | tr '\0' ' ' >> "$WORK/big/big.log"
truncate -s 512M "$WORK/big/big.log"
start big big 80 24 job.yaml big.log
check "big log: the first line is shown" wait_for big "  1 Running 1 job"
screen big > "$WORK/big.txt"
check "big log: diagnosing meanwhile (else the machine read 512 MiB very fast)" grep -qF 'Diagnosing the log' "$WORK/big.txt"
check "big log: the header explains the marks" grep -qF '> evidence  ! out of memory  ~ redrawn line' "$WORK/big.txt"
check "big log: the verdict comes" wait_for big "First change:"
check "big log: then the line count" wait_for big " of 65"
T send-keys -t big q
check "big log: quits" wait_dead big
start_st big2 big 80 24 job.yaml big.log
wait_for big2 "  1 Running 1 job" > /dev/null
T send-keys -t big2 q
check "big log: q while diagnosing quits at once" wait_dead big2
check "big log: exit status 0" test "$(dead_status big2)" = 0

echo "1..$n"
exit $((fails > 0))
