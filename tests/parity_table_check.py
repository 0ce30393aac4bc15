#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/parity-table.py on a real parity run (an H100's 5 rounds, committed with its logs): the
table is rebuilt from the rounds' nccl-tests logs (through fb_import) and fabricbench CSVs to the
same figures, one rank's in-place cells (but sendrecv's) are left out of the goals, and the cells where fabricbench
reads faster are counted with their reason."""
import argparse
import csv
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = Path(__file__).resolve().parent.parent / "results/reference/h200-parity/2026-12-06-evening/parity"
FIGURES = ["collective", "placement", "size_bytes", "rounds", "fabricbench_us", "nccl_tests_us", "ratio", "ratio_min",
           "ratio_max", "call", "ranks"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=Path, required=True)
    options = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "parity"
        shutil.copytree(RUN, run)
        (run / "parity.csv").unlink()
        (run / "parity.md").unlink()
        result = subprocess.run([sys.executable, str(RUN.parents[4] / "scripts/parity-table.py"), str(run),
                                 str(options.bin / "fb_import")], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            sys.exit(f"FAIL: parity-table.py exited {result.returncode}: {result.stderr}")
        with open(run / "parity.csv", newline="") as f:
            rebuilt = [{k: row[k] for k in FIGURES} for row in csv.DictReader(f)]
        with open(RUN / "parity.csv", newline="") as f:
            committed = [{k: row[k] for k in FIGURES} for row in csv.DictReader(f)]
        if rebuilt != committed:
            failures.append(f"the table rebuilt from the logs differs from the committed one ({len(rebuilt)} rows "
                            f"against {len(committed)})")
        else:
            print(f"rebuilt from the 5 rounds' logs: {len(rebuilt)} cells, every figure as committed")
        text = (run / "parity.md").read_text()
        # 36 out-of-place cells and sendrecv's 4 in place (a kernel still runs); 32 no-ops left out.
        for expected in ("from 1 MiB, every size <= 1.02: 38 of 40 met; worst 1.025 (sendrecv out-of-place 64 MiB)",
                         "from 1 MiB, fabricbench faster by more than 2%: 18 of 40; fastest 0.800",
                         "one rank in place but sendrecv, not judged: 32 cells"):
            if expected in text:
                print(f"goals: '{expected}'")
            else:
                failures.append(f"parity.md lacks '{expected}':\n{text}")
    for failure in failures:
        print(f"FAIL: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
