#!/usr/bin/env bash
# make package-test: installs the packages in dist/ into a minimal Debian root of this machine's release, which has
# no Swift, with apt so that their dependencies come from Debian; then, inside it, runs both programs, finds their
# man pages, completions and units, starts tablesync-server as its package user the way its unit does, syncs a
# store through it, and reinstalls, removes and purges the packages, checking what each step keeps.
# The root made by debootstrap (minbase) and the packages apt downloads are kept in TABLESYNC_PACKAGE_TEST_CACHE
# (/var/cache/tablesync-package-test) between runs. Needs root (chroot, mount).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${TABLESYNC_PACKAGE_TEST_CACHE:-/var/cache/tablesync-package-test}"
suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
# The Debian mirror apt already uses here (deb822 URIs: or one-line deb entries), not the security archive.
sources=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
mirror="$({ cat "${sources[@]}" 2>/dev/null || true; } \
  | sed -n -e 's/^URIs: *\([^ ]*\).*/\1/p' -e 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\).*/\2/p' \
  | { grep -E '/debian/?$' || true; } | head -1)"
[ -n "$mirror" ] || { echo "package-test: apt's sources name no Debian mirror to debootstrap from" >&2; exit 1; }
client_deb="$(ls dist/tablesync_*.deb)"
server_deb="$(ls dist/tablesync-server_*.deb)"
commit="$(git rev-parse --short HEAD)"

base="$cache/$suite-minbase"
if [ ! -d "$base" ]; then
  echo "package-test: making a minimal $suite root from $mirror (once; kept in $cache)"
  rm -rf "$base.partial"
  mkdir -p "$cache"
  debootstrap --variant=minbase --include=man-db "$suite" "$base.partial" "$mirror" >"$cache/debootstrap.log"
  mv "$base.partial" "$base"
fi

root="$(mktemp -d /var/tmp/tablesync-package-test.XXXXXX)"
log="$root.log"
server_pid=""
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  umount "$root/var/cache/apt/archives" "$root/proc" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
cp -a "$base/." "$root/"
mkdir -p "$cache/archives/partial" "$root/tmp/dist"
mount -t proc proc "$root/proc"
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$client_deb" "$server_deb" "$root/tmp/dist/"
: >"$log"

# inside COMMAND...: runs in the root with a clean environment.
clean_environment=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
inside() { chroot "$root" "${clean_environment[@]}" "$@"; }
passed=0
failed=0
# check NAME COMMAND...: one check; its output goes to the log, shown when it fails.
check() {
  local name="$1" first
  shift
  first=$(($(wc -l <"$log") + 1))
  echo "### $name: $*" >>"$log"
  if "$@" >>"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
    tail -n "+$first" "$log" | tail -n 15 | sed 's/^/     /'
  fi
}
contains() { grep -q -- "$1" <<<"$2"; }

# The server as its unit runs it: the unit's user, working directory and ExecStart, here without systemd.
unit="$root/lib/systemd/system/tablesync-server.service"
start_server() {
  local user directory command
  user="$(sed -n 's/^User=//p' "$unit")"
  directory="$(sed -n 's/^WorkingDirectory=//p' "$unit")"
  command="$(sed -n 's/^ExecStart=//p' "$unit")"
  # chroot itself in the background (not a function), so that $! is the server's process once every exec is done.
  chroot "$root" "${clean_environment[@]}" \
    sh -c "cd $directory && exec setpriv --reuid=$user --regid=$user --init-groups $command" \
    >>"$root.server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
stop_server() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  return "$status"
}
runs_as_package_user() {
  [ "$(ps -o uid= -p "$server_pid" | tr -d ' ')" = "$(inside id -u tablesync-server)" ]
}
# synced_copy STORE: a new store pulls TodoItem from the server and prints what it holds.
synced_copy() {
  inside tablesync -C "/root/$1" init --remote "http://127.0.0.1:$port" --table TodoItem >/dev/null
  inside tablesync -C "/root/$1" sync --quiet >/dev/null
  inside tablesync -C "/root/$1" query TodoItem
}

echo "package-test: $(basename "$client_deb") and $(basename "$server_deb") in a minimal $suite root"
check "apt installs both packages and their dependencies" \
  inside sh -c 'apt-get update -qq && apt-get install -y -q --no-install-recommends /tmp/dist/*.deb'
check "the root has no Swift" inside sh -c '! command -v swift && ! ls /opt/swift /usr/lib/swift 2>/dev/null'
check "the programs find every library they link" \
  inside sh -c '! ldd /usr/bin/tablesync /usr/bin/tablesync-server | grep -E "not found|swift"'
check "tablesync --version names the commit" contains "(commit $commit)" "$(inside tablesync --version)"
check "tablesync-server --version names the commit" contains "(commit $commit)" "$(inside tablesync-server --version)"
for page in tablesync tablesync.sync tablesync-server; do
  check "man -w $page" inside man -w "$page"
done
check "completions for bash, zsh and fish" inside test -f /usr/share/bash-completion/completions/tablesync \
  -a -f /usr/share/zsh/vendor-completions/_tablesync -a -f /usr/share/fish/vendor_completions.d/tablesync.fish \
  -a -f /usr/share/bash-completion/completions/tablesync-server
check "system and user units" inside sh -c 'for unit in tablesync-sync@.service tablesync-sync@.timer \
  tablesync-watch@.service; do test -f /lib/systemd/system/$unit && test -f /usr/lib/systemd/user/$unit || exit 1
  done; test -f /lib/systemd/system/tablesync-server.service'
check "the server's user, its state folder and configuration" inside sh -c 'getent passwd tablesync-server &&
  test "$(stat -c %U:%a /var/lib/tablesync-server)" = tablesync-server:750 &&
  test "$(stat -c %U:%G:%a /etc/tablesync-server)" = root:tablesync-server:750 &&
  grep -qx /etc/tablesync-server/server.json /var/lib/dpkg/info/tablesync-server.conffiles'

# The configuration is the administrator's: a free port here, which every later step must keep.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
sed -i "s/\"port\": 8080/\"port\": $port/" "$root/etc/tablesync-server/server.json"
check "tablesync-server starts as its user with the unit's command" start_server
check "the server runs as tablesync-server" runs_as_package_user
check "tablesync init" inside tablesync -C /root/store init --remote "http://127.0.0.1:$port" --table TodoItem
check "tablesync insert" inside tablesync -C /root/store insert TodoItem \
  '{"id": "package-test", "text": "installed from a package", "complete": false}'
check "tablesync sync" inside tablesync -C /root/store sync
check "the server holds the row" contains '"installed from a package"' "$(synced_copy copy-1)"
check "the database is in the state folder, the user's" \
  test "$(inside stat -c %U /var/lib/tablesync-server/server.sqlite)" = tablesync-server
check "SIGTERM stops the server with status 0" stop_server

check "units pass systemd-analyze verify (systemd added to the root for it)" inside sh -c '
  apt-get install -y -q --no-install-recommends systemd >/dev/null &&
  for unit in tablesync-server.service tablesync-sync@.service tablesync-sync@.timer tablesync-watch@.service; do
    test ! -f /lib/systemd/system/$unit || systemd-analyze verify /lib/systemd/system/$unit || exit 1
  done &&
  mkdir -p /run/user/0 &&
  for unit in tablesync-sync@.service tablesync-sync@.timer tablesync-watch@.service; do
    XDG_RUNTIME_DIR=/run/user/0 systemd-analyze --user verify /usr/lib/systemd/user/$unit || exit 1
  done'

check "apt reinstalls both over themselves" \
  inside sh -c 'apt-get install -y -q --reinstall --no-install-recommends /tmp/dist/*.deb'
check "the reinstall keeps the configuration" grep -q "\"port\": $port" "$root/etc/tablesync-server/server.json"
check "the server starts again after the reinstall" start_server
check "the reinstall keeps the records" contains '"installed from a package"' "$(synced_copy copy-2)"
check "SIGTERM stops it again" stop_server

check "apt removes both" inside apt-get remove -y -q tablesync tablesync-server
check "remove takes the programs" inside sh -c '! test -e /usr/bin/tablesync && ! test -e /usr/bin/tablesync-server'
check "remove keeps the configuration and the records" \
  test -f "$root/etc/tablesync-server/server.json" -a -f "$root/var/lib/tablesync-server/server.sqlite"
check "apt purges both" inside apt-get purge -y -q tablesync tablesync-server
check "purge takes the configuration and the records" \
  test ! -e "$root/etc/tablesync-server" -a ! -e "$root/var/lib/tablesync-server"
check "dpkg forgets both" inside sh -c '! dpkg -l tablesync tablesync-server 2>/dev/null | grep -q "^[a-z][a-z]"'

[ "$failed" -eq 0 ] || echo "package-test: the log is $log; the server's, $root.server.log"
[ "$failed" -ne 0 ] || rm -f "$log" "$root.server.log"
echo "package-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
