#!/usr/bin/env bash
# Prints the sources below the given folders that parse nlohmann-json: those that include
# <nlohmann/json.hpp> themselves or through any chain of the project's headers. The
# Makefile gives them a precompiled copy of that header (docs/performance.md, "Build
# time"); a source it misses only compiles slower, one it names wrongly no differently.
# Usage: scripts/json-users.sh FOLDER...
set -euo pipefail
# the headers that reach nlohmann-json, grown one include level a round until none is added
pattern='nlohmann/json\.hpp'
headers=
while :; do
  found=$(grep -rlE "^#include [<\"]($pattern)[>\"]" --include='*.h' "$@" | sort || true)
  [ "$found" = "$headers" ] && break
  headers=$found
  pattern="nlohmann/json\\.hpp$(printf '|%s' $headers | sed 's/\./\\./g')"
done
grep -rlE "^#include [<\"]($pattern)[>\"]" --include='*.cpp' "$@" | sort || true
