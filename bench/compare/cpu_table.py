#!/usr/bin/env python3
"""cpu_table.py FILE: docs/results/cpu.md's tables from fabench_cpu_budget's JSON
(--benchmark_format=json). GB/s = 1e9 bytes/s of payload (destination bytes for a reduction);
x memcpy = the operation against memcpy of the same bytes timed in the same iterations.

A ring all-reduce sends 2(n-1)/n S per rank and reduces (n-1)/n S, so overlapped with the wire a
core that reduces at R GB/s keeps up with a link of 2R GB/s = 16 R Gb/s; a 400 Gb/s (50 GB/s)
port needs ceil(25 / R) such cores per rank (--reduce-threads)."""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def size_name(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    a = ap.parse_args()
    doc = gbjson.read(a.file)
    runs = [b for b in gbjson.iterations(doc) if not gbjson.failed(b)]
    print(f"reduce path chosen by default here: {doc['context'].get('reduce_path', '?')}\n")
    print("| kernel | S | GB/s | memcpy GB/s | x memcpy | ring all-reduce fed per core | cores for 400 Gb/s |")
    print("|---|---|---|---|---|---|---|")
    for b in runs:
        parts = gbjson.base_name(b["name"]).split("/")
        if parts[0] not in ("memcpy", "reduce", "reduce_threads"):
            continue
        size = int(parts[-1])
        kernel = "/".join(parts[1:-1]) if parts[0] != "memcpy" else "memcpy"
        if parts[0] == "reduce_threads":
            kernel = f"{parts[1]} {parts[2]}, {parts[3]} thread(s)"
        gbps = b["GBps"]
        fed = f"{16 * gbps:.0f} Gb/s" if parts[0] == "reduce" and parts[3] == "sum" else ""
        cores = f"{math.ceil(25 / gbps)}" if fed else ""
        print(f"| {kernel} | {size_name(size)} | {gbps:.2f} | {b['memcpy_GBps']:.2f} | {b['x_memcpy']:.2f} "
              f"| {fed} | {cores} |")
    print("\n| other hot path | rate |")
    print("|---|---|")
    for b in runs:
        name = gbjson.base_name(b["name"])
        if name.startswith("stats"):
            print(f"| stats of 10 M samples (sort, percentiles, moments) | {b['items_per_second'] / 1e6:.1f} M samples/s |")
        elif name.startswith("kv/plan"):
            print(f"| KV work-request lists built (fragmented, unmerged) | {b['WRs_per_s'] / 1e6:.2f} M WRs/s |")
        elif name.startswith("kv/"):
            what = "KV pages filled with the pattern" if name.startswith("kv/fill") else "KV pages checked"
            print(f"| {what} | {b['bytes_per_second'] / 1e9:.2f} GB/s ({8 * b['bytes_per_second'] / 1e9:.0f} Gb/s) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
