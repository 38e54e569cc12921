"""kv: fabench-kv's section: efficiency and bandwidth per layout (bars), the WR-size sweep with
its knees, and the table of values."""

from .fmt import fmt_bytes, fmt_num
from .model import Plot, Section, add_failed, collect_failed, link_lines, parsed, run_prefix, values_table
from .names import KV_RE, KV_X_LABEL, WR_RE, kv_categories, kv_category, kv_group, kv_variant, slug, wr_curve


def kv_tip(prefix, m, b):
    c = b.counters
    eff = f"{fmt_num(c['efficiency'] * 100)} % of contiguous; " if "efficiency" in c else ""
    label = f" [{b.label}]" if b.label else ""
    return (f"{prefix}{kv_group(m)}, {kv_category(m)}, {kv_variant(m)}{label}: {fmt_num(c.get('GBps', 0))} GB/s; "
            f"{eff}{fmt_num(c.get('wrs_per_request', 0))} WRs per request, {fmt_num(c.get('wr_rate', 0))} WR/s; "
            f"p50 {fmt_num(c.get('p50_us', 0))} µs per request (model {fmt_num(c.get('predicted_us', 0))} µs)")


def kv_transfer_plots(sec, runs, items):
    """For one model, ISL, TP and batch: efficiency against the contiguous ceiling and GB/s, bars per
    layout (and fragmentation), one bar per direction and merge (and run)."""
    m0 = items[0][2]
    group, ranks = kv_group(m0), min(int(m0["ptp"]), int(m0["dtp"]))
    pid = f"{sec.id}-{slug(m0['model'])}-isl{m0['isl']}-tp{m0['ptp']}-{m0['dtp']}" + \
        (f"-b{m0['batch']}" if m0["batch"] else "")
    eff = Plot(f"{pid}-efficiency", f"{group}: efficiency against contiguous", KV_X_LABEL,
               "GB/s over the contiguous layout's GB/s (%)", x_scale="category", y_scale="linear")
    bw = Plot(f"{pid}-gbps", f"{group}: bandwidth per layout", KV_X_LABEL, "bandwidth, all ranks (GB/s)",
              x_scale="category")
    eff.categories = bw.categories = kv_categories([m for _, _, m in items])
    for vi, variant in enumerate(dict.fromkeys(kv_variant(m) for _, _, m in items)):
        for r in runs:
            p = run_prefix(runs, r)
            s_eff = eff.new_series(f"{p}{variant}", color=vi, run=r.index, kind="bar")
            s_bw = bw.new_series(f"{p}{variant}", color=vi, run=r.index, kind="bar")
            for rr, b, m in items:
                if rr is not r or kv_variant(m) != variant:
                    continue
                cat, c = kv_category(m), b.counters
                if b.failed:
                    for plot, s in ((eff, s_eff), (bw, s_bw)):
                        add_failed(plot, sec, r, runs, b, cat, f"{group}, {variant}", slot=s.name)
                    continue
                if "GBps" in c:
                    s_bw.add(cat, c["GBps"], kv_tip(p, m, b))
                if "efficiency" in c:
                    s_eff.add(cat, c["efficiency"] * 100, kv_tip(p, m, b))
    eff.lines.append(("contiguous = 100 %", 100.0, "100 %: the contiguous layout's GB/s, same model, ISL, TP, "
                      "batch and direction, in the same run"))
    who = f" × {ranks} links" if ranks > 1 else ""
    bw.adapt_y(link_lines(bw, runs, ranks / 8, "GB/s", what=f"link rate{who}", tip_extra=f" = port rate / 8{who}"))
    sec.add(eff)
    sec.add(bw)


def knee(points, fraction):
    """The smallest x whose y reaches fraction of the best (fabench-kv's knee line)."""
    best = max(y for _, y, _ in points)
    return next(x for x, y, _ in points if y >= fraction * best)


def kv_sweep_plots(sec, runs, items):
    """--wr-sweep: GB/s and WR rate against bytes per WR, one curve per direction, SGEs, post list
    and signalling (and run); a dotted line where each curve reaches 90 % of its best."""
    gb = Plot(f"{sec.id}-wr-gbps", "WR-size sweep: bandwidth", "bytes per WR (bytes)",
              "bandwidth, all ranks (GB/s)")
    rate = Plot(f"{sec.id}-wr-rate", "WR-size sweep: WR rate", "bytes per WR (bytes)", "WR rate (M WR/s)")
    for ci, curve in enumerate(dict.fromkeys(wr_curve(m) for _, _, m in items)):
        for r in runs:
            p = run_prefix(runs, r)
            s_gb = gb.new_series(f"{p}{curve}", color=ci, run=r.index)
            s_rate = rate.new_series(f"{p}{curve}", color=ci, run=r.index)
            for rr, b, m in items:
                if rr is not r or wr_curve(m) != curve:
                    continue
                size, c = int(m["size"]), b.counters
                if b.failed:
                    add_failed(gb, sec, r, runs, b, size, curve)
                    continue
                tip = (f"{p}{curve}, {fmt_bytes(size)} per WR: {fmt_num(c.get('GBps', 0))} GB/s, "
                       f"{fmt_num(c.get('wr_rate', 0))} WR/s, {fmt_num(c.get('wrs_per_request', 0))} WRs per request")
                if "GBps" in c:
                    s_gb.add(size, c["GBps"], tip)
                if c.get("wr_rate", 0) > 0:
                    s_rate.add(size, c["wr_rate"] / 1e6, tip)
            add_knee(sec, gb, s_gb)
    gb.adapt_y(link_lines(gb, runs, 1 / 8, "GB/s", tip_extra=" = port rate / 8"))
    sec.add(gb)
    sec.add(rate)


def add_knee(sec, plot, s):
    """A knee needs a curve: three points at least."""
    pts = sorted(s.points, key=lambda p: p[0])
    if len(pts) < 3 or max(y for _, y, _ in pts) <= 0:
        return
    best, k50, k90 = max(y for _, y, _ in pts), knee(pts, 0.5), knee(pts, 0.9)
    text = (f"{s.name}: best {fmt_num(best)} GB/s; 50 % of it from {fmt_bytes(k50)} per WR, "
            f"90 % from {fmt_bytes(k90)} per WR")
    plot.vlines.append((f"{s.name}: 90 % from {fmt_bytes(k90)}", k90, text, s.color))
    sec.notes.append("WR sweep, " + text)


def kv_section(runs, sid, title):
    sec = Section(sid, title, "kv", runs)
    transfers, rest = parsed(runs, KV_RE)
    sweeps, _ = parsed(runs, WR_RE)
    other = [(r, b) for r, b in rest if not WR_RE.match(b.key)]
    groups = {}
    for item in transfers:
        groups.setdefault(kv_group(item[2]), []).append(item)
    for items in groups.values():
        kv_transfer_plots(sec, runs, items)
    if sweeps:
        kv_sweep_plots(sec, runs, sweeps)
    if other:
        sec.notes.append(f"{len(other)} benchmark(s) named neither kv/MODEL/LAYOUT/... nor wr/...: "
                         "in the table only")
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("GBps", "efficiency", "wrs_per_request", "wr_rate", "p50_us", "p99_us",
                                    "max_us", "predicted_us", "ttft_share", "wrong"), other)
    return sec

