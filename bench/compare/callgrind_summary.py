#!/usr/bin/env python3
"""Instructions per message from bench/compare/callgrind.sh's callgrind files.

runs.txt has one line per configuration: NAME|ARGS|N1|N2|PERFTEST_TOOL|FABENCH_TOOL
(without the last two: ib_write_bw and fabench-bw). Sorting (both tools sort
their latency samples after the loop, in n log n) and clock reads are shown
apart from the per-message cost.

Per configuration and tool: (Ir(n2) - Ir(n1)) / (n2 - n1), in total and split
by shared object (the tool's own code, the rxe provider, libibverbs, libc,
...), from callgrind_annotate's per-function self cost. Stdlib only.
"""
import collections
import os
import re
import sys

# The object is the last [...] of a line: a function name can hold "[clone .constprop.0]".
LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([\s\d.]+%\)\s+)?(.*?)\s+\[([^\[\]]+)\]\s*$")


def total_ir(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"{path}: no summary line")


def by_object(path):
    """Self Ir per object and per (object, function). callgrind_annotate names
    the object only on a function's lines from its own source file; lines of
    code inlined from headers (`loop.hpp:onesided_latency(...) [clone ...]`)
    end in the function name, and go to the object its other lines name."""
    objs = collections.Counter()
    fns = collections.Counter()
    try:
        text = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return objs, fns
    rows = []
    obj_of = {}
    for line in text:
        m = LINE.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        name, last = m.group(2).split(":", 1)[-1], m.group(3)
        if "/" in last:
            obj = os.path.basename(last)
            obj_of.setdefault(name, obj)
        else:  # no object: the bracket is part of the name ("[clone .constprop.0]")
            name, obj = f"{name} [{last}]", None
        rows.append((ir, name, obj))
    for ir, name, obj in rows:
        obj = short(obj or obj_of.get(name, "?"))
        objs[obj] += ir
        fns[(obj, name[:70])] += ir
    return objs, fns


def short(obj):
    for key, name in (("librxe", "librxe (provider)"), ("libibverbs", "libibverbs"), ("libc.so", "libc"),
                      ("ld-linux", "ld.so"), ("libstdc++", "libstdc++"), ("vdso", "vdso"),
                      ("fabench-lat", "fabench-lat"), ("fabench", "fabench-bw")):
        if key in obj:
            return name
    return obj


def after_loop(fn):
    """Sorting the samples and their statistics: after the loop, n log n."""
    return "sort" in fn or "compute_stats" in fn


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "runs.txt"), encoding="utf-8") as f:
        runs = [line.rstrip("\n").split("|") for line in f if line.strip()]
    for run in runs:
        name, args, n1, n2 = run[:4]
        pt_own, fb_own = run[4:6] if len(run) >= 6 else ("ib_write_bw", "fabench-bw")
        n1, n2 = int(n1), int(n2)
        print(f"\n### {name}: {pt_own} / {fb_own} {args}, client, messages {n1} and {n2}\n")
        print("| tool | Ir(n1) | Ir(n2) | instructions/message | without clock reads or sorting | "
              "loop function (self) | by object (per message) |")
        print("|---|---|---|---|---|---|---|")
        per_tool = {}
        for tool in ("perftest", "fabench"):
            a = os.path.join(out, f"{name}.{tool}.{n1}")
            b = os.path.join(out, f"{name}.{tool}.{n2}")
            t1, t2 = total_ir(a + ".cg"), total_ir(b + ".cg")
            per_msg = (t2 - t1) / (n2 - n1)
            o1, f1 = by_object(a + ".annotate.txt")
            o2, f2 = by_object(b + ".annotate.txt")
            objs = {k: (o2[k] - o1[k]) / (n2 - n1) for k in set(o1) | set(o2)}
            fns = {k: (f2[k] - f1[k]) / (n2 - n1) for k in set(f1) | set(f2)}
            # Clock reads (gettimeofday/clock_gettime and the vDSO behind them)
            # spin for a fixed time in perftest's CPU clock sampling after its
            # loop: time-dependent, not message-dependent, so shown apart.
            clock = sum(v for (obj, fn), v in fns.items() if obj == "vdso" or "gettimeofday" in fn or "clock_gettime" in fn)
            # Sorting the samples (perftest's qsort, fabench's std::sort and
            # its statistics) runs after the loop and grows as n log n.
            after = sum(v for (obj, fn), v in fns.items() if after_loop(fn))
            per_tool[tool] = (per_msg, objs, fns, per_msg - clock - after)
            split = ", ".join(f"{k} {v:.0f}" for k, v in sorted(objs.items(), key=lambda kv: -kv[1]) if abs(v) >= 1)
            status = ""
            rcs = [open(x + ".rc").read().strip() for x in (a, b) if os.path.exists(x + ".rc")]
            if len(set(rcs)) > 1:
                status = f" (exit status differs between runs: {rcs}; teardown cost does not cancel)"
            own = fb_own if tool == "fabench" else pt_own
            loop_fn, loop_ir = max(((fn, v) for (obj, fn), v in fns.items() if obj == own and not after_loop(fn)),
                                   key=lambda kv: kv[1],
                                   default=("?", 0.0))
            print(f"| {tool}{status} | {t1:,} | {t2:,} | {per_msg:.0f} | {per_msg - clock - after:.0f} | "
                  f"{loop_ir:.0f} ({loop_fn.replace('(anonymous namespace)', '{anon}').split('(')[0]}) | {split} |")
        p, f = per_tool["perftest"][0], per_tool["fabench"][0]
        print(f"\nfabench/perftest instructions per message: {f / p:.3f} "
              f"(without clock reads or sorting: {per_tool['fabench'][3] / per_tool['perftest'][3]:.3f})")
        for tool in ("perftest", "fabench"):
            top = sorted(per_tool[tool][2].items(), key=lambda kv: -kv[1])[:12]
            print(f"\n{tool}: functions by self instructions per message")
            for (obj, fn), v in top:
                if v >= 1:
                    print(f"  {v:8.1f}  {fn}  [{obj}]")


if __name__ == "__main__":
    main()
