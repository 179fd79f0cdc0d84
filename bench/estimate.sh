#!/bin/bash
# Benchmark: the time of one memory estimate against `oomfix get` on the same job.
#   bench/estimate.sh [BUILD_DIR] [JOB]    (defaults: build, the FLUX 24 GB example job)
# Two measures: in one process (estimate_bench: estimate_job against reading the job, which is
# what `get` does before it prints), and as whole commands (`oomfix estimate --vram 24 --json`
# against `oomfix get`, best of 20 each, so start-up counts in both).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$here/../build}
JOB=${2:-$here/../tests/estimate/examples/train_lora_flux_24gb.yaml}
OOMFIX=$B/src/cli/oomfix

echo "job: $(basename "$JOB")"
"$B/bench/estimate_bench" "$JOB" 2000

best() { # best wall time of 20 runs of "$@", milliseconds
	python3 - "$@" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(20):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    best = min(best, time.perf_counter() - t)
print("%.2f" % (best * 1000))
PY
}
t_get=$(best "$OOMFIX" get "$JOB" config.process[0].train.batch_size)
t_est=$(best "$OOMFIX" estimate --vram 24 --json "$JOB")
echo "oomfix get: $t_get ms, oomfix estimate: $t_est ms, estimate / get: $(awk -v a="$t_est" -v b="$t_get" 'BEGIN { printf "%.2f", a / b }')"
