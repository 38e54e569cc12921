"""accept_image: the colours of an acceptance matrix, and a large matrix drawn as one image:
matplotlib SVG whose heatmap is an embedded PNG at one pixel per cell, the culprits vector
marks with data attributes."""

import io

from .accept import ACCEPT_COLORS, ACCEPT_NOVALUE, ACCEPT_STATUS, ACCEPT_VERDICTS, Matrix
from .render import postprocess_svg


def _hex(rgba):
    return "#%02x%02x%02x" % tuple(int(round(c * 255)) for c in rgba[:3])


def _dark(rgba):
    return 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5


class AcceptPainter:
    """Colours of a matrix: darker is worse in every value matrix (viridis for bandwidth, reversed for
    latency); failed, timed-out and unmeasured cells in fixed colours, as in the verdict matrix."""

    def __init__(self, mpl, m):
        from matplotlib import colors
        self.m = m
        if m.getter is None:
            self.cmap, self.norm = None, None
        else:
            self.cmap = mpl.colormaps["viridis" if m.lower_is_worse else "viridis_r"]
            self.norm = colors.Normalize(vmin=m.range[0], vmax=m.range[1], clip=True)
        self.to_rgba = colors.to_rgba

    def cell(self, p, v):
        """(background rgba, kind) of a measured cell."""
        if self.m.getter is None:
            k = p.category
            return self.to_rgba(ACCEPT_COLORS[k]), k
        k = Matrix.kind(p, v)
        if k == "value":
            return self.cmap(self.norm(v)), k
        return self.to_rgba(ACCEPT_NOVALUE[k][0]), k

    def gradient(self):
        stops = ", ".join(_hex(self.cmap(i / 8)) for i in range(9))
        return f"linear-gradient(to right, {stops})"

def accept_image_svg(renderer, sec, m, painter):
    """The heatmap as matplotlib SVG: the cells one embedded PNG (one pixel each), the culprits vector
    marks with data attributes."""
    import numpy as np
    from matplotlib.patches import Rectangle, Circle
    from matplotlib.cm import ScalarMappable
    f = sec.file
    n = f.n
    rgba = np.empty((n, n, 4), dtype=np.uint8)
    rgba[:, :] = (np.array(painter.to_rgba(ACCEPT_COLORS["unmeasured"])) * 255).round().astype(np.uint8)
    a, b, st = f.a, f.b, f.status
    if m.fields is None:
        lut = (np.array([painter.to_rgba(ACCEPT_COLORS[k]) for k in ACCEPT_VERDICTS]) * 255).round().astype(np.uint8)
        rgba[a, b] = lut[f.category]
        rgba[b, a] = lut[f.category]
    else:
        for field, (r, cidx) in ((m.fields[0], (a, b)), (m.fields[1], (b, a))):
            vals = f.values[field]
            have = ~np.isnan(vals)
            # 64 levels: the colour bar reads no finer, and the PNG stays small.
            level = np.floor(painter.norm(vals[have]).filled(0) * 63 + 0.5) / 63
            rgba[r[have], cidx[have]] = (painter.cmap(level) * 255).round().astype(np.uint8)
            for code, key in ((ACCEPT_STATUS["failed"], "failed"), (ACCEPT_STATUS["timeout"], "timeout")):
                sel = ~have & (st == code)
                rgba[r[sel], cidx[sel]] = (np.array(painter.to_rgba(ACCEPT_NOVALUE[key][0])) * 255).round().astype(
                    np.uint8)
    fig = renderer.Figure(figsize=(6.4, 5.6), dpi=100)
    ax = fig.add_subplot()
    ax.imshow(rgba, interpolation="none", origin="upper", extent=(-0.5, n - 0.5, n - 0.5, -0.5))
    ax.grid(False)
    ax.set_title(f"{m.title}, {n} × {n}", pad=22)
    ax.title.set_gid("title")
    ax.set_xlabel("receiver: node index" if m.directed else "node b: node index")
    ax.set_ylabel("sender: node index" if m.directed else "node a: node index")
    if m.getter is not None:  # the special colours are in the HTML legend under the figure
        cb = fig.colorbar(ScalarMappable(norm=painter.norm, cmap=painter.cmap), ax=ax, fraction=0.046, pad=0.03)
        cb.set_label(f"{m.what} ({m.unit}); darker = worse")
    tips = {}
    r = max(2.0, n / 45)
    for i, c in enumerate(f.culprits):
        text = f"{c['kind']} culprit: {c.get('evidence', '')}"
        if c["kind"] == "node":
            x = c["nodes"][0]
            for part, rect in (("row", Rectangle((-0.5, x - 0.5), n, 1)), ("col", Rectangle((x - 0.5, -0.5), 1, n))):
                gid = f"cul{i}-{part}"
                rect.set(fill=False, ec="black", lw=1.2, gid=gid, zorder=5)
                ax.add_patch(rect)
                tips[gid] = ("fr-culprit", text, {"data-culprit": "node", "data-node": x, "data-mark": part})
            ax.annotate(f"node {x}", (x, -0.5), xytext=(0, 14), textcoords="offset points", ha="center",
                        va="bottom", fontsize=7, annotation_clip=False, arrowprops=dict(arrowstyle="->", lw=0.8))
        else:
            u, w = c["nodes"]
            for part, (y, x) in (("ab", (u, w)), ("ba", (w, u))):
                gid = f"cul{i}-{part}"
                circ = Circle((x, y), r, fill=False, ec="black", lw=1.4, gid=gid, zorder=5)
                ax.add_patch(circ)
                tips[gid] = ("fr-culprit", text, {"data-culprit": "link", "data-a": y, "data-b": x, "data-mark": part})
            right = w > n / 2
            ax.annotate(f"link {u}-{w}", (w, u), xytext=(-10 if right else 10, 8), textcoords="offset points",
                        fontsize=7, ha="right" if right else "left", va="bottom", annotation_clip=False)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return postprocess_svg(buf.getvalue(), m.id, tips)

