#!/usr/bin/env bash
# Dependencies point one way: tensor <- autograd <- nn <- train. Fails when a file
# includes a header from a layer above its own.
cd "$(dirname "$0")/.." || exit 1
bad=0
check() {  # folder, forbidden include prefixes...
  local dir=$1; shift
  for layer in "$@"; do
    if grep -rnE "#include \"$layer/" "$dir" --include='*.h' --include='*.cpp' --include='*.cu' 2>/dev/null; then
      echo "layering: $dir/ must not include $layer/ (tensor <- autograd <- nn <- train)"; bad=1
    fi
  done
}
check tensor autograd nn train
check autograd nn train
check nn train
exit $bad
