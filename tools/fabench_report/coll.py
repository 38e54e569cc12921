"""coll: fabench-coll's section: per collective, bus bandwidth, efficiency against the link
rate, and the time per call beside the cost model's."""

from .fmt import fmt_bytes, fmt_num, rate_of
from .model import Plot, Section, add_failed, collect_failed, link_lines, parsed, run_prefix, values_table
from .names import COLL_RE


def coll_section(runs, sid, title):
    sec = Section(sid, title, "coll", runs)
    good, other = parsed(runs, COLL_RE)
    ranks = sorted({r.context.get("ranks", "?") for r in runs})
    rank_text = f"{'/'.join(ranks)} ranks"
    for coll in dict.fromkeys(m["coll"] for _, _, m in good):
        items = [(r, b, m) for r, b, m in good if m["coll"] == coll]
        algos = list(dict.fromkeys((m["algo"], m["dtype"]) for _, _, m in items))
        busbw = Plot(f"{sid}-{coll}-busbw", f"{coll} bus bandwidth ({rank_text})", "buffer size S (bytes)",
                     "bus bandwidth (GB/s)")
        eff = Plot(f"{sid}-{coll}-efficiency", f"{coll} efficiency against the link rate ({rank_text})",
                   "buffer size S (bytes)", "busbw / link rate (%)")
        tm = Plot(f"{sid}-{coll}-time", f"{coll} time per call, measured and model ({rank_text})",
                  "buffer size S (bytes)", "time per call, slowest rank (µs)")
        for gi, (algo, dtype) in enumerate(algos):
            w = f"{algo} {dtype}"
            for r in runs:
                p = run_prefix(runs, r)
                s_bus = busbw.new_series(f"{p}{w}", color=gi, run=r.index)
                s_eff = eff.new_series(f"{p}{w}", color=gi, run=r.index)
                s_tm = tm.new_series(f"{p}{w}", color=gi, run=r.index)
                s_model = tm.new_series(f"{p}{w} (model)", color=gi, run=r.index, dashed=True)
                rate = rate_of(r.context)
                for rr, b, m in items:
                    if rr is not r or (m["algo"], m["dtype"]) != (algo, dtype):
                        continue
                    size = int(m["size"])
                    if b.failed:
                        add_failed(busbw, sec, r, runs, b, size, f"{coll} {w}")
                        continue
                    c = b.counters
                    chosen = f" [{b.label}]" if b.label else ""
                    base = f"{p}{coll} {w}{chosen}, {fmt_bytes(size)}: "
                    info = (f"busbw {fmt_num(c.get('busbw_GBps', 0))} GB/s, algbw {fmt_num(c.get('algbw_GBps', 0))}"
                            f" GB/s, {fmt_num(c.get('time_max_us', 0))} µs per call")
                    if c.get("busbw_GBps", 0) > 0:
                        s_bus.add(size, c["busbw_GBps"], base + info)
                        if rate:
                            e = c["busbw_GBps"] * 8 / rate * 100
                            s_eff.add(size, e, base + f"{fmt_num(e)} % of {fmt_num(rate)} Gb/s; " + info)
                    if c.get("time_max_us", 0) > 0:
                        s_tm.add(size, c["time_max_us"], base + info)
                    if c.get("predicted_us", 0) > 0:
                        s_model.add(size, c["predicted_us"], base + f"model {fmt_num(c['predicted_us'])} µs, "
                                    f"measured {fmt_num(c.get('time_max_us', 0))} µs")
        busbw.adapt_y(link_lines(busbw, runs, 1 / 8, "GB/s", tip_extra=" = port rate / 8"))
        eff.lines.append(("link rate = 100 %", 100.0, "100 %: busbw equal to the port rate"))
        eff.adapt_y(100.0)
        for p in (busbw, eff, tm):
            sec.add(p)
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("busbw_GBps", "algbw_GBps", "time_max_us", "time_min_us", "predicted_us",
                                    "wrong"), other)
    return sec

