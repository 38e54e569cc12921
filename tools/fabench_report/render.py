"""render: plots drawn by matplotlib as SVG (inlined in the page, a <title> tooltip and a class
on every point) or PNG."""

import html
import io
import math
import os
import re
import sys

from .fmt import fmt_bytes
from .model import log_ticks
from .names import InputError

LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P")
HATCHES = ("", "//", "..", "xx", "\\\\", "++")


def import_matplotlib():
    try:
        import matplotlib
    except ImportError:
        # A pyenv/venv python3 first in PATH may lack Debian's python3-matplotlib.
        alt = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(alt) and os.path.exists(alt) \
                and not os.environ.get("FABENCH_REPORT_REEXEC"):
            os.environ["FABENCH_REPORT_REEXEC"] = "1"
            sys.stdout.flush()
            # The package, not a script path: the same whether run by the shim or with -m.
            tools = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            os.execv(alt, [alt, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
                           "from fabench_report.cli import run; run()", tools] + sys.argv[1:])
        raise InputError("matplotlib is missing: install python3-matplotlib (tools/install-deps)") from None
    matplotlib.use("Agg")
    matplotlib.rcParams.update({
        "svg.fonttype": "none",  # text stays text: smaller, searchable, no glyph paths
        "font.size": 9,
        "font.family": "DejaVu Sans",
        "axes.titlesize": 10,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "svg.hashsalt": "fabench-report",  # stable ids
    })
    return matplotlib


class Renderer:
    def __init__(self):
        self.mpl = import_matplotlib()
        from matplotlib.figure import Figure
        from matplotlib import ticker
        self.Figure = Figure
        self.ticker = ticker
        self.colors = self.mpl.colormaps["tab10"].colors

    def figure(self, plot):
        """The matplotlib figure and {gid: (class, tooltip)}."""
        fig = self.Figure(figsize=(6.0, 3.6), dpi=100)
        ax = fig.add_subplot()
        tips = {}
        ax.set_title(plot.title)
        ax.set_xlabel(plot.x_label)
        ax.set_ylabel(plot.y_label)
        ax.xaxis.label.set_gid("xlabel")
        ax.yaxis.label.set_gid("ylabel")
        ax.title.set_gid("title")
        self.scales(ax, plot)
        place, width = self.bar_places(plot) if plot.x_scale == "category" else ((lambda s, x: x), None)
        for s in plot.series:
            if s.kind == "failed":
                self.failed(ax, s, place, tips)
            elif s.kind == "bar":
                self.bars(ax, s, place, width, tips)
            else:
                self.curve(ax, s, tips)
        for i, (name, y, tip) in enumerate(plot.lines):
            ax.axhline(y, color="black" if i == 0 else "#7f7f7f", ls=(0, (6, 3)), lw=1.2, label=name, gid=f"line{i}")
            tips[f"line{i}"] = ("fr-line", tip)
        for i, (name, x, tip, color) in enumerate(plot.vlines):
            ax.axvline(x, color=self.color(color), ls=":", lw=1.2, label=name, gid=f"vline{i}")
            tips[f"vline{i}"] = ("fr-line", tip)
        if plot.y_scale == "linear":
            ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)
        return fig, tips

    def color(self, index):
        return self.colors[index % len(self.colors)]

    def scales(self, ax, plot):
        t = self.ticker
        if plot.x_scale == "log2":
            xs = [p[0] for s in plot.series for p in s.points]
            ax.set_xscale("log", base=2)
            lo, hi = int(math.floor(math.log2(min(xs)))), int(math.ceil(math.log2(max(xs))))
            step = max(1, math.ceil((hi - lo + 1) / 8))
            ax.xaxis.set_major_locator(t.FixedLocator([2.0 ** e for e in range(lo, hi + 1, step)]))
            ax.xaxis.set_major_formatter(t.FuncFormatter(lambda v, _: fmt_bytes(v)))
            ax.xaxis.set_minor_locator(t.NullLocator())
            if lo == hi:
                ax.set_xlim(2.0 ** (lo - 1), 2.0 ** (hi + 1))
        elif plot.x_scale == "log":  # a measured value (fabench-congest's latency tails)
            xs = [p[0] for s in plot.series for p in s.points if p[0] > 0]
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(t.FixedLocator(log_ticks(min(xs), max(xs))))
            ax.xaxis.set_major_formatter(t.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(t.NullLocator())
        elif plot.x_scale == "category":
            ax.set_xticks(range(len(plot.categories)), plot.categories, rotation=20, ha="right")
            ax.set_xlim(-0.6, len(plot.categories) - 0.4)
            ax.grid(False, axis="x")
        ticks = plot.y_ticks()
        if plot.y_scale == "log" and ticks:
            # 1-2-5 ticks, every one labelled, the axis from the first to the last (model.log_ticks).
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(t.FixedLocator(ticks))
            ax.yaxis.set_major_formatter(t.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_locator(t.NullLocator())
            bars = plot.x_scale == "category"  # bars rise from the bottom tick: no margin below
            ax.set_ylim(ticks[0] if bars else ticks[0] / 1.1, ticks[-1] * 1.1)
        else:
            ax.yaxis.set_major_locator(t.MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10], min_n_ticks=3))

    @staticmethod
    def bar_places(plot):
        """(place(series, category) -> x, bar width): categories at 0, 1, ...; in each, side by side
        the slots (bar series, or the failed marks standing for one) that have a point there."""
        order = {x: i for i, x in enumerate(plot.slots)}
        per_cat = {c: [] for c in plot.categories}
        for s in sorted(plot.series, key=lambda s: order.get(s.slot, len(order))):
            for x, _, _ in s.points:
                if s.slot not in per_cat[x]:
                    per_cat[x].append(s.slot)
        width = 0.8 / max(len(v) for v in per_cat.values())
        cats = {c: i for i, c in enumerate(plot.categories)}
        return (lambda s, x: cats[x] + (per_cat[x].index(s.slot) - (len(per_cat[x]) - 1) / 2) * width), width

    def failed(self, ax, s, place, tips):
        """Red x at the bottom of the axes (a failed benchmark has no value)."""
        style = dict(ls="none", marker="x", ms=8, mew=2, color="#d62728", transform=ax.get_xaxis_transform(),
                     clip_on=False)
        px = [place(s, p[0]) for p in s.points]
        ax.plot(px, [0.03] * len(px), label=s.name, zorder=5, **style)
        for x, (_, _, tip) in zip(px, s.points):
            gid = f"pt{len(tips)}"
            ax.plot([x], [0.03], gid=gid, zorder=6, **style)
            tips[gid] = ("fr-pt fr-failed", tip)

    def bars(self, ax, s, place, width, tips):
        """One bar per point (its own artist, for its tooltip); runs told apart by hatching."""
        ri = max(0, s.run - 1)
        for i, (x, y, tip) in enumerate(s.points):
            gid = f"pt{len(tips)}"
            ax.bar(place(s, x), y, width=width, color=self.color(s.color),
                   hatch=HATCHES[ri % len(HATCHES)], edgecolor="white" if ri else self.color(s.color),
                   label=s.name if i == 0 else None, gid=gid, zorder=3)
            tips[gid] = ("fr-pt", tip)

    def curve(self, ax, s, tips):
        """A line with a marker per point (its own artist, for its tooltip). Runs told apart by
        line style; a series with a style of its own (latency percentiles) keeps its marker,
        size and drawing order, so that where values meet each one still shows."""
        ri = max(0, s.run - 1)
        color = self.color(s.color)
        ls = "--" if s.dashed else LINESTYLES[ri % len(LINESTYLES)]
        st = s.style
        marker = st.get("marker", MARKERS[ri % len(MARKERS)])
        ms = st.get("size", 4)
        mfc = "white" if s.dashed or st.get("hollow") else color
        z = st.get("z", 2)
        ax.plot([p[0] for p in s.points], [p[1] for p in s.points], ls=ls, marker=marker, ms=ms, lw=1.4,
                color=color, label=s.name, mfc=mfc, zorder=z)
        for x, y, tip in s.points:
            gid = f"pt{len(tips)}"
            ax.plot([x], [y], ls="none", marker=marker, ms=ms, color=color, gid=gid, mfc=mfc, zorder=z + 2)
            tips[gid] = ("fr-pt", tip)

    def svg(self, plot):
        fig, tips = self.figure(plot)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
        return postprocess_svg(buf.getvalue(), plot.id, tips)

    def png(self, plot, path):
        fig, _ = self.figure(plot)
        fig.savefig(path, format="png", dpi=150, bbox_inches="tight")


def postprocess_svg(svg, pid, tips):
    """Inline-ready SVG: no XML prolog or metadata, ids prefixed with the plot
    id (unique in the page), a <title> tooltip and a class on each point."""
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{pid}-{m.group(1)}"', svg)
    svg = re.sub(r'((?:xlink:)?href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{pid}-{m.group(2)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{pid}-{m.group(1)})", svg)

    def tip(m):
        gid = m.group(1)[len(pid) + 1:]
        cls, text = tips[gid][:2]
        extra = tips[gid][2] if len(tips[gid]) > 2 else {}  # data attributes (fabench-accept's culprit marks)
        attrs = "".join(f' {k}="{html.escape(str(v))}"' for k, v in extra.items())
        return f'<g id="{m.group(1)}" class="{cls}"{attrs}><title>{html.escape(text)}</title>'

    ids = "|".join(re.escape(f"{pid}-{g}") for g in tips)
    if ids:
        svg = re.sub(rf'<g id="({ids})">', tip, svg)
    svg = svg.replace("<svg ", f'<svg class="fr-svg" data-plot="{html.escape(pid)}" ', 1)
    return svg.strip() + "\n"
