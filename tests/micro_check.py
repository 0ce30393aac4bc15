#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the node-local micro-benchmarks briefly and checks their Google Benchmark JSON: every
expected benchmark is there, each either reports a positive rate or was skipped with a reason.
A program whose hardware is absent must skip visibly, never pass silently."""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# program -> (benchmark name prefixes expected, counter that must be positive when it ran)
EXPECTED = {
    "host_memcpy": (["host_memcpy/2048", "host_memcpy/1073741824"], "bytes_per_second"),
    "harness_costs": (["summarize_samples/20", "summarize_samples/1000", "csv_rows/100000", "json_rows/100000"],
                      "items_per_second"),
    "ibv_reg_mr": (["reg_host/2048", "reg_host/1073741824"], "bytes_per_second"),
    "cuda_copy": (["copy/h2d_pinned/gpu0/2048", "copy/d2h_pageable/gpu0/2048", "copy/d2d/gpu0/1073741824"], "bytes_per_second"),
    "host_register": (["host_register/2048"], "bytes_per_second"),
    "cuda_launch": (["kernel_launch", "launch_and_wait", "event_pair"], None),
    "nccl_launch": (["all_reduce/enqueue_only/8", "all_reduce/round_trip/8"], None),
}
# Hardware a skip must name, per program.
SKIP_REASONS = {"ibv_reg_mr": "RDMA device", "cuda_copy": "GPU", "host_register": "GPU", "cuda_launch": "GPU",
                "nccl_launch": "GPU"}


def check(binary, program, min_time, require_run):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        result = subprocess.run([str(binary), f"--benchmark_min_time={min_time}", f"--benchmark_out={out}",
                                 "--benchmark_out_format=json"], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            raise SystemExit(f"FAIL: {program}: exit {result.returncode}\n{result.stderr}")
        document = json.loads(out.read_text())
    names, counter = EXPECTED[program]
    by_name = {b["name"]: b for b in document["benchmarks"]}
    ran = skipped = 0
    for prefix in names:
        matches = [b for n, b in by_name.items() if n == prefix or n.startswith(prefix + "/")]
        if not matches:
            raise SystemExit(f"FAIL: {program}: no benchmark {prefix} in {sorted(by_name)[:8]}...")
        for bench in matches:
            if bench.get("error_occurred"):
                reason = bench.get("error_message", "")
                if require_run or SKIP_REASONS.get(program, "\0") not in reason:
                    raise SystemExit(f"FAIL: {program}: {bench['name']} failed: {reason}")
                skipped += 1
            else:
                if counter and not bench.get(counter, 0) > 0:
                    raise SystemExit(f"FAIL: {program}: {bench['name']} has no positive {counter}")
                if not bench.get("real_time", 0) > 0:
                    raise SystemExit(f"FAIL: {program}: {bench['name']} has no time")
                ran += 1
    line = f"{program}: {len(document['benchmarks'])} benchmarks, checked {ran} ran"
    if skipped:
        first = next(b for b in document["benchmarks"] if b.get("error_occurred"))
        line += f", {skipped} skipped: {first['error_message']}"
    print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--min-time", default="0.01")
    parser.add_argument("--require-run", action="store_true", help="a skipped benchmark fails (hardware is present)")
    parser.add_argument("programs", nargs="+")
    options = parser.parse_args()
    for program in options.programs:
        check(Path(options.bin) / f"fb_micro_{program}", program, options.min_time, options.require_run)
    # Google Benchmark's own parser takes a NaN time (a billion iterations a size) and aborts on a
    # negative repetition count: fabricbench checks them first, one line and exit 2.
    binary = Path(options.bin) / f"fb_micro_{options.programs[0]}"
    for flag in ("--benchmark_min_time=nan", "--benchmark_repetitions=-3", "--benchmark_min_warmup_time=inf"):
        result = subprocess.run([str(binary), flag], capture_output=True, text=True, timeout=60)
        lines = result.stderr.strip().splitlines()
        if result.returncode != 2 or len(lines) != 1 or flag.split("=")[0] not in lines[0]:
            sys.exit(f"{binary.name} {flag}: exit {result.returncode}, {lines}")
        print(f"{binary.name} {flag}: exit 2, {lines[0]}")


if __name__ == "__main__":
    sys.exit(main())
