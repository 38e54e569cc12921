"""model: what a report draws, before any drawing: sections of plots, plots of series of
points, reference lines, the y axis's scale and ticks, and the table of values. Built by the
family modules (lat, bw, coll, kv, generic, comparison); drawn by render and page."""

import math

from .fmt import fmt_bytes, fmt_num, rate_of


class Series:
    def __init__(self, name, color=0, run=0, kind="line", dashed=False, slot=None):
        self.name = name
        self.color = color
        self.run = run
        self.kind = kind  # line | bar | failed
        self.dashed = dashed
        self.slot = slot  # bar plots: which bar of a category (a bar series' name)
        self.points = []  # (x, y, tooltip); x a size, or a category name in bar plots

        self.style = {}  # marker, size, hollow, z: a look of its own (latency percentiles)

    def add(self, x, y, tip):
        self.points.append((x, y, tip))


class Plot:
    """x_scale log2 (sizes), log (a measured value: latency, GB/s) or category (bar groups: one
    slot per bar series)."""

    def __init__(self, pid, title, x_label, y_label, x_scale="log2", y_scale="log"):
        self.id = pid
        self.title = title
        self.x_label = x_label
        self.y_label = y_label
        self.x_scale = x_scale
        self.y_scale = y_scale
        self.series = []
        self.lines = []  # (name, y, tooltip): link-rate ceilings, ratio 1
        self.vlines = []  # (name, x, tooltip, color): knees of a sweep
        self.categories = []  # category plots: the x values, in order
        self.slots = []  # category plots: bar series names, in order

    def new_series(self, *a, **kw):
        s = Series(*a, **kw)
        if s.kind == "bar":
            s.slot = s.name
            self.slots.append(s.name)
        self.series.append(s)
        return s

    def finish(self):
        self.series = [s for s in self.series if s.points]
        if self.x_scale == "category":
            used = {p[0] for s in self.series for p in s.points}
            self.categories = [c for c in self.categories if c in used] + sorted(used - set(self.categories))
            order = {c: i for i, c in enumerate(self.categories)}
            for s in self.series:
                s.points.sort(key=lambda p: order[p[0]])
        else:
            for s in self.series:
                s.points.sort(key=lambda p: p[0])
        self.settle_y()
        return self if self.series else None

    @property
    def n_points(self):
        return sum(len(s.points) for s in self.series)

    def adapt_y(self, ceiling):
        """Linear y up to the ceiling when the data reach 20 % of it, else log
        (an emulated link at 1 % of its rate stays readable)."""
        ys = [p[1] for s in self.series if s.kind != "failed" for p in s.points]
        top = max(ys) if ys else 0
        if ceiling and top < 0.2 * ceiling and ys and min(ys) > 0:
            self.y_scale = "log"
        else:
            self.y_scale = "linear"

    def structure(self):
        d = {
            "id": self.id, "title": self.title, "x_label": self.x_label, "y_label": self.y_label,
            "x_scale": self.x_scale, "y_scale": self.y_scale,
            "lines": [{"name": n, "y": y} for n, y, _ in self.lines],
            "series": [{"name": s.name, "kind": s.kind, "points": len(s.points), "x": [p[0] for p in s.points]}
                       for s in self.series],
        }
        if self.vlines:
            d["vlines"] = [{"name": n, "x": x} for n, x, _, _ in self.vlines]
        if self.x_scale == "category":
            d["categories"] = self.categories
        return d


    def y_values(self):
        """Every y the axis must show: the points (failed ones have none) and the reference lines."""
        ys = [p[1] for s in self.series if s.kind != "failed" for p in s.points if p[1] is not None]
        return ys + [y for _, y, _ in self.lines]

    def y_ticks(self):
        """A log axis's ticks (1-2-5 per decade, from one below the lowest value to one above the
        highest); [] for a linear axis, whose ticks the renderer leaves to matplotlib."""
        ys = [y for y in self.y_values() if y > 0]
        if self.y_scale != "log" or not ys:
            return []
        lo = min(ys)
        if self.x_scale == "category":  # bars rise from the decade below the lowest
            bars = [p[1] for s in self.series if s.kind == "bar" for p in s.points if p[1] > 0]
            if bars:
                lo = min(lo, 10.0 ** math.floor(math.log10(min(bars))))
        return log_ticks(lo, max(ys))

    def settle_y(self):
        """A log axis keeps at least 3 labelled ticks; data within less than that (10 to 20 µs,
        say) get a linear axis instead, which can label them."""
        if self.y_scale == "log" and len(self.y_ticks()) < 3:
            self.y_scale = "linear"


def log_ticks(lo, hi):
    """The 1-2-5 values from the largest at or below lo to the smallest at or above hi; only the
    decades when that is more than 10 ticks."""
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    cand = [float(f"{m}e{e}") for e in range(e0 - 1, e1 + 1) for m in (1, 2, 5)]
    eps = 1e-9
    first = max(c for c in cand if c <= lo * (1 + eps))
    last = min(c for c in cand if c >= hi * (1 - eps))
    ticks = [c for c in cand if first <= c <= last]
    if len(ticks) > 10:
        ticks = [float(f"1e{e}") for e in range(math.floor(math.log10(first)), math.ceil(math.log10(last)) + 1)]
    return ticks


class Section:
    def __init__(self, sid, title, kind, runs):
        self.id = sid
        self.title = title
        self.kind = kind
        self.runs = runs
        self.plots = []
        self.notes = []
        self.failed = []  # (run label, benchmark, error)
        self.table = None  # (columns, rows)
        self.differs = []  # comparison: (run label, [(key, first value, this value)])
        self.mismatch = []  # comparison: (run label, [(what, key, first value, this value)])

    def add(self, plot):
        if plot is not None and plot.finish():
            self.plots.append(plot)

    def structure(self):
        d = {"id": self.id, "title": self.title, "kind": self.kind, "runs": [r.label for r in self.runs],
             "plots": [p.structure() for p in self.plots]}
        if self.failed:
            d["failed"] = [{"run": r, "name": n, "error": e} for r, n, e in self.failed]
        if self.notes:
            d["notes"] = self.notes
        if self.differs:
            d["differing_context"] = {lbl: [k for k, _, _ in diffs] for lbl, diffs in self.differs}
        if any(m for _, m in self.mismatch):
            d["mismatch"] = {lbl: list(dict.fromkeys(w for w, _, _, _ in m)) for lbl, m in self.mismatch if m}
        return d



def run_prefix(runs, run):
    return f"{run.label}: " if len(runs) > 1 else ""



def link_lines(plot, runs, scale=1.0, unit="Gb/s", what="link rate", tip_extra=""):
    rates = {}
    for r in runs:
        rate = rate_of(r.context)
        if rate:
            rates.setdefault(rate, []).append(r.label)
    for rate, labels in rates.items():
        who = f" ({', '.join(labels)})" if len(rates) > 1 else ""
        y = rate * scale
        plot.lines.append((f"{what} {fmt_num(y)} {unit}{who}", y,
                           f"{what}: {fmt_num(y)} {unit}{tip_extra} (port rate {fmt_num(rate)} Gb/s){who}"))
    return max(rates) * scale if rates else None


def add_failed(plot, sec, run, runs, bench, x, what, slot=None):
    """A red x at x (a size, or in a bar plot a category and the slot of the bar it stands for)."""
    s = next((s for s in plot.series if s.kind == "failed" and s.run == run.index and s.slot == slot), None)
    if s is None:
        name = f"{slot}: failed" if slot else f"{run_prefix(runs, run)}failed"
        s = plot.new_series(name, run=run.index, kind="failed", slot=slot)
    where = x if isinstance(x, str) else fmt_bytes(x)
    s.add(x, None, f"{run_prefix(runs, run)}{what}, {where}: FAILED: {bench.error}")


def collect_failed(sec, runs):
    for r in runs:
        for b in r.benches.values():
            for e in b.errors:
                sec.failed.append((r.label, b.key, e))


def parsed(runs, rx):
    """[(run, bench, match)] for the benchmarks whose names rx matches; the rest by name."""
    good, other = [], []
    for r in runs:
        for b in r.benches.values():
            m = rx.match(b.key)
            (good.append((r, b, m)) if m else other.append((r, b)))
    return good, other


def values_table(runs, counters, other):
    cols = ["run", "benchmark", "status"] + list(counters)
    rows = []
    unknown = {(r.label, b.key) for r, b in other}
    for r in runs:
        for b in r.benches.values():
            if b.failed:
                status = "FAILED: " + b.error
            elif (r.label, b.key) in unknown:
                status = "not plotted (name not recognised)"
            elif b.errors:
                status = f"{len(b.errors)} repetition(s) failed: {b.error}"
            else:
                status = "ok"
            rows.append([r.label, b.key, status] + [fmt_num(b.counters[c]) if c in b.counters else ""
                                                    for c in counters])
    return cols, rows

