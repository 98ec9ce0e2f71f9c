#!/usr/bin/env bash
# Builds and runs every test. Starts (or reuses) a throw-away PostgreSQL on a loopback port for the tests that
# run against PostgreSQL, and stops it again if it started it.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/postgres-for-tests.sh)"
# The code builds without warnings: a warning in this package's own files fails the run (a fresh clone's build
# compiles every file, so CI sees them all; an incremental build only those it compiles again).
build_log="$(mktemp)"
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
own_warnings="$(grep -E "^$(pwd)/(Sources|Tests|examples)/[^:]+:[0-9]+:[0-9]+: warning:" "$build_log" | sort -u || true)"
if [ -n "$own_warnings" ]; then
  echo "the build warns in this package's own code:" >&2
  echo "$own_warnings" >&2
  exit 1
fi
# A fresh build leaves gigabytes of unwritten data, and the store's durable writes (`syncfs`) would each wait for
# all of it: write it out once before the tests start timing anything.
sync
# The suites that judge a live server by how soon it answers (the change feed's wake, an abandoned read's stop, the
# attack mix's latencies) run after the others, one test at a time: beside the rest of the suite, two cores can
# leave a server process seconds without a processor, and a bound that allows for that no longer tells a wake or a
# stop from its absence. With arguments (e.g. `--filter X`), one run takes them as they are.
if [ $# -gt 0 ]; then
  swift test --skip-build "$@"
  exit
fi
timed='ChangeFeedTests|AbandonedRequestTests|ReliabilityAttackTests|DatabaseOutageTests'
status=0
swift test --skip-build --skip "$timed" || status=$?
swift test --skip-build --no-parallel --filter "$timed" || status=$?
exit "$status"
