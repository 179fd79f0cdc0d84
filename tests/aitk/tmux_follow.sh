#!/bin/bash
# A web UI job followed in the terminal UI (tmux), with a fake of the UI's worker running the
# stand-in trainer: the Log view's header shows the job's status from the database (error, then
# queued, running, completed, without a key press), and when the worker starts the new run (it
# moves the old log.txt to logs/0_log.txt) the view goes to the new run's log.
# Skipped without tmux or PyYAML.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
HERE=$(cd "$(dirname "$0")" && pwd)
if ! command -v tmux > /dev/null || ! python3 -c 'import yaml' 2> /dev/null; then
	echo "1..0 # SKIP tmux and python3 with PyYAML are needed"
	exit 0
fi
WORK=$(mktemp -d)
SOCK=oomfix-follow-$$
T() { tmux -L "$SOCK" -f "$WORK/tmux.conf" "$@"; }
WPID=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2> /dev/null && wait "$WPID" 2> /dev/null
	T kill-server 2> /dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
printf 'set -g remain-on-exit on\nset -g status off\nset -g history-limit 0\n' > "$WORK/tmux.conf"

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
screen() { T capture-pane -p -t "$1"; }
wait_for() {
	for _ in $(seq 150); do
		screen "$1" | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	echo "# waited in vain for '$2'; screen:"
	screen "$1" | sed 's/^/#   /'
	return 1
}

# A failed job (its model load ran out of memory), as the UI keeps it, with that run's log.
python3 - "$WORK/ai" "$HERE/../retry/jobs/flux_load.yaml" "$HERE/../standin/aitk_standin.py" <<'PY'
import json, os, subprocess, sys, yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[2])) + "/../../aitk")
import uidb
root, job, standin = sys.argv[1], sys.argv[2], sys.argv[3]
cfg = yaml.safe_load(open(job))
cfg["config"]["name"] = "flux mug"
cfg["config"]["process"][0]["training_folder"] = os.path.join(root, "output")
cfg["config"]["process"][0]["model"]["low_vram"] = True  # the next run fits
uidb.create(root, "wal", [{"name": "flux mug", "status": "error", "step": 0, "total_steps": 40,
                            "job_config": json.dumps(cfg, separators=(",", ":"))}])
d = os.path.join(root, "output", "flux mug")
os.makedirs(d)
with open(os.path.join(d, "log.txt"), "w") as f:
    subprocess.run([sys.executable, standin, "--vram", "20", job], stdout=f, stderr=subprocess.STDOUT)
PY

T new-session -d -s f -x 200 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:flux mug'"
check "the job opens in the Log view" wait_for f "log.txt"
check "the header shows the job's status: error" wait_for f "web UI: error"
check "the old run's verdict: before training" wait_for f "before training started"
"$OOMFIX" queue --aitk "$WORK/ai" "aitk:flux mug" 2> /dev/null
check "queued in the database: the header follows without a key" wait_for f "web UI: queued"
python3 "$HERE/fake_worker.py" "$WORK/ai" --seconds 60 --vram 20 --delay 0.1 &
WPID=$!
check "the worker takes it: running" wait_for f "web UI: running"
check "the Log view goes to the new run's log" wait_for f "reading it again"
check "the new run's steps show in the header" wait_for f "/40"
check "the end: completed" wait_for f "web UI: completed"
[ -f "$WORK/ai/output/flux mug/logs/0_log.txt" ] && ok "the worker moved the old log to logs/0_log.txt" ||
	nok "the worker moved the old log to logs/0_log.txt"
T send-keys -t f q

# A job opened before it ever ran has no log: when the worker starts its run, the log is picked
# up and read (the Log view shows the new run, its status beside it).
python3 - "$WORK/ai" "$HERE/../retry/jobs/conservative.yaml" <<'PY'
import json, os, sqlite3, sys, yaml
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[2])) + "/../../aitk")
import uidb
root, job = sys.argv[1], sys.argv[2]
cfg = yaml.safe_load(open(job))
cfg["config"]["name"] = "new one"
cfg["config"]["process"][0]["training_folder"] = os.path.join(root, "output")
con = sqlite3.connect(os.path.join(root, "aitk_db.db"), timeout=30)
uidb.add_job(con, {"name": "new one", "status": "stopped", "total_steps": 40,
                   "job_config": json.dumps(cfg, separators=(",", ":"))}, os.path.join(root, "output"))
con.commit()
con.close()
PY
T new-session -d -s g -x 200 -y 30 -c "$WORK" \
	"exec env -u NO_COLOR LC_ALL=C.UTF-8 TERM=tmux-256color HOME='$WORK' '$OOMFIX' --aitk '$WORK/ai' 'aitk:new one'"
check "a job that never ran opens without a log" wait_for g "aitk:new one"
"$OOMFIX" queue --aitk "$WORK/ai" "aitk:new one" 2> /dev/null
check "its first run's log is picked up when the worker starts it" wait_for g "its log is in the Log view"
T send-keys -t g Tab Tab Tab Tab Tab
check "the Log view shows that run with the job's status" wait_for g "new one/log.txt"
check "... and its status" wait_for g "web UI: "
T send-keys -t g q
echo "1..$n"
exit $((fails > 0))
