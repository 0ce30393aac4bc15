#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Derives the trees with planted faults (README.md) from h200-device, the tree recorded on the
# nvidia-h200 machine. It adds what that recording predates or the machine lacks: the GPU's PCIe
# link attributes, a ConnectX-7 (mlx5_0) with one NDR port, its error counters and firmware,
# vm.max_map_count and the hugepage lines of /proc/meminfo; and a second counter snapshot
# (ROOT.later) 5 s after the first. Then one fault per tree. Run it from anywhere; it rewrites the
# derived trees beside it.
#   tests/data/doctor/derive-planted.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gen5="32.0 GT/s PCIe"
counters=(symbol_error link_error_recovery link_downed port_rcv_errors port_rcv_remote_physical_errors
          local_link_integrity_errors excessive_buffer_overrun_errors)

put() {  # FILE VALUE
  mkdir -p "$(dirname "$1")"
  printf '%s\n' "$2" > "$1"
}
link_attributes() {  # DEVICE WIDTH MAX_WIDTH SPEED MAX_SPEED
  put "$1/current_link_width" "$2"; put "$1/max_link_width" "$3"
  put "$1/current_link_speed" "$4"; put "$1/max_link_speed" "$5"
}
counters_at() {  # ROOT VALUES...: the port's error counters, in the order of `counters`
  local root=$1 i=0
  shift
  for value in "$@"; do
    put "$root/sys/class/infiniband/mlx5_0/ports/1/counters/${counters[$i]}" "$value"
    i=$((i + 1))
  done
}

healthy() {  # NAME: h200-device with the additions, nothing wrong
  local out=$here/$1
  rm -rf "$out" "$out.later"
  cp -a "$here/h200-device" "$out"
  local gpu=$out/sys/devices/pci0000:00/0000:00:06.0 hca=$out/sys/devices/pci0000:00/0000:00:07.0
  link_attributes "$gpu" 16 16 "2.5 GT/s PCIe" "$gen5"  # an idle H200: full width, lowest speed
  put "$hca/vendor" 0x15b3; put "$hca/device" 0x1021; put "$hca/class" 0x020700; put "$hca/numa_node" -1
  link_attributes "$hca" 16 16 "$gen5" "$gen5"
  ln -s ../../../devices/pci0000:00/0000:00:07.0 "$out/sys/bus/pci/devices/0000:00:07.0"
  mkdir -p "$out/sys/class/infiniband" "$hca/infiniband/mlx5_0"
  ln -s ../../devices/pci0000:00/0000:00:07.0/infiniband/mlx5_0 "$out/sys/class/infiniband/mlx5_0"
  ln -s ../../../0000:00:07.0 "$hca/infiniband/mlx5_0/device"
  local ib=$hca/infiniband/mlx5_0
  put "$ib/fw_ver" 28.39.1002; put "$ib/hca_type" MT4129
  put "$ib/ports/1/state" "4: ACTIVE"; put "$ib/ports/1/phys_state" "5: LinkUp"
  put "$ib/ports/1/rate" "400 Gb/sec (4X NDR)"; put "$ib/ports/1/link_layer" InfiniBand
  counters_at "$out" 0 0 0 0 0 0 0
  counters_at "$out.later" 0 0 0 0 0 0 0
  put "$out.later/interval_seconds" 5.000
  put "$out/proc/sys/vm/max_map_count" 1048576
  printf 'HugePages_Total:       0\nHugePages_Free:        0\nHugePages_Rsvd:        0\nHugePages_Surp:        0\nHugepagesize:       2048 kB\n' \
    > "$out/proc/meminfo"
  put "$out/sys/kernel/mm/transparent_hugepage/enabled" "always [madvise] never"
}

healthy h200-hca
healthy h200-hca-gpu-x8
link_attributes "$here/h200-hca-gpu-x8/sys/devices/pci0000:00/0000:00:06.0" 8 16 "2.5 GT/s PCIe" "$gen5"
healthy h200-hca-gen3
link_attributes "$here/h200-hca-gen3/sys/devices/pci0000:00/0000:00:07.0" 16 16 "8.0 GT/s PCIe" "$gen5"
healthy h200-hca-errors
counters_at "$here/h200-hca-errors.later" 37 0 0 4 0 0 0
healthy h200-hca-low-map-count
put "$here/h200-hca-low-map-count/proc/sys/vm/max_map_count" 65530
echo "derive-planted: $(cd "$here" && ls -d h200-hca*)"
