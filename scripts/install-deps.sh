#!/usr/bin/env bash
# Installs the system packages TableSync builds and tests with (zlib and libcurl for the client, git for the tests of stores kept in git, openssl
# for the test PostgreSQL's TLS certificates, prometheus for promtool, which checks the server's /metrics), quietly
# when they are already present. Arguments name more packages, as `make package` names its tools.
set -euo pipefail
packages=(zlib1g-dev libcurl4-openssl-dev libsqlite3-dev pkg-config postgresql git openssl prometheus "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
