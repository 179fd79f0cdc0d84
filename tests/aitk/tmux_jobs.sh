#!/bin/bash
# The web UI's job list in a real terminal (tmux): `oomfix --aitk DIR` opens the list with the
# failed job first and its verdict; Enter opens it with its log; `a` applies the first fix; `s`
# and `y` save it into the database; J goes back to the list, which shows the new verdict. The
# database is checked after: the config changed, compact, everything else as it was. Q in the
# list asks before it queues (n leaves the row alone, y queues it), says a queued job is queued
# already without writing, and refuses a running job without asking. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=jobs
. "$HERE/../tmux-lib.sh"

# A database as the UI's ORM makes it, a failed job with its log, and two others.
python3 - "$WORK/ai" "$SOURCE_ROOT/examples/train.log" <<'PY'
import os, shutil, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
root, log = sys.argv[1], sys.argv[2]
uidb.create(root, "wal", [
    {"name": "finished", "status": "completed", "step": 3000},
    {"name": "my lora", "status": "error", "step": 6,
     "info": "CUDA out of memory. Tried to allocate 2.00 GiB"},
    {"name": "runner", "status": "running", "step": 50},
    {"name": "waiting", "status": "queued", "step": 0},
    # a name that tries to set the terminal's title: shown without it, its columns still aligned
    {"name": "odd\x1b]0;title\x07 name", "status": "completed", "step": 5, "updated_at": 1000},
])
os.makedirs(os.path.join(root, "output", "my lora"))
shutil.copy(log, os.path.join(root, "output", "my lora", "log.txt"))
os.makedirs(os.path.join(root, "output", "my lora", "logs"))
with open(os.path.join(root, "output", "my lora", "logs", "0_log.txt"), "w") as f:
    f.write("Loading Flux model\nLoading transformer\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of "
            "memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB\n")
# The runs ended a while ago: the journal keeps whole seconds, and a save in the very second a
# log was last written cannot be told apart from a run after it (the D11 check below).
import time
for i, name in enumerate(["logs/0_log.txt", "log.txt"]):
    t = time.time() - 120 + 60 * i
    os.utime(os.path.join(root, "output", "my lora", name), (t, t))
PY
cfg() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT job_config FROM Job WHERE name=?", ("my lora",)).fetchone()[0])' "$WORK/ai/aitk_db.db"; }
# the columns queueing writes (a write always sets updated_at)
qrow() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT status, queue_position, updated_at, info, stop FROM Job WHERE name=?", (sys.argv[2],)).fetchone())' "$WORK/ai/aitk_db.db" "$1"; }
no_question() { ! screen j | grep -qF "Queue it again"; }
before=$(cfg)
# what the same fix gives on the command line (printed, not saved)
expected=$("$OOMFIX" --aitk "$WORK/ai" fix "aitk:my lora" batch_size 2> /dev/null)

T new-session -d -s j -x 120 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai'"
check "the list opens" wait_for j "Jobs of the web UI"
check "the failed job's verdict arrives" wait_for j "B batch_size"
first=$(screen j | sed -n 4p)
check "failed first" bash -c "printf '%s' \"\$1\" | grep -q '^  my lora  *error'" _ "$first"
check "a name with an escape keeps the columns aligned" python3 -c '
import sys
h, r = sys.argv[1], sys.argv[2]
sys.exit(not (r.startswith("  odd name ") and h.index("STATUS") == r.index("completed")))
' "$(screen j | grep -m1 'NAME  *STATUS')" "$(screen j | grep -m1 'odd')"
T send-keys -t j Enter
check "Enter opens the job with its log" wait_for j "aitk:my lora"
check "its log is shown" wait_for j "log.txt"
T send-keys -t j R
check "R opens the earlier run, numbered like its file" wait_for j "Run 0 (the oldest, 1 before the newest)"
check "with its own verdict" wait_for j "before training started"
T send-keys -t j R
check "R again comes back to the current log" wait_for j "(the newest of 2 runs)"
wait_read j
T send-keys -t j a
check "a applies the first fix" wait_for j "[+]"
T send-keys -t j s
check "s shows the save screen" wait_for j "Write these changes?"
check "the save screen's diff is indented JSON" wait_for j '"batch_size": 1,'
T send-keys -t j y
check "y saves" wait_for j "Saved"
T send-keys -t j J
check "J goes back to the list" wait_for j "Jobs of the web UI"
check "the list shows the saved fix, not run yet (D11)" wait_for j "B (batch_size applied, not run yet)"
# Q asks first, naming the job; n leaves the database alone
row0=$(qrow "my lora")
T send-keys -t j Q
check "Q asks before it queues" wait_for j "Queue it again for the web UI's worker"
check "the question names the job and its status" wait_for j "Job my lora (status error)."
check "nothing is written while it asks" bash -c '[ "$1" = "$2" ]' _ "$row0" "$(qrow "my lora")"
T send-keys -t j n
check "n answers no" wait_for j "Not queued"
check "n leaves the row as it was" bash -c '[ "$1" = "$2" ]' _ "$row0" "$(qrow "my lora")"
# Q then y queues it, as the start button does
T send-keys -t j Q
wait_for j "Queue it again" > /dev/null
T send-keys -t j y
check "y queues it" wait_for j "Queued my lora (it was error)"
row1=$(qrow "my lora")
check "the row is queued, after every other job" python3 - "$WORK/ai/aitk_db.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
st, pos, info = con.execute("SELECT status, queue_position, info FROM Job WHERE name='my lora'").fetchone()
top = con.execute("SELECT MAX(queue_position) FROM Job WHERE name != 'my lora'").fetchone()[0]
sys.exit(not (st == "queued" and info == "Job queued" and pos == top + 1000))
PY
# the list now shows it queued (after the running job; the cursor followed it): Q says so and
# writes nothing
check "the list shows it queued" wait_for j "Job queued"
T send-keys -t j Q
check "Q on a queued job says it is queued already" wait_for j "my lora is queued already"
check "without a question" no_question
check "and without a write: it keeps its place" bash -c '[ "$1" = "$2" ]' _ "$row1" "$(qrow "my lora")"
# a running job is refused before any question
T send-keys -t j Up Q
check "Q on a running job refuses at once" wait_for j "runner is running: it cannot be queued"
check "without a question" no_question
check "the running job is untouched" bash -c 'printf "%s" "$1" | grep -q "^(.running., 0, "' _ "$(qrow runner)"
# queued by someone else while the question was up: the yes finds it queued and writes nothing
T send-keys -t j Down Down Down Q
check "Q on a completed job asks" wait_for j "Job finished (status completed)."
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE Job SET status=?, queue_position=7 WHERE name=?", ("queued", "finished")); c.commit()' "$WORK/ai/aitk_db.db"
row2=$(qrow finished)
T send-keys -t j y
check "a job queued meanwhile is found queued already" wait_for j "finished is queued already"
check "and left in its place" bash -c '[ "$1" = "$2" ]' _ "$row2" "$(qrow finished)"
T send-keys -t j q
sleep 0.3
after=$(cfg)
check "the database holds the fix" bash -c "printf '%s' \"\$1\" | grep -q '\"batch_size\":1,'" _ "$after"
check "the same text as the command line's fix, one line" \
	bash -c '[ "$1" = "$2" ] && [ "$(printf "%s" "$2" | wc -l)" = 0 ]' _ "$expected" "$after"
check "the previous config is kept beside the log" \
	bash -c "[ \"\$(cat '$WORK/ai/output/my lora/job_config.json~')\" = \"\$1\" ]" _ "$before"

# A hang-up with unsaved edits: the edits go to the emergency file beside the log, the database
# keeps its config, and the next start offers to recover them.
# (The run log is made older than the save above: the journal has whole seconds.)
touch -d '1 hour ago' "$WORK/ai/output/my lora/log.txt"
T new-session -d -s h -x 120 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:my lora'"
wait_for h "aitk:my lora" > /dev/null
wait_read h
# the change saved above has not been run yet, so a asks first (one change, then a run)
T send-keys -t h a
check "a after a saved change that was not run yet asks first" \
	wait_for h "The last change has not been tried yet"
T send-keys -t h y
wait_for h "[+]" > /dev/null
saved=$(cfg)
kill -HUP "$(T display-message -p -t h '#{pane_pid}')"
for _ in $(seq 50); do [ -s "$WORK/ai/output/my lora/job_config.json.oomfix-save" ] && break; sleep 0.1; done
check "SIGHUP writes the emergency save beside the log" \
	test -s "$WORK/ai/output/my lora/job_config.json.oomfix-save"
check "the database is untouched by the hang-up" bash -c '[ "$1" = "$2" ]' _ "$saved" "$(cfg)"
T new-session -d -s r -x 120 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:my lora'"
check "the next start offers to recover it" wait_for r "newer than the job"

# E17 (review 4): `oomfix jobs` on an 80-column terminal fits its width: one line a job, a long
# name cut in its middle so that the part that differs (v1/v2) stays; into a pipe rows stay whole.
python3 - "$WORK/wide" <<'PY'
import os, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
uidb.create(sys.argv[1], "wal", [
    {"name": "portrait_flux_lora_rank32_v1_with_a_long_descriptive_name", "status": "error",
     "step": 6, "info": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"},
    {"name": "portrait_flux_lora_rank32_v2_with_a_long_descriptive_name", "status": "completed",
     "step": 2000},
    {"name": "qwen style", "status": "error", "step": 0, "info": "CUDA out of memory"},
])
PY
T new-session -d -s w -x 80 -y 24 -c "$WORK" \
	"env LC_ALL=C.UTF-8 TERM=tmux-256color '$OOMFIX' --aitk '$WORK/wide' jobs; echo END=\$?; sleep 60"
check "E17: oomfix jobs runs in an 80-column terminal" wait_for w "END=0"
jobs_fit_80() {
	local rows
	rows=$(screen w | sed '/^END=/,$d' | sed '/^$/d')
	# a head and three jobs, none wrapped onto a second line
	[ "$(printf '%s\n' "$rows" | wc -l)" -eq 4 ] || { printf '%s\n' "$rows"; return 1; }
	# each cut is marked, and the two long names stay apart: the part where they differ is kept
	printf '%s\n' "$rows" | grep -q "^portrait_flux_lora_rank32_v1_with_…  *error " &&
		printf '%s\n' "$rows" | grep -q "^portrait_flux_lora_rank32_v2_with_…  *completed " &&
		printf '%s\n' "$rows" | grep -q "^qwen style  *error " || { printf '%s\n' "$rows"; return 1; }
}
check "E17: ... one line a job, long names cut where they do not differ, each cut marked" jobs_fit_80
jobs_pipe_whole() {
	"$OOMFIX" --aitk "$WORK/wide" jobs | grep -q "^portrait_flux_lora_rank32_v1_with_a_long_descriptive_name  *error .*2026-.*torch.OutOfMemoryError: CUDA out of memory"
}
check "E17: into a pipe the rows stay whole" jobs_pipe_whole
# E16: in the UI's Jobs view at 80 columns the two long names stay apart, and the verdict keeps
# the width of the longest one a row can get before a name's tail takes it
T new-session -d -s u -x 80 -y 24 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/wide'"
check "E16: the Jobs view opens on the long names" wait_for u "portrait_flux_lora_rank32_v1"
check "E16: ... v2 stays apart from v1" wait_for u "portrait_flux_lora_rank32_v2"
verdict_room() {
	local head
	head=$(screen u | grep -m1 "^  NAME ")
	# VERDICT starts at least 24 cells before the right edge
	local at=${head%%VERDICT*}
	[ $(( 80 - ${#at} )) -ge 24 ] || { echo "$head"; return 1; }
}
check "E16: ... the verdict column keeps room for 'A gradient_checkpointing'" verdict_room
# E14: the Log view's header of that long-named job at 80 columns gives up the path's start,
# marked, and keeps the web UI's status and the position whole
long="portrait_flux_lora_rank32_v1_with_a_long_descriptive_name"
mkdir -p "$WORK/wide/output/$long" && cp "$SOURCE_ROOT/examples/train.log" "$WORK/wide/output/$long/log.txt"
T new-session -d -s l -x 80 -y 24 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/wide' 'aitk:$long'"
wait_for l "aitk:portrait" > /dev/null
T send-keys -t l 6
wait_re() { # SESSION REGEX: as wait_for, for a pattern
	for _ in $(seq 100); do screen "$1" | grep -q -- "$2" && return 0; sleep 0.1; done
	screen "$1" | sed 's/^/#   /'
	return 1
}
check "E14: the Log view's header keeps the status and the position" \
	wait_re l "log.txt  web UI: error  line [0-9]* of [0-9]*"
check "E14: ... the path's cut start is marked" wait_re l "^ …[a-z_0-9]*descriptive_name/log.txt  web UI"
# E15: the save message of that job keeps its end at 80 columns: the journal is named whole
T send-keys -t l a
wait_for l "Applied" > /dev/null
T send-keys -t l s
wait_for l "y = save" > /dev/null
T send-keys -t l y
check "E15: a web UI save's message names the journal whole" wait_for l "(job_config.json.oomfix.md)"
check "E15: ... and keeps its end" wait_for l "are beside its log"
check "E15: ... and says what comes next" wait_for l "Next: Q queues it"

# E7 (review 4): opening another job with unsaved changes asks in place, naming both jobs:
# n stays (the edits kept), y drops them and opens the other, s saves them and then opens it.
python3 - "$WORK/sw" <<'PY'
import os, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
uidb.create(sys.argv[1], "wal", [{"name": "first job", "status": "error", "step": 6},
                                 {"name": "second job", "status": "error", "step": 6}])
PY
for j in "first job" "second job"; do
	mkdir -p "$WORK/sw/output/$j" && cp "$SOURCE_ROOT/examples/train.log" "$WORK/sw/output/$j/log.txt"
	touch -d '1 hour ago' "$WORK/sw/output/$j/log.txt"
done
swcfg() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT job_config FROM Job WHERE name=?", (sys.argv[2],)).fetchone()[0])' "$WORK/sw/aitk_db.db" "$1"; }
first0=$(swcfg "first job")
second0=$(swcfg "second job")
select_job() { # SESSION NAME: moves the list's cursor onto NAME (its detail line)
	for k in Down Down Down Up Up Up Up; do
		screen "$1" | grep -q "^ *$2: error" && return 0
		T send-keys -t "$1" "$k"
		sleep 0.2
	done
	screen "$1" | grep -q "^ *$2: error"
}
T new-session -d -s s -x 100 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/sw' 'aitk:first job'"
wait_for s "aitk:first job" > /dev/null
wait_read s
T send-keys -t s a
wait_for s "Applied" > /dev/null
T send-keys -t s J
wait_for s "Jobs of the web UI" > /dev/null
check "E7: the list's cursor goes to the other job" select_job s "second job"
T send-keys -t s Enter
check "E7: Enter with unsaved changes names the job that holds them and the one asked for" \
	wait_for s "aitk:first job has unsaved changes; you asked to open aitk:second job."
check "E7: ... and offers the choice in place" wait_for s "s = save them and open it"
check "E7: ... or to stay" wait_for s "n = stay"
T send-keys -t s n
check "E7: n stays, the changes kept" wait_for s "Stayed: aitk:first job still has its unsaved changes"
T send-keys -t s Enter
wait_for s "y = drop them" > /dev/null
T send-keys -t s y
check "E7: y drops them and opens the other job" wait_for s "Opened aitk:second job"
check "E7: ... the first job's database row is as it was" bash -c '[ "$1" = "$2" ]' _ "$first0" "$(swcfg "first job")"
wait_read s
T send-keys -t s a
wait_for s "Applied" > /dev/null
T send-keys -t s J
wait_for s "Jobs of the web UI" > /dev/null
check "E7: the list's cursor goes back to the first job" select_job s "first job"
T send-keys -t s Enter
wait_for s "y = drop them" > /dev/null
T send-keys -t s s
check "E7: s shows the save screen" wait_for s "Write these changes? y = save"
T send-keys -t s y
check "E7: ... then the save is said and the other job opens" wait_for s "Saved aitk:second job. Opened aitk:first job"
check "E7: ... the second job's row holds the saved change" bash -c '[ "$1" != "$2" ]' _ "$second0" "$(swcfg "second job")"

echo "1..$n"
exit $((fails > 0))
