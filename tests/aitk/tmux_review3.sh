#!/bin/bash
# Review 3 in a real terminal (tmux), for a web UI job: the save screen and the saved line say
# where the save really goes (D2: the database row, not a job_config.json that never exists) and
# what comes next; R walks the trail of tries as history (D3, D10): each run numbered like its
# file, its own verdict, what was saved after it (from the journal), no status of the job now in
# its header and no advice for the job now. Skipped without tmux.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
TMUX_TEST=review3
. "$HERE/../tmux-lib.sh"

python3 - "$WORK/ai" "$SOURCE_ROOT/examples/train.log" <<'PY'
import os, shutil, sys
sys.path.insert(0, os.environ["TESTS_DIR"] + "/aitk")
import uidb
root, log = sys.argv[1], sys.argv[2]
uidb.create(root, "wal", [{"name": "my lora", "status": "error", "step": 6,
                           "info": "CUDA out of memory. Tried to allocate 2.00 GiB"}])
d = os.path.join(root, "output", "my lora")
os.makedirs(os.path.join(d, "logs"))
with open(os.path.join(d, "logs", "0_log.txt"), "w") as f:
    f.write("Loading Flux model\nLoading transformer\nTraceback (most recent call last):\ntorch.OutOfMemoryError: CUDA out of "
            "memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 GiB\n")
PY
run="$WORK/ai/output/my lora"
touch -d '2 hours ago' "$run/logs/0_log.txt"
# after run 0, low_vram was saved (the journal says so); then the current run
"$OOMFIX" --aitk "$WORK/ai" fix -i "aitk:my lora" low_vram > /dev/null 2>&1
sleep 1.1
cp "$SOURCE_ROOT/examples/train.log" "$run/log.txt"

T new-session -d -s j -x 120 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:my lora'"
wait_for j "aitk:my lora" > /dev/null
absent() { ! screen "$1" | grep -qF -- "$2"; }
check "the current log is open" wait_for j "web UI: error"
# D3, D10: R shows the earlier run as history
T send-keys -t j R
check "D10: R names the earlier run like its file" wait_for j "Run 0 (the oldest, 1 before the newest)"
check "D3: with what was saved after it, from the journal" wait_for j "low_vram (20"
check "D3: and its own verdict" wait_for j "before training"
check "D10: the header names the earlier run" wait_for j "[run 0, earlier]"
check "D10: not the job's status now" absent j "web UI: error"
check "D10: the diagnosis says it is history" wait_for j "History: Run 0"
check "D10: no advice for the job now on history" absent j "Out of date"
T send-keys -t j R
check "D10: R again comes back to the newest" wait_for j "(the newest of 2 runs)"
check "D10: the current run has its status again" wait_for j "web UI: error"
wait_read j
# D2: the save says where it goes
T send-keys -t j a
wait_for j "[+]" > /dev/null
T send-keys -t j s
check "D2: the save screen names the database and the job" \
	wait_for j "Save the web UI database $WORK/ai/aitk_db.db (job 'my lora')"
check "D2: not a job_config.json as the place of the save" \
	absent j "job_config.json: these changes"
check "D2: the previous version's real path" wait_for j "kept as $run/job_config.json~"
T send-keys -t j y
check "D2: the saved line names the database" wait_for j "Saved into the web UI database"
check "D2: and what comes next" wait_for j "Next: Q queues it for the web UI's worker, or r retries"

echo "1..$n"
exit $((fails > 0))
