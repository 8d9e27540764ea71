#!/usr/bin/env bash
# Dependencies point one way: tensor <- autograd <- nn <- train <- studies <- apps (the
# programs). Fails when a file includes a header from a layer above its own. bench/ may
# use every library layer but not the programs; tests/ may use everything.
# Inside train/ the same, one sub-layer over another (docs/architecture.md draws them):
#   train/optim <- train/io <- train/data, train/safety <- train/loop <- train/gpt, train/vit, train/flags
# data and safety do not include each other, nor gpt and vit. gpt, vit and flags share
# the top: flags binds the flags to each model's run settings, and a model's run checks a
# config made in code by running those flags' checks over it (train/gpt/gpt_run.h).
cd "$(dirname "$0")/.." || exit 1
bad=0
order="tensor <- autograd <- nn <- train <- studies <- apps"
check() {  # folder, forbidden include prefixes...
  local dir=$1; shift
  for layer in "$@"; do
    if grep -rnE "#include \"$layer/" "$dir" --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' 2>/dev/null; then
      echo "layering: $dir/ must not include $layer/ ($order)"; bad=1
    fi
  done
}
check tensor autograd nn train studies apps
check autograd nn train studies apps
check nn train studies apps
check train studies apps
check studies apps
check bench apps
order="train/optim <- train/io <- train/data, train/safety <- train/loop <- train/gpt, train/vit, train/flags"
check train/optim train/io train/data train/safety train/loop train/gpt train/vit train/flags
check train/io train/data train/safety train/loop train/gpt train/vit train/flags
check train/data train/safety train/loop train/gpt train/vit train/flags
check train/safety train/data train/loop train/gpt train/vit train/flags
check train/loop train/gpt train/vit train/flags
check train/gpt train/vit
check train/vit train/gpt
# train/ reaches the GPU only through tensor/'s dispatch: no CUDA kernel header
if grep -rnE '#include "tensor/cuda/' train studies apps --include='*.h' --include='*.cpp' 2>/dev/null; then
  echo "layering: train/, studies/ and apps/ must not include tensor/cuda/ headers (use the ops in tensor/ops.h)"; bad=1
fi
exit $bad
