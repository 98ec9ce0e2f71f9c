#!/usr/bin/env bash
# What the change feed's pg_notify adds to a write transaction on PostgreSQL: pgbench runs single-row inserts into
# a table shaped like tablesync_records, alternately without and with `SELECT pg_notify('tablesync_changes', t)` in
# the same transaction (as tablesync-server sends it), while a session LISTENs on the channel as each server process
# does. Prints transactions per second of each round and the ratio of the medians (with / without).
#   scripts/measure-notify-cost.sh [ROUNDS [SECONDS]]     defaults: 5 rounds of 10 s each way, 2 clients
# Runs a cluster of its own in a scratch directory, with PostgreSQL's default durability (fsync on, each commit
# flushed), on port 54377 (MEASURE_POSTGRES_PORT); MEASURE_FSYNC=off measures without the flush, where commits cost
# processor time only (as in the test cluster).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
seconds="${2:-10}"
port="${MEASURE_POSTGRES_PORT:-54377}"
bindir="$(dirname "$(ls /usr/lib/postgresql/*/bin/pgbench | head -n 1)")"
run_as=()
[ "$(id -u)" -eq 0 ] && run_as=(runuser -u postgres --)
work="$(mktemp -d)"
chmod 755 "$work"
cleanup() {
  kill "${listener:-0}" 2>/dev/null || true
  "${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] && chown postgres "$work"
"${run_as[@]}" "$bindir/initdb" -D "$work/data" -U postgres --auth=trust >/dev/null
"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -l "$work/log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c fsync=${MEASURE_FSYNC:-on}" start >/dev/null
url="postgres://postgres@127.0.0.1:$port/postgres"

"${run_as[@]}" "$bindir/psql" -q "$url" <<'SQL'
CREATE TABLE notify_cost (table_name text, id text, updated_at timestamptz, body jsonb, PRIMARY KEY (table_name, id));
SQL
cat >"$work/plain.sql" <<'SQL'
BEGIN;
INSERT INTO notify_cost VALUES ('todo', md5(random()::text), now(), '{"text": "a record of ordinary size"}');
COMMIT;
SQL
cat >"$work/notify.sql" <<'SQL'
BEGIN;
INSERT INTO notify_cost VALUES ('todo', md5(random()::text), now(), '{"text": "a record of ordinary size"}');
SELECT pg_notify('tablesync_changes', 'todo');
COMMIT;
SQL
"${run_as[@]}" "$bindir/psql" -q "$url" -c "LISTEN tablesync_changes; SELECT pg_sleep($((rounds * seconds * 2 + 30)))" \
  >/dev/null 2>&1 &
listener=$!

tps() {
  "${run_as[@]}" "$bindir/pgbench" -n -c 2 -j 2 -T "$seconds" -f "$work/$1.sql" "$url" 2>/dev/null |
    awk '/^tps = / { printf "%.0f\n", $3 }'
}
plain=()
notify=()
for round in $(seq 1 "$rounds"); do
  plain+=("$(tps plain)")
  notify+=("$(tps notify)")
  echo "round $round: without ${plain[-1]} tx/s, with pg_notify ${notify[-1]} tx/s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
without="$(median "${plain[@]}")"
with="$(median "${notify[@]}")"
echo "median: without $without tx/s, with pg_notify $with tx/s, ratio $(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.3f", a / b }')"
