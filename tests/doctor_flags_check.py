#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Misuse of fb_doctor's and fb_health's new flags and rules (the counter interval, the rendezvous,
the peer port, the reach timeout, --topology; min_pcie_width, min_pcie_gen, min_max_map_count,
min_open_files, max_link_errors_per_hour) and of the rendezvous in the environment: each is exit 2
(nagios 3) with one line on stderr naming what is wrong, and nothing written."""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo"}

DOCTOR = [(["--counter-interval", "nan"], "--counter-interval: 'nan' is not a number"),
          (["--counter-interval", "-1"], "--counter-interval: '-1' is out of range (must be 0 to 3600)"),
          (["--counter-interval", "inf"], "--counter-interval: 'inf' is not finite"),
          (["--peer-port", "0"], "--peer-port: '0' is out of range (must be 1 to 65535)"),
          (["--peer-port", "70000"], "--peer-port: '70000' is out of range (must be 1 to 65535)"),
          (["--peer-port", "http"], "--peer-port: 'http' is not a number"),
          (["--reach-timeout", "0"], "--reach-timeout: '0' is out of range (must be 0.1 to 60)"),
          (["--reach-timeout", "nan"], "--reach-timeout: 'nan' is not a number"),
          (["--rendezvous", "mhnode1"], "--rendezvous: 'mhnode1' is not HOST:PORT"),
          (["--rendezvous", ":29500"], "--rendezvous: ':29500' is not HOST:PORT"),
          (["--rendezvous", "mhnode1:0"], "--rendezvous port: '0' is out of range (must be 1 to 65535)"),
          (["--rendezvous", "mhnode1:nan"], "--rendezvous port: 'nan' is not a number"),
          (["--topology=maybe"], "--topology"),
          ({"MASTER_ADDR": "mhnode1", "MASTER_PORT": "http"}, "MASTER_ADDR/MASTER_PORT port: 'http' is not a number"),
          ({"NCCL_COMM_ID": "mhnode1"}, "NCCL_COMM_ID: 'mhnode1' is not HOST:PORT")]

HEALTH = [(["--counter-interval", "nan"], "--counter-interval: 'nan' is not a number"),
          (["--counter-interval", "3601"], "--counter-interval: '3601' is out of range (must be 0 to 3600)")]

RULES = [("min_pcie_width", "x16", "is not a number"), ("min_pcie_width", "0", "is out of range (must be 1 to 32)"),
         ("min_pcie_gen", "9", "is out of range (must be 1 to 7)"), ("min_pcie_gen", "4.5", "is not a whole number"),
         ("min_max_map_count", "1.5", "is not a whole number"),
         ("min_max_map_count", "inf", "is not finite"),
         ("min_open_files", "-1", "is out of range (must be 0 to 2147483647)"),
         ("max_link_errors_per_hour", "nan", "is not a number"),
         ("max_link_errors_per_hour", "-3", "is out of range (must be 0 to 1e+12)")]


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def one_line_exit(command, env, code, message, out):
    result = subprocess.run([str(c) for c in command], capture_output=True, timeout=60, env=env)
    lines = [line for line in result.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if result.returncode != code or len(lines) != 1 or message not in lines[0] or out.exists():
        fail(f"{' '.join(str(c) for c in command[1:])}: exit {result.returncode} (expected {code}), stderr {lines}, "
             f"{out} written: {out.exists()}")
    return lines[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        for case, message in DOCTOR:
            env = dict(os.environ, **MPI_ENV)
            args = []
            if isinstance(case, dict):
                env.update(case)
            else:
                args = case
            # A singleton (no mpirun): mpirun adds its own lines about a rank's non-zero exit.
            line = one_line_exit([options.bin / "fb_doctor", "--json", out] + args, env, 2, message, out)
            print(f"fb_doctor {' '.join(args) or case}: exit 2, {line}")
        cases = list(HEALTH)
        for key, value, why in RULES:
            rules = Path(tmp) / f"{key}-{len(cases)}.rules"
            rules.write_text(f"# bad\n{key} = {value}\n")
            cases.append((["--rules", rules], f"{rules} line 2: {key}: '{value}' {why}"))
        for args, message in cases:
            for codes, code in (("default", 2), ("nagios", 3)):
                line = one_line_exit([options.bin / "fb_health", "--exit-codes", codes, "--json", out] + args,
                                     dict(os.environ), code, message, out)
            print(f"fb_health {' '.join(str(a) for a in args)}: exit 2 (nagios 3), {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
