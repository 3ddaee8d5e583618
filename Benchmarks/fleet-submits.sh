#!/usr/bin/env bash
# Keyed submits across a fleet (docs/fleet.md): three server processes on one PostgreSQL, one
# upstream that counts, 1,000 keyed submits each retried on another replica picked at random, a
# third of the retries sent while the first still waits on the upstream. Passes when the upstream
# saw every key exactly once and every retry got the first answer.
#
#   Benchmarks/fleet-submits.sh                 # 1,000 keys, 3 replicas, a debug build
#   KEYS=5000 REPLICAS=5 Benchmarks/fleet-submits.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/fleet-submits.sh
#   STORE=off Benchmarks/fleet-submits.sh       # each replica on its own memory, for comparison
#
# Needs PostgreSQL (installed with apt-get when missing). It measures correctness, not speed, so a
# debug build will do.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

need_postgres
debug_binary
python3 Benchmarks/fleet_submits.py "$BIN" "${KEYS:-1000}" "${REPLICAS:-3}"
