#!/usr/bin/env bash
# Downloads (does not install) the Debian packages that scripts/gpu-check.sh unpacks on a
# GPU machine that has the CUDA toolkit but no OpenBLAS, no Catch2 and no package
# registry: OpenBLAS (pthread build) with its runtime libraries, LAPACKE (LAPACK's C
# interface, over OpenBLAS's LAPACK), Catch2's header, and zlib's development files.
# Run it here, where apt works; the .deb files land in
# third_party/debs/ (ignored by git) and travel with the working tree.
# Usage: scripts/fetch-gpu-debs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest=third_party/debs
packages=(libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0 liblapacke liblapacke-dev libtmglib3
          catch2 zlib1g-dev zlib1g)
mkdir -p "$dest"
cd "$dest"
rm -f ./*.deb
apt-get download "${packages[@]}"
for f in ./*%3a*.deb; do [ -e "$f" ] && mv "$f" "${f//%3a/_}"; done  # plain names: no escaped epoch colons
ls -l ./*.deb
