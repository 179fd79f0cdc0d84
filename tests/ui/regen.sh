#!/bin/bash
# Regenerates the screen-dump goldens from the built binary; review the result with git diff.
#   tests/ui/regen.sh [path/to/oomfix]      (default: build-ui/src/cli/oomfix)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OOMFIX=${1:-${OOMFIX:-$HERE/../../build-ui/src/cli/oomfix}}
OOMFIX=$(cd "$(dirname "$OOMFIX")" && pwd)/$(basename "$OOMFIX")
REGEN=1 OOMFIX=$OOMFIX bash "$HERE/screens.sh"
git -C "$HERE" diff --stat -- golden || true
