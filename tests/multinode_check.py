#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a multi-node run's CSV and JSON: every row correct and spanning the expected hosts, the
context listing each host with its rank count and local ranks 0..k-1 on every host.

    multinode_check.py RUN.csv RUN.json --hosts mhnode1,mhnode2,mhnode3 --ranks-per-host 2
"""
import argparse
import csv
import json
import sys


def check(csv_path, json_path, hosts, per_host):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(json_path) as f:
        document = json.load(f)
    context = document["context"]
    problems = []
    if not rows:
        problems.append("no rows")
    if document.get("complete") is not True:
        problems.append("JSON not complete")
    for r in rows:
        where = f"{r['collective']} {r['size_bytes']} B {r['placement']}"
        if int(r["wrong"]) != 0:
            problems.append(f"{where}: {r['wrong']} wrong elements")
        if int(r["hosts"]) != len(hosts) or int(r["ranks"]) != len(hosts) * per_host:
            problems.append(f"{where}: hosts={r['hosts']} ranks={r['ranks']}")
        if r["slowest_host"] not in hosts:
            problems.append(f"{where}: slowest_host '{r['slowest_host']}' is not a fake host")
    if context["hosts"] != {h: per_host for h in hosts}:
        problems.append(f"context hosts {context['hosts']}")
    by_host = {}
    for rank, host in enumerate(context["host_of_rank"]):
        by_host.setdefault(host, []).append(context["local_rank_of_rank"][rank])
    if any(sorted(local) != list(range(per_host)) for local in by_host.values()):
        problems.append(f"local ranks per host {by_host}")
    return rows, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv")
    parser.add_argument("json")
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--ranks-per-host", type=int, required=True)
    options = parser.parse_args()
    hosts = options.hosts.split(",")
    rows, problems = check(options.csv, options.json, hosts, options.ranks_per_host)
    if problems:
        print("; ".join(problems[:5]))
        return 1
    print(f"{len(rows)} rows correct on {len(hosts)} hosts x {options.ranks_per_host} ranks, local ranks 0-"
          f"{options.ranks_per_host - 1} on each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
