#!/usr/bin/env bash
# CI's walk through docs/your-own-norm.md with norms the page does not show (issue 35):
# in a scratch copy of the tree (the sources and build/release's objects, so make
# recompiles only what changes), add two kinds in the page's shape under fresh names,
# both without parameters: `tutrms` (x / sqrt(mean(x^2) + eps), ending in no bounded
# function) and `tuttanh` (tanh(x), a tanh layer without statistics that does not
# declare the DyT screen). Each must pass every generic check (make test FILTER=<name>),
# appear with its summary in train_gpt's and train_vit's --help, and go through the
# page's sh blocks with its name for isru; train_gpt --screen-dyt must refuse tuttanh.
# Prints "N passed, N failed" (one per check) and exits non-zero on any failure.
# Usage: scripts/tutorial-check.sh   (after make all; about 3 minutes on 2 cores)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
page=docs/your-own-norm.md
[ -x build/release/run_tests ] || { echo "tutorial-check: build/release is not built (make all first)"; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tree=$scratch/tree
mkdir -p "$tree/build"
for entry in *; do
  case $entry in build | runs) continue ;; esac
  cp -a "$entry" "$tree/"
done
cp -a build/release "$tree/build/"

cat >"$tree/nn/norms/tutrms.cpp" <<'EOF'
#include "autograd/ops.h"
#include "nn/norms/registry.h"

namespace nl {
namespace {
struct UnitRms : Norm {  // no gain: nothing to learn
  Var composite(const Var& x) const override {
    return ag::mul(x, ag::rsqrt(ag::add_scalar(ag::mean(ag::mul(x, x), {-1}, true), 1e-5f)));
  }
};
}  // namespace

NormKind tutrms_kind() {
  NormKind k;
  k.name = "tutrms";
  k.summary = "tutorial check: x / sqrt(mean(x^2) + eps), no parameters";
  k.make = [](const NormConfig&, int64_t, NormPlace) { return std::make_shared<UnitRms>(); };
  return k;
}
}  // namespace nl
EOF
cat >"$tree/nn/norms/tuttanh.cpp" <<'EOF'
#include "autograd/ops.h"
#include "nn/norms/registry.h"

namespace nl {
namespace {
struct Tanh : Norm {
  Var bounded_arg(const Var& x) const override { return x; }
  Var composite(const Var& x) const override { return ag::tanh(bounded_arg(x)); }
};
}  // namespace

NormKind tuttanh_kind() {
  NormKind k;
  k.name = "tuttanh";
  k.summary = "tutorial check: tanh(x), no parameters, no statistics";
  k.make = [](const NormConfig&, int64_t, NormPlace) { return std::make_shared<Tanh>(); };
  k.statistics = false;
  k.bounded.name = "tanh";
  return k;
}
}  // namespace nl
EOF
printf 'NL_NORM_KIND(tutrms_kind)\nNL_NORM_KIND(tuttanh_kind)\n' >>"$tree/nn/norms/kinds.def"

passed=0; failed=0
check() {  # description, command...: one check, its output kept for the next
  local what=$1; shift
  if (cd "$tree" && "$@") >"$scratch/out" 2>&1; then
    passed=$((passed + 1)); echo "ok: $what"
  else
    failed=$((failed + 1)); echo "FAILED: $what"; tail -30 "$scratch/out"
  fi
}
# the page's sh blocks, one file each, in order
awk -v dir="$scratch" '/^```sh$/ { n++; f = dir "/block" n ".sh"; on = 1; next }
  /^```/ { on = 0 }
  on { print > f }' "$page"

check "make all with the two kinds" env -u MAKEFLAGS make -j"$(nproc)" all
for norm in tutrms tuttanh; do
  check "$norm: every generic check passes (make test FILTER=$norm)" \
    bash -c "env -u MAKEFLAGS make test FILTER=$norm | tee /dev/stderr |
      grep -qE '^[0-9]+ passed, 0 failed, 0 skipped$'"
  summary=$(sed -n "s/.*k.summary = \"\\(.*\\)\";/\\1/p" "$tree/nn/norms/$norm.cpp")
  for program in train_gpt train_vit; do
    check "$norm: $program --help lists it with its summary" \
      bash -c "build/release/$program --help | grep -qF '$norm: $summary'"
  done
  for block in "$scratch"/block*.sh; do
    grep -q 'make test' "$block" && continue  # run above
    sed "s/isru/$norm/g" "$block" >"$block.$norm"
    check "$norm: the page's block $(basename "$block") with its name" env -u MAKEFLAGS bash -e "$block.$norm"
    if grep -q bounded_all "$block"; then  # the statistics: saturation rows exactly for the tanh
      cp "$scratch/out" "$scratch/statistics.out"
      want=",bounded_all,"; [ "$norm" = tutrms ] && want="no saturation rows"
      check "$norm: the statistics block prints '$want'" grep -qF -- "$want" "$scratch/statistics.out"
    fi
  done
done
check "tuttanh: train_gpt --screen-dyt refuses a tanh norm that does not declare the screen (exit 2)" \
  bash -c "build/release/train_gpt --norm tuttanh --screen-dyt --steps 4 --screen-steps 2 --layers 1 --dim 16 \
    --heads 2 --seq 8 --batch 2 --out $scratch/screen 2>&1; test \$? -eq 2"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
