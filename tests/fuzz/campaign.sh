#!/bin/sh
# campaign.sh — a fuzzing campaign: every target in turn, MINUTES each (default 10), with
# run-libfuzzer.sh (clang, libFuzzer, ASan, UBSan), going on after a crash so that one finding
# does not end a target's time. At the end, one line per target: runs, coverage (edges, features),
# corpus size, and what it found (crashes, leaks, timeouts, out-of-memory in artifacts/<target>/).
#
# Usage: tests/fuzz/campaign.sh [MINUTES [TARGET...]]
# Environment: as run-libfuzzer.sh (CC, FUZZ_BUILD, FUZZ_FLAGS, FUZZ_CFLAGS); CAMPAIGN_JOBS runs
# that many targets at once (default 1: the machine may be shared). Logs: $FUZZ_BUILD/logs/.
# Exit status 1 when any target left a reproducer.
set -eu

mins=${1:-10}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${FUZZ_BUILD:-$root/build-libfuzzer}
export FUZZ_BUILD="$out"
targets=${*:-doc diag text memacct json retry theme dbjob fix}
jobs=${CAMPAIGN_JOBS:-1}
secs=$((mins * 60))

# shellcheck disable=SC2086 # a list of targets
"$here/run-libfuzzer.sh" 0 $targets # build once
mkdir -p "$out/logs"

run_one() {
	FUZZ_FLAGS="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 ${FUZZ_FLAGS:-}" \
	FUZZ_NO_BUILD=1 "$here/run-libfuzzer.sh" "$secs" "$1" >"$out/logs/$1.log" 2>&1 || true
}

running=0
for t in $targets; do
	run_one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

found=0
printf '%-8s %10s %8s %8s %8s %s\n' target runs edges features corpus findings
for t in $targets; do
	log="$out/logs/$t.log"
	# libFuzzer's status lines: "#N ... cov: E ft: F corp: C/..."; the last one is the total
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
	runs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\).*/\1/p')
	n=$(find "$out/artifacts/$t" -type f 2>/dev/null | wc -l)
	[ "$n" -gt 0 ] && found=1
	printf '%-8s %10s %8s %8s %8s %s\n' "$t" "${runs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$n"
done
exit $found
