#!/bin/bash
# The web UI's job list tells the truth about what it shows and what its keys do (issue 18), in
# a real terminal (tmux) on a real database: whole names or a middle cut that keeps their end
# (D4), a detail line for the job under the cursor, a, s, u, d refused in the list (D5), the
# cursor staying on its job when Q sorts the list again (D6), Q asking about unsaved changes
# (D7), a saved and queued change said as such (D11), a running job said unsavable on open
# (D13), the tab bar at 60x20 (D30), no YAML talk for a web UI user (D33), 9 refused without a
# database (D34), Q in the job's own views, the hint after a save, and running jobs before
# queued ones. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=joblist
. "$HERE/../tmux-lib.sh"

V1=portrait_flux_lora_rank32_v1
V2=portrait_flux_lora_rank32_v2
python3 - "$WORK/ai" "$WORK/empty" "$SOURCE_ROOT/examples/train.log" <<'PY'
import json, os, shutil, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
root, empty, log = sys.argv[1:4]
out = os.path.join(root, "output")
# without gradient checkpointing the B verdict's first fix has the longest id
cfg = json.loads(uidb.job_config("portrait_flux_lora_rank32_v1", out))
cfg["config"]["process"][0]["train"]["gradient_checkpointing"] = False
uidb.create(root, "wal", [
    {"name": "portrait_flux_lora_rank32_v1", "status": "error", "step": 6,
     "job_config": json.dumps(cfg, separators=(",", ":"))},
    {"name": "portrait_flux_lora_rank32_v2", "status": "error", "step": 6, "updated_at": 5000},
    {"name": "third", "status": "error", "step": 6, "updated_at": 4000},
    {"name": "waiting", "status": "queued", "step": 0},
    {"name": "runner", "status": "running", "step": 50, "updated_at": 3000},
    {"name": "done", "status": "completed", "step": 3000, "updated_at": 2000},
])
for name in ("portrait_flux_lora_rank32_v1", "portrait_flux_lora_rank32_v2", "third", "runner"):
    os.makedirs(os.path.join(out, name))
    shutil.copy(log, os.path.join(out, name, "log.txt"))
    # older than any save below (the journal counts whole seconds)
    os.utime(os.path.join(out, name, "log.txt"), (1e9, 1e9))
uidb.create(empty, "wal", [])
PY
cp "$SOURCE_ROOT/examples/job.yaml" "$WORK/job.yaml"
# a job's config and status in the database
dbcol() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT " + sys.argv[3] + " FROM Job WHERE name=?", (sys.argv[2],)).fetchone()[0])' "$WORK/ai/aitk_db.db" "$1" "$2"; }
start() { # SESSION COLS ROWS ARGS...
	local s=$1 x=$2 y=$3
	shift 3
	T new-session -d -s "$s" -x "$x" -y "$y" -c "$WORK" \
		"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' $*"
}
row() { screen "$1" | grep -m1 -- "$2"; }
selected() { screen "$1" | grep -A3 -F "Selected job:" | tr -s ' \n' ' '; }
has() { printf '%s' "$1" | grep -qF -- "$2"; }
footer() { screen "$1" | tail -1; }
# one session stays for the whole test, so the server outlives the others
T new-session -d -s keep "sleep 600"
top_has() { for _ in $(seq 30); do screen "$1" | head -1 | grep -qF -- "$2" && return 0; sleep 0.1; done; screen "$1" | sed 's/^/#   /'; return 1; }

# ---- D13: a running job says at once that it cannot be saved ----
start r 80 24 "--aitk '$WORK/ai' aitk:runner"
check "D13: a running job says on open that it cannot be saved" \
	wait_for r "It is running in the web UI: it cannot be saved until it stops."
wait_read r
T send-keys -t r a
wait_for r "[+]" > /dev/null
T send-keys -t r s
check "D13: s on a running job refuses at once" wait_for r "It is running in the web UI: it cannot be saved"
check "D13: ... without the save screen" bash -c '! printf "%s" "$1" | grep -q "Write these changes"' _ \
	"$(screen r)"
# undone, so that the hang-up of the session leaves no emergency save behind
T send-keys -t r u q
sleep 0.3
T kill-session -t r

# ---- 200 columns: nothing is cut ----
start w 200 50 "--aitk '$WORK/ai'"
check "D4: the list opens at 200 columns" wait_for w "B gradient_checkpointing"
check "D4: both names in full, each on its own row" \
	bash -c 'printf "%s\n" "$1" | grep -q "^  $2  " && printf "%s\n" "$1" | grep -q "^  $3  "' _ \
	"$(screen w)" "$V1" "$V2"
check "D4: the verdict is not cut at 200 columns" \
	bash -c 'printf "%s" "$1" | grep -qE "B gradient_checkpointing( |$)"' _ "$(row w "$V1 ")"
T kill-session -t w

# ---- 80x24: the list, its keys and the cursor ----
start j 80 24 "--aitk '$WORK/ai'"
check "the list opens at 80x24" wait_for j "B gradient_checkpointing"
check "D4: whole names at 80 columns too" \
	bash -c 'printf "%s\n" "$1" | grep -q "^  $2  " && printf "%s\n" "$1" | grep -q "^  $3  "' _ \
	"$(screen j)" "$V1" "$V2"
check "D4: a detail line names the job under the cursor with its verdict and first change" \
	bash -c 'has() { printf "%s" "$1" | grep -qF -- "$2"; }; has "$1" "$2: error" && has "$1" "Verdict: B gradient_checkpointing" && has "$1" "first change: Turn gradient checkpointing on"' _ \
	"$(selected j)" "$V1"
check "running jobs come before queued ones" python3 -c '
import sys
rows = [l.split()[0] for l in sys.argv[1].splitlines()[3:] if l.startswith("  ")]
sys.exit(not rows.index("runner") < rows.index("waiting"))
' "$(screen j)"
# D5: a, s, u, d belong to the open job: refused in the list, and not in its footer
cfg2=$(dbcol "$V2" job_config)
T send-keys -t j Down a
check "D5: a in the list is refused: open the job first" wait_for j "open the one under the cursor first (Enter)"
check "D5: ... and changes nothing" bash -c '[ "$1" = "$2" ] && ! printf "%s" "$3" | grep -qF "[+]"' _ \
	"$cfg2" "$(dbcol "$V2" job_config)" "$(screen j | head -1)"
for k in s u d; do
	T send-keys -t j "$k"
	check "D5: $k in the list is refused too" wait_for j "open the one under the cursor first (Enter)"
done
check "D5: the list's footer offers neither apply, undo, diff nor save" \
	bash -c '! printf "%s" "$1" | grep -qE "apply fix|undo|diff|save"' _ "$(footer j)"
# D6: Q re-sorts the list; the cursor stays on its job
T send-keys -t j Up Q
check "Q asks, naming the job" wait_for j "Job $V1 (status error)."
T send-keys -t j y
check "y queues it" wait_for j "Queued $V1 (it was error)"
check "D6: after the re-sort the list shows it queued" wait_for j "queued, step 6/3000"
check "D6: the cursor followed its job" has "$(selected j)" "$V1: queued"
T send-keys -t j Enter
check "D6: Enter opens the job queued, not the row's new job" wait_for j "Opened aitk:$V1"
# D7: Q on a job with unsaved changes asks; y queues the saved version, n cancels
T send-keys -t j J g Enter
check "the second job opens" wait_for j "Opened aitk:$V2"
wait_read j
T send-keys -t j a
wait_for j "[+]" > /dev/null
T send-keys -t j J
wait_for j "Selected job:" > /dev/null
check "D6: back in the list the cursor is on the open job" has "$(selected j)" "$V2: error"
T send-keys -t j Q
check "D7: Q on a job with unsaved changes asks about them" wait_for j "It has unsaved changes"
check "D7: ... s = save and queue, y = the saved version, n = cancel" \
	bash -c 'printf "%s" "$1" | tr -s " \n" " " | grep -qF "s = save them and queue, y = queue the saved version, n = cancel"' _ "$(screen j)"
check "D7: the question names the job" wait_for j "Job $V2 (status error)."
check "D7 (D22): the footer lists the s answer too" wait_for j "y yes  n no  s save+queue"
T send-keys -t j n
check "D7: n cancels" wait_for j "Not queued"
check "D7: ... and writes nothing" bash -c '[ "$1" = "$2" ] && [ "$3" = error ]' _ \
	"$cfg2" "$(dbcol "$V2" job_config)" "$(dbcol "$V2" status)"
T send-keys -t j Q
wait_for j "queue the saved version" > /dev/null
T send-keys -t j y
check "D7: y queues the saved version" wait_for j "Queued $V2 (it was error)"
check "D7: ... as it was saved" bash -c '[ "$1" = "$2" ] && [ "$3" = queued ]' _ \
	"$cfg2" "$(dbcol "$V2" job_config)" "$(dbcol "$V2" status)"
# saving an open web UI job says what comes next
T send-keys -t j 6 s
wait_for j "Write these changes?" > /dev/null
T send-keys -t j y
check "after a save of a web UI job: Q queues it, or r retries" \
	wait_for j "Next: Q queues it for the web UI's worker, or r retries until it fits."
# D7 s: save and queue in one answer; D11: then the job says it waits for its run
T send-keys -t j J
wait_for j "Selected job:" > /dev/null
T send-keys -t j g
check "the third job is under the cursor" wait_for j "third: error"
T send-keys -t j Enter
wait_for j "Opened aitk:third" > /dev/null
cfg3=$(dbcol third job_config)
wait_read j
T send-keys -t j a
wait_for j "[+]" > /dev/null
T send-keys -t j J
wait_for j "Selected job:" > /dev/null
T send-keys -t j Q
wait_for j "s = save them and queue" > /dev/null
T send-keys -t j s
check "D7: s saves and queues" wait_for j "Saved. Queued third (it was error)"
check "D7: ... the database holds the change and the job is queued" \
	bash -c '[ "$1" != "$2" ] && printf "%s" "$2" | grep -q "\"batch_size\":1," && [ "$3" = queued ]' _ \
	"$cfg3" "$(dbcol third job_config)" "$(dbcol third status)"
check "D11: the list says the change is applied and not run yet" \
	wait_for j "B (batch_size applied, not run yet)"
check "D6: the cursor is still on the job queued" has "$(selected j)" "third: queued"
T send-keys -t j Enter
check "D11: the job says it is saved and queued, waiting for its run" \
	wait_for j "Saved and queued; waiting for the run"
check "D11: ... not that it is out of date" bash -c '! printf "%s" "$1" | grep -q "Out of date"' _ \
	"$(screen j)"
# Q in the job's own views asks as the list does
T send-keys -t j J G Enter
wait_for j "Opened aitk:done" > /dev/null
T send-keys -t j Q
check "Q on the open job asks as in the list" wait_for j "Job done (status completed). Queue it again"
T send-keys -t j n
sleep 0.3
check "... n leaves it" [ "$(dbcol done status)" = completed ]
T send-keys -t j q
T kill-session -t j

# ---- D30: 60x20 ----
start n 60 20 "--aitk '$WORK/ai'"
check "D30: the list opens at 60x20" wait_for n "Selected job:"
# the widths follow the verdicts: wait for them all
check "D30: the verdicts arrive" wait_for n "B gradient_checkpointing"
check "D30: VERDICT stays and STEP gives way" \
	bash -c 'printf "%s" "$1" | grep -q VERDICT && ! printf "%s" "$1" | grep -q STEP' _ \
	"$(screen n | grep -m1 NAME)"
check "D4: cut names keep their distinguishing end, marked" \
	bash -c 'printf "%s\n" "$1" | grep -q "^  portr[a-z_]*…[a-z0-9_]*_v1 " && printf "%s\n" "$1" | grep -q "^  portr[a-z_]*…[a-z0-9_]*_v2 "' _ \
	"$(screen n)"
T send-keys -t n g Enter
check "the running job is first at the top" wait_for n "Opened aitk:runner"
wait_read n
T send-keys -t n a
check "D30: a cut tab bar ends with >" top_has n ">"
check "D30: unsaved changes keep their [+] at 60 columns" top_has n "[+]"
T kill-session -t n

# ---- D33: no job open in a web UI database ----
start e 80 24 "--aitk '$WORK/empty'"
wait_for e "No jobs in this database." > /dev/null
T send-keys -t e 1
check "D33: 1 with no job open points to the Jobs tab" wait_for e "pick one in the Jobs tab (J)"
check "D33: ... and says nothing of a YAML file" bash -c '! printf "%s" "$1" | grep -q "JOB.yaml"' _ \
	"$(screen e)"
T kill-session -t e

# ---- D34: a file job has no job list ----
start f 80 24 "'$WORK/job.yaml'"
wait_for f "Training" > /dev/null
T send-keys -t f 9
check "D34: 9 in a file job is refused as J is" wait_for f "No web UI database is open"
check "D34: ... and no Jobs view opens" bash -c '! printf "%s" "$1" | grep -qE "Jobs\]|aitk_db.db in"' _ \
	"$(screen f)"
T kill-session -t f

echo "1..$n"
exit $((fails > 0))
