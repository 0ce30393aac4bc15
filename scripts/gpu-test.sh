#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fabricbench for the GPUs of this node and runs the unit tests and the `gpu` tests (NCCL on
# real GPUs). Installs nothing: GPU nodes often have no package access; run scripts/setup.sh first
# where they do. CUDA_ARCH picks the architectures (default 90: H100/H200).
set -euo pipefail
cd "$(dirname "$0")/.."
FABRICBENCH_BUILD_DIR=${FABRICBENCH_BUILD_DIR:-build-gpu} scripts/build.sh \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DFABRICBENCH_WERROR=ON
source scripts/mpi-env.sh
cd "${FABRICBENCH_BUILD_DIR:-build-gpu}"
ctest --output-on-failure -L 'unit|gpu'
