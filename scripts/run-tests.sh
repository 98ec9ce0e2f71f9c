#!/usr/bin/env bash
# Builds and runs every test. Starts (or reuses) a throw-away PostgreSQL on a loopback port for the tests that
# run against PostgreSQL, and stops it again if it started it.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/postgres-for-tests.sh)"
swift build --build-tests
# A fresh build leaves gigabytes of unwritten data, and the store's durable writes (`syncfs`) would each wait for
# all of it: write it out once before the tests start timing anything.
sync
swift test --skip-build "$@"
