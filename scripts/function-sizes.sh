#!/bin/bash
# Lines of source per folder and each folder's largest functions, at a git revision:
# how readable the floors are, in numbers (issue 35's "line counts and largest functions
# per folder before and after").
#   scripts/function-sizes.sh [REV] [N]      # REV: HEAD by default; N largest per folder (1)
# Needs universal-ctags (apt-get install universal-ctags); a function's size is its
# definition's lines from ctags' line to end fields, lambdas counted within it.
set -euo pipefail
rev=${1:-HEAD}
top=${2:-1}
command -v ctags >/dev/null || { echo "function-sizes.sh: needs ctags (apt-get install universal-ctags)" >&2; exit 2; }
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
git archive "$rev" | tar -x -C "$tree"
cd "$tree"
echo "revision $(git -C "$OLDPWD" rev-parse --short "$rev"): lines of .cpp/.h/.cu per folder, largest function(s)"
echo
echo "| folder | files | lines | largest function (lines) |"
echo "|---|---|---|---|"
for dir in $(find tensor autograd nn train studies apps bench tests -name '*.cpp' -o -name '*.h' -o -name '*.cu' 2>/dev/null |
             xargs -n1 dirname | sort -u); do
  files=$(find "$dir" -maxdepth 1 \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' \) | sort)
  nfiles=$(echo "$files" | wc -l)
  lines=$(cat $files | wc -l)
  largest=$(ctags --language-force=C++ --kinds-C++=f --fields=+ne --output-format=u-ctags -o - $files 2>/dev/null |
    awk -F'\t' '$1 !~ /^__anon/ {
      line = ""; end = "";
      for (i = 4; i <= NF; ++i) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
      if (line != "" && end != "") print end - line + 1, $1 }' |
    sort -rn | head -n "$top" | awk '{ printf "%s`%s` %d", (NR > 1 ? ", " : ""), $2, $1 }')
  echo "| $dir | $nfiles | $lines | $largest |"
done
