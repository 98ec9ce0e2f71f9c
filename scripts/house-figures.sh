#!/usr/bin/env bash
# The shape of the code in figures, for a tree or a commit: what a reader of the client library meets.
#   scripts/house-figures.sh          the working tree
#   scripts/house-figures.sh REV      the tree of commit REV (read with git archive; the working tree is untouched)
# Prints: modules and Swift files under Sources/; for every module its files and lines, its longest functions,
# force unwraps, public and package declarations and the share of comment lines; the public declarations of the
# client library (Sources/TableSync and its storage core, Sources/TableSyncStorage); and lines over 120 characters
# anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."

tree="."
if [ $# -gt 0 ]; then
  tree="$(mktemp -d)"
  trap 'rm -rf "$tree"' EXIT
  git archive "$1" Sources Tests | tar -x -C "$tree"
fi
swift_files() { find "$@" -name '*.swift' -print0 | sort -z; }
count_matching() { swift_files "$1" | { xargs -0 grep -hcE "$2" || true; } | paste -sd+ | bc; }

modules=$(find "$tree/Sources" -mindepth 1 -maxdepth 1 -type d | wc -l)
files=$(swift_files "$tree/Sources" | tr -cd '\0' | wc -c)
echo "modules under Sources/: $modules; Swift files: $files"

public_total=0
for library in "$tree"/Sources/*/; do
  library="${library%/}"
  module="$(basename "$library")"
  [ -n "$(swift_files "$library" | tr -d '\0')" ] || continue
  echo "Sources/$module: $(swift_files "$library" | tr -cd '\0' | wc -c) files, $(swift_files "$library" | xargs -0 cat | wc -l) lines"
  # A function runs from its `func` or `init` line to the first line after it that closes at its indentation.
  echo "  longest functions (lines; the three longest, and every one over 60):"
  swift_files "$library" | xargs -0 awk -v module="$module" '
    FNR == 1 { open = 0 }
    !open && /^ *((public|package|private|fileprivate|internal|static|mutating|nonisolated|override|@[A-Za-z]+) +)*(func |init[(<?]|init\?)/ {
      match($0, /^ */); indent = RLENGTH; start = FNR; open = 1
      name = $0; sub(/^ */, "", name); sub(/\(.*/, "", name); where = FILENAME
      if ($0 ~ /}[ ]*$/ && $0 !~ /{[ ]*$/) open = 0
      next
    }
    open && match($0, /^ *}/) && RLENGTH - 1 == indent {
      length_ = FNR - start + 1; sub(".*Sources/" module "/", "", where)
      print length_ "\t" where ": " name; open = 0
    }' | sort -rn | awk -F '\t' 'NR <= 3 || $1 > 60' | sed 's/^/    /'
  unwraps=$(swift_files "$library" | xargs -0 grep -hE '[]a-zA-Z0-9_)]![^=]' | grep -vcE '^\s*//' || true)
  echo "  force unwraps (lines with one, comments aside): $unwraps"
  public=$(count_matching "$library" '^\s*public\b')
  case "$module" in TableSync | TableSyncStorage) public_total=$((public_total + public)) ;; esac
  echo "  public declarations: $public; package declarations: $(count_matching "$library" '^\s*package\b')"
  comments=$(count_matching "$library" '^\s*//')
  lines=$(swift_files "$library" | xargs -0 cat | wc -l)
  echo "  comment lines: $comments of $lines ($((100 * comments / lines)) %)"
done
echo "public declarations of the client library (TableSync re-exports its storage core): $public_total"
echo "lines over 120 characters in Sources/ and Tests/: $(swift_files "$tree/Sources" "$tree/Tests" | xargs -0 grep -hcE '^.{121,}' | paste -sd+ | bc)"
