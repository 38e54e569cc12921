#!/usr/bin/env python3
"""ep_table.py: bench/compare/ep.sh's rows and tables.

  ep_table.py --rows ep PAIR RANKS FILE TAG      fabench-ep's Google Benchmark JSON; TAG: uniform
                                                 (goals a, b), ll (c), skew-... (d)
  ep_table.py --rows mpi PAIR TOKENS FILE        mpi_ep's JSON line
  ep_table.py --rows coll PAIR RANKS FILE SIZES  fabench-coll's JSON; SIZES: lines "S TOKENS"
  ep_table.py RESULTS                            the goals' tables from results.tsv

A row (tab-separated): PAIR TOOL RANKS TOKENS MODE SKEW DISPATCH_US COMBINE_US MEAN_US
FABRIC_BYTES RECV_MAX RECV_MEAN WRONG. DISPATCH_US/COMBINE_US: p50 over calls of the slowest
rank (fabench-coll: its mean, one all-to-all); MEAN_US: the mean of dispatch + combine per call
(fabench-coll: two all-to-alls). Every ratio is taken within one pair (the same run of the
test bed), then the median over pairs [min..max] is shown.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402

_UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def _row(*fields):
    print(*fields, sep="\t")


def ep_rows(pair, ranks, path, tag):
    doc = gbjson.read(path, skip_leading=True)
    failures = []
    for b in gbjson.measured(doc, "ep.sh", failures):
        parts = gbjson.base_name(b["name"]).split("/")  # ep/MODEL/MODE/DTYPE/tT/SKEW[/ref-write]
        tool = ("ep" if tag == "uniform" else "ep-" + tag.split("-")[0]) + ("-ref" if parts[-1] == "ref-write" else "")
        mean = b["real_time"] * _UNIT_US[b.get("time_unit", "ns")]
        _row(pair, tool, ranks, parts[4][1:], parts[2], parts[5], b["dispatch_us"], b["combine_us"], mean,
             int(b.get("logical_bytes", 0)), b["recv_tokens_max"], b["recv_tokens_mean"], int(b.get("wrong", 0)))
    return 3 if failures else 0


def mpi_rows(pair, tokens, path):
    n = 0
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("{"):
            j = json.loads(line)
            _row(pair, "mpi", j["ranks"], tokens, "normal", "uniform", j["dispatch_us"], j["combine_us"], j["mean_us"],
                 j["fabric_bytes"], 0, 0, j["wrong"])
            n += 1
    return 0 if n else 3


def coll_rows(pair, ranks, path, sizes_path):
    tokens = {}
    for line in open(sizes_path, encoding="utf-8"):
        s, t = line.split()
        tokens[int(s)] = t
    doc = gbjson.read(path, skip_leading=True)
    failures = []
    for b in gbjson.measured(doc, "ep.sh", failures):
        parts = gbjson.base_name(b["name"]).split("/")  # alltoall/ALGO/bf16/S
        size = next((int(x) for x in parts[3:] if x.isdigit()), None)
        if size not in tokens:
            continue
        t = b["time_max_us"]
        _row(pair, "coll-" + parts[1], ranks, tokens[size], "normal", "uniform", t, t, 2 * t, size, 0, 0,
             int(b.get("wrong", 0)))
    return 3 if failures else 0


def load(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) != 13:
            continue
        rows.append({"pair": f[0], "tool": f[1], "n": int(f[2]), "t": int(f[3]), "mode": f[4], "skew": f[5],
                     "d": float(f[6]), "c": float(f[7]), "mean": float(f[8]), "bytes": int(f[9]),
                     "rmax": float(f[10]), "rmean": float(f[11]), "wrong": int(f[12])})
    return rows


def spread(vals, fmt="{:.3g}"):
    if not vals:
        return "-"
    m = statistics.median(vals)
    return (fmt + " [" + fmt + ".." + fmt + "]").format(m, min(vals), max(vals)) if len(vals) > 1 else fmt.format(m)


def pick(rows, **kw):
    return [r for r in rows if all(r[k] == v for k, v in kw.items())]


def per_pair(a, b, ratio):
    """ratio(row_a, row_b) for every pair that has both."""
    out = []
    for ra in a:
        for rb in b:
            if ra["pair"] == rb["pair"]:
                out.append(ratio(ra, rb))
    return out


def verdict(vals, ok):
    if not vals:
        return "not measured"
    m = statistics.median(vals)
    return "met" if ok(m) else "not met"


def table_mpi_coll(rows):
    print("## (a) uniform, dispatch + combine: per-rank GB/s, fabench-ep / MPI_Alltoallv (goal >= 1.0)\n")
    print("| ranks | tokens | fabric B/call | fabench-ep GB/s/rank | MPI GB/s/rank | ep / MPI | ep / MPI from p50s "
          "| goal |")
    print("|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["n"], r["t"]) for r in rows if r["tool"] == "mpi"})
    for n, t in keys:
        ep = pick(rows, tool="ep", n=n, t=t, skew="uniform", mode="normal")
        mpi = pick(rows, tool="mpi", n=n, t=t)
        fab = mpi[0]["bytes"]
        gb = lambda r: fab / n / r["mean"] / 1e3  # noqa: E731  (bytes/us/1e3 = GB/s)
        ratios = per_pair(ep, mpi, lambda a, b: b["mean"] / a["mean"])
        p50s = per_pair(ep, mpi, lambda a, b: (b["d"] + b["c"]) / (a["d"] + a["c"]))
        print(f"| {n} | {t} | {fab} | {spread([gb(r) for r in ep])} | {spread([gb(r) for r in mpi])} | "
              f"{spread(ratios)} | {spread(p50s)} | {verdict(ratios, lambda m: m >= 1.0)} |")
    print("\n## (b) uniform, dispatch + combine against fabench-coll all-to-all of the same bytes "
          "(time ratio, goal <= 1.15)\n")
    print("| ranks | tokens | all-to-all S (B) | best all-to-all | ep / coll | goal |")
    print("|---|---|---|---|---|---|")
    for n, t in sorted({(r["n"], r["t"]) for r in rows if r["tool"].startswith("coll-")}):
        ep = pick(rows, tool="ep", n=n, t=t, skew="uniform", mode="normal")
        coll = [r for r in rows if r["tool"].startswith("coll-") and r["n"] == n and r["t"] == t]
        best = {}
        for r in coll:  # per pair the faster algorithm
            if r["pair"] not in best or r["mean"] < best[r["pair"]]["mean"]:
                best[r["pair"]] = r
        ratios = per_pair(ep, list(best.values()), lambda a, b: a["mean"] / b["mean"])
        algos = ",".join(sorted({r["tool"][5:] for r in best.values()}))
        print(f"| {n} | {t} | {coll[0]['bytes']} | {algos} | {spread(ratios)} | "
              f"{verdict(ratios, lambda m: m <= 1.15)} |")


def table_ll(rows):
    ll = pick(rows, tool="ep-ll")
    ref = pick(rows, tool="ep-ll-ref")
    if not ll:
        return
    print("\n## (c) low-latency dispatch p50 against one write of the same bytes + one notify, same run "
          "(goal <= 1.3)\n")
    print("| ranks | tokens | dispatch / write+notify | combine / the reference's combine (the same code: "
          "noise) | goal |")
    print("|---|---|---|---|---|")
    for n, t in sorted({(r["n"], r["t"]) for r in ll}):
        a, b = pick(ll, n=n, t=t), pick(ref, n=n, t=t)
        d = per_pair(a, b, lambda x, y: x["d"] / y["d"])
        c = per_pair(a, b, lambda x, y: x["c"] / y["c"])
        print(f"| {n} | {t} | {spread(d)} | {spread(c)} | {verdict(d, lambda m: m <= 1.3)} |")


def table_skew(rows):
    sk = [r for r in rows if r["tool"] == "ep-skew" and r["skew"] != "uniform"]
    if not sk:
        return
    print(f"\n## (d) hot-rank skew against uniform, {sk[0]['mode']} mode: combine p50 (goal: rises with the skew)\n")
    print("| ranks | tokens | skew | recv_tokens max / mean | combine / uniform | dispatch / uniform |")
    print("|---|---|---|---|---|---|")
    for n, t in sorted({(r["n"], r["t"]) for r in sk}):
        uni = pick(rows, tool="ep-skew", n=n, t=t, skew="uniform")
        print(f"| {n} | {t} | uniform | {uni[0]['rmax']:.0f} / {uni[0]['rmean']:.1f} | 1 | 1 |" if uni else "")
        skews = {r["skew"] for r in sk if r["n"] == n and r["t"] == t}
        for skew in sorted(skews, key=lambda s: float(s.split(":")[1])):
            s = pick(sk, n=n, t=t, skew=skew)
            c = per_pair(s, uni, lambda x, y: x["c"] / y["c"])
            d = per_pair(s, uni, lambda x, y: x["d"] / y["d"])
            print(f"| {n} | {t} | {skew} | {s[0]['rmax']:.0f} / {s[0]['rmean']:.1f} | {spread(c)} | {spread(d)} |")


def tables(path):
    rows = load(path)
    if not rows:
        print(f"ep.sh: no rows in {path}", file=sys.stderr)
        return 1
    pairs = len({r["pair"] for r in rows})
    print(f"Median over {pairs} pair(s) of the per-pair ratio [min..max]; times are means of the slowest rank "
          "per call (a), (b) and p50s (c), (d).\n")
    table_mpi_coll(rows)
    table_ll(rows)
    table_skew(rows)
    wrong = sum(r["wrong"] for r in rows)
    print(f"\n{wrong} wrong element(s) or token(s) in all runs")
    return 1 if wrong else 0


def main(argv):
    try:
        if len(argv) == 6 and argv[:2] == ["--rows", "ep"]:
            return ep_rows(*argv[2:])
        if len(argv) == 5 and argv[:2] == ["--rows", "mpi"]:
            return mpi_rows(*argv[2:])
        if len(argv) == 6 and argv[:2] == ["--rows", "coll"]:
            return coll_rows(*argv[2:])
    except (gbjson.GBJsonError, OSError, ValueError, KeyError) as e:
        print(f"ep.sh:   {e}", file=sys.stderr)
        return 2
    if len(argv) == 1:
        return tables(argv[0])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
