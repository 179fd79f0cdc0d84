#!/bin/bash
# End-to-end tests of the editor's first-touch behaviour in a real terminal (tmux), at the sizes
# and locales a new user meets: refused values, LANG=C, the timing table at 80x24, long
# evidence, the Advanced cursor, toggles that go back, files changed on disk. Skipped without
# tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=ed
. "$HERE/../tmux-lib.sh"
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

# 5. Advanced: the cursor stops at the last line (G, j x5, then one k is the line above)
# cursor_row SESSION: the text of the row drawn in reverse video (the cursor)
cursor_row() { T capture-pane -e -p -t "$1" | sed -n '2,$p' | grep -a $'^\e\[7m' | head -1; }
fresh adv
start adv adv 80 24 "NO_COLOR=1" job.yaml
wait_for adv "Batch Size" > /dev/null
keys adv Tab Tab Tab Tab G
sleep 0.3
last=$(cursor_row adv)
keys adv j j j j j k
sleep 0.3
check "advanced: j past the end stays on the last line, one k goes up one" \
	bash -c "[[ '$last' == *' 53 '* ]] && [[ '$(cursor_row adv)' == *' 52 '* ]]"
keys adv q

# 7. a switch toggled twice leaves no change; an empty value where the key is absent changes
# nothing and leaves nothing to undo
fresh tog
start tog tog 80 24 "" job.yaml
wait_for tog "Batch Size" > /dev/null
keys tog Tab Tab G Space
check "toggle: the first Space changes Disable Sampling" on tog "[+]"
keys tog Space
check "toggle: the second Space restores the loaded file" off tog "[+]"
keys tog d
check "toggle: the Diff has nothing" on tog "No unsaved changes"
keys tog q
fresh arch
start arch arch 80 24 "" legacy.yaml
wait_for arch "Batch Size" > /dev/null
keys arch Tab Tab Tab Enter C-u Enter
check "arch: an empty value on an absent key says nothing changed" on arch "nothing changed"
keys arch u
check "arch: and there is nothing to undo" on arch "Nothing to undo"
keys arch q

# 2. LANG=C: ASCII stand-ins measured as drawn, and one word on how to get the full display
fresh asc
printf 'step bar\nmug:  25%%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88      | 500/2000 [01:00<03:00]\n' > "$WORK/asc/bar.log"
start asc asc 80 24 "LANG=C" job.yaml bar.log
wait_for asc "Diagnosis" > /dev/null
check "LANG=C: says once that UTF-8 gives the full display" on asc "UTF-8 locale"
check "LANG=C: a progress bar is drawn with #" on asc "25%|#####      | 500/2000"
keys asc Tab
check "LANG=C: an arrow is ->" on asc "batch size 2 -> 1"
check "LANG=C: a times sign is x" on asc "samples 1024x1024"
check "LANG=C: no ? stands for a character on the Plan" bash -c "! tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t asc | sed -n '2,21p' | grep -qF '?'"
keys asc q
# and the same in a UTF-8 locale keeps the real characters
fresh utf
cp "$WORK/asc/bar.log" "$WORK/utf/"
start utf utf 80 24 "" job.yaml bar.log
wait_for utf "Diagnosis" > /dev/null
check "UTF-8: the bar keeps its blocks" on utf "25%|█████      |"
check "UTF-8: no word about the locale" off utf "UTF-8 locale"
keys utf q

# 3. at 80x24 the marked timing row and its first change are on screen for every verdict
CASES=$HERE/../diag
# (the cells wrap item by item: the first item of the change is on the row's first line)
for v in "C|cases-verdicts/c-sampling-after-save|C while sampling|lighter sampling," \
	 "D|cases-verdicts/d-skips-survived|D later, or skips|drop the largest bucket" \
	 "E|cases-archs-captures/e-cublas-model-load-conservative|E environment|fresh worker;"; do
	IFS='|' read -r id dir when change <<< "$v"
	fresh "t$id"
	cp "$CASES/$dir/train.log" "$WORK/t$id/case.log"
	args=case.log
	[ -f "$CASES/$dir/job.yaml" ] && cp "$CASES/$dir/job.yaml" "$WORK/t$id/case.yaml" && args="case.yaml case.log"
	start "t$id" "t$id" 80 24 "" $args
	wait_for "t$id" "Diagnosis" > /dev/null
	check "80x24: the $id row is marked on screen" on "t$id" "> $when"
	check "80x24: the $id row's first change is on screen" on "t$id" "$change"
	keys "t$id" q
done
# with room the whole table is there
start tbig tC 120 40 "" case.log
wait_for tbig "Diagnosis" > /dev/null
wait_for tbig "> C while" > /dev/null
check "120x40: the whole table is shown" on tbig "A before"
check "120x40: the C row is marked" on tbig "> C while"
keys tbig q

# 4. long lines: the evidence is shown whole, the log scrolls sideways (>) or wraps (W)
fresh long
cp "$HERE/../../examples/train.log" "$WORK/long/ex.log"
cp "$CASES/cases-archs-captures/missing-control-image/train.log" "$WORK/long/miss.log"
start long long 120 40 "" ex.log
wait_for long "Evidence" > /dev/null
keys long n # not the settings from the log now
# line 137 is one physical line: the bar, then the abort message glued to it
keys long W o o o
check "120x40: with W the log shows line 137's abort message" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t long | sed -n '3,38p' | cut -c1-66 | grep -qF 'aborting training'"
keys long q
start miss long 80 24 "" miss.log
wait_for miss "Evidence" > /dev/null
keys miss n # its settings are in it: not now
check "80x24: the evidence names the whole missing path" on miss "'/app/ai-toolkit/datasets/kontext_missing_ctrl/control/img_0042.png'"
keys miss '>'
check "80x24: > scrolls the log sideways" on miss "kontext_missing_ctrl/control/"
keys miss '<' W j
check "80x24: W wraps long lines" on miss "[wrapped]"
check "80x24: the wrapped line shows its end" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t miss | sed -n '3,11p' | grep -qF 'img_0042.png'"
keys miss q

# 8. the file changes on disk: the next key offers to reload it, with the unsaved edits kept
fresh disk
start disk disk 80 24 "" job.yaml
wait_for disk "Batch Size" > /dev/null
keys disk a
wait_for disk "[+]" > /dev/null
sed -i 's/steps: 2000/steps: 3000/' "$WORK/disk/job.yaml"
keys disk j
check "disk: the next key offers to reload" on disk "changed on disk. Reload it?"
keys disk y
check "disk: reloaded, the unsaved edits re-applied" on disk "re-applied"
keys disk s y
sleep 0.5
check "disk: the saved file has the other program's change" grep -q '^        steps: 3000' "$WORK/disk/job.yaml"
check "disk: and the unsaved edit" grep -q '^        batch_size: 1' "$WORK/disk/job.yaml"
keys disk q
# the file removed on disk: one question, an error on y, and no question on every key after
fresh gone
start gone gone 80 24 "" job.yaml
wait_for gone "Batch Size" > /dev/null
rm "$WORK/gone/job.yaml"
keys gone j
check "removed: the next key asks" on gone "changed on disk. Reload it?"
keys gone y j
check "removed: after the error the keys work again" off gone "Reload it?"
keys gone q
# a recovered emergency save: once saved, the recovery file is gone and the journal names the fix
fresh rec
"$OOMFIX" fix "$WORK/rec/job.yaml" batch_size > "$WORK/rec/job.yaml.oomfix-save" 2> /dev/null
touch -d '+2 seconds' "$WORK/rec/job.yaml.oomfix-save"
start rec rec 80 24 "" job.yaml
wait_for rec "Recover the unsaved edits" > /dev/null
keys rec y s y
sleep 0.5
check "recover: saved" grep -q '^        batch_size: 1' "$WORK/rec/job.yaml"
check "recover: the .oomfix-save file is removed after the save" test ! -e "$WORK/rec/job.yaml.oomfix-save"
check "recover: the journal names the fix" grep -q '^Fixes:.*batch_size' "$WORK/rec/job.yaml.oomfix.md"
check "recover: the journal does not say Manual edits" bash -c "! grep -q 'Manual edits' '$WORK/rec/job.yaml.oomfix.md'"
keys rec q

# friction: the footer always offers help and quit; digits go to views; Esc and q leave Plan and
# Diff back to where the user was; the quit question offers to save first
fresh fr
start fr fr 80 24 "" job.yaml train.log
wait_for fr "Diagnosis" > /dev/null
check "footer at 80x24 on the Log view has ? help" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t fr | tail -1 | grep -qF '? help'"
check "footer at 80x24 on the Log view has q quit" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t fr | tail -1 | grep -qF 'q quit'"
keys fr 7
check "digit 7 goes to the Plan" on fr "[Plan]"
check "the Plan's footer says q goes back" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t fr | tail -1 | grep -qF 'q back'"
keys fr Escape
check "Esc leaves the Plan back to the Log" on fr "[Log]"
keys fr 1 d
check "d shows the Diff" on fr "[Diff]"
keys fr q
check "q in the Diff goes back to Training, not out" on fr "[Training]"
keys fr a q
check "quitting with edits offers to save first" on fr "s = save them and quit"
keys fr s
check "s shows the save screen" on fr "Write these changes?"
keys fr y
sleep 0.5
check "after the save the program has quit" test "$(T display-message -p -t fr '#{pane_dead}')" = 1
check "and the file was saved" grep -q '^        batch_size: 1' "$WORK/fr/job.yaml"

# 60x20 works: the diagnosis under the log, its marked row in view, help and quit offered
fresh small
start small small 60 20 "" job.yaml train.log
wait_for small "Diagnosis" > /dev/null
check "60x20: not too small" off small "Terminal too small"
check "60x20: the marked row is in view" on small "> B first steps"
check "60x20: the footer offers help" on small "? help"
keys small 1
check "60x20: the Training panel shows its values" on small "Batch Size"
keys small q

# search in every text view, with the match count; O goes back to the previous evidence
fresh srch
start srch srch 80 24 "" job.yaml train.log
wait_for srch "Diagnosis" > /dev/null
keys srch O
check "O jumps to the previous evidence line (wrapping to the last)" on srch "Evidence at line 64"
keys srch 7 /; typ srch "sampling"; keys srch Enter
check "/ in the Plan finds a match and counts them" on srch "Match 1 of"
keys srch n
check "n goes to the next match in the Plan" on srch "Match 2 of"
keys srch 5 /; typ srch "lr:"; keys srch Enter
check "/ in Advanced finds the line" on srch "Match 1 of 1"
check "and puts the cursor on it" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t srch | grep -qF 'lr: 1e-4'"
keys srch q

# from 120 columns a help line for the selected field: its path, memory, default, what it takes
fresh fh
start fh fh 120 40 "" job.yaml
wait_for fh "Batch Size" > /dev/null
check "120x40: the field help names the YAML path" on fh "config.process[0].train.batch_size:"
check "120x40: and what it does to memory and its default" bash -c "tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t fh | tr '\\n' ' ' | tr -s ' ' | grep -qF 'memory grows with the batch. Default: 1.'"
keys fh q
start fh2 fh 80 24 "" job.yaml
wait_for fh2 "Batch Size" > /dev/null
check "80x24: no field help line" off fh2 "config.process[0].train.batch_size:"
keys fh2 q

# the mouse where the terminal sends it (tmux-256color: X10 reports, ESC [ M b x y, +32/+33)
mouse() { T send-keys -t "$1" -l $'\e[M'"$2"; sleep 0.1; }
fresh ms
start ms ms 80 24 "" job.yaml train.log
wait_for ms "Diagnosis" > /dev/null
mouse ms ' T!'; mouse ms '#T!'
check "mouse: a click on a tab opens it" on ms "[Plan]"
mouse ms 'a!*'
# the Plan is a list: the wheel moves its selection three steps, as j does (step 2 → 5)
check "mouse: the wheel moves the Plan's selection" on ms "> 5. [ ]"
mouse ms ' !!'; mouse ms '#!!'
check "mouse: a click on the first tab opens Training" on ms "[Training]"
mouse ms " *&"; keys ms Enter
check "mouse: a click on a panel row selects it (Enter edits Optimizer)" on ms "Type the text"
keys ms Escape q

# log only: keys that need a job are not offered; the trainer's echo of the settings opens
# read-only, so the panels and the plan work from the log alone
fresh lo
sed '2,19d' "$FIX/train.log" > "$WORK/lo/noecho.log" # the trainer's echo of the settings cut out
start lo lo 80 24 "" noecho.log
wait_for lo "Diagnosis" > /dev/null
check "log only: the footer does not offer a (apply fix)" bash -c "! tmux -L '$SOCK' -f '$WORK/tmux.conf' capture-pane -p -t lo | tail -1 | grep -qF 'apply fix'"
check "log only without an echo: no offer" off lo "holds the job's settings"
keys lo q
start lo2 lo 80 24 "" "$HERE/../../examples/train.log"
check "log only with the echo: the settings are offered" wait_for lo2 "holds the job's settings"
keys lo2 y 1
check "the echo opens in the panels" on lo2 "settings from the log (read-only)"
check "with the trainer's values" on lo2 "Learning Rate           0.0001"
keys lo2 Enter
check "and cannot be edited" on lo2 "read-only: open the job file"
keys lo2 7
check "the Plan works from it" on lo2 "batch size 2"
keys lo2 q

# the line editor: Home/C-a, End/C-e, Left/Right, C-w, and typing at the cursor
fresh ed
start ed ed 80 24 "" job.yaml
wait_for ed "Batch Size" > /dev/null
keys ed Enter C-a; typ ed 1; keys ed Enter
check "line editor: C-a then 1 makes 2 into 12" on ed "Batch Size              12"
keys ed Enter End BSpace Left; typ ed 3; keys ed Enter
check "line editor: End, Backspace, Left, 3 makes 12 into 31" on ed "Batch Size              31"
keys ed Down Down Down Down Enter C-w; typ ed 2e-4; keys ed Enter
check "line editor: C-w deletes the word before the cursor" on ed "Learning Rate           2e-4"
keys ed Escape

# 9. a binary file given as the log: the Log view says so instead of drawing its bytes
fresh bin
head -c 200000 "$OOMFIX" > "$WORK/bin/binary.log"
if "$OOMFIX" diagnose "$WORK/bin/binary.log" > /dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n - binary: the Log view explains # SKIP the diagnosis does not refuse binary logs in this build"
else
	start bin bin 80 24 "" job.yaml binary.log
	check "binary: the Log view says the file is no log" wait_for bin "cannot be shown as a log"
	keys bin q
fi

# Ctrl-C with unsaved changes asks as q does (n stays); without them it quits at once
fresh cc
start cc cc 80 24 "" job.yaml train.log
wait_for cc "Diagnosis" > /dev/null
keys cc a
wait_for cc "Applied:" > /dev/null
keys cc C-c
check "Ctrl-C with unsaved changes asks first" wait_for cc "has unsaved changes. Quit?"
keys cc n
check "n after Ctrl-C stays, the change still there" on cc "[+]"
keys cc C-c y
sleep 0.5
check "Ctrl-C then y quits" test "$(T display-message -p -t cc '#{pane_dead}')" = 1
check "Ctrl-C then y: nothing written, no emergency file" \
	bash -c "cmp -s '$FIX/job.yaml' '$WORK/cc/job.yaml' && [ ! -e '$WORK/cc/job.yaml.oomfix-save' ]"
start cc2 cc 80 24 "" job.yaml train.log
wait_for cc2 "Diagnosis" > /dev/null
keys cc2 C-c
sleep 0.5
check "Ctrl-C without unsaved changes quits at once" \
	test "$(T display-message -p -t cc2 '#{pane_dead}')" = 1

# a job that is not valid YAML does not keep its log from being read: the log and its verdict
# open, and the job's error (file:line:col, the tab named) stays in the diagnosis and the panels
fresh badjob
sed -i '0,/^  /s//\t/' "$WORK/badjob/job.yaml"
start badjob badjob 80 24 "" job.yaml train.log
check "broken job: the log opens with its verdict" wait_for badjob "It ran out of GPU memory"
check "broken job: the diagnosis says the job could not be loaded" on badjob "The job could not be loaded"
check "broken job: and where the tab is" on badjob "job.yaml:5:1: a tab in"
keys badjob 1
check "broken job: the Training panel says why, too" on badjob "The job could not be loaded"
keys badjob q
check "broken job: the file is untouched" bash -c "[ \"\$(grep -c \$'\t' '$WORK/badjob/job.yaml')\" = 1 ]"

echo "1..$n"
[ "$fails" -eq 0 ]
