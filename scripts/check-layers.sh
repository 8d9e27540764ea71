#!/usr/bin/env bash
# Dependencies point one way: tensor <- autograd <- nn <- train <- studies <- apps (the
# programs). Fails when a file includes a header from a layer above its own. bench/ may
# use every library layer but not the programs; tests/ may use everything.
cd "$(dirname "$0")/.." || exit 1
bad=0
check() {  # folder, forbidden include prefixes...
  local dir=$1; shift
  for layer in "$@"; do
    if grep -rnE "#include \"$layer/" "$dir" --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' 2>/dev/null; then
      echo "layering: $dir/ must not include $layer/ (tensor <- autograd <- nn <- train <- studies <- apps)"; bad=1
    fi
  done
}
check tensor autograd nn train studies apps
check autograd nn train studies apps
check nn train studies apps
check train studies apps
check studies apps
check bench apps
# train/ reaches the GPU only through tensor/'s dispatch: no CUDA kernel header
if grep -rnE '#include "tensor/cuda/' train studies apps --include='*.h' --include='*.cpp' 2>/dev/null; then
  echo "layering: train/, studies/ and apps/ must not include tensor/cuda/ headers (use the ops in tensor/ops.h)"; bad=1
fi
exit $bad
