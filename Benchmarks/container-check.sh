#!/usr/bin/env bash
# Proves the Dockerfile's runtime stage is complete, without a Docker engine: builds the release
# binary the way the Dockerfile does (static Swift runtime), debootstraps a minimal Debian bookworm
# root filesystem holding only the packages the runtime stage installs (read from the Dockerfile),
# copies in what the image copies, runs the server there as the image's non-root user, and checks
# it answers: skeleton, gzip, upstream data from the bundled fixtures, the HEALTHCHECK command run
# inside the root filesystem, and a clean exit on SIGTERM.
#
#   sudo Benchmarks/container-check.sh       # needs root (debootstrap, chroot) and debootstrap
#
# Exits 0 with "skipped" when debootstrap is not installed (apt-get install debootstrap), so CI
# can call it unconditionally. The root filesystem is cached in .build-rootfs/ between runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v debootstrap >/dev/null 2>&1; then
    echo "container check skipped: debootstrap is not installed (apt-get install debootstrap)"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "container check: needs root for debootstrap and chroot" >&2
    exit 1
fi

# The runtime stage's packages, from the Dockerfile's own install line.
PACKAGES=$(grep -o 'install -y --no-install-recommends [a-z0-9 .+-]*' Dockerfile | sed 's/.*--no-install-recommends //' | xargs)
[ -n "$PACKAGES" ] || { echo "container check: no runtime packages found in the Dockerfile" >&2; exit 1; }
echo "runtime packages from the Dockerfile: $PACKAGES"

# The flags scripts/release.sh builds with (the commit, scripts/commit-flags.sh), so after a
# release this is the same build, not a second one.
# shellcheck disable=SC2046 # the flags are words
swift build -c release --product taksi-server --static-swift-stdlib $(scripts/commit-flags.sh)
BINARY="$(swift build -c release --show-bin-path)/taksi-server"

ROOTFS=${ROOTFS:-$PWD/.build-rootfs/bookworm}
if [ ! -x "$ROOTFS/usr/bin/apt-get" ] || [ "$(cat "$ROOTFS/.packages" 2>/dev/null)" != "$PACKAGES" ]; then
    rm -rf "$ROOTFS"
    mkdir -p "$ROOTFS"
    debootstrap --variant=minbase --include="${PACKAGES// /,}" bookworm "$ROOTFS" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
    echo "$PACKAGES" >"$ROOTFS/.packages"
fi

# What the image copies, where it copies it.
install -D -s -m 0755 "$BINARY" "$ROOTFS/usr/local/bin/taksi-server"
rm -rf "$ROOTFS/app"
mkdir -p "$ROOTFS/app"
cp -R Screens "$ROOTFS/app/"
cp deploy/container-config.json "$ROOTFS/app/config.json"

# The kernel interfaces a container gets.
mount -t proc proc "$ROOTFS/proc"
mount --bind /dev "$ROOTFS/dev"
SERVER=""
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
    umount "$ROOTFS/proc" "$ROOTFS/dev" 2>/dev/null || true
}
trap cleanup EXIT

echo "linked libraries:"
chroot "$ROOTFS" ldd /usr/local/bin/taksi-server | sed 's/^/  /'
if chroot "$ROOTFS" ldd /usr/local/bin/taksi-server | grep -q 'not found'; then
    echo "container check FAILED: a library the binary needs is missing from the runtime stage" >&2
    exit 1
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# As the image runs it: user 10001, /app, its command, and no environment of its own (the image
# sets none); TAKSI_PORT picks a free port here, as `docker run -e` would.
chroot --userspec=10001:10001 "$ROOTFS" /usr/bin/env -i HOME=/app TAKSI_PORT="$PORT" \
    /bin/sh -c 'cd /app && exec taksi-server serve --config /app/config.json' &
SERVER=$!
for _ in $(seq 1 250); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
    kill -0 "$SERVER" 2>/dev/null || { echo "container check FAILED: the server exited" >&2; exit 1; }
    sleep 0.02
done

check() { # description, curl arguments...
    local what=$1
    shift
    if curl -sf -o /dev/null "$@"; then echo "ok: $what"; else echo "container check FAILED: $what" >&2; exit 1; fi
}
check "skeleton" "http://127.0.0.1:$PORT/screens/landing"
check "gzip skeleton" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT/screens/login"
# The image's upstreams are the live APIs, out of reach here: the data still answers 200, degraded.
check "data of an upstream screen" "http://127.0.0.1:$PORT/screens/bikes/stations/data?network=velib"
check "metrics" "http://127.0.0.1:$PORT/metrics"
if chroot --userspec=10001:10001 "$ROOTFS" curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz"; then
    echo "ok: the HEALTHCHECK command inside the image"
else
    echo "container check FAILED: the HEALTHCHECK command" >&2
    exit 1
fi
curl -s "http://127.0.0.1:$PORT/screens/bikes/stations/data?network=velib" | head -c 160
echo

kill -TERM "$SERVER"
STATUS=0
wait "$SERVER" || STATUS=$?
SERVER=""
[ "$STATUS" = 0 ] || { echo "container check FAILED: exit status $STATUS after SIGTERM" >&2; exit 1; }
echo "ok: SIGTERM, exit 0"
echo "container check passed"
