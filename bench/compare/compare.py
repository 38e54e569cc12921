#!/usr/bin/env python3
"""Summarise bench/compare/perftest.sh's raw results (python3 stdlib only).

Reads OUT/tests.txt and OUT/raw/TEST.PAIR.{P,F}.{txt,json,ctr}; prints per test
and metric the ratio fabench/perftest of the medians over the pairs, the
per-pair ratios' spread (min..max), the geometric mean of the per-pair ratios
with its 95 % confidence interval, and a verdict drawn from that interval.
Writes OUT/summary.json. Where the runs have counter files (.ctr: the rxe
devices' hw_counters that moved around a run), a second table sets each
event counter's mean change per run side by side (retransmissions, RNR NAKs,
duplicates: what a tool's way of driving the queue costs on the wire).

The verdict (a pair is one perftest run and one fabench run, back to back, so
that a drift of the machine cancels in their ratio): the per-pair ratios'
logarithms are taken as a sample; their mean and Student's t give a 95 %
interval for the geometric-mean ratio.
  ahead      the whole interval is on fabench's better side of 1;
  BEHIND     the whole interval is on its worse side;
  at parity  the interval holds 1, and its worse end is within the margin
             (default 5 %: fabench is at most 5 % behind, at 95 % confidence);
  undecided  the interval holds 1 but reaches beyond the margin: the pairs
             cannot tell; more pairs (perftest.sh --max-pairs) narrow it.
"At or ahead" means ahead or at parity.

  compare.py [--margin F] OUT          the table, OUT/summary.json
  compare.py --margin F --decided OUT TEST
                                       exit 0 if TEST's first metric has a
                                       verdict other than undecided, else 1
  compare.py [--margin F] --boots OUT1 OUT2 OUT3 ...
                                       across runs in separate guest boots
                                       (each OUTk/summary.json): per test and
                                       metric each boot's geometric mean of its
                                       pair ratios; those are the sample, and the
                                       same rule gives the interval and verdict.
                                       One boot's interval covers the noise
                                       between its pairs only; what a boot
                                       shares (the guest's speed, its modes)
                                       shows only across boots.

perftest's latency line: t_typical is the median and t_avg the mean of the
samples after dropping the 2 largest; both are one-way (RTT/2) for write and
send, the full RTT for read. fabench-lat's p50_us / mean_us follow the same
halving convention and keep every sample (its mean includes the largest two).
So the metric "mean" sets fabench's mean_us against the mean of every sample
of perftest's run, taken from its -U list (perftest.sh passes -U); a run
without that list (older outputs) gives "mean/t_avg" instead: mean_us
against t_avg, two different quantities (the largest samples of a run in
this test bed are retransmission stalls of milliseconds, so that ratio leans
against fabench). --boots keeps the two apart.
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

# fabench's one reader of Google Benchmark JSON (tools/fabench_report/gbjson.py; boots.sh copies
# it with these scripts, in the same layout).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402

NUM = re.compile(r"^\s*\d+\s+\d+(\s+[-+0-9.eE]+)+\s*$")


def pair_numbers(raw, name):
    return sorted({int(fn.split(".")[1]) for fn in os.listdir(raw)
                   if fn.startswith(name + ".") and fn.split(".")[1].isdigit()})


def sample_values(lines):
    """Every value of a perftest report's -U lines (the "N, usec" lines), finite or not
    (perftest prints inf when its CPU-frequency estimate failed)."""
    out, on = [], False
    for line in lines:
        if line.startswith("#, usec"):
            on = True
            continue
        if on:
            m = re.match(r"\s*\d+,\s*([-+0-9.eE]+|-?inf|-?nan)\s*$", line)
            if not m:
                break
            out.append(float(m.group(1)))
    return out


def samples(lines):
    """The per-iteration samples of a perftest report printed with -U; none unless all are finite."""
    out = sample_values(lines)
    return out if out and all(math.isfinite(x) for x in out) else []


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
                        r = {"median": v[4], "min": v[2], "p99": v[7] if len(v) > 7 else None}
                        every = samples(lines)
                        if every:
                            r["mean"] = statistics.fmean(every)
                        else:
                            r["mean/t_avg"] = v[5]
                        return r
                    # bytes iters bw_peak bw_avg msgrate
                    return {"Mmsgps": v[4], "Gbps": v[3]}
    return None


def fabench_result(path, kind):
    """The numbers of fabench's one benchmark in a run's JSON; None when it did not run cleanly."""
    try:
        runs = gbjson.iterations(gbjson.read(path))
    except gbjson.GBJsonError:
        return None
    if len(runs) != 1 or gbjson.failed(runs[0]) or runs[0].get("wrong", 0) != 0:
        return None
    b = runs[0]
    if kind == "lat":
        return {"median": b["p50_us"], "mean": b["mean_us"], "mean/t_avg": b["mean_us"], "min": b["min_us"],
                "p99": b["p99_us"]}
    return {"Mmsgps": b["Mmsgps"], "Gbps": b["Gbps"]}


def fmt_ratio(x):
    return f"{x:.3f}"


def collect(raw, name, kind):
    """Per metric the pairs' perftest and fabench values and ratios; the runs without a result."""
    metrics = ["median", "mean", "mean/t_avg"] if kind == "lat" else ["Mmsgps", "Gbps"]
    per = {m: {"P": [], "F": [], "ratios": []} for m in metrics}
    failed = []
    for p in pair_numbers(raw, name):
        pr = perftest_result(os.path.join(raw, f"{name}.{p}.P.txt"), kind)
        fr = fabench_result(os.path.join(raw, f"{name}.{p}.F.json"), kind)
        if pr is None:
            failed.append(f"pair {p}: perftest")
        if fr is None:
            failed.append(f"pair {p}: fabench")
        if pr is None or fr is None:
            continue
        for m in metrics:
            if m not in pr:  # "mean" or "mean/t_avg": whichever perftest's report allows
                continue
            per[m]["P"].append(pr[m])
            per[m]["F"].append(fr[m])
            per[m]["ratios"].append(fr[m] / pr[m] if pr[m] else float("nan"))
    return per, failed


# Latency metrics a test has only when perftest's reports allow them (with or without -U).
OPTIONAL = {"mean", "mean/t_avg"}

# The rxe counters that count traffic, not events: left out of the counter table.
TRAFFIC = {"sent_pkts", "rcvd_pkts", "rdma_sends", "rdma_recvs", "lifespan"}


def counters(raw, name):
    """Per tool the mean change per run of each event counter (perftest.sh's
    TEST.PAIR.TOOL.ctr: "DEVICE.COUNTER CHANGE" lines, the counters that
    moved), over the runs that have such a file; None when no run has one."""
    out = {}
    for tool in ("P", "F"):
        runs, total = 0, {}
        for p in pair_numbers(raw, name):
            try:
                lines = open(os.path.join(raw, f"{name}.{p}.{tool}.ctr"), encoding="utf-8").read().splitlines()
            except OSError:
                continue
            runs += 1
            for line in lines:
                parts = line.split()
                if len(parts) != 2 or parts[0].rsplit(".", 1)[-1] in TRAFFIC:
                    continue
                try:
                    total[parts[0]] = total.get(parts[0], 0) + int(float(parts[1]))
                except ValueError:
                    continue
        out[tool] = {"runs": runs, "per_run": {k: v / runs for k, v in sorted(total.items())} if runs else {}}
    return out if out["P"]["runs"] or out["F"]["runs"] else None


# Two-sided 95 % quantiles of Student's t, by degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def t975(df):
    if df <= len(T975):
        return T975[df - 1]
    return 2.021 if df <= 40 else 2.000 if df <= 60 else 1.980 if df <= 120 else 1.960


def log_ratios(ratios):
    """The logarithms of the usable ratios (a run without a value gives none)."""
    return [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]


def fmt_interval(v):
    """A pair_verdict's geometric mean and interval, as the tables print them."""
    if v["ci"]:
        return f"{fmt_ratio(v['gmean'])} [{fmt_ratio(v['ci'][0])}..{fmt_ratio(v['ci'][1])}]"
    return fmt_ratio(v["gmean"]) if v["gmean"] else "-"


def pair_verdict(ratios, lower_is_better, margin, unit="pairs"):
    """Geometric mean of the per-pair ratios, its 95 % interval and the verdict."""
    logs = log_ratios(ratios)
    n = len(logs)
    if n < 3:
        return {"gmean": math.exp(statistics.fmean(logs)) if logs else None, "ci": None, "n": n,
                "verdict": f"undecided (fewer than 3 {unit})"}
    m, sd = statistics.fmean(logs), statistics.stdev(logs)
    half = t975(n - 1) * sd / math.sqrt(n)
    lo, hi = math.exp(m - half), math.exp(m + half)
    good_end, bad_end = (lo, hi) if lower_is_better else (hi, lo)
    better = (lambda x: x < 1.0) if lower_is_better else (lambda x: x > 1.0)
    within = bad_end <= 1.0 + margin if lower_is_better else bad_end >= 1.0 - margin
    if better(bad_end):
        verdict = "fabench ahead"
    elif not better(good_end) and good_end != 1.0:
        verdict = "fabench BEHIND"
    elif within:
        verdict = "at parity"
    else:
        verdict = "undecided"
    return {"gmean": math.exp(m), "ci": [lo, hi], "n": n, "verdict": verdict}


def boots(outs, margin):
    """The verdicts across boots: each boot's geometric mean of pair ratios is one sample."""
    per = {}  # (test, metric) -> [boot geometric means]
    kinds = {}
    for out in outs:
        try:
            summary = json.load(open(os.path.join(out, "summary.json"), encoding="utf-8"))
        except (OSError, ValueError) as e:
            sys.exit(f"compare.py: --boots: no readable {out}/summary.json ({e})")
        for name, t in summary.items():
            kinds[name] = t["kind"]
            for m, d in t["metrics"].items():
                # Before perftest.sh passed -U, "mean" was fabench's mean against t_avg.
                if m == "mean" and t.get("perftest_mean") != "every sample":
                    m = "mean/t_avg"
                logs = log_ratios(d["pair_ratios"])
                if logs:
                    per.setdefault((name, m), []).append(math.exp(statistics.fmean(logs)))
    print(f"| test | metric | boots | per-boot geo. means | across boots: geo. mean [95 % CI] | verdict |")
    print("|---|---|---|---|---|---|")
    for (name, m), gms in per.items():
        v = pair_verdict(gms, kinds[name] == "lat", margin, unit="boots")
        print(f"| {name} | {m} | {len(gms)} | {', '.join(fmt_ratio(g) for g in gms)} | {fmt_interval(v)} | "
              f"{v['verdict']} |")
    print(f"\nEach boot's geometric mean of its pair ratios is one sample; verdicts as for pairs "
          f"(margin {margin:.0%}). Boots that lack a test leave it out.")
    return 0


def main():
    args = sys.argv[1:]
    margin = 0.05
    decided = None
    boot_outs = None
    while args and args[0].startswith("--"):
        if args[0] == "--margin" and len(args) > 1:
            margin = float(args[1])
            args = args[2:]
        elif args[0] == "--boots" and len(args) > 1:
            boot_outs, args = args[1:], []
        elif args[0] == "--decided" and len(args) > 2:
            decided = args[2]
            args = [args[1]] + args[3:]
        else:
            sys.exit(f"compare.py: bad arguments {' '.join(sys.argv[1:])} (see the docstring)")
    if not 0 < margin < 1:
        sys.exit(f"compare.py: --margin {margin} is not a fraction between 0 and 1")
    if boot_outs is not None:
        return boots(boot_outs, margin)
    if len(args) != 1:
        sys.exit(f"compare.py: bad arguments {' '.join(sys.argv[1:])} (see the docstring)")
    out = args[0]
    raw = os.path.join(out, "raw")
    tests = []
    with open(os.path.join(out, "tests.txt"), encoding="utf-8") as f:
        for line in f:
            name, kind, pt_cmd, fb_cmd = line.rstrip("\n").split("|")
            if decided is None or name == decided:
                tests.append((name, kind, pt_cmd, fb_cmd))
    if decided is not None:
        if not tests:
            sys.exit(f"compare.py: no test {decided} in {out}/tests.txt")
        name, kind = tests[0][:2]
        metric = "median" if kind == "lat" else "Mmsgps"
        ratios = collect(raw, name, kind)[0][metric]["ratios"]
        v = pair_verdict(ratios, kind == "lat", margin)
        print(f"{name} {metric}: {v['n']} pairs, {v['verdict']}")
        sys.exit(1 if v["verdict"].startswith("undecided") else 0)
    summary = {}
    rows = []
    for name, kind, pt_cmd, fb_cmd in tests:
        per, failed = collect(raw, name, kind)
        summary[name] = {"kind": kind, "perftest": pt_cmd, "fabench": fb_cmd, "failed": failed, "metrics": {}}
        if kind == "lat":  # what perftest's side of "mean" is (--boots keeps older runs' t_avg apart)
            summary[name]["perftest_mean"] = "every sample"
        for m, d in per.items():
            if not d["ratios"] and m in OPTIONAL:
                continue
            if not d["ratios"]:
                rows.append((name, m, len(d["ratios"]), None, None, None, None, None, "NO DATA"))
                continue
            mp, mf = statistics.median(d["P"]), statistics.median(d["F"])
            ratio = mf / mp
            lo, hi = min(d["ratios"]), max(d["ratios"])
            v = pair_verdict(d["ratios"], kind == "lat", margin)
            summary[name]["metrics"][m] = {
                "perftest_values": d["P"], "fabench_values": d["F"], "pair_ratios": d["ratios"],
                "ratio_of_medians": ratio, "ratio_min": lo, "ratio_max": hi,
                "perftest_median": mp, "fabench_median": mf,
                "geomean_ratio": v["gmean"], "ci95": v["ci"], "margin": margin, "verdict": v["verdict"],
            }
            rows.append((name, m, len(d["ratios"]), ratio, lo, hi, mp, mf, v))
        ctr = counters(raw, name)
        if ctr is not None:
            summary[name]["counters"] = {"perftest": ctr["P"], "fabench": ctr["F"]}
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)

    unit = {"median": "us", "mean": "us", "mean/t_avg": "us", "Mmsgps": "Mmsg/s", "Gbps": "Gb/s"}
    print("| test | metric | pairs | fabench/perftest (ratio of medians) | per-pair min..max | "
          "geo. mean of pair ratios [95 % CI] | perftest median | fabench median | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m, n, ratio, lo, hi, mp, mf, v in rows:
        if ratio is None:
            print(f"| {name} | {m} | {n} | - | - | - | - | - | {v} |")
            continue
        print(f"| {name} | {m} | {n} | {fmt_ratio(ratio)} | {fmt_ratio(lo)}..{fmt_ratio(hi)} | {fmt_interval(v)} | "
              f"{mp:.3g} {unit[m]} | {mf:.3g} {unit[m]} | {v['verdict']} |")
    ctr_rows = []
    ctr_read = any(s.get("counters") for s in summary.values())
    for name, s in summary.items():
        c = s.get("counters")
        if not c:
            continue
        def cell(tool, k):  # "-": this tool's runs have no counter files
            return f"{c[tool]['per_run'].get(k, 0):.2f}" if c[tool]["runs"] else "-"
        for k in sorted(set(c["perftest"]["per_run"]) | set(c["fabench"]["per_run"])):
            ctr_rows.append(f"| {name} | {k} | {cell('perftest', k)} | {cell('fabench', k)} |")
    if ctr_rows:
        print("\nEvent counters of the rxe devices per run (mean over each tool's runs; read around every "
              "run, both tools alike; counters that moved in neither tool are left out):\n")
        print("| test | device.counter | perftest | fabench |")
        print("|---|---|---|---|")
        print("\n".join(ctr_rows))
    elif ctr_read:
        print("\nEvent counters of the rxe devices: read around every run; none moved (no retransmission, "
              "RNR NAK, duplicate or out-of-sequence request).")
    for name, s in summary.items():
        if s["failed"]:
            print(f"\n{name}: runs without a result: {', '.join(s['failed'])}")
    print("\nLatency: lower is better (write/send one-way = RTT/2, read full RTT); rates: higher is better.")
    if any(m == "mean/t_avg" for _, m, *_ in rows):
        print("mean/t_avg: fabench's mean of every sample against perftest's t_avg, which leaves out the 2 "
              "largest samples (the reports have no -U list): not the same quantity.")
    print(f"Verdicts from the 95 % interval of the geometric mean of the pair ratios; at parity: the "
          f"interval holds 1 and fabench is at most {margin:.0%} behind at its worse end.")
    print("Absolute values come from the test bed, not from the product: compare only the ratios.")


if __name__ == "__main__":
    sys.exit(main())
