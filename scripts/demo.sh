#!/usr/bin/env bash
# `make demo`: the offline scenario of examples/offline-todo.sh against a freshly built server on SQLite.
set -euo pipefail
cd "$(dirname "$0")/.."
exec examples/offline-todo.sh "$(swift build --show-bin-path)"
