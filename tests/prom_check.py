#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""--prom files through the real consumers: Debian's prometheus-node-exporter scrapes them from its
textfile directory (started on loopback, stopped by PID) and promtool lints them. A run tagged with
quotes, a backslash and a newline must come through as the same label value, and node_exporter must
report no textfile parse error."""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SKIP = 77
AWKWARD_TAG = 'note=say "hi" \\ twice\nthen stop'  # quotes, a backslash, a newline


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unescape(value):
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], value)


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def series(text, name):
    """[(labels dict, value)] of metric `name` in an exposition text."""
    found = []
    for line in text.splitlines():
        m = re.match(rf'^{name}(?:\{{(.*)\}})? (\S+)$', line)
        if m:
            labels = {k: unescape(v) for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or "")}
            found.append((labels, float(m.group(2))))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--tree", required=True, type=Path, help="a recorded sysfs tree for fb_health")
    options = parser.parse_args()
    exporter, promtool = shutil.which("prometheus-node-exporter"), shutil.which("promtool")
    if not exporter or not promtool:
        print("SKIP: prometheus-node-exporter or promtool missing (scripts/setup.sh --tests installs them)")
        return SKIP
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo")
    with tempfile.TemporaryDirectory() as tmp:
        textfiles = Path(tmp) / "textfile"
        textfiles.mkdir()
        run_prom = textfiles / "fabricbench_all_reduce.prom"
        result = subprocess.run([options.mpirun, "--oversubscribe", "-np", "2", str(options.bin / "fb_all_reduce"),
                                 "--backend", "mpi", "-b", "1K", "-e", "64K", "-f", "8", "--tag", AWKWARD_TAG,
                                 "--json", f"{tmp}/run.json", "--prom", str(run_prom)],
                                env=env, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            fail(f"fb_all_reduce --prom: exit {result.returncode}\n{result.stderr}")
        if list(textfiles.glob("*.partial")):
            fail("a .partial file was left in the textfile directory")
        compare_prom = textfiles / "fabricbench_compare.prom"
        result = subprocess.run([str(options.bin / "fb_compare"), f"{tmp}/run.json", f"{tmp}/run.json",
                                 "--prom", str(compare_prom)], capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            fail(f"fb_compare --prom of a run against itself: exit {result.returncode}\n{result.stderr}")
        health_prom = textfiles / "fabricbench_health.prom"
        # Rules that require an HCA: memlock is then judged (8 MiB on the VM's tree: FAIL).
        rules = Path(tmp) / "needs-rdma.rules"
        rules.write_text("hcas = 1\n")
        result = subprocess.run([str(options.bin / "fb_health"), "--root", str(options.tree), "--host", "node07",
                                 "--rules", str(rules), "--prom", str(health_prom)], capture_output=True, text=True,
                                timeout=60)
        if result.returncode != 1 or not result.stdout.startswith("fb_health: FAIL node07: max locked memory"):
            fail(f"fb_health --prom on the VM's tree (memlock 8 MiB): exit {result.returncode}\n{result.stdout}")
        for path in (run_prom, compare_prom, health_prom):
            lint = subprocess.run([promtool, "check", "metrics"], stdin=open(path), capture_output=True, text=True)
            if lint.returncode != 0 or lint.stdout.strip() or lint.stderr.strip():
                fail(f"promtool check metrics {path.name}: exit {lint.returncode}\n{lint.stdout}{lint.stderr}")

        port = free_port()
        daemon = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                                   "--collector.textfile", f"--collector.textfile.directory={textfiles}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            scraped = None
            for _ in range(100):
                try:
                    scraped = scrape(port)
                    break
                except OSError:
                    if daemon.poll() is not None:
                        fail(f"node_exporter exited {daemon.returncode}: {daemon.stderr.read()}")
                    time.sleep(0.1)
            if scraped is None:
                fail("node_exporter did not answer on 127.0.0.1 within 10 s")
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
        errors = series(scraped, "node_textfile_scrape_error")
        if not errors or any(value != 0 for _, value in errors):
            fail(f"node_exporter reports a textfile scrape error: {errors}\n{daemon.stderr.read()}")
        busbw = series(scraped, "fabricbench_busbw_bytes_per_second")
        sizes = sorted({int(labels["coll_msg_size_bytes"]) for labels, _ in busbw})
        if sizes != [1024, 8192, 65536] or len(busbw) != 6 or any(v <= 0 for _, v in busbw):
            fail(f"busbw series as scraped: {busbw}")
        if any(labels["tags"] != AWKWARD_TAG for labels, _ in busbw):
            fail(f"the tag did not survive: {[labels['tags'] for labels, _ in busbw][:1]!r}")
        if [labels for labels, _ in busbw][0]["coll"] != "AllReduce":
            fail("label coll is not NCCL's name of the collective")
        wrong = series(scraped, "fabricbench_wrong_elements")
        if len(wrong) != 6 or any(v != 0 for _, v in wrong):
            fail(f"wrong-element series: {wrong}")
        health = series(scraped, "fabricbench_health_status")
        if [(labels.get("hostname"), v) for labels, v in health] != [("node07", 2)]:
            fail(f"fabricbench_health_status as scraped: {health}")
        failed = series(scraped, "fabricbench_run_failed")
        # A run against itself: no change, so nothing SLOWER or FASTER (noisy rows may be UNSURE).
        counts = {labels["verdict"]: v for labels, v in series(scraped, "fabricbench_compare_rows")}
        regression = series(scraped, "fabricbench_compare_regression")
        if ([v for _, v in failed] != [0] or sum(counts.values()) != 6 or counts["SLOWER"] or counts["FASTER"]
                or [v for _, v in regression] != [0]):
            fail(f"run_failed {failed}, compare rows {counts}, regression {regression}")
        print(f"node_exporter 127.0.0.1:{port} scraped {len(scraped.splitlines())} lines: 6 busbw series "
              f"(1 KiB-64 KiB, both placements), the awkward tag intact, run_failed 0, compare {counts}, "
              f"fb_health's status 2 (FAIL), no textfile scrape error; promtool check metrics clean on all three files")
        print("e.g. " + next(line for line in scraped.splitlines()
                             if line.startswith("fabricbench_busbw_bytes_per_second"))[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main())
