#!/bin/sh
# Builds the Python wheel: build-release/oomfix-VERSION-py3-none-manylinux_2_17_ARCH.whl, for the
# virtual environment AI Toolkit runs in. It holds the static binary of the release archive
# (scripts/release.sh builds it, or reuses its build) as a script, and the archive's share/ as the
# wheel's data, so `pip install oomfix-....whl` puts bin/oomfix on the venv's PATH and share/
# (themes, the Japanese catalogue, the man page, completions, terminfo, C.UTF-8) beside it, where
# the binary looks for it. The binary is static, so the wheel fits any glibc Linux of its
# architecture (manylinux_2_17 is the oldest tag pip still takes). Python's standard library only:
# a wheel is a zip with METADATA, WHEEL and RECORD (PEP 427).
#   sh scripts/wheel.sh            (OOMFIX_RELEASE_DIR=DIR to build somewhere else)
# Prints the wheel's path.
set -eu
cd "$(dirname "$0")/.."

out=${OOMFIX_RELEASE_DIR:-build-release}
tarball=$(sh scripts/release.sh | tail -n 1)
tree=${tarball%.tar.gz}
[ -x "$tree/bin/oomfix" ] || { echo "wheel: no staged tree at $tree" >&2; exit 1; }
mkdir -p "$out"
mtime=$(git log -1 --format=%ct 2>/dev/null || echo 315532800)
python3 scripts/pkgmeta.py wheel "$tree" "$(cd "$out" && pwd)" "$mtime"
