#!/usr/bin/env bash
# The offline scenario of the Azure Mobile Apps tutorial ("Test the app"), with TableSync:
# changes made while the server is down stay in the store and survive a restart, are not on the server,
# and one `tablesync sync` delivers them once it is back; a change made elsewhere comes back on the next pull.
#
#   examples/offline-todo.sh [BIN_DIR]      BIN_DIR holds tablesync and tablesync-server (default .build/debug)
set -euo pipefail
bin="${1:-.build/debug}"
tablesync="$bin/tablesync"
server_bin="$bin/tablesync-server"
work="$(mktemp -d "${TMPDIR:-/tmp}/tablesync-demo.XXXXXX")"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

port=0
start_server() {
  # Port 0 the first time picks a free port; later starts reuse it, so the store's remote stays valid.
  "$server_bin" --host 127.0.0.1 --port "$port" --database "sqlite:$work/server.sqlite" --table TodoItem >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$work/server.log" 2>/dev/null; then
      port="$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/server.log" | tail -1 | cut -d: -f2)"
      echo "tablesync-server (SQLite) listens on 127.0.0.1:$port"
      return
    fi
    sleep 0.1
  done
  cat "$work/server.log"; echo "the server did not start" >&2; exit 1
}
stop_server() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; echo "tablesync-server stopped"; }

say "Start the server and create a store (a directory you could keep in git)"
start_server
run "$tablesync" -C "$work/store" init --remote "http://127.0.0.1:$port" --table TodoItem
run "$tablesync" -C "$work/store" query list
run "$tablesync" -C "$work/phone" init --remote "http://127.0.0.1:$port" --table TodoItem >/dev/null

say "1. The server goes away (the tutorial points the app at an invalid URL)"
stop_server

say "2. Add some to-do items and complete one, offline"
run "$tablesync" -C "$work/store" insert TodoItem '{"id": "milk", "text": "Buy milk", "complete": false}'
run "$tablesync" -C "$work/store" insert TodoItem '{"id": "dog", "text": "Walk the dog", "complete": false}'
run "$tablesync" -C "$work/store" update TodoItem '{"id": "dog", "text": "Walk the dog", "complete": true}'
echo "A sync now cannot reach the server; it says so with exit code 4 and loses nothing:"
set +e
"$tablesync" -C "$work/store" sync --attempts 1 --timeout 2
echo "exit code $?"
set -e

say "   Quit and restart: every tablesync command is a new process, so the changes persist on disk"
run "$tablesync" -C "$work/store" status
run cat "$work/store/tables/TodoItem/dog.json"

say "3-4. The server comes back: the new items are not on it yet (another device sees nothing)"
start_server
run "$tablesync" -C "$work/phone" pull TodoItem
run "$tablesync" -C "$work/phone" query TodoItem

say "5-7. One sync delivers them (push, then pull every query)"
run "$tablesync" -C "$work/store" sync
run "$tablesync" -C "$work/phone" sync
run "$tablesync" -C "$work/phone" query TodoItem --filter "complete eq false"

say "A change made on the other device comes back with the next pull"
run "$tablesync" -C "$work/phone" update TodoItem '{"id": "milk", "text": "Buy oat milk", "complete": true}'
run "$tablesync" -C "$work/phone" push
run "$tablesync" -C "$work/store" sync
run cat "$work/store/tables/TodoItem/milk.json"
run "$tablesync" -C "$work/store" status

stop_server
say "Done. The demo's files were in $work (removed now)."
