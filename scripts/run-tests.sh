#!/usr/bin/env bash
# Builds and runs every test. Starts a throw-away PostgreSQL on a loopback port for the server tests.
set -euo pipefail
cd "$(dirname "$0")/.."
swift test "$@"
