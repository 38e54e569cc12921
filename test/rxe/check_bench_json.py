#!/usr/bin/env python3
"""Assertions over a fabench Google Benchmark JSON file, for the rxe tests.

check_bench_json.py FILE --expect N [--iterations N] [--zero K,..] [--positive K,..]
                    [--positive-if K:C,..] [--present K,..] [--ordered A,B,..] [--context K,..]
                    [--names RE,..]

Every iteration run must be free of errors; --zero counters equal 0 (e.g. wrong),
--positive ones above 0 (--positive-if K:C: K above 0 where C is), --present ones exist, --ordered ones non-decreasing
(min <= p50 <= p99 <= max), and the context has the --context keys. --names: one
regular expression per expected benchmark, matched in order. Exit 1 with one
FAIL line per problem.
"""
import argparse
import os
import re
import sys

# fabench's one reader of Google Benchmark JSON.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def keys(text):
    return [k for k in text.split(",") if k] if text else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--expect", type=int, required=True)
    ap.add_argument("--iterations", type=int)
    ap.add_argument("--zero", default="")
    ap.add_argument("--positive", default="")
    ap.add_argument("--positive-if", default="")
    ap.add_argument("--present", default="")
    ap.add_argument("--ordered", default="")
    ap.add_argument("--context", default="")
    ap.add_argument("--names", default="")
    a = ap.parse_args()
    try:
        doc = gbjson.read(a.file)
    except gbjson.GBJsonError as e:
        print(f"FAIL: {e}")
        return 1
    runs = gbjson.iterations(doc)
    bad = []
    for b in runs:
        name = b["name"]
        if gbjson.failed(b):
            bad.append(f"{name}: {gbjson.error(b)}")
            continue
        if a.iterations is not None and b["iterations"] != a.iterations:
            bad.append(f"{name}: {b['iterations']} iterations, expected {a.iterations}")
        for k in keys(a.zero):
            if b.get(k, -1) != 0:
                bad.append(f"{name}: {k}={b.get(k)} (expected 0)")
        for k in keys(a.positive):
            if not b.get(k, 0) > 0:
                bad.append(f"{name}: counter {k} missing or not positive ({b.get(k)})")
        for pair in keys(a.positive_if):
            k, cond = pair.split(":", 1)
            if b.get(cond, 0) > 0 and not b.get(k, 0) > 0:
                bad.append(f"{name}: counter {k} missing or not positive ({b.get(k)}) with {cond} = {b.get(cond)}")
        for k in keys(a.present):
            if k not in b:
                bad.append(f"{name}: counter {k} missing")
        chain = [b.get(k) for k in keys(a.ordered)]
        if chain and (None in chain or chain != sorted(chain)):
            bad.append(f"{name}: {','.join(keys(a.ordered))} out of order: {chain}")
    if len(runs) != a.expect:
        bad.append(f"{len(runs)} benchmarks ran, expected {a.expect}: {[b['name'] for b in runs]}")
    patterns = keys(a.names)
    if patterns:
        for i, pat in enumerate(patterns):
            if i >= len(runs) or not re.search(pat, runs[i]["name"]):
                got = runs[i]["name"] if i < len(runs) else "nothing"
                bad.append(f"benchmark {i}: expected a name matching {pat!r}, got {got}")
    ctx = doc["context"]
    for k in keys(a.context):
        if k not in ctx:
            bad.append(f"context lacks {k}")
    for line in bad:
        print("FAIL:", line)
    print(f"checked {len(runs)} benchmarks in {a.file}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
