#!/bin/bash
# Benchmark: what asking nvidia-smi beside the follow loop costs (SPEC §12.2). A writer appends a
# training bar frame to a log every 10 ms for SECONDS; `oomfix diagnose --follow --job` follows
# it to the end, once with an nvidia-smi on PATH (a stand-in shell script that answers as the
# real one does: one card, the trainer and another process) and once without one. Reported: the
# CPU seconds of the follower and everything it ran (its children included), each run's wall
# time, and the ratio with / without. The real nvidia-smi costs more per call than the stand-in
# (tens of milliseconds); the loop asks it at most once a second whatever it costs, and never
# waits for it.
#   bench/follow_smi.sh [OOMFIX] [SECONDS]    (defaults: build/src/cli/oomfix, 10)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OOMFIX=${1:-$here/../build/src/cli/oomfix}
SECS=${2:-10}
T=$(mktemp -d "${TMPDIR:-/tmp}/oomfix-followsmi.XXXXXX")
trap 'rm -rf "$T"' EXIT
cp "$here/../tests/retry/jobs/conservative.yaml" "$T/job.yaml"
mkdir -p "$T/smi" "$T/nosmi"
cat >"$T/smi/nvidia-smi" <<'SH'
#!/bin/sh
case "$1" in
--query-gpu=*) echo "0, GPU-b, NVIDIA GeForce RTX 4090, 24564, 1000" ;;
--query-compute-apps=*) echo "GPU-b, 1, 6144"; echo "GPU-b, $$, 9000" ;;
*) exit 9 ;;
esac
SH
chmod +x "$T/smi/nvidia-smi"

# one run: $1 the PATH folder; prints "cpu wall polls"
run() {
	local bin=$1
	printf 'Running 1 job\nLoading zimage model\nzimage_safe:   0%%|          | 0/100000 [00:00<?, ?it/s]' >"$T/log"
	(
		end=$((SECONDS + SECS))
		s=0
		while [ $SECONDS -lt $end ]; do
			s=$((s + 1))
			printf '\rzimage_safe:   1%%|          | %d/100000 [00:02<01:18, 1.62s/it, lr: 1.0e-04 loss: 3.370e-01]' $s
			sleep 0.01
		done
		printf '\n\n========================================\nResult:\n - 1 completed job\n========================================\n'
	) >>"$T/log" &
	local writer=$!
	python3 - "$bin" "$OOMFIX" "$T" <<'PY'
import os, resource, subprocess, sys, time
bin, oomfix, t = sys.argv[1:4]
env = dict(os.environ, PATH=bin + ":/usr/bin:/bin", OOMFIX_MEASUREMENTS=t + "/m.db")
start = time.monotonic()
subprocess.run([oomfix, "diagnose", "--follow", "--job", t + "/job.yaml", t + "/log"], env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.monotonic() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.1f" % (ru.ru_utime + ru.ru_stime, wall))
PY
	wait $writer
}
echo "following a log written every 10 ms for $SECS s, three times each way:"
for i in 1 2 3; do
	rm -f "$T/m.db"
	read -r c1 w1 < <(run "$T/smi")
	read -r c0 w0 < <(run "$T/nosmi")
	echo "  run $i: with nvidia-smi $c1 s CPU ($w1 s), without $c0 s CPU ($w0 s); ratio $(python3 -c "print('%.2f' % ($c1 / max($c0, 0.001)))")"
done
