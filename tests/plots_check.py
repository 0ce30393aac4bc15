#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders plots/fbplot.py's pictures and report from real stored runs (results/reference) and
checks them: valid PNG of the expected size, not blank, SVG that parses, a self-contained HTML
report; bad input gives one line and exit 2.

    plots_check.py --repo REPO --compare-bin build/bin/fb_compare
"""
import argparse
import csv
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib.image


def check_png(path, min_width, min_height):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= min_width and height >= min_height, f"{path}: {width}x{height}, expected at least {min_width}x{min_height}"
    pixels = matplotlib.image.imread(str(path))[:, :, :3]
    inked = (pixels.sum(axis=2) < 2.9).mean()  # share of pixels that are not (near) white
    assert pixels.std() > 0.05 and inked > 0.02, f"{path}: looks blank (std {pixels.std():.3f}, inked {inked:.3f})"
    return f"{width}x{height}, {inked * 100:.0f} % inked"


def run_together(commands, cwd, timeout=30, options=None):
    """Starts independent commands at once (most of each is Python's start-up) and collects
    {name: (exit, stderr lines)}; one still running at the timeout (a hang on a FIFO) is killed
    and reads as exit None. `options`: {name: Popen arguments} for a command that needs its own
    (a stdout, an environment, a working folder)."""
    options = options or {}
    started = {name: subprocess.Popen([str(a) for a in command], **{"cwd": cwd, "stdout": subprocess.DEVNULL,
                                                                     **options.get(name, {})},
                                      stderr=subprocess.PIPE, text=True) for name, command in commands.items()}
    results = {}
    for name, process in started.items():
        try:
            _, stderr = process.communicate(timeout=timeout)
            results[name] = (process.returncode, stderr.strip().splitlines())
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            results[name] = (None, [f"still running after {timeout} s"])
    return results


def replay_csv(reference, path, plottable):
    """An fb_replay-like CSV with a replayed call of count 0 (0 B, busbw 0) first; with `plottable`,
    a real run's rows after it."""
    with open(reference / "vm-mpi-np2/fixed-n20.csv", newline="") as source:
        reader = csv.DictReader(source)
        fields, rows = reader.fieldnames, [dict(row, benchmark="fb_replay") for row in reader]
    empty = dict(rows[0], size_bytes="0", count="0", **{f: "0" for f in fields if f.endswith("_bytes_per_s")})
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows([empty] + (rows if plottable else []))


def prepare_files(reference, folder):
    """The files the output and input cases need, in `folder`; whether a device node could be made."""
    run = folder / "run.json"
    shutil.copyfile(reference / "vm-mpi-np2/fixed-n20.json", run)
    os.link(run, folder / "hard.json")
    try:  # a clone of /dev/null: root only
        os.mknod(folder / "inplace.png", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        device = True
    except PermissionError:
        device = False
    (folder / "target.svg").write_text("old")
    os.symlink("target.svg", folder / "inplace.svg")
    os.mkfifo(folder / "fifo.html")
    os.mkfifo(folder / "in.json")
    (folder / "twin.svg").write_text("old")
    os.symlink("twin.svg", folder / "twin.png")
    (folder / "outdir").mkdir()
    (folder / "bw.png").mkdir()
    with open(folder / "big.json", "wb") as big:  # sparse: costs no disk
        big.truncate(513 << 20)
    replay_csv(reference, folder / "c0.csv", plottable=True)
    replay_csv(reference, folder / "zero.csv", plottable=False)
    for stem, source in (("half", "fixed-n20"), ("base", "adaptive-noise1")):  # runs of two halves, as written
        for suffix in (".csv", ".json"):
            shutil.copyfile(reference / f"vm-mpi-np2/{source}{suffix}", folder / f"{stem}{suffix}")
    os.link(folder / "half.csv", folder / "halfhard.csv")
    os.link(folder / "half.csv", folder / "hl.png")  # a figure's PREFIX.png that is the CSV half
    (folder / "sub").mkdir()
    os.symlink("../half.json", folder / "sub/link.json")  # its halves are its target's
    return device


def kernel_leftovers(names):
    """Those of `names` (files under /dev) that exist and are not devices: left by a run that wrote there.
    Removed, so that a failing check leaves /dev as it was."""
    left = [name for name in names if os.path.lexists(name) and stat.S_ISREG(os.lstat(name).st_mode)]
    for name in left:
        os.unlink(name)
    return left


def check_files_and_outputs(plot, reference, folder):
    """What fbplot writes to and reads from: a device, a FIFO or a symlink written in place and never
    replaced; its own input, the other half of an input run (its CSV beside its JSON, however spelled),
    a folder, two outputs of one file, a new file on a kernel filesystem (/dev/null.png), a FIFO, device
    or oversized input refused in one line before any work, with no .partial left; a replayed call of
    count 0 plotted around. Returns the number of failures."""
    device = prepare_files(reference, folder)
    original = (folder / "run.json").read_bytes()
    halves = {name: (folder / name).read_bytes() for name in ("half.csv", "base.csv", "half.json")}
    in_dev = [f"/dev/null{suffix}" for suffix in (".png", ".svg", ".png.partial", ".svg.partial")]
    in_dev = [name for name in in_dev if not os.path.lexists(name)]  # any there before are not this run's
    cases = {  # name: (arguments, expected exit, fragment of the one line of a refusal)
        "device and symlink --out written in place": (["latency", "run.json", "--out", "inplace"], 0, ""),
        "FIFO --out with no reader": (["report", "zero.csv", "--out", "fifo.html"], 2, "FIFO with no reader"),
        "own input spelled ./": (["report", "run.json", "--out", "./run.json"], 2, "same file as input run.json"),
        "own input by a hard link": (["report", "run.json", "--out", "hard.json"], 2, "same file as input run.json"),
        "PNG and SVG one file": (["bandwidth", "run.json", "--out", "twin"], 2, "one file"),
        "folder --out of the report": (["report", "run.json", "--out", "outdir"], 2, "'outdir' is a folder"),
        "folder at PREFIX.png": (["bandwidth", "run.json", "--out", "bw"], 2, "'bw.png' is a folder"),
        "input past 512 MiB": (["report", "big.json", "--out", "big.html"], 2, "more than the 512 MiB"),
        "FIFO input": (["report", "in.json", "--out", "in.html"], 2, "a FIFO, not a run file"),
        "replay with a call of count 0": (["report", "c0.csv", "--out", "c0.html"], 0, ""),
        "report of only 0 B rows": (["report", "zero.csv", "--out", "zero.html"], 0, ""),
        "latency of only 0 B rows": (["latency", "zero.csv", "--out", "zero"], 2, "nothing to plot"),
        "report onto a JSON input's CSV half": (["report", "half.json", "--out", "half.csv"], 2,
                                                "half.csv is the same file as half.csv, the CSV half of input "
                                                "half.json"),
        "report onto the baseline's CSV half": (["report", "half.json", "--baseline", "base.json", "--out",
                                                 "base.csv"], 2, "the CSV half of --baseline base.json"),
        "report onto a CSV input's JSON half": (["report", "half.csv", "--out", "./half.json"], 2,
                                                "the JSON half of input half.csv"),
        "CSV half by a hard link": (["report", "half.json", "--out", "halfhard.csv"], 2,
                                    "halfhard.csv is the same file as half.csv, the CSV half"),
        "CSV half of a symlinked input": (["report", "sub/link.json", "--out", "half.csv"], 2,
                                          "the CSV half of input sub/link.json"),
        "figure's PNG a hard link of the CSV half": (["latency", "half.json", "--out", "hl"], 2,
                                                     "hl.png is the same file as half.csv"),
        "figure PREFIX /dev/null": (["latency", "run.json", "--out", "/dev/null"], 2,
                                    "'/dev/null.png' would be a file in /dev, on the kernel's /dev filesystem"),
        "report under /proc": (["report", "run.json", "--out", "/proc/fbplot-check/x.html"], 2,
                               "on the kernel's /proc filesystem"),
        "report to /dev/null": (["report", "run.json", "--out", "/dev/null"], 0, ""),
    }
    # Some twenty matplotlib start-ups at once: 20 s on two cores under a load of 12, too near 30 s.
    results = run_together({name: plot + arguments for name, (arguments, _, _) in cases.items()}, folder,
                           timeout=120)
    dev_left = kernel_leftovers(in_dev)
    after = {
        "device and symlink --out written in place":
            (not device or stat.S_ISCHR((folder / "inplace.png").lstat().st_mode))
            and (folder / "inplace.svg").is_symlink() and "<svg" in (folder / "target.svg").read_text(),
        "FIFO --out with no reader": stat.S_ISFIFO((folder / "fifo.html").lstat().st_mode),
        "own input spelled ./": (folder / "run.json").read_bytes() == original,
        "own input by a hard link": (folder / "hard.json").read_bytes() == original,
        "PNG and SVG one file": (folder / "twin.svg").read_text() == "old",
        "FIFO input": not (folder / "in.html").exists(),
        "replay with a call of count 0": (folder / "c0.html").read_text().count("data:image/png;base64,") == 2,
        "report of only 0 B rows": "No pictures" in (folder / "zero.html").read_text() and "<table>" in
                                   (folder / "zero.html").read_text(),
        "report onto a JSON input's CSV half": (folder / "half.csv").read_bytes() == halves["half.csv"],
        "report onto the baseline's CSV half": (folder / "base.csv").read_bytes() == halves["base.csv"],
        "report onto a CSV input's JSON half": (folder / "half.json").read_bytes() == halves["half.json"],
        "CSV half by a hard link": (folder / "half.csv").read_bytes() == halves["half.csv"],
        "CSV half of a symlinked input": (folder / "half.csv").read_bytes() == halves["half.csv"],
        "figure's PNG a hard link of the CSV half": (folder / "half.csv").read_bytes() == halves["half.csv"]
                                                    and not (folder / "hl.svg").exists(),
        "figure PREFIX /dev/null": not dev_left,
        "report under /proc": not os.path.lexists("/proc/fbplot-check"),
        "report to /dev/null": stat.S_ISCHR(os.lstat("/dev/null").st_mode) and not dev_left,
    }
    leftovers = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.partial"))
    failures = 0
    for name, (_, expected, fragment) in cases.items():
        code, lines = results[name]
        one_line = expected == 0 or (len(lines) == 1 and fragment in lines[0] and lines[0].startswith("fbplot: error:"))
        if code == expected and one_line and after.get(name, True) and not leftovers:
            print(f"ok: {name}" + (f" -> {lines[0]}" if expected else "") + ("" if device or expected else
                                                                              " (no device node: not root)"))
        else:
            print(f"FAIL: {name}: exit {code} (expected {expected}) {lines[-3:]}; files as expected: "
                  f"{after.get(name, True)}; .partial left: {leftovers}")
            failures += 1
    return failures


def plant_tools(plot, folder):
    """The script alone in a folder (no tools beside it, no checkout around it), a working folder
    with an fb_compare planted where the working folder's build*/bin, ./ and an empty PATH entry
    would find it (each one leaves a marker when run), and an fb_compare that fails at run time.
    Returns (the lone script, the working folder, the marker, the failing fb_compare)."""
    alone, cwd, marker = folder / "alone", folder / "cwd", folder / "planted-fb_compare-ran"
    alone.mkdir()
    shutil.copyfile(plot[1], alone / "fbplot.py")
    for planted in (cwd / "build-x/bin", cwd / "build/bin", cwd):
        planted.mkdir(parents=True, exist_ok=True)
        (planted / "fb_compare").write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
        (planted / "fb_compare").chmod(0o755)
    failing = folder / "failing_compare"
    failing.write_text("#!/bin/sh\necho 'fb_compare: error: the disk went away' >&2\nexit 3\n")
    failing.chmod(0o755)
    return alone / "fbplot.py", cwd, marker, failing


def check_tools_and_streams(plot, reference, compare_bin, folder):
    """Which fb_compare runs and what its exit means, and an --out that is a standard stream: an
    fb_compare planted under the working folder never run (the one on PATH is); a baseline of
    another collective (fb_compare's exit 2) and a failing fb_compare (its exit 3) refused in one
    line with that exit and nothing written; /dev/stdout appended to the file standard output is
    appended to, its content kept; a figure to /dev/stdout, and an --out that is the file standard
    output goes to, refused with that file untouched. Returns the number of failures."""
    run, base = ((reference / f"vm-mpi-np2/{name}.json").resolve() for name in ("adaptive-noise1", "fixed-n20"))
    other = (reference / "h200-load-patterns/mpi_incast.json").resolve()  # a gather: no row in common
    lone, cwd, marker, failing = plant_tools(plot, folder)
    # An empty PATH entry first (the working folder, to a shell), then the real fb_compare's folder.
    path = os.pathsep.join(["", str(Path(compare_bin).resolve().parent), os.environ.get("PATH", "")])
    logs = {name: folder / f"stdout{k}.log" for k, name in enumerate(("report to /dev/stdout", "figure to /dev/stdout",
                                                                      "--out is standard output's file"))}
    for log in logs.values():
        log.write_text("PRECIOUS\n")
    cases = {  # name: (command, expected exit, fragment of the one line of a refusal)
        "fb_compare under the working folder not run":
            ([sys.executable, lone, "bandwidth", run, "--baseline", base, "--out", folder / "lone"], 0, ""),
        "baseline of another collective": (plot + ["bandwidth", run, "--baseline", other, "--compare-bin",
                                                   compare_bin, "--out", "other"], 2, "no rows in common"),
        "report on a baseline of another collective": (plot + ["report", run, "--baseline", other, "--compare-bin",
                                                               compare_bin, "--out", "other.html"], 2, "no rows in"),
        "fb_compare failing at run time": (plot + ["report", run, "--baseline", base, "--compare-bin", failing,
                                                   "--out", "failing.html"], 3, "(exit 3): the disk went away"),
        "report to /dev/stdout": (plot + ["report", run, "--out", "/dev/stdout"], 0, ""),
        "figure to /dev/stdout": (plot + ["bandwidth", run, "--out", "/dev/stdout"], 2, "a figure is two files"),
        "--out is standard output's file": (plot + ["report", run, "--out", logs["--out is standard output's file"]], 2,
                                            "is the file standard output goes to"),
    }
    streams = {name: open(log, "ab") for name, log in logs.items()}  # >>: appended to
    try:
        options = {name: {"stdout": stream} for name, stream in streams.items()}
        options["fb_compare under the working folder not run"] = {"cwd": cwd, "env": dict(os.environ, PATH=path)}
        results = run_together({name: command for name, (command, _, _) in cases.items()}, folder, options=options)
    finally:
        for stream in streams.values():
            stream.close()
    texts = {name: log.read_text() for name, log in logs.items()}
    after = {
        "fb_compare under the working folder not run": not marker.exists() and (folder / "lone.png").exists(),
        "baseline of another collective": not list(folder.glob("other*")),
        "report on a baseline of another collective": not list(folder.glob("other*")),
        "fb_compare failing at run time": not list(folder.glob("failing.html*")),
        "report to /dev/stdout": texts["report to /dev/stdout"].startswith("PRECIOUS\n<!DOCTYPE html>")
                                 and texts["report to /dev/stdout"].endswith("</html>\n"),
        "figure to /dev/stdout": texts["figure to /dev/stdout"] == "PRECIOUS\n",
        "--out is standard output's file": texts["--out is standard output's file"] == "PRECIOUS\n",
    }
    leftovers = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.partial"))
    failures = 0
    for name, (_, expected, fragment) in cases.items():
        code, lines = results[name]
        # No note either: the fb_compare on PATH was found and run, the planted ones were not.
        one_line = not lines if expected == 0 else \
            len(lines) == 1 and fragment in lines[0] and lines[0].startswith("fbplot: error:")
        if code == expected and one_line and after[name] and not leftovers:
            print(f"ok: {name}" + (f" -> {lines[0]}" if expected else ""))
        else:
            print(f"FAIL: {name}: exit {code} (expected {expected}) {lines[-3:]}; files as expected: "
                  f"{after[name]}; .partial left: {leftovers}")
            failures += 1
    return failures


def damaged_runs(reference):
    """{file name: its text}: runs damaged as fb_compare refuses them (a negative, infinite, NaN or
    impossible figure, a newer schema, a key or column given twice), a run with bytes after its
    document (a NUL first), link matrices of the wrong shape, and runs behind a UTF-8 byte-order mark
    (read, as fb_compare reads them)."""
    run = json.loads((reference / "vm-mpi-history/run1.json").read_text())
    pairs = json.loads((reference / "fake-cluster-pairs/healthy.json").read_text())
    tree = json.loads((reference / "fake-cluster-tree/uplink.json").read_text())

    def changed(document, change):
        copy = json.loads(json.dumps(document))
        change(copy)
        return json.dumps(copy)  # NaN and Infinity as Python writes them, which no JSON reader of ours takes
    csv_text = (reference / "h200-1gpu-nccl/fixed.csv").read_text()
    header, first, rest = csv_text.split("\n", 2)
    columns = header.split(",")
    infinite = ",".join("inf" if name == "time_mean_s" else cell for name, cell in zip(columns, first.split(",")))
    return {
        "negative.json": changed(run, lambda d: d["rows"][2].update(busbw_mean_bytes_per_s=-5.0)),
        "schema99.json": changed(run, lambda d: d.update(schema_version=99)),
        "infinity.json": changed(run, lambda d: d["rows"][2].update(busbw_mean_bytes_per_s=float("inf"))),
        "nan.json": changed(run, lambda d: d["rows"][2].update(time_mean_s=float("nan"))),
        "huge.json": changed(run, lambda d: d["rows"][2].update(busbw_mean_bytes_per_s=1e300)),
        "text-size.json": changed(run, lambda d: d["rows"][0].update(size_bytes="64K")),
        "rows-object.json": changed(run, lambda d: d.update(rows={"size_bytes": 8})),
        "infinite.csv": "\n".join([header, infinite, rest]),
        "column-twice.csv": "\n".join([header.replace(",tags", ",settings"), first, rest]),
        "key-twice.json": json.dumps(run).replace('"busbw_factor": 1.0,', '"busbw_factor": 1.0, "busbw_factor": 2.0,',
                                                  1),
        "short-grid.json": changed(pairs, lambda d: d["summary"]["matrix"]["grid"].pop()),
        "text-cell.json": changed(pairs, lambda d: d["summary"]["matrix"]["grid"][0].__setitem__(1, "fast")),
        "text-verdicts.json": changed(pairs, lambda d: d["summary"].update(verdicts="SLOW")),
        "number-nodes.json": changed(tree, lambda d: d["context"]["topology"]["run_switches"][0].update(nodes=3)),
        "nul-tail.json": json.dumps(run) + "\0\0garbage{{{",  # a NUL and more after the document's end
        "bom.json": "\ufeff" + json.dumps(pairs),
        "bom.csv": "\ufeff" + csv_text,
    }


def check_damaged_inputs(plot, reference, folder):
    """fb_compare's refusals of damaged rows are fbplot's, and a wrongly shaped matrix, verdict or tree
    is one line and exit 2, never a traceback, with nothing drawn; a byte-order mark is read past.
    Run one after the other. Returns the number of failures."""
    for name, text in damaged_runs(reference).items():
        (folder / name).write_text(text, encoding="utf-8")
    where = "row 3 (256 KiB out-of-place)"
    cases = {  # name: (arguments, expected exit, fragment of the one line of a refusal)
        "negative busbw": (["bandwidth", "negative.json"], 2,
                           f"{where}: 'busbw_mean_bytes_per_s' is -5: not a time, rate or spread"),
        "negative busbw in a report": (["report", "negative.json"], 2, f"{where}: 'busbw_mean_bytes_per_s' is -5"),
        "schema version 99": (["report", "schema99.json"], 2, "schema version 99 is newer than fbplot reads (9)"),
        "Infinity busbw": (["bandwidth", "infinity.json"], 2, f"{where}: 'busbw_mean_bytes_per_s' is inf"),
        "NaN time": (["latency", "nan.json"], 2, f"{where}: 'time_mean_s' is nan"),
        "1e300 B/s": (["report", "huge.json"], 2,
                      f"{where}: 'busbw_mean_bytes_per_s' is 1e+300, beyond the 1e+15 B/s"),
        "size as text": (["bandwidth", "text-size.json"], 2,
                         "row 1 (out-of-place): 'size_bytes' is text, not a whole number"),
        "rows an object": (["bandwidth", "rows-object.json"], 2, "'rows' is an object, not a list"),
        "inf in a CSV cell": (["latency", "infinite.csv"], 2,
                              "infinite.csv line 2 (8 B out-of-place): 'time_mean_s' is inf"),
        "CSV column named twice": (["latency", "column-twice.csv"], 2, "names the 'settings' column twice"),
        "JSON key given twice": (["latency", "key-twice.json"], 2, "key 'busbw_factor' appears twice in one object"),
        "matrix grid short of a row": (["matrix", "short-grid.json"], 2, "summary.matrix.grid has 4 rows for 5 units"),
        "report on a grid short of a row": (["report", "short-grid.json"], 2, "grid has 4 rows for 5 units"),
        "text in a matrix cell": (["matrix", "text-cell.json"], 2, "('mhnode1' - 'mhnode2') is text, not a number"),
        "verdicts as text": (["matrix", "text-verdicts.json"], 2, "summary.verdicts is text, not a list"),
        "report on verdicts as text": (["report", "text-verdicts.json"], 2, "summary.verdicts is text, not a list"),
        "a switch's nodes a number": (["tree", "number-nodes.json"], 2,
                                      "run_switches[0].nodes is a whole number, not a list"),
        "bytes after the JSON document": (["report", "nul-tail.json"], 2,
                                          "nul-tail.json: not valid JSON, damaged: the file holds bytes after its "
                                          "document"),
        "JSON behind a byte-order mark": (["matrix", "bom.json"], 0, ""),
        "CSV behind a byte-order mark": (["latency", "bom.csv"], 0, ""),
    }
    failures = 0
    for name, (arguments, expected, fragment) in cases.items():
        out = folder / ("out.html" if arguments[0] == "report" else "out")
        result = subprocess.run(plot + arguments + ["--out", str(out)], cwd=folder, capture_output=True, text=True)
        lines = result.stderr.strip().splitlines()
        drawn = sorted(p.name for p in folder.glob("out*"))
        for path in folder.glob("out*"):
            path.unlink()
        if expected == 0:
            good = result.returncode == 0 and drawn
        else:
            good = result.returncode == expected and len(lines) == 1 and fragment in lines[0] and \
                lines[0].startswith("fbplot: error:") and not drawn
        if good:
            print(f"ok: {name}" + (f" -> {lines[0]}" if expected else ""))
        else:
            print(f"FAIL: {name}: exit {result.returncode} (expected {expected}) {lines[-3:]}; written: {drawn}")
            failures += 1
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--compare-bin", required=True)
    options = parser.parse_args()
    repo = Path(options.repo)
    plot = [sys.executable, str(repo / "plots" / "fbplot.py")]
    reference = repo / "results" / "reference"
    cases = {
        "bandwidth_with_baseline": ["bandwidth", reference / "vm-mpi-np2/adaptive-noise1.json",
                                    "--baseline", reference / "vm-mpi-np2/fixed-n20.json"],
        "latency_h200": ["latency", reference / "h200-1gpu-nccl/fixed.json", reference / "h200-1gpu-nccl/adaptive.json"],
        "verbs_bandwidth": ["bandwidth", reference / "rxe-vm-verbs/write_bw.csv"],
        "verbs_heatmap": ["heatmap", reference / "rxe-vm-verbs/write_bw_two_pairs.json"],
        "matrix_slow_link": ["matrix", reference / "fake-cluster-pairs/slow_link.json"],
        "matrix_slow_node": ["matrix", reference / "fake-cluster-pairs/slow_node.json"],
        "matrix_by_leaf": ["matrix", reference / "fake-cluster-tree/uplink.json"],
        "tree_slow_uplink": ["tree", reference / "fake-cluster-tree/uplink.json"],
        "tree_slow_node": ["tree", reference / "fake-cluster-tree/node.json"],
        "bandwidth_intervals": ["bandwidth", reference / "vm-mpi-history/run4.json", "--baseline",
                                reference / "vm-mpi-history/run1.json", "--compare-bin", options.compare_bin],
        "history": ["history"] + [reference / f"vm-mpi-history/run{i}.json" for i in range(1, 7)] +
                   ["--history-bin", Path(options.compare_bin).with_name("fb_history")],
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in cases.items():
            prefix = Path(tmp) / name
            result = subprocess.run(plot + [str(a) for a in args] + ["--out", str(prefix)], capture_output=True, text=True)
            try:
                assert result.returncode == 0, f"exit {result.returncode}: {result.stderr.strip()}"
                size = check_png(prefix.with_suffix(".png"), 500, 250)
                ElementTree.parse(prefix.with_suffix(".svg"))
                print(f"ok: {name}: PNG {size}, SVG parses")
            except (AssertionError, ElementTree.ParseError, OSError) as error:
                print(f"FAIL: {name}: {error}")
                failures += 1
        report = Path(tmp) / "report.html"
        result = subprocess.run(plot + ["report", str(reference / "vm-mpi-np2/adaptive-noise1.json"), "--baseline",
                                        str(reference / "vm-mpi-np2/fixed-n20.json"), "--compare-bin",
                                        options.compare_bin, "--out", str(report)], capture_output=True, text=True)
        text = report.read_text() if report.exists() else ""
        if result.returncode == 0 and text.count("data:image/png;base64,") == 2 and "SAME" in text and "<table>" in text \
                and "http" not in text.replace("http-equiv", ""):
            print(f"ok: report: {len(text) // 1024} KiB, 2 embedded pictures, verdict table, no external links")
        else:
            print(f"FAIL: report: exit {result.returncode} {result.stderr.strip()}")
            failures += 1
        tree_report = Path(tmp) / "tree.html"
        result = subprocess.run(plot + ["report", str(reference / "fake-cluster-tree/uplink.json"), "--out",
                                        str(tree_report)], capture_output=True, text=True)
        text = tree_report.read_text() if tree_report.exists() else ""
        if result.returncode == 0 and "<h2>Link matrix</h2>" in text and "<h2>Switch tree</h2>" in text:
            print(f"ok: tree report: {text.count('data:image/png;base64,')} embedded pictures, the matrix and the tree")
        else:
            print(f"FAIL: tree report: exit {result.returncode} {result.stderr.strip()}")
            failures += 1
        result = subprocess.run(plot + ["tree", str(reference / "fake-cluster-pairs/slow_node.json"), "--out",
                                        str(Path(tmp) / "notree")], capture_output=True, text=True)
        if result.returncode == 2 and "no switch tree" in result.stderr and len(result.stderr.strip().splitlines()) == 1:
            print(f"ok: tree of a run without --topology -> {result.stderr.strip()}")
        else:
            print(f"FAIL: tree without a topology: exit {result.returncode} {result.stderr.strip()}")
            failures += 1
        # A 0 B row (nccl-tests -b 0 prints one) is left off the log axis of sizes, not a traceback.
        zero = Path(tmp) / "zero-bytes.json"
        document = json.loads((reference / "vm-mpi-np2/fixed-n20.json").read_text())
        document["rows"].insert(0, dict(document["rows"][0], size_bytes=0, count=0))
        zero.write_text(json.dumps(document))
        for kind in ("latency", "bandwidth"):
            result = subprocess.run(plot + [kind, str(zero), "--out", str(Path(tmp) / f"zero-{kind}")],
                                    capture_output=True, text=True)
            if result.returncode == 0:
                print(f"ok: {kind} of a run with a 0 B row")
            else:
                print(f"FAIL: {kind} of a run with a 0 B row: exit {result.returncode} {result.stderr.strip()[-300:]}")
                failures += 1
        (Path(tmp) / "empty.json").write_text("")
        for bad, fragment in [(Path(tmp) / "none.csv", "no such file"), (Path(tmp) / "empty.json", "empty"),
                              (repo / "tests/data/perftest/ib_write_lat.txt", "fb_import")]:
            result = subprocess.run(plot + ["bandwidth", str(bad), "--out", str(Path(tmp) / "bad")],
                                    capture_output=True, text=True)
            lines = result.stderr.strip().splitlines()
            if result.returncode == 2 and len(lines) == 1 and fragment in lines[0] and not (Path(tmp) / "bad.png").exists():
                print(f"ok: bad input -> {lines[0]}")
            else:
                print(f"FAIL: bad input {bad}: exit {result.returncode} {lines}")
                failures += 1
        # A Python without matplotlib (-S: no site packages, as in a bare venv) and an --out that
        # cannot be written: one line each, exit 2, no traceback.
        for name, command in [("no matplotlib", [sys.executable, "-S"] + plot[1:] + ["bandwidth", "x.json", "--out", "x"]),
                              ("unwritable --out", plot + ["bandwidth", str(reference / "vm-mpi-np2/fixed-n20.json"),
                                                           "--out", "/proc/fabricbench/x"])]:
            result = subprocess.run(command, capture_output=True, text=True)
            lines = result.stderr.strip().splitlines()
            if result.returncode == 2 and len(lines) == 1 and lines[0].startswith("fbplot: error:"):
                print(f"ok: {name} -> {lines[0]}")
            else:
                print(f"FAIL: {name}: exit {result.returncode} {lines[-3:]}")
                failures += 1
        files = Path(tmp) / "files"
        files.mkdir()
        failures += check_files_and_outputs(plot, reference, files)
        tools = Path(tmp) / "tools"
        tools.mkdir()
        failures += check_tools_and_streams(plot, reference, options.compare_bin, tools)
        damaged = Path(tmp) / "damaged"
        damaged.mkdir()
        failures += check_damaged_inputs(plot, reference, damaged)
    print(f"plots: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
