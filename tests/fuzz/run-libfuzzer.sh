#!/bin/sh
# run-libfuzzer.sh — build the fuzz targets with clang's libFuzzer, ASan and UBSan straight from
# src/core/*.c, and run each one for SECONDS (default 60) seeded from tests/fuzz/corpus/<target>.
#
# Usage: tests/fuzz/run-libfuzzer.sh [SECONDS [TARGET...]]
#        TARGET: doc diag text memacct json retry theme dbjob fix estimate (default all)
#        SECONDS 0 only builds $FUZZ_BUILD/fuzz_<target> (run one with a file to replay it).
# Environment: CC (default clang, else clang-14), FUZZ_BUILD (default build-libfuzzer at the top
# of the tree), FUZZ_FLAGS (more libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1"), FUZZ_CFLAGS
# (more compiler flags, e.g. "-fno-sanitize=nonnull-attribute" to look past a known report).
#
# New inputs go to $FUZZ_BUILD/corpus/<target>, never into the committed corpus; crashes, leaks
# and timeouts go to $FUZZ_BUILD/artifacts/<target>/. Exit status 1 when any target found one.
# FUZZ_NO_BUILD=1 runs the targets already built (campaign.sh builds once, then runs each).
set -eu

secs=${1:-60}
[ $# -gt 0 ] && shift
all="doc diag text memacct json retry theme dbjob fix estimate"
targets=${*:-$all}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${FUZZ_BUILD:-$root/build-libfuzzer}

if [ -z "${CC:-}" ]; then
	if command -v clang >/dev/null 2>&1; then CC=clang
	elif command -v clang-14 >/dev/null 2>&1; then CC=clang-14
	else echo "run-libfuzzer.sh: clang not found (apt-get install clang)" >&2; exit 2
	fi
fi

san="address,undefined"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined
	-Wall -Wextra -Wno-unused-parameter -I$root/include -I$out"
extra=${FUZZ_CFLAGS:-} # last, so that it can turn off part of what -fsanitize turned on
# Every library the core links (src/core/meson.build) and ncursesw for the UI readers that the
# retry and theme targets link (src/ui/retry.c with args.c, src/ui/theme.c).
deps="yaml-0.1 libpcre2-8 sqlite3 ncursesw"
# shellcheck disable=SC2086
if ! deps_cflags=$(pkg-config --cflags $deps) || ! deps_libs=$(pkg-config --libs $deps); then
	echo "run-libfuzzer.sh: pkg-config does not find all of: $deps" >&2
	exit 2
fi
deps_libs="$deps_libs -lpthread -lm"

mkdir -p "$out/obj"
# The model needs no config.h today; one is written so that a module that starts to include it
# still builds here.
cat >"$out/config.h" <<'CONF'
#define OOMFIX_VERSION "fuzz"
#define GETTEXT_PACKAGE "oomfix"
#define OOMFIX_LOCALEDIR "/nonexistent"
#define OOMFIX_BUILD_LOCALEDIR "/nonexistent"
#define OOMFIX_SOURCE_THEMEDIR "/nonexistent"
#define OOMFIX_THEMEDIR "/nonexistent"
CONF

objs=""
for src in "$root"/src/core/*.c; do
	obj="$out/obj/$(basename "$src" .c).o"
	# FUZZ_NO_BUILD=1 (campaign.sh): the objects and targets are already built
	if [ -z "${FUZZ_NO_BUILD:-}" ]; then
		# shellcheck disable=SC2086
		$CC $cflags $deps_cflags -fsanitize=fuzzer-no-link,$san $extra -c "$src" \
			-o "$obj"
	fi
	objs="$objs $obj"
done

# The UI files a target reads through (no other UI file is linked).
ui_src() {
	case $1 in
	retry) echo "$root/src/ui/retry.c $root/src/ui/args.c" ;; # args.c: the UI's --vram
	theme) echo "$root/src/ui/theme.c" ;;
	esac
}

found=0
for t in $targets; do
	case " $all " in
	*" $t "*) ;;
	*) echo "run-libfuzzer.sh: unknown target $t (targets: $all)" >&2; exit 2 ;;
	esac
	exe="$out/fuzz_$t"
	if [ -z "${FUZZ_NO_BUILD:-}" ] || [ ! -x "$exe" ]; then
		uiobjs=""
		for src in $(ui_src "$t"); do
			obj="$out/obj/ui_$(basename "$src" .c).o"
			# shellcheck disable=SC2086
			$CC $cflags $deps_cflags -fsanitize=fuzzer-no-link,$san $extra -c "$src" \
				-o "$obj"
			uiobjs="$uiobjs $obj"
		done
		# shellcheck disable=SC2086
		$CC $cflags $deps_cflags -fsanitize=fuzzer,$san $extra "$here/fuzz_$t.c" $objs \
			$uiobjs $deps_libs -o "$exe"
	fi
	[ "$secs" = 0 ] && continue # build only
	mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
	echo "== fuzz_$t for ${secs}s" >&2
	# the YAML and job words serve every reader of jobs and JSON, the log words the account
	case $t in
	fix | dbjob | theme | retry | json | estimate) d=doc ;;
	memacct) d=diag ;;
	*) d=$t ;;
	esac
	dict=""
	[ -f "$here/$d.dict" ] && dict="-dict=$here/$d.dict"
	# shellcheck disable=SC2086
	if ! UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" $dict ${FUZZ_FLAGS:-} \
		"$out/corpus/$t" "$here/corpus/$t"; then
		found=1
	fi
	if [ -n "$(ls -A "$out/artifacts/$t")" ]; then
		found=1
		echo "fuzz_$t: reproducers in $out/artifacts/$t/:" >&2
		ls -l "$out/artifacts/$t" >&2
	fi
done
exit $found
