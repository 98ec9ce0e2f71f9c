#!/usr/bin/env bash
# The server's memory while clients page through large records: 30 records of 15 MB each, read by 4 clients at once,
# each asking $top=1000 and following nextLink to the end. Prints each server's RSS before the clients read (after the
# records were written), its highest RSS while they read, its RSS 3 s after they finished, and the last two as ratios
# to the baseline measured in the same run.
#   scripts/measure-page-memory.sh                       debug build; baseline: the same server with pages bounded
#                                                        only by $top (--max-page-bytes at its largest, 128 MiB)
#   BASELINE_SERVER=PATH BASELINE_ARGS= scripts/measure-page-memory.sh    another build as the baseline
#   BUILD_CONFIG=release RECORDS=30 RECORD_MB=15 CLIENTS=4 DATABASE=postgres scripts/measure-page-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
config="${BUILD_CONFIG:-debug}"
records="${RECORDS:-30}"
record_mb="${RECORD_MB:-15}"
clients="${CLIENTS:-4}"

swift build -c "$config" --product tablesync-server >&2
server="${SERVER:-$(swift build -c "$config" --show-bin-path)/tablesync-server}"
baseline="${BASELINE_SERVER:-$server}"
baseline_args="${BASELINE_ARGS---max-page-bytes 134217728}"
work="$(mktemp -d)"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

database() {
  if [ "${DATABASE:-sqlite}" = postgres ]; then
    eval "$(scripts/postgres-for-tests.sh)"
    echo "$TABLESYNC_TEST_POSTGRES_URL"
  else
    echo "sqlite:$work/pages-$1.sqlite"
  fi
}

# Runs binary $1 with extra arguments $2 (word-split), seeds it, pages through it; prints "before peak settled" in bytes.
measure() {
  local binary="$1" extra="$2" name="$3"
  local port table
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  table="pages_${name}_$RANDOM$RANDOM"
  # shellcheck disable=SC2086
  "$binary" --port "$port" --database "$(database "$name")" --table "$table:maxTop=1000" --statement-timeout 600 \
    --log-level warning $extra >"$work/server-$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  python3 - "$port" "$table" "$records" "$record_mb" "$clients" "$pid" <<'PY'
import http.client, json, sys, threading, time
port, table, records, record_mb, clients, pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
headers = {"ZUMO-API-VERSION": "3.0.0", "Content-Type": "application/json"}

def rss():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0

connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
for index in range(records):
    body = json.dumps({"id": f"r{index:03d}", "blob": "x" * (record_mb * 1000 * 1000)})
    connection.request("POST", f"/tables/{table}", body=body, headers=headers)
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 201, answer.status
connection.close()
time.sleep(3)

before = rss()
peak = [before]
done = threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], rss())
        time.sleep(0.02)

received = []
def walk():
    reader = http.client.HTTPConnection("127.0.0.1", int(port), timeout=600)
    target, count = f"/tables/{table}?$top=1000", 0
    while target:
        reader.request("GET", target, headers=headers)
        answer = reader.getresponse()
        page = json.loads(answer.read())
        assert answer.status == 200, answer.status
        count += len(page["items"])
        target = page["nextLink"] and f"/tables/{table}?{page['nextLink']}"
    received.append(count)

sampler = threading.Thread(target=sample)
sampler.start()
walkers = [threading.Thread(target=walk) for _ in range(clients)]
for walker in walkers: walker.start()
for walker in walkers: walker.join()
done.set()
sampler.join()
assert received == [records] * clients, received
time.sleep(3)
print(before, peak[0], rss())
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

read -r base_before base_peak base_settled < <(measure "$baseline" "$baseline_args" baseline)
read -r before peak settled < <(measure "$server" "" bounded)
mb() { awk -v b="$1" 'BEGIN { printf "%.0f MB", b / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f×", a / b }'; }
echo "$clients clients, $records records of $record_mb MB, \$top=1000, ${DATABASE:-sqlite}, $config build"
printf '| server | RSS before paging | peak RSS while paging | RSS 3 s after |\n|---|---|---|---|\n'
printf '| baseline (%s %s) | %s | %s | %s |\n' "$baseline" "$baseline_args" "$(mb "$base_before")" "$(mb "$base_peak")" \
  "$(mb "$base_settled")"
printf '| %s, --max-page-bytes default | %s | %s (%s) | %s (%s) |\n' "$server" "$(mb "$before")" "$(mb "$peak")" \
  "$(ratio "$peak" "$base_peak")" "$(mb "$settled")" "$(ratio "$settled" "$base_settled")"
