#!/usr/bin/env bash
# The shape of the code in figures, for a tree or a commit: what a reader of the client library meets.
#   scripts/house-figures.sh          the working tree
#   scripts/house-figures.sh REV      the tree of commit REV (read with git archive; the working tree is untouched)
# Prints: modules and Swift files under Sources/, the client library's (Sources/TableSync) longest functions, force
# unwraps outside tests, public and package declarations, the share of comment lines, and lines over 120 characters.
set -euo pipefail
cd "$(dirname "$0")/.."

tree="."
if [ $# -gt 0 ]; then
  tree="$(mktemp -d)"
  trap 'rm -rf "$tree"' EXIT
  git archive "$1" Sources Tests | tar -x -C "$tree"
fi
library="$tree/Sources/TableSync"
swift_files() { find "$@" -name '*.swift' -print0 | sort -z; }

modules=$(find "$tree/Sources" -mindepth 1 -maxdepth 1 -type d | wc -l)
files=$(swift_files "$tree/Sources" | tr -cd '\0' | wc -c)
echo "modules under Sources/: $modules; Swift files: $files"
echo "Sources/TableSync: $(swift_files "$library" | tr -cd '\0' | wc -c) files, $(swift_files "$library" | xargs -0 cat | wc -l) lines"

# A function runs from its `func` or `init` line to the first line after it that closes at its indentation.
echo "longest functions in Sources/TableSync (lines; the five longest, and every one over 60):"
swift_files "$library" | xargs -0 awk '
  FNR == 1 { open = 0 }
  !open && /^ *((public|package|private|fileprivate|internal|static|mutating|nonisolated|override|@[A-Za-z]+) +)*(func |init[(<?]|init\?)/ {
    match($0, /^ */); indent = RLENGTH; start = FNR; open = 1
    name = $0; sub(/^ */, "", name); sub(/\(.*/, "", name); where = FILENAME
    if ($0 ~ /}[ ]*$/ && $0 !~ /{[ ]*$/) open = 0
    next
  }
  open && match($0, /^ *}/) && RLENGTH - 1 == indent {
    length_ = FNR - start + 1; sub(/.*Sources\/TableSync\//, "", where)
    print length_ "\t" where ": " name; open = 0
  }' | sort -rn | awk -F '\t' 'NR <= 5 || $1 > 60' | sed 's/^/  /'

unwraps=$(swift_files "$library" | xargs -0 grep -hE '[]a-zA-Z0-9_)]![^=]' | grep -vcE '^\s*//' || true)
echo "force unwraps in Sources/TableSync (lines with one, comments aside): $unwraps"
echo "public declarations in Sources/TableSync: $(swift_files "$library" | xargs -0 grep -hcE '^\s*public\b' | paste -sd+ | bc)"
echo "package declarations in Sources/TableSync: $(swift_files "$library" | xargs -0 grep -hcE '^\s*package\b' | paste -sd+ | bc)"
comments=$(swift_files "$library" | xargs -0 grep -hcE '^\s*//' | paste -sd+ | bc)
lines=$(swift_files "$library" | xargs -0 cat | wc -l)
echo "comment lines in Sources/TableSync: $comments of $lines ($((100 * comments / lines)) %)"
echo "lines over 120 characters in Sources/ and Tests/: $(swift_files "$tree/Sources" "$tree/Tests" | xargs -0 grep -hcE '^.{121,}' | paste -sd+ | bc)"
