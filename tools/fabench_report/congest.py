"""congest: fabench-congest's section. Per victim test: the Congestion Impact Factor of each
congestor pattern (bars: mean and p99; the paths behind the incast target's port and those
that avoid it), and per benchmark the victims' tail alone and loaded: the share of samples worse
than a value, drawn through the percentiles the run records (p50, p90, p99, p99.9; for bandwidth
the worse side, the lowest). The label's hot port and moved counters are in the CIF bars'
tooltips."""

from .comparison import congest_pattern as pattern_of
from .fmt import fmt_num
from .model import Plot, Section, add_failed, collect_failed, parsed, run_prefix, values_table
from .names import CONGEST_RE

# fabench-congest's percentile counters (worse side) and the share of samples beyond each.
TAILS = (("_p50", "p50", 50.0), ("_p90", "p90", 10.0), ("_p99", "p99", 1.0), ("_p999", "p99.9", 0.1))
UNIT = {"latency": ("_us", "µs"), "bandwidth": ("_GBps", "GB/s"), "allreduce": ("_us", "µs")}
X_LABEL = {"latency": "victim latency, one way", "bandwidth": "victim bandwidth",
           "allreduce": "victim all-reduce, per call"}


def congest_tip(prefix, m, b):
    c = b.counters
    suffix, unit = UNIT[m["test"]]
    return (f"{prefix}{m['test']} victims, {pattern_of(m)}: CIF {fmt_num(c.get('cif', 0))}, p99 "
            f"{fmt_num(c.get('cif_p99', 0))}; behind the target's port {fmt_num(c.get('behind_cif_p99', 0))}, "
            f"elsewhere {fmt_num(c.get('elsewhere_cif_p99', 0))}; alone {fmt_num(c.get('isolated' + suffix, 0))} "
            f"{unit}, loaded {fmt_num(c.get('loaded' + suffix, 0))} {unit}; {b.label or 'no label'}")


def cif_plot(sec, runs, test, items):
    plot = Plot(f"{sec.id}-{test}-cif", f"{test} victims: congestion impact factor per pattern", "congestor pattern",
                "CIF (×; loaded against alone, > 1 is worse)", x_scale="category")
    bars = (("mean", "cif"), ("p99", "cif_p99"), ("p99, paths behind the target's port", "behind_cif_p99"),
            ("p99, paths avoiding it", "elsewhere_cif_p99"))
    for bi, (label, counter) in enumerate(bars):
        for r in runs:
            p = run_prefix(runs, r)
            s = plot.new_series(f"{p}{label}", color=bi, run=r.index, kind="bar")
            for rr, b, m in items:
                if rr is not r:
                    continue
                if b.failed:
                    add_failed(plot, sec, r, runs, b, pattern_of(m), f"{test}, {label}", slot=s.name)
                elif b.counters.get(counter, 0) > 0:
                    s.add(pattern_of(m), b.counters[counter], congest_tip(p, m, b))
    plot.categories = list(dict.fromkeys(pattern_of(m) for _, _, m in items))
    plot.lines.append(("no impact (CIF 1)", 1.0, "CIF 1: loaded as alone"))
    plot.lines.append(("hot-port threshold (CIF 2)", 2.0, "a port is named hot when its paths' CIF exceeds 2 "
                       "and twice that of the paths avoiding it"))
    sec.add(plot)


def tail_plot(sec, runs, m, items):
    test = m["test"]
    suffix, unit = UNIT[test]
    worse = "below" if test == "bandwidth" else "slower than"
    x_label = f"{X_LABEL[test]} ({unit})"
    plot = Plot(f"{sec.id}-{test}-{pattern_of(m).replace(' ', '-').replace(':', '-')}-tail",
                f"{test} victims, {pattern_of(m)}: tail alone and loaded", x_label,
                f"samples {worse} the value (%)", x_scale="log")
    for pi, phase in enumerate(("isolated", "loaded")):
        for r in runs:
            p = run_prefix(runs, r)
            s = plot.new_series(f"{p}{'alone' if phase == 'isolated' else 'loaded'}", color=pi, run=r.index)
            for rr, b, _ in items:
                if rr is not r or b.failed:
                    continue
                for tail, pname, share in TAILS:
                    v = b.counters.get(phase + tail + suffix, 0)
                    if v > 0:
                        s.add(v, share, f"{p}{phase}, {pattern_of(m)}: {fmt_num(share)} % of samples {worse} "
                              f"{fmt_num(v)} {unit} ({pname})")
    sec.add(plot)


def congest_section(runs, sid, title):
    sec = Section(sid, title, "congest", runs)
    good, other = parsed(runs, CONGEST_RE)
    for test in ("latency", "bandwidth", "allreduce"):
        items = [(r, b, m) for r, b, m in good if m["test"] == test]
        if not items:
            continue
        cif_plot(sec, runs, test, items)
        for key in dict.fromkeys(b.key for _, b, _ in items):
            group = [(r, b, m) for r, b, m in items if b.key == key]
            tail_plot(sec, runs, group[0][2], group)
    if other:
        sec.notes.append(f"{len(other)} benchmark(s) not named congest/TEST/PATTERN: in the table only")
    sec.notes.append("Latency is one way (half the round trip). Each benchmark's label (in the CIF bars' tooltips "
                     "and the JSON) names the hot port and the ranks whose error or congestion counters moved.")
    collect_failed(sec, runs)
    sec.table = values_table(runs, ("cif", "cif_p99", "behind_cif_p99", "elsewhere_cif_p99", "isolated_us",
                                    "loaded_us", "isolated_GBps", "loaded_GBps", "congestor_GBps", "moved_ranks",
                                    "uncovered", "samples", "wrong"), other)
    return sec
