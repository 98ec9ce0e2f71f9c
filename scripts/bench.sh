#!/usr/bin/env bash
# TableSync's benchmarks: every figure beside a baseline measured in the same run.
#   scripts/bench.sh          (make bench)        release build, 100,000 records, 3 runs each; bench-results/latest.json
#   scripts/bench.sh smoke    (make bench-smoke)  debug build, a tiny data set, 1 run: proves the benchmarks still run
#   scripts/bench.sh auth                         A1 alone (checking a JWT against a static token); bench-results/auth.json
#   scripts/bench.sh push-cpu DIR                 C1 alone: the push's processor time per hand edit, this build against
#                                                 the tablesync binaries in DIR (another build's release bin directory,
#                                                 copied aside); bench-results/push-cpu.json
#   scripts/bench.sh watch                        W1-W4 alone (live sync: tablesync watch); bench-results/watch.json
# Sizes and runs come from the environment (defaults for the full run in brackets):
#   BENCH_RECORDS [100000]  records in the main table (P1, P2, P3, P5, P6, P7)
#   BENCH_SMALL_RECORDS [10000]  the second table, the other point of the memory curve (P4)
#   BENCH_PUSH_RECORDS [10000]  updates pushed (P3)     BENCH_CHANGED_RECORDS [1000]  changed before P7
#   BENCH_SLOW_LINK_PUSH_RECORDS [1000]  updates pushed over the slow link (P3)     BENCH_SLOW_LINK_DELAY_MS [5]  its one-way delay
#   BENCH_EDITED_FILES [100]  hand edits before status (P2)     BENCH_RUNS [3]  runs of each benchmark
#   BENCH_BUSY_DISK_EDITS [100]  hand edits synced on a quiet and a busy disk (P9)
#   BENCH_BUSY_DISK_MEGABYTES [4096]  what the busy neighbour rewrites without syncing (P9; needs that much free disk)
#   BENCH_WATCH_EDITS [200]  hand edits carried by two watches (W1)     BENCH_WATCH_COMMAND_EDITS [40]  by push, then sync
#   BENCH_IDLE_WATCH_SECONDS [120]  how long an idle watch is measured (W2)     BENCH_CHANGE_WAIT [30]  the server's
#                                   --max-change-wait for W1 and W2 (1-30)
#   BENCH_FEED_WAITS [1000]  change feed requests left waiting on the server (W3; needs as many open files)
#   BENCH_WATCH_COST_EDITS [20]  hand edits under a watch of the main table, and by push (W4)
#   BENCH_CONFIG [release]  build configuration (release: as the packages build it)     BENCH_OUTPUT [bench-results/latest.json]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = smoke ]; then
  : "${BENCH_RECORDS:=300}" "${BENCH_SMALL_RECORDS:=100}" "${BENCH_PUSH_RECORDS:=50}" "${BENCH_CHANGED_RECORDS:=20}"
  : "${BENCH_SLOW_LINK_PUSH_RECORDS:=20}"
  : "${BENCH_EDITED_FILES:=10}" "${BENCH_BUSY_DISK_EDITS:=10}" "${BENCH_BUSY_DISK_MEGABYTES:=64}" "${BENCH_RUNS:=1}" "${BENCH_CONFIG:=debug}" "${BENCH_OUTPUT:=bench-results/smoke.json}"
  : "${BENCH_WATCH_EDITS:=5}" "${BENCH_WATCH_COMMAND_EDITS:=3}" "${BENCH_IDLE_WATCH_SECONDS:=4}" "${BENCH_CHANGE_WAIT:=2}"
  : "${BENCH_FEED_WAITS:=20}" "${BENCH_WATCH_COST_EDITS:=3}"
fi
only=()
if [ "${1:-}" = auth ]; then
  only=(--auth-only)
  : "${BENCH_OUTPUT:=bench-results/auth.json}"
fi
if [ "${1:-}" = git ]; then
  only=(--git-only)
  : "${BENCH_OUTPUT:=bench-results/git.json}"
fi
if [ "${1:-}" = watch ]; then
  only=(--watch-only)
  : "${BENCH_OUTPUT:=bench-results/watch.json}"
fi
if [ "${1:-}" = push-cpu ]; then
  [ -x "${2:-}/tablesync" ] || { echo "usage: scripts/bench.sh push-cpu DIR (a directory holding a tablesync binary)" >&2; exit 2; }
  only=(--push-processor-baseline "$(cd "$2" && pwd)")
  : "${BENCH_OUTPUT:=bench-results/push-cpu.json}"
fi
config="${BENCH_CONFIG:-release}"
# A release run measures the binaries as the packages ship them (scripts/lib/release-build.sh).
# shellcheck source=lib/release-build.sh
source scripts/lib/release-build.sh
build_command "$config"

echo "building (${build[*]:2})" >&2
"${build[@]}" >&2
bin="$("${build[@]}" --show-bin-path)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tablesync-bench.XXXXXX")"
# BENCH_KEEP_WORK=1 keeps the stores and the server's database for a closer look (a profiler, say).
if [ "${BENCH_KEEP_WORK:-0}" = 1 ]; then
  echo "keeping the work directory $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p bench-results

"$bin/tablesync-bench" run --bin "$bin" --work "$work" \
  --output "${BENCH_OUTPUT:-bench-results/latest.json}" \
  --records "${BENCH_RECORDS:-100000}" --small-records "${BENCH_SMALL_RECORDS:-10000}" \
  --push-records "${BENCH_PUSH_RECORDS:-10000}" --changed-records "${BENCH_CHANGED_RECORDS:-1000}" \
  --slow-link-push-records "${BENCH_SLOW_LINK_PUSH_RECORDS:-1000}" --slow-link-delay-ms "${BENCH_SLOW_LINK_DELAY_MS:-5}" \
  --edited-files "${BENCH_EDITED_FILES:-100}" --busy-disk-edits "${BENCH_BUSY_DISK_EDITS:-100}" \
  --busy-disk-megabytes "${BENCH_BUSY_DISK_MEGABYTES:-4096}" \
  --watch-edits "${BENCH_WATCH_EDITS:-200}" --watch-command-edits "${BENCH_WATCH_COMMAND_EDITS:-40}" \
  --watch-cost-edits "${BENCH_WATCH_COST_EDITS:-20}" \
  --idle-watch-seconds "${BENCH_IDLE_WATCH_SECONDS:-120}" --change-wait "${BENCH_CHANGE_WAIT:-30}" \
  --feed-waits "${BENCH_FEED_WAITS:-1000}" --runs "${BENCH_RUNS:-3}" "${only[@]}"
