#!/usr/bin/env bash
# Starts (or reuses) a private PostgreSQL cluster for the server tests and prints the line to eval:
#   eval "$(scripts/postgres-for-tests.sh)"     → export TABLESYNC_TEST_POSTGRES_URL=postgres://USER@127.0.0.1:PORT/DB
#                                                  export TABLESYNC_TEST_POSTGRES_CA=DIR/tls/ca.pem
#   scripts/postgres-for-tests.sh stop          → stops it
# The cluster accepts TLS (ssl = on) with a certificate for 127.0.0.1 and localhost signed by a test authority
# made here (TABLESYNC_TEST_POSTGRES_CA), so the tests can check every sslmode against a real server.
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

# A test certificate authority and a server certificate it signed, made once per cluster directory.
tls="$dir/tls"
if [ ! -f "$tls/server.key" ]; then
  command -v openssl >/dev/null || { log "openssl is missing (make deps installs it)"; exit 1; }
  as_owner mkdir -p "$tls"
  as_owner openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=TableSync test authority" \
    -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
  as_owner openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' | as_owner tee "$tls/server.ext" >/dev/null
  as_owner openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 3650 \
    -extfile "$tls/server.ext" -out "$tls/server.pem" 2>/dev/null
  as_owner chmod 600 "$tls/server.key"
fi
chmod 755 "$dir" "$tls"
chmod 644 "$tls/ca.pem"

# A cluster left running without TLS by an older version of this script is restarted with it.
if as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 \
    && ! as_owner "$bindir/psql" -h "$sockets" -p "$port" -U "$owner" -d postgres -Atc "SHOW ssl" 2>/dev/null | grep -q on; then
  log "restarting with TLS"
  as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
fi

# Connections: the suites run in parallel, and each server instance they start holds its pool, its change-feed
# listener and its availability probe; at 200 a full run once met "too many clients already".
connections=400
# A cluster left running with fewer connections by an older version of this script is restarted with them.
if as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 \
    && [ "$(as_owner "$bindir/psql" -h "$sockets" -p "$port" -U "$owner" -d postgres -Atc "SHOW max_connections" \
        2>/dev/null)" != "$connections" ]; then
  log "restarting with $connections connections"
  as_owner "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
fi

if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  log "starting on 127.0.0.1:$port"
  as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $sockets -c max_connections=$connections -c fsync=off \
       -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server.key" start >/dev/null
fi

if ! as_owner "$bindir/psql" -h "$sockets" -p "$port" -U "$owner" -d postgres -Atc \
    "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
  as_owner "$bindir/createdb" -h "$sockets" -p "$port" -U "$owner" "$database"
fi

echo "export TABLESYNC_TEST_POSTGRES_URL=postgres://$owner@127.0.0.1:$port/$database"
echo "export TABLESYNC_TEST_POSTGRES_CA=$tls/ca.pem"
