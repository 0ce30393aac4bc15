#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Output tests: the console table people read and parse, pinned line by line.

Runs a real executable and matches its stdout against an ordered list of patterns, in the way
google/benchmark's output tests do: each pattern must match the next line, except a pattern
marked `repeat` that matches one or more consecutive lines. A reporter change that moves a
column, drops a unit line or reorders the summary fails here, not in a user's parser.

  tests/output_check.py --bin build/bin --mpirun mpirun collective
  tests/output_check.py --bin build/bin --mpirun mpirun verbs DEVICE    (inside the Soft-RoCE VM)
"""
import argparse
import os
import re
import subprocess
import sys

F = r"-?\d+\.\d+"  # a fixed-point number as the tables print them
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def collective_table(program, title_tail, rows, root="-", redop="sum", wrong="0", wrong_line="0 OK"):
    """nccl-tests' layout: out-of-place and in-place of one size on one line, 13 fields."""
    sizes = [rf"^\s+{size}\s+{count}\s+float\s+{redop}\s+{root}\s+{F}\s+{F}\s+{F}\s+{wrong}\s+{F}\s+{F}\s+{F}\s+{wrong}"
             rf"\s+{F}\s*$" for size, count in rows]
    return [
        rf"^# {program} \(mpi backend, 2 rank\(s\) on 1 host\(s\), rank reduction max, {title_tail}\)$",
        r"^#   host \S+: 2 rank\(s\)$",
        r"^#$",
        r"^#\s+out-of-place\s+in-place\s*$",
        r"^#\s+size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw\s+#wrong\s+time\s+algbw\s+busbw\s+#wrong"
        r"\s+noise\s*$",
        r"^#\s+\(B\)\s+\(elements\)\s+\(us\)\s+\(GB/s\)\s+\(GB/s\)\s+\(us\)\s+\(GB/s\)\s+\(GB/s\)\s+\(%\)\s*$",
        *sizes,
        rf"^# Wrong elements        : {wrong_line}$",
        rf"^# Avg bus bandwidth     : {F} GB/s \(nccl-tests' figure: every size weighs the same\)$",
        rf"^# Peak bus bandwidth    : {F} GB/s at \d+ B$",
        rf"^# Plateau bus bandwidth : {F} GB/s from \d+ B up; 50 % of peak at \d+ B, 90 % at \d+ B \(.+\)$",
        rf"^# Smallest-size latency : {F} us at \d+ B$",
        rf"^# Memory \(rank 0\)       : host peak RSS {F} MiB$",
        rf"^# Rows {2 * len(rows)}, wall time {F} s$",
        r"^#$",
    ]


def verbs_bw_table(program, word, sizes, verdict="NOMINAL"):
    return [
        rf"^# {program}: {word} 1 pair\(s\) \(0-1\), \S+ port 1 GID \d+, 1 QP\(s\), tx depth \d+, unidirectional, "
        r"host memory$",
        r"^#\s+pair\s+#bytes\s+#iterations\s+BW peak\s+BW average\s+MsgRate\s+line\s+#wrong$",
        r"^#\s+\(Gb/s\)\s+\(Gb/s\)\s+\(Mpps\)\s+\(%\)\s*$",
        *[rf"^\s+0\s+{size}\s+\d+\s+{F}\s+{F}\s+{F}\s+(-|{F})\s+0$" for size in sizes],
        rf"^# Verdict \(line rate\) : {verdict}: .+$",
        r"^# Wrong bytes           : 0 OK$",
        rf"^# Rows {len(sizes)}, wall time {F} s$",
        r"^#$",
    ]


def verbs_lat_table(program, word, sizes):
    return [
        rf"^# {program}: {word} 1 pair\(s\) \(0-1\), .+$",
        r"^#\s+pair\s+#bytes\s+#iterations\s+t_min\s+t_max\s+t_typical\s+t_avg\s+t_stdev\s+99%\s+99\.9%\s+#wrong$",
        r"^#(\s+\(usec\)){7}\s*$",
        *[rf"^\s+0\s+{size}\s+\d+(\s+{F}){{7}}\s+0$" for size in sizes],
        r"^# Wrong bytes           : 0 OK$",
        rf"^# Rows {len(sizes)}, wall time {F} s$",
        r"^#$",
    ]


# Printed only when the ranks waited for a CPU (a busy machine): its shape is checked where it shows.
CONTENTION = (rf"^# CPU contention        : rank \d+ waited for a CPU {F} % of the time measured, the hypervisor "
              rf"took {F} %: times may read up to {F}x slow from that alone$")


def match(lines, patterns, name):
    for line in lines:
        if line.startswith("# CPU contention") and not re.search(CONTENTION, line):
            raise SystemExit(f"FAIL {name}: contention line out of shape:\n  {line!r}")
    lines = [line for line in lines if not line.startswith("# CPU contention")]
    for i, pattern in enumerate(patterns):
        if i >= len(lines):
            raise SystemExit(f"FAIL {name}: output ended before line {i + 1}, expected /{pattern}/")
        if not re.search(pattern, lines[i]):
            raise SystemExit(f"FAIL {name}: line {i + 1} is\n  {lines[i]!r}\nexpected /{pattern}/")
    if len(lines) != len(patterns):
        raise SystemExit(f"FAIL {name}: {len(lines) - len(patterns)} unexpected line(s) after the table: {lines[len(patterns):]}")
    print(f"ok: {name}: {len(lines)} lines in shape")


def run(args, mpirun, program, flags, np=2):
    cmd = [mpirun, "-np", str(np), os.path.join(args.bin, program)] + flags
    result = subprocess.run(cmd, env=dict(os.environ, **MPI_ENV), capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"FAIL {program}: exit {result.returncode}: {result.stderr[-800:]}")
    return result.stdout.splitlines()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("family", choices=["collective", "verbs"])
    parser.add_argument("device", nargs="?", default="rxe0")
    args = parser.parse_args()
    if args.family == "collective":
        sweep = ["-b", "8", "-e", "512", "-f", "4"]
        rows = [(8, 2), (32, 8), (128, 32), (512, 128)]
        match(run(args, args.mpirun, "fb_all_reduce", sweep), collective_table("fb_all_reduce", "20 samples", rows),
              "fb_all_reduce")
        match(run(args, args.mpirun, "fb_broadcast", sweep + ["-r", "1", "-n", "5"]),
              collective_table("fb_broadcast", "5 samples", rows, root="1", redop="none"), "fb_broadcast -r 1")
        unchecked = collective_table("fb_all_reduce", "20 samples", rows, wrong="N/A",
                                     wrong_line=r"not checked \(-c 0\)")
        match(run(args, args.mpirun, "fb_all_reduce", sweep + ["-c", "0"]), unchecked, "fb_all_reduce -c 0")
    else:
        dev = ["-d", args.device]
        match(run(args, args.mpirun, "fb_rdma_write_bw", dev + ["--minbytes", "1K", "--maxbytes", "4K", "--stepfactor",
                                                                "4", "-n", "256"]),
              verbs_bw_table("fb_rdma_write_bw", "write", [1024, 4096]), "fb_rdma_write_bw")
        match(run(args, args.mpirun, "fb_rdma_atomic_bw", dev + ["-A", "CMP_AND_SWAP", "-n", "512"]),
              verbs_bw_table("fb_rdma_atomic_bw", "compare_and_swap", [8]), "fb_rdma_atomic_bw")
        match(run(args, args.mpirun, "fb_rdma_send_lat", dev + ["-n", "100"]),
              verbs_lat_table("fb_rdma_send_lat", "send", [2]), "fb_rdma_send_lat")


if __name__ == "__main__":
    main()
