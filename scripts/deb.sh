#!/bin/sh
# Builds the Debian package: build-release/oomfix_VERSION_ARCH.deb, from the same staged tree as
# the release archive and the wheel (scripts/release.sh builds it, or reuses its build): the
# static binary in /usr/bin and its data in /usr/share (themes, the Japanese catalogue, the man
# page, completions, terminfo, C.UTF-8), where the binary looks for it. Needs dpkg-deb (dpkg).
#   sh scripts/deb.sh              (OOMFIX_RELEASE_DIR=DIR to build somewhere else)
# Prints the package's path.
set -eu
cd "$(dirname "$0")/.."

command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb not found (it comes with dpkg)" >&2; exit 2; }
out=${OOMFIX_RELEASE_DIR:-build-release}
tarball=$(sh scripts/release.sh | tail -n 1)
tree=${tarball%.tar.gz}
[ -x "$tree/bin/oomfix" ] || { echo "deb: no staged tree at $tree" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
info=$(python3 scripts/pkgmeta.py deb "$tree" "$out" "$mtime")
root=$(echo "$info" | sed -n 1p)
deb=$out/$(echo "$info" | sed -n 2p)
# root:root owners whoever builds it; xz as Debian's own packages
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
rm -rf "$root"
echo "$deb"
