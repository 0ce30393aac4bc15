#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every executable's --help and the manual list the same flags.

Flag tables in docs/*.md are marked with `<!-- flags: NAME ... -->` on the line before them, NAME
an executable or a group (`collectives`, `rdma`). The long flags in a table's first column are what
the manual documents for those executables; an executable's flags may be spread over several
tables (the shared ones and, say, the link-matrix ones). A flag --help shows that no table has,
or a table's flag that --help does not show, fails the test, as does an executable with no table."""
import argparse
import re
import subprocess
import sys
from pathlib import Path

MARKER = re.compile(r"<!--\s*flags:\s*([^>]*?)\s*-->")
LONG_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
GROUPS = {"collectives": lambda name: name in COLLECTIVES, "rdma": lambda name: name.startswith("fb_rdma_")}
COLLECTIVES = set()


def documented_flags(docs):
    """{table owner (group or executable): set of long flags}, from every marked table."""
    owners = {}
    for page in sorted(docs.glob("*.md")):
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            marker = MARKER.search(line)
            if not marker:
                continue
            rows = []
            for row in lines[i + 1:]:
                if not row.startswith("|"):
                    if rows:
                        break
                    continue
                rows.append(row)
            if not rows:
                sys.exit(f"{page.name}:{i + 1}: a flags marker with no table after it")
            flags = set()
            for row in rows[2:]:  # header and rule first
                first_cell = re.split(r"(?<!\\)\|", row)[1]  # "\|" inside a cell is a literal bar
                flags |= set(LONG_FLAG.findall(" ".join(re.findall(r"`([^`]*)`", first_cell))))
            for owner in marker.group(1).split():
                owners.setdefault(owner, set()).update(flags)
    return owners


def help_flags(executable):
    result = subprocess.run([str(executable), "--help"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"{executable.name} --help: exit {result.returncode}\n{result.stderr}")
    # An option line starts with its names ("  -n,--iters INT  ..."); flags named in a description
    # ("rows must also share their --tag labels") are not options of this executable.
    names = set()
    for line in result.stdout.splitlines():
        spec = line.split()[0] if line.startswith("  ") and line.split() else ""
        if spec.startswith("-"):
            names |= {name for name in spec.split(",") if name.startswith("--")}
    return names - {"--help"}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--docs", required=True, type=Path)
    parser.add_argument("--collectives", required=True, help="comma-separated collective names")
    options = parser.parse_args()
    COLLECTIVES.update(f"fb_{c}" for c in options.collectives.split(","))
    owners = documented_flags(options.docs)
    unknown = [o for o in owners if o not in GROUPS and not (options.bin / o).exists()]
    problems = [f"a flags table for '{o}', which is neither a group nor a built executable" for o in unknown]
    # Google Benchmark programs take Google Benchmark's flags, documented by it.
    executables = sorted(p for p in options.bin.glob("fb_*") if p.is_file() and not p.name.startswith("fb_micro_"))
    for executable in executables:
        name = executable.name
        documented = set(owners.get(name, set()))
        for group, member in GROUPS.items():
            if member(name):
                documented |= owners.get(group, set())
        shown = help_flags(executable)
        if not documented:
            problems.append(f"{name}: no flags table in docs/ (mark one with <!-- flags: {name} -->)")
            continue
        if shown - documented:
            problems.append(f"{name}: --help shows {sorted(shown - documented)}, which no table in docs/ has")
        if documented - shown:
            problems.append(f"{name}: docs/ list {sorted(documented - shown)}, which --help does not show")
    for problem in problems:
        print("FAIL:", problem)
    print(f"{len(executables)} executables, {sum(len(f) for f in owners.values())} documented flags in "
          f"{len(owners)} tables' owners; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
