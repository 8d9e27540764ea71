#!/usr/bin/env bash
# What a fresh clone's build costs: clones HEAD into a scratch folder, builds there what
# `make test` builds (`make all`: the library, the programs, the test binary) with ccache
# off, and times every compiler call with /usr/bin/time. Prints the CPU seconds (user +
# system) of the whole build and of the N slowest objects, the build's wall time and the
# load average around it. CPU time is the figure to compare: the wall time of a build on
# a shared machine grows with whatever else runs (docs/performance.md, "Build time").
# Usage: [MAKE_VARS="SANITIZE=1"] scripts/build-times.sh [N] [JOBS] [REV]
#   N: objects listed (10); JOBS: make -j (nproc); REV: the commit to build (HEAD), so
#   that two builds, before and after a change, can run side by side under the same load;
#   MAKE_VARS: the build's make variables (SANITIZE=1: the ASan build, as CI's stage builds it)
set -euo pipefail
top=${1:-10}
jobs=${2:-$(nproc)}
rev=${3:-HEAD}
[ -x /usr/bin/time ] || { echo "scripts/build-times.sh needs /usr/bin/time (apt-get install time)"; exit 2; }
repo=$(git rev-parse --show-toplevel)
scratch=$(mktemp -d /tmp/normlab-build-times.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
git clone -q "$repo" "$scratch/tree"
git -C "$scratch/tree" checkout -q "$(git rev-parse "$rev")"
log=$scratch/times.log
# the compiler the build would use, behind a wrapper that appends one line per call:
# user s, system s, wall s, output file
real_cxx=$(command -v "${CXX:-g++}")
cat >"$scratch/cxx" <<EOF
#!/usr/bin/env bash
out=?; prev=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
exec /usr/bin/time -a -o "$log" -f "%U %S %e \$out" "$real_cxx" "\$@"
EOF
chmod +x "$scratch/cxx"
cd "$scratch/tree"
echo "build of $(git rev-parse --short HEAD) in $scratch/tree, make -j$jobs ${MAKE_VARS:-}, ccache off"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
# shellcheck disable=SC2086  # MAKE_VARS: words, one variable each
CCACHE_DISABLE=1 make -j"$jobs" ${MAKE_VARS:-} CXX="$scratch/cxx" all >"$scratch/build.out" 2>&1 ||
  { tail -20 "$scratch/build.out"; echo "the build failed"; exit 1; }
t1=$(date +%s.%N)
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v t0="$t0" -v t1="$t1" '$4 != "/dev/null" && $4 != "?" { cpu += $1 + $2; n++ }
  END { printf "%d compiler calls: %.0f s of CPU (user + system), %.0f s wall\n", n, cpu, t1 - t0 }' "$log"
# the library's objects: not the tests' groups, Catch2's main, the programs' mains or links
awk '$4 ~ /\.o$/ && $4 !~ /\/unity\/tests-by-|catch_main|\/apps\// { cpu += $1 + $2; n++ }
  END { printf "the library: %d objects, %.0f s of CPU\n", n, cpu }' "$log"
echo "the $top slowest (CPU s, user + system):"
awk '$4 != "/dev/null" && $4 != "?" { printf "%7.2f  %s\n", $1 + $2, $4 }' "$log" | sort -rn | head -"$top"
