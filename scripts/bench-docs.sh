#!/usr/bin/env bash
# Writes the tables of benchmark runs into the docs, between their markers: the docs' figures come from a run,
# never typed by hand.
#   scripts/bench-docs.sh [RESULTS]   the table of RESULTS (default bench-results/latest.json, from make bench, when
#                                     there is one) into README.md and docs/bench.md ("bench table" markers),
#                                     and, when make bench-scale
#                                     left them, bench-results/server-pages.json and bench-results/scale.json into
#                                     docs/bench.md ("scale table" markers), and bench-results/auth.json
#                                     (scripts/bench.sh auth: A1 alone) into docs/bench.md ("auth table" markers)
#                                     and bench-results/push-cpu.json (scripts/bench.sh push-cpu DIR: C1 alone)
#                                     into docs/bench.md ("push cpu table" markers), and bench-results/watch.json
#                                     (scripts/bench.sh watch: W1-W4 alone) into docs/bench.md ("watch table"
#                                     markers), bench-results/git.json (scripts/bench.sh git: P2, P8, P10 alone)
#                                     into docs/bench.md ("git table" markers), and bench-results/attack.json
#                                     (make stress: the server under attack) into docs/bench.md ("attack table"
#                                     markers)
set -euo pipefail
cd "$(dirname "$0")/.."
results="${1:-bench-results/latest.json}"
# shellcheck source=lib/release-build.sh
source scripts/lib/release-build.sh
build_command "${BENCH_CONFIG:-release}"
bin="$("${build[@]}" --show-bin-path)"

# replace FILE MARKER TEXT: puts TEXT between "<!-- MARKER: … -->" and "<!-- end of MARKER -->" in FILE.
replace() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, marker, table = sys.argv[1], sys.argv[2], sys.argv[3]
begin, end = f"<!-- {marker}: tablesync-bench markdown, scripts/bench-docs.sh -->", f"<!-- end of {marker} -->"
text = open(path).read()
start, stop = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:start] + "\n" + table + "\n" + text[stop:])
PY
}

# Without a whole run, the other tables (a mode run alone) are still written.
if [ -n "${1:-}" ] || [ -f "$results" ]; then
  table="$("$bin/tablesync-bench" markdown "$results")"
  for file in README.md docs/bench.md; do replace "$file" "bench table" "$table"; done
  echo "README.md and docs/bench.md now show $results"
else
  echo "no $results (make bench): the bench table stays as it is"
fi

if [ -f bench-results/server-pages.json ] && [ -f bench-results/scale.json ]; then
  scale="$("$bin/tablesync-bench" markdown bench-results/server-pages.json)

$("$bin/tablesync-bench" markdown bench-results/scale.json)"
  replace docs/bench.md "scale table" "$scale"
  echo "docs/bench.md now shows bench-results/server-pages.json and bench-results/scale.json"
fi

if [ -f bench-results/auth.json ]; then
  replace docs/bench.md "auth table" "$("$bin/tablesync-bench" markdown bench-results/auth.json)"
  echo "docs/bench.md now shows bench-results/auth.json"
fi

if [ -f bench-results/push-cpu.json ]; then
  replace docs/bench.md "push cpu table" "$("$bin/tablesync-bench" markdown bench-results/push-cpu.json)"
  echo "docs/bench.md now shows bench-results/push-cpu.json"
fi

if [ -f bench-results/watch.json ]; then
  replace docs/bench.md "watch table" "$("$bin/tablesync-bench" markdown bench-results/watch.json)"
  echo "docs/bench.md now shows bench-results/watch.json"
fi

if [ -f bench-results/git.json ]; then
  replace docs/bench.md "git table" "$("$bin/tablesync-bench" markdown bench-results/git.json)"
  echo "docs/bench.md now shows bench-results/git.json"
fi

if [ -f bench-results/attack.json ]; then
  replace docs/bench.md "attack table" "$("$bin/tablesync-bench" markdown bench-results/attack.json)"
  echo "docs/bench.md now shows bench-results/attack.json"
fi
