#!/usr/bin/env bash
# Fuzzes SyncProtocol's $filter parser and JSON parser with libFuzzer (swiftc -sanitize=fuzzer).
#   scripts/fuzz.sh                 each fuzzer for FUZZ_SECONDS (default 600)
#   FUZZ_SECONDS=30 scripts/fuzz.sh a short run
# Corpora live in .build-fuzz/corpus-<name> (seeded from Tests/Fuzz/seeds-<name>); crashing inputs are written to
# .build-fuzz/crash-* and should be added to the regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-600}"
out=".build-fuzz"
mkdir -p "$out"
sources=$(find Sources/SyncProtocol -name '*.swift' | sort)
for name in filter json; do
  flag="FUZZ_$(echo "$name" | tr a-z A-Z)"
  echo "fuzz: building the $name fuzzer"
  rm -f "$out/fuzz-$name"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -D "$flag" -module-name SyncProtocol \
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
