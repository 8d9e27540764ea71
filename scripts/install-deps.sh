#!/usr/bin/env bash
# Installs the Debian packages normlab needs, only those missing. Cheap when all are
# present (one dpkg-query), so `make test` and `make demo` call it every time.
set -euo pipefail
# The tests need fortunes, dataset-fashion-mnist and util-linux (unshare, prlimit) as well;
# make test counts a test whose package is missing as skipped, naming it, never as passed.
# `install-deps.sh mpi` adds OpenMPI for the data-parallel build (make MPI=1) and its
# [needs-mpi] tests; the plain build never needs it.
packages=(g++ make libopenblas-dev libopenblas-openmp-dev liblapacke-dev catch2 zlib1g-dev libcli11-dev nlohmann-json3-dev fortunes dataset-fashion-mnist gnuplot-nox
          util-linux)
# `install-deps.sh gemm-libs` adds the libraries `make bench-gemm-libs` compares with OpenBLAS.
[ "${1:-}" = mpi ] && packages+=(openmpi-bin libopenmpi-dev)
[ "${1:-}" = gemm-libs ] && packages+=(libblis-dev libxsmm-dev libdnnl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "normlab needs these Debian packages: ${missing[*]}"
  echo "Run as root:  apt-get update && $cmd"
  exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Update the package lists first when one of the packages is unknown to apt.
for p in "${missing[@]}"; do
  if ! apt-cache show "$p" >/dev/null 2>&1; then apt-get update -qq; break; fi
done
$cmd -qq || { apt-get update -qq && $cmd -qq; }
