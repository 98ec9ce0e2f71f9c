#!/usr/bin/env bash
# Writes the table of a benchmark run (bench-results/latest.json, or the file given) into README.md and
# docs/bench.md, between their "bench table" markers: the docs' figures come from a run, never typed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
results="${1:-bench-results/latest.json}"
bin="$(swift build -c "${BENCH_CONFIG:-release}" --show-bin-path)"
table="$("$bin/tablesync-bench" markdown "$results")"
for file in README.md docs/bench.md; do
  python3 - "$file" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
begin, end = "<!-- bench table: tablesync-bench markdown, scripts/bench-docs.sh -->", "<!-- end of bench table -->"
text = open(path).read()
start, stop = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:start] + "\n" + table + "\n" + text[stop:])
PY
done
echo "README.md and docs/bench.md now show $results"
