#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds fabricbench into build/ (or $FABRICBENCH_BUILD_DIR); extra arguments go to
# cmake's configure step; FABRICBENCH_TARGETS limits what is built. Prints the configure summary: what was found and what was left out.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${FABRICBENCH_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" | sed -n '/fabricbench .* configuration:/,/^-- $/p'
targets=()
for target in ${FABRICBENCH_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}"
