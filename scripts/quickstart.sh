#!/bin/sh
# Quick start: installs what is missing (Debian/Ubuntu), builds, then either opens oomfix on the
# bundled example (`demo`) or runs the whole test suite, plain and under ASan/UBSan (`test`).
#   sh scripts/quickstart.sh demo
#   sh scripts/quickstart.sh test
set -eu
cd "$(dirname "$0")/.."

mode=${1:-demo}
case $mode in demo|test) ;; *) echo "usage: sh scripts/quickstart.sh demo|test" >&2; exit 64 ;; esac

packages="gcc meson ninja-build pkg-config libyaml-dev libpcre2-dev libncurses-dev libcmocka-dev libsqlite3-dev gettext python3"
[ "$mode" = test ] && packages="$packages tmux patch jq python3-yaml"
# The test suite also builds the static release archive (tests/release): its static libraries.
[ "$mode" = test ] && packages="$packages libsqlite3-dev zlib1g-dev"
# ... and installs the wheel into a fresh venv (python3 -m venv needs ensurepip) and unpacks the
# .deb (dpkg-deb, in dpkg).
[ "$mode" = test ] && packages="$packages python3-venv dpkg"

# shellcheck disable=SC2086
sh scripts/apt-install.sh $packages

# Warnings are errors in the test build, as in CI.
werror=false
[ "$mode" = test ] && werror=true

log=$(mktemp)
trap 'rm -f "$log"' EXIT
quiet() { # runs a command, showing its output only when it fails
	"$@" >"$log" 2>&1 || { cat "$log" >&2; echo "failed: $*" >&2; exit 1; }
}
setup() { # dir, extra meson options...
	dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		quiet meson configure "$dir" -Dwerror=$werror "$@"
	else
		quiet meson setup "$dir" -Dwerror=$werror "$@"
	fi
	quiet ninja -C "$dir"
}

if [ "$mode" = demo ]; then
	setup build
	# The log and the UI need a UTF-8 locale; C.UTF-8 exists on every Debian system.
	case $(locale charmap 2>/dev/null) in UTF-8) ;; *) export LC_CTYPE=C.UTF-8 ;; esac
	trap - EXIT
	rm -f "$log"
	# A fresh copy each time, so saving in the demo never touches the repository's example.
	mkdir -p build/demo
	cp examples/job.yaml examples/train.log build/demo/
	rm -f build/demo/job.yaml~ build/demo/job.yaml.oomfix.md build/demo/job.yaml.oomfix-save
	cd build/demo
	exec ../src/cli/oomfix job.yaml train.log
fi

status=0
setup build
meson test -C build --print-errorlogs >build/test-output.txt 2>&1 || status=1
setup build-asan -Db_sanitize=address,undefined -Db_lundef=false
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs >build-asan/test-output.txt 2>&1 || status=1
[ $status -eq 0 ] || { tail -n 60 build/test-output.txt build-asan/test-output.txt; }
python3 scripts/test-summary.py build/meson-logs/testlog.json build-asan/meson-logs/testlog.json || status=1
exit $status
