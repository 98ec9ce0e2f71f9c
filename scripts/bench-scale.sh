#!/usr/bin/env bash
# The million-record points of the benchmarks (make bench-scale), each beside a baseline measured in the same run:
#   1. S1: a server page of 1,000 records from a 1,000,000-row table against the same page from 10,000 rows, on
#      SQLite and on the test PostgreSQL (scripts/postgres-for-tests.sh)   → bench-results/server-pages.json
#   2. the client's benchmarks (scripts/bench.sh) at 1,000,000 records, one run each   → bench-results/scale.json
# scripts/bench-docs.sh then writes both tables into docs/bench.md. Needs about 25 GB of free disk.
# Sizes: BENCH_SCALE_RECORDS [1000000]  BENCH_SCALE_RUNS [1]  BENCH_PAGE_SAMPLES [40]
set -euo pipefail
cd "$(dirname "$0")/.."
records="${BENCH_SCALE_RECORDS:-1000000}"
eval "$(scripts/postgres-for-tests.sh)"
echo "building (release)" >&2
swift build -c release >&2
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tablesync-bench-scale.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p bench-results
"$bin/tablesync-bench" server-pages --bin "$bin" --work "$work" --output bench-results/server-pages.json \
  --large-rows "$records" --samples "${BENCH_PAGE_SAMPLES:-40}" --postgres "$TABLESYNC_TEST_POSTGRES_URL"
BENCH_RECORDS="$records" BENCH_RUNS="${BENCH_SCALE_RUNS:-1}" BENCH_OUTPUT=bench-results/scale.json scripts/bench.sh
