#!/bin/bash
# The release archive as a user gets it: scripts/release.sh builds it, it is unpacked into an
# empty directory and run with a bare environment (env -i, TERMINFO and TERMINFO_DIRS pointing to
# empty folders). Checks: no dynamic dependency, --version, diagnose on the bundled example,
# Japanese --help, themes found beside the binary, the UI opening and quitting in tmux, and a
# clear message for an unknown TERM. Where a mount namespace is allowed (root, or unprivileged
# user namespaces), the system's locales and terminfo are hidden too, as on a bare machine.
# Then the development build, installed with `meson install` and moved, finds its data the same
# way. Prints TAP.   smoke.sh RELEASE_BUILD_DIR [MESON_BUILD_DIR]
set -u
SOURCE_ROOT=${SOURCE_ROOT:?set SOURCE_ROOT to the source tree}
OUT=${1:?usage: smoke.sh RELEASE_BUILD_DIR [MESON_BUILD_DIR]}
BUILD_ROOT=${2:-}
WORK=$(mktemp -d)
SOCK=oomfix-release-$$
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { command -v tmux >/dev/null && T kill-server 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }

if ! OOMFIX_RELEASE_DIR=$OUT sh "$SOURCE_ROOT/scripts/release.sh" > "$WORK/release.out" 2>&1; then
	echo "not ok 1 - scripts/release.sh builds the archive"
	sed 's/^/# /' "$WORK/release.out"
	echo "1..1"
	exit 1
fi
tarball=$(tail -n 1 "$WORK/release.out")
ok "scripts/release.sh builds the archive"
check "archive is named oomfix-VERSION-linux-$(uname -m).tar.gz" \
	test -n "$(basename "$tarball" | grep -E "^oomfix-[0-9A-Za-z.+-]+-linux-$(uname -m)\.tar\.gz$")"

mkdir "$WORK/unpacked" "$WORK/empty" "$WORK/home"
tar -C "$WORK/unpacked" -xzf "$tarball"
top=$(echo "$WORK"/unpacked/oomfix-*)
B=$top/bin/oomfix
ex=$top/share/oomfix/examples
check "unpacks to one folder" test -d "$top"

missing=""
for f in bin/oomfix share/oomfix/themes/default-dark.yaml share/oomfix/themes/light.yaml \
	share/locale/ja/LC_MESSAGES/oomfix.mo share/man/man1/oomfix.1 \
	share/bash-completion/completions/oomfix share/zsh/site-functions/_oomfix \
	share/fish/vendor_completions.d/oomfix.fish share/oomfix/locale/C.utf8/LC_CTYPE \
	share/terminfo/x/xterm share/terminfo/x/xterm-256color share/terminfo/s/screen \
	share/terminfo/s/screen-256color share/terminfo/t/tmux share/terminfo/t/tmux-256color \
	share/terminfo/l/linux share/terminfo/v/vt100; do
	[ -e "$top/$f" ] || missing="$missing $f"
done
check "archive holds the binary, themes, catalogue, man page, completions, terminfo" test -z "$missing"
[ -n "$missing" ] && echo "# missing:$missing"

# ldd prints "not a dynamic executable" and fails for a static binary.
ldd_out=$(ldd "$B" 2>&1)
check "ldd finds no dynamic dependency" eval '! ldd "$B" >/dev/null 2>&1 && ! grep -q "=>" <<< "$ldd_out"'
if command -v readelf >/dev/null; then
	check "no program interpreter, no NEEDED library" \
		eval '! readelf -lW "$B" | grep -q INTERP && ! readelf -dW "$B" 2>/dev/null | grep -q NEEDED'
else
	skip "no program interpreter, no NEEDED library" "readelf is not installed"
fi

# The bare environment of a fresh container: nothing from ours but what we pass.
bare() { env -i HOME="$WORK/home" PATH=/usr/bin:/bin TERMINFO="$WORK/empty" \
	TERMINFO_DIRS="$WORK/empty" "$@"; }

(cd "$WORK/empty" && bare "$B" --version) > "$WORK/version.txt" 2>&1
st=$?
version=$(basename "$top"); version=${version#oomfix-}; version=${version%-linux-*}
check "--version: exit 0" test $st -eq 0
check "--version: the archive's version" grep -qxF "oomfix $version" "$WORK/version.txt"
check "--version: libyaml, PCRE2 and ncurses versions" \
	grep -qE '^libyaml [0-9.]+, PCRE2 [0-9.]+.*, ncurses [0-9.]+' "$WORK/version.txt"
check "--version: PCRE2 JIT state" grep -q '^PCRE2 JIT: ' "$WORK/version.txt"
check "--version: data files beside the binary" grep -qxF "Data files: $top/share" "$WORK/version.txt"
sed 's/^/# /' "$WORK/version.txt"
mkdir -p "$WORK/links/bin"
ln -s "$B" "$WORK/links/bin/oomfix"
bare "$WORK/links/bin/oomfix" --version > "$WORK/version-link.txt" 2>&1
check "--version through a symlink in another bin/: still the archive's data files" \
	grep -qxF "Data files: $top/share" "$WORK/version-link.txt"

(cd "$WORK/empty" && bare "$B" diagnose --json "$ex/train.log") > "$WORK/diag.json" 2>&1
st=$?
check "diagnose on the example: exit 0" test $st -eq 0
check "diagnose on the example: an OOM in training step 6" \
	eval 'grep -q "\"oom\": true" "$WORK/diag.json" && grep -q "\"failed_step\": 6" "$WORK/diag.json"'
bare "$B" plan "$ex/job.yaml" > "$WORK/plan.txt" 2>&1
check "plan on the example: exit 0" test $? -eq 0

bare LANGUAGE=ja LANG=C.UTF-8 "$B" --help > "$WORK/ja.txt" 2>&1
check "Japanese --help (LANGUAGE=ja LANG=C.UTF-8)" grep -q '使い方' "$WORK/ja.txt"
bare LANG=ja_JP.UTF-8 "$B" --help > "$WORK/ja2.txt" 2>&1
check "Japanese --help with LANG=ja_JP.UTF-8 even where that locale is missing" \
	grep -q '使い方' "$WORK/ja2.txt"
bare "$B" --help > "$WORK/en.txt" 2>&1
check "English --help without a locale" grep -q '^Usage:' "$WORK/en.txt"

printf 'dump theme.txt\n' > "$WORK/home/script"
(cd "$WORK/home" && bare LANG=C.UTF-8 NO_COLOR=1 "$B" "$ex/job.yaml" --theme light --script script) \
	> /dev/null 2>&1
check "a bundled theme is found beside the binary (--theme light)" \
	eval '[ -s "$WORK/home/theme.txt" ] && ! grep -q "not found" "$WORK/home/theme.txt"'

# hidden CMD...: runs CMD with the system's locales and terminfo hidden behind empty folders, in
# a private mount namespace; fails when that is not permitted here.
ns=""
if unshare -m true 2>/dev/null; then
	ns="unshare -m"
elif unshare -rm true 2>/dev/null; then
	ns="unshare -rm"
fi
hidden() {
	$ns sh -c 'e=$1; shift
		for d in /usr/lib/locale /usr/share/terminfo /lib/terminfo /etc/terminfo; do
			[ -d "$d" ] && { mount --bind "$e" "$d" || exit 99; }
		done
		[ -e /usr/lib/locale/locale-archive ] && exit 99
		exec "$@"' sh "$WORK/empty" "$@"
}
if [ -n "$ns" ] && hidden true 2>/dev/null; then
	hidden env -i HOME="$WORK/home" PATH=/usr/bin:/bin LANGUAGE=ja LANG=C.UTF-8 "$B" --help \
		> "$WORK/ja-bare.txt" 2>&1
	check "Japanese --help on a machine with no locales (the bundled C.UTF-8)" \
		grep -q '使い方' "$WORK/ja-bare.txt"
else
	skip "Japanese --help on a machine with no locales (the bundled C.UTF-8)" \
		"no mount namespace here to hide the system's locales"
	ns=""
fi

if ! command -v tmux >/dev/null; then
	for what in "UI opens" "UI quits" "UI in ASCII" "unknown TERM"; do
		skip "$what in tmux" "tmux is not installed"
	done
else
	# ui NAME ENV...: starts the UI on the example in a tmux pane, bare (and with the system's
	# locales and terminfo hidden when a mount namespace is allowed); the wrapper records the
	# exit status in NAME.status.
	ui() {
		local name=$1; shift
		{
			echo "WORK='$WORK' B='$B' ex='$ex' ns='$ns'"
			declare -f hidden
			echo "run() { \${ns:+hidden} env -i HOME=\"\$WORK/home\" PATH=/usr/bin:/bin \\"
			echo "	TERMINFO=\"\$WORK/empty\" TERMINFO_DIRS=\"\$WORK/empty\" $* \"\$B\" \"\$ex/job.yaml\" \"\$ex/train.log\"; }"
			echo "run; echo \"exit=\$?\" > \"\$WORK/$name.status\"; sleep 30"
		} > "$WORK/$name.sh"
		T new-session -d -s "$name" -x 100 -y 30 "bash $WORK/$name.sh"
	}
	screen() { T capture-pane -p -J -t "$1" 2>/dev/null; }
	wait_for() { # SESSION TEXT: up to 10 s
		for _ in $(seq 100); do
			screen "$1" | grep -qF -- "$2" && return 0
			sleep 0.1
		done
		echo "# waited in vain for '$2'; screen:"
		screen "$1" | sed 's/^/#   /'
		return 1
	}
	wait_status() { # NAME: up to 10 s for the exit status the wrapper writes
		for _ in $(seq 100); do
			[ -s "$WORK/$1.status" ] && { cat "$WORK/$1.status"; return; }
			sleep 0.1
		done
	}
	ui utf8 TERM=xterm-256color LANG=C.UTF-8
	check "UI opens in tmux, bare (TERM=xterm-256color${ns:+, no system terminfo or locales})" wait_for utf8 "Diagnosis"
	T send-keys -t utf8 q
	st=$(wait_status utf8)
	check "UI quits with q (exit 0)" test "$st" = "exit=0"

	ui ascii TERM=xterm-256color
	check "UI opens in ASCII without a UTF-8 locale" wait_for ascii "Diagnosis"
	check "UI in ASCII: no byte of a multibyte character on the screen" \
		eval '! screen ascii | LC_ALL=C grep -q "[^ -~]"'
	check "UI in ASCII: a progress bar of the log drawn with '#', one per block character" \
		eval 'screen ascii | grep -qF "100%|##########| 2/2"'
	T send-keys -t ascii q
	st=$(wait_status ascii)
	check "UI in ASCII quits with q (exit 0)" test "$st" = "exit=0"

	ui unknown TERM=no-such-terminal LANG=C.UTF-8
	st=$(wait_status unknown)
	check "unknown TERM: exit 64" test "$st" = "exit=64"
	# The exit status can be written before tmux has drawn the message: wait for it.
	wait_for unknown "Run it with one of them" > "$WORK/unknown.wait"
	check "unknown TERM: the message lists the TERM values oomfix knows" \
		eval '(known=$(screen unknown | tr -d "\n" | sed -n "s/.*oomfix knows: \([^.]*\)\..*/\1/p")
		for t in xterm xterm-256color screen screen-256color tmux tmux-256color linux vt100; do
			grep -qw -- "$t" <<< "$known" || exit 1
		done)'
	[ $fails -eq 0 ] || sed 's/^/# /' "$WORK/unknown.wait"
fi

# `meson install` to a prefix, then the prefix moved: still relocatable.
if [ -n "$BUILD_ROOT" ] && meson install -C "$BUILD_ROOT" --no-rebuild --destdir "$WORK/inst" \
	> "$WORK/install.out" 2>&1; then
	prefix=$(dirname "$(dirname "$(find "$WORK/inst" -path '*/bin/oomfix' | head -n 1)")")
	mv "$prefix" "$WORK/moved"
	m=$WORK/moved
	missing=""
	for f in bin/oomfix share/oomfix/themes/light.yaml share/locale/ja/LC_MESSAGES/oomfix.mo \
		share/man/man1/oomfix.1 share/bash-completion/completions/oomfix \
		share/zsh/site-functions/_oomfix share/fish/vendor_completions.d/oomfix.fish; do
		[ -e "$m/$f" ] || missing="$missing $f"
	done
	check "meson install: binary, themes, catalogue, man page and completions where each shell looks" \
		test -z "$missing"
	[ -n "$missing" ] && echo "# missing:$missing"
	bare "$m/bin/oomfix" --version > "$WORK/mversion.txt" 2>&1
	check "meson install, moved: data files found beside the binary" \
		grep -qxF "Data files: $m/share" "$WORK/mversion.txt"
	bare LANGUAGE=ja LANG=C.UTF-8 "$m/bin/oomfix" --help > "$WORK/mja.txt" 2>&1
	check "meson install, moved: Japanese --help" grep -q '使い方' "$WORK/mja.txt"
else
	for w in "files in place" "data files found" "Japanese --help"; do
		skip "meson install, moved: $w" "no meson build given, or meson install failed"
	done
	[ -n "$BUILD_ROOT" ] && sed 's/^/# /' "$WORK/install.out"
fi

echo "1..$n"
[ $fails -eq 0 ]
