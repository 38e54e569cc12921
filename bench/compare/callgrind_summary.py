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


def provider_calls(path):
    """Calls from outside the rxe provider into it, per called function: {name: (calls, inclusive
    Ir)}, from the raw callgrind file. Each `calls=N` line follows the callee's `cob=` (its object;
    absent: the caller's) and `cfn=`, and is followed by the position and the inclusive cost of
    those N calls. Names and objects are compressed: `(id) name` the first time, `(id)` after.
    The provider is stripped, so its functions are addresses."""
    names, objs = {}, {}
    out = collections.defaultdict(lambda: [0, 0])
    ob = cob = cfn = None
    pending = None

    def define(table, line):
        m = re.match(r"\w+=(?:\((\d+)\))?\s*(.*)$", line.rstrip("\n"))
        ident, name = m.group(1), m.group(2)
        if ident is not None and name:
            table[ident] = name
        return name or table.get(ident, "")

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if pending is not None:
                parts = line.split()
                if len(parts) >= 2:
                    out[pending][1] += int(parts[1])
                pending = None
                continue
            if line.startswith("ob="):
                ob = define(objs, line)
            elif line.startswith("cob="):
                cob = define(objs, line)
            elif line.startswith("cfn="):
                cfn = define(names, line)
            elif line.startswith("fn="):
                define(names, line)
            elif line.startswith("calls="):
                callee_ob = cob if cob is not None else ob
                if cfn is not None and "librxe" in (callee_ob or "") and "librxe" not in (ob or ""):
                    out[cfn][0] += int(line.split("=", 1)[1].split()[0])
                    pending = cfn
                cob = cfn = None
    return out


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
        # The latency clients spin in the CQ poll until the reply lands: how
        # many polls an iteration makes follows how fast the client runs
        # against the peer (timing); what each poll and everything outside
        # the polls cost does not. The poll is the provider's function called
        # most often. Shown apart, per message.
        print("\n| tool | poll calls/message | Ir per poll call | instructions/message outside the polls |")
        print("|---|---|---|---|")
        for tool in ("perftest", "fabench"):
            c1 = provider_calls(os.path.join(out, f"{name}.{tool}.{n1}.cg"))
            c2 = provider_calls(os.path.join(out, f"{name}.{tool}.{n2}.cg"))
            if not c2:
                print(f"| {tool} (polls apart) | ? | ? | ? |")
                continue
            poll = max(c2, key=lambda k: c2[k][0])
            (k1, i1), (k2, i2) = c1.get(poll, (0, 0)), c2[poll]
            calls = (k2 - k1) / (n2 - n1)
            per_call = (i2 - i1) / (k2 - k1) if k2 != k1 else float("nan")
            outside = per_tool[tool][0] - (i2 - i1) / (n2 - n1)
            print(f"| {tool} (polls apart) | {calls:.2f} | {per_call:.0f} | {outside:.0f} |")
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
