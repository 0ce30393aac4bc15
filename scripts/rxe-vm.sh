#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a command inside a QEMU VM that has a real RDMA device: Debian's kernel with Soft-RoCE
# (rdma_rxe) on the VM's loopback, as rxe0. "Try the verbs benchmarks without RDMA hardware", and
# how the project's `rdma` tests reach a real kernel RDMA stack on machines whose kernel has none.
#
#   scripts/rxe-vm.sh [--timeout SECONDS] [--mem 3G] -- COMMAND [ARGS...]
#
# The VM sees the host's / read-only (it runs the binaries just built) and this repository
# read-write at the same path; the guest's /tmp, /var/tmp, /run and /root are its own tmpfs, so a
# folder named in COMMAND that lives there (cmake -B /tmp/build) is shared read-write too; COMMAND runs in the repository root with `ulimit -l unlimited` and
# Open MPI allowed as root. Its exit code is this script's. The VM has no network card: all RDMA
# traffic stays on its own loopback. Kernel and initramfs are cached in build/rxe-vm/.
set -euo pipefail

timeout_seconds=600
memory=3G
while [[ $# -gt 0 ]]; do
  case $1 in
    --timeout) timeout_seconds=$2; shift 2 ;;
    --mem) memory=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "rxe-vm: unknown option '$1' (usage: scripts/rxe-vm.sh [--timeout S] -- COMMAND...)" >&2; exit 2 ;;
  esac
done
if [[ $# -eq 0 ]]; then
  echo "rxe-vm: no command given (usage: scripts/rxe-vm.sh [--timeout S] -- COMMAND...)" >&2
  exit 2
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
vm_dir=$repo/build/rxe-vm
# Folders of COMMAND that the guest's tmpfs mounts would hide (a build under /tmp): shared as well.
shares=()
for argument in "$@"; do
  [[ $argument == /* && -e $argument ]] || continue
  folder=$argument
  [[ -d $folder ]] || folder=$(dirname "$folder")
  folder=$(cd "$folder" && pwd -P)
  case $folder in
    "$repo" | "$repo"/*) continue ;;
    /tmp/* | /var/tmp/* | /run/* | /root/* | /dev/shm/*) ;;
    *) continue ;;
  esac
  if [[ $folder == *[,[:space:]]* ]]; then
    echo "rxe-vm: cannot share '$folder' with the VM (a comma or space in its path): move it, or build in the repository" >&2
    exit 2
  fi
  shares+=("$folder")
done
if [[ ${#shares[@]} -gt 4 ]]; then
  echo "rxe-vm: the command names ${#shares[@]} folders under /tmp, /run or /root; at most 4 can be shared" >&2
  exit 2
fi
mkdir -p "$vm_dir"
for tool in qemu-system-x86_64 busybox modprobe depmod cpio rdma; do
  command -v "$tool" >/dev/null || { echo "rxe-vm: '$tool' is missing: run scripts/setup.sh" >&2; exit 2; }
done

# 1. Debian's kernel (the plain flavour: -cloud has neither rdma_rxe nor 9p), unpacked, not installed.
resolve_kernel() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
kernel_package=$(resolve_kernel)
if [[ -z $kernel_package ]]; then
  apt-get update -qq >/dev/null 2>&1 || true  # a machine whose package lists were never fetched
  kernel_package=$(resolve_kernel)
fi
if [[ -z $kernel_package ]]; then
  echo "rxe-vm: cannot resolve linux-image-amd64 (run apt-get update)" >&2
  exit 2
fi
kernel_version=${kernel_package#linux-image-}
kernel_root=$vm_dir/kernel-$kernel_version
if [[ ! -f $kernel_root/boot/vmlinuz-$kernel_version ]]; then
  echo "rxe-vm: fetching $kernel_package"
  rm -rf "$kernel_root" "$vm_dir"/*.deb
  (cd "$vm_dir" && apt-get download -q "$kernel_package" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  dpkg -x "$vm_dir"/"$kernel_package"_*.deb "$kernel_root"
  depmod -b "$kernel_root" "$kernel_version"
  rm -f "$vm_dir"/*.deb
fi

# 2. Initramfs: busybox, the modules in dependency order, and our init.
initramfs=$vm_dir/initramfs-$kernel_version.cpio.gz
if [[ ! -f $initramfs || $0 -nt $initramfs ]]; then
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  mkdir -p "$staging"/{bin,dev,proc,sys,newroot,lib/modules}
  cp "$(command -v busybox)" "$staging/bin/busybox"
  module_dir=$kernel_root/lib/modules/$kernel_version
  # crc32 must be in before `rdma link add`: nothing in the VM would load it on demand.
  for module in virtio_pci 9pnet_virtio 9p crc32_generic crc32-pclmul rdma_rxe; do
    modprobe -d "$kernel_root" -S "$kernel_version" --show-depends "$module"
  done | awk '$1 == "insmod" {sub(/.*\/kernel\//, "kernel/", $2); print $2}' | awk '!seen[$0]++' > "$staging/modules.order"
  while read -r module; do cp "$module_dir/$module" "$staging/lib/modules/"; done < "$staging/modules.order"
  sed -i 's|.*/||' "$staging/modules.order"
  cat > "$staging/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for module in $(cat /modules.order); do
  # crc32-pclmul needs a CPU with PCLMUL (qemu64 has none); crc32_generic serves instead.
  insmod /lib/modules/$module 2>/dev/null || [ "$module" = crc32-pclmul.ko ] || echo "rxe-vm: insmod $module failed"
done
work=$(sed -n 's/.* fb_work=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro hostroot /newroot
for d in tmp var/tmp run root dev/shm; do mount -t tmpfs tmpfs "/newroot/$d" 2>/dev/null; done
# After the tmpfs mounts, so a repository under /tmp (a CI clone) is not hidden by them.
mkdir -p "/newroot$work" 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 work "/newroot$work"
i=0
for folder in $(sed -n 's/.* fb_shares=\([^ ]*\).*/\1/p' /proc/cmdline | tr ',' ' '); do
  mkdir -p "/newroot$folder" 2>/dev/null
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 "share$i" "/newroot$folder" || echo "rxe-vm: sharing $folder failed"
  i=$((i + 1))
done
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
hostname rxe-vm  # Open MPI refuses the kernel default "(none)"
ip link set lo up
ulimit -l unlimited
status=1
if chroot /newroot rdma link add rxe0 type rxe netdev lo; then
  chroot /newroot /bin/sh -c "cd '$work' && exec /bin/bash '$work/build/rxe-vm/job.sh'"
  status=$?
else
  echo "rxe-vm: rdma link add rxe0 failed"
fi
echo "$status" > "/newroot$work/build/rxe-vm/exit-code"
sync
poweroff -f
INIT
  chmod +x "$staging/init"
  (cd "$staging" && find . | cpio -o -H newc --quiet | gzip -1) > "$initramfs.tmp"
  mv "$initramfs.tmp" "$initramfs"
  rm -rf "$staging"
  trap - EXIT
fi

# 3. The job, and the VM.
{
  echo "set -u"
  echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo"
  echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
  printf '%q ' "$@"
  echo
} > "$vm_dir/job.sh"
rm -f "$vm_dir/exit-code"

share_devices=()
share_list=""
for i in "${!shares[@]}"; do
  share_devices+=(-fsdev "local,id=share$i,path=${shares[$i]},security_model=none,multidevs=remap"
                  -device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
  share_list+="${share_list:+,}${shares[$i]}"
done
echo "rxe-vm: booting $kernel_version (timeout ${timeout_seconds} s): $*${share_list:+ (also sharing $share_list)}"
timeout --kill-after=10 "$timeout_seconds" qemu-system-x86_64 \
  -machine pc -accel tcg,thread=multi,tb-size=256 -cpu qemu64 -m "$memory" -smp 2 \
  -nographic -nodefaults -no-reboot -nic none -serial mon:stdio \
  -kernel "$kernel_root/boot/vmlinuz-$kernel_version" -initrd "$initramfs" \
  -append "console=ttyS0 panic=-1 loglevel=4 fb_work=$repo${share_list:+ fb_shares=$share_list}" \
  -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  -fsdev local,id=work,path="$repo",security_model=none,multidevs=remap \
  -device virtio-9p-pci,fsdev=work,mount_tag=work "${share_devices[@]}" </dev/null || true

if [[ ! -f $vm_dir/exit-code ]]; then
  echo "rxe-vm: the VM ended without the job's exit code (timeout after ${timeout_seconds} s, or a guest crash)" >&2
  exit 3
fi
exit "$(cat "$vm_dir/exit-code")"
