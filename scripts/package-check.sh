#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The package as a cluster node gets it: cpack -G DEB in a configured build folder ($1, default
# build-release), apt-get install of the .deb, fb_all_reduce --backend mpi from /usr/bin under
# mpirun, fb_plot on its CSV, then apt-get remove. Needs root (apt); leaves the machine as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-release}
source scripts/mpi-env.sh
(cd "$build_dir" && cpack -G DEB > cpack.log 2>&1) || { tail -20 "$build_dir/cpack.log"; exit 1; }
deb=$(ls "$build_dir"/fabricbench_*_amd64.deb)
if dpkg -s fabricbench > /dev/null 2>&1; then
  echo "package-check: fabricbench is already installed here; remove it first (apt-get remove fabricbench)" >&2
  exit 2
fi
work=$(mktemp -d)
cleanup() { apt-get remove -y fabricbench > "$work/remove.log" 2>&1 || cat "$work/remove.log"; rm -rf "$work"; }
trap cleanup EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y "./$deb" > "$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
echo "package-check: installed $(basename "$deb") ($(dpkg-query -W -f '${Installed-Size}' fabricbench) KiB)"
# From / so nothing of the checkout can be picked up by accident.
(cd / && mpirun --oversubscribe -np 2 /usr/bin/fb_all_reduce --backend mpi -b 1K -e 4M -f 8 -n 20 --csv "$work/r.csv" > "$work/run.log")
rows=$(($(wc -l < "$work/r.csv") - 1))
(cd / && /usr/bin/fb_plot bandwidth "$work/r.csv" --out "$work/r" > "$work/plot.log" 2>&1) || { cat "$work/plot.log"; exit 1; }
[[ -s "$work/r.png" ]] || { echo "package-check: fb_plot wrote no picture" >&2; cat "$work/plot.log"; exit 1; }
echo "package-check: /usr/bin/fb_all_reduce --backend mpi on 2 ranks: $rows rows; /usr/bin/fb_plot: $(stat -c %s "$work/r.png") B PNG"
