#!/usr/bin/env python3
"""coll_shm_table.py OUT --pairs N: the tables of bench/compare/coll_shm.sh from its raw outputs
(OUT/mpi.P.jsonl, OUT/fabench.{full,none}.P.json for P = 1..N). busbw in GB/s (1e9 bytes/s,
nccl-tests' definitions), the median over pairs with min..max; ratios of medians."""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def spread(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} ({min(values):.2f}..{max(values):.2f})"


def med(values):
    return statistics.median(values) if values else None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def num(v):
    return f"{v:.2f}" if v else "-"


def read(out, pairs):
    mpi = {}     # (coll, bytes) -> [busbw]
    fab = {}     # (name without size, bytes) -> [busbw]
    timing = {}  # (name, bytes) -> [(measured_us, predicted_us, reduce_us, wait_us)]
    for p in range(1, pairs + 1):
        with open(os.path.join(out, f"mpi.{p}.jsonl")) as f:
            for line in f:
                if line.startswith("{"):
                    r = json.loads(line)
                    mpi.setdefault((r["coll"], r["bytes"]), []).append(r["busbw_GBps"])
        for compute in ("full", "none"):
            doc = gbjson.read(os.path.join(out, f"fabench.{compute}.{p}.json"))
            for b in gbjson.iterations(doc):
                if gbjson.failed(b):
                    print(f"FAILED: {b['name']}: {gbjson.error(b)}", file=sys.stderr)
                    continue
                parts = gbjson.base_name(b["name"]).split("/")
                key = "/".join(parts[:3] + parts[4:])  # allreduce/ring/f32[/compute:none]
                size = int(b["logical_bytes"])
                fab.setdefault((key, size), []).append(b["busbw_GBps"])
                timing.setdefault((key, size), []).append(
                    (b["time_max_us"], b["predicted_us"], b["reduce_us"], b["wait_us"]))
    return mpi, fab, timing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pairs", type=int, required=True)
    a = ap.parse_args()
    mpi, fab, timing = read(a.out, a.pairs)
    sizes = sorted({s for _, s in fab})
    print("busbw GB/s, fabench-coll --transport shm against Open MPI (btl vader), "
          f"median (min..max) of {a.pairs} pairs\n")
    print("| S | MPI allreduce | ring f32 | rhd f32 | best/MPI | MPI alltoall | pairwise | allatonce | best/MPI |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in sizes:
        ma, mt = mpi.get(("allreduce", s), []), mpi.get(("alltoall", s), [])
        ring, rhd = fab.get(("allreduce/ring/f32", s), []), fab.get(("allreduce/rhd/f32", s), [])
        pw, aa = fab.get(("alltoall/pairwise/f32", s), []), fab.get(("alltoall/allatonce/f32", s), [])
        best_ar = max(filter(None, [med(ring), med(rhd)]), default=None)
        best_aa = max(filter(None, [med(pw), med(aa)]), default=None)
        print(f"| {s} | {spread(ma)} | {spread(ring)} | {spread(rhd)} | {ratio(best_ar, med(ma))} "
              f"| {spread(mt)} | {spread(pw)} | {spread(aa)} | {ratio(best_aa, med(mt))} |")
    print("\nall-reduce busbw GB/s: bf16 against f32, and --compute none (the pattern's own ceiling) "
          "against the full run\n")
    print("| S | algo | f32 | bf16 | bf16/f32 | f32 none | none/full f32 | bf16 none | none/full bf16 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in sizes:
        for algo in ("ring", "rhd"):
            f32, bf = med(fab.get((f"allreduce/{algo}/f32", s), [])), med(fab.get((f"allreduce/{algo}/bf16", s), []))
            f32n = med(fab.get((f"allreduce/{algo}/f32/compute:none", s), []))
            bfn = med(fab.get((f"allreduce/{algo}/bf16/compute:none", s), []))
            print(f"| {s} | {algo} | {num(f32)} | {num(bf)} | {ratio(bf, f32)} | {num(f32n)} | {ratio(f32n, f32)} "
                  f"| {num(bfn)} | {ratio(bfn, bf)} |")
    print("\ntime per call, us (median of pairs): measured, the cost model's prediction with the "
          "calibrated gamma, and where it went (reduce_us, wait_us), at S >= 1 MiB\n")
    print("| benchmark | S | measured | predicted | predicted/measured | reduce_us | wait_us |")
    print("|---|---|---|---|---|---|---|")
    for (key, s), rows in sorted(timing.items()):
        if s < (1 << 20) or "compute:none" in key:
            continue
        m, p_, r, w = (statistics.median(x) for x in zip(*rows))
        print(f"| {key} | {s} | {m:.0f} | {p_:.0f} | {p_ / m:.2f} | {r:.0f} | {w:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
