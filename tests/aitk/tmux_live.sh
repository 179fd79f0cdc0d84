#!/bin/bash
# E1 of review 4 — a job list that stays true: the web UI's worker (a second process writing the
# real SQLite database as the trainer does) moves a job from queued to running to error while
# the list is open; with no key pressed the list shows each status, says the change once naming
# the job, and Q on the job that failed offers to queue it again instead of "queued already".
# Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=live
. "$HERE/../tmux-lib.sh"

echo "1..8"
python3 - "$WORK/ai" <<'PY'
import os, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
uidb.create(sys.argv[1], "wal", [
    {"name": "finished", "status": "completed", "step": 3000},
    {"name": "waiting", "status": "queued", "step": 0},
])
PY
# the worker's writes, one UPDATE in its own transaction each, as the trainer makes them
worker() { # STATUS STEP
	python3 - "$WORK/ai/aitk_db.db" "$1" "$2" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=30)
with db:
    db.execute("UPDATE Job SET status = ?, step = ?, updated_at = ? WHERE name = 'waiting'",
               (sys.argv[2], int(sys.argv[3]), int(time.time() * 1000)))
PY
}
T new-session -d -s l -x 100 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai'"
check "the list opens with the job queued" wait_for l "queued"
worker running 12
check "running, with no key pressed" wait_for l "running"
check "the change is said once, naming the job" wait_for l "Job waiting: queued → running."
worker error 40
check "then error" wait_for l "Job waiting: running → error."
T send-keys -t l g
T send-keys -t l Q
check "Q on the failed job offers to queue it again" bash -c '! tmux -L "$0" -f "$1" capture-pane -p -t l | grep -qF "queued already"' "$SOCK" "$WORK/tmux.conf"
check "and asks" wait_for l "(status error)"

# E18: the open job's run ends in an OOM while the job list is shown: the line that says so names
# the job (the list's cursor may be on another one)
python3 - "$WORK/w" <<'PY'
import os, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
uidb.create(sys.argv[1], "wal", [{"name": "watch me", "status": "running", "step": 3},
                                 {"name": "other", "status": "completed", "step": 10}])
PY
mkdir -p "$WORK/w/output/watch me"
head -n 100 "$SOURCE_ROOT/examples/train.log" | grep -v -i "out of memory" > "$WORK/w/output/watch me/log.txt"
T new-session -d -s m -x 100 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/w' 'aitk:watch me'"
wait_for m "aitk:watch me" > /dev/null
T send-keys -t m J
check "E18: the job list is shown over the open job" wait_for m "Jobs of the web UI"
printf '%s\n' "Traceback (most recent call last):" \
	"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB" \
	>> "$WORK/w/output/watch me/log.txt"
check "E18: its run's OOM is said naming the job" wait_for m "aitk:watch me: It ran out of GPU memory" 20
exit $((fails > 0))
