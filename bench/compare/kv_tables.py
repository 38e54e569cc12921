#!/usr/bin/env python3
"""kv_tables.py: kv.sh's markdown tables.

  kv_tables.py efficiency FILE   the efficiency run (fabench-kv's Google Benchmark JSON): per
                                 benchmark WRs per request, GB/s, p50 transfer time, efficiency
                                 against contiguous and wrong pages
  kv_tables.py rate OUT PAIRS    the WR rate at 4 KiB: OUT/kv-rate-P.json (fabench-kv --wr-sweep)
                                 against OUT/ib-rate-P.out (ib_write_bw's MsgRate) per pair P,
                                 and the medians; exit 1 when a fabench-kv run failed
"""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def efficiency(path):
    doc = gbjson.read(path)
    print("| benchmark | WRs/request | GB/s | transfer ms (p50) | efficiency | wrong |")
    print("|---|---:|---:|---:|---:|---:|")
    for b in gbjson.iterations(doc):
        name = gbjson.base_name(b["name"])
        if gbjson.failed(b):
            print(f"| {name} | FAILED: {gbjson.error(b)} | | | | |")
            continue
        print(f"| {name} | {b['wrs_per_request']:.0f} | {b['GBps']:.4f} | {b['p50_us'] / 1e3:.0f} | "
              f"{b.get('efficiency', math.nan):.2f} | {b['wrong']:.0f} |")
    return 0


def ib_msg_rate(path):
    """ib_write_bw's MsgRate[Mpps] of its 4096-byte line, in messages/s."""
    rows = [line.split() for line in open(path, encoding="utf-8", errors="replace")
            if line.split() and line.split()[0] == "4096"]
    return float(rows[-1][4]) * 1e6


def rate(out, pairs):
    kv, ib = [], []
    for p in range(1, pairs + 1):
        b = gbjson.iterations(gbjson.read(os.path.join(out, f"kv-rate-{p}.json")))[0]
        if gbjson.failed(b) or b["wrong"] != 0:
            sys.exit(f"fabench-kv run {p}: {gbjson.error(b) if gbjson.failed(b) else 'wrong pages'}")
        kv.append(b["wr_rate"])
        ib.append(ib_msg_rate(os.path.join(out, f"ib-rate-{p}.out")))
    ratios = [k / i for k, i in zip(kv, ib)]
    print("| pair | fabench-kv WRs/s | ib_write_bw msgs/s | ratio |")
    print("|---:|---:|---:|---:|")
    for p, (k, i, r) in enumerate(zip(kv, ib, ratios), 1):
        print(f"| {p} | {k:,.0f} | {i:,.0f} | {r:.3f} |")
    print(f"| median | {statistics.median(kv):,.0f} | {statistics.median(ib):,.0f} | "
          f"{statistics.median(ratios):.3f} |")
    return 0


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "efficiency":
            return efficiency(argv[1])
        if len(argv) == 3 and argv[0] == "rate" and argv[2].isdigit():
            return rate(argv[1], int(argv[2]))
    except gbjson.GBJsonError as e:
        sys.exit(f"kv_tables.py: {e}")
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
