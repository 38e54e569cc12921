#!/usr/bin/env python3
"""congest_iso_table.py: bench/compare/congest_iso.sh's table.

  congest_iso_table.py OUT PAIRS

OUT holds, per pair i: congest-lat.i.json and congest-bw.i.json (fabench-congest), lat.i.c0.json
and lat.i.c3.json (one fabench-lat, one flow: write, send), lat.i.c1.json and lat.i.c2.json (two at once, one each way),
bw.i.c.json (fabench-bw -b). Compared per pair (the same stretch of the test bed's time), then
the median over pairs [min..max]:
  latency p50, mean   congest isolated_p50_us / isolated_us   against the one flow's p50_us /
                      mean_us (write, send), and against the mean of the two writes' at once
  bandwidth           congest isolated_GBps                   against fabench-bw's Gbps / 8 / 2
Latency is one way (half the round trip) in both tools. Exit 1 when a file is missing or a run
failed.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def one(path, prefix=None):
    """The single measured entry of a Google Benchmark JSON file (the first named PREFIX...)."""
    doc = gbjson.read(path, skip_leading=True)
    failures = []
    runs = [b for b in gbjson.measured(doc, "congest_iso_table.py", failures)
            if prefix is None or gbjson.base_name(b["name"]).startswith(prefix)]
    if failures or not runs:
        raise gbjson.GBJsonError(f"{path}: no measured entry")
    return runs[0]


def pair_rows(out, i):
    cl = one(os.path.join(out, f"congest-lat.{i}.json"), "congest/latency")
    cb = one(os.path.join(out, f"congest-bw.{i}.json"), "congest/bandwidth")
    single = one(os.path.join(out, f"lat.{i}.c0.json"))
    send = one(os.path.join(out, f"lat.{i}.c3.json"))
    both = [one(os.path.join(out, f"lat.{i}.c{s}.json")) for s in (1, 2)]
    bw = one(os.path.join(out, f"bw.{i}.c.json"))
    rows = {}
    for stat, ours, theirs in (("p50", "isolated_p50_us", "p50_us"), ("mean", "isolated_us", "mean_us")):
        rows[f"latency {stat} (µs, one way) vs one fabench-lat write"] = (cl[ours], single[theirs])
        rows[f"latency {stat} (µs, one way) vs one fabench-lat send"] = (cl[ours], send[theirs])
        rows[f"latency {stat} (µs, one way) vs two fabench-lat write at once"] = (
            cl[ours], statistics.mean(c[theirs] for c in both))
    rows["bandwidth (GB/s per direction) vs fabench-bw -b"] = (cb["isolated_GBps"], bw["Gbps"] / 8 / 2)
    return rows


def spread(values):
    return f"{statistics.median(values):.3f} [{min(values):.3f}..{max(values):.3f}]"


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    out, pairs = argv[1], int(argv[2])
    try:
        rows = [pair_rows(out, i) for i in range(1, pairs + 1)]
    except (OSError, KeyError, gbjson.GBJsonError) as e:
        print(f"congest_iso_table.py: {e}", file=sys.stderr)
        return 1
    print(f"| figure | fabench-congest isolated | fabench-lat / fabench-bw | congest / tool, {pairs} pair(s) |")
    print("|---|---|---|---|")
    for name in rows[0]:
        ours = [r[name][0] for r in rows]
        tool = [r[name][1] for r in rows]
        ratios = [a / b for a, b in zip(ours, tool)]
        print(f"| {name} | {statistics.median(ours):.3f} | {statistics.median(tool):.3f} | {spread(ratios)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
