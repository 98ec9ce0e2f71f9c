#!/usr/bin/env bash
# Fuzzes with libFuzzer (swiftc -sanitize=fuzzer,address), each fuzzer for FUZZ_SECONDS (default 600):
#   filter  SyncProtocol's $filter parser: parse, print, parse again to the same expression, evaluate
#   json    SyncProtocol's JSON parser: parse, write canonically, parse again to the same bytes
#   server  the server's request handling: list query strings to SQL run on a real SQLite (within the statement time
#           limit and its grace: the $filter cost check), batch and record bodies, chunked bodies' framing
#   scripts/fuzz.sh                  every fuzzer          FUZZ_SECONDS=30 scripts/fuzz.sh   a short run
#   scripts/fuzz.sh server           one of them
# Corpora live in .build-fuzz/corpus-<name> (seeded from Tests/Fuzz/seeds-<name>); crashing inputs are written to
# .build-fuzz/crash-<name>-* and should be added to the regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-600}"
out=".build-fuzz"
mkdir -p "$out"
names=("${@:-filter json server}")
read -r -a names <<<"${names[*]}"

protocol_sources=$(find Sources/SyncProtocol -name '*.swift' | sort)

# The server fuzzer compiles the server's pure request-handling files, and swift-http-types (ProtocolError's
# status codes), into one module with SyncProtocol: copies without the imports of those modules.
server_module() {
  swift package resolve >/dev/null
  local http_types=".build/checkouts/swift-http-types/Sources/HTTPTypes"
  [ -d "$http_types" ] || { echo "fuzz: swift-http-types is not checked out in .build/checkouts" >&2; exit 1; }
  local copies="$out/server-sources"
  rm -rf "$copies"
  mkdir -p "$copies" "$out/CSQLite"
  local file
  for file in $http_types/*.swift Sources/TableSyncServer/Query/*.swift Sources/TableSyncServer/SQL/*.swift Sources/TableSyncServer/Schema/*.swift \
      Sources/TableSyncServer/Repository/RecordQuerySQL.swift Sources/TableSyncServer/Repository/StoredRecord.swift \
      Sources/TableSyncServer/HTTP/IncomingRecord.swift Sources/TableSyncServer/HTTP/ProtocolError.swift \
      Sources/TableSyncServer/HTTP/Connection/ChunkedBodyScan.swift \
      Sources/TableSyncServer/Configuration/TableOptions.swift Sources/TableSyncServer/Configuration/TableAccess.swift \
      Sources/TableSyncServer/Configuration/ConfigurationError.swift; do
    sed -E '/^import (SyncProtocol|HTTPTypes)$/d' "$file" > "$copies/$(basename "$(dirname "$file")")-$(basename "$file")"
  done
  printf 'module CSQLite [system] {\n  header "/usr/include/sqlite3.h"\n  link "sqlite3"\n  export *\n}\n' > "$out/CSQLite/module.modulemap"
  find "$copies" -name '*.swift' | sort
}

for name in "${names[@]}"; do
  flag="FUZZ_$(echo "$name" | tr a-z A-Z)"
  sources="$protocol_sources"
  extra=()
  if [ "$name" = server ]; then
    sources="$sources $(server_module)"
    extra=(-I "$out/CSQLite")
    # swift-http-types declares availability macros (`@available(HTTPTypes 1.0, *)`) in its Package.swift.
    while IFS= read -r macro; do
      extra+=(-enable-experimental-feature "$macro")
    done < <(grep -oE '"HTTPTypes [0-9.]+": "[^"]+"' .build/checkouts/swift-http-types/Package.swift \
               | sed -E 's/"([^"]+)": "([^"]+)"/AvailabilityMacro=\1: \2/')
  fi
  echo "fuzz: building the $name fuzzer"
  rm -f "$out/fuzz-$name"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -D "$flag" -module-name SyncProtocol -package-name TableSync "${extra[@]}" \
    $sources Tests/Fuzz/Fuzzers.swift -o "$out/fuzz-$name" 2>&1 | grep -v "Cannot export local symbol" || true
  [ -x "$out/fuzz-$name" ] || { echo "fuzz: the $name fuzzer did not build"; exit 1; }
  mkdir -p "$out/corpus-$name"
  [ -d "Tests/Fuzz/seeds-$name" ] && cp -n Tests/Fuzz/seeds-$name/* "$out/corpus-$name/" 2>/dev/null || true
  echo "fuzz: running the $name fuzzer for ${seconds}s"
  "$out/fuzz-$name" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/crash-$name-" "$out/corpus-$name" 2>&1 | tee "$out/fuzz-$name.log" | grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' || true
  if ls "$out"/crash-$name-* >/dev/null 2>&1; then echo "fuzz: the $name fuzzer found crashes: $(ls "$out"/crash-$name-*)"; exit 1; fi
done
echo "fuzz: no crashes"
