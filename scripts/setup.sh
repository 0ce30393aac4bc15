#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs, with apt, whatever fabricbench needs that is missing (Debian 12, Ubuntu 24.04).
# Idempotent: installs nothing when everything is there.
#   scripts/setup.sh           what building and running need (the main job; a cluster node)
#   scripts/setup.sh --tests   also what only the tests need: QEMU, busybox and perftest for the
#                              Soft-RoCE VM (scripts/rxe-vm.sh) that gives the verbs tests a real
#                              RDMA device; Slurm and munge for the fake cluster
#                              (scripts/fake-cluster.sh); clang and libFuzzer for scripts/fuzz.sh;
#                              node_exporter, promtool and Chromium for the --prom and report tests
# CUDA and NCCL are not apt-installed here: they come from NVIDIA's packages where GPUs are; the
# build leaves the NCCL backend out without them.
set -euo pipefail

packages=(
  cmake g++ make git pkg-config
  openmpi-bin libopenmpi-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libbenchmark-dev
  libibverbs-dev ibverbs-providers
  python3 python3-matplotlib
)
case ${1:-} in
  --tests)
    packages+=(
      qemu-system-x86 busybox-static kmod cpio iproute2 ibverbs-utils perftest
      util-linux slurmctld slurmd slurm-client munge
      clang libclang-rt-dev
      prometheus-node-exporter prometheus chromium
    ) ;;
  "") ;;
  *) echo "setup: unknown option '$1' (usage: scripts/setup.sh [--tests])" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
