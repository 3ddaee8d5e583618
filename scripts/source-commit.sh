#!/usr/bin/env bash
# Prints the commit of this clone when it has no uncommitted change to tracked files, else nothing:
# what scripts/install.sh and scripts/release.sh build into the binary (-Xcc
# -DTAKSI_SOURCE_COMMIT=...), so `taksi-server --version` says which source it is and `taksi-server
# init` can pin a project to exactly it. A source without git prints nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
head=$(git rev-parse HEAD 2>/dev/null) || exit 0
git diff --quiet HEAD -- 2>/dev/null && echo "$head"
exit 0
