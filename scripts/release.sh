#!/bin/sh
# Builds the release archive: build-release/oomfix-VERSION-linux-ARCH.tar.gz, a statically linked
# bin/oomfix (every library linked in, glibc included: no shared library at all) and beside it
# share/ with the themes, the Japanese catalogue, the man page, the shell completions, a few
# common terminfo entries and a C.UTF-8 locale. Unpacked anywhere, bin/oomfix finds share/ from
# its own path. Installs what it needs on Debian/Ubuntu, as the quick start does.
#   sh scripts/release.sh            (OOMFIX_RELEASE_DIR=DIR to build somewhere else)
#
# Static glibc caveats, none of which oomfix runs into: functions that go through NSS
# (getpwnam, getaddrinfo) or load iconv modules would need the same glibc version installed at
# run time; oomfix calls none of them (its only conversion, gettext's UTF-8 to UTF-8, is built
# into glibc). Locales are read from the running system, and its files must come from a glibc
# close enough to ours; when the UTF-8 locale asked for cannot be loaded, oomfix falls back to
# the C.UTF-8 shipped here (share/oomfix/locale), which matches the linked glibc exactly. Linking
# Debian's libsqlite3.a prints glibc's "Using 'dlopen' in statically linked applications" warning:
# it is SQLite's extension loading, which oomfix never calls.
set -eu
cd "$(dirname "$0")/.."

# The static build links whatever meson's dependency() finds, static: a new dependency needs no
# change here, only its -dev package in this list (for libsqlite3, also zlib, which it uses).
packages="gcc libc6-dev meson ninja-build pkg-config libyaml-dev libpcre2-dev libncurses-dev
	ncurses-bin ncurses-base gettext libsqlite3-dev zlib1g-dev libc-bin"
# shellcheck disable=SC2086
sh scripts/apt-install.sh $packages

out=${OOMFIX_RELEASE_DIR:-build-release}
mkdir -p "$out"
out=$(cd "$out" && pwd)
project_version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" meson.build | head -n 1)
version=$(sh scripts/version.sh "$project_version" 2>/dev/null) || version=$project_version
arch=$(uname -m)
name=oomfix-$version-linux-$arch
build=$out/build
stage=$out/stage

log=$(mktemp)
src=$(mktemp)
trap 'rm -f "$log" "$src"' EXIT
quiet() { # runs a command, showing its output only when it fails
	"$@" >"$log" 2>&1 || { cat "$log" >&2; echo "failed: $*" >&2; exit 1; }
}

# prefer_static makes every dependency() static (pkg-config --static, .a files); -static links
# glibc in too. No PIE: a static-pie binary gains nothing here and needs glibc's rcrt1.
opts="-Dbuildtype=release -Dprefer_static=true -Ddefault_library=static -Dc_link_args=-static
	-Db_pie=false -Dstrip=true -Dtests=false -Ddev_paths=false -Dwerror=false --prefix=/usr/local"
if [ -f "$build/build.ninja" ]; then
	# shellcheck disable=SC2086
	quiet meson configure "$build" $opts
else
	# shellcheck disable=SC2086
	quiet meson setup "$build" $opts
fi
quiet ninja -C "$build"
rm -rf "$stage"
quiet meson install -C "$build" --no-rebuild --destdir "$stage"

pkg=$out/$name
rm -rf "$pkg"
mv "$stage/usr/local" "$pkg"
rm -rf "$stage"

if ldd "$pkg/bin/oomfix" >/dev/null 2>&1; then
	echo "release: $pkg/bin/oomfix is not static:" >&2
	ldd "$pkg/bin/oomfix" >&2
	exit 1
fi

# Terminfo for machines without the entry for their TERM; compiled from this system's entries
# (use= resolved by infocmp), in the directory layout ncurses reads.
for t in xterm xterm-256color screen screen-256color tmux tmux-256color linux vt100; do
	infocmp -x "$t" >"$src" 2>"$log" || { cat "$log" >&2; echo "release: no terminfo entry $t here" >&2; exit 1; }
	quiet tic -x -o "$pkg/share/terminfo" "$src"
done

# glibc's C.UTF-8 locale, which this glibc reads and which a bare system may lack.
if [ -d /usr/lib/locale/C.utf8 ]; then
	mkdir -p "$pkg/share/oomfix/locale"
	cp -R /usr/lib/locale/C.utf8 "$pkg/share/oomfix/locale/C.utf8"
else
	echo "release: /usr/lib/locale/C.utf8 is missing; the archive will rely on the system's locales" >&2
fi
cp README.md "$pkg/share/oomfix/README.md"
cp examples/job.yaml examples/train.log "$pkg/share/oomfix/"
mkdir -p "$pkg/share/oomfix/examples"
mv "$pkg/share/oomfix/job.yaml" "$pkg/share/oomfix/train.log" "$pkg/share/oomfix/examples/"

tarball=$out/$name.tar.gz
# Owner, group and times fixed so the archive depends on the sources, not on who built it when.
mtime=$(git log -1 --format=@%ct 2>/dev/null || echo @0)
tar -C "$out" --owner=0 --group=0 --numeric-owner --mtime="$mtime" --sort=name -czf "$tarball" "$name"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$tarball"
