#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fb_doctor and fb_health, the real executables, on what a hostile user can hand a root-run prolog:
a recorded tree (--root) with a FIFO, a socket, links to /dev/zero and out of the tree, and bytes
that are not UTF-8; flags and rules files with NaN, infinities and negative numbers; a FIFO as the
rules file. Nothing may hang, throw or write half a file; what is skipped is named. And the memlock
rule: a CPU-only node without RDMA is not failed for Debian's 8 MiB default."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo"}


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def run(command, timeout, env=None):
    start = time.monotonic()
    try:
        result = subprocess.run([str(c) for c in command], capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        fail(f"{Path(str(command[0])).name} did not finish within {timeout} s: {command}")
    return result, time.monotonic() - start


def strict_json(path):
    """The file as JSON, refusing anything that is not UTF-8 (as a strict reader would)."""
    return json.loads(Path(path).read_bytes().decode("utf-8"))


def stderr_lines(result):
    return [line for line in result.stderr.decode("utf-8", "replace").splitlines() if line.strip()]


def add_port(tree, state="4: ACTIVE"):
    port = tree / "sys/class/infiniband/mlx5_0/ports/1"
    port.mkdir(parents=True)
    (port / "state").write_text(f"{state}\n")
    (port / "phys_state").write_text("5: LinkUp\n")
    (port / "rate").write_text("100 Gb/sec (4X EDR)\n")
    (port / "link_layer").write_text("InfiniBand\n")
    return port


def hostile_tree(base, source):
    tree = base / "hostile"
    shutil.copytree(source, tree, symlinks=True)
    port = add_port(tree)
    (port / "rate").write_bytes(b"200 Gb/sec (4X \xff\xfe HDR)\n")
    (port / "link_layer").unlink()
    os.symlink("/dev/zero", port / "link_layer")
    (tree / "proc/self/limits").unlink()
    os.mkfifo(tree / "proc/self/limits")
    (tree / "proc/cmdline").unlink()
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tree / "proc/cmdline"))
    (tree / "proc/sys/kernel/osrelease").unlink()
    os.symlink("../../../../../../../../../../dev/zero", tree / "proc/sys/kernel/osrelease")
    return tree


SKIPPED = {"/proc/self/limits": "a FIFO", "/proc/cmdline": "a socket",
           "/sys/class/infiniband/mlx5_0/ports/1/link_layer": "a link out of the recorded tree (-> /dev/zero)",
           "/proc/sys/kernel/osrelease": "a link out of the recorded tree (.. above its root)"}


def check_skipped(details, who):
    for path, why in SKIPPED.items():
        expect(any(d.startswith(f"not read: {path}: {why}") for d in details), f"{who}: '{path}: {why}' not named in {details}")


def test_hostile_tree(options, tmp):
    tree = hostile_tree(tmp, options.tree)
    env = dict(os.environ, **MPI_ENV)
    doctor_json = tmp / "doctor.json"
    result, seconds = run([options.mpirun, "-np", "1", options.bin / "fb_doctor", "--root", tree, "--json", doctor_json],
                          60, env)
    expect(result.returncode in (0, 1), f"fb_doctor on the hostile tree: exit {result.returncode}\n{result.stderr.decode(errors='replace')}")
    findings = strict_json(doctor_json)["nodes"][0]["findings"]
    check_skipped([f["detail"] for f in findings if f["check"] == "skipped-file"], "fb_doctor")
    rate = [f["detail"] for f in findings if f["check"] == "rdma-port"]
    expect(rate and "(4X \ufffd\ufffd HDR)" in rate[0], f"fb_doctor: the rate's bad bytes not replaced: {rate}")
    print(f"fb_doctor --root (FIFO, socket, links to /dev/zero, \\xff): exit {result.returncode} in {seconds:.1f} s, "
          f"{len(SKIPPED)} files named as skipped")

    health_json, health_prom = tmp / "health.json", tmp / "health.prom"
    (tmp / "cpu.rules").write_text("gpus = 0\nhcas = 1\n")
    result, seconds = run([options.bin / "fb_health", "--root", tree, "--rules", tmp / "cpu.rules", "--budget", "5",
                           "--host", "node07", "--json", health_json, "--prom", health_prom], 30)
    expect(result.returncode in (0, 1) and seconds < 5,
           f"fb_health --budget 5 on the hostile tree: exit {result.returncode} after {seconds:.1f} s\n{result.stderr}")
    document = strict_json(health_json)
    check_skipped([c["detail"] for c in document["checks"] if c["check"] == "doctor:skipped-file"], "fb_health")
    health_prom.read_bytes().decode("utf-8")  # labels with the replaced bytes, UTF-8 as node_exporter wants
    expect(not list(tmp.glob("*.partial")), f"a .partial file was left: {list(tmp.glob('*.partial'))}")
    print(f"fb_health --budget 5 on it: exit {result.returncode} in {seconds:.1f} s, JSON and .prom valid UTF-8")


def test_inspection_within_budget(options, tmp):
    """A tree that takes longer to read than --budget: one GPU under 20,000 names (4,000 took
    5.4 s to inspect). The verdict is FAIL at the budget, never a prolog killed by Slurm."""
    tree = tmp / "slow"
    shutil.copytree(options.tree, tree, symlinks=True)
    gpu = tree / "sys/devices/pci0000:00/0000:00:06.0"
    gpu.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("numa_node", "0")):
        (gpu / name).write_text(value + "\n")
    links = tree / "sys/bus/pci/devices"
    links.mkdir(parents=True, exist_ok=True)
    for i in range(20000):
        os.symlink("../../../devices/pci0000:00/0000:00:06.0", links / f"0001:{i:04x}:00.0")
    health_json = tmp / "health.json"
    result, seconds = run([options.bin / "fb_health", "--root", tree, "--budget", "2", "--host", "node07",
                           "--json", health_json], 60)
    line = result.stdout.decode(errors="replace").strip()
    expect(result.returncode == 1 and seconds < 4 and "FAIL node07" in line and "--budget 2 s ran out" in line,
           f"fb_health --budget 2 on a tree slower to read: exit {result.returncode} after {seconds:.1f} s: {line}\n"
           f"{result.stderr.decode(errors='replace')}")
    checks = strict_json(health_json)["checks"]
    expect([c["check"] for c in checks] == ["inspection"], f"fb_health's JSON: {checks}")
    expect(not list(tmp.glob("*.partial")), f"a .partial file was left: {list(tmp.glob('*.partial'))}")
    print(f"fb_health --budget 2 on a tree slower to read than that: exit 1 in {seconds:.1f} s: {line}")


def test_memlock_rule(options, tmp):
    """vm-debian12: no GPU, no RDMA device, memlock 8 MiB."""
    rules = {"cpu-only": "gpus = 0\nhcas = 0\n", "wants-hca": "gpus = 0\nhcas = 1\n"}
    for name, text in rules.items():
        (tmp / f"{name}.rules").write_text(text)
    result, _ = run([options.bin / "fb_health", "--root", options.tree, "--rules", tmp / "cpu-only.rules", "--host", "cpu01"], 30)
    line = result.stdout.decode().strip()
    expect(result.returncode == 0 and line.startswith("fb_health: OK cpu01"),
           f"CPU-only node, no RDMA device, rules gpus = 0, hcas = 0: exit {result.returncode}: {line}")
    print(f"no RDMA device, none required: {line}")
    result, _ = run([options.bin / "fb_health", "--root", options.tree, "--rules", tmp / "wants-hca.rules", "--host", "cpu01"], 30)
    line = result.stdout.decode().strip()
    expect(result.returncode == 1 and line.startswith("fb_health: FAIL cpu01: max locked memory 8388608 bytes"),
           f"rules asking for an HCA: exit {result.returncode}: {line}")
    print(f"rules require RDMA: {line[:90]}...")
    with_hca = tmp / "with-hca"
    shutil.copytree(options.tree, with_hca, symlinks=True)
    add_port(with_hca)
    result, _ = run([options.bin / "fb_health", "--root", with_hca, "--rules", tmp / "cpu-only.rules", "--host", "cpu02"], 30)
    line = result.stdout.decode().strip()
    expect(result.returncode == 1 and "max locked memory 8388608 bytes: RDMA registrations will fail" in line,
           f"an RDMA device present: exit {result.returncode}: {line}")
    print(f"an RDMA device present: {line[:90]}...")


def test_bad_numbers(options, tmp):
    cases = [(["--budget", "nan"], "--budget: 'nan' is not a number"),
             (["--budget", "-5"], "--budget: '-5' is out of range (must be 1 to 3600)"),
             (["--budget", "inf"], "--budget: 'inf' is not finite")]
    for key, value, why in [("min_copy_gbps", "nan", "is not a number"), ("min_busbw_gbps", "inf", "is not finite"),
                            ("min_port_gbps", "-400", "is out of range (must be 0 to 100000)"),
                            ("gpus", "8.5", "is not a whole number")]:
        rules = tmp / f"{key}.rules"
        rules.write_text(f"# bad\n{key} = {value}\n")
        cases.append((["--rules", rules], f"{rules} line 2: {key}: '{value}' {why}"))
    fifo = tmp / "fifo.rules"
    os.mkfifo(fifo)
    cases.append((["--rules", fifo], f"--rules {fifo}: a FIFO, not a regular file"))
    out = tmp / "bad.json"
    for args, message in cases:
        for codes, code in (("default", 2), ("nagios", 3)):
            result, _ = run([options.bin / "fb_health", "--root", options.tree, "--exit-codes", codes, "--json", out] + args, 10)
            lines = stderr_lines(result)
            expect(result.returncode == code and len(lines) == 1 and message in lines[0] and not out.exists()
                   and not Path(f"{out}.partial").exists(),
                   f"fb_health {args} --exit-codes {codes}: exit {result.returncode}, {lines}")
        print(f"fb_health {' '.join(str(a) for a in args)}: exit 2 (nagios 3), {lines[0]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--tree", required=True, type=Path, help="tests/data/doctor/vm-debian12")
    options = parser.parse_args()
    for test in (test_hostile_tree, test_inspection_within_budget, test_memlock_rule, test_bad_numbers):
        with tempfile.TemporaryDirectory() as tmp:
            test(options, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
