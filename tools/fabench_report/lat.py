"""lat: fabench-lat's section: per operation, transport and options, the latency percentiles
against the message size, and the table of values."""

from .fmt import fmt_bytes, fmt_num
from .model import Plot, Section, add_failed, collect_failed, parsed, run_prefix, values_table
from .names import LAT_RE, opts_text, slug

LAT_PCTS = (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p99.9_us"), ("max", "max_us"))
# Where percentiles meet (p99.9 = max in a short run), every one stays visible: the higher
# percentiles are drawn first and larger (max a ring), each drawn over them smaller.
LAT_STYLE = {
    "p50": {"marker": "o", "size": 3.5, "hollow": False, "z": 2.4},
    "p99": {"marker": "s", "size": 5.0, "hollow": False, "z": 2.3},
    "p99.9": {"marker": "^", "size": 8.0, "hollow": False, "z": 2.2},
    "max": {"marker": "o", "size": 11.0, "hollow": True, "z": 2.1},
}


def lat_section(runs, sid, title):
    sec = Section(sid, title, "lat", runs)
    good, other = parsed(runs, LAT_RE)
    groups = list(dict.fromkeys((m["op"], m["tr"], m["opts"]) for _, _, m in good))
    for op, tr, opts in groups:
        items = [(r, b, m) for r, b, m in good if (m["op"], m["tr"], m["opts"]) == (op, tr, opts)]
        label = next((b.label for _, b, _ in items if b.label), "")
        what = f"{op} {tr.upper()}{(' ' + opts_text(opts)) if opts else ''}"
        plot = Plot(f"{sid}-{op}-{tr}{('-' + slug(opts)) if opts else ''}", f"{what} latency" +
                    (f" ({label})" if label else ""), "message size (bytes)",
                    f"latency{', ' + label if label else ''} (µs)")
        for r in runs:
            for ci, (pname, counter) in enumerate(LAT_PCTS):
                s = plot.new_series(f"{run_prefix(runs, r)}{pname}", color=ci, run=r.index)
                s.style = LAT_STYLE[pname]
                for rr, b, m in items:
                    if rr is r and not b.failed and counter in b.counters:
                        size = int(m["size"])
                        c = b.counters
                        s.add(size, c[counter], f"{run_prefix(runs, r)}{what}, {fmt_bytes(size)}: {pname} = "
                              f"{fmt_num(c[counter])} µs (p50 {fmt_num(c.get('p50_us', 0))}, "
                              f"max {fmt_num(c.get('max_us', 0))}, {int(c.get('samples', 0))} samples)")
        for r, b, m in items:
            if b.failed:
                add_failed(plot, sec, r, runs, b, int(m["size"]), what)
        sec.add(plot)
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("p50_us", "p99_us", "p99.9_us", "max_us", "mean_us", "samples"), other)
    return sec

