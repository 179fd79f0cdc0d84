#!/bin/bash
# Benchmark: following a growing log. A generated log of SIZE MiB is diagnosed, 1 MiB is appended
# to it (cut mid-frame, as a live log is), and the diagnosis is brought up to date incrementally;
# then the grown log is diagnosed again from scratch — both in one run, the verdicts compared.
#   bench/follow.sh [BUILD_DIR] [SIZE_MB]    (defaults: build, 1024)
# The log is written to a temporary directory and removed at the end.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$here/../build}
SIZE=${2:-1024}
T=$(mktemp -d "${TMPDIR:-/tmp}/oomfix-follow.XXXXXX")
trap 'rm -rf "$T"' EXIT

echo "generating a $((SIZE + 1)) MiB log in $T ..."
python3 "$here/gen_log.py" "$((SIZE + 1))" "$T/all.log" 2>/dev/null
total=$(stat -c %s "$T/all.log")
keep=$((total - 1048576))
head -c "$keep" "$T/all.log" >"$T/big.log"
tail -c 1048576 "$T/all.log" >"$T/add.log"
rm "$T/all.log"
cat "$T/big.log" >/dev/null # page cache
for i in 1 2 3; do
	cp "$T/big.log" "$T/run.log"
	echo "run $i:"
	"$BUILD/bench/follow_bench" "$T/run.log" "$T/add.log" | sed 's/^/  /'
done
