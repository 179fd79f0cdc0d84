#!/bin/sh
# Prints oomfix's version for `oomfix --version` and the release archive's name: `git describe`
# when the tree has a tag (v0.2.0, v0.2.0-3-gabc1234), else the project version with the commit
# (0.1.0-gabc1234), with -dirty for uncommitted changes. Exits non-zero outside a git checkout,
# so the build falls back to the project version alone (a source archive).
#   sh scripts/version.sh PROJECT_VERSION
set -eu
cd "$(dirname "$0")/.."
base=${1:?usage: version.sh PROJECT_VERSION}
git rev-parse --git-dir >/dev/null 2>&1 || exit 1
if v=$(git describe --tags --dirty 2>/dev/null); then
	echo "${v#v}"
else
	commit=$(git describe --always --dirty 2>/dev/null) && [ -n "$commit" ] || exit 1
	echo "$base-g$commit"
fi
