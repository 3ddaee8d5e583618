#!/usr/bin/env bash
# The check to run on a Mac: no machine this project's CI has runs macOS, so macOS is built and
# tested only where someone runs this. It builds everything, validates the example screens and
# runs `swift test` (tests that need PostgreSQL, Chromium or the Python validators say "skipped"
# where those are missing; `python3 -m pip install jsonschema pyyaml` adds the schema checks).
#
#   scripts/check-macos.sh
#
# Needs the Swift 6.2 toolchain or later (Xcode 26, or swift.org's toolchain for macOS).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" != Darwin ]; then
    echo "check-macos: this is the check for macOS; on Linux, bash .ci/run is" >&2
    exit 2
fi
swift --version
swift build --product taksi-server
"$(swift build --show-bin-path)/taksi-server" validate Screens
swift test
echo "check-macos: built and tested on $(sw_vers -productName) $(sw_vers -productVersion) ($(uname -m))"
