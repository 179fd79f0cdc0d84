#!/bin/bash
# The retry loop behind r for a job of the web UI, in a real terminal (tmux): a real database
# file made as the UI makes it (uidb.py), and the fake of the UI's worker (fake_worker.py) running
# the stand-in trainer. r asks no command (the worker runs the job); the loop starts from the
# failed run's log on screen, saves its fix into the row, queues the job, follows the worker's
# run (queued, then running) and ends when the run fits. Then a job whose run is stopped in the
# web UI. Skipped without tmux or PyYAML.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=aitkretry
. "$HERE/../tmux-lib.sh"
if ! python3 -c 'import yaml' 2> /dev/null; then
	echo "1..0 # SKIP python3 with PyYAML is needed"
	exit 0
fi
row() { # NAME COLUMN: the value in the database
	python3 -c 'import sqlite3, sys
con = sqlite3.connect(sys.argv[1], timeout=30)
print(con.execute("SELECT %s FROM Job WHERE name = ?" % sys.argv[3], (sys.argv[2],)).fetchone()[0])' \
		"$WORK/ai/aitk_db.db" "$1" "$2"
}

# A FLUX job whose model load ran out of memory on a 20 GB card, as the UI keeps it.
python3 - "$WORK/ai" "$HERE/../retry/jobs/flux_load.yaml" "$HERE/../standin/aitk_standin.py" <<'PY'
import json, os, subprocess, sys, yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[2])) + "/../../aitk")
import uidb
root, job, standin = sys.argv[1], sys.argv[2], sys.argv[3]
cfg = yaml.safe_load(open(job))
cfg["config"]["name"] = "flux mug"
cfg["config"]["process"][0]["training_folder"] = os.path.join(root, "output")
uidb.create(root, "wal", [{"name": "flux mug", "status": "error", "step": 0, "total_steps": 40,
                            "job_config": json.dumps(cfg, separators=(",", ":"))}])
d = os.path.join(root, "output", "flux mug")
os.makedirs(d)
with open(os.path.join(d, "log.txt"), "w") as f:
    subprocess.run([sys.executable, standin, "--vram", "20", job], stdout=f, stderr=subprocess.STDOUT)
PY
python3 "$HERE/fake_worker.py" "$WORK/ai" --seconds 120 --vram 20 --delay 0.3 &

T new-session -d -s u -x 100 -y 30 -c "$WORK" \
	"env -u NO_COLOR LC_ALL=C.UTF-8 LANGUAGE= TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:flux mug'; echo EXIT=\$?; sleep 60"
check "the failed run is diagnosed: before training" wait_for u "before training started"
T send-keys -t u r
check "r asks at once (no command: the web UI's worker runs the job)" wait_for u "Retry until the job fits? y = yes"
check "the Retry view says the job is queued in the web UI" wait_for u "Each try queues aitk:flux mug in the web UI"
T send-keys -t u y
check "the run on screen comes first, with its fix" wait_for u "the log you opened  A: out of memory before training"
check "  ... path: old → new" wait_for u "config.process[0].model.low_vram: (absent) → true"
check "the fix is in the database row" sh -c "$(declare -f row); WORK='$WORK'; row 'flux mug' job_config | grep -q '\"low_vram\":true'"
check "try 1 is taken by the worker and runs" wait_for u "try 1     running: training" 40
T send-keys -t u 6
check "the Log view follows the try's log (the copy in the run folder)" wait_for u "runs/1.log  web UI: running"
check "  ... with the retry and the web UI's status in the header" wait_for u "retry 1/6  [following]  training"
check "the run fits: the loop ends" wait_for u "Retry: The run finished: the job fits." 40
[ "$(row 'flux mug' status)" = completed ] && ok "the job's row says completed" ||
	nok "the job's row says completed"
T send-keys -t u r
check "r again asks again (nothing runs now)" wait_for u "Retry until the job fits? y = yes"
T send-keys -t u n
check "n: no retry" wait_for u "No retry."
T send-keys -t u q
check "q quits" wait_for u "EXIT=0"

# No worker takes the job (the web UI is not running): the loop says what it waits for, and
# stopping it leaves the job queued, as the UI would have it.
python3 - "$WORK/ai2" "$HERE/../retry/jobs/conservative.yaml" <<'PY'
import json, os, sys, yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[2])) + "/../../aitk")
import uidb
root, job = sys.argv[1], sys.argv[2]
cfg = yaml.safe_load(open(job))
cfg["config"]["name"] = "no worker"
cfg["config"]["process"][0]["training_folder"] = os.path.join(root, "output")
uidb.create(root, "wal", [{"name": "no worker", "status": "stopped", "total_steps": 40,
                            "job_config": json.dumps(cfg, separators=(",", ":"))}])
PY
T new-session -d -s w -x 100 -y 30 -c "$WORK" \
	"env -u NO_COLOR LC_ALL=C.UTF-8 LANGUAGE= TERM=tmux-256color HOME='$WORK' OOMFIX_QUEUE_HINT_MS=300 '$OOMFIX' --aitk '$WORK/ai2' 'aitk:no worker'; echo EXIT=\$?; sleep 60"
check "a job that never ran opens" wait_for w "aitk:no worker"
T send-keys -t w r
check "r asks" wait_for w "Retry until the job fits? y = yes"
T send-keys -t w y
check "the try waits in the queue" wait_for w "queued in the web UI, waiting for its worker"
check "  ... and says what the worker needs" wait_for w "Still queued after 0 s: the web UI's worker takes queued jobs"
T send-keys -t w r
check "r asks before stopping" wait_for w "Stop the retry?"
T send-keys -t w y
check "stopped: the job is left queued, and the loop says so" wait_for w "Interrupted; the job is still queued in the web UI."
T send-keys -t w q
check "q quits" wait_for w "EXIT=0"

echo "1..$n"
[ "$fails" -eq 0 ]
