#!/usr/bin/env bash
# The long reliability runs: the crash sweep (≥ 200 SIGKILL trials), random network faults, and the rest of the
# Reliability suites at their long sizes. TABLESYNC_SEED=N repeats a run; the figures are printed per suite.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/postgres-for-tests.sh)"
swift build --build-tests
TABLESYNC_STRESS=1 swift test --skip-build --filter 'Reliability' "$@"
