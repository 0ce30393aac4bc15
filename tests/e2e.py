#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests: the real fb_* executables under mpirun, checked through the files they write.

Each subcommand is one ctest case (see tests/CMakeLists.txt). Exit 0 = pass; a failure prints
what was expected and what was seen.
"""
import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The collectives come from CMake's one list (--collectives); what each must do is this file's own
# expectation, written independently of the descriptors it checks.
COLLECTIVES = []
REDUCING = {"all_reduce", "reduce_scatter", "reduce"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}
GATHER_TYPE = {"all_gather", "reduce_scatter", "alltoall", "gather", "scatter"}
ELEMENT_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float": 4, "double": 8}

# Open MPI on one machine, as root, over loopback only (never the machine's own eth0 address).
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}


class Failure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Runner:
    def __init__(self, bin_dir, mpirun):
        self.bin_dir = Path(bin_dir)
        self.mpirun = mpirun
        self.env = dict(os.environ, **MPI_ENV)

    def command(self, collective, ranks, args):
        return [self.mpirun, "-np", str(ranks), str(self.bin_dir / f"fb_{collective}")] + list(args)

    def run(self, collective, ranks, args, timeout=300):
        cmd = self.command(collective, ranks, args)
        result = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        return result

    def run_alone(self, collective, args, timeout=300):
        """Without mpirun: one process (MPI singleton), as nccl-tests users run -g N on one node."""
        cmd = [str(self.bin_dir / f"fb_{collective}")] + list(args)
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def run_shared_gpu(self, collective, ranks, args, timeout=300):
        """Several ranks on one GPU: NCCL_HOSTID per rank makes NCCL take each for its own host
        (NET/Socket between them), so one GPU exercises the multi-rank paths."""
        wrapper = ["bash", "-c", 'NCCL_HOSTID=fakehost$OMPI_COMM_WORLD_RANK exec "$0" "$@"']
        cmd = [self.mpirun, "-np", str(ranks)] + wrapper + [str(self.bin_dir / f"fb_{collective}")] + list(args)
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def start(self, collective, ranks, args):
        return subprocess.Popen(self.command(collective, ranks, args), env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    expect(len(rows) >= 1, f"{path}: no header")
    header = rows[0]
    for number, row in enumerate(rows[1:], start=2):
        expect(len(row) == len(header), f"{path}:{number}: {len(row)} fields, header has {len(header)}")
    return [dict(zip(header, row)) for row in rows[1:]]


def sweep(minimum, maximum, factor):
    sizes, size = [], minimum
    while size <= maximum:
        sizes.append(size)
        size = int(size * factor)
    return sizes


def busbw_factor(collective, n):
    if collective == "all_reduce":
        return 2.0 * (n - 1) / n
    if collective in GATHER_TYPE:
        return (n - 1) / n
    return 1.0


def expected_count(collective, requested, element, n):
    return requested // element // n if collective in GATHER_TYPE else requested // element


def distinct_sizes(collective, sizes, element, n):
    """The requested sizes less those whose count repeats the one before (measured once)."""
    kept, counts = [], []
    for size in sizes:
        count = expected_count(collective, size, element, n)
        if not counts or counts[-1] != count:
            kept.append(size)
            counts.append(count)
    return kept


def check_rows(rows, collective, n, sizes, dtype, unchecked_in_place=False):
    element = ELEMENT_BYTES[dtype]
    sizes = distinct_sizes(collective, sizes, element, n)
    expect(len(rows) == 2 * len(sizes), f"{len(rows)} rows, expected {2 * len(sizes)} (distinct counts x placements)")
    for i, row in enumerate(rows):
        where = f"{collective} np={n} row {i} ({row['size_bytes']} B {row['placement']})"
        requested = sizes[i // 2]
        expect(row["placement"] == ("out-of-place" if i % 2 == 0 else "in-place"), f"{where}: placement order")
        unchecked = unchecked_in_place and row["placement"] == "in-place"  # timed, result undefined: -1
        expect(int(row["wrong"]) == (-1 if unchecked else 0), f"{where}: #wrong = {row['wrong']}")
        expect(int(row["ranks"]) == n, f"{where}: ranks = {row['ranks']}")
        count = expected_count(collective, requested, element, n)
        expect(int(row["count"]) == count, f"{where}: count {row['count']}, expected {count}")
        moved = count * element * (n if collective in GATHER_TYPE else 1)
        expect(int(row["size_bytes"]) == moved, f"{where}: size_bytes {row['size_bytes']}, expected {moved}")
        expect(float(row["busbw_factor"]) == busbw_factor(collective, n), f"{where}: busbw factor")
        algbw, busbw = float(row["algbw_mean_bytes_per_s"]), float(row["busbw_mean_bytes_per_s"])
        expect(abs(busbw - algbw * busbw_factor(collective, n)) <= 1e-9 * max(algbw, 1.0),
               f"{where}: busbw {busbw} != algbw {algbw} x {busbw_factor(collective, n)}")
        mean = float(row["time_mean_s"])
        expect(mean > 0, f"{where}: time {mean}")
        if count > 0:
            expect(abs(algbw - moved / mean) <= 1e-6 * algbw, f"{where}: algbw {algbw} != {moved} B / {mean} s")
        expect(float(row["time_min_s"]) <= float(row["time_median_s"]) <= float(row["time_max_s"]),
               f"{where}: min <= median <= max violated")
        expect(int(row["samples"]) == 4, f"{where}: samples {row['samples']}")


def test_correctness(runner, collective):
    """Every rank count 1..4, sizes not divisible by the rank count, int32 and double."""
    sizes = sweep(4, 300000, 3.3)
    for n in (1, 2, 3, 4):
        for dtype in ("int32", "double"):
            with tempfile.TemporaryDirectory() as tmp:
                csv_path, json_path = f"{tmp}/run.csv", f"{tmp}/run.json"
                args = ["-b", "4", "-e", "300000", "-f", "3.3", "-n", "4", "-w", "1", "-d", dtype,
                        "--csv", csv_path, "--json", json_path, "--tag", "suite=e2e"]
                if collective in ROOTED:
                    args += ["-r", str(n - 1)]
                if collective in REDUCING:
                    args += ["-o", "sum" if dtype == "double" else "max"]
                result = runner.run(collective, n, args)
                expect(result.returncode == 0,
                       f"{collective} np={n} {dtype}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
                rows = read_csv(csv_path)
                check_rows(rows, collective, n, sizes, dtype)
                for row in rows:
                    expect(row["tags"] == "suite=e2e", f"tags column {row['tags']!r}")
                    expect(int(row["root"]) == (n - 1 if collective in ROOTED else -1), f"root {row['root']}")
                with open(json_path) as f:
                    document = json.load(f)
                expect(document["complete"] is True, "JSON not marked complete")
                expect(len(document["rows"]) == len(rows), "JSON and CSV row counts differ")
                context = document["context"]
                expect(context["ranks"] == n and sum(context["hosts"].values()) == n, f"context ranks/hosts {context}")
                expect(context["control_plane"] == "MPI", f"control plane under mpirun: {context['control_plane']}")
                expect(context["environment"].get("OMPI_MCA_btl_tcp_if_include") == "lo", "OMPI_* not captured")
                expect("PATH" not in context["environment"], "whole environment captured")
                expect(not Path(csv_path + ".partial").exists(), "partial CSV left behind")
                expect("# Wrong elements        : 0 OK" in result.stdout, "table footer missing")
    # nccl-tests' cold windows (every timed call in the next window of buffers sized for -e): the
    # check runs in the first window after fresh data, so it must still find every element right.
    with tempfile.TemporaryDirectory() as tmp:
        args = ["-b", "4", "-e", "300000", "-f", "3.3", "-n", "4", "-w", "1", "-d", "int32", "--cache", "cold",
                "--csv", f"{tmp}/cold.csv"]
        if collective in REDUCING:
            args += ["-o", "sum"]
        result = runner.run(collective, 3, args)
        expect(result.returncode == 0, f"{collective} --cache cold: exit {result.returncode}\n{result.stderr}")
        rows = read_csv(f"{tmp}/cold.csv")
        check_rows(rows, collective, 3, sizes, "int32")
        expect(all(r["settings"] == "cache=cold" and r["call"].startswith("MPI_") for r in rows),
               f"{collective} --cache cold: settings/call {[(r['settings'], r['call']) for r in rows][:2]}")
    # Started by hand: no launcher, so no MPI_Init until the MPI data plane asks for it (alone).
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run_alone(collective, ["--backend", "mpi", "-b", "4", "-e", "300000", "-f", "3.3", "-n", "4",
                                               "-w", "1", "-d", "int32", "--json", f"{tmp}/alone.json",
                                               "--csv", f"{tmp}/alone.csv"])
        expect(result.returncode == 0, f"{collective} alone: exit {result.returncode}\n{result.stderr}")
        with open(f"{tmp}/alone.json") as f:
            document = json.load(f)
        check_rows(read_csv(f"{tmp}/alone.csv"), collective, 1, sizes, "int32")
        expect(document["context"]["control_plane"] == "none (one process, no launcher)",
               f"{collective} alone: control plane {document['context']['control_plane']}")
        expect(document["context"]["mpi_library"].startswith("Open MPI"), "alone: MPI library not named")
    print(f"{collective}: np 1-4, int32 and double, {len(sizes)} sizes x 2 placements: all correct; "
          "np 3 with --cache cold too; alone (no launcher, MPI started late) too")


def test_types(runner, _):
    """Every MPI type and op on 3 ranks."""
    for collective in ("all_reduce", "reduce_scatter", "reduce"):
        with tempfile.TemporaryDirectory() as tmp:
            result = runner.run(collective, 3, ["-b", "64", "-e", "4K", "-f", "8", "-n", "2", "-w", "0", "-d", "all",
                                                "-o", "all", "--csv", f"{tmp}/r.csv"])
            expect(result.returncode == 0, f"{collective}: exit {result.returncode}\n{result.stderr}")
            rows = read_csv(f"{tmp}/r.csv")
            expect(len(rows) == 8 * 4 * 3 * 2, f"{collective}: {len(rows)} rows for 8 types x 4 ops x 3 sizes x 2")
            expect(all(int(r["wrong"]) == 0 for r in rows), f"{collective}: wrong elements")
            expect({r["dtype"] for r in rows} == set(ELEMENT_BYTES), "types covered")
            expect({r["op"] for r in rows} == {"sum", "prod", "min", "max"}, "ops covered")
    print("all MPI types x ops on 3 ranks: correct")


class Skip(Exception):
    pass


def test_gloo(runner, _):
    """--backend gloo under mpirun: every collective on Gloo's own calls, checked; its refusals."""
    probe = runner.run_alone("all_reduce", ["--backend", "gloo", "-b", "8", "-e", "8", "-n", "1", "-w", "0"])
    if "this build has no Gloo" in probe.stderr:
        raise Skip("this build has no Gloo (libgloo-dev)")
    expect(probe.returncode == 0, f"gloo alone: exit {probe.returncode}\n{probe.stderr}")
    sizes = sweep(4, 300000, 3.3)
    for collective in COLLECTIVES:
        for n in (1, 3):
            with tempfile.TemporaryDirectory() as tmp:
                args = ["--backend", "gloo", "-b", "4", "-e", "300000", "-f", "3.3", "-n", "4", "-w", "1", "-d",
                        "int32", "--csv", f"{tmp}/run.csv", "--json", f"{tmp}/run.json"]
                if collective in ROOTED:
                    args += ["-r", str(n - 1)]
                result = runner.run(collective, n, args)
                expect(result.returncode == 0, f"gloo {collective} np={n}: exit {result.returncode}\n{result.stderr}")
                rows = read_csv(f"{tmp}/run.csv")
                # Gloo's alltoall and a send/recv ring read and write one buffer at once in place.
                check_rows(rows, collective, n, sizes, "int32", collective in ("alltoall", "sendrecv"))
                expect(all(r["backend"] == "gloo" and r["call"].startswith("gloo") for r in rows),
                       f"gloo {collective}: backend/call {[(r['backend'], r['call']) for r in rows][:2]}")
                with open(f"{tmp}/run.json") as f:
                    context = json.load(f)["context"]
                expect(context["control_plane"] == "MPI", f"gloo {collective}: control plane {context['control_plane']}")
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("all_reduce", 3, ["--backend", "gloo", "-b", "64", "-e", "4K", "-f", "8", "-n", "2", "-w",
                                              "0", "-d", "all", "-o", "all", "--csv", f"{tmp}/r.csv"])
        expect(result.returncode == 0, f"gloo types: exit {result.returncode}\n{result.stderr}")
        rows = read_csv(f"{tmp}/r.csv")
        expect(len(rows) == 8 * 4 * 3 * 2 and all(int(r["wrong"]) == 0 for r in rows),
               f"gloo types: {len(rows)} rows, wrong {sum(int(r['wrong']) for r in rows)}")
    # A link matrix on Gloo: each pair of a round on a two-rank context of its own.
    with tempfile.TemporaryDirectory() as tmp:
        # Four ranks on this machine's cores: a cell's figure is its share of the CPU, not a link's, so
        # the matrix is not judged here (as test_matrix_schedules); the fake-cluster beds judge it.
        result = runner.run("sendrecv", 4, ["--backend", "gloo", "--pairs", "all", "-b", "64K", "-e", "64K", "-n", "5",
                                            "--node-threshold", "0.01", "--json", f"{tmp}/m.json"])
        expect(result.returncode == 0, f"gloo --pairs all: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
        with open(f"{tmp}/m.json") as f:
            rows = [r for r in json.load(f)["rows"] if r["pair"] >= 0]
        checked = [r for r in rows if r["placement"] == "out-of-place"]
        expect(len(rows) == 12 and len(checked) == 6 and all(r["wrong"] == 0 for r in checked) and
               {r["call"] for r in rows} == {"gloo send+recv"},
               f"gloo --pairs all: {len(rows)} pair rows {[(r['pair'], r['wrong'], r['call']) for r in rows][:4]}")
        expect("# Verdict (link matrix) :" in result.stdout, "gloo --pairs all: no link-matrix verdict")
    for args, fragment in ((["--pattern", "incast"], "--pattern: the gloo backend runs on all the ranks at once"),
                           (["-G", "2"], "-G/--cudagraph needs --backend nccl: the gloo backend"),
                           (["-d", "half"], "the gloo backend has no half")):
        collective = "sendrecv" if args[0].startswith("--pa") else "all_reduce"
        result = runner.run(collective, 3, ["--backend", "gloo", "-b", "8", "-e", "8"] + args)
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        expect(result.returncode == 2 and len(errors) == 1 and fragment in errors[0],
               f"gloo {args}: exit {result.returncode}, {errors}")
    print(f"gloo: {len(COLLECTIVES)} collectives on np 1 and 3 correct with Gloo's calls; 8 types x 4 ops; a link "
          "matrix of 4 ranks; patterns, graphs and half refused with one line")


def test_fault_wrong(runner, _):
    """A corrupted element in a real run must be reported and make the exit code 1."""
    for collective, n in (("all_reduce", 2), ("reduce", 3)):
        with tempfile.TemporaryDirectory() as tmp:
            args = ["-b", "1K", "-e", "64K", "-n", "2", "--inject-fault", "wrong:1", "--csv", f"{tmp}/r.csv"]
            if collective == "reduce":
                args += ["-r", "2"]  # rank 1 has no output at all: the fault lands once the root corrupts
                args[args.index("wrong:1")] = "wrong:2"
            result = runner.run(collective, n, args)
            expect(result.returncode == 1, f"{collective}: exit {result.returncode}, expected 1\n{result.stderr}")
            rows = read_csv(f"{tmp}/r.csv")
            wrong = [int(r["wrong"]) for r in rows]
            expect(wrong.count(1) == 1 and sum(wrong) == 1, f"{collective}: wrong per row {wrong}")
            expect("FAILED" in result.stdout, "footer does not say FAILED")
    # A rank that holds no result would plant nothing and pass: refused before any work.
    refused = runner.run("reduce", 3, ["-b", "1K", "-e", "1K", "--inject-fault", "wrong:1"], timeout=60)
    lines = own_lines(refused.stderr)
    expect(refused.returncode == 2 and len(lines) == 1 and "only the root (rank 0)" in lines[0],
           f"reduce --inject-fault wrong:1: exit {refused.returncode}, {lines}")
    print("injected wrong element: reported in exactly one row, exit 1; on a rank without a result, exit 2")


def test_fault_hang(runner, _):
    """A rank that stops taking part ends the run with a diagnosis within the timeout."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("all_reduce", 3, ["-b", "1K", "-e", "1K", "-T", "2", "--inject-fault", "hang:2",
                                              "--csv", f"{tmp}/r.csv"], timeout=120)
        elapsed = time.monotonic() - start
        expect(result.returncode != 0, "hang: exit 0")
        expect("timeout" in result.stderr and "all_reduce out-of-place" in result.stderr,
               f"hang: no diagnosis naming the operation\n{result.stderr}")
        expect("[rank " in result.stderr, "hang: diagnosis does not name the rank")
        # The survivors' peer survey names the hung rank and its host.
        expect(re.search(r"Peers: .*rank 2 on \S+ waits in all_reduce .*\[injected hang\]", result.stderr),
               f"hang: the peer survey does not name rank 2\n{result.stderr}")
        expect(elapsed < 30, f"hang: took {elapsed:.1f} s with -T 2")
        expect(not Path(f"{tmp}/r.csv").exists(), "hang: final CSV written by a failed run")
    first = next(line for line in result.stderr.splitlines() if "timeout" in line)
    print(f"hang ended after {elapsed:.1f} s: {first}")
    # In a link matrix the hung pair becomes a FAIL cell and rank 0 saves the matrix it holds.
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        result = runner.run("sendrecv", 4, ["--pairs", "all", "-b", "64K", "-e", "64K", "-n", "50", "-T", "2",
                                            "--inject-fault", "hang:2", "--json", f"{tmp}/m.json"], timeout=120)
        elapsed = time.monotonic() - start
        expect(result.returncode == 3, f"matrix hang: exit {result.returncode}\n{result.stderr[-2000:]}")
        expect(elapsed < 30, f"matrix hang: took {elapsed:.1f} s with -T 2")
        # Saved, but never under the final name: that is for runs that finished.
        expect(Path(f"{tmp}/m.json.partial").exists() and not Path(f"{tmp}/m.json").exists(),
               f"matrix hang: no matrix saved under m.json.partial\n{result.stdout[-2000:]}")
        with open(f"{tmp}/m.json.partial") as f:
            doc = json.load(f)
        cells = doc["summary"]["matrix"]["cells"]
        hung = [c for c in cells if c["failure"].startswith("timed out")]
        expect(doc["complete"] is False and len(cells) == 6, f"matrix hang: complete={doc['complete']}, {len(cells)} cells")
        # Rank 2 hangs in its first pair, with rank 1 (a loaded machine may find either end silent).
        expect(len(hung) == 1 and sorted(u.rsplit("#", 1)[1] for u in (hung[0]["a"], hung[0]["b"])) == ["1", "2"],
               f"matrix hang: the hung pair is not the one FAIL cell timed out: {cells}")
        expect(re.search(r"^#   FAIL cell  : \S+#1 - \S+#2: timed out in round 0: rank [12] on", result.stdout, re.M),
               f"matrix hang: the console does not name the hung pair\n{result.stdout[-2000:]}")
    print(f"matrix hang ended after {elapsed:.1f} s: FAIL cell {hung[0]['a']} - {hung[0]['b']}: {hung[0]['failure']}")


def mid_run_failure(run, label, timeout_seconds):
    """One rank's library fails after the first row: the run must end (every rank) within the
    timeout, non-zero, with that rank's message, and leave no result file. Returns seconds taken."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(["-b", "8", "-e", "64M", "-f", "4", "-T", str(timeout_seconds), "--inject-fault", "error:1",
                      "--csv", f"{tmp}/r.csv", "--json", f"{tmp}/r.json"])
        elapsed = time.monotonic() - start
        expect(result.returncode != 0, f"{label}: exit 0 after a planted failure")
        expect("[rank 1 " in result.stderr and "error:" in result.stderr,
               f"{label}: no message from the failing rank\n{result.stderr[-2000:]}")
        expect(elapsed < timeout_seconds + 30, f"{label}: took {elapsed:.1f} s with -T {timeout_seconds}")
        expect(not Path(f"{tmp}/r.csv").exists() and not Path(f"{tmp}/r.json").exists(),
               f"{label}: result files written by a failed run")
    first = next(line for line in result.stderr.splitlines() if "[rank 1 " in line)
    print(f"{label}: ended after {elapsed:.1f} s, exit {result.returncode}: {first}")
    return elapsed


def test_fault_error(runner, _):
    """A library failure on one rank mid-run: message first, then every rank ends."""
    mid_run_failure(lambda args: runner.run("all_reduce", 2, args, timeout=120), "mpi mid-run failure", 10)


BAD_INPUT = [
    # (collective, ranks, args, fragment the one-line message must contain)
    ("all_reduce", 2, ["-b", "1M", "-e", "1K"], "-b/--minbytes"),
    ("all_reduce", 2, ["-f", "1"], "-f/--stepfactor"),
    ("all_reduce", 2, ["-f", "0.5"], "--stepfactor: '0.5' is out of range"),
    ("all_reduce", 2, ["-f", "nan"], "--stepfactor: 'nan' is not a number"),
    ("all_reduce", 2, ["-T", "nan"], "--timeout: 'nan' is not a number"),
    ("all_reduce", 2, ["-T", "inf"], "--timeout: 'inf' is not finite"),
    ("all_reduce", 2, ["--max-noise", "inf"], "--max-noise"),
    ("all_reduce", 2, ["-b", "4", "-e", "1G", "-i", "4"], "sizes"),
    ("all_reduce", 2, ["-b", "8", "-e", "1G", "-f", "1.0000001"], "sizes"),
    ("all_reduce", 2, ["-f", "2", "-i", "1K"], "-i/--stepbytes"),
    ("all_reduce", 2, ["-b", "0"], "-b/--minbytes"),
    ("all_reduce", 2, ["-b=-8"], "-b/--minbytes"),
    ("all_reduce", 2, ["-e", "12X"], "-e/--maxbytes"),
    ("all_reduce", 2, ["-i", "0"], "-i/--stepbytes"),
    ("all_reduce", 2, ["-d", "float128"], "-d/--datatype"),
    ("all_reduce", 2, ["-d", "bfloat16"], "no 16-bit floating type"),
    ("all_reduce", 2, ["-o", "xor"], "-o/--op"),
    ("all_reduce", 2, ["-o", "avg"], "no average reduction"),
    ("broadcast", 2, ["-r", "2"], "-r/--root"),
    ("all_gather", 2, ["-o", "max"], "does not reduce"),
    ("all_gather", 2, ["-r", "0"], "has no root"),
    ("all_reduce", 2, ["--csv", "/nonexistent-fabricbench/x.csv"], "--csv"),
    ("all_reduce", 2, ["--json", "{tmp}"], "is a folder"),
    ("all_reduce", 2, ["-n", "0"], "--iters: '0' is out of range"),
    ("all_reduce", 2, ["-w", "-1"], "--warmup_iters: '-1' is out of range"),
    ("all_reduce", 2, ["-T", "-5"], "--timeout: '-5' is out of range"),
    ("all_reduce", 2, ["-a", "median"], "-a/--average"),
    ("all_reduce", 2, ["--max-noise", "1", "-n", "10"], "--max-noise"),
    ("all_reduce", 2, ["--max-noise", "0"], "--max-noise"),
    ("all_reduce", 2, ["--tag", "novalue"], "--tag"),
    ("all_reduce", 2, ["--tag", "site=a", "--tag", "site=b"], "--tag: key 'site' given twice"),
    ("all_reduce", 2, ["--backend", "ucc"], "--backend"),
    ("all_reduce", 2, ["--frobnicate"], "frobnicate"),
    ("all_reduce", 2, ["-n", "many"], "--iters"),
    ("all_reduce", 2, ["-e", "4G", "-d", "int8"], "limit"),
    ("all_reduce", 2, ["--pairs", "all"], "fb_sendrecv"),
    ("sendrecv", 2, ["--pairs", "half"], "a matrix schedule (all, quick, rail, ring, tree)"),
    ("sendrecv", 2, ["--pairs", "random"], "--pairs"),
    ("sendrecv", 1, ["--pairs", "all"], "needs three nodes"),
    ("sendrecv", 2, ["--pairs", "all"], "needs three nodes"),
    ("sendrecv", 3, ["--pairs", "all", "-b", "1K", "-e", "4K", "--matrix-size", "3K"], "is not among the sizes"),
    ("sendrecv", 2, ["--matrix-size", "1K"], "--matrix-size needs --pairs"),
    ("all_reduce", 2, ["--repeat", "0"], "--repeat"),
    ("sendrecv", 3, ["--pairs", "all", "--node-threshold", "1.5"], "--node-threshold"),
    ("all_reduce", 2, ["--expect-busbw", "0"], "--expect-busbw"),
    ("all_reduce", 2, ["--expect-busbw", "fast"], "--expect-busbw"),
    ("all_reduce", 2, ["--prom", "/nonexistent-folder/run.prom"], "--prom"),
    ("all_reduce", 2, ["--prom", "/tmp/fb-same.out", "--csv", "/tmp/fb-same.out"], "name the same file"),
    ("alltoall", 2, ["--backend", "mpi", "--nccl-call", "p2p"], "--nccl-call needs --backend nccl"),
    ("alltoall", 2, ["--nccl-call", "ring"], "--nccl-call"),
    ("all_reduce", 2, ["--cache", "hot"], "--cache"),
    ("all_reduce", 2, ["--backend", "mpi", "--timer", "host"], "--timer needs --backend nccl"),
]


def own_lines(stderr):
    """stderr without the boxed notices mpirun adds when a rank exits non-zero."""
    lines, boxed = [], False
    for line in stderr.splitlines():
        if line.startswith("-----"):
            boxed = not boxed
        elif not boxed and line.strip():
            lines.append(line)
    return lines


def test_bad_input(runner, _):
    for collective, n, args, fragment in BAD_INPUT:
        with tempfile.TemporaryDirectory() as tmp:
            args = [a.replace("{tmp}", tmp) for a in args]
            out_csv = f"{tmp}/out.csv"
            full = args + (["--csv", out_csv] if "--csv" not in args else [])
            result = runner.run(collective, n, full, timeout=60)
            where = f"{collective} {' '.join(args)}"
            expect(result.returncode == 2, f"{where}: exit {result.returncode}, expected 2\n{result.stderr}")
            lines = own_lines(result.stderr)
            expect(len(lines) == 1, f"{where}: expected one line on stderr, got {lines}")
            expect(fragment in lines[0], f"{where}: message {lines[0]!r} lacks {fragment!r}")
            left = sorted(os.listdir(tmp))
            expect(left == [], f"{where}: left files {left}")
            print(f"exit 2: {where}\n    {lines[0]}")
    print(f"{len(BAD_INPUT)} misuse cases: one line each, exit 2, no file")


def wait_for_rows(partial, rows, deadline):
    while time.monotonic() < deadline:
        if partial.exists() and len(partial.read_text().splitlines()) >= rows + 1:
            return
        time.sleep(0.05)
    raise Failure(f"{partial} never reached {rows} rows")


def descendants(pid):
    """Every process below `pid` (Open MPI puts ranks in process groups of their own)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def signal_job(process, sig):
    """SIGTERM goes to the launcher, which forwards it as mpirun and srun do; SIGKILL hits every
    process of the job at once, as a node crash or the OOM killer would."""
    targets = [process.pid] + (descendants(process.pid) if sig == signal.SIGKILL else [])
    for pid in targets:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    return targets


def wait_gone(pids, deadline):
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
                   for pid in pids if Path(f"/proc/{pid}/status").exists()):
            return
        time.sleep(0.05)
    raise Failure(f"processes {pids} still alive")


def interrupt_once(runner, sig):
    """One sweep stopped by `sig` mid-run: a parseable CSV and JSON of the finished sizes, no final
    files, no rank left. Returns whether rank 0's notice reached the launcher's stderr."""
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(f"{tmp}/run.csv")
        partial = Path(f"{tmp}/run.csv.partial")
        process = runner.start("all_reduce", 2, ["-b", "8", "-e", "256M", "-n", "500", "--csv", str(csv_path),
                                                 "--json", f"{tmp}/run.json"])
        try:
            wait_for_rows(partial, 6, time.monotonic() + 60)
            ranks = descendants(process.pid)
            signal_job(process, sig)
            _, stderr = process.communicate(timeout=60)
            wait_gone(ranks, time.monotonic() + 30)
        finally:
            if process.poll() is None:
                signal_job(process, signal.SIGKILL)
        expect(process.returncode != 0, f"{sig.name}: exit 0")
        expect(not csv_path.exists(), f"{sig.name}: final CSV exists after an interrupted run")
        rows = read_csv(partial)
        expect(len(rows) >= 6, f"{sig.name}: only {len(rows)} rows kept")
        expect(all(int(r["wrong"]) == 0 for r in rows), f"{sig.name}: kept rows are not whole")
        with open(f"{tmp}/run.json.partial") as f:
            document = json.load(f)
        expect(document["complete"] is False and len(document["rows"]) >= 6, f"{sig.name}: partial JSON")
        print(f"{sig.name}: {len(rows)} finished rows kept, parseable, in {partial.name}")
        return "finished rows are kept in" in stderr


def test_interrupted(runner, _):
    """SIGTERM and SIGKILL mid-sweep leave a parseable CSV of the finished sizes; SIGTERM's notice
    says where. Once, on a loaded machine (a CI run of 2026-12-05), mpirun's stderr came back empty:
    mpirun ends the ranks and its own output forwarding together, so the notice may not make it. A
    run without it is tried once more, and the second must show it."""
    if not interrupt_once(runner, signal.SIGTERM):
        print("SIGTERM: no notice in mpirun's stderr; once more")
        expect(interrupt_once(runner, signal.SIGTERM), "SIGTERM: no notice, twice")
    interrupt_once(runner, signal.SIGKILL)


def test_adaptive(runner, _):
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("all_reduce", 2, ["-b", "8", "-e", "256K", "-f", "8", "--max-noise", "5",
                                              "--min-time", "0.01", "--max-time", "0.3", "--csv", f"{tmp}/r.csv"])
        expect(result.returncode == 0, f"adaptive: exit {result.returncode}\n{result.stderr}")
        rows = read_csv(f"{tmp}/r.csv")
        for row in rows:
            expect(row["stop_reason"] in ("noise", "max-time", "budget"), f"stop_reason {row['stop_reason']}")
            expect(int(row["samples"]) >= 10, f"samples {row['samples']}")
            if row["stop_reason"] == "noise":  # the median's standard error, from the MAD
                n = int(row["samples"])
                rse = 1.2533 * 1.4826 * float(row["time_mad_s"]) / float(row["time_median_s"]) / n ** 0.5
                expect(rse <= 0.05 + 1e-12, f"stopped on noise with the median's relative error {rse}")
        reasons = [r["stop_reason"] for r in rows]
        print(f"adaptive: {len(rows)} rows, stop reasons {reasons}")


def test_matrix_schedules(runner, _):
    """--pairs ring on 3 ranks of one node (its ranks are the units): the 3 links of the ring in
    three rounds, each cell measured twice (--repeat 2, no more: --repeat-max 2) and combined."""
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("sendrecv", 3, ["--pairs", "ring", "--repeat", "2", "--repeat-max", "2", "-b", "64K", "-e", "64K", "-n", "20",
                                            "--node-threshold", "0.01", "--json", f"{tmp}/m.json"])
        expect(result.returncode == 0, f"ring: exit {result.returncode}\n{result.stdout[-2000:]}{result.stderr}")
        with open(f"{tmp}/m.json") as f:
            doc = json.load(f)
        cells = doc["summary"]["matrix"]["cells"]
        links = sorted(tuple(sorted(u.rsplit("#", 1)[1] for u in (c["a"], c["b"]))) for c in cells)
        expect(links == [("0", "1"), ("0", "2"), ("1", "2")] and all(not c["failure"] for c in cells),
               f"ring: cells {cells}")
        rows = doc["rows"]
        expect(len(rows) == 6 and all(r["runs"] == 2 and r["wrong"] == 0 for r in rows),
               f"ring --repeat 2: {[(r['runs'], r['wrong']) for r in rows]}")
        expect(result.stdout.count("# -- round") == 3, f"ring: rounds\n{result.stdout[-2000:]}")
    print(f"--pairs ring --repeat 2 on 3 ranks: links {links}, {len(rows)} rows of 2 runs each")


def test_load_patterns(runner, _):
    """--pattern on 5 and 6 ranks of one node (its ranks are the units): every pattern's groups with
    correct data, the load report in the JSON and Prometheus files, the refusals."""
    with tempfile.TemporaryDirectory() as tmp:
        shapes = {"incast": (5, ["--senders", "2"], 5, "gather"), "one-to-many": (5, ["--senders", "3"], 5, "scatter"),
                  "all-to-all": (5, [], 1, "alltoall"), "bisection": (5, [], 2, "sendrecv")}
        for pattern, (ranks, extra, groups, collective) in shapes.items():
            result = runner.run("sendrecv", ranks, ["--pattern", pattern, "-b", "8", "-e", "256K", "-f", "32", "-n", "5",
                                                    "--json", f"{tmp}/{pattern}.json"] + extra)
            expect(result.returncode == 0, f"{pattern}: exit {result.returncode}\n{result.stdout[-2000:]}{result.stderr}")
            with open(f"{tmp}/{pattern}.json") as f:
                doc = json.load(f)
            rows, load = doc["rows"], doc["summary"]["load"]
            expect(rows and all(r["wrong"] == 0 and r["collective"] == collective for r in rows),
                   f"{pattern}: rows {[(r['collective'], r['wrong']) for r in rows]}")
            expect(load["pattern"] == pattern and len(load["groups"]) == groups and all(g["gbps"] > 0 for g in load["groups"]),
                   f"{pattern}: load {load}")
            if pattern == "incast":
                targets = sorted(g["leader"] for g in load["groups"])
                expect(len(set(targets)) == 5 and all(len(g["others"].split("+")) == 2 for g in load["groups"]),
                       f"incast: every node the target once with 2 senders: {load['groups']}")
        result = runner.run("sendrecv", 6, ["--pattern", "congestion", "--senders", "1", "-b", "8", "-e", "256K", "-f", "32768",
                                            "-n", "10", "--json", f"{tmp}/c.json", "--prom", f"{tmp}/c.prom"])
        expect(result.returncode == 0, f"congestion: exit {result.returncode}\n{result.stdout[-2000:]}{result.stderr}")
        with open(f"{tmp}/c.json") as f:
            doc = json.load(f)
        victims = doc["summary"]["load"]["victims"]
        loads = sorted({(r["operation"], r["settings"]) for r in doc["rows"]})
        expect(len(victims) == 1 and victims[0]["latency_factor"] > 0 and victims[0]["bandwidth_factor"] > 0
               and victims[0]["load"] == "incast", f"congestion: victims {victims}")
        expect(all(r["wrong"] == 0 for r in doc["rows"]) and ("incast", "load=aggressor") in loads
               and ("victim", "load=alone") in loads and ("victim", "load=incast") in loads, f"congestion rows: {loads}")
        prom = Path(f"{tmp}/c.prom").read_text()
        expect('fabricbench_congestion_impact_factor{benchmark="fb_sendrecv",victim=' in prom, "congestion: no gauge")
        expect("Congestion impact" in result.stdout, f"congestion: no report\n{result.stdout[-2000:]}")
    # A line rate no loopback reaches: every group below what its path can carry, exit 1.
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("sendrecv", 4, ["--pattern", "incast", "--senders", "1", "-b", "256K", "-e", "256K", "-n", "5",
                                            "--line-rate", "1000000", "--json", f"{tmp}/r.json"])
        groups = json.load(open(f"{tmp}/r.json"))["summary"]["load"]["groups"] if result.returncode != 2 else []
        expect(result.returncode == 1 and "# Verdict (expected rate) : FAIL" in result.stdout
               and len(groups) == 4 and all(g["expected_gbps"] == 1000000 for g in groups),
               f"--line-rate: exit {result.returncode}, groups {groups}\n{result.stdout[-1500:]}{result.stderr[-500:]}")
    for ranks, args, what in [(5, ["--pattern", "incast", "--senders", "5"], "--senders 5"),
                              (5, ["--pattern", "incast", "--pairs", "all"], "--pairs and --pattern"),
                              (5, ["--pattern", "bisection", "--victims", "2"], "--aggressors and --victims"),
                              (4, ["--pattern", "congestion", "--victims", "2"], "--victims"),
                              (5, ["--pattern", "tornado"], "unknown pattern")]:
        result = runner.run("sendrecv", ranks, args + ["-b", "8", "-e", "8"])
        expect(result.returncode == 2 and what in result.stderr, f"{args}: exit {result.returncode}: {result.stderr[-800:]}")
    result = runner.run("all_reduce", 2, ["--pattern", "incast", "-b", "8", "-e", "8"])
    expect(result.returncode == 2 and "fb_sendrecv" in result.stderr, f"all_reduce --pattern: {result.stderr[-800:]}")
    print(f"--pattern: {', '.join(shapes)} and congestion correct; victim {victims[0]['victim']} "
          f"latency x{victims[0]['latency_factor']:.2f}, bandwidth x{victims[0]['bandwidth_factor']:.2f} (loaded 2-core machine)")


SKIP = 77  # ctest's SKIP_RETURN_CODE for the gpu label


def gpu_count():
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU "))


def test_gpu(runner, _):
    """NCCL backend on the GPUs of this machine: every collective, type and op, graphs, adaptive,
    the more-ranks-than-GPUs message, a forced NCCL failure, a planted wrong element."""
    gpus = gpu_count()
    if gpus == 0:
        print("SKIP: no CUDA GPU on this machine (nvidia-smi -L lists none); run scripts/gpu-test.sh on a GPU node")
        sys.exit(SKIP)
    nccl = ["--backend", "nccl"]
    for collective in COLLECTIVES:
        with tempfile.TemporaryDirectory() as tmp:
            args = nccl + ["-b", "8", "-e", "1M", "-f", "16", "-n", "3", "-w", "1", "-d", "all",
                           "--csv", f"{tmp}/r.csv", "--json", f"{tmp}/r.json"]
            if collective in REDUCING:
                args += ["-o", "all"]
            result = runner.run(collective, gpus, args)
            expect(result.returncode == 0, f"{collective}: exit {result.returncode}\n{result.stdout[-3000:]}\n{result.stderr}")
            rows = read_csv(f"{tmp}/r.csv")
            bad = [(r["dtype"], r["op"], r["size_bytes"], r["placement"], r["wrong"]) for r in rows if int(r["wrong"]) != 0]
            expect(not bad, f"{collective}: wrong elements in {bad[:10]}")
            with open(f"{tmp}/r.json") as f:
                context = json.load(f)["context"]
            expect(context["backend"] == "nccl" and "gpu_uuid" in context["rank_context"][0]["gpus"][0], "GPU context missing")
            print(f"{collective}: {len(rows)} rows, {len({r['dtype'] for r in rows})} types, "
                  f"{len({r['op'] for r in rows})} ops, all correct")
        if gpus == 1:  # more ranks than GPUs: NCCL over its socket transport, a few sizes
            for ranks in (2, 3):
                with tempfile.TemporaryDirectory() as tmp:
                    args = nccl + ["-b", "8", "-e", "96K", "-f", "24", "-n", "2", "-w", "1", "-d", "int32",
                                   "--csv", f"{tmp}/s.csv"]
                    if collective in ROOTED:
                        args += ["-r", str(ranks - 1)]
                    result = runner.run_shared_gpu(collective, ranks, args)
                    expect(result.returncode == 0,
                           f"{collective} on {ranks} ranks sharing the GPU: exit {result.returncode}\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
                    rows = read_csv(f"{tmp}/s.csv")
                    # NCCL's in-place alltoall and sendrecv are undefined with several ranks: timed, not checked.
                    unchecked = collective in ("alltoall", "sendrecv")
                    expect(rows and all(int(r["ranks"]) == ranks and int(r["wrong"]) ==
                                        (-1 if unchecked and r["placement"] == "in-place" else 0) for r in rows),
                           f"{collective} on {ranks} ranks sharing the GPU: {rows}")
                    print(f"{collective}: {ranks} ranks sharing the GPU (NCCL_HOSTID), {len(rows)} rows correct")
    # NCCL 2.28's own alltoall, gather and scatter beside the grouped sends and receives nccl-tests
    # falls back to: one sweep each, rows naming the call, both correct.
    for collective in ("alltoall", "gather", "scatter"):
        with tempfile.TemporaryDirectory() as tmp:
            result = runner.run_shared_gpu(collective, 3, nccl + ["-b", "1K", "-e", "3M", "-f", "48", "-n", "2",
                                                                  "-d", "int32", "--nccl-call", "native,p2p",
                                                                  "--csv", f"{tmp}/f.csv"])
            expect(result.returncode == 0, f"{collective} --nccl-call native,p2p: exit {result.returncode}\n"
                                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            rows = read_csv(f"{tmp}/f.csv")
            calls = {(r["call"], r["settings"]) for r in rows}
            native = "ncclAlltoAll" if collective == "alltoall" else "nccl" + collective.capitalize()
            expect(calls == {(native, ""), ("ncclSend+ncclRecv", "nccl_call=p2p")}, f"{collective}: calls {calls}")
            expect(all(int(r["wrong"]) == 0 for r in rows if r["placement"] == "out-of-place"),
                   f"{collective}: wrong elements {[(r['call'], r['size_bytes'], r['wrong']) for r in rows]}")
            print(f"{collective} on 3 ranks: {len(rows)} rows, {native} and grouped ncclSend/ncclRecv, correct")
    # Point-to-point groups at sizes where NCCL pipelines chunks: in place timed but not checked.
    for collective in ("sendrecv", "alltoall"):
        with tempfile.TemporaryDirectory() as tmp:
            result = runner.run_shared_gpu(collective, 2, nccl + ["-b", "4M", "-e", "32M", "-f", "2", "-n", "3",
                                                                  "-d", "int32", "--csv", f"{tmp}/p.csv"])
            expect(result.returncode == 0, f"{collective} 4-32 MiB on 2 ranks: exit {result.returncode}\n"
                                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            rows = read_csv(f"{tmp}/p.csv")
            expect(len(rows) == 8 and all(int(r["wrong"]) == (0 if r["placement"] == "out-of-place" else -1)
                                          for r in rows),
                   f"{collective} 4-32 MiB: {[(r['size_bytes'], r['placement'], r['wrong']) for r in rows]}")
            expect("in-place " + collective + " is timed as nccl-tests times it, and not checked" in result.stdout,
                   f"{collective}: the note on in-place is missing\n{result.stdout[-2000:]}")
            print(f"{collective} 4-32 MiB on 2 ranks: {len(rows)} rows, out-of-place correct, in-place timed "
                  "unchecked with a note")
    # A link matrix on NCCL: 4 ranks as 4 NCCL hosts, pairs as groups of one world communicator.
    # Four processes time-slice one GPU, so cells scatter (4.5 to 8.4 Gb/s seen on the H200): the
    # test judges completeness, correctness and the path per pair; --node-threshold 0.3 keeps the
    # scatter from naming a SLOW link.
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run_shared_gpu("sendrecv", 4, nccl + ["--pairs", "all", "-b", "1M", "-e", "4M", "-f", "4",
                                                              "-n", "5", "-d", "int32", "--node-threshold", "0.3",
                                                              "--json", f"{tmp}/m.json",
                                                              "--csv", f"{tmp}/m.csv"])
        expect(result.returncode == 0, f"NCCL --pairs all on 4 ranks: exit {result.returncode}\n"
                                       f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        cells = json.load(open(f"{tmp}/m.json"))["summary"]["matrix"]["cells"]
        pairs = sorted(tuple(sorted((c["a"], c["b"]))) for c in cells)
        rows = read_csv(f"{tmp}/m.csv")
        expect(len(cells) == 6 and len(set(pairs)) == 6 and all(not c["failure"] for c in cells),
               f"NCCL --pairs all: {len(cells)} cells {pairs}")
        # 6 cells x 2 sizes x 2 placements; in-place sendrecv is timed, not checked, with several ranks.
        expect(len(rows) == 24 and all(int(r["wrong"]) == (0 if r["placement"] == "out-of-place" else -1)
                                       for r in rows), f"NCCL --pairs all rows: {len(rows)}")
        path = result.stdout[result.stdout.index("# Verdict (NCCL path)"):].splitlines()
        per_pair = [line for line in path[1:8] if re.match(r"^#\s+\S+#\d - \S+#\d: ", line)]
        expect(len(per_pair) == 6, f"NCCL --pairs all: path verdict per pair missing\n{result.stdout[-3000:]}")
        print(f"NCCL --pairs all on 4 ranks: 6 cells, {len(rows)} rows correct; path: {per_pair[0].strip()}")
    if gpus == 1:
        mid_run_failure(lambda args: runner.run_shared_gpu("all_reduce", 2, nccl + args, timeout=180),
                        "nccl mid-run failure, 2 ranks sharing the GPU", 20)
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run("all_reduce", gpus, nccl + ["-b", "8", "-e", "1M", "-f", "8", "-G", "10", "--csv", f"{tmp}/g.csv"])
        expect(result.returncode == 0, f"graph mode: exit {result.returncode}\n{result.stderr}")
        rows = read_csv(f"{tmp}/g.csv")
        expect(all(r["settings"] == "graph_iterations=10" and int(r["wrong"]) == 0 for r in rows), "graph mode rows")
        print(f"graph mode (-G 10): {len(rows)} rows correct")
        result = runner.run("all_reduce", gpus, nccl + ["-b", "8", "-e", "16M", "-f", "4", "--max-noise", "1",
                                                         "--csv", f"{tmp}/a.csv"])
        expect(result.returncode == 0, f"adaptive: exit {result.returncode}\n{result.stderr}")
        print(f"adaptive: stop reasons {[r['stop_reason'] for r in read_csv(f'{tmp}/a.csv')]}")
        result = runner.run("all_reduce", gpus, nccl + ["-b", "1K", "-e", "64K", "--inject-fault", "wrong:0",
                                                         "--csv", f"{tmp}/w.csv"])
        expect(result.returncode == 1, f"GPU fault injection: exit {result.returncode}, expected 1\n{result.stderr}")
        print("GPU fault injection: exit 1, " + next(l for l in result.stdout.splitlines() if "Wrong elements" in l))
    with tempfile.TemporaryDirectory() as tmp:
        result = runner.run_alone("all_gather", nccl + ["-g", str(gpus), "-b", "8", "-e", "16M", "-f", "8",
                                                        "--csv", f"{tmp}/g.csv"])
        expect(result.returncode == 0, f"-g {gpus} without mpirun: exit {result.returncode}\n{result.stderr}")
        rows = read_csv(f"{tmp}/g.csv")
        expect(all(int(r["ranks"]) == gpus and int(r["wrong"]) == 0 for r in rows), "-g rows")
        print(f"-g {gpus} in one process without mpirun: {len(rows)} rows correct, ranks={gpus}")
    result = runner.run_alone("all_reduce", nccl + ["-g", str(gpus + 1), "-b", "8", "-e", "8"])
    lines = own_lines(result.stderr)
    expect(result.returncode == 2 and len(lines) == 1 and "NCCL refuses two ranks on one GPU" in lines[0],
           f"-g {gpus + 1}: exit {result.returncode}, {lines}")
    print(f"-g {gpus + 1} on {gpus} GPU(s): {lines[0]}")
    result = runner.run("all_reduce", gpus + 1, nccl + ["-b", "8", "-e", "8"])
    lines = own_lines(result.stderr)
    expect(result.returncode == 2 and len(lines) == 1 and "NCCL refuses two ranks on one GPU" in lines[0],
           f"more ranks than GPUs: exit {result.returncode}, {lines}")
    print(f"np={gpus + 1} on {gpus} GPU(s): {lines[0]}")
    env_backup = dict(runner.env)
    runner.env["NCCL_NET"] = "bogus"  # NCCL refuses: no network plugin of that name
    try:
        result = runner.run("all_reduce", gpus, nccl + ["-b", "8", "-e", "8"])
    finally:
        runner.env = env_backup
    lines = own_lines(result.stderr)
    expect(result.returncode != 0 and any("[rank 0 on " in line and "NCCL says:" in line for line in lines),
           f"forced NCCL failure: exit {result.returncode}\n{result.stderr}")
    print("forced NCCL failure (NCCL_NET=bogus): " + next(l for l in lines if "[rank 0 on " in l))


def tool(runner, name, args, timeout=120):
    """fb_compare / fb_import: plain processes, no mpirun."""
    return subprocess.run([str(runner.bin_dir / name)] + [str(a) for a in args], env=runner.env,
                          capture_output=True, text=True, timeout=timeout)


def planted(source, target, factor_at=None, factor=1.0, stdev=0.01):
    """A copy of a real run with every row's noise set to `stdev` (relative) and, at size
    `factor_at` out-of-place, bandwidth x factor (time / factor): a hand-made pair from real data,
    as measured on a quiet machine (the real run's CPU contention, from the tests beside it, left out)."""
    with open(source) as f:
        document = json.load(f)
    document.get("summary", {}).pop("contention", None)
    for row in document["rows"]:
        if factor_at is not None and row["size_bytes"] == factor_at and row["placement"] == "out-of-place":
            for key in row:
                if key.endswith("bytes_per_s"):
                    row[key] *= factor
                elif key.startswith("time_") and key.endswith("_s"):
                    row[key] /= factor
        row["time_stdev_s"] = stdev * row["time_mean_s"]
        row["time_mad_s"] = stdev / 1.4826 * row["time_median_s"]  # the same spread, as a normal's MAD
    with open(target, "w") as f:
        json.dump(document, f)


def test_compare(runner, _):
    """fb_compare verdicts and exit codes on a real run and planted copies; fb_import of other
    tools' files; named baselines; each bad file one line, exit 2, no output file."""
    data = Path(__file__).resolve().parent / "data"
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        result = runner.run("all_reduce", 2, ["-b", "1K", "-e", "4M", "-f", "4", "-n", "10", "--csv", t / "real.csv",
                                              "--json", t / "real.json"])
        expect(result.returncode == 0, f"real run: exit {result.returncode}\n{result.stderr}")
        result = tool(runner, "fb_compare", [t / "real.json", t / "real.csv"])
        expect(result.returncode == 0 and "0 SLOWER" in result.stdout, f"run against itself: {result.returncode}\n{result.stdout}")
        planted(t / "real.json", t / "base.json")
        planted(t / "real.json", t / "drop.json", factor_at=1 << 20, factor=0.9)
        planted(t / "real.json", t / "gain.json", factor_at=1 << 20, factor=1.25)
        result = tool(runner, "fb_compare", [t / "base.json", t / "drop.json", "--markdown", t / "c.md",
                                             "--csv", t / "c.csv", "--json", t / "c.json"])
        verdicts = [r["verdict"] for r in json.load(open(t / "c.json"))["rows"]]
        slower = [r for r in json.load(open(t / "c.json"))["rows"] if r["verdict"] == "SLOWER"]
        expect(result.returncode == 1 and len(slower) == 1 and slower[0]["size_bytes"] == 1 << 20,
               f"planted 10 % drop: exit {result.returncode}, verdicts {verdicts}")
        expect("**SLOWER**" in open(t / "c.md").read() and len(read_csv(t / "c.csv")) == len(verdicts), "reports")
        print(f"planted 10 % drop at 1 MiB: exit 1, exactly that row SLOWER of {len(verdicts)}")
        result = tool(runner, "fb_compare", [t / "base.json", t / "gain.json", "--json", t / "g.json"])
        gained = [r for r in json.load(open(t / "g.json"))["rows"] if r["verdict"] == "FASTER"]
        expect(result.returncode == 0 and len(gained) == 1, f"planted gain: exit {result.returncode}")
        print("planted 25 % gain at 1 MiB: exit 0, one row FASTER")
        noisy_base, noisy_drop = t / "nb.json", t / "nd.json"
        planted(t / "real.json", noisy_base, stdev=0.1)
        planted(t / "real.json", noisy_drop, factor_at=1 << 20, factor=0.9, stdev=0.1)
        result = tool(runner, "fb_compare", [noisy_base, noisy_drop, "--json", t / "n.json"])
        at_1m = [r["verdict"] for r in json.load(open(t / "n.json"))["rows"]
                 if r["size_bytes"] == 1 << 20 and r["placement"] == "out-of-place"]
        expect(result.returncode == 0 and "0 SLOWER" in result.stdout and at_1m == ["UNSURE"],
               f"drop inside the noise: exit {result.returncode}\n{result.stdout[-600:]}")
        print("10 % drop inside 10 % noise on 10 samples: exit 0, UNSURE")

        # A 15 % drop planted on real rows of 200 samples, their own noise kept: SLOWER, exit 1. One
        # run a side gives each median 1.5 x its samples' spread run to run (what identical runs
        # showed on this class of machine), so the drop is beyond doubt while that spread is under
        # 3.4 % (2 rows: z = 2.24): the quietest of up to three runs is taken; on a machine too busy
        # for that the verdict must be UNSURE (never SAME, never FASTER) and the test says so.
        quietest = None
        for attempt in range(3):
            result = runner.run("all_reduce", 2, ["-b", "16K", "-e", "16K", "-n", "200", "--json", t / "r200.json"])
            expect(result.returncode == 0, f"200-sample run: exit {result.returncode}\n{result.stderr}")
            document = json.load(open(t / "r200.json"))
            spread = max(1.4826 * r["time_mad_s"] / r["time_median_s"] for r in document["rows"])
            if quietest is None or spread < quietest[0]:
                quietest = (spread, document)
            if spread <= 0.034:
                break
        spread, document = quietest
        (t / "r200.json").write_text(json.dumps(document))
        for row in document["rows"]:
            for key in row:
                if key.endswith("bytes_per_s"):
                    row[key] *= 0.85
                elif key.startswith("time_") and key.endswith("_s"):
                    row[key] /= 0.85
        (t / "r200-cut.json").write_text(json.dumps(document))
        result = tool(runner, "fb_compare", [t / "r200.json", t / "r200-cut.json", "--json", t / "c200.json"])
        verdicts = [(r["verdict"], round(r["low"], 3), round(r["high"], 3)) for r in json.load(open(t / "c200.json"))["rows"]]
        if spread <= 0.034:
            expect(result.returncode == 1 and all(v[0] == "SLOWER" for v in verdicts),
                   f"planted 15 % drop on 200 samples spreading {spread:.1%}: exit {result.returncode}, {verdicts}")
            print(f"planted 15 % drop on 200 real samples (spread {spread:.1%}): exit 1, SLOWER, intervals {verdicts}")
        else:
            slower = any(v[0] == "SLOWER" for v in verdicts)
            expect(result.returncode == (1 if slower else 0) and all(v[0] in ("SLOWER", "UNSURE") for v in verdicts),
                   f"planted 15 % drop on 200 samples spreading {spread:.1%}: exit {result.returncode}, {verdicts}")
            print(f"planted 15 % drop on 200 real samples: the machine too busy to judge one run a side (spread "
                  f"{spread:.1%} in the quietest of 3 runs): {verdicts}, said as such")

        # --repeat 3: one row per size and placement, each holding 3 sweeps' centre and spread, or
        # more of them (up to 9) where CPU contention or the rows' spread asked, said in the summary;
        # a 30 % drop planted on a copy is SLOWER on the between-run model (Student's t).
        result = runner.run("all_reduce", 2, ["-b", "64K", "-e", "1M", "-f", "4", "-n", "50", "--repeat", "3",
                                              "--samples", "--json", t / "rep.json", "--csv", t / "rep.csv"])
        expect(result.returncode == 0, f"--repeat 3: exit {result.returncode}\n{result.stderr}")
        rows = json.load(open(t / "rep.json"))["rows"]
        repeats = json.load(open(t / "rep.json"))["summary"]["repeats"]
        runs = rows[0]["runs"] if rows else 0
        expect(len(rows) == 6 and 3 <= runs <= 9 and all(r["runs"] == runs and r["between_run_rsd"] > 0 for r in rows)
               and repeats["least"] == 3 and repeats["most"] == 9 and (repeats["measured"] == 3) == (repeats["rounds_extended"] == 0)
               and repeats["measured"] == runs + repeats["sweeps_left_out"] and (runs == 3 or "# Repeats" in result.stdout)
               and repeats["layout_slowdown"] >= 1,
               f"--repeat 3 rows: {[(r['size_bytes'], r['runs'], r['between_run_rsd']) for r in rows]}, {repeats}")
        # --samples: every kept sweep's 50 timed samples, none beyond the slowest the row reports.
        expect(all(len(r["samples_s"]) == 50 * runs and 0 < max(r["samples_s"]) <= r["time_max_s"] * 1.0001
                   for r in rows),
               f"--samples: {[len(r.get('samples_s', [])) for r in rows]} samples per row, expected {50 * runs}")
        expect(len(read_csv(t / "rep.csv")) == 6, "--repeat 3: CSV rows")
        document = json.load(open(t / "rep.json"))
        for row in document["rows"]:
            for key in row:
                if key.endswith("bytes_per_s"):
                    row[key] *= 0.7
                elif key.startswith("time_") and key.endswith("_s"):
                    row[key] /= 0.7
        (t / "rep-cut.json").write_text(json.dumps(document))
        result = tool(runner, "fb_compare", [t / "rep.json", t / "rep-cut.json", "--json", t / "crep.json"])
        report = json.load(open(t / "crep.json"))
        kinds = {r["uncertainty"] for r in report["rows"]}
        words = {r["verdict"] for r in report["rows"]}
        expect(kinds == {"between-run"} and report["t"] > report["z"] > 0 and words <= {"SLOWER", "UNSURE"}
               and (result.returncode == 1) == ("SLOWER" in words),
               f"--repeat baseline against a 30 % drop: exit {result.returncode}, {kinds}, {words}\n"
               f"{result.stdout[-1500:]}")
        # Three runs resolve a 30 % drop only when they agree: a machine busy enough that they differ
        # by ~20 % (a build beside the test) makes it UNSURE, which is the honest answer, not a miss.
        resolvable = report["t"] * report["pooled_spread"] * (2 / runs) ** 0.5 < 0.25
        if not resolvable:
            print(f"--repeat 3: runs {report['pooled_spread']:.1%} apart, too busy to resolve a 30 % drop with {runs} "
                  f"runs a side: {sorted(words)}, exit {result.returncode}, said as such")
        expect(not resolvable or result.returncode == 1,
               f"--repeat baseline against a 30 % drop, runs {report['pooled_spread']:.1%} apart: exit "
               f"{result.returncode}\n{result.stdout[-1500:]}")
        if resolvable:
            print(f"--repeat 3: {len(rows)} rows with runs={runs} and their spread; a 30 % drop: exit 1 "
                  f"({sum(r['verdict'] == 'SLOWER' for r in report['rows'])} of 6 SLOWER, t = {report['t']:.2f} "
                  f"on {report['spread_degrees_of_freedom']:g} df, pooled spread {report['pooled_spread'] * 100:.1f} %)")

        # fb_history: one real run as three history entries a few percent apart, then three at 60 %
        # (later start times, a new tag): one level change, SLOWER from run 4, exit 1; the first three
        # alone: exit 0; two: exit 2. One run, not three: under a loaded CI machine three real runs of
        # this size differ by 2x, and a detector that calls that scatter a level change is wrong.
        result = runner.run("all_reduce", 2, ["-b", "64K", "-e", "1M", "-f", "4", "-n", "30",
                                              "--json", t / "hist-real.json"])
        expect(result.returncode == 0, f"history run: exit {result.returncode}\n{result.stderr}")
        history = []
        for i, factor in enumerate([1.0, 0.98, 1.02, 0.6, 0.59, 0.61]):
            document = json.load(open(t / "hist-real.json"))
            document["context"]["start_time"] = f"2099-01-0{i + 1}T00:00:00Z"
            document["context"]["launch_id"] = f"history-{i + 1}"  # six launches, not one run six times
            for row in document["rows"]:
                if factor < 0.9:
                    row["tags"] = "driver=580"
                for key in row:
                    if key.endswith("bytes_per_s"):
                        row[key] *= factor
                    elif key.startswith("time_") and key.endswith("_s"):
                        row[key] /= factor
            (t / f"hist{i + 1}.json").write_text(json.dumps(document))
            history.append(t / f"hist{i + 1}.json")
        result = tool(runner, "fb_history", history + ["--json", t / "history.json", "--csv", t / "history.csv"])
        doc = json.load(open(t / "history.json"))
        changes = [(s["name"], c["run"], c["verdict"]) for s in doc["series"] for c in s["changes"]]
        expect(result.returncode == 1 and doc["first_regression_run"] == 3 and changes and
               all(c[1:] == (3, "SLOWER") for c in changes) and "REGRESSION: first in run 4" in result.stdout,
               f"fb_history on a planted 40 % drop: exit {result.returncode}, {changes}\n{result.stdout[-1500:]}")
        expect(len(read_csv(t / "history.csv")) == 6 * len(doc["series"]), "fb_history CSV lines")
        result = tool(runner, "fb_history", history[:3])
        expect(result.returncode == 0 and "# OK: no level got slower" in result.stdout,
               f"fb_history on three unchanged runs: exit {result.returncode}\n{result.stdout[-800:]}")
        result = tool(runner, "fb_history", history[:2])
        expect(result.returncode == 2 and "3 runs or more" in result.stderr, f"fb_history on two runs: {result.stderr}")
        print(f"fb_history: 3 copies of a real run + 3 at 60 %: exit 1, {len(changes)} level(s) SLOWER from run 4; "
              f"3 unchanged: exit 0; 2 runs: exit 2")

        env = dict(runner.env, FABRICBENCH_BASELINES=str(t / "baselines"))
        saved = subprocess.run([str(runner.bin_dir / "fb_compare"), "--save-baseline", "vm-np2", str(t / "base.json")],
                               env=env, capture_output=True, text=True)
        named = subprocess.run([str(runner.bin_dir / "fb_compare"), "@vm-np2", str(t / "drop.json")], env=env,
                               capture_output=True, text=True)
        expect(saved.returncode == 0 and named.returncode == 1, f"named baseline: {saved.stderr} {named.stderr}")
        print("named baseline: saved, then @vm-np2 against the drop: exit 1")

        # Figures no measurement has: an infinite bandwidth, a negative time, a NaN; and flags that
        # are no numbers. Each: one line naming what, exit 2, never a verdict.
        for key, value, fragment in [("busbw_mean_bytes_per_s", "Infinity", "not valid JSON"),
                                     ("busbw_median_bytes_per_s", 1e400, "not valid JSON"),
                                     ("time_mean_s", -1.0, "'time_mean_s' is -1"),
                                     ("time_median_s", -0.5, "'time_median_s' is -0.5"),
                                     ("busbw_median_bytes_per_s", 1e308, "'busbw_median_bytes_per_s' is 1e+308, beyond the"),
                                     ("time_mean_s", 3e7, "beyond the 1e+06 seconds")]:
            text = (t / "base.json").read_text()
            document = json.loads(text)
            document["rows"][0][key] = "__VALUE__"
            (t / "hostile.json").write_text(json.dumps(document).replace('"__VALUE__"', str(value)))
            result = tool(runner, "fb_compare", [t / "base.json", t / "hostile.json"])
            expect(result.returncode == 2 and len(own_lines(result.stderr)) == 1 and fragment in result.stderr,
                   f"{key} = {value}: exit {result.returncode} {result.stderr}")
        # A figure the baseline has and the new run lacks (null: a refused setting's row) is a
        # verdict that could not be made: it fails closed, exit 1, and says which row.
        document = json.loads((t / "base.json").read_text())
        for key in ("time_mean_s", "time_median_s", "busbw_mean_bytes_per_s", "busbw_median_bytes_per_s",
                    "algbw_mean_bytes_per_s", "algbw_median_bytes_per_s"):
            document["rows"][0][key] = None
        (t / "lost.json").write_text(json.dumps(document))
        result = tool(runner, "fb_compare", [t / "base.json", t / "lost.json"])
        expect(result.returncode == 1 and "# FAILED CLOSED: 0 SLOWER" in result.stdout and
               "# failed closed: 1 row(s) the baseline measured have no figure in the new run" in result.stdout,
               f"a row without a figure in the new run: exit {result.returncode}\n{result.stdout[-800:]}")
        result = tool(runner, "fb_compare", [t / "lost.json", t / "base.json"])
        expect(result.returncode == 0 and "failed closed" not in result.stdout,
               f"a baseline row without a figure: exit {result.returncode}\n{result.stdout[-800:]}")
        print("a row the new run has no figure for: FAILED CLOSED, exit 1; the other way round: not compared, exit 0")
        for flags in (["--noise-sigmas", "inf"], ["--noise-sigmas", "0"], ["--threshold", "nan"],
                      ["--confidence", "-5"]):
            result = tool(runner, "fb_compare", [t / "base.json", t / "drop.json"] + flags)
            expect(result.returncode == 2 and len(own_lines(result.stderr)) == 1 and flags[0] in result.stderr,
                   f"fb_compare {flags}: exit {result.returncode} {result.stderr}")
        result = tool(runner, "fb_history", history + ["--threshold", "inf"])
        expect(result.returncode == 2 and "--threshold" in result.stderr, f"fb_history --threshold inf: {result.stderr}")
        print("infinite, negative, NaN and out-of-range figures in a run, and non-finite flags: one line each, exit 2")

        for source in ["nccl-tests/all_reduce_perf_2ranks.txt", "nccl-tests/all_reduce_perf.json",
                       "perftest/ib_write_bw_gbits.txt", "perftest/ib_write_lat.json", "gbench/host_memcpy_h200.json"]:
            stem = source.replace("/", "_")
            result = tool(runner, "fb_import", [data / source, "--csv", t / f"{stem}.csv", "--json", t / f"{stem}.json"])
            expect(result.returncode == 0 and read_csv(t / f"{stem}.csv"), f"import {source}: {result.stderr}")
            result = tool(runner, "fb_compare", [data / source, t / f"{stem}.json"])
            expect(result.returncode == 0, f"{source} against its import: exit {result.returncode} {result.stderr}")
        # nccl-tests -c 0 checks nothing (#wrong N/A): the import's totals say so, as a -c 0 run's do.
        unchecked = []
        for line in open(data / "nccl-tests/all_reduce_perf_2ranks.txt").read().splitlines():
            fields = line.split()
            if len(fields) == 13 and fields[0].isdigit():
                fields[8] = fields[12] = "N/A"
                line = "  ".join(fields)
            unchecked.append(line)
        (t / "unchecked.txt").write_text("\n".join(unchecked) + "\n")
        result = tool(runner, "fb_import", [t / "unchecked.txt", "--json", t / "unchecked.json"])
        imported = json.load(open(t / "unchecked.json")) if result.returncode == 0 else {}
        expect(imported and imported["totals"]["wrong_total"] == -1 and all(r["wrong"] == -1 for r in imported["rows"]),
               f"import of an unchecked nccl-tests log: exit {result.returncode} {result.stderr}")
        print("fb_import: nccl-tests text and JSON, perftest text and JSON, Google Benchmark JSON; -c 0 logs unchecked")

        (t / "empty.json").write_text("")
        (t / "truncated.json").write_text(open(t / "real.json").read()[:500])
        (t / "foreign.txt").write_text("hello, world\n")
        future = json.load(open(t / "real.json"))
        future["schema_version"] = 99
        (t / "future.json").write_text(json.dumps(future))
        mixed = open(data / "perftest/ib_write_bw_gbits.txt").read() + open(data / "perftest/ib_read_bw_mbs.txt").read()
        (t / "mixed.txt").write_text(mixed)
        cases = {"missing": (t / "nope.json", "no such file"), "empty": (t / "empty.json", "empty"),
                 "truncated": (t / "truncated.json", "truncated"), "foreign": (t / "foreign.txt", "not a result"),
                 "future schema": (t / "future.json", "newer"), "mixed units": (t / "mixed.txt", "mixed units")}
        for name, (path, fragment) in cases.items():
            out = t / f"out-{name.replace(' ', '-')}.json"
            result = tool(runner, "fb_compare", [t / "base.json", path, "--json", out])
            lines = [l for l in result.stderr.splitlines() if l.strip()]
            expect(result.returncode == 2 and len(lines) == 1 and fragment in lines[0] and not out.exists()
                   and not Path(str(out) + ".partial").exists(),
                   f"{name}: exit {result.returncode}, {lines}")
            print(f"bad file ({name}): exit 2, {lines[0]}")


def test_sweep(runner, _):
    """fb_sweep: one real mpirun launch per setting (Open MPI's all_reduce algorithm x a PML, one
    of which does not exist), merged into one run with the settings in its rows; the failed
    launches recorded with their reason, not fatal."""
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "sweep"
        result = subprocess.run([str(runner.bin_dir / "fb_sweep"), "--var", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                                 "--var", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4", "--var", "OMPI_MCA_pml=ob1,bogus",
                                 "--out", str(prefix), "--timeout", "120", "--",
                                 runner.mpirun, "-np", "2", str(runner.bin_dir / "fb_all_reduce"),
                                 "-b", "1K", "-e", "256K", "-f", "16", "-n", "5"],
                                env=runner.env, capture_output=True, text=True, timeout=600)
        expect(result.returncode == 1, f"fb_sweep: exit {result.returncode}, expected 1 (two launches fail)\n{result.stdout}\n{result.stderr}")
        rows = read_csv(f"{prefix}.csv")
        settings = {r["settings"] for r in rows}
        expect(settings == {"OMPI_MCA_coll_tuned_use_dynamic_rules=1;OMPI_MCA_coll_tuned_allreduce_algorithm=1;OMPI_MCA_pml=ob1",
                            "OMPI_MCA_coll_tuned_use_dynamic_rules=1;OMPI_MCA_coll_tuned_allreduce_algorithm=4;OMPI_MCA_pml=ob1"},
               f"settings columns: {settings}")
        expect(all(int(r["wrong"]) == 0 for r in rows) and len(rows) == 2 * 3 * 2, f"{len(rows)} rows")
        launches = json.load(open(f"{prefix}.json"))["context"]["sweep"]["launches"]
        failures = [l for l in launches if "failure" in l]
        expect(len(launches) == 4 and len(failures) == 2 and all("bogus" in l["setting"] for l in failures),
               f"launch record: {launches}")
        table = [l for l in result.stdout.splitlines() if "all_reduce float sum out-of-place" in l]
        expect(len(table) == 3 and all(l.split()[-2] == "failed" or "failed" in l for l in table), f"side by side: {table}")
        print(f"fb_sweep: 4 launches, 2 failed with '{failures[0]['failure'][:80]}', {len(rows)} rows merged")
        print("\n".join(table))
        # A launch that moved wrong data: the merged run's totals say so as its rows do, and the
        # readers judge it WRONG DATA (exit 1), never refuse the sweep's own file.
        wrapper = Path(tmp) / "maybe_wrong.sh"
        wrapper.write_text(f'#!/bin/sh\n[ "$FB_X" = 2 ] && set -- "$@" --inject-fault wrong:1\n'
                           f'exec {runner.bin_dir / "fb_all_reduce"} "$@"\n')
        wrapper.chmod(0o755)
        wrong = Path(tmp) / "wrong"
        swept = subprocess.run([str(runner.bin_dir / "fb_sweep"), "--var", "FB_X=1,2", "--out", str(wrong), "--timeout",
                                "120", "--", runner.mpirun, "-np", "2", str(wrapper), "-b", "8", "-e", "64", "-n", "5"],
                               env=runner.env, capture_output=True, text=True, timeout=300)
        merged = json.load(open(f"{wrong}.json"))
        found = sum(max(r["wrong"], 0) for r in merged["rows"])
        expect(swept.returncode == 1 and found > 0 and merged["totals"]["wrong_total"] == found,
               f"fb_sweep with wrong data: exit {swept.returncode}, rows {found}, totals {merged['totals']}")
        judged = subprocess.run([str(runner.bin_dir / "fb_compare"), f"{wrong}.json", f"{wrong}.json"],
                                env=runner.env, capture_output=True, text=True, timeout=120)
        expect(judged.returncode == 1 and "# WRONG DATA" in judged.stdout,
               f"fb_compare of a merged run with wrong data: exit {judged.returncode}\n{judged.stdout}{judged.stderr}")
        print(f"fb_sweep: a launch with wrong data merged with totals.wrong_total {found}, fb_compare says WRONG DATA")


GPU_MEMORY = ["cuda", "cuda-dmabuf", "staged"]
VERBS_PROGRAMS = [f"rdma_{op}_{metric}" for op in ("write", "read", "send") for metric in ("bw", "lat")]


def rdma_devices():
    root = Path("/sys/class/infiniband")
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def test_gpu_verbs(runner, _):
    """The verbs benchmarks on GPU memory. With an RDMA device: every program on every GPU memory
    kind, data verified. Without one (a GPU node with no HCA): each says so in one line, exit 2."""
    gpus = gpu_count()
    if gpus == 0:
        print("SKIP: no CUDA GPU on this machine (nvidia-smi -L lists none); run scripts/gpu-test.sh on a GPU node")
        sys.exit(SKIP)
    devices = rdma_devices()
    for memory in GPU_MEMORY:
        for program in VERBS_PROGRAMS if devices else ["rdma_write_bw"]:
            with tempfile.TemporaryDirectory() as tmp:
                result = runner.run(program, 2, ["--mem", memory, "-a", "-n", "50", "--csv", f"{tmp}/r.csv"])
                if not devices:
                    lines = own_lines(result.stderr)
                    expect(result.returncode == 2 and len(lines) == 1 and "no RDMA device" in lines[0]
                           and not os.path.exists(f"{tmp}/r.csv"),
                           f"{program} --mem {memory} without an RDMA device: exit {result.returncode}, {lines}")
                    print(f"{program} --mem {memory}, no RDMA device here: exit 2, {lines[0]}")
                    continue
                expect(result.returncode == 0, f"{program} --mem {memory}: exit {result.returncode}\n{result.stderr}")
                rows = read_csv(f"{tmp}/r.csv")
                expect(rows and all(int(r["wrong"]) == 0 and r["placement"] == memory for r in rows),
                       f"{program} --mem {memory}: rows {rows[:3]}")
                print(f"{program} --mem {memory} on {devices[0]}: {len(rows)} sizes, data verified")


def test_gpu_health(runner, _):
    """fb_health on a live GPU node: every GPU's copy bandwidth measured and judged, the all_reduce
    over the local GPUs run, a rules file's copy minimum applied; a stuck all_reduce ends as a FAIL
    naming it inside --budget."""
    gpus = gpu_count()
    if gpus == 0:
        print("SKIP: no CUDA GPU on this machine (nvidia-smi -L lists none); run scripts/gpu-test.sh on a GPU node")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as tmp:
        Path(f"{tmp}/node.rules").write_text(f"gpus = {gpus}\nmin_copy_gbps = 1\n")
        start = time.monotonic()
        result = tool(runner, "fb_health", ["--rules", f"{tmp}/node.rules", "--json", f"{tmp}/h.json"])
        wall = time.monotonic() - start
        expect(result.returncode in (0, 1), f"fb_health: exit {result.returncode}\n{result.stderr}")
        checks = json.load(open(f"{tmp}/h.json"))["checks"]
        copies = [c for c in checks if c["check"] == "gpu-copy"]
        expect(len(copies) == gpus and all(c["status"] == "PASS" for c in copies), f"gpu-copy checks: {copies}")
        rates = [float(x) for c in copies for x in re.findall(r"([0-9.]+) GB/s", c["detail"])]
        expect(len(rates) == 3 * gpus and all(r > 1 for r in rates), f"copy rates {rates}")  # to, from, on GPU
        reduce = [c for c in checks if c["check"] == "all_reduce"]
        expect(len(reduce) == 1 and reduce[0]["status"] in ("PASS", "INFO"), f"all_reduce check: {reduce}")
        print(f"fb_health: {len(checks)} checks in {wall:.1f} s; {copies[0]['detail']}; {reduce[0]['detail']}")

        start = time.monotonic()
        result = tool(runner, "fb_health", ["--budget", "15", "--inject-fault", "all_reduce-hang",
                                            "--json", f"{tmp}/hang.json"])
        wall = time.monotonic() - start
        line = result.stdout.strip()
        expect(result.returncode == 1 and "did not finish within" in line and wall < 15,
               f"stuck all_reduce: exit {result.returncode} after {wall:.1f} s: {line}")
        print(f"stuck all_reduce: exit 1 after {wall:.1f} s of a 15 s budget: {line}")


def test_contention(runner, _):
    """Two busy loops on a 2-core machine beside 2 ranks: the run says its ranks waited for a CPU,
    and fb_compare against a quiet run calls nothing it could explain a regression."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["-b", "4K", "-e", "1M", "-f", "4", "-n", "50"]
        quiet = runner.run("all_reduce", 2, args + ["--json", f"{tmp}/quiet.json"])
        expect(quiet.returncode == 0, f"quiet run: exit {quiet.returncode}\n{quiet.stderr}")
        hogs = [subprocess.Popen(["python3", "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
        try:
            busy = runner.run("all_reduce", 2, args + ["--json", f"{tmp}/busy.json"])
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        expect(busy.returncode == 0, f"busy run: exit {busy.returncode}\n{busy.stderr}")
        with open(f"{tmp}/busy.json") as f:
            contention = json.load(f)["summary"]["contention"]
        expect(0.2 < contention["runqueue_wait"] <= 1 and contention["slowdown"] > 1.25,
               f"ranks beside {len(hogs)} busy loops: {contention}")
        expect("# CPU contention        : rank " in busy.stdout, "no contention line in the summary")
        compared = subprocess.run([str(runner.bin_dir / "fb_compare"), f"{tmp}/quiet.json", f"{tmp}/busy.json"],
                                  capture_output=True, text=True, timeout=60)
        expect(compared.returncode in (0, 1) and "CPU contention while measuring" in compared.stdout,
               f"fb_compare: exit {compared.returncode}\n{compared.stdout}{compared.stderr}")
        slower = [line for line in compared.stdout.splitlines() if line.endswith("SLOWER")]
        with open(f"{tmp}/quiet.json") as f:  # the quiet run is contended too where other work runs beside
            quiet_slowdown = json.load(f)["summary"].get("contention", {}).get("slowdown", 1)
        allowance = max(0.0, 1 - max(quiet_slowdown, 1) / contention["slowdown"])
        for line in slower:  # only a drop beyond what contention explains may be called SLOWER
            high = float(line.split("..")[1].split("%")[0]) / 100
            expect(high < -allowance, f"SLOWER inside the contention allowance {allowance:.2f}: {line}")
        print(f"contention: ranks beside {len(hogs)} busy loops waited {contention['runqueue_wait']:.0%} "
              f"(slowdown bound {contention['slowdown']:.2f}x); fb_compare exit {compared.returncode}, "
              f"{len(slower)} row(s) SLOWER beyond it")

SYNTHETIC_TRACE = Path(__file__).resolve().parent / "data" / "replay" / "synthetic-4"
INSPECTOR_DUMP = Path(__file__).resolve().parent / "data" / "inspector" / "two-ranks"


def import_and_replay(runner, source, trace, ranks, imported_line):
    """fb_import SOURCE --trace TRACE, then fb_replay of it on the MPI backend: its rows."""
    imported = tool(runner, "fb_import", [source, "--trace", trace])
    expect(imported.returncode == 0 and imported_line in imported.stdout,
           f"fb_import {source} --trace: exit {imported.returncode}\n{imported.stdout}\n{imported.stderr}")
    print(imported.stdout.strip())
    result = Path(f"{trace}.json")
    replayed = runner.run("replay", ranks, [str(trace), "--backend", "mpi", "-n", "3", "--json", str(result)])
    expect(replayed.returncode == 0, f"replay of {trace}: exit {replayed.returncode}\n{replayed.stderr}")
    return json.load(open(result))["rows"]


def replay_two_group_patterns(runner, trace, folder):
    """The alltoallv trace's group again as a second group with every rank's part moved to the next
    rank: two patterns of Send/Recv of one size, which are two rows that fb_compare tells apart."""
    folder.mkdir()
    ranks = 4
    lines = [(trace / f"trace.rank{r}.jsonl").read_text().splitlines() for r in range(ranks)]
    for rank in range(ranks):
        moved = []
        for line in lines[(rank - 1) % ranks]:
            record = json.loads(line)
            if "op" in record:
                record["op"].update(group=1, peer=(record["op"]["peer"] + 1) % ranks, start_us=100.0)
                moved.append(json.dumps(record))
        (folder / f"trace.rank{rank}.jsonl").write_text("\n".join(lines[rank] + moved) + "\n")
    result = folder.with_suffix(".json")
    replayed = runner.run("replay", ranks, [str(folder), "--backend", "mpi", "-n", "2", "--json", str(result)])
    expect(replayed.returncode == 0, f"replay of two group patterns: exit {replayed.returncode}\n{replayed.stderr}")
    rows = json.load(open(result))["rows"]
    patterns = {r["settings"].split("pattern=")[1].split(";")[0] for r in rows if "pattern=" in r["settings"]}
    expect(len(rows) == 2 and len(patterns) == 2 and rows[0]["size_bytes"] == rows[1]["size_bytes"]
           and all(r["wrong"] == 0 for r in rows), f"two group patterns of one size: {rows}")
    compared = tool(runner, "fb_compare", [result, result])
    expect(compared.returncode == 0 and "of 2 matched rows" in compared.stdout,
           f"fb_compare of a replay with two group patterns: exit {compared.returncode}\n{compared.stdout}"
           f"{compared.stderr}")
    print(f"two group patterns of {rows[0]['size_bytes']} B: two rows, compared with themselves")


def test_replay(runner, _):
    """fb_replay of the synthetic 4-rank trace on the MPI backend: every recorded communicator made
    again, every operation's data checked, a row per (communicator, operation, size); --gaps; a
    replay compared with another; traces it must refuse with one line."""
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        args = [str(SYNTHETIC_TRACE), "--backend", "mpi", "-n", "3", "--json", t / "a.json", "--csv", t / "a.csv"]
        result = runner.run("replay", 4, [str(a) for a in args])
        expect(result.returncode == 0, f"replay: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
        document = json.load(open(t / "a.json"))
        rows = document["rows"]
        by_comm = {}
        for r in rows:
            by_comm.setdefault(r["settings"].split("comm=")[1].split(";")[0], []).append(r)
        expect(len(rows) == 6 and sorted(len(v) for v in by_comm.values()) == [1, 1, 4],
               f"replay rows per communicator: {[(k, [r['collective'] for r in v]) for k, v in by_comm.items()]}")
        expect(all(r["wrong"] == 0 and r["call"].startswith("MPI_") for r in rows),
               f"replay: wrong/call {[(r['collective'], r['wrong'], r['call']) for r in rows]}")
        world = {r["collective"]: r for r in by_comm["7f3a0c11d2e4b509"]}
        expect(sorted(world) == ["all_gather", "all_reduce", "broadcast", "reduce_scatter"]
               and world["reduce_scatter"]["dtype"] == "double" and world["broadcast"]["root"] == 0
               and world["all_reduce"]["ranks"] == 4 and world["all_reduce"]["samples"] == 6
               and world["all_reduce"]["occurrences"] == 2 and world["all_reduce"]["recorded_median_s"] == 600e-6,
               f"the world communicator's rows: {world}")
        pair = by_comm["1c9e55aa03b7f610"][0]
        expect(pair["ranks"] == 2 and pair["occurrences"] == 4 and pair["samples"] == 12, f"a pair's row: {pair}")
        summary = document["summary"]["replay"]
        expect(summary["mode"] == "back-to-back" and [s["step"] for s in summary["steps"]] == [0, 1]
               and summary["replayed_over_recorded"] > 0, f"replay summary: {summary}")
        expect("# Replay                : 2 step(s) of rank 0, back to back" in result.stdout,
               f"replay console: {result.stdout}")
        print(next(line for line in result.stdout.splitlines() if line.startswith("# Replay ")))
        gaps = runner.run("replay", 4, [str(SYNTHETIC_TRACE), "--backend", "mpi", "-n", "2", "--gaps", "--json",
                                        str(t / "b.json")])
        expect(gaps.returncode == 0, f"replay --gaps: exit {gaps.returncode}\n{gaps.stderr}")
        b = json.load(open(t / "b.json"))
        expect(all("gaps=recorded" in r["settings"] for r in b["rows"]) and b["summary"]["replay"]["mode"] ==
               "recorded-gaps" and b["context"]["gaps_held_by"] == "host", "replay --gaps: settings and mode")
        compared = tool(runner, "fb_compare", [t / "a.json", t / "a.json"])
        expect(compared.returncode == 0 and "of 6 matched rows" in compared.stdout,
               f"fb_compare of a replay with itself: exit {compared.returncode}\n{compared.stdout}")
        # Refused with one line and exit 2: another world size, a damaged line, a FIFO, a huge file.
        wrong_size = runner.run("replay", 2, [str(SYNTHETIC_TRACE), "--backend", "mpi"], timeout=60)
        lines = own_lines(wrong_size.stderr)
        expect(wrong_size.returncode == 2 and len(lines) == 1 and "recorded on 4 ranks" in lines[0],
               f"replay on 2 ranks: exit {wrong_size.returncode}, {lines}")
        cases = {"damaged": ("garbage {", "not a JSON object"), "fifo": (None, "regular file"),
                 "huge": (600 << 20, "more than the")}
        for name, (content, fragment) in cases.items():
            folder = t / name
            folder.mkdir()
            for rank in range(4):
                target = folder / f"trace.rank{rank}.jsonl"
                if rank == 1 and content is None:
                    os.mkfifo(target)
                elif rank == 1 and isinstance(content, int):
                    with open(target, "wb") as f:
                        f.truncate(content)  # sparse: nothing read, refused by its size
                else:
                    source = (SYNTHETIC_TRACE / f"trace.rank{rank}.jsonl").read_text()
                    target.write_text(source + content + "\n" if rank == 1 else source)
            refused = runner.run("replay", 4, [str(folder), "--backend", "mpi", "--csv", str(t / f"{name}.csv")],
                                 timeout=60)
            lines = own_lines(refused.stderr)
            expect(refused.returncode == 2 and len(lines) == 1 and fragment in lines[0]
                   and not (t / f"{name}.csv").exists(),
                   f"replay of a {name} trace: exit {refused.returncode}, {lines}")
            print(f"exit 2: {name} trace\n    {lines[0]}")
        # A type the backend lacks (MPI has no bfloat16): refused before anything connects.
        folder = t / "bfloat16"
        folder.mkdir()
        for rank in range(4):
            text = (SYNTHETIC_TRACE / f"trace.rank{rank}.jsonl").read_text()
            (folder / f"trace.rank{rank}.jsonl").write_text(text.replace('"type":"double"', '"type":"bfloat16"'))
        refused = runner.run("replay", 4, [str(folder), "--backend", "mpi"], timeout=60)
        lines = own_lines(refused.stderr)
        expect(refused.returncode == 2 and len(lines) == 1 and "the mpi backend cannot" in lines[0],
               f"replay of bfloat16 on MPI: exit {refused.returncode}, {lines}")
        print(f"exit 2: bfloat16 on the MPI backend\n    {lines[0]}")
        # NCCL settings need the NCCL backend: one line, exit 2.
        refused = runner.run("replay", 4, [str(SYNTHETIC_TRACE), "--backend", "mpi", "--proto", "LL"], timeout=60)
        lines = own_lines(refused.stderr)
        expect(refused.returncode == 2 and len(lines) == 1 and "--algo/--proto" in lines[0],
               f"replay --proto on MPI: exit {refused.returncode}, {lines}")
        # NCCL Inspector's output made a trace by fb_import, replayed with its data checked.
        rows = import_and_replay(runner, INSPECTOR_DUMP, t / "from-inspector", 2, "2 rank(s), 16 operation(s) imported")
        again = tool(runner, "fb_import", [INSPECTOR_DUMP, "--trace", t / "from-inspector"])
        expect(again.returncode == 2 and "already holds a trace" in again.stderr,
               f"fb_import --trace into a trace: exit {again.returncode}, {again.stderr}")
        expect(sorted((r["collective"], r["size_bytes"]) for r in rows) ==
               [("all_gather", 131072), ("all_reduce", 1048576), ("all_reduce", 4194304), ("broadcast", 4096)]
               and all(r["wrong"] == 0 and r["dtype"] == "int8" for r in rows),
               f"Inspector import rows: {[(r['collective'], r['size_bytes'], r['wrong']) for r in rows]}")
        # An nccl-tests alltoallv traffic matrix made a trace: one group of Send/Recv per rank,
        # skewed sizes, each rank's received bytes checked against what its senders sent.
        matrix = Path(__file__).resolve().parent / "data" / "alltoallv" / "four-ranks.txt"
        rows = import_and_replay(runner, matrix, t / "alltoallv", 4, "4 rank(s), 24 operation(s) imported")
        expect(len(rows) == 1 and rows[0]["collective"] == "send_recv_group" and rows[0]["wrong"] == 0
               and rows[0]["size_bytes"] == 1024 + 512 + 262144 and rows[0]["call"] == "MPI_Isend+MPI_Irecv",
               f"alltoallv replay rows: {rows}")
        replay_two_group_patterns(runner, t / "alltoallv", t / "two-patterns")
        bad = t / "bad-matrix.txt"
        bad.write_text("16 16\n16 nan\n")
        refused = tool(runner, "fb_import", [bad, "--trace", t / "bad-trace"])
        lines = own_lines(refused.stderr)
        expect(refused.returncode == 2 and len(lines) == 1 and "'nan' is not a number" in lines[0]
               and not (t / "bad-trace").exists(), f"fb_import of a bad matrix: exit {refused.returncode}, {lines}")
        # fb_sweep over a replay: one launch per setting (Open MPI's all_reduce algorithm here,
        # NCCL_PROTO on a GPU), the replays' rows merged with the setting beside each communicator.
        prefix = t / "sweep"
        swept = subprocess.run([str(runner.bin_dir / "fb_sweep"), "--var", "OMPI_MCA_coll_tuned_use_dynamic_rules=1",
                                "--var", "OMPI_MCA_coll_tuned_allreduce_algorithm=1,4", "--out", str(prefix),
                                "--timeout", "120", "--", runner.mpirun, "-np", "4",
                                str(runner.bin_dir / "fb_replay"), str(SYNTHETIC_TRACE), "--backend", "mpi", "-n", "2"],
                               env=runner.env, capture_output=True, text=True, timeout=300)
        expect(swept.returncode == 0, f"fb_sweep over fb_replay: exit {swept.returncode}\n{swept.stdout}\n{swept.stderr}")
        rows = read_csv(f"{prefix}.csv")
        per_setting = {}
        for r in rows:
            per_setting.setdefault(r["settings"].split("OMPI_MCA_coll_tuned_allreduce_algorithm=")[1], []).append(r)
        expect(sorted(per_setting) == ["1", "4"] and all(len(v) == 6 for v in per_setting.values())
               and all("comm=" in r["settings"] and int(r["wrong"]) == 0 for r in rows),
               f"fb_sweep over fb_replay rows: {[(r['collective'], r['settings'], r['wrong']) for r in rows]}")
        print(f"fb_sweep over fb_replay: 2 launches, {len(rows)} rows merged")


TESTS = {
    "gpu": test_gpu,
    "gpu-health": test_gpu_health,
    "gpu-verbs": test_gpu_verbs,
    "compare": test_compare,
    "contention": test_contention,
    "sweep": test_sweep,
    "correctness": test_correctness,
    "gloo": test_gloo,
    "types": test_types,
    "fault-wrong": test_fault_wrong,
    "fault-hang": test_fault_hang,
    "bad-input": test_bad_input,
    "fault-error": test_fault_error,
    "interrupted": test_interrupted,
    "adaptive": test_adaptive,
    "matrix-schedules": test_matrix_schedules,
    "load-patterns": test_load_patterns,
    "replay": test_replay,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--collectives", required=True, help="comma-separated, from CMake's FABRICBENCH_COLLECTIVES")
    parser.add_argument("test", choices=sorted(TESTS))
    parser.add_argument("argument", nargs="?")
    options = parser.parse_args()
    COLLECTIVES.extend(options.collectives.split(","))
    try:
        TESTS[options.test](Runner(options.bin, options.mpirun), options.argument)
    except Skip as why:
        print(f"SKIP: {why}")
        return 77
    except (Failure, subprocess.TimeoutExpired) as error:
        print(f"FAIL: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
