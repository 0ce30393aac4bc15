#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pictures of fabricbench runs, from their CSV or JSON files (never from console tables).

  fbplot.py bandwidth RUN [RUN...] [--baseline RUN] [--metric busbw|algbw] --out PREFIX
  fbplot.py latency   RUN [RUN...] [--baseline RUN] --out PREFIX
  fbplot.py heatmap   RUN --out PREFIX          (multi-pair verbs run: pair x size)
  fbplot.py matrix    RUN.json --out PREFIX     (--pairs all/quick/rail: node x node, bad cells marked;
                                                 ordered by leaf switch when the run had --topology)
  fbplot.py tree      RUN.json --out PREFIX     (--pairs with --topology: the switch tree, each node cable,
                                                 leaf and uplink coloured by its cells against the median)
  fbplot.py history   RUN RUN RUN... --out PREFIX  (fb_history: a figure per run, its levels and changes)
  fbplot.py report    RUN [--baseline RUN] [--compare-bin fb_compare] --out report.html

bandwidth / latency / heatmap write PREFIX.png and PREFIX.svg. One line per run and series
(collective, type, op, placement, pair, settings), labelled with the run's --tag labels or file
name; with --baseline, a panel under the curves with fb_compare's change per size, its interval
and its verdict's colour (plain ratios when fb_compare cannot be found; its refusal of the runs is an
error, exit 2). report writes one HTML file with the pictures embedded and the tables: readable offline,
mailable; --out /dev/stdout writes it where standard output goes. An --out that is an input, or the other
half (STEM.csv / STEM.json) of an input run, or a new file on /dev, /proc or /sys is refused before any work.
Other tools' output (nccl-tests, perftest, Google Benchmark) goes through fb_import first.
"""
import argparse
import base64
import csv
import errno
import fcntl
import html
import io
import json
import math
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402
except ImportError as missing:  # a venv or pyenv Python without it: say so, no traceback
    print(f"fbplot: error: {sys.executable} has no matplotlib ({missing.name}): apt-get install python3-matplotlib "
          f"and run /usr/bin/python3, or pip install matplotlib into this environment", file=sys.stderr)
    sys.exit(2)

NUMERIC = {"size_bytes", "count", "ranks", "hosts", "samples", "batch", "pair", "root", "wrong", "schema_version",
           "slowest_rank", "round", "rail", "channels", "runs"}
# fb_compare's columns by kind (common/row.cpp), checked as it checks them (results/run_file.cpp),
# so fbplot never draws a row it refuses: counts, ranks and hosts never below 0, the others never
# below -1 (none); channels, the library's own, as it comes.
UNSIGNED = {"size_bytes", "count", "samples", "batch", "runs", "ranks", "hosts"}
AT_LEAST_NONE = {"pair", "root", "wrong", "slowest_rank", "round", "rail"}
TIMES = {f"time_{statistic}_s" for statistic in ("mean", "median", "min", "p99", "p999", "max", "stdev", "mad")}
RATES = {f"{kind}_{statistic}_bytes_per_s" for kind in ("algbw", "busbw") for statistic in ("mean", "median")} | \
    {"busbw_peak_bytes_per_s"}
RATIOS = {"between_run_rsd", "contention_slowdown", "busbw_factor"}  # no ceiling: a spread, a factor
TEXT = {"benchmark", "backend", "collective", "operation", "memory", "dtype", "op", "placement", "host", "peer_host",
        "rank_reduction", "stop_reason", "slowest_host", "settings", "tags"}
# The row schema this script knows (results/README.md "Row schema"; common/row.hpp kSchemaVersion).
SCHEMA_VERSION = 9
# What no measurement gives (results/run_file.hpp): a rate above both 1e15 B/s and the row's size
# moved in half a nanosecond, a time above 1e6 s.
MAX_RATE_BYTES_PER_S = 1e15
MAX_RATE_PER_BYTE = 2e9
MAX_SECONDS = 1e6


# fb_compare's cap (results/run_file.cpp): a run is parsed whole, and no run of ours comes near it.
MAX_RUN_BYTES = 512 << 20
FIGURE_SUFFIXES = (".png", ".svg")


class InputError(Exception):
    pass


def refuse_unreadable(path, status):
    """InputError unless `status` (of `path`) is a regular file small enough to read whole, worded
    as fb_compare words it: a FIFO would block the read, a device never ends."""
    if stat.S_ISDIR(status.st_mode):
        raise InputError(f"{path}: a folder, not a run")
    if stat.S_ISFIFO(status.st_mode):
        raise InputError(f"{path}: a FIFO, not a run file: never read")
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"{path}: a device or socket, not a run file: never read")
    if status.st_size > MAX_RUN_BYTES:
        raise InputError(f"{path}: {status.st_size} bytes, more than the {MAX_RUN_BYTES >> 20} MiB a result file "
                         f"of fabricbench's holds")


def check_input(path):
    """Refuses, before any work, an input that is missing or that refuse_unreadable refuses."""
    try:
        refuse_unreadable(path, os.stat(path))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")


def read_text(path):
    """The text of an input file, checked again on the open file: the name may lead elsewhere by now.
    Opened without blocking, so a FIFO put there meanwhile is refused, not waited on."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file")
    with os.fdopen(descriptor, encoding="utf-8", errors="replace") as file:
        refuse_unreadable(path, os.fstat(descriptor))
        text = file.read(MAX_RUN_BYTES + 1)  # bounded even if it grows while read
    return text.removeprefix("\ufeff")  # a UTF-8 byte-order mark an editor put there, as fb_compare skips it


def csv_companion(path):
    """The JSON that fabricbench writes beside a CSV run (it holds the run's context)."""
    return Path(path).with_suffix(".json")


def parse_json(path, text):
    """The document of a JSON input, and the non-numbers (NaN, Infinity) it holds: Python reads them,
    fb_compare does not, so they are refused where found, or as damage."""
    constants = []

    def constant(name):
        constants.append(name)
        return float(name)

    def unique_keys(pairs):  # a key given twice: which value is meant is not known, as fb_compare says
        keys = set()
        for key, _ in pairs:
            if key in keys:
                raise InputError(f"{path}: key {key[:40]!r} appears twice in one object: which value is meant "
                                 f"is not known (damaged, or not written by one program)")
            keys.add(key)
        return dict(pairs)
    try:
        return json.loads(text, parse_constant=constant, object_pairs_hook=unique_keys), constants
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":  # a NUL or text past the closing brace: not one run as written
            raise InputError(f"{path}: not valid JSON, damaged: the file holds bytes after its document (from byte "
                             f"{error.pos})")
        raise InputError(f"{path}: not valid JSON, truncated or damaged ({error.msg} at byte {error.pos})")
    except ValueError as error:  # an integer of thousands of digits
        raise InputError(f"{path}: not valid JSON for fbplot ({error})")
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to be a run")


KIND_NAMES = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null",
              int: "a whole number", float: "a number"}


def expect(value, kinds, what, wanted=None):
    """`value` if it is one of `kinds` (a bool is no number), else an InputError: what it is, and what
    belongs there ("run.json: summary.verdicts is text, not a list")."""
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds):
        return value
    wanted = wanted or ("a number" if float in kinds else KIND_NAMES[kinds[0]])
    raise InputError(f"{what} is {KIND_NAMES.get(type(value), 'a number')}, not {wanted}")


def schema_version_of(value, where):
    """A schema version fbplot knows, refused as fb_compare refuses it."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"{where}: schema_version is not a number")
    if value > SCHEMA_VERSION:
        raise InputError(f"{where}: schema version {value} is newer than fbplot reads ({SCHEMA_VERSION}): "
                         f"update fabricbench")
    if value < 1:
        raise InputError(f"{where}: schema version {value} does not exist")
    return value


def row_where(path, place, row):
    """'PATH row N (64 KiB out-of-place)': the row as fb_compare numbers it, with its size and
    placement where they read, so the damaged row can be found."""
    size, placement = row.get("size_bytes"), row.get("placement")
    parts = []
    if isinstance(size, str) and size.isascii() and size.isdigit():
        size = int(size)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        parts.append(human_bytes(size))
    if isinstance(placement, str) and placement.isprintable() and 0 < len(placement) <= 40:
        parts.append(placement)
    return f"{path} {place}" + (f" ({' '.join(parts)})" if parts else "")


def whole_field(key, value, where, from_json):
    """An integer column's value: a JSON number that is whole, or a CSV cell that is an integer."""
    if from_json:
        number = expect(value, (int, float), f"{where}: '{key}'", "a whole number")
        if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
            raise InputError(f"{where}: '{key}' is {number:g}, not a whole number")
        number = int(number)
    else:
        try:
            number = int(value)
        except ValueError:
            raise InputError(f"{where}: '{key}' is {value[:40]!r}, not an integer")
    least = 0 if key in UNSIGNED else -1 if key in AT_LEAST_NONE else None
    if least is not None and number < least:
        raise InputError(f"{where}: '{key}' is {number}: below {least}, which no run writes")
    return number


def figure_field(key, value, where, from_json):
    """A time, rate or ratio: finite and never negative (the ceilings need the row's size: check_ceilings).
    A CSV's nan is a statistic with no value, as fb_compare reads it; a JSON NaN is damage."""
    if from_json:
        value = expect(value, (int, float), f"{where}: '{key}'")
    elif value in ("nan", "-nan"):
        return math.nan
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{where}: '{key}' is {value[:40]!r}, not a number")
    except OverflowError:  # a JSON integer past any float
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise InputError(f"{where}: '{key}' is {number:g}: not a time, rate or spread")
    return number


def most_bytes_per_second(size_bytes):
    return max(MAX_RATE_BYTES_PER_S, size_bytes * MAX_RATE_PER_BYTE)


def check_ceilings(row, where):
    """Refuses a time or rate beyond what a measurement gives: drawn, a 1e300 B/s row flattens every curve."""
    for key, value in row.items():
        most = most_bytes_per_second(row["size_bytes"]) if key in RATES else MAX_SECONDS if key in TIMES else None
        if most is not None and value > most:
            unit = "B/s" if key in RATES else "seconds"
            raise InputError(f"{where}: '{key}' is {value:g}, beyond the {most:g} {unit} no measurement gives")


def read_row(row, where, from_json):
    """One row, its numbers converted and checked as fb_compare checks them. A JSON null is a value
    the row does not have (fb_compare leaves the column at its default): no figure for a figure."""
    converted = {}
    for key, value in row.items():
        if value is None:
            if key in TIMES or key in RATES or key in RATIOS:
                converted[key] = math.nan
        elif key in NUMERIC:
            converted[key] = whole_field(key, value, where, from_json)
        elif key in TIMES or key in RATES or key in RATIOS:
            converted[key] = figure_field(key, value, where, from_json)
        elif key == "samples_s" and from_json:  # --samples: every timed sample
            for sample in expect(value, list, f"{where}: 'samples_s'"):
                if isinstance(sample, bool) or not isinstance(sample, (int, float)) or not 0 <= sample <= MAX_SECONDS:
                    raise InputError(f"{where}: 'samples_s' holds {json.dumps(sample)[:40]} where a time in seconds "
                                     f"belongs")
            converted[key] = value
        elif key in TEXT:
            converted[key] = expect(value, str, f"{where}: '{key}'")
        else:
            converted[key] = value
    for required in ("size_bytes", "time_mean_s", "collective"):
        if required not in converted:
            raise InputError(f"{where}: lacks '{required}'")
    check_ceilings(converted, where)
    converted.setdefault("pair", -1)
    converted.setdefault("settings", "")
    return converted


def load_run(path):
    """Rows (dicts with numbers converted) and context of one of our CSV or JSON files, each part
    checked for the shape fbplot draws from: a damaged run is refused in one line, never drawn."""
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    context, summary, constants = {}, {}, []
    if text.lstrip().startswith("{"):
        document, constants = parse_json(path, text)
        if not isinstance(document, dict) or "rows" not in document or "schema_version" not in document:
            raise InputError(f"{path}: not a fabricbench run (run other tools' files through fb_import first)")
        schema_version_of(document["schema_version"], path)
        rows = expect(document["rows"], list, f"{path}: 'rows'")
        places = [(f"row {number}", row) for number, row in enumerate(rows, start=1)]
        # A context or summary of another shape is none (fb_compare ignores it too).
        context = document.get("context") if isinstance(document.get("context"), dict) else {}
        summary = document.get("summary") if isinstance(document.get("summary"), dict) else {}
        check_context(path, context)
        check_summary(path, summary)
    elif text.startswith("schema_version,"):
        reader = csv.DictReader(io.StringIO(text))
        try:
            header = reader.fieldnames
            # The csv module would keep a row's last value of a column named twice: fb_compare refuses it.
            twice = [name for name in header if header.count(name) > 1]
            if twice:
                raise InputError(f"{path}: the CSV header names the {twice[0][:40]!r} column twice: which value is "
                                 f"meant is not known")
            places = [(f"line {reader.line_num}", row) for row in reader]
        except csv.Error as error:  # a field past the csv module's limit
            raise InputError(f"{path} line {reader.line_num}: not CSV fbplot reads ({error})")
        try:  # a missing or damaged companion leaves the CSV readable, its context unknown
            context = parse_json(csv_companion(path), read_text(csv_companion(path)))[0]["context"]
            check_context(path, context)
        except (InputError, OSError, KeyError, TypeError):
            context = {}
    else:
        raise InputError(f"{path}: not a fabricbench CSV or JSON (other tools' files: fb_import first)")
    from_json = text.lstrip().startswith("{")
    out, version = [], None
    for place, row in places:
        if not isinstance(row, dict):
            raise InputError(f"{path} {place}: a row is not an object")
        where = row_where(path, place, row)
        if not from_json and (None in row or any(v is None for v in row.values())):
            raise InputError(f"{where}: truncated or ragged")
        converted = read_row(row, where, from_json)
        if not from_json:  # a CSV has no version but its rows'
            row_version = schema_version_of(converted.get("schema_version"), where)
            if version is not None and row_version != version:
                raise InputError(f"{where}: schema version {row_version} after rows of version {version}: mixed files?")
            version = row_version
        out.append(converted)
    if not out:
        raise InputError(f"{path}: no rows")
    if constants:  # not in a row nor the matrix, where they were refused by name
        raise InputError(f"{path}: not valid JSON, damaged ({constants[0]} is no JSON number)")
    return {"path": path, "rows": out, "context": context, "label": run_label(path, out), "summary": summary}


def check_context(path, context):
    """The context fbplot shows or draws from: the hosts, the GPUs, the switch tree."""
    expect(context, dict, f"{path}: the context")
    expect(context.get("hosts", {}), dict, f"{path}: context.hosts")
    ranks = expect(context.get("rank_context") or [], list, f"{path}: context.rank_context")
    for k, rank in enumerate(ranks):
        expect(rank, dict, f"{path}: context.rank_context[{k}]")
        for g, gpu in enumerate(expect(rank.get("gpus") or [], list, f"{path}: context.rank_context[{k}].gpus")):
            expect(gpu, dict, f"{path}: context.rank_context[{k}].gpus[{g}]")
    topology = expect(context.get("topology") or {}, dict, f"{path}: context.topology")
    switches = expect(topology.get("run_switches") or [], list, f"{path}: context.topology.run_switches")
    for k, switch in enumerate(switches):
        where = f"{path}: context.topology.run_switches[{k}]"
        expect(switch, dict, where)
        expect(switch.get("name"), str, f"{where}.name")
        for field in ("nodes", "parents"):
            for n, name in enumerate(expect(switch.get(field, []), list, f"{where}.{field}")):
                expect(name, str, f"{where}.{field}[{n}]")
        expect(switch.get("level", 1), int, f"{where}.level")


def check_summary(path, summary):
    """The summary's link matrix and verdicts, shaped as fb_all_reduce --pairs writes them, so that
    plot_matrix, plot_tree and the report meet only what they draw."""
    where = f"{path}: summary.matrix"
    matrix = expect(summary.get("matrix") or {}, dict, where)
    units = expect(matrix.get("units") or [], list, f"{where}.units")
    for k, unit in enumerate(units):
        expect(unit, str, f"{where}.units[{k}]")
    expect(matrix.get("size_bytes", 0), int, f"{where}.size_bytes")
    expect(matrix.get("unit", ""), str, f"{where}.unit")
    if units:  # a figure per pair of units: a square of them
        grid = expect(matrix.get("grid"), list, f"{where}.grid")
        if len(grid) != len(units):
            raise InputError(f"{where}.grid has {len(grid)} rows for {len(units)} units")
        for i, row in enumerate(grid):
            expect(row, list, f"{where}.grid[{i}] (unit {units[i]!r})")
            if len(row) != len(units):
                raise InputError(f"{where}.grid[{i}] (unit {units[i]!r}) has {len(row)} cells for {len(units)} units")
            for j, value in enumerate(row):
                matrix_figure(value, f"{where}.grid[{i}][{j}] ({units[i]!r} - {units[j]!r})")
    for k, cell in enumerate(expect(matrix.get("cells") or [], list, f"{where}.cells")):
        expect(cell, dict, f"{where}.cells[{k}]")
        for end in ("a", "b"):
            expect(cell.get(end), str, f"{where}.cells[{k}].{end}")
        matrix_figure(cell.get("value"), f"{where}.cells[{k}] ({cell['a']!r} - {cell['b']!r})")
        expect(cell.get("failure"), (str, bool, type(None)), f"{where}.cells[{k}].failure")
    where = f"{path}: summary.verdicts"
    for k, verdict in enumerate(expect(summary.get("verdicts") or [], list, where)):
        expect(verdict, dict, f"{where}[{k}]")
        for field in ("subject", "word"):
            expect(verdict.get(field, ""), str, f"{where}[{k}].{field}")
        for n, line in enumerate(expect(verdict.get("lines", []), list, f"{where}[{k}].lines")):
            expect(line, str, f"{where}[{k}].lines[{n}]")
        for n, accused in enumerate(expect(verdict.get("accused", []), list, f"{where}[{k}].accused")):
            expect(accused, dict, f"{where}[{k}].accused[{n}]")
            for field in ("kind", "part"):
                expect(accused.get(field, ""), str, f"{where}[{k}].accused[{n}].{field}")


def matrix_figure(value, what):
    """A matrix cell's figure: null where none was measured, else a finite number, never negative."""
    if value is not None and not 0 <= expect(value, (int, float), what) < math.inf:
        raise InputError(f"{what} is {value:g}, which no measurement gives")


def run_label(path, rows):
    tags = rows[0].get("tags", "")
    return tags.replace(";", ", ") if tags else path.stem


def series_key(row):
    if row.get("backend") == "verbs":  # bytes, no reduction: the memory is what varies
        key = f"{row['collective']} {row.get('placement', '')}"
    else:
        key = f"{row['collective']} {row.get('dtype', '')} {row.get('op', '')} {row.get('placement', '')}"
    key = key.replace("  ", " ")
    if int(row.get("pair", -1)) >= 0:
        key += f" pair {row['pair']}"
    elif row.get("backend") == "verbs" and int(row.get("ranks", 2)) > 2:
        key += " all pairs"
    if row.get("settings") and row.get("backend") != "verbs":
        key += f" [{row['settings']}]"
    return key.strip()


def human_bytes(value, _position=None):
    value = int(round(value))
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale and value % scale == 0:
            return f"{value // scale} {unit}"
    return f"{value} B"


def size_axis(axis, sizes):
    """log2 axis with human size labels every few powers of two, so they stay readable."""
    axis.set_xscale("log", base=2)
    low, high = min(sizes), max(sizes)
    exponents = list(range(int(math.floor(math.log2(low))), int(math.ceil(math.log2(high))) + 1))
    step = max(1, math.ceil(len(exponents) / 10))
    axis.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in exponents[::step]]))
    axis.xaxis.set_major_formatter(FuncFormatter(human_bytes))
    axis.xaxis.set_minor_locator(NullLocator())
    axis.set_xlim(low / 1.3, high * 1.3)
    for label in axis.get_xticklabels():
        label.set_rotation(30)
        label.set_ha("right")


def curves(runs, value_of):
    """[(label, series, sizes, values)] for every run and series, sizes ascending."""
    out = []
    single_run = len(runs) == 1
    for run in runs:
        groups = {}
        for row in run["rows"]:
            value = value_of(row)
            # A 0 B row (nccl-tests -b 0) has no place on a log axis of sizes.
            if value is not None and value > 0 and row["size_bytes"] > 0:
                groups.setdefault(series_key(row), {})[row["size_bytes"]] = value
        for series, points in groups.items():
            sizes = sorted(points)
            label = series if single_run else (f"{run['label']}" if len(groups) == 1 else f"{run['label']}: {series}")
            out.append((label, series, sizes, [points[s] for s in sizes]))
    return out


VERDICT_COLOURS = {"SLOWER": "#c62828", "FASTER": "#2e7d32", "SAME": "0.35", "UNSURE": "#ef8f00"}


def draw_intervals(axis, comparison, series_shown):
    """fb_compare's change per size with its interval, coloured by verdict: noise is not taken for a
    regression when the interval says so."""
    for verdict, colour in VERDICT_COLOURS.items():
        rows = [r for r in comparison["rows"] if r["verdict"] == verdict and series_key(r) in series_shown]
        if not rows:
            continue
        sizes = [r["size_bytes"] for r in rows]
        speedups = [r["speedup"] for r in rows]
        low = [r["speedup"] - (r["low"] if r["low"] is not None else r["speedup"]) for r in rows]
        high = [(r["high"] if r["high"] is not None else r["speedup"]) - r["speedup"] for r in rows]
        axis.errorbar(sizes, speedups, yerr=[low, high], fmt="o", markersize=4, capsize=2.5, color=colour,
                      ecolor=colour, elinewidth=1, label=f"{verdict} ({len(rows)})")
    axis.legend(fontsize=7, loc="best", ncol=4)


def draw(runs, baseline, value_of, ylabel, title, out_prefix, log_y, comparison=None):
    lines = curves(runs, value_of)
    if not lines:
        raise InputError("nothing to plot: no row has this metric above 0 (one-rank collectives have busbw 0: "
                         "try --metric algbw or the latency plot)")
    base_lines = {series: dict(zip(sizes, values)) for _, series, sizes, values in curves([baseline], value_of)} \
        if baseline else {}
    figure = plt.figure(figsize=(10, 7.5 if baseline else 6), dpi=110)
    grid = figure.add_gridspec(2 if baseline else 1, 1, height_ratios=[3, 1.2] if baseline else [1], hspace=0.08)
    top = figure.add_subplot(grid[0])
    all_sizes = [s for _, _, sizes, _ in lines for s in sizes]
    if baseline:
        for series, points in base_lines.items():
            sizes = sorted(points)
            top.plot(sizes, [points[s] for s in sizes], color="0.45", linestyle="--", linewidth=1.6,
                     label=f"baseline {baseline['label']}" + (f": {series}" if len(base_lines) > 1 else ""))
    for label, _series, sizes, values in lines:
        top.plot(sizes, values, marker="o", markersize=3.5, linewidth=1.8, label=label)
    top.set_ylabel(ylabel)
    if log_y:
        top.set_yscale("log")
    top.grid(True, which="major", alpha=0.35)
    top.set_title(title)
    top.legend(fontsize=8, loc="best")
    size_axis(top, all_sizes)
    if baseline:
        plt.setp(top.get_xticklabels(), visible=False)
        bottom = figure.add_subplot(grid[1], sharex=top)
        threshold = comparison["threshold"] if comparison else 0.05
        if comparison and len(runs) == 1:
            draw_intervals(bottom, comparison, {series for _, series, _, _ in lines})
            bottom.set_ylabel("new / baseline (> 1 better)")
        else:
            for label, series, sizes, values in lines:
                reference = base_lines.get(series) or (next(iter(base_lines.values())) if len(base_lines) == 1 else {})
                pairs = [(s, v / reference[s]) for s, v in zip(sizes, values) if reference.get(s)]
                if pairs:
                    bottom.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="o", markersize=3, label=label)
            bottom.set_ylabel("run / baseline")
        bottom.axhline(1.0, color="0.45", linestyle="--", linewidth=1)
        bottom.axhspan(1 - threshold, 1 + threshold, color="0.85", alpha=0.6, linewidth=0)
        bottom.grid(True, alpha=0.35)
        size_axis(bottom, all_sizes)
        bottom.set_xlabel("message size (bytes per rank)")
    else:
        top.set_xlabel("message size (bytes per rank)")
    save(figure, out_prefix)


def figure_path(out_prefix, suffix):
    return out_prefix.with_name(out_prefix.name + suffix)


def save(figure, out_prefix):
    """PREFIX.png and PREFIX.svg, both rendered before either is written."""
    out_prefix = Path(out_prefix)
    try:
        rendered = {}
        for suffix in FIGURE_SUFFIXES:
            buffer = io.BytesIO()
            figure.savefig(buffer, format=suffix[1:], bbox_inches="tight")
            rendered[suffix] = buffer.getvalue()
    finally:
        plt.close(figure)
    out_prefix.parent.mkdir(parents=True, exist_ok=True)
    for suffix, data in rendered.items():
        write_output(figure_path(out_prefix, suffix), data)


def output_paths(args):
    """Every file this command writes: the report, or a figure's PREFIX.png and PREFIX.svg."""
    if not args.out:
        raise InputError("--out: empty path")
    if args.what == "report":
        return [Path(args.out)]
    prefix = Path(args.out)
    if prefix.name in ("", ".."):
        raise InputError(f"--out: '{args.out}' is a folder; give a PREFIX for PREFIX.png and PREFIX.svg")
    paths = [figure_path(prefix, suffix) for suffix in FIGURE_SUFFIXES]
    for path in [args.out] + paths:
        if descriptor_named(path) is not None:
            raise InputError(f"--out: '{path}' is a stream of fbplot's own: a figure is two files, PREFIX.png and "
                             f"PREFIX.svg; give a PREFIX (the report can go to /dev/stdout)")
    return paths


# This process's standard streams by name; /dev/fd/N and /proc/self/fd/N are told by their folder.
STREAM_NAMES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def descriptor_folders():
    """The folders listing this process's descriptors, as os.path.realpath names them (/proc/PID/fd)."""
    return {os.path.realpath(folder) for folder in ("/dev/fd", "/proc/self/fd", "/proc/thread-self/fd")} | \
        {f"/proc/{os.getpid()}/fd"}


def descriptor_named(path):
    """N when `path` names this process's own descriptor N (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
    symlink leading to one), else None. Opened by name, such a path leads on to wherever the stream goes,
    the file a shell appends to among them, which a rename or a truncation would destroy."""
    folders = descriptor_folders()
    name = os.path.abspath(path)
    for _ in range(40):  # as many symlinks as the kernel follows
        name = "/" + os.path.normpath(name).lstrip("/")
        folder, leaf = os.path.split(name)
        if name in STREAM_NAMES:
            return STREAM_NAMES[name]
        if leaf.isdigit() and os.path.realpath(folder) in folders:
            return int(leaf)
        if not os.path.islink(name):
            break
        name = os.path.join(folder, os.readlink(name))
    if os.path.dirname(os.path.realpath(path)) in folders:  # reached some other way: say so, write nothing
        raise InputError(f"--out: '{path}' leads to a descriptor of fbplot's own; name it as /dev/fd/N")
    return None


def check_descriptor(path, descriptor):
    """Refuses, before any work, a descriptor `path` names that is not open for writing, or that is a
    folder or a disk (a socket is fine here: it is written, not opened by name)."""
    try:
        mode = os.fstat(descriptor).st_mode
        flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
    except OSError:
        raise InputError(f"--out: '{path}' names descriptor {descriptor}, which is not open")
    if flags & os.O_ACCMODE == os.O_RDONLY:
        raise InputError(f"--out: '{path}' names descriptor {descriptor}, which is open for reading only")
    for refused, why in REFUSED_OUTPUTS:
        if refused(mode) and refused is not stat.S_ISSOCK:
            raise InputError(f"--out: '{path}' (descriptor {descriptor}) {why}")


def refuse_stream_file(path, figure):
    """Refuses an --out that is the regular file standard output or error goes to (> log.txt): replacing
    it would lose what is printed there, and what fbplot prints after would land inside it."""
    try:
        written = os.stat(path)
    except OSError:  # a new file: nobody's stream
        return
    for descriptor, stream, name in ((1, "standard output", "/dev/stdout"), (2, "standard error", "/dev/stderr")):
        try:
            current = os.fstat(descriptor)
        except OSError:  # closed
            continue
        if stat.S_ISREG(current.st_mode) and (current.st_dev, current.st_ino) == (written.st_dev, written.st_ino):
            advice = "choose another PREFIX" if figure else f"give {name} to write there"
            raise InputError(f"--out: '{path}' is the file {stream} goes to: {advice}")


def partial_path(path):
    return f"{path}.partial"


def replaced_by_rename(path):
    """Whether `path` is written as PATH.partial renamed onto it: a regular file or a new name. A device,
    a FIFO or a symlink is written in place instead: replacing it would destroy it (as root, /dev/null)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True


def refuse_foreign_partial(path):
    """PATH.partial is fbplot's own name: a stale regular file there is replaced; anything else (a
    symlink, a FIFO) is someone's, and writing through it could land anywhere."""
    partial = partial_path(path)
    try:
        foreign = not stat.S_ISREG(os.lstat(partial).st_mode)
    except FileNotFoundError:
        return
    if foreign:
        raise InputError(f"--out: '{partial}' is not a file fbplot left there; remove it or choose another name")


# Kernel filesystems: devices and the kernel's own entries, never files. As root, a new name there is
# created all the same (/dev/null.png on devtmpfs, a folder under /sys/fs/cgroup is a cgroup).
KERNEL_FOLDERS = ("/dev", "/proc", "/sys")


def kernel_filesystem_of(folder):
    """The KERNEL_FOLDERS entry whose filesystem `folder` (resolved, existing) is on, or None: anything
    under /proc or /sys, /dev's own filesystem wherever mounted, but not a tmpfs for files inside /dev
    (/dev/shm). A /dev that is a plain folder of / (a chroot) makes nothing outside it a kernel folder."""
    device, root = os.stat(folder).st_dev, os.stat("/").st_dev
    for kernel in KERNEL_FOLDERS:
        try:
            kernel_device = os.stat(kernel).st_dev
        except OSError:
            continue
        inside = folder == kernel or folder.startswith(kernel + "/")
        if (inside and (kernel != "/dev" or device == kernel_device)) or device == kernel_device != root:
            return kernel
    return None


def refuse_kernel_folder(path):
    """Refuses a file fbplot would create or replace (it and any folder save makes for it) on a kernel
    filesystem; a device or FIFO already there is written in place, never through here."""
    folder = Path(os.path.realpath(path)).parent
    while not folder.exists():  # the folders save() would make: the first one that exists holds them
        folder = folder.parent
    kernel = kernel_filesystem_of(str(folder))
    if kernel:
        raise InputError(f"--out: '{path}' would be a file in {folder}, on the kernel's {kernel} filesystem "
                         f"(devices and kernel entries, not files); choose a folder for files")


# What an --out must not be, as fabricbench's C++ tools word it (common/output_file.cpp).
REFUSED_OUTPUTS = ((stat.S_ISDIR, "is a folder; give a file name"),
                   (stat.S_ISBLK, "is a block device: fbplot never writes to a disk"),
                   (stat.S_ISSOCK, "is a socket; give a file, a FIFO or a device"))


def check_output(path, figure=False):
    """Refuses, before any work, an output fbplot must not write: REFUSED_OUTPUTS, a symlink to
    nothing (writing through it would create a file wherever it points), a foreign .partial, the
    file a standard stream goes to; a descriptor of ours (/dev/stdout) not open for writing."""
    descriptor = descriptor_named(path)
    if descriptor is not None:
        check_descriptor(path, descriptor)
        return
    refuse_stream_file(path, figure)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(f"--out: '{path}' is a symlink to nothing; give the file itself")
        mode = 0  # a new file
    for refused, why in REFUSED_OUTPUTS:
        if refused(mode):
            raise InputError(f"--out: '{path}' {why}")
    if replaced_by_rename(path):
        refuse_kernel_folder(path)
        refuse_foreign_partial(path)


def same_file(a, b):
    """One file however spelled: ./a.json and $PWD/a.json, a symlink, a hard link."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def run_halves(path):
    """The other half of the run `path` belongs to (fabricbench writes STEM.csv and STEM.json side by side):
    the JSON beside any input (a CSV's context is read from it), the CSV beside a .json, each by the name
    given and the name resolved (a symlinked run's halves are its target's), whether or not it exists yet."""
    halves = []
    for spelled in dict.fromkeys((Path(path), Path(os.path.realpath(path)))):
        twins = [spelled.with_suffix(".json")] + ([spelled.with_suffix(".csv")] if spelled.suffix.lower() == ".json"
                                                  else [])
        halves += [twin for twin in twins if twin != spelled]
    return halves


def named_inputs(args):
    """(path, what it is) of every file of the runs this command reads: the runs, the baseline and each
    one's other half; written over, a run's two halves would disagree (HTML where its CSV was)."""
    inputs = [(run, f"input {run}") for run in args.runs] + \
        ([(args.baseline, f"--baseline {args.baseline}")] if args.baseline else [])
    halves = [(str(half), f"{half}, the {half.suffix[1:].upper()} half of {what}") for path, what in inputs
              for half in run_halves(path)]
    return inputs + halves


def check_distinct(outputs, inputs):
    """Refuses an output that is one of the inputs (or whose .partial is), and two outputs that are one file."""
    for k, out in enumerate(outputs):
        for source, what in inputs:
            for written in (out, partial_path(out)):
                if same_file(written, source):
                    raise InputError(f"--out: {written} is the same file as {what}: fbplot never writes over a "
                                     f"file of a run it reads; choose another name")
        for other in outputs[:k]:
            if same_file(out, other):
                raise InputError(f"--out: {other} and {out} are one file: one would overwrite the other")


def write_output(path, data):
    """`data` (bytes) to `path`, never torn: a regular file or a new name through PATH.partial and a
    rename; a descriptor of ours through itself; anything else in place, never replaced. No .partial
    is left behind on any failure."""
    path = str(path)
    descriptor = descriptor_named(path)
    try:
        if descriptor is not None:
            write_descriptor(descriptor, data)
        elif replaced_by_rename(path):
            write_replacing(path, data)
        else:
            write_in_place(path, data)
    except OSError as error:  # name the file asked for, not its .partial nor no file at all
        raise OSError(error.errno, error.strerror, path) from error


def write_replacing(path, data):
    refuse_foreign_partial(path)
    partial = partial_path(path)
    try:
        os.unlink(partial)  # a stale one of ours: never opened, so a link put there is not written through
    except FileNotFoundError:
        pass
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    except BaseException:  # KeyboardInterrupt too
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise


def write_descriptor(descriptor, data):
    """`data` through our own descriptor, after what was printed there already: it goes on wherever the
    stream goes (>> log.txt keeps the file's content), never reopened by name, renamed or truncated."""
    sys.stdout.flush()
    sys.stderr.flush()
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]


def write_in_place(path, data):
    """A device, a FIFO or a symlink (written through to where it leads). Opened without blocking
    so that a FIFO with no reader is an error instead of a hang."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENXIO and stat.S_ISFIFO(os.stat(path).st_mode):
            raise InputError(f"--out {path}: a FIFO with no reader; start the reader first")
        raise
    with os.fdopen(descriptor, "wb") as file:
        os.set_blocking(descriptor, True)  # a reader slower than us is waited for, not an error
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.ftruncate(descriptor, 0)
        file.write(data)


def bandwidth_of(metric):
    key = f"{metric}_mean_bytes_per_s"
    return lambda row: row.get(key, 0.0) / 1e9


def latency_of(row):
    return row["time_mean_s"] * 1e6


def title_of(runs, what):
    row = runs[0]["rows"][0]
    context = runs[0]["context"]
    hosts = context.get("hosts", {})
    ranks = context.get("ranks", row.get("ranks", "?"))
    where = f"{ranks} rank(s) on {len(hosts)} host(s)" if hosts else f"{ranks} rank(s)"
    return f"{row.get('benchmark', row['collective'])} ({row.get('backend', '?')}): {what}, {where}"


def bandwidth_measure(run, metric):
    """(value of a row, axis label, title) of the bandwidth plot of `run`."""
    if run["rows"][0].get("backend") == "verbs":  # RDMA people read link speeds in Gb/s
        return (lambda row: row.get("busbw_mean_bytes_per_s", 0.0) * 8 / 1e9,
                "bandwidth (Gb/s, average)", "bandwidth against size")
    return bandwidth_of(metric), f"{metric} (GB/s, 1e9 B/s)", f"{metric} against size"


def plot_bandwidth(args):
    runs = [load_run(p) for p in args.runs]
    baseline = load_run(args.baseline) if args.baseline else None
    value_of, label, what = bandwidth_measure(runs[0], args.metric)
    comparison = comparison_for(args, baseline, runs)
    draw(runs, baseline, value_of, label, title_of(runs, what), args.out, log_y=False, comparison=comparison)


def plot_latency(args):
    runs = [load_run(p) for p in args.runs]
    baseline = load_run(args.baseline) if args.baseline else None
    comparison = comparison_for(args, baseline, runs)
    draw(runs, baseline, latency_of, "time per operation (us, mean)", title_of(runs, "latency against size"),
         args.out, log_y=True, comparison=comparison)


def plot_heatmap(args):
    run = load_run(args.runs[0])
    cells = {}
    for row in run["rows"]:
        if int(row.get("pair", -1)) >= 0:
            cells[(int(row["pair"]), row["size_bytes"])] = row.get("busbw_mean_bytes_per_s", math.nan) * 8 / 1e9
    pairs = sorted({p for p, _ in cells})
    sizes = sorted({s for _, s in cells})
    if len(pairs) < 2:
        raise InputError(f"{run['path']}: a heat map needs a multi-pair verbs run (mpirun -np 4 or more)")
    grid = [[cells.get((p, s), float("nan")) for s in sizes] for p in pairs]
    figure, axis = plt.subplots(figsize=(max(6, 0.55 * len(sizes) + 2), max(2.5, 0.6 * len(pairs) + 1.5)), dpi=110)
    image = axis.imshow(grid, aspect="auto", cmap="viridis")
    axis.set_xticks(range(len(sizes)))
    axis.set_xticklabels([human_bytes(s) for s in sizes], rotation=45, ha="right", fontsize=8)
    axis.set_yticks(range(len(pairs)))
    axis.set_yticklabels([f"pair {p}" for p in pairs])
    axis.set_xlabel("message size")
    axis.set_title(title_of([run], "bandwidth per pair"))
    colorbar = figure.colorbar(image, ax=axis)
    colorbar.set_label("Gb/s")
    peak = max((v for row in grid for v in row if not math.isnan(v)), default=1)
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            if not math.isnan(value) and len(sizes) <= 24:
                axis.text(j, i, f"{value:.2g}", ha="center", va="center", fontsize=6,
                          color="white" if value < 0.6 * peak else "black")
    save(figure, args.out)


def plot_matrix(args):
    """The link matrix of a --pairs run: figures per node pair, SLOW nodes, SLOW links and failed
    cells marked in red, from the run's JSON (its summary holds the matrix and the verdict)."""
    run = load_run(args.runs[0])
    matrix = run["summary"].get("matrix")
    if not isinstance(matrix, dict) or not matrix.get("units"):
        raise InputError(f"{run['path']}: no link matrix (a --pairs all/quick/rail run's JSON has one)")
    units = matrix["units"]
    grid = [[float("nan") if v is None else float(v) for v in row] for row in matrix["grid"]]
    order = leaf_order(run, units)  # inside-leaf blocks on the diagonal
    units = [units[i] for i in order]
    grid = [[grid[i][j] for j in order] for i in order]
    index = {u: i for i, u in enumerate(units)}
    lines = [line for v in (run["summary"].get("verdicts") or []) if v.get("subject") == "link matrix"
             for line in v.get("lines", [])]
    slow_nodes = {line.partition(":")[2].split("(")[0].strip() for line in lines if line.startswith("SLOW node")}
    slow_links = {tuple(part.strip() for part in line.partition(":")[2].split("(")[0].split(" - ")[:2])
                  for line in lines if line.startswith("SLOW link")}
    failed = {(c["a"], c["b"]) for c in (matrix.get("cells") or []) if c.get("failure")}
    size = max(5, 0.7 * len(units) + 2.5)
    figure, axis = plt.subplots(figsize=(size + 1.2, size), dpi=110)
    image = axis.imshow(grid, cmap="viridis")
    axis.set_xticks(range(len(units)))
    axis.set_xticklabels(units, rotation=45, ha="right", fontsize=8)
    axis.set_yticks(range(len(units)))
    axis.set_yticklabels(units, fontsize=8)
    for tick in axis.get_xticklabels() + axis.get_yticklabels():
        if tick.get_text() in slow_nodes:
            tick.set_color("red")
            tick.set_fontweight("bold")
    finite = [v for row in grid for v in row if not math.isnan(v)]
    top = max(finite) if finite else 1
    for i, row in enumerate(grid):
        for j, value in enumerate(row):
            pair = (units[i], units[j])
            if pair in failed or pair[::-1] in failed:
                axis.text(j, i, "FAIL", ha="center", va="center", fontsize=7, color="red", fontweight="bold")
            elif not math.isnan(value) and len(units) <= 24:
                axis.text(j, i, f"{value:.3g}", ha="center", va="center", fontsize=6,
                          color="white" if value < 0.6 * top else "black")
            if pair in slow_links or pair[::-1] in slow_links:
                axis.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    for node in slow_nodes & set(index):
        k = index[node]
        axis.add_patch(plt.Rectangle((-0.5, k - 0.5), len(units), 1, fill=False, edgecolor="red", linewidth=2))
    leaf_of = node_leaves(run)
    for k in range(1, len(units)):  # a line between leaves
        if leaf_of.get(unit_node(units[k], leaf_of)) != leaf_of.get(unit_node(units[k - 1], leaf_of)):
            axis.axhline(k - 0.5, color="white", linewidth=1.5)
            axis.axvline(k - 0.5, color="white", linewidth=1.5)
    axis.set_title(title_of([run], f"link matrix at {human_bytes(matrix.get('size_bytes', 0))}"))
    colorbar = figure.colorbar(image, ax=axis)
    colorbar.set_label(matrix.get("unit", ""))
    save(figure, args.out)


def run_switches(run):
    topology = run["context"].get("topology") if isinstance(run["context"], dict) else None
    switches = topology.get("run_switches") if isinstance(topology, dict) else None
    return switches if isinstance(switches, list) else []


def node_leaves(run):
    """{node: its leaf switch} from the run's slice of its topology (empty without one)."""
    return {node: s["name"] for s in run_switches(run) if isinstance(s, dict) for node in s.get("nodes", [])}


def unit_node(unit, leaf_of):
    """A matrix unit's node: the unit itself, or its host when the units are one node's ranks ("vm#2")."""
    return unit if unit in leaf_of else unit.rsplit("#", 1)[0]


def leaf_order(run, units):
    """Indices of `units` leaf by leaf (stable), as the tree runs them."""
    leaf_of = node_leaves(run)
    leaves = [s["name"] for s in run_switches(run) if s.get("nodes")]
    rank = {leaf: i for i, leaf in enumerate(leaves)}
    return sorted(range(len(units)), key=lambda i: rank.get(leaf_of.get(unit_node(units[i], leaf_of)), len(rank)))


def median(values):
    """The median of `values`, None when there are none."""
    values = list(values)
    return statistics.median(values) if values else None


def explains(accused, a, b, leaf_of):
    """Whether the accused part (kind, name) accounts for the cell a - b, as the tree verdict
    attributes cells: a node its row, a link its cell, a leaf the pairs inside it, an uplink the
    cross-leaf pairs through it, a spine every cross-leaf pair."""
    kind, part = accused
    la, lb = leaf_of.get(a), leaf_of.get(b)
    if kind == "node":
        return part in (a, b)
    if kind == "link":
        return {a, b} == {p.strip() for p in part.split(" - ")}
    if kind == "leaf":
        return la == lb == part
    if kind == "uplink":
        return (la == part.split(" - ")[0]) != (lb == part.split(" - ")[0])
    return kind == "spine" and la != lb


def part_scores(run, accused):
    """Each node cable, leaf and uplink scored as the tree verdict sees it: the median of its cells
    (a node's row; the pairs inside a leaf; the cross-leaf pairs through an uplink), less the cells
    another accused part accounts for, over the median of the cells no accused part accounts for.
    So a slow uplink does not paint its leaf's node cables red. None where a part has no cells."""
    matrix = run["summary"].get("matrix") or {}
    leaf_of = node_leaves(run)
    cells = [(unit_node(c["a"], leaf_of), unit_node(c["b"], leaf_of), float(c["value"]))
             for c in (matrix.get("cells") or []) if isinstance(c.get("value"), (int, float)) and not c.get("failure")]
    if not cells:
        raise InputError(f"{run['path']}: no measured cells in its link matrix")
    reference = median(v for a, b, v in cells if not any(explains(p, a, b, leaf_of) for p in accused)) or \
        median(v for _, _, v in cells)

    def score(part, belongs):
        others = [p for p in accused if p != part]
        value = median(v for a, b, v in cells if belongs(a, b) and not any(explains(p, a, b, leaf_of) for p in others))
        return None if value is None or not reference else value / reference
    leaves = set(leaf_of.values())
    nodes = {n: score(("node", n), lambda a, b, n=n: n in (a, b)) for n in leaf_of}
    inside = {leaf: score(("leaf", leaf), lambda a, b, leaf=leaf: leaf_of.get(a) == leaf_of.get(b) == leaf)
              for leaf in leaves}
    uplinks = {}
    for s in run_switches(run):
        for parent in s.get("parents", []) if s.get("nodes") else []:
            uplinks[s["name"]] = score(("uplink", f"{s['name']} - {parent}"),
                                       lambda a, b, leaf=s["name"]: (leaf_of.get(a) == leaf) != (leaf_of.get(b) == leaf))
    return nodes, inside, uplinks


def plot_tree(args):
    """The switch tree of a --pairs run with --topology: each node cable, leaf and uplink coloured by
    its score (part_scores: 1 is the fabric's norm), the parts the verdict accused drawn bold, from
    the run's JSON."""
    run = load_run(args.runs[0])
    switches = run_switches(run)
    if not switches or not (run["summary"].get("matrix") or {}).get("cells"):
        raise InputError(f"{run['path']}: no switch tree with a link matrix (a --pairs run with --topology has one)")
    accused = {(a.get("kind"), a.get("part")) for v in (run["summary"].get("verdicts") or [])
               for a in v.get("accused", [])}
    nodes, leaves, uplinks = part_scores(run, accused)
    colours = plt.get_cmap("RdYlGn")
    colour = (lambda x: "lightgrey" if x is None else colours(max(0.0, min(1.0, x / 1.2))))
    label = (lambda x: "-" if x is None else f"{x:.2f}x")
    leaf_list = [s for s in switches if s.get("nodes")]
    levels = sorted({int(s.get("level", 1)) for s in switches})
    width = max(len(nodes), 2 * len(leaf_list), 4)
    figure, axis = plt.subplots(figsize=(max(6.0, 0.8 * width + 2), 1.8 * (len(levels) + 1) + 1), dpi=110)
    x_of, y_of = {}, {}
    cursor = 0.0
    for leaf in leaf_list:  # nodes under their leaf, leaves above the middle of their nodes
        members = leaf["nodes"]
        for k, node in enumerate(members):
            x_of[("node", node)] = cursor + k
        x_of[("switch", leaf["name"])] = cursor + (len(members) - 1) / 2
        cursor += len(members) + 1
    for level in levels[1:]:  # upper switches spread over the width
        upper = [s for s in switches if int(s.get("level", 1)) == level]
        for k, s in enumerate(upper):
            x_of[("switch", s["name"])] = (cursor - 2) * (k + 1) / (len(upper) + 1)
    for s in switches:
        y_of[s["name"]] = float(levels.index(int(s.get("level", 1))) + 1)
    for leaf in leaf_list:
        name, lx = leaf["name"], x_of[("switch", leaf["name"])]
        for parent in leaf.get("parents", []):
            if ("switch", parent) not in x_of:
                continue
            bad = ("uplink", f"{name} - {parent}") in accused
            axis.plot([lx, x_of[("switch", parent)]], [y_of[name], y_of[parent]], color=colour(uplinks.get(name)),
                      linewidth=5 if bad else 3, zorder=1)
            axis.text((lx + x_of[("switch", parent)]) / 2, (y_of[name] + y_of[parent]) / 2, label(uplinks.get(name)),
                      fontsize=7, ha="center", fontweight="bold" if bad else "normal")
        for node in leaf["nodes"]:
            nx = x_of[("node", node)]
            bad = ("node", node) in accused
            axis.plot([nx, lx], [0, y_of[name]], color=colour(nodes.get(node)), linewidth=4 if bad else 2, zorder=1)
            axis.text(nx, -0.25, node, rotation=45, ha="right", va="top", fontsize=7,
                      color="red" if bad else "black", fontweight="bold" if bad else "normal")
            axis.text(nx, 0.1, label(nodes.get(node)), ha="center", fontsize=6)
    for s in switches:
        if ("switch", s["name"]) not in x_of:
            continue
        score = leaves.get(s["name"]) if s.get("nodes") else None
        bad = ("leaf", s["name"]) in accused or ("spine", s["name"]) in accused
        axis.scatter([x_of[("switch", s["name"])]], [y_of[s["name"]]], s=500, marker="s", color=colour(score),
                     edgecolors="red" if bad else "black", linewidths=2.5 if bad else 1, zorder=2)
        text = s["name"] + (f"\n{label(score)}" if s.get("nodes") else "")
        axis.text(x_of[("switch", s["name"])], y_of[s["name"]] + 0.22, text, ha="center", fontsize=7)
    axis.scatter([x for (kind, _), x in x_of.items() if kind == "node"], [0] * len(nodes), s=60, color="black", zorder=2)
    axis.set_ylim(-1.3, len(levels) + 0.7)
    axis.set_axis_off()
    matrix = run["summary"]["matrix"]
    axis.set_title(title_of([run], f"switch tree at {human_bytes(matrix.get('size_bytes', 0))}: each part's cells over the "
                            f"median cell (node cables, leaves inside, uplinks across)"), fontsize=9)
    mappable = plt.cm.ScalarMappable(cmap=colours, norm=matplotlib.colors.Normalize(0, 1.2))
    figure.colorbar(mappable, ax=axis, fraction=0.03).set_label("x the median cell")
    save(figure, args.out)


def plot_history(args):
    """Each series' figure per run (one panel per size bucket), its error bar, the band of its first
    level +- the threshold, and the runs where fb_history found a new level."""
    history = run_tool_json("fb_history", getattr(args, "history_bin", None), list(args.runs))
    buckets = []
    for series in history["series"]:
        if series["bucket"] not in buckets:
            buckets.append(series["bucket"])
    runs = history["runs"]
    figure, axes = plt.subplots(len(buckets), 1, figsize=(10, 3.4 * len(buckets) + 0.8), dpi=110, squeeze=False,
                                sharex=True)
    threshold = history["threshold"]
    x = list(range(1, len(runs) + 1))
    for axis, bucket in zip(axes[:, 0], buckets):
        for series in [s for s in history["series"] if s["bucket"] == bucket]:
            time = series["metric"] == "time"
            scale = 1e6 if time else 1e-9
            values = [v * scale for v in series["values"]]
            errors = [v * e for v, e in zip(values, series["relative_errors"])]
            line = axis.errorbar(x, values, yerr=errors, marker="o", markersize=3.5, capsize=2, linewidth=1.6,
                                 label=series["name"])
            first_level = values[:series["changes"][0]["run"]] if series["changes"] else values
            level = math.exp(sum(math.log(v) for v in first_level) / len(first_level))
            axis.axhspan(level * (1 - threshold), level * (1 + threshold), color=line[0].get_color(), alpha=0.12,
                         linewidth=0)
            for change in series["changes"]:
                colour = VERDICT_COLOURS[change["verdict"]]
                axis.axvline(change["run"] + 0.5, color=colour, linestyle="--", linewidth=1.2)
                axis.annotate(f"{change['verdict']} {(change['speedup'] - 1) * 100:+.1f} %",
                              (change["run"] + 0.55, change["after"] * scale), color=colour, fontsize=8)
            axis.set_ylabel("time (us)" if time else "busbw (GB/s)" if series["metric"] == "busbw" else "algbw (GB/s)")
        axis.set_title(f"sizes {bucket}", fontsize=10)
        axis.grid(True, alpha=0.35)
        axis.legend(fontsize=7, loc="best")
    labels = []
    for i, r in enumerate(runs, start=1):
        label = f"{i}\n{r['start_time'][:10]}" if r["start_time"] else str(i)
        labels.append(label + (f"\n{r['tags'][:18]}" if r["tags"] else ""))
    axes[-1, 0].set_xticks(x, labels, fontsize=7)
    axes[-1, 0].set_xlabel("run (oldest first); band: the first level +- the threshold; dashed: a new level")
    verdict = "REGRESSION from run {}".format(history["first_regression_run"] + 1) if history["regression"] \
        else "no level got slower"
    figure.suptitle(f"fb_history: {len(runs)} runs, {verdict}")
    save(figure, args.out)


def embedded_png(plotter, args):
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "figure"
        plotter(argparse.Namespace(**{**vars(args), "out": prefix}))
        return base64.b64encode(prefix.with_suffix(".png").read_bytes()).decode()


def find_tool(name, explicit=None):
    """Our C++ tool `name`: the one given, else beside this script (an install: /usr/bin), in a
    build folder of the checkout this script is in, else on PATH. Never in the working folder, nor
    anywhere named relative to it: whoever made a folder we are run in must not choose our code."""
    if explicit:
        return explicit
    script = Path(os.path.realpath(__file__)).parent  # where the script really is, however called
    checkout = script.parent
    candidates = [script / name, checkout / "build" / "bin" / name] + sorted(checkout.glob(f"build*/bin/{name}"))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    # An empty or relative PATH entry ("", ".", "bin") means the working folder too: left out.
    folders = [folder for folder in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(folder)]
    return shutil.which(name, path=os.pathsep.join(folders)) if folders else None


class ToolMissing(InputError):
    """fb_compare or fb_history is nowhere find_tool looks."""


class ToolFailure(Exception):
    """One of our tools failed at run time (its exit 3, a signal, no JSON): fbplot exits 3, a failure too."""


def tool_message(name, result):
    """The tool's own error line, without its "fb_compare: error:" (fbplot prefixes its own)."""
    lines = [line.strip() for line in (result.stderr + "\n" + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(f"{name}: error:")] or lines[-1:] or ["(no message)"]
    return errors[0].removeprefix(f"{name}: error:").strip()


def run_tool_json(name, explicit, arguments):
    """Runs one of our tools with --json and returns its document. Its exit 1 (a regression) is a
    verdict; its exit 2 (bad input: runs with no rows in common) an InputError; anything else a
    ToolFailure. ToolMissing when there is no tool to run."""
    tool = find_tool(name, explicit)
    if not tool:
        raise ToolMissing(f"{name} not found beside this script, in its checkout's build*/bin folder or on PATH "
                          f"(build it, or give --{name.replace('fb_', '')}-bin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        try:
            result = subprocess.run([tool] + [str(a) for a in arguments] + ["--json", str(out)], capture_output=True,
                                    text=True, errors="replace")
        except OSError as error:
            raise InputError(f"{name} {tool} cannot be run: {error.strerror or error}")
        if result.returncode == 2:
            raise InputError(f"{name}: {tool_message(name, result)}")
        if result.returncode not in (0, 1) or not out.exists():
            code = f"signal {-result.returncode}" if result.returncode < 0 else f"exit {result.returncode}"
            raise ToolFailure(f"{name} failed ({code}): {tool_message(name, result)}")
        try:
            return json.loads(out.read_text())
        except (ValueError, UnicodeDecodeError) as error:
            raise ToolFailure(f"{name} wrote no JSON fbplot can read: {error}")


def comparison_of(args, baseline, run):
    """fb_compare's rows for the ratio panel and the report, or None when it cannot be found (a
    note says so). Its refusal of the runs, or its failure, is an error: no plain ratios then."""
    try:
        return run_tool_json("fb_compare", getattr(args, "compare_bin", None), [baseline["path"], run["path"]])
    except ToolMissing as error:
        print(f"fbplot: note: {error}; the ratio panel shows plain ratios without intervals", file=sys.stderr)
        return None


def comparison_for(args, baseline, runs):
    """The comparison a figure draws: the report's when it made one already (so fb_compare runs once
    and its note is printed once), else fb_compare's for a single run against the baseline."""
    if not baseline or len(runs) != 1:
        return None
    if "comparison" in vars(args):
        return args.comparison
    return comparison_of(args, baseline, runs[0])


def table(headers, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_report(args):
    run = load_run(args.runs[0])
    baseline = load_run(args.baseline) if args.baseline else None
    latency = run["rows"][0].get("benchmark", "").endswith("_lat")
    # fb_compare first: its refusal of the runs ends the command before any picture is drawn.
    comparison = comparison_of(args, baseline, run) if baseline else None
    base_args = argparse.Namespace(runs=args.runs[:1], baseline=args.baseline, metric=args.metric, out=None,
                                   comparison=comparison)
    figures = []
    # A row with no size or no bandwidth (a replayed call of count 0) stays in the table, not on a log axis.
    if not latency and curves([run], bandwidth_measure(run, args.metric)[0]):
        figures.append(("Bandwidth against size", embedded_png(plot_bandwidth, base_args)))
    if curves([run], latency_of):
        figures.append(("Latency against size", embedded_png(plot_latency, base_args)))
    if len({r.get("pair", -1) for r in run["rows"] if int(r.get("pair", -1)) >= 0}) > 1:
        figures.append(("Bandwidth per pair", embedded_png(plot_heatmap, base_args)))
    if (run["summary"].get("matrix") or {}).get("units"):
        figures.append(("Link matrix", embedded_png(plot_matrix, base_args)))
        if run_switches(run):
            figures.append(("Switch tree", embedded_png(plot_tree, base_args)))
    context = run["context"]
    facts = [("file", str(run["path"])), ("benchmark", run["rows"][0].get("benchmark", "")),
             ("start", context.get("start_time", "")), ("ranks", context.get("ranks", "")),
             ("hosts", ", ".join(f"{h} ({n})" for h, n in context.get("hosts", {}).items())),
             ("MPI", context.get("mpi_library", "")), ("fabricbench", context.get("fabricbench_version", "")),
             ("git", context.get("git_revision", "")), ("tags", context.get("tags", "")),
             ("settings", "; ".join(sorted({r.get("settings", "") for r in run["rows"]} - {""})))]
    rank_context = context.get("rank_context") or [{}]
    if rank_context and rank_context[0].get("gpus"):
        facts.append(("GPU", rank_context[0]["gpus"][0].get("gpu_name", "")))
        facts.append(("NCCL", rank_context[0].get("nccl_library_version", "")))
    rows = [[human_bytes(r["size_bytes"]), series_key(r), f"{r['time_mean_s'] * 1e6:.2f}",
             f"{r.get('algbw_mean_bytes_per_s', 0) / 1e9:.3f}", f"{r.get('busbw_mean_bytes_per_s', 0) / 1e9:.3f}",
             r.get("wrong", "")] for r in run["rows"]]
    sections = [f"<h2>Context</h2>{table(['item', 'value'], [f for f in facts if f[1] != ''])}"]
    verdicts = run["summary"].get("verdicts") or []
    if verdicts:  # the run's own verdicts: line rate, NCCL path (its log's findings), link matrix
        sections.append("<h2>Verdicts</h2>" + table(["subject", "verdict", "why"], [
            [v.get("subject", ""), v.get("word", ""), " / ".join(v.get("lines", []))] for v in verdicts]))
    if baseline:
        c = comparison
        if c:
            counts = html.escape(", ".join(f"{n} {k}" for k, n in c["counts"].items()))
            differences = "".join(f"<li>context differs - {html.escape(d['item'])}: "
                                  f"{html.escape(d['baseline'])} &rarr; {html.escape(d['new'])}</li>"
                                  for d in c["context_differences"])
            verdict = "REGRESSION" if c["regression"] else "no regression"

            def interval(r):
                if r["low"] is None:
                    return "unknown"
                return f"{(r['low'] - 1) * 100:+.1f} .. {(r['high'] - 1) * 100:+.1f} %"
            sections.insert(0, f"<h2>Against {html.escape(str(baseline['path']))}: {verdict}</h2>"
                               f"<p>{counts}; geometric mean new/baseline {c['geomean_speedup']:.3f} over "
                               f"{c['geomean_rows']} rows</p><ul>{differences}</ul>" +
                            table(["size", "collective", "placement", "metric", "baseline", "new", "change",
                                   "interval", "uncertainty", "verdict"],
                                  [[human_bytes(r["size_bytes"]), r["collective"], r["placement"], r["metric"],
                                    f"{r['baseline']:.4g}", f"{r['new']:.4g}", f"{(r['speedup'] - 1) * 100:+.1f} %",
                                    interval(r), r["uncertainty"], r["verdict"]] for r in c["rows"]]))
        else:
            sections.insert(0, "<p>fb_compare was not found (see the note on stderr): no verdicts.</p>")
    sections.append("<h2>Rows</h2>" + table(["size", "series", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong"],
                                              rows))
    pictures = "".join(f"<h2>{html.escape(t)}</h2><img alt='{html.escape(t)}' src='data:image/png;base64,{png}'>"
                       for t, png in figures) or \
        "<p>No pictures: no row has a size and a time above 0 (a 0 B row has no place on a log axis of sizes).</p>"
    # The page runs no script and loads nothing: every picture is inline, and the policy says so
    # to the browser too, in case an unescaped string ever slipped through.
    document = f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<title>fabricbench: {html.escape(run['label'])}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}}
table{{border-collapse:collapse;font-size:13px;margin:1em 0}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
th{{background:#f0f0f0}}img{{max-width:100%}}</style></head><body>
<h1>fabricbench: {html.escape(title_of([run], run['label']))}</h1>{''.join(sections[:1])}{pictures}{''.join(sections[1:])}
</body></html>
"""
    write_output(args.out, document.encode())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["bandwidth", "latency", "heatmap", "matrix", "tree", "history", "report"])
    parser.add_argument("runs", nargs="+", help="fabricbench CSV or JSON files")
    parser.add_argument("--baseline", help="a run to draw as the reference, with a ratio panel")
    parser.add_argument("--metric", default="busbw", choices=["busbw", "algbw"])
    parser.add_argument("--compare-bin", help="fb_compare to call for the verdicts and intervals (default: found)")
    parser.add_argument("--history-bin", help="fb_history to call for the history (default: found)")
    parser.add_argument("--out", required=True, help="PREFIX of PREFIX.png/.svg, or the report's .html")
    args = parser.parse_args()
    plotters = {"bandwidth": plot_bandwidth, "latency": plot_latency, "heatmap": plot_heatmap, "matrix": plot_matrix,
                "tree": plot_tree, "history": plot_history, "report": render_report}
    try:
        for path in args.runs + ([args.baseline] if args.baseline else []):
            check_input(path)
        outputs = output_paths(args)
        for path in outputs:
            check_output(path, figure=args.what != "report")
        check_distinct([str(path) for path in outputs], named_inputs(args))
        plotters[args.what](args)
    except InputError as error:
        print(f"fbplot: error: {error}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        # A shape load_run's checks did not foresee: still the input's fault, said in one line.
        inputs = ", ".join(args.runs + ([args.baseline] if args.baseline else []))
        detail = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(f"fbplot: error: {inputs}: content of a shape fbplot cannot draw ({detail})", file=sys.stderr)
        return 2
    except ToolFailure as error:
        print(f"fbplot: error: {error}", file=sys.stderr)
        return 3
    except OSError as error:  # an --out that cannot be written, a file that cannot be read
        where = f" {error.filename}" if error.filename else ""
        print(f"fbplot: error: cannot write or read{where}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
