#!/bin/bash
# Benchmark: `oomfix diagnose` against ripgrep (`rg -c -i`, the peer) and GNU grep (`grep -c -i -E`,
# a second reference) with the same signature alternation on the same generated log (best of 3,
# page cache warm, side by side in one run), and oomfix's peak memory at two log sizes.
# ripgrep is installed here when it is missing (Debian package `ripgrep`); only the bench needs it.
#   bench/diagnose.sh [OOMFIX] [SIZE_MB]    (defaults: build/src/cli/oomfix, 1024)
# The logs are written to a temporary directory and removed at the end.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OOMFIX=${1:-$here/../build/src/cli/oomfix}
SIZE=${2:-1024}
SMALL=$((SIZE / 8))
T=$(mktemp -d "${TMPDIR:-/tmp}/oomfix-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

if ! command -v rg >/dev/null; then
	echo "installing ripgrep (the peer of this bench) ..."
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q ripgrep >/dev/null
	else
		sudo apt-get install -y -q ripgrep >/dev/null
	fi
fi
command -v rg >/dev/null || { echo "ripgrep (rg) is needed: apt-get install ripgrep" >&2; exit 69; }

# The SPEC §3.1 signatures and the non-OOM deaths as one POSIX ERE (also valid for ripgrep),
# matched case-insensitively as oomfix matches them.
ALT='(CUDA|HIP) out of memory|(CUDA|HIP) error: out of memory|torch\.(cuda\.)?OutOfMemoryError'
ALT+='|OOM during training step|Tried to allocate|0 bytes (is )?free|CUBLAS_STATUS_ALLOC_FAILED'
ALT+='|Process [0-9]+ has .* memory in use|Out of memory: Killed process|SIGKILL'
ALT+='|exit(ed)? (with )?(status|code) 137|FileNotFoundError|No such file or directory'
ALT+='|GatedRepoError|ScannerError|ParserError|^[A-Za-z_.]*(Error|Exception): '

echo "generating ${SIZE} MiB and ${SMALL} MiB logs in $T ..."
python3 "$here/gen_log.py" "$SIZE" "$T/big.log" 2>"$T/step"
python3 "$here/gen_log.py" "$SMALL" "$T/small.log" 2>/dev/null
ls -l "$T/big.log" "$T/small.log" | awk '{print "  " $5 " bytes  " $NF}'
cat "$T/big.log" >/dev/null # page cache

best() { # best wall time of 3 runs of "$@", seconds
	local b=999999 t
	for _ in 1 2 3; do
		t=$( { TIMEFORMAT=%R; time "$@" >"$T/out" 2>&1; } 2>&1 | tail -1) # not /dev/null: grep stops at the first match there
		b=$(awk -v a="$t" -v b="$b" 'BEGIN { print (a < b) ? a : b }')
	done
	echo "$b"
}

echo "checking the verdict ..."
"$OOMFIX" diagnose --json "$T/big.log" >"$T/verdict.json"
python3 - "$T/verdict.json" "$(cat "$T/step")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["oom"] and d["timing"] == "intermittent" and d["failed_step"] == int(sys.argv[2]), d
print("  verdict: %s, phase %s, step %d of %d" % (d["timing"], d["phase"], d["failed_step"], d["total_steps"]))
PY

t_oom=$(best "$OOMFIX" diagnose --json "$T/big.log")
t_rg=$(best rg --no-config -c -i "$ALT" "$T/big.log")
t_grep=$(best grep -c -i -E "$ALT" "$T/big.log")
t_grep_cs=$(best grep -c -E "$ALT" "$T/big.log")
hits=$(rg --no-config -c -i "$ALT" "$T/big.log" || true)

rss() { /usr/bin/time -f %M "$OOMFIX" diagnose --json "$1" 2>&1 >/dev/null | tail -1; }
rss_small=$(rss "$T/small.log")
rss_big=$(rss "$T/big.log")
heap() { # peak heap bytes from valgrind massif, when valgrind is there
	command -v valgrind >/dev/null || { echo "n/a"; return; }
	valgrind --tool=massif --pages-as-heap=no --massif-out-file="$T/massif" \
		"$OOMFIX" diagnose --json "$1" >/dev/null 2>&1
	grep mem_heap_B "$T/massif" | sed 's/.*=//' | sort -n | tail -1
}

echo
echo "log: ${SIZE} MiB, $(wc -l <"$T/big.log") physical lines, rg hits: $hits"
printf "  oomfix diagnose --json     %6.2f s\n" "$t_oom"
printf "  rg -c -i ALT               %6.2f s\n" "$t_rg"
printf "  grep -c -i -E ALT          %6.2f s\n" "$t_grep"
printf "  grep -c -E ALT (case-sens.) %5.2f s\n" "$t_grep_cs"
awk -v a="$t_oom" -v b="$t_rg" 'BEGIN { printf "  ratio oomfix / rg -i       %6.2f\n", (b > 0) ? a / b : 0 }'
awk -v a="$t_oom" -v b="$t_grep" 'BEGIN { printf "  ratio oomfix / grep -i     %6.2f\n", (b > 0) ? a / b : 0 }'
echo "peak RSS of oomfix: ${rss_small} KiB on ${SMALL} MiB, ${rss_big} KiB on ${SIZE} MiB"
if [ "${HEAP:-1}" = 1 ]; then
	echo "peak heap (massif): $(heap "$T/small.log") B on ${SMALL} MiB"
fi
