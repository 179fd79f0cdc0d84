#!/bin/bash
# Review 3 in a real terminal (tmux), for a job file:
# D8  a reload after an outside edit re-applies a fix whole or not at all, and says what it
#     dropped (the batch size fix is dropped whole, not its accumulation half kept).
# D20 a job file opened without a log opens its newest run log (JOB.oomfix-runs/<n>.log) and
#     says so; R walks its earlier runs as history, with what was saved after each.
# Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
TMUX_TEST=review3
TMUX_CONF_EXTRA='set -g history-limit 200
'
. "$HERE/../tmux-lib.sh"
absent() { ! screen "$1" | grep -qF -- "$2"; }
start() { # SESSION DIR ARGS...
	local s=$1 d=$2
	shift 2
	T new-session -d -s "$s" -x 100 -y 30 -c "$WORK/$d" \
		"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*"
}
fresh() { rm -rf "$WORK/$1"; mkdir -p "$WORK/$1"; cp "$FIX/job.yaml" "$FIX/train.log" "$WORK/$1/"; }

# ---- D8: a fix re-applied whole or not at all ------------------------------------------------
fresh d8
# the accumulation far from the batch size, so the fix's two changes are two hunks
python3 - "$WORK/d8/job.yaml" <<'PY'
import sys
p = sys.argv[1]
lines = [l for l in open(p) if "gradient_accumulation:" not in l]
out = []
for l in lines:
    out.append(l)
    if l.strip() == "dtype: bf16":
        out.append("        gradient_accumulation: 1\n")
open(p, "w").write("".join(out))
PY
start d8 d8 job.yaml train.log
wait_for d8 "First change: Batch size 1" > /dev/null
T send-keys -t d8 a
wait_for d8 "Applied: Batch size 1" > /dev/null
sed -i 's/batch_size: 2 /batch_size: 8 /' "$WORK/d8/job.yaml"
T send-keys -t d8 j
check "D8: the outside edit is noticed" wait_for d8 "Reload it?"
T send-keys -t d8 y
check "D8: the message names the fix dropped whole" wait_for d8 "dropped whole"
check "D8: by its name" wait_for d8 "Batch size 1"
T send-keys -t d8 s
check "D8: no half of the fix is left to save" wait_for d8 "Nothing to save"
T send-keys -t d8 q

# ---- D20: a job file's run logs --------------------------------------------------------------
fresh d20
mkdir "$WORK/d20/job.yaml.oomfix-runs"
printf 'Loading Flux model\nLoading transformer\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB\n' \
	> "$WORK/d20/job.yaml.oomfix-runs/1.log"
touch -d '2 hours ago' "$WORK/d20/job.yaml.oomfix-runs/1.log"
"$OOMFIX" fix -i "$WORK/d20/job.yaml" low_vram > /dev/null 2>&1
sleep 1.1
cp "$FIX/train.log" "$WORK/d20/job.yaml.oomfix-runs/2.log"
start d20 d20 job.yaml
check "D20: without a log, the newest run log is opened and said" \
	wait_for d20 "opened the newest run log"
check "D20: it is read" wait_for d20 "First change:"
T send-keys -t d20 R
check "D20: R shows the earlier run, numbered like its file" wait_for d20 "Run 1 (the oldest, 1 before the newest)"
check "D20: with what was saved after it" wait_for d20 "low_vram (20"
check "D20: as history" wait_for d20 "History: Run 1"
check "E19: at the oldest run R says it goes back to the newest" wait_for d20 "R goes back to the newest."
T send-keys -t d20 R
check "D20: R again comes back to the newest" wait_for d20 "Run 2 (the newest of 2 runs)"
T send-keys -t d20 q

# ---- D29: following a run to its end --------------------------------------------------------
NAME=mug_flux_lora_v1
frame() { printf '\r%s:  %d%%|#   | %d/%d [00:%02d<09:00,  2.50s/it, lr: 1e-04 loss: 0.1]' "$NAME" $(($1 * 100 / $2)) "$1" "$2" $(($1 % 60)); }
mkdir -p "$WORK/d29"
cp "$FIX/job.yaml" "$WORK/d29/"
for log in oom fin; do
	printf 'Running 1 job\n# Running job: %s\nLoading Flux model\n' "$NAME" > "$WORK/d29/$log.log"
	frame 1 60 >> "$WORK/d29/$log.log"
done
start d29 d29 job.yaml oom.log
start d29f d29 job.yaml fin.log
wait_for d29 "oom.log" > /dev/null
wait_for d29f "fin.log" > /dev/null
for i in $(seq 2 20); do frame $i 60 >> "$WORK/d29/oom.log"; frame $i 60 >> "$WORK/d29/fin.log"; sleep 0.05; done
check "D29: following a running job with no OOM yet says so" wait_for d29 "Running, no OOM so far."
printf '\nError running job: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB of which 1.10 GiB is free.\n' >> "$WORK/d29/oom.log"
printf '\n========================================\nResult:\n - 0 completed jobs\n - 1 failure\n========================================\n' >> "$WORK/d29/oom.log"
check "D29: the header says the run ended with the OOM" wait_for d29 "ended: OOM at step 21"
check "D29: not the last bar as if it went on" absent d29 "training  20/60"
for i in $(seq 21 60); do frame $i 60 >> "$WORK/d29/fin.log"; done
printf '\n========================================\nResult:\n - 1 completed jobs\n - 0 failure\n========================================\n' >> "$WORK/d29/fin.log"
check "D29: the header says a finished run finished" wait_for d29f "finished 60/60"
check "D29: and its diagnosis says the run finished" wait_for d29f "the run finished."

# ---- D26: a hang-up in a folder that refuses the emergency save ----------------------------
# The folder is read-only to the user running oomfix (root is dropped to nobody for it); the edits
# go to the state folder and the line that says so stays on the screen after the UI is gone.
mkdir -p "$WORK/d26/ro" "$WORK/d26/state"
cp "$FIX/job.yaml" "$FIX/train.log" "$WORK/d26/ro/"
chmod 755 "$WORK" "$WORK/d26"
chmod 777 "$WORK/d26/state"
chmod 555 "$WORK/d26/ro"
chmod 644 "$WORK/d26/ro/"*
as_user=
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null && as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	# the binary must be reachable by that user wherever the repository lives
	[ -n "$as_user" ] && ! $as_user test -x "$OOMFIX" 2> /dev/null && as_user=
fi
if [ "$(id -u)" = 0 ] && [ -z "$as_user" ]; then
	ok "D26: # SKIP as root, a folder refuses nothing (and nobody cannot run this build)"
else
	T new-session -d -s d26 -x 100 -y 30 -c "$WORK/d26/ro" \
		"exec $as_user env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK/d26/state' XDG_STATE_HOME='$WORK/d26/state' '$OOMFIX' job.yaml train.log"
	wait_for d26 "First change:" > /dev/null
	T send-keys -t d26 a
	wait_for d26 "[+]" > /dev/null
	kill -HUP "$(T display-message -p -t d26 '#{pane_pid}')"
	# the whole terminal, its wrapped rows joined and the rows scrolled away included
	said() { T capture-pane -p -J -S -200 -t d26 | grep -qF "folder refused the emergency save; the unsaved edits are in"; }
	for _ in $(seq 50); do said && break; sleep 0.1; done
	check "D26: the line that says where the edits went stays on the screen" said
	check "D26: and they are there" bash -c 'ls "$1"/oomfix/*.oomfix-save > /dev/null 2>&1' _ "$WORK/d26/state"
fi
chmod 755 "$WORK/d26/ro"

# ---- D27: the external editor's copy stays beside the job -------------------------------------
fresh d27
printf '#!/bin/sh\nsed -i "s/steps: 2000/steps: [2000/" "$1"\n' > "$WORK/ed-bad"
chmod 755 "$WORK/ed-bad"
T new-session -d -s d27 -x 100 -y 30 -c "$WORK/d27" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK/d27home' TMPDIR='$WORK/tmp' EDITOR='$WORK/ed-bad' '$OOMFIX' job.yaml"
mkdir -p "$WORK/tmp"
wait_for d27 "Batch Size" > /dev/null
T send-keys -t d27 BTab BTab BTab BTab e
check "D27: the refused edit is kept, and the message says where" wait_for d27 "/.job.yaml.oomfix-edit-"
check "D27: the copy is beside the job" bash -c 'ls "$1"/.job.yaml.oomfix-edit-*.yaml > /dev/null 2>&1' _ "$WORK/d27"
check "D27: nothing in the temporary folder" bash -c '[ -z "$(ls -A "$1")" ]' _ "$WORK/tmp"
T send-keys -t d27 q
# a folder that refuses it: the state folder, named on the screen
if [ -n "$as_user" ] || [ "$(id -u)" != 0 ]; then
	mkdir -p "$WORK/d27ro" "$WORK/d27state"
	cp "$FIX/job.yaml" "$WORK/d27ro/"
	chmod 777 "$WORK/d27state" "$WORK/tmp"
	chmod 555 "$WORK/d27ro"
	T new-session -d -s d27r -x 100 -y 30 -c "$WORK/d27ro" \
		"exec $as_user env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK/d27state' XDG_STATE_HOME='$WORK/d27state' TMPDIR='$WORK/tmp' EDITOR='$WORK/ed-bad' '$OOMFIX' job.yaml"
	wait_for d27r "Batch Size" > /dev/null
	T send-keys -t d27r BTab BTab BTab BTab e
	check "D27: a read-only folder: the copy goes to the state folder" \
		wait_for d27r "/oomfix/job.yaml.oomfix-edit-"
	check "D27: and it is there" bash -c 'ls "$1"/oomfix/job.yaml.oomfix-edit-*.yaml > /dev/null 2>&1' _ "$WORK/d27state"
	T send-keys -t d27r q
	chmod 755 "$WORK/d27ro"
fi

# ---- D36: / in the Log view counts the matches ----------------------------------------------
fresh d36
start d36 d36 job.yaml train.log
wait_for d36 "First change:" > /dev/null
T send-keys -t d36 g /
T send-keys -t d36 -l "skipping batch"
T send-keys -t d36 Enter
check "D36: the first match is counted" wait_for d36 "match 1/3 at line 50"
T send-keys -t d36 n
check "D36: n says which match of how many" wait_for d36 "match 2/3 at line 56"
T send-keys -t d36 N
check "D36: N too" wait_for d36 "match 1/3 at line 50"
T send-keys -t d36 q

# ---- D23: the Retry view's g goes to the top (the explanation), k reaches it ---------------
if python3 -c 'import yaml' 2> /dev/null; then
	STANDIN=$(near standin.py "$HERE/../standin/aitk_standin.py")
	mkdir -p "$WORK/d23"
	cp "$HERE/../retry/jobs/flux_load.yaml" "$WORK/d23/job.yaml"
	(cd "$WORK/d23" && python3 "$STANDIN" --vram 12 job.yaml > first.log 2>&1)
	T new-session -d -s d23 -x 60 -y 20 -c "$WORK/d23" \
		"exec env -u NO_COLOR LC_ALL=C.UTF-8 LANGUAGE= TERM=tmux-256color HOME='$WORK' '$OOMFIX' job.yaml first.log"
	wait_for d23 "before training started" > /dev/null
	T send-keys -t d23 r
	wait_for d23 "Run the job with" > /dev/null
	T send-keys -t d23 End C-u
	T send-keys -t d23 -l "python3 $STANDIN --vram 12 job.yaml"
	T send-keys -t d23 Enter
	wait_for d23 "p = yes" > /dev/null
	T send-keys -t d23 y
	# the loop's end is said on the status line (at 60x20 it covers the view's last rows, so the
	# view's "r starts another" is not on screen to wait for)
	check "D23: the loop ends, and the status line says how" wait_for d23 "Retry: The settings oomfix knows" 60
	T send-keys -t d23 g
	check "D23: g shows the top of the Retry view, the explanation" wait_for d23 "Each try runs"
	T send-keys -t d23 G
	sleep 0.3
	for _ in $(seq 40); do T send-keys -t d23 k; done
	check "D23: k reaches the explanation too" wait_for d23 "Each try runs"
	# D10: Enter on an earlier try opens its log as history
	T send-keys -t d23 j Enter
	check "D10: an earlier try's log is history" wait_for d23 "History: an earlier try"
	check "D10: with no advice for the job now" absent d23 "Out of date"
	T send-keys -t d23 q
else
	ok "D23: # SKIP python3 with PyYAML is needed"
fi

# ---- D21: r in a folder without run.py proposes no command that cannot work ------------------
fresh d21
start d21 d21 job.yaml train.log
wait_for d21 "First change:" > /dev/null
T send-keys -t d21 r
check "D21: r asks for the command" wait_for d21 "Run the job with:"
check "D21: without proposing python run.py, which is not there" absent d21 "run.py"
T send-keys -t d21 Escape
sleep 0.2
T send-keys -t d21 q
sleep 0.2
T send-keys -t d21 y
mkdir "$WORK/d21/other.yaml.oomfix-runs"
echo "python3 trainer.py other.yaml" > "$WORK/d21/other.yaml.oomfix-runs/command"
start d21b d21 job.yaml train.log
wait_for d21b "First change:" > /dev/null
T send-keys -t d21b r
check "D21: the command typed for another job of the folder is proposed" \
	wait_for d21b "python3 trainer.py other.yaml"

# ---- D37: the quick checklist in the plan's order, an unsaved tick said ----------------------
rm -rf "$WORK/d37"; mkdir -p "$WORK/d37"; cp "$FIX/job.yaml" "$WORK/d37/"
start d37 d37 job.yaml
wait_for d37 "Batch Size" > /dev/null
T send-keys -t d37 a
wait_for d37 "[+]" > /dev/null
check "friction: a with no log says there is no log to choose by" wait_for d37 "No log to choose by"
check "friction: and what it applied" wait_for d37 "rollback plan: Batch size 1"
T send-keys -t d37 7
check "D37: the checklist is shown" wait_for d37 "Quick checklist"
first_item=$(screen d37 | grep -A1 -F "Quick checklist" | sed -n 2p)
first_step=$(screen d37 | grep -m1 -E '^ *1\. ')
check "D37: its first item is the plan's first step (checkpointing)" \
	bash -c '[[ "$1" == *"Gradient checkpointing"* && "$2" == *"gradient checkpointing"* ]]' _ "$first_item" "$first_step"
check "D37: an item ticked only by the unsaved edit says so" wait_for d37 "(unsaved)"
T send-keys -t d37 q
sleep 0.2
T send-keys -t d37 y

# ---- D28: the UI tells a swapped job and log apart with the core's source_sniff_job (a guard:
# the UI's own copy of the sniffing was removed, the behaviour is the same) ----------------------
fresh d28
check "D28: a log given first and the job second is refused with the order that works" \
	bash -c 'cd "$1" && ! "$2" train.log job.yaml 2> err < /dev/null > /dev/null && grep -q "looks like a training log" err' _ "$WORK/d28" "$OOMFIX"

echo "1..$n"
exit $((fails > 0))
