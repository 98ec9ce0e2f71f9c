#!/usr/bin/env bash
# Requests/s for one 1,000-record page (GET /tables/bench?$top=1000, v3) from tablesync-server over loopback,
# with and without gzip, on SQLite and PostgreSQL. Load comes from wrk (Debian package, installed if missing).
# Prints a table with each figure as a ratio to the first row (SQLite, no gzip) measured in the same run.
#   scripts/bench-server.sh                 release build; PostgreSQL via scripts/postgres-for-tests.sh
#   BENCH_SECONDS=10 BENCH_CONNECTIONS=8 BUILD_CONFIG=debug scripts/bench-server.sh
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${BENCH_SECONDS:-10}"
connections="${BENCH_CONNECTIONS:-8}"
config="${BUILD_CONFIG:-release}"
records=1000

if ! command -v wrk >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq wrk >/dev/null
fi
swift build -c "$config" --product tablesync-server >&2
server="$(swift build -c "$config" --show-bin-path)/tablesync-server"
work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Starts the server on $1 (database URL) with a fresh table, seeds it, and leaves $port and $pid set.
start() {
  port="$(free_port)"
  table="bench_$RANDOM$RANDOM"
  "$server" --port "$port" --database "$1" --table "$table:maxTop=1000" --log-level warning >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  python3 - "$port" "$table" "$records" <<'PY'
import json, sys, urllib.request
port, table, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    body = json.dumps({"id": f"r{i:05d}", "text": f"record number {i} with some text to make it realistic",
                       "complete": i % 2 == 0, "priority": i % 5, "due": "2024-05-01T10:20:30.000Z"}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/tables/{table}", data=body, method="POST",
                                     headers={"ZUMO-API-VERSION": "3.0.0", "Content-Type": "application/json"})
    urllib.request.urlopen(request).read()
PY
}

stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

# Prints "requests/s bytes-per-response" for the page, with extra wrk arguments.
measure() {
  local url="http://127.0.0.1:$port/tables/$table?\$top=$records"
  local bytes
  bytes="$(curl -s "$@" -H 'ZUMO-API-VERSION: 3.0.0' "$url" | wc -c)"
  local rps
  rps="$(wrk -t2 -c"$connections" -d"${seconds}s" -H 'ZUMO-API-VERSION: 3.0.0' "$@" "$url" | awk '/Requests\/sec/ {print $2}')"
  echo "$rps $bytes"
}

declare -a rows=()
run_backend() {
  local name="$1" url="$2"
  start "$url"
  read -r plain plain_bytes < <(measure)
  read -r gzip gzip_bytes < <(measure -H 'Accept-Encoding: gzip')
  stop
  rows+=("$name|no|$plain|$plain_bytes" "$name|yes|$gzip|$gzip_bytes")
}

run_backend sqlite "sqlite:$work/bench.sqlite"
postgres_url="${TABLESYNC_TEST_POSTGRES_URL:-}"
if [ -z "$postgres_url" ]; then
  eval "$(scripts/postgres-for-tests.sh)"
  postgres_url="$TABLESYNC_TEST_POSTGRES_URL"
fi
run_backend postgresql "$postgres_url"

baseline="$(echo "${rows[0]}" | cut -d'|' -f3)"
echo
echo "tablesync-server ($config), GET of one ${records}-record page, wrk ${connections} connections x ${seconds}s, $(nproc) cores"
printf '%-11s %-5s %12s %10s %14s\n' database gzip "requests/s" "vs first" "bytes/response"
for row in "${rows[@]}"; do
  IFS='|' read -r name gz rps bytes <<<"$row"
  printf '%-11s %-5s %12s %10s %14s\n' "$name" "$gz" "$rps" "$(python3 -c "print(f'{$rps / $baseline:.2f}x')")" "$bytes"
done
