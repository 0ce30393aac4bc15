#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes sure what fabricbench needs works here, judging capabilities, not package names: a CMake
# >= 3.25, a C++20 compiler, mpicxx and mpirun, the libraries the build finds (found by CMake
# as the build finds them), a python3 that imports matplotlib. What already works is used as it
# is, wherever it came from (a venv's CMake, NVIDIA's images); only what is missing is installed
# with apt (Debian 12, Ubuntu 24.04). With nothing missing it needs no network.
#   scripts/setup.sh           what building and running need (the main job; a cluster node)
#   scripts/setup.sh --check   judge only: install nothing (add it after --tests too)
#   scripts/setup.sh --tests   also GoogleTest and what the test beds run: QEMU, busybox and perftest
#                              for the Soft-RoCE VM (scripts/rxe-vm.sh), Slurm and munge for the
#                              fake cluster, clang and libFuzzer (scripts/fuzz.sh), node_exporter,
#                              promtool and Chromium (--prom and report tests)
# Exit 0 when everything works (after installing what was missing); 2 when something is still
# missing: one line each, saying what and how to provide it. A test bed's tool that cannot be
# installed (a GPU box without package network) is named and does not fail: that bed skips visibly.
# CUDA and NCCL are never installed here: they come from NVIDIA's packages where GPUs are; the
# build leaves the NCCL backend out without them and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0 install=1
for option in "$@"; do
  case $option in
    --tests) tests=1 ;;
    --check) install=0 ;;
    *) echo "setup: unknown option '$option' (usage: scripts/setup.sh [--tests] [--check])" >&2; exit 2 ;;
  esac
done

# missing[i] is "what|package": the capability in words and the Debian package that provides it;
# beds_missing[i] the same for what only a test bed runs.
missing=() beds_missing=()
need() { missing+=("$1|$2"); }
need_for_bed() { beds_missing+=("$1|$2"); }

version_at_least() {  # have want: dotted versions
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" == "$2" ]]
}

check_tools() {
  missing=() beds_missing=()
  if command -v cmake >/dev/null; then
    cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
    version_at_least "${cmake_version:-0}" 3.25 || need "CMake >= 3.25 (found ${cmake_version:-unknown})" cmake
  else
    need "CMake >= 3.25" cmake
  fi
  command -v make >/dev/null || command -v ninja >/dev/null || need "make (or ninja)" make
  local cxx=${CXX:-c++}
  if ! command -v "$cxx" >/dev/null ||
     ! printf '#include <span>\n#include <concepts>\nint main() { std::span<int> s; return static_cast<int>(s.size()); }\n' |
       "$cxx" -std=c++20 -x c++ - -o /dev/null >/dev/null 2>&1; then
    need "a C++20 compiler ($cxx)" g++
  fi
  command -v mpicxx >/dev/null || need "mpicxx (Open MPI's compiler wrapper)" libopenmpi-dev
  command -v mpirun >/dev/null || need "mpirun" openmpi-bin
  # The first python3 on PATH (a venv's) or the system's, which Debian's package serves: fbplot
  # and the tests take whichever imports it.
  python3 -c 'import matplotlib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1 ||
    need "a python3 that imports matplotlib" python3-matplotlib
  if ((tests)); then
    local tool package
    while read -r tool package; do
      command -v "$tool" >/dev/null || need_for_bed "$tool (test beds)" "$package"
    done <<'TOOLS'
qemu-system-x86_64 qemu-system-x86
busybox busybox-static
modprobe kmod
cpio cpio
ip iproute2
ibv_devices ibverbs-utils
ib_write_bw perftest
nsenter util-linux
slurmctld slurmctld
slurmd slurmd
srun slurm-client
munged munge
clang++ clang
prometheus-node-exporter prometheus-node-exporter
promtool prometheus
chromium chromium
clang-format clang-format
TOOLS
    # torchrun, for the launch without mpirun (Debian's python3-torch: python3 -m torch.distributed.run).
    python3 -c 'import torch.distributed.run' >/dev/null 2>&1 || /usr/bin/python3 -c 'import torch.distributed.run' \
      >/dev/null 2>&1 || need_for_bed "torchrun (test beds)" python3-torch
    # libFuzzer's runtime comes apart from clang on Debian.
    if command -v clang++ >/dev/null && ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
         clang++ -fsanitize=fuzzer -x c++ - -o /dev/null >/dev/null 2>&1; then
      need_for_bed "libFuzzer (clang -fsanitize=fuzzer)" libclang-rt-dev
    fi
  fi
  # The libraries, found by CMake the way the build finds them (only once CMake itself works).
  if command -v cmake >/dev/null && version_at_least "${cmake_version:-0}" 3.25 && command -v "$cxx" >/dev/null; then
    local probe found
    probe=$(mktemp -d)
    found=$(cmake -S scripts/setup-probe -B "$probe" 2>/dev/null | sed -n 's/^-- \(FOUND\|MISSING\) /\1 /p' || true)
    rm -rf "$probe"
    grep -q "^MISSING mpi$" <<<"$found" && need "MPI for C++ (mpi.h and its libraries)" libopenmpi-dev
    grep -q "^MISSING fmt$" <<<"$found" && need "fmt" libfmt-dev
    grep -q "^MISSING cli11$" <<<"$found" && need "CLI11" libcli11-dev
    grep -q "^MISSING nlohmann_json$" <<<"$found" && need "nlohmann-json >= 3.9" nlohmann-json3-dev
    grep -q "^MISSING ibverbs$" <<<"$found" && need "libibverbs (rdma-core)" "libibverbs-dev ibverbs-providers"
    # Optional: without it only MPI launches work (the build says so); installed where apt can.
    grep -q "^MISSING gloo$" <<<"$found" && need_for_bed "Gloo (launches without mpirun: torchrun)" libgloo-dev
    if ((tests)); then
      grep -q "^MISSING gtest$" <<<"$found" && need "GoogleTest" libgtest-dev
      grep -q "^MISSING benchmark$" <<<"$found" && need "Google Benchmark" libbenchmark-dev
    fi
    [[ -n $found ]] || need "a CMake that configures a C++ project here" cmake
  fi
  return 0
}

# Where nothing is missing: 0, naming the beds' tools this machine lacks.
done_if_complete() {
  ((${#missing[@]} == 0)) || return 0
  for entry in "${beds_missing[@]}"; do
    echo "setup: not here: ${entry%%|*}: the beds that use it skip visibly (apt-get install ${entry#*|})" >&2
  done
  echo "setup: everything fabricbench needs$( ((tests)) && echo " (with the test beds$( ((${#beds_missing[@]})) && echo " that can run here"))") works here"
  exit 0
}

check_tools
((${#beds_missing[@]} == 0)) && done_if_complete

packages=()
for entry in "${missing[@]}" "${beds_missing[@]}"; do read -r -a names <<<"${entry#*|}"; packages+=("${names[@]}"); done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then command -v sudo >/dev/null && sudo_cmd=(sudo -n); fi
if ((install)) && command -v apt-get >/dev/null && { [[ $(id -u) -eq 0 ]] || ((${#sudo_cmd[@]})); }; then
  echo "setup: installing ${packages[*]}" >&2
  if "${sudo_cmd[@]}" apt-get update -qq >/dev/null 2>&1 &&
     DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; then
    check_tools
  else
    echo "setup: apt-get could not install them (no package network?)" >&2
  fi
fi
done_if_complete
for entry in "${missing[@]}"; do
  echo "setup: missing: ${entry%%|*}: install Debian/Ubuntu's ${entry#*|} (apt-get install ${entry#*|}) or put one on PATH" >&2
done
exit 2
