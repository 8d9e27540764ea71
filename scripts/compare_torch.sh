#!/usr/bin/env bash
# normlab against PyTorch 2.x on the same GPT configurations, developer-side: it needs
# PyTorch in a virtual environment (python3 -m venv ~/torch-venv && ~/torch-venv/bin/pip
# install torch) and a release build (make benches). The project itself needs neither.
#
#   scripts/compare_torch.sh [CONFIGS [THREADS [ROUNDS]]]
#   scripts/compare_torch.sh "tiny small" "1 2" 3          # the default
#   scripts/compare_torch.sh "tiny tiny-T256 tiny-T1024 small-C768" "1"
#
# Each round runs, for every configuration and thread count, build/release/bench_gpt ($BENCH_GPT)
# (ln, the training step only) and ../shared/tools/torch_gpt_bench.py (sdpa attention)
# one after the other, so that a load that comes and goes meets both. The table holds
# the median over the rounds of each side's median ms/step, the ratio PyTorch / normlab,
# the ratio against PyTorch's best thread count, normlab's peak memory in use (its
# allocator) and PyTorch's growth of peak RSS over the run (what its allocator took from
# the system), the smallest share of the cores normlab held and the largest share of
# its time queued behind another process (bench_gpt's `cores` and `queued`: a row queued
# above a few per cent was measured on a busy machine).
# Configurations: tiny, small, and bench_gpt's sweeps tiny-T128 ... tiny-T1024 and
# small-C128 ... small-C768 (the wrapper below gives PyTorch the same shapes).
set -eu
cd "$(dirname "$0")/.."
configs=${1:-tiny small}
threads=${2:-1 2}
rounds=${3:-3}
py=${TORCH_PYTHON:-$HOME/torch-venv/bin/python}
tool=${TORCH_BENCH:-../shared/tools/torch_gpt_bench.py}
bench=${BENCH_GPT:-build/release/bench_gpt}   # BENCH_GPT=build/release-onednn/bench_gpt: the GEMM=onednn build
[ -x "$py" ] || { echo "compare_torch.sh: no PyTorch venv at $py (set TORCH_PYTHON)" >&2; exit 2; }
[ -f "$tool" ] || { echo "compare_torch.sh: no $tool (set TORCH_BENCH)" >&2; exit 2; }
[ -x "$bench" ] || { echo "compare_torch.sh: no $bench (run make benches)" >&2; exit 2; }
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# PyTorch side: the tool itself, with bench_gpt's sweep shapes added to its table and
# the growth of peak RSS printed after its own line.
cat > "$out/torch_side.py" <<'EOF'
import importlib.util, resource, sys
spec = importlib.util.spec_from_file_location("torch_gpt_bench", sys.argv[1])
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)
for T in (128, 256, 512, 1024):
    tool.CONFIGS[f"tiny-T{T}"] = dict(V=256, L=4, C=128, H=4, T=T, B=16)
for C in (128, 256, 512, 768):
    tool.CONFIGS[f"small-C{C}"] = dict(V=256, L=6, C=C, H=C // 64, T=256, B=8)
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.argv = [sys.argv[1]] + sys.argv[2:]
tool.main()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(f"rss_growth_mib={(peak - start) / 1024:.1f}")
EOF

steps_of() {
  case $1 in
    tiny) echo 20 ;;
    tiny-T128|tiny-T256|small-C128|small-C256) echo 8 ;;
    *) echo 3 ;;
  esac
}

echo "compare_torch.sh: $(date -u '+%F %H:%M') UTC, load average $(cut -d' ' -f1 /proc/loadavg), $rounds rounds" \
     "of: configs [$configs], threads [$threads]; $("$py" -c 'import torch; print("torch", torch.__version__)')"
: > "$out/rows"
for round in $(seq "$rounds"); do
  for c in $configs; do
    for t in $threads; do
      s=$(steps_of "$c")
      "$bench" --configs "$c" --norms ln --threads "$t" --steps "$s" --breakdown none --compare "" \
               --no-generation --json "$out/n.json" > "$out/n.txt"
      "$py" "$out/torch_side.py" "$tool" "$c" "$t" "$s" > "$out/t.txt"
      "$py" - "$out/n.json" "$out/t.txt" "$c" "$t" "$round" >> "$out/rows" <<'EOF'
import json, re, sys
n = json.load(open(sys.argv[1]))["results"][0]
t = open(sys.argv[2]).read()
ms = float(re.search(r"ms/step=([0-9.]+)", t).group(1))
rss = float(re.search(r"rss_growth_mib=([0-9.]+)", t).group(1))
print(sys.argv[3], sys.argv[4], sys.argv[5], n["ms_per_step"], n["peak_in_use_mib"], n["core_share"], ms, rss,
      n["queued_share"])
EOF
      tail -1 "$out/rows" | awk '{printf "  round %s %-11s %s thread(s): normlab %.1f ms, PyTorch %.1f ms\n", $3, $1, $2, $4, $7}'
    done
  done
done

"$py" - "$out/rows" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
keys = []
for r in rows:
    if (r[0], r[1]) not in keys:
        keys.append((r[0], r[1]))
med = {}
for k in keys:
    rs = [r for r in rows if (r[0], r[1]) == k]
    med[k] = dict(nl=statistics.median(float(r[3]) for r in rs), peak=max(float(r[4]) for r in rs),
                  cores=min(float(r[5]) for r in rs), pt=statistics.median(float(r[6]) for r in rs),
                  rss=max(float(r[7]) for r in rs), queued=max(float(r[8]) for r in rs), n=len(rs))
best_pt = {}
for (c, t), m in med.items():
    best_pt[c] = min(best_pt.get(c, float("inf")), m["pt"])
print()
print("| config | threads | normlab ln ms/step | PyTorch ms/step | PyTorch / normlab | PyTorch best / normlab "
      "| normlab peak MiB | PyTorch RSS growth MiB | normlab cores (min) | normlab queued (max) | rounds |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for (c, t), m in med.items():
    print(f"| {c} | {t} | {m['nl']:.1f} | {m['pt']:.1f} | {m['pt'] / m['nl']:.2f} | {best_pt[c] / m['nl']:.2f} "
          f"| {m['peak']:.1f} | {m['rss']:.1f} | {100 * m['cores']:.0f} % | {100 * m['queued']:.0f} % | {m['n']} |")
print("(medians over the rounds of each side's median; targets, BENCHMARKS.md: PyTorch best / normlab >= 1.4 at tiny,"
      " >= 1.25 at small)")
EOF
