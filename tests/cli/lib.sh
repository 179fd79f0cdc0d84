# lib.sh — what the command-line TAP tests share: the binary, a scratch folder removed at exit, a
# UTF-8 locale, and ok/nok/check/has/st. Sourced by mistakes.sh and review3.sh.
set -u
OOMFIX=${OOMFIX:?set OOMFIX to the built binary}
TESTS_DIR=${TESTS_DIR:?set TESTS_DIR to the tests folder}
FIX=$TESTS_DIR/ui/fixtures
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export NO_COLOR=1 LC_ALL=C.UTF-8 HOME=$WORK/home
unset LANGUAGE

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
has() { grep -qF -- "$2" "$1"; }
# st EXPECTED ARGS...: runs oomfix, keeps stdout/stderr in $WORK/out, $WORK/err; true when the
# exit status is EXPECTED
st() { local want=$1; shift; "$OOMFIX" "$@" > "$WORK/out" 2> "$WORK/err"; local got=$?
	[ "$got" -eq "$want" ] || { echo "# exit $got, wanted $want: $*"; sed 's/^/#   /' "$WORK/err"; return 1; }; }
