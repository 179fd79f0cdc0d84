#!/bin/bash
# The retry loop behind r in a real terminal (tmux), against the stand-in trainer
# (tests/standin/aitk_standin.py): the command is proposed (run.py found above the job, its venv
# used) and remembered; the loop starts from the failed log on screen; the tries are listed as
# they happen with the verdict, the fix, its path: old → new and the lesson; the Log view follows
# each try's log; the job is reloaded after each fix and cannot be edited meanwhile; r stops the
# loop, q stops it and quits, Ctrl-C asks; the probe; and no run is left behind.
# Skipped without tmux or PyYAML.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
JOBS=$HERE/../retry/jobs
TMUX_TEST=retry
. "$HERE/../tmux-lib.sh"
# The stand-in is typed as a command and looked for on screen: a short name for it, the same
# wherever the repository lives.
STANDIN=$(near standin.py "$HERE/../standin/aitk_standin.py")
if ! python3 -c 'import yaml' 2> /dev/null; then
	echo "1..0 # SKIP python3 with PyYAML is needed"
	exit 0
fi
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2> /dev/null; }
start() { # SESSION COLSxROWS DIR JOB LOG
	local c=${2%x*} r=${2#*x}
	T new-session -d -s "$1" -x "$c" -y "$r" -c "$3" \
		"env -u NO_COLOR LC_ALL=C.UTF-8 LANGUAGE= TERM=tmux-256color HOME='$WORK' '$OOMFIX' $4 $5; echo EXIT=\$?; sleep 60"
}
type_cmd() { # SESSION COMMAND: replaces the proposed command and accepts it
	T send-keys -t "$1" End C-u
	T send-keys -t "$1" -l "$2"
	T send-keys -t "$1" Enter
}

# ---- 1. FLUX, model load on 20 GB: the command proposed, the loop from the log on screen ------
# An AI Toolkit folder as people have it: run.py, a venv, the job in config/.
TK=$WORK/ai-toolkit
mkdir -p "$TK/config" "$TK/venv/bin"
: > "$TK/run.py"
printf '#!/bin/sh\n' > "$TK/venv/bin/python" && chmod +x "$TK/venv/bin/python"
cp "$JOBS/flux_load.yaml" "$TK/config/job.yaml"
(cd "$TK/config" && python3 "$STANDIN" --vram 20 job.yaml > first.log 2>&1)
start a 100x30 "$TK/config" job.yaml first.log
check "the failed log is diagnosed: before training" wait_for a "before training started"
T send-keys -t a r
check "r asks for the command, proposing the toolkit's run.py with its venv" \
	wait_for a "toolkit && venv/bin/python run.py $TK/config/job.yaml"
T send-keys -t a Home
check "  ... run from the toolkit's folder" wait_for a "Run the job with: cd $TK && venv/bin/python"
check "the Retry view explains the loop before it starts" wait_for a "The log on screen already shows"
type_cmd a "python3 $STANDIN --vram 20 job.yaml"
check "then it asks, offering the probe" wait_for a "p = probe: stop a run"
check "  ... the probe's round is one during training" wait_for a "through a preview sampling"
check "  ... the footer lists every answer it takes" wait_for a "y yes  n no  p probe"
T send-keys -t a y
check "the log on screen is the first entry, with its verdict" wait_for a "the log you opened  A: out of memory before training"
check "its fix with path: old → new" wait_for a "config.process[0].model.low_vram: (absent) → true"
check "and the fix's lesson" wait_for a "Lesson: Low VRAM keeps parts of the model"
check "one run, and it fits" wait_for a "try 1     the run finished" 30
check "  ... with the estimate of the job it ran, as the CLI prints it" wait_for a "Estimate: peak "
check "the end is said in the view and the status line" wait_for a "Retry: The run finished: the job fits."
grep -q "low_vram: true" "$TK/config/job.yaml" && [ -f "$TK/config/job.yaml~" ] &&
	grep -q "oomfix retry, the log given (A:" "$TK/config/job.yaml.oomfix.md" &&
	[ "$(ls "$TK/config/job.yaml.oomfix-runs")" = "$(printf '0.yaml\n1.log\ncommand')" ] &&
	! grep -q "low_vram: true" "$TK/config/job.yaml.oomfix-runs/0.yaml" &&
	ok "the job on disk has the fix, a backup, the original and the journal; one run log" ||
	nok "the job on disk has the fix, a backup, the original and the journal; one run log"
T send-keys -t a k Enter
check "Enter on a try in the list shows its log (here: the log opened first)" wait_for a "first.log  [the log you opened, earlier]  line "
T send-keys -t a 4
sleep 0.3
screen a | grep -q "\[x\] Low VRAM\|Low VRAM.*\[x\]" && ! screen a | head -1 | grep -qF "[+]" &&
	ok "the Model panel shows the reloaded job (Low VRAM on), nothing unsaved" ||
	{ nok "the Model panel shows the reloaded job (Low VRAM on), nothing unsaved"; screen a | sed 's/^/#   /'; }
T send-keys -t a r
check "r again proposes the command used last time" wait_for a "Run the job with: python3 $STANDIN --vram 20 job.yaml"
T send-keys -t a Escape
check "Esc cancels: no retry" wait_for a "Cancelled."
T send-keys -t a q
check "q quits at once when no retry runs" wait_for a "EXIT=0"

# ---- 2. Z-Image on 12 GB, slowed down: the tries as they happen, the lock, r stops -----------
D=$WORK/z
mkdir -p "$D"
cp "$JOBS/zimage_small_card.yaml" "$D/job.yaml"
(cd "$D" && python3 "$STANDIN" --vram 12 job.yaml > first.log 2>&1)
start b 80x24 "$D" job.yaml first.log
check "80x24: the failed log is diagnosed" wait_for b "before training started"
T send-keys -t b r
type_cmd b "STANDIN_PID_FILE=$D/run.pid python3 $STANDIN --vram 12 --delay 0.25 job.yaml"
T send-keys -t b y
check "the first run is listed while it runs" wait_for b "try 1     running" 30
check "its verdict comes without a key: B, and the next fix" wait_for b "try 1     B: out of memory in training step 8" 30
check "the next try runs" wait_for b "try 2     running" 30
T resize-window -t b -x 60 -y 20
check "at 60x20 a long path: old → new wraps rather than losing its end" wait_for b "g: false → true"
T resize-window -t b -x 80 -y 24
T send-keys -t b a
check "the job cannot be changed while the loop runs (a is refused)" wait_for b "A retry is running and changes the job"
T send-keys -t b 6
check "the Log view follows the try's log, saying which run of the retry it is" wait_for b "2.log  retry 2/6  [following]"
# The stand-in's Ctrl-C handler is in place once it writes its first line (before it, Python is
# still starting and a SIGINT is a traceback, not the trainer stopping): wait for that line.
for _ in $(seq 100); do [ -s "$D/job.yaml.oomfix-runs/2.log" ] && break; sleep 0.1; done
T send-keys -t b r
check "r elsewhere goes to the Retry view" wait_for b "The retry is running; r here stops it."
T send-keys -t b r
check "r in the Retry view asks before stopping" wait_for b "Stop the retry?"
T send-keys -t b y
check "stopped: the run got Ctrl-C and the loop says so" wait_for b "Retry: Interrupted: the run was stopped" 30
alive "$D/run.pid" && nok "no run is left behind after r" || ok "no run is left behind after r"
grep -q "Job stopped" "$D/job.yaml.oomfix-runs/2.log" && ok "the trainer stopped cleanly (SIGINT)" ||
	nok "the trainer stopped cleanly (SIGINT)"
grep -q "low_vram: true" "$D/job.yaml" && grep -q "gradient_checkpointing: true" "$D/job.yaml" &&
	ok "the two fixes the tries made are saved" || nok "the two fixes the tries made are saved"

# ---- 3. Ctrl-C asks; q stops the loop and quits ------------------------------------------------
cp "$JOBS/zimage_small_card.yaml" "$D/job.yaml"
rm -f "$D/run.pid"
T send-keys -t b r
check "the job put back on disk is offered for reload (no retry runs)" wait_for b "job.yaml changed on disk."
T send-keys -t b y
T send-keys -t b r
T send-keys -t b Home
check "a new retry proposes the same command" wait_for b "Run the job with: STANDIN_PID_FILE"
T send-keys -t b Enter
check "the log on screen shows no OOM: the first run is of the job as it is" wait_for b "The first run is of the job as it is."
T send-keys -t b y
check "the new loop's try numbers follow the old ones" wait_for b "try 3     A: out of memory before training" 30
check "  ... and each try gets the fix for its own failure" wait_for b "try 5     running: training" 30
T send-keys -t b C-c
check "Ctrl-C asks (the loop is not stopped behind the user's back)" wait_for b "A retry is running. Stop it and quit?"
T send-keys -t b n
alive "$D/run.pid" && ok "n: the run goes on" || nok "n: the run goes on"
T send-keys -t b q
check "q asks too" wait_for b "A retry is running. Stop it and quit?"
T send-keys -t b y
check "y: oomfix quits once the run has stopped" wait_for b "EXIT=0" 30
alive "$D/run.pid" && nok "no run is left behind after q" || ok "no run is left behind after q"

# ---- 3b. the terminal goes away (a dropped SSH link): the loop stops its run too ---------------
cp "$JOBS/zimage_small_card.yaml" "$D/job.yaml"
rm -f "$D/run.pid"
start h 80x24 "$D" job.yaml first.log
check "a new session on the same job" wait_for h "before training started"
T send-keys -t h r
# slow steps: the run would go on for a minute, so only a stop can end it within the wait below
type_cmd h "STANDIN_PID_FILE=$D/run.pid python3 $STANDIN --vram 12 --delay 1.5 job.yaml"
T send-keys -t h y
check "its loop runs" wait_for h "running: training" 30
T kill-session -t h
stopped=no
for _ in $(seq 50); do
	alive "$D/run.pid" || { stopped=yes; break; }
	sleep 0.1
done
if [ $stopped = yes ]; then
	ok "the session killed (SIGHUP): the run is stopped within 5 s"
else
	nok "the session killed (SIGHUP): the run is stopped within 5 s"
	kill -9 "$(cat "$D/run.pid")" 2> /dev/null
fi

# ---- 4. refused while there are unsaved edits; the probe ---------------------------------------
P=$WORK/p
mkdir -p "$P"
cp "$JOBS/zimage_small_card.yaml" "$P/job.yaml"
(cd "$P" && python3 "$STANDIN" --vram 12 job.yaml > first.log 2>&1)
start c 100x30 "$P" job.yaml first.log
check "the failed log is diagnosed" wait_for c "before training started"
T send-keys -t c a
check "a applies the first fix (unsaved)" wait_for c "Applied."
T send-keys -t c r
check "r is refused over unsaved edits" wait_for c "save them (s) or undo them (u)"
T send-keys -t c u
T send-keys -t c r
type_cmd c "python3 $STANDIN --vram 12 --delay 0.05 job.yaml"
T send-keys -t c p
check "p: the probe is said in the view" wait_for c "A run that gets 20 steps past"
check "the probe passes on the third run: the job fits" wait_for c "passed the probe at step 28" 30
grep -q "Job stopped" "$P/job.yaml.oomfix-runs/2.log" && ok "the passing run was stopped" ||
	nok "the passing run was stopped"

# ---- 5. E8: the job as it is passes the probe on its first try ----------------------------------
Q=$WORK/q
mkdir -p "$Q"
cp "$JOBS/zimage_small_card.yaml" "$Q/job.yaml"
start e 100x30 "$Q" job.yaml ""
check "a job without a log opens" wait_for e "Training"
T send-keys -t e r
check "r asks for the command" wait_for e "Run the job with:"
type_cmd e "python3 $STANDIN --vram 24 --delay 0.05 job.yaml"
check "then it asks, offering the probe" wait_for e "p = probe: stop a run"
T send-keys -t e p
check "E8: a first-try probe pass reads as one on its row" wait_for e "passed the probe: the job fits" 60
check "E8: ... its end says that nothing was changed" wait_for e "Nothing was changed: the job as it is"
no_journal() { ! screen e | grep -q "oomfix.md" && [ ! -e "$Q/job.yaml.oomfix.md" ]; }
check "E8: ... and names no journal, as none was written" no_journal
no_stopped_row() { ! screen e | grep -q "stopped before its verdict"; }
check "E8: ... no row says it stopped before its verdict" no_stopped_row

echo "1..$n"
[ "$fails" -eq 0 ]
