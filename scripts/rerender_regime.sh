#!/usr/bin/env bash
# Render every regime page in docs/results/ again from the results file committed beside
# it (PAGE.json), training nothing: after a change to the report's code or template, this
# brings each page's tables and verdicts up to date. Each page's own "Regenerate:" command
# is run with `--reuse --out` a scratch folder holding its JSON, so a page keeps its grid,
# its recipe and the wall times its cells were trained in.
#   usage: scripts/rerender_regime.sh [build/release] [PAGE.md ...]   (default: every page with a JSON)
set -euo pipefail
build=${1:-build/release}
shift || true
pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
  for md in docs/results/regime*.md; do [ -f "${md%.md}.json" ] && pages+=("$md"); done
fi
scratch=$(mktemp -d /tmp/rerender-regime.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
for md in "${pages[@]}"; do
  json=${md%.md}.json
  [ -f "$json" ] || { echo "rerender_regime: $md has no results file $json beside it" >&2; exit 2; }
  cmd=$(grep -o 'Regenerate: `[^`]*`' "$md" | head -1 | sed 's/^Regenerate: `//; s/`$//')
  [ -n "$cmd" ] || { echo "rerender_regime: $md has no 'Regenerate:' command" >&2; exit 2; }
  out="$scratch/$(basename "${md%.md}")"
  mkdir -p "$out"
  cp "$json" "$out/results.json"
  # a results file under runs/ that a fresh clone lacks is stood in for by the page's own JSON:
  # --reuse reads no cell from it
  cmd=$(echo "$cmd" | sed -E "s#runs/[A-Za-z0-9_./-]*results\.json#$json#g; s#^(nice -n [0-9]+ )?build/release/#$build/#")
  echo "== $md"
  eval "$cmd --reuse --out '$out'" > "$out/stdout" 2>&1 || { cat "$out/stdout" >&2; exit 1; }
done
