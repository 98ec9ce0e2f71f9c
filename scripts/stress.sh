#!/usr/bin/env bash
# The long reliability runs: the crash sweep (≥ 200 SIGKILL trials), random network faults, and the rest of the
# Reliability suites at their long sizes, with the latency judgements that run only here (writes beside large
# records). TABLESYNC_SEED=N repeats a run; the figures are printed per suite, and the attack mix's (run first, alone,
# against a release build of the server as it is deployed) are kept in bench-results/attack.json for docs/bench.md
# (scripts/bench-docs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/postgres-for-tests.sh)"
swift build --build-tests
swift build -c release --product tablesync-server
attack_server="$(swift build -c release --show-bin-path)/tablesync-server"
# The attack mix's figures, for docs/bench.md (scripts/bench-docs.sh).
mkdir -p bench-results
rm -f bench-results/attack.json
# The attack mix runs alone first: its quiet and attack phases compare latencies, which the other suites, running
# beside it, would load unevenly (the crash sweep alone keeps a core busy).
TABLESYNC_STRESS=1 TABLESYNC_ATTACK_RESULTS="$PWD/bench-results/attack.json" TABLESYNC_ATTACK_SERVER="$attack_server" \
  swift test --skip-build --filter 'ReliabilityAttackTests' "$@"
TABLESYNC_STRESS=1 swift test --skip-build --filter 'Reliability' --skip 'ReliabilityAttackTests' "$@"
