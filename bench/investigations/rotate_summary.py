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

rotate_summary.py --boots [--ref J] OUT1 OUT2 ...: the same rotation run in
several guest boots (one OUT each, the same variants in the same order). A
boot's geometric mean of its per-round ratios is one sample, as compare.py
--boots takes perftest.sh's: per variant, for each run's median and 5th
percentile, the per-boot values and the geometric mean across boots with its
95 % interval and verdict, against variant J (default 0). With two builds of
one source as variants (fabench-once@DIR), this says whether what a build's
code layout does to a row holds from boot to boot.

A run whose samples are not all finite is left out, with every statistic of
that run (its round's ratios for that variant too), and named at the end:
perftest prints "inf" for every sample when its CPU-frequency estimate
fails ("Correlation coefficient r^2 < 0.9"), as compare.py leaves out such a
pair. A report without any sample line is an error (no -U).
"""
import math
import os
import re
import statistics
import sys

# compare.py (bench/compare, maintained): the verdict rule and perftest's -U lines.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "compare"))
from compare import fmt_interval, log_ratios, pair_verdict, sample_values  # noqa: E402

QUANTILES = (0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99)


def samples(path):
    """The per-iteration samples (usec) of one report, in order (compare.py's reading of -U);
    None when it has sample lines but not all of them finite (perftest's clock failed)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        xs = sample_values(f.read().splitlines())
    return xs if all(math.isfinite(x) for x in xs) else None


def quantile(sorted_xs, q):
    return sorted_xs[min(len(sorted_xs) - 1, int(q * len(sorted_xs)))]


def load(out):
    """One rotation: its variants and, per variant and round, each run's statistics and samples."""
    variants = {}
    try:
        with open(os.path.join(out, "setup.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"variant (\d+): (.*)$", line.rstrip("\n"))
                if m:
                    variants[int(m.group(1))] = m.group(2)
    except OSError as e:
        sys.exit(f"rotate_summary.py: {e}")
    if not variants:
        sys.exit(f"rotate_summary.py: no 'variant J: SPEC' line in {out}/setup.txt")
    runs = {k: {j: {} for j in variants} for k in ("median", "fast", "mean_all", "mean_t_avg")}
    pooled = {j: [] for j in variants}
    left_out = []
    raw = os.path.join(out, "raw")
    for name in sorted(os.listdir(raw)):
        m = re.match(r"r(\d+)\.v(\d+)\.txt$", name)
        if not m or int(m.group(2)) not in variants:
            continue
        xs = samples(os.path.join(raw, name))
        if xs is None:
            left_out.append(f"{out}: r{m.group(1)}.v{m.group(2)} ({variants[int(m.group(2))]})")
            continue
        if not xs:
            sys.exit(f"rotate_summary.py: {raw}/{name} has no samples (no -U lines)")
        j, r, xs_sorted = int(m.group(2)), int(m.group(1)), sorted(xs)
        runs["median"][j][r] = statistics.median(xs)
        runs["fast"][j][r] = quantile(xs_sorted, 0.05)  # the 5th percentile
        runs["mean_all"][j][r] = statistics.fmean(xs)
        runs["mean_t_avg"][j][r] = statistics.fmean(xs_sorted[:-2]) if len(xs) > 2 else statistics.fmean(xs)
        pooled[j].extend(xs)
    return variants, runs, pooled, left_out


def print_left_out(left_out):
    if left_out:
        print(f"Left out, samples not finite (perftest's CPU-frequency estimate failed): {'; '.join(left_out)}")
        print()


def round_ratios(per_run, j, ref):
    """Variant j's per-round ratios to variant ref (rounds that both ran)."""
    return [per_run[j][r] / per_run[ref][r] for r in sorted(per_run[j]) if per_run[ref].get(r, 0) > 0]


def boots(outs, ref):
    """Across boots: each boot's geometric mean of its per-round ratios is one sample."""
    loaded = [load(out) for out in outs]
    variants = loaded[0][0]
    for out, (v, _, _, _) in zip(outs, loaded):
        if v != variants:
            sys.exit(f"rotate_summary.py: --boots: {out} has other variants than {outs[0]}: {v}")
    if ref not in variants:
        sys.exit(f"rotate_summary.py: --ref {ref}: no such variant (0..{len(variants) - 1})")
    print(f"{len(outs)} boots; ratios to variant {ref}: {variants[ref]}")
    print()
    for key, title in (("median", "median"), ("fast", "5th percentile")):
        print(f"| variant | per-boot geo. means of the per-round ratios of the {title} | across boots: geo. mean "
              "[95 % CI] | verdict |")
        print("|---|---|---|---|")
        for j, spec in sorted(variants.items()):
            if j == ref:
                continue
            gms = []
            for _, per_run, _, _ in loaded:
                logs = log_ratios(round_ratios(per_run[key], j, ref))
                if logs:
                    gms.append(math.exp(statistics.fmean(logs)))
            v = pair_verdict(gms, True, 0.05, unit="boots")
            verdict = v["verdict"].replace("fabench", "variant")
            print(f"| {j}: {spec} | {', '.join(f'{g:.3f}' for g in gms)} | {fmt_interval(v)} | {verdict} |")
        print()
    print_left_out([x for _, _, _, lo in loaded for x in lo])
    return 0


def main():
    args = sys.argv[1:]
    if args[:1] == ["--boots"]:
        args, ref = args[1:], 0
        if args[:1] == ["--ref"]:
            if len(args) < 2 or not args[1].isdigit():
                sys.exit("rotate_summary.py: --ref J: J is a variant's number")
            args, ref = args[2:], int(args[1])
        if len(args) < 2:
            sys.exit("usage: rotate_summary.py --boots [--ref J] OUT1 OUT2 ... (two or more boots)")
        return boots(args, ref)
    if len(args) != 1:
        sys.exit("usage: rotate_summary.py OUT | rotate_summary.py --boots [--ref J] OUT1 OUT2 ...")
    variants, stats, pooled, left_out = load(args[0])
    medians, fast, mean_all, mean_t_avg = stats["median"], stats["fast"], stats["mean_all"], stats["mean_t_avg"]
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
            ratios = round_ratios(per_run, j, 0)
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
    print()
    print_left_out(left_out)


if __name__ == "__main__":
    sys.exit(main())
