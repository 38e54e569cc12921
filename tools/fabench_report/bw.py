"""bw: fabench-bw's section: bandwidth one direction and bidirectional against the link rate,
message rate, and the table of values."""

from .fmt import fmt_bytes, fmt_num
from .model import Plot, Section, add_failed, collect_failed, link_lines, parsed, run_prefix, values_table
from .names import BW_RE, opts_text


def bw_section(runs, sid, title):
    sec = Section(sid, title, "bw", runs)
    good, other = parsed(runs, BW_RE)
    uni = [(r, b, m) for r, b, m in good if m["dir"] == "bw"]
    bi = [(r, b, m) for r, b, m in good if m["dir"] == "bibw"]

    def groups_of(items):
        return list(dict.fromkeys((m["op"], m["tr"], m["opts"]) for _, _, m in items))

    def what(op, tr, opts):
        return f"{op} {tr.upper()}{(' ' + opts_text(opts)) if opts else ''}"

    def tip(r, w, size, c, main):
        return (f"{run_prefix(runs, r)}{w}, {fmt_bytes(size)}: {main}; total {fmt_num(c.get('Gbps', 0))} Gb/s, "
                f"{fmt_num(c.get('Mmsgps', 0))} M msg/s")

    if uni:
        plot = Plot(f"{sid}-gbps", "Bandwidth (one direction)", "message size (bytes)", "bandwidth (Gb/s)")
        for gi, (op, tr, opts) in enumerate(groups_of(uni)):
            w = what(op, tr, opts)
            for r in runs:
                s = plot.new_series(f"{run_prefix(runs, r)}{w}", color=gi, run=r.index)
                for rr, b, m in uni:
                    if rr is r and (m["op"], m["tr"], m["opts"]) == (op, tr, opts):
                        size = int(m["size"])
                        if b.failed:
                            add_failed(plot, sec, r, runs, b, size, w)
                        elif "Gbps" in b.counters:
                            s.add(size, b.counters["Gbps"], tip(r, w, size, b.counters,
                                                                f"{fmt_num(b.counters['Gbps'])} Gb/s"))
        plot.adapt_y(link_lines(plot, runs))
        sec.add(plot)
    if bi:
        plot = Plot(f"{sid}-bibw-gbps", "Bidirectional bandwidth, per direction", "message size (bytes)",
                    "bandwidth (Gb/s)")
        ctx = runs[0].context
        dev, peer = ctx.get("device", "this end"), ctx.get("peer_device", "peer")
        dirs = (("both directions", "Gbps"), (f"{dev}→{peer}", "tx_Gbps"), (f"{peer}→{dev}", "rx_Gbps"))
        color = 0
        for op, tr, opts in groups_of(bi):
            w = what(op, tr, opts)
            for dname, counter in dirs:
                for r in runs:
                    s = plot.new_series(f"{run_prefix(runs, r)}{w} {dname}", color=color, run=r.index)
                    for rr, b, m in bi:
                        if rr is r and (m["op"], m["tr"], m["opts"]) == (op, tr, opts):
                            size = int(m["size"])
                            if b.failed:
                                if counter == "Gbps":
                                    add_failed(plot, sec, r, runs, b, size, f"{w} bidirectional")
                            elif counter in b.counters:
                                c = b.counters
                                s.add(size, c[counter], tip(r, f"{w} {dname}", size, c,
                                                            f"{fmt_num(c[counter])} Gb/s ({dev}→{peer} "
                                                            f"{fmt_num(c.get('tx_Gbps', 0))}, {peer}→{dev} "
                                                            f"{fmt_num(c.get('rx_Gbps', 0))})"))
                color += 1
        ceiling = link_lines(plot, runs, 1.0, what="link rate, one direction")
        link_lines(plot, runs, 2.0, what="link rate, both directions")
        plot.adapt_y(ceiling * 2 if ceiling else None)
        sec.add(plot)
    if uni or bi:
        plot = Plot(f"{sid}-msgrate", "Message rate", "message size (bytes)", "message rate (M msg/s)")
        for gi, (bidir, key) in enumerate([(False, g) for g in groups_of(uni)] + [(True, g) for g in groups_of(bi)]):
            items = bi if bidir else uni
            w = what(*key) + (" bidirectional" if bidir else "")
            for r in runs:
                s = plot.new_series(f"{run_prefix(runs, r)}{w}", color=gi, run=r.index)
                for rr, b, m in items:
                    if rr is r and (m["op"], m["tr"], m["opts"]) == key and not b.failed and "Mmsgps" in b.counters:
                        size = int(m["size"])
                        s.add(size, b.counters["Mmsgps"], tip(r, w, size, b.counters,
                                                              f"{fmt_num(b.counters['Mmsgps'])} M msg/s"))
        sec.add(plot)
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("Gbps", "tx_Gbps", "rx_Gbps", "Mmsgps", "lost"), other)
    return sec

