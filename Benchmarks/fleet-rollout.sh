#!/usr/bin/env bash
# A fleet through a publish and a store outage, as apps see it (docs/fleet.md): three server
# processes serving the screens published to one PostgreSQL; 1,000 screen loads (skeleton, then
# data with its revision, each from a replica picked at random, recovering from 412 as
# docs/client.md's code does) during a publish that changes the data's shape; then the store
# stopped for 30 s under loads and keyed submits. Passes when every load ended with data its
# skeleton decodes, every replica served the publish within 2 s, every GET was answered during the
# outage, no keyed submit reached the upstream twice, and a publish after it reached every replica.
#
#   Benchmarks/fleet-rollout.sh                 # 1,000 loads, a 30 s outage, a debug build
#   LOADS=3000 OUTAGE=10 Benchmarks/fleet-rollout.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/fleet-rollout.sh
#
# Needs PostgreSQL (installed with apt-get when missing). It measures behaviour, not speed, so a
# debug build will do.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

need_postgres
debug_binary
python3 Benchmarks/fleet_rollout.py "$BIN" "${LOADS:-1000}" "${OUTAGE:-30}"
