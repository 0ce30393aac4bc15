#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""PyTorch Flight Recorder pickle dumps as the JSON fb_import reads (docs/replay.md).

    scripts/flight-recorder-to-json.py OUT_DIR DUMP...

A hang's dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/tmp/nccl_trace_rank_ writes /tmp/nccl_trace_rank_<R>)
is a pickle of plain values. Each DUMP becomes OUT_DIR/<its name>.json; the name keeps its rank.
Nothing but plain values is unpickled: a pickle that names any class or function is refused, so a
file from elsewhere cannot run code. Existing files are never overwritten.
"""
import json
import os
import pickle
import sys


class PlainValues(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it names {module}.{name}: not a Flight Recorder dump of plain values")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: flight-recorder-to-json.py OUT_DIR DUMP...")
    out_dir, dumps = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for dump in dumps:
        try:
            with open(dump, "rb") as f:
                document = PlainValues(f).load()
        except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError) as error:
            sys.exit(f"flight-recorder-to-json: {dump}: {error}")
        if not isinstance(document, dict) or "entries" not in document:
            sys.exit(f"flight-recorder-to-json: {dump}: not a Flight Recorder dump (no 'entries')")
        name = os.path.basename(dump)
        if name.endswith(".pkl"):
            name = name[:-4]
        target = os.path.join(out_dir, name + ".json")
        try:
            with open(target, "x") as out:  # never over an existing file
                json.dump(document, out)
        except (OSError, TypeError, ValueError) as error:
            sys.exit(f"flight-recorder-to-json: {target}: {error}")
        print(f"{dump} -> {target}")


if __name__ == "__main__":
    main()
