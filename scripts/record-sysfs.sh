#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records what fb_doctor reads from this machine's sysfs and procfs into OUT, keeping the links
# (relative, as sysfs has them), so `fb_doctor --root OUT` sees this machine's layout anywhere:
# PCI devices (vendor, class, NUMA node, config space of bridges, GPUs and NICs), RDMA devices and
# ports (state, rate, link layer, GID table), network interfaces, NVIDIA driver, kernel, command
# line, memlock limit, IOMMU groups, loaded nvidia_peermem. Run as root to get PCI config space.
# Only regular files are copied, at most 4 KiB each, and links keep their relative targets: that
# is all fb_doctor reads from a recorded tree (a FIFO, socket, device, a file over 1 MiB or a link
# out of the tree is skipped there and named as a skipped-file warning).
#   scripts/record-sysfs.sh OUT
set -euo pipefail
out=${1:?usage: scripts/record-sysfs.sh OUT}
mkdir -p "$out"

copy() {  # FILE: copies a readable regular file (sysfs and procfs attributes are) to the same path under OUT
  [[ -f $1 && -r $1 ]] || return 0
  mkdir -p "$out$(dirname "$1")"
  head -c 4096 "$1" > "$out$1" 2>/dev/null || rm -f "$out$1"
}
link() {  # LINK: recreates a symlink with its relative target
  mkdir -p "$out$(dirname "$1")"
  ln -sfn "$(readlink "$1")" "$out$1"
}
real() { readlink -f "$1"; }

for f in /proc/driver/nvidia/version /proc/sys/kernel/osrelease /proc/cmdline /proc/self/limits; do copy "$f"; done
[[ -d /sys/module/nvidia_peermem ]] && mkdir -p "$out/sys/module/nvidia_peermem"
for d in /sys/class/iommu/* /sys/class/net/*; do [[ -e $d ]] && mkdir -p "$out$d"; done

for dev in /sys/bus/pci/devices/*; do
  [[ -e $dev ]] || continue
  link "$dev"
  target=$(real "$dev")
  for attribute in vendor device class numa_node; do copy "$target/$attribute"; done
  case $(head -c 64 "$target/class" 2>/dev/null) in
    0x0604*|0x0302*|0x0300*|0x0207*|0x0200*) copy "$target/config" ;;  # bridges, GPUs, IB/Ethernet NICs
  esac
done

for ib in /sys/class/infiniband/*; do
  [[ -e $ib ]] || continue
  link "$ib"
  target=$(real "$ib")
  link "$target/device"
  for port in "$target"/ports/*; do
    for attribute in state phys_state rate link_layer; do copy "$port/$attribute"; done
    for gid in "$port"/gids/*; do
      index=$(basename "$gid")
      copy "$gid"
      copy "$port/gid_attrs/types/$index"
    done
  done
done
echo "record-sysfs: $(find "$out" -type f | wc -l) files, $(find "$out" -type l | wc -l) links in $out"
