#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch Flight Recorder pickle dumps as the JSON fb_import reads (docs/replay.md).

    scripts/flight-recorder-to-json.py OUT_DIR DUMP...

A hang's dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/tmp/nccl_trace_rank_ writes /tmp/nccl_trace_rank_<R>)
is a pickle of plain values. Each DUMP becomes OUT_DIR/<its name>.json; the name keeps its rank.
Nothing but plain values is unpickled: a pickle that names any class or function is refused, so a
file from elsewhere cannot run code; a dump that is not a regular file, over 64 MiB, or that would
expand past 10 million values is refused too. Each output is written beside itself and renamed, and
an existing file is never replaced.
"""
import json
import math
import os
import pickle
import stat
import sys

MAX_DUMP_BYTES = 64 << 20
MAX_VALUES = 10_000_000


class PlainValues(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it names {module}.{name}: not a Flight Recorder dump of plain values")


def check_plain(document):
    """Walks the values once (shared ones count each time they appear, as JSON would write them)."""
    stack, seen = [document], 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise ValueError(f"it expands past {MAX_VALUES} values")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, (str, int)):
                    raise ValueError(f"a key of type {type(key).__name__}")
                stack.append(item)
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"a number JSON cannot hold ({value})")
        elif value is not None and not isinstance(value, (str, int, float, bool, bytes)):
            raise ValueError(f"a value of type {type(value).__name__}")


def convert(dump, out_dir):
    info = os.stat(dump)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if info.st_size > MAX_DUMP_BYTES:
        raise ValueError(f"more than {MAX_DUMP_BYTES >> 20} MiB")
    with open(dump, "rb") as f:
        document = PlainValues(f).load()
    if not isinstance(document, dict) or "entries" not in document:
        raise ValueError("not a Flight Recorder dump (no 'entries')")
    check_plain(document)
    name = os.path.basename(dump)
    if name.endswith(".pkl"):
        name = name[:-4]
    target = os.path.join(out_dir, name + ".json")
    if os.path.lexists(target):
        raise ValueError(f"{target} exists: never replaced")
    partial = target + ".partial"
    try:
        with open(partial, "x") as out:
            json.dump(document, out, allow_nan=False, default=lambda b: b.decode("utf-8", "replace"))
        os.link(partial, target)  # fails where the target appeared meanwhile: nothing replaced
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)
    return target


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: flight-recorder-to-json.py OUT_DIR DUMP...")
    out_dir, dumps = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for dump in dumps:
        try:
            target = convert(dump, out_dir)
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, RecursionError,
                MemoryError, AttributeError, IndexError, KeyError) as error:
            sys.exit(f"flight-recorder-to-json: {dump}: {error}")
        print(f"{dump} -> {target}")


if __name__ == "__main__":
    main()
