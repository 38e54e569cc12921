#!/usr/bin/env python3
"""The summary of a rotate.sh run: rotate_summary.py OUT.

OUT holds setup.txt (its "variant J: SPEC" lines) and raw/rR.vJ.txt, each
a perftest-layout report with every sample (-U: "N, usec" lines after the
"#, usec" header), from perftest or from fabench-lat --output-format perftest.

Prints, per variant:
- the median of each run's samples, over the runs (the value perftest.sh
  compares), and the geometric mean of the per-round ratios to variant 0
  with its 95 % interval and verdict (compare.py's pair_verdict, margin 5 %);
- the same for each run's 5th percentile: the fast end of a run, where a
  cost paid in every iteration shows and the test bed's slow phases do not;
- the same for each run's mean of every sample (both tools' means on one
  definition: perftest's own t_avg leaves out a run's 2 largest samples,
  fabench's mean_us keeps them), and for its mean without the run's 2
  largest samples (perftest's t_avg, computed the same way for both): where
  the two verdicts differ, a run's few largest samples decide the means;
- the percentiles of all its samples pooled: a shift at p1..p25 is a cost
  in every iteration, one in the body only is the test bed's slow phases.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import fmt_interval, pair_verdict, samples as perftest_samples  # noqa: E402

QUANTILES = (0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99)


def samples(path):
    """The per-iteration samples (usec) of one report, in order (compare.py's reading of -U)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return perftest_samples(f.read().splitlines())


def quantile(sorted_xs, q):
    return sorted_xs[min(len(sorted_xs) - 1, int(q * len(sorted_xs)))]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: rotate_summary.py OUT")
    out = sys.argv[1]
    variants = {}
    with open(os.path.join(out, "setup.txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"variant (\d+): (.*)$", line.rstrip("\n"))
            if m:
                variants[int(m.group(1))] = m.group(2)
    if not variants:
        sys.exit(f"rotate_summary.py: no 'variant J: SPEC' line in {out}/setup.txt")
    medians = {j: {} for j in variants}  # variant -> round -> median of the run
    fast = {j: {} for j in variants}  # variant -> round -> 5th percentile of the run
    mean_all = {j: {} for j in variants}  # variant -> round -> mean of every sample of the run
    mean_t_avg = {j: {} for j in variants}  # variant -> round -> mean without the run's 2 largest
    pooled = {j: [] for j in variants}
    raw = os.path.join(out, "raw")
    for name in sorted(os.listdir(raw)):
        m = re.match(r"r(\d+)\.v(\d+)\.txt$", name)
        if not m or int(m.group(2)) not in variants:
            continue
        xs = samples(os.path.join(raw, name))
        if not xs:
            sys.exit(f"rotate_summary.py: {raw}/{name} has no samples (no -U lines, or some not finite)")
        j, r, xs_sorted = int(m.group(2)), int(m.group(1)), sorted(xs)
        medians[j][r] = statistics.median(xs)
        fast[j][r] = quantile(xs_sorted, 0.05)
        mean_all[j][r] = statistics.fmean(xs)
        mean_t_avg[j][r] = statistics.fmean(xs_sorted[:-2]) if len(xs) > 2 else statistics.fmean(xs)
        pooled[j].extend(xs)
    who = "fabench" if variants[0] == "perftest" else "variant"
    for title, per_run in (("median", medians), ("5th percentile", fast), ("mean of every sample", mean_all),
                           ("mean without the 2 largest samples", mean_t_avg)):
        ref = per_run[0]
        print(f"| variant | runs | {title} over the runs (us) | per-round ratio of the {title} to variant 0 "
              "[95 % CI] | verdict |")
        print("|---|---|---|---|---|")
        for j, spec in sorted(variants.items()):
            runs = per_run[j]
            if not runs:
                print(f"| {j}: {spec} | 0 | - | - | no runs |")
                continue
            if j == 0:
                print(f"| 0: {spec} | {len(runs)} | {statistics.median(runs.values()):.1f} | reference | |")
                continue
            ratios = [runs[r] / ref[r] for r in sorted(runs) if r in ref and ref[r] > 0]
            v = pair_verdict(ratios, True, 0.05, unit="rounds")
            verdict = v["verdict"].replace("fabench", who)
            print(f"| {j}: {spec} | {len(runs)} | {statistics.median(runs.values()):.1f} | {fmt_interval(v)} "
                  f"| {verdict} |")
        print()
    print("All samples pooled (us):")
    print()
    print("| variant | samples | " + " | ".join(f"p{round(q * 100)}" for q in QUANTILES) + " | p99.9 | max | mean |")
    print("|---|---|" + "---|" * (len(QUANTILES) + 3))
    for j, spec in sorted(variants.items()):
        xs = sorted(pooled[j])
        if xs:
            print(f"| {j}: {spec} | {len(xs)} | " + " | ".join(f"{quantile(xs, q):.1f}" for q in QUANTILES)
                  + f" | {quantile(xs, 0.999):.1f} | {xs[-1]:.1f} | {statistics.fmean(xs):.1f} |")


if __name__ == "__main__":
    main()
