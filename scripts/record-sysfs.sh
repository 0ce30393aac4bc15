#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records what fb_doctor reads from this machine's sysfs and procfs into OUT, keeping the links
# (relative, as sysfs has them), so `fb_doctor --root OUT` sees this machine's layout anywhere:
# PCI devices (vendor, class, NUMA node, PCIe link width and speed, current and max, config space
# of bridges, GPUs and NICs), RDMA devices (firmware, kind) and ports (state, rate, link layer, GID
# table, error counters), network interfaces, NVIDIA driver, kernel, command line, the limits of
# this shell (memlock, open files), vm.max_map_count, hugepages, IOMMU groups, loaded
# nvidia_peermem. Run as root to get PCI config space.
# With SECONDS, the ports' error counters are read again SECONDS later into OUT.later, with the
# seconds between the two readings in OUT.later/interval_seconds: fb_doctor and fb_health read
# that second snapshot (ROOT.later) to give a rate of errors on a recorded tree.
# Only regular files are copied (never a link's target, a FIFO or a device), at most 4 KiB each,
# and links keep their relative targets: that is all fb_doctor reads from a recorded tree (a FIFO,
# socket, device, a file over 1 MiB or a link out of the tree is skipped there and named as a
# skipped-file warning).
#   scripts/record-sysfs.sh OUT [SECONDS]
set -euo pipefail
out=${1:?usage: scripts/record-sysfs.sh OUT [SECONDS]}
seconds=${2:-0}
[[ $seconds =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "record-sysfs: SECONDS must be a number of seconds, not '$seconds'" >&2; exit 2; }
mkdir -p "$out"

copy() {  # FILE [ROOT]: copies a readable regular file (sysfs and procfs attributes are) to the same path under ROOT
  local root=${2:-$out}
  [[ -f $1 && ! -L $1 && -r $1 ]] || return 0
  mkdir -p "$root$(dirname "$1")"
  head -c 4096 "$1" > "$root$1" 2>/dev/null || rm -f "$root$1"
}
link() {  # LINK: recreates a symlink with its relative target
  mkdir -p "$out$(dirname "$1")"
  ln -sfn "$(readlink "$1")" "$out$1"
}
real() { readlink -f "$1"; }
# The error counters fb_doctor judges (doctor/port_checks.cpp), of every port, under ROOT.
copy_counters() {  # ROOT
  local ib target port counter
  for ib in /sys/class/infiniband/*; do
    [[ -e $ib ]] || continue
    target=$(real "$ib")
    for port in "$target"/ports/*; do
      for counter in symbol_error link_error_recovery link_downed port_rcv_errors port_rcv_remote_physical_errors \
                     local_link_integrity_errors excessive_buffer_overrun_errors; do
        copy "$port/counters/$counter" "$1"
      done
    done
  done
}
now() { date +%s.%N; }

for f in /proc/driver/nvidia/version /proc/sys/kernel/osrelease /proc/cmdline /proc/self/limits \
         /proc/sys/vm/max_map_count /proc/meminfo /sys/kernel/mm/transparent_hugepage/enabled; do
  copy "$f"
done
[[ -d /sys/module/nvidia_peermem ]] && mkdir -p "$out/sys/module/nvidia_peermem"
for d in /sys/class/iommu/* /sys/class/net/*; do [[ -e $d ]] && mkdir -p "$out$d"; done

for dev in /sys/bus/pci/devices/*; do
  [[ -e $dev ]] || continue
  link "$dev"
  target=$(real "$dev")
  for attribute in vendor device class numa_node current_link_width max_link_width current_link_speed max_link_speed; do
    copy "$target/$attribute"
  done
  case $(head -c 64 "$target/class" 2>/dev/null) in
    0x0604*|0x0302*|0x0300*|0x0207*|0x0200*) copy "$target/config" ;;  # bridges, GPUs, IB/Ethernet NICs
  esac
done

for ib in /sys/class/infiniband/*; do
  [[ -e $ib ]] || continue
  link "$ib"
  target=$(real "$ib")
  link "$target/device"
  for attribute in fw_ver hca_type; do copy "$target/$attribute"; done
  for port in "$target"/ports/*; do
    for attribute in state phys_state rate link_layer; do copy "$port/$attribute"; done
    for gid in "$port"/gids/*; do
      index=$(basename "$gid")
      copy "$gid"
      copy "$port/gid_attrs/types/$index"
    done
  done
done
first=$(now)
copy_counters "$out"
echo "record-sysfs: $(find "$out" -type f | wc -l) files, $(find "$out" -type l | wc -l) links in $out"

if [[ $seconds != 0 ]]; then
  sleep "$seconds"
  mkdir -p "$out.later"
  second=$(now)
  copy_counters "$out.later"
  awk -v a="$first" -v b="$second" 'BEGIN { printf "%.3f\n", b - a }' > "$out.later/interval_seconds"
  echo "record-sysfs: error counters again $(cat "$out.later/interval_seconds") s later in $out.later"
fi
