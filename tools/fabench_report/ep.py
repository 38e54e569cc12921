"""ep: fabench-ep's section. Per model, mode and dtype: dispatch and combine p50 against the
tokens per rank (bars, one group per token count and skew), against the EP size where the runs
have several, the token copies each rank receives (busiest and mean: the imbalance), and the
per-rank GB/s against the link rate. A '.../ref-write' benchmark (fabench-ep --reference: one
plain write of the same bytes and one notify per destination) is a bar beside its dispatch."""

from .fmt import fmt_num
from .model import Plot, Section, add_failed, collect_failed, link_lines, parsed, run_prefix, values_table
from .names import EP_RE, EP_X_LABEL, ep_categories, ep_category, ep_group


def ep_tip(prefix, m, b):
    c = b.counters
    ref = " (reference: write + notify)" if m["ref"] else ""
    return (f"{prefix}{ep_group(m)}, {ep_category(m)}{ref}: dispatch p50 {fmt_num(c.get('dispatch_us', 0))} µs "
            f"(p99 {fmt_num(c.get('dispatch_p99_us', 0))}), combine p50 {fmt_num(c.get('combine_us', 0))} µs "
            f"(p99 {fmt_num(c.get('combine_p99_us', 0))}); {fmt_num(c.get('dispatch_GBps', 0))} / "
            f"{fmt_num(c.get('combine_GBps', 0))} GB/s per rank; received token copies max "
            f"{fmt_num(c.get('recv_tokens_max', 0))}, mean {fmt_num(c.get('recv_tokens_mean', 0))}; "
            f"model {fmt_num(c.get('predicted_us', 0))} µs")


def ep_ranks(run):
    return run.context.get("ranks", "?")


def ep_bars(plot, sec, runs, items, group, bars):
    """Bars per run and per (label, counter, reference?) of bars, at each item's category."""
    for bi, (label, counter, ref) in enumerate(bars):
        for r in runs:
            p = run_prefix(runs, r) + (f"EP {ep_ranks(r)}, " if len(runs) > 1 else "")
            s = plot.new_series(f"{p}{label}", color=bi, run=r.index, kind="bar")
            for rr, b, m in items:
                if rr is not r or bool(m["ref"]) != ref:
                    continue
                if b.failed:
                    add_failed(plot, sec, r, runs, b, ep_category(m), f"{group}, {label}", slot=s.name)
                elif counter in b.counters:
                    s.add(ep_category(m), b.counters[counter], ep_tip(p, m, b))


def ep_group_plots(sec, runs, items):
    m0 = items[0][2]
    group = ep_group(m0)
    pid = f"{sec.id}-{m0['model']}-{m0['mode']}-{m0['dtype']}"
    x = EP_X_LABEL
    has_ref = any(m["ref"] for _, _, m in items)
    lat = Plot(f"{pid}-latency", f"{group}: dispatch and combine", x, "time per call, slowest rank, p50 (µs)",
               x_scale="category")
    bars = [("dispatch", "dispatch_us", False), ("combine", "combine_us", False)]
    if has_ref:
        bars.append(("reference: write + notify", "dispatch_us", True))
    ep_bars(lat, sec, runs, items, group, bars)
    recv = Plot(f"{pid}-recv", f"{group}: token copies per rank (imbalance)", x,
                "token copies a rank's experts receive per call (tokens)", x_scale="category", y_scale="linear")
    ep_bars(recv, sec, runs, items, group, [("busiest rank", "recv_tokens_max", False),
                                            ("mean over ranks", "recv_tokens_mean", False)])
    gb = Plot(f"{pid}-gbps", f"{group}: fabric bandwidth per rank", x, "fabric bytes per rank / p50 time (GB/s)",
              x_scale="category")
    ep_bars(gb, sec, runs, items, group, [("dispatch", "dispatch_GBps", False), ("combine", "combine_GBps", False)])
    gb.adapt_y(link_lines(gb, runs, 1 / 8, "GB/s", tip_extra=" = port rate / 8, one rank's link"))
    for plot in (lat, recv, gb):
        plot.categories = ep_categories([m for _, _, m in items])
        sec.add(plot)
    ep_size_plot(sec, runs, items, pid, group)


def ep_size_plot(sec, runs, items, pid, group):
    """Against the EP size: where this group's benchmarks ran at two or more rank counts."""
    sizes = sorted({ep_ranks(r) for r, _, _ in items}, key=lambda s: int(s) if s.isdigit() else 0)
    if len(sizes) < 2:
        return
    plot = Plot(f"{pid}-epsize", f"{group}: dispatch and combine against the EP size", "EP size (ranks)",
                "time per call, slowest rank, p50 (µs)", x_scale="category")
    plot.categories = [f"EP {s}" for s in sizes]
    cats = list(dict.fromkeys(ep_category(m) for _, _, m in items if not m["ref"]))
    for ci, cat in enumerate(cats):
        for what, counter in (("dispatch", "dispatch_us"), ("combine", "combine_us")):
            s = plot.new_series(f"{cat}: {what}", color=2 * ci + (what == "combine"), kind="bar")
            for r, b, m in items:
                if m["ref"] or ep_category(m) != cat or b.failed or counter not in b.counters:
                    continue
                s.add(f"EP {ep_ranks(r)}", b.counters[counter], ep_tip(f"EP {ep_ranks(r)}: ", m, b))
    sec.add(plot)


def ep_section(runs, sid, title):
    sec = Section(sid, title, "ep", runs)
    good, other = parsed(runs, EP_RE)
    groups = {}
    for item in good:
        groups.setdefault(ep_group(item[2]), []).append(item)
    for items in groups.values():
        ep_group_plots(sec, runs, items)
    if other:
        sec.notes.append(f"{len(other)} benchmark(s) not named ep/MODEL/MODE/DTYPE/tTOKENS/SKEW: in the table only")
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("dispatch_us", "dispatch_p99_us", "combine_us", "combine_p99_us", "dispatch_GBps",
                                    "combine_GBps", "recv_tokens_max", "recv_tokens_mean", "logical_bytes",
                                    "wire_bytes", "predicted_us", "wrong"), other)
    return sec
