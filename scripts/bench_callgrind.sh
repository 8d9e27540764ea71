#!/usr/bin/env bash
# make bench-callgrind [NORM=ln]: the instructions of one training step of the tiny GPT
# (bench/bench_callgrind.cpp: after a warm-up step, one thread), counted by valgrind's
# callgrind and printed by phase (forward, backward, optimizer) and by autograd op
# (its forward and its backward). Instruction counts do not change with the load on the
# machine, so a change can be measured while the cores are busy: compare the counts
# before and after it (docs/performance.md). Takes about 30 s plus the build.
#
# Its own build (SANITIZE=callgrind, build/callgrind): -O3 for AVX2 + FMA, since
# valgrind 3.19 does not decode AVX-512. OpenBLAS runs its Sandybridge (AVX) kernels:
# under valgrind its Haswell (FMA) sgemm kernel ran 70x slower than the AVX one (3.6 s
# against 0.05 s for one 1024 x 512 x 128 product), which made this take 5 minutes.
# OMP_WAIT_POLICY is set so that the program does not re-execute itself
# (tensor/threads.h), which would leave valgrind behind.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
norm=${1:-ln}
for tool in valgrind callgrind_annotate; do
  if ! command -v $tool >/dev/null; then
    cmd="apt-get install -y --no-install-recommends valgrind"
    if [ "$(id -u)" -ne 0 ]; then echo "make bench-callgrind needs valgrind. Run as root:  $cmd"; exit 1; fi
    DEBIAN_FRONTEND=noninteractive $cmd -qq ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive $cmd -qq; } || exit 1
  fi
done
# bench_callgrind links none of the studies, the ViT or folding: those are not compiled
omit='studies/compare/% studies/depth/% studies/regime/% studies/report/% studies/fold/% studies/reproduces/% train/vit/vit_run% train/vit/vit_task% nn/fold%'
nice -n 10 make --no-print-directory -j"$(nproc)" SANITIZE=callgrind LIB_OMIT="$omit" build/callgrind/bench_callgrind \
  >build/callgrind-build.log 2>&1 ||
  { tail -30 build/callgrind-build.log; echo "callgrind build failed (build/callgrind-build.log)"; exit 1; }
profile=build/callgrind/step.callgrind
export OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=Sandybridge OMP_NUM_THREADS=1
if ! valgrind --tool=callgrind --callgrind-out-file="$profile" --collect-atstart=no \
    --toggle-collect=normlab_measured_step build/callgrind/bench_callgrind --norm "$norm" \
    >build/callgrind/valgrind.log 2>&1; then
  tail -30 build/callgrind/valgrind.log; exit 1
fi
echo "== instructions of one tiny GPT training step ($norm, 1 thread, after a warm-up step; callgrind," \
     "build/callgrind, OpenBLAS Sandybridge kernels; $(date -u '+%Y-%m-%d %H:%M UTC'), commit" \
     "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' + changes'))"
# callgrind_annotate's inclusive counts: a function with everything it calls
callgrind_annotate --inclusive=yes --threshold=100 "$profile" 2>/dev/null | awk '
  function num(s) { gsub(",", "", s); return s + 0 }
  function row(name, n) { printf "  %-34s %15s %6.1f %%\n", name, fmt(n), 100 * n / total }
  function fmt(n,   s, r) {  # 1234567 -> 1,234,567
    s = sprintf("%d", n); r = ""
    while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
    return s r
  }
  /PROGRAM TOTALS/ { total = num($1); next }
  {
    n = num($1); line = $0
    sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", line)  # the function, "file:name [object]"
    sub(/^[^:]*:/, "", line)
    if (line ~ /^nl::GPT::loss\(/) forward = n
    else if (line ~ /^nl::Var::backward\(bool\)/) backward = n
    else if (line ~ /^nl::guarded_step\(/) optimizer = n
    else if (line ~ /^cblas_sgemm /) sgemm = n
    if (match(line, /nl::ag::[a-z_0-9]+\(/)) {
      op = substr(line, RSTART + 8, RLENGTH - 9)
      if (line ~ /\{lambda/) { if (n > bwd[op]) bwd[op] = n; seen[op] = 1 }
      else if (line ~ /^nl::ag::[a-z_0-9]+\(/) { fwd[op] = n; seen[op] = 1 }
    }
  }
  END {
    if (total == 0) { print "no counts: did the measured step run? (build/callgrind/valgrind.log)"; exit 1 }
    printf "  %-34s %15s %8s\n", "phase", "instructions", "share"
    row("the step", total)
    row("forward (GPT::loss)", forward)
    row("backward (Var::backward)", backward)
    row("optimizer (clip + AdamW)", optimizer)
    row("rest (zeroing the gradients, ...)", total - forward - backward - optimizer)
    row("in these: sgemm (every product)", sgemm)
    printf "\n  %-22s %15s %15s %8s\n", "autograd op", "forward", "backward", "share"
    for (op in seen) order[op] = fwd[op] + bwd[op]
    k = 0
    for (op in seen) keys[++k] = op
    for (i = 1; i <= k; ++i)  # largest first
      for (j = i + 1; j <= k; ++j)
        if (order[keys[j]] > order[keys[i]]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
    for (i = 1; i <= k; ++i) {
      op = keys[i]
      if (order[op] < 0.001 * total) continue
      printf "  %-22s %15s %15s %6.1f %%\n", op, fmt(fwd[op]), fmt(bwd[op]), 100 * order[op] / total
    }
    print "  (ops under 0.1 % of the step left out; the profile: callgrind_annotate build/callgrind/step.callgrind)"
  }'
