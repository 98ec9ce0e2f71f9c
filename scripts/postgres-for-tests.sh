#!/usr/bin/env bash
# Starts (or reuses) a private PostgreSQL cluster for the server tests and prints the line to eval:
#   eval "$(scripts/postgres-for-tests.sh)"     → export TABLESYNC_TEST_POSTGRES_URL=postgres://USER@127.0.0.1:PORT/DB
#   scripts/postgres-for-tests.sh stop          → stops it
# Works as root (the cluster then runs as the `postgres` user) or as a normal user. Installs the Debian package
# `postgresql` when its binaries are missing. Idempotent: a running cluster is reused.
# Settings: TABLESYNC_TEST_POSTGRES_DIR (default /tmp/tablesync-test-postgres), TABLESYNC_TEST_POSTGRES_PORT (54329).
set -euo pipefail

dir="${TABLESYNC_TEST_POSTGRES_DIR:-/tmp/tablesync-test-postgres}"
port="${TABLESYNC_TEST_POSTGRES_PORT:-54329}"
database="tablesync_test"
log() { echo "postgres-for-tests: $*" >&2; }

find_bindir() {
  local candidate
  for candidate in /usr/lib/postgresql/*/bin; do
    [ -x "$candidate/initdb" ] && { echo "$candidate"; return 0; }
  done
  return 1
}

bindir="$(find_bindir || true)"
if [ -z "$bindir" ]; then
  log "installing the postgresql package"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends postgresql >&2
  bindir="$(find_bindir)"
fi

# As root, the cluster belongs to `postgres` (initdb refuses root); otherwise to the current user.
if [ "$(id -u)" -eq 0 ]; then
  owner="postgres"
  as_owner() { runuser -u postgres -- "$@"; }
else
  owner="$(id -un)"
  as_owner() { "$@"; }
fi
data="$dir/data"
sockets="$dir/sockets"

if [ "${1:-start}" = "stop" ]; then
  if [ -f "$data/postmaster.pid" ]; then
    as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >&2 || true
  fi
  exit 0
fi

mkdir -p "$dir"
[ "$owner" = "postgres" ] && chown postgres: "$dir"
if [ ! -f "$data/PG_VERSION" ]; then
  log "creating a cluster in $data"
  as_owner mkdir -p "$data" "$sockets"
  as_owner "$bindir/initdb" -D "$data" -U "$owner" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
fi
as_owner mkdir -p "$sockets"

if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  log "starting on 127.0.0.1:$port"
  as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $sockets -c max_connections=200 -c fsync=off" start >/dev/null
fi

if ! as_owner "$bindir/psql" -h "$sockets" -p "$port" -U "$owner" -d postgres -Atc \
    "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
  as_owner "$bindir/createdb" -h "$sockets" -p "$port" -U "$owner" "$database"
fi

echo "export TABLESYNC_TEST_POSTGRES_URL=postgres://$owner@127.0.0.1:$port/$database"
