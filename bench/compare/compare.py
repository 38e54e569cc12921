#!/usr/bin/env python3
"""Summarise bench/compare/perftest.sh's raw results (python3 stdlib only).

Reads OUT/tests.txt and OUT/raw/TEST.PAIR.{P,F}.{txt,json}; prints per test
and metric the ratio fabench/perftest of the medians over the pairs, the
per-pair ratios' spread (min..max) and a verdict. Writes OUT/summary.json.

perftest's latency line: t_typical is the median and t_avg the mean of the
samples after dropping the 2 largest; both are one-way (RTT/2) for write and
send, the full RTT for read. fabench-lat's p50_us / mean_us follow the same
halving convention and keep every sample (its mean includes the largest two).
Bandwidth: perftest's MsgRate[Mpps] and, with --report_gbits, BW average in
1e9 bit/s; fabench-bw's Mmsgps and Gbps (1e9 bit/s). Both count messages from
the first post to the last completion on the client.
"""
import json
import math
import os
import re
import statistics
import sys

NUM = re.compile(r"^\s*\d+\s+\d+(\s+[-+0-9.eE]+)+\s*$")


def perftest_result(path, kind):
    """Numbers of perftest's result line, keyed by metric."""
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return None
    marker = "t_typical" if kind == "lat" else "MsgRate"
    for i, line in enumerate(lines):
        if marker in line:
            for nxt in lines[i + 1:i + 4]:
                if NUM.match(nxt):
                    v = [float(x) for x in nxt.split()]
                    if not all(math.isfinite(x) for x in v[2:6]):
                        return None  # perftest's clock sampling failed
                    if kind == "lat":  # bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%
                        return {"median": v[4], "mean": v[5], "min": v[2], "p99": v[7] if len(v) > 7 else None}
                    # bytes iters bw_peak bw_avg msgrate
                    return {"Mmsgps": v[4], "Gbps": v[3]}
    return None


def fabench_result(path, kind):
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError):
        return None
    runs = [b for b in doc.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
    if len(runs) != 1 or runs[0].get("error_occurred") or runs[0].get("wrong", 0) != 0:
        return None
    b = runs[0]
    if kind == "lat":
        return {"median": b["p50_us"], "mean": b["mean_us"], "min": b["min_us"], "p99": b["p99_us"]}
    return {"Mmsgps": b["Mmsgps"], "Gbps": b["Gbps"]}


def fmt_ratio(x):
    return f"{x:.3f}"


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw")
    tests = []
    with open(os.path.join(out, "tests.txt"), encoding="utf-8") as f:
        for line in f:
            name, kind, pt_cmd, fb_cmd = line.rstrip("\n").split("|")
            tests.append((name, kind, pt_cmd, fb_cmd))
    summary = {}
    rows = []
    for name, kind, pt_cmd, fb_cmd in tests:
        pairs = sorted({int(fn.split(".")[1]) for fn in os.listdir(raw)
                        if fn.startswith(name + ".") and fn.split(".")[1].isdigit()})
        metrics = ["median", "mean"] if kind == "lat" else ["Mmsgps", "Gbps"]
        per = {m: {"P": [], "F": [], "ratios": []} for m in metrics}
        failed = []
        for p in pairs:
            pr = perftest_result(os.path.join(raw, f"{name}.{p}.P.txt"), kind)
            fr = fabench_result(os.path.join(raw, f"{name}.{p}.F.json"), kind)
            if pr is None:
                failed.append(f"pair {p}: perftest")
            if fr is None:
                failed.append(f"pair {p}: fabench")
            if pr is None or fr is None:
                continue
            for m in metrics:
                per[m]["P"].append(pr[m])
                per[m]["F"].append(fr[m])
                per[m]["ratios"].append(fr[m] / pr[m] if pr[m] else float("nan"))
        summary[name] = {"kind": kind, "perftest": pt_cmd, "fabench": fb_cmd, "failed": failed, "metrics": {}}
        for m in metrics:
            d = per[m]
            if not d["ratios"]:
                rows.append((name, m, len(d["ratios"]), None, None, None, None, None, "NO DATA"))
                continue
            mp, mf = statistics.median(d["P"]), statistics.median(d["F"])
            ratio = mf / mp
            lo, hi = min(d["ratios"]), max(d["ratios"])
            lower_is_better = kind == "lat"
            good = ratio <= 1.0 if lower_is_better else ratio >= 1.0
            clear_bad = lo > 1.0 if lower_is_better else hi < 1.0
            if good:
                verdict = "fabench " + ("<=" if lower_is_better else ">=") + " perftest"
            elif clear_bad:
                verdict = "fabench BEHIND (every pair)"
            else:
                verdict = "fabench behind (within spread)"
            summary[name]["metrics"][m] = {
                "perftest_values": d["P"], "fabench_values": d["F"], "pair_ratios": d["ratios"],
                "ratio_of_medians": ratio, "ratio_min": lo, "ratio_max": hi,
                "perftest_median": mp, "fabench_median": mf, "verdict": verdict,
            }
            rows.append((name, m, len(d["ratios"]), ratio, lo, hi, mp, mf, verdict))
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)

    unit = {"median": "us", "mean": "us", "Mmsgps": "Mmsg/s", "Gbps": "Gb/s"}
    print("| test | metric | pairs | fabench/perftest (ratio of medians) | per-pair min..max | "
          "perftest median | fabench median | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for name, m, n, ratio, lo, hi, mp, mf, verdict in rows:
        if ratio is None:
            print(f"| {name} | {m} | {n} | - | - | - | - | {verdict} |")
            continue
        print(f"| {name} | {m} | {n} | {fmt_ratio(ratio)} | {fmt_ratio(lo)}..{fmt_ratio(hi)} | "
              f"{mp:.3g} {unit[m]} | {mf:.3g} {unit[m]} | {verdict} |")
    for name, s in summary.items():
        if s["failed"]:
            print(f"\n{name}: runs without a result: {', '.join(s['failed'])}")
    print("\nLatency: lower is better (write/send one-way = RTT/2, read full RTT); rates: higher is better.")
    print("Absolute values come from the test bed, not from the product: compare only the ratios.")


if __name__ == "__main__":
    main()
