#!/usr/bin/env bash
# Makes a release of taksi-server for this machine's Linux architecture: a relocatable binary
# (the Swift runtime and Foundation linked in statically, stripped) with the README, the guide, CHANGELOG
# and LICENSE, in dist/taksi-server-<version>-linux-<arch>.tar.gz, and its SHA-256 checksum in
# the same name plus .sha256 (check with: sha256sum -c taksi-server-*.sha256).
#
#   scripts/release.sh
#
# It then checks the tarball as a user would get it: extracted elsewhere, the binary runs and
# links no Swift library outside itself.
set -euo pipefail
cd "$(dirname "$0")/.."

# The commit it is built from (scripts/commit-flags.sh), which --version prints after the version.
# shellcheck disable=SC2046 # the flags are words
swift build -c release --product taksi-server --static-swift-stdlib $(scripts/commit-flags.sh) >&2
built="$(swift build -c release --static-swift-stdlib --show-bin-path)/taksi-server"
version=$("$built" version --json | sed -n 's/^ *"version": *"\(.*\)",*$/\1/p')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "release: unexpected version '$version'" >&2; exit 1; }
# The name is the binary's own (TaksiServerVersion, the one place naming a release's files), so the
# starter's install script, written from the same place, downloads what this makes.
tarball=$("$built" version --json | sed -n 's/^ *"tarball": *"\(.*\)",*$/\1/p')
[[ "$tarball" == "taksi-server-$version-linux-"*.tar.gz ]] || { echo "release: unexpected tarball name '$tarball'" >&2; exit 1; }
name=${tarball%.tar.gz}

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/$name" dist
strip -o "$staging/$name/taksi-server" "$built"
cp README.md CHANGELOG.md LICENSE "$staging/$name/"
# The guide the README links to (docs/*.md, its picture, the app code of client.md, the OpenAPI document).
mkdir -p "$staging/$name/docs"
cp docs/*.md docs/openapi.yaml "$staging/$name/docs/"
cp -r docs/images docs/client-snippets "$staging/$name/docs/"
# The sample app the guide links to, its links to docs/client-snippets as the files they name.
cp -rL Examples "$staging/$name/"
# Reproducible: sorted entries, fixed owner and the last commit's time.
stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -C "$staging" -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")

# As a user gets it: checksum, extract elsewhere, run.
check=$(mktemp -d)
trap 'rm -rf "$staging" "$check"' EXIT
(cd dist && sha256sum -c "$name.tar.gz.sha256" >/dev/null)
tar -xzf "dist/$name.tar.gz" -C "$check"
[ "$("$check/$name/taksi-server" --version)" = "$("$built" --version)" ] || { echo "release: the extracted binary does not run" >&2; exit 1; }
if ldd "$check/$name/taksi-server" | grep -q 'libswift\|libFoundation'; then
    echo "release: the binary links Swift libraries it does not carry:" >&2
    ldd "$check/$name/taksi-server" >&2
    exit 1
fi
echo "dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1)), sha256 $(cut -d' ' -f1 "dist/$name.tar.gz.sha256")"
