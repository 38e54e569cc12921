"""generic: binaries without a layout of their own: names LAYOUT/.../SIZE, each G-rate counter
against the size per layout, and the first one's efficiency against the link rate."""

import re

from .fmt import fmt_bytes, fmt_num, rate_of
from .model import Plot, Section, add_failed, collect_failed, link_lines, run_prefix, values_table
from .names import slug


def generic_key(b):
    """(layout, size) of a name LAYOUT/.../SIZE[/...]: the last all-digit part is the size."""
    parts = b.key.split("/")
    idx = next((i for i in range(len(parts) - 1, -1, -1) if parts[i].isdigit()), None)
    if idx is None:
        return None
    return "/".join(parts[:idx] + parts[idx + 1:]) or "all", int(parts[idx])


def generic_section(runs, sid, title, kind):
    """Benchmarks named LAYOUT/.../SIZE: each G-rate counter (…Gbps, …GBps)
    against size per layout, and the first one's efficiency against the link rate."""
    sec = Section(sid, title, kind, runs)
    good, other = [], []
    for r in runs:
        for b in r.benches.values():
            k = generic_key(b)
            if k is None:
                other.append((r, b))
            else:
                good.append((r, b, k[0], k[1]))
    counters = list(dict.fromkeys(k for _, b, _, _ in good for k in b.counters if re.search(r"G[Bb]ps$", k)))
    counters.sort(key=lambda k: (0 if "bus" in k else 1 if k.endswith("Gbps") else 2))
    layouts = list(dict.fromkeys(g for _, _, g, _ in good))
    for ci, counter in enumerate(counters):
        bytes_unit = counter.endswith("GBps")
        unit = "GB/s" if bytes_unit else "Gb/s"
        plot = Plot(f"{sid}-{slug(counter)}", f"{counter} per layout", "size (bytes)", f"{counter} ({unit})")
        eff = Plot(f"{sid}-{slug(counter)}-efficiency", f"{counter} against the link rate, per layout",
                   "size (bytes)", f"{counter} / link rate (%)") if ci == 0 else None
        for gi, layout in enumerate(layouts):
            for r in runs:
                p = run_prefix(runs, r)
                s = plot.new_series(f"{p}{layout}", color=gi, run=r.index)
                se = eff.new_series(f"{p}{layout}", color=gi, run=r.index) if eff else None
                rate = rate_of(r.context)
                for rr, b, g, size in good:
                    if rr is not r or g != layout:
                        continue
                    if b.failed:
                        if ci == 0:
                            add_failed(plot, sec, r, runs, b, size, layout)
                        continue
                    if counter in b.counters:
                        v = b.counters[counter]
                        s.add(size, v, f"{p}{layout}, {fmt_bytes(size)}: {counter} = {fmt_num(v)} {unit}")
                        if se is not None and rate:
                            e = v * (8 if bytes_unit else 1) / rate * 100
                            se.add(size, e, f"{p}{layout}, {fmt_bytes(size)}: {fmt_num(e)} % of "
                                   f"{fmt_num(rate)} Gb/s")
        plot.adapt_y(link_lines(plot, runs, 1 / 8 if bytes_unit else 1.0, unit))
        sec.add(plot)
        if eff is not None:
            eff.lines.append(("link rate = 100 %", 100.0, "100 %: the port rate"))
            eff.adapt_y(100.0)
            sec.add(eff)
    if not counters and good:
        sec.notes.append("no rate counter (…Gbps, …GBps) to plot: values in the table below")
    collect_failed(sec, runs)
    names = list(dict.fromkeys(k for _, b, _, _ in good for k in b.counters if k not in ("iterations",)))
    sec.table = values_table(runs, tuple(names[:8]), other)
    return sec

