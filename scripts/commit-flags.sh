#!/usr/bin/env bash
# Prints the `swift build` flags that build this clone's commit into the binary
# (`-Xcc -DTAKSI_SOURCE_COMMIT=<sha>`, read by the CTaksiBuild target), when the clone has no
# uncommitted change to tracked files; else nothing. scripts/install.sh, scripts/release.sh and
# Benchmarks/container-check.sh build with them (one build, the same flags), so `taksi-server
# --version` says which source it is and `taksi-server init` can pin a project to exactly it. A
# source without git prints nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
head=$(git rev-parse HEAD 2>/dev/null) || exit 0
git diff --quiet HEAD -- 2>/dev/null && echo "-Xcc -DTAKSI_SOURCE_COMMIT=$head"
exit 0
