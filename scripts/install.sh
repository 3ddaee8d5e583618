#!/usr/bin/env bash
# Builds taksi-server from this clone and puts it on PATH: a release build with the Swift runtime
# linked in statically (the binary runs without the toolchain), stripped, installed as
# $PREFIX/bin/taksi-server.
#
#   scripts/install.sh                    # into ~/.local/bin
#   PREFIX=/usr/local scripts/install.sh  # into /usr/local/bin (may need sudo)
#
# About 10 minutes on two cores from a fresh clone; later runs rebuild only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${PREFIX:-$HOME/.local}
# The commit it is built from, in the version it prints (1.0.0+<commit>): taksi-server init pins a
# project to it. Only from a clone with no uncommitted change; a build of anything else is 1.0.0.
# shellcheck disable=SC2046 # the flags are words
swift build -c release --product taksi-server --static-swift-stdlib $(scripts/commit-flags.sh) >&2
built="$(swift build -c release --static-swift-stdlib --show-bin-path)/taksi-server"
mkdir -p "$PREFIX/bin"
# Stripped: the symbols are half of the binary.
if command -v strip >/dev/null 2>&1; then
    strip -o "$PREFIX/bin/taksi-server" "$built"
else
    cp "$built" "$PREFIX/bin/taksi-server"
fi
chmod 755 "$PREFIX/bin/taksi-server"
echo "installed $("$PREFIX/bin/taksi-server" --version) as $PREFIX/bin/taksi-server"
case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) echo "$PREFIX/bin is not on PATH: add it, e.g. echo 'export PATH=\"$PREFIX/bin:\$PATH\"' >> ~/.profile" ;;
esac
