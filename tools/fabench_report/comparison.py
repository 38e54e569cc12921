"""comparison: runs of the same binary against the first: per family of benchmark names the
ratio of a metric (curves, or bars by category), the context fields that differ, and the
differences that make a comparison one across fabrics (device, link rate, transport, host)."""

import re

from .fmt import ctx_text, fmt_bytes, fmt_num
from .generic import generic_key
from .model import Plot, Section, add_failed
from .names import BW_RE, COLL_RE, CONGEST_RE, EP_RE, EP_X_LABEL, KV_RE, KV_X_LABEL, LAT_RE, WR_RE, bw_what, ep_categories, \
    ep_category, ep_group, kv_categories, kv_category, kv_group, kv_variant, lat_what, slug, wr_curve


class Family:
    """One family of benchmark names compared across runs: key(bench) -> (series label, x) or None;
    metrics (counter, what, unit, sense); categories(runs) for a bar plot (x a category), else x a size."""

    def __init__(self, key, x_label, metrics, pid="", categories=None):
        self.key = key
        self.x_label = x_label
        self.metrics = metrics
        self.pid = pid
        self.categories = categories


def by_name(rx, what, x=lambda m: int(m["size"])):
    def key(b):
        m = rx.match(b.key)
        return (what(m), x(m)) if m else None
    return key


def congest_pattern(m):
    return m["pattern"] + (f" {m['ratio']}:1" if m["ratio"] else "")


def kv_compared_categories(runs):
    return kv_categories([m for m in (KV_RE.match(k) for r in runs for k in r.benches) if m])


COMPARE = {
    "lat": [Family(by_name(LAT_RE, lat_what), "message size (bytes)",
                   (("p50_us", "p50 latency", "µs", "> 1: slower"), ("p99_us", "p99 latency", "µs", "> 1: slower")))],
    "bw": [Family(by_name(BW_RE, bw_what), "message size (bytes)", (("Gbps", "bandwidth", "Gb/s", "> 1: faster"),))],
    "coll": [Family(by_name(COLL_RE, lambda m: f"{m['coll']} {m['algo']} {m['dtype']}"), "buffer size S (bytes)",
                    (("busbw_GBps", "bus bandwidth", "GB/s", "> 1: faster"),))],
    "kv": [Family(by_name(KV_RE, lambda m: f"{kv_group(m)}, {kv_variant(m)}", kv_category), KV_X_LABEL,
                  (("GBps", "transfer bandwidth", "GB/s", "> 1: faster"),), categories=kv_compared_categories),
           Family(by_name(WR_RE, wr_curve), "bytes per WR (bytes)",
                  (("GBps", "WR sweep bandwidth", "GB/s", "> 1: faster"),), pid="wr-")],
    "ep": [Family(by_name(EP_RE, lambda m: ep_group(m) + (", reference" if m["ref"] else ""), ep_category),
                  EP_X_LABEL, (("dispatch_us", "dispatch p50", "µs", "> 1: slower"),
                               ("combine_us", "combine p50", "µs", "> 1: slower")),
                  categories=lambda runs: ep_categories([m for m in (EP_RE.match(k) for r in runs for k in r.benches)
                                                         if m]))],
    "congest": [Family(by_name(CONGEST_RE, lambda m: f"{m['test']} victims", congest_pattern), "congestor pattern",
                       (("cif", "CIF (mean)", "×", "> 1: more impact"), ("cif_p99", "CIF (p99)", "×", "> 1: more impact")),
                       categories=lambda runs: list(dict.fromkeys(
                           congest_pattern(m) for m in (CONGEST_RE.match(k) for r in runs for k in r.benches) if m)))],
}


def generic_families(runs):
    """LAYOUT/.../SIZE, its first G-rate counter (as generic_section)."""
    rates = [k for r in runs for b in r.benches.values() for k in b.counters if re.search(r"G[Bb]ps$", k)]
    rates = sorted(dict.fromkeys(rates), key=lambda k: (0 if "bus" in k else 1 if k.endswith("Gbps") else 2))
    if not rates:
        return []
    return [Family(generic_key, "size (bytes)",
                   ((rates[0], rates[0], "GB/s" if rates[0].endswith("GBps") else "Gb/s", "> 1: faster"),))]


_NOT_COMPARED = {"load_avg", "caches"}


def context_diff(a, b):
    out = []
    for k in list(dict.fromkeys(list(a) + list(b))):
        if k in _NOT_COMPARED:
            continue
        va, vb = a.get(k, "(absent)"), b.get(k, "(absent)")
        if va != vb:
            out.append((k, ctx_text(va), ctx_text(vb)))
    return out



# What makes two runs measure different fabrics, and the context keys that say it.
MISMATCH = (
    ("device", ("device", "peer_device")),
    ("link rate", ("port_rate_Gbps", "peer_port_rate_Gbps")),
    ("transport", ("transport", "link_layer", "peer_link_layer", "gid_type")),
    ("host", ("host", "peer_host", "hosts")),
)


def mismatch(a, b):
    """[(what, key, value in a, value in b)] for the MISMATCH keys whose values differ (a key
    that only one context has counts: one run names a peer the other does not have)."""
    out = []
    for what, keys in MISMATCH:
        for k in keys:
            if (k in a or k in b) and ctx_text(a.get(k, "(absent)")) != ctx_text(b.get(k, "(absent)")):
                out.append((what, k, ctx_text(a.get(k, "(absent)")), ctx_text(b.get(k, "(absent)"))))
    return out


def mismatch_text(diffs):
    """"device (device rxe0 → mlx5_0), link rate (...)": one clause per kind of difference."""
    by = {}
    for what, k, va, vb in diffs:
        by.setdefault(what, []).append(f"{k} {va} → {vb}")
    return ", ".join(f"{what} ({'; '.join(parts)})" for what, parts in by.items())


def ratio_plot(sec, runs, fam, metric, binary):
    """metric in each later run over run 1, by benchmark name; failed in either: a red x."""
    counter, mname, unit, sense = metric
    first = runs[0]
    plot = Plot(f"{sec.id}-{fam.pid}{slug(counter)}", f"{mname}: ratio to {first.label} ({binary})", fam.x_label,
                f"{mname} ratio, run N / {first.label} (×; {sense})",
                x_scale="category" if fam.categories else "log2", y_scale="linear")
    if fam.categories:
        plot.categories = fam.categories(runs)
    plot.lines.append((f"equal to {first.label}", 1.0, "ratio 1: no change"))
    colors = {}
    for r in runs[1:]:
        for key, b in r.benches.items():
            a, k = first.benches.get(key), fam.key(b)
            if a is None or k is None:
                continue
            label, x = k
            name = f"{r.label} / {first.label}: {label}"
            s = next((s for s in plot.series if s.name == name), None) or plot.new_series(
                name, color=colors.setdefault(label, len(colors)), run=r.index,
                kind="bar" if fam.categories else "line")
            where = x if fam.categories else fmt_bytes(x)
            if a.failed or b.failed:
                add_failed(plot, sec, r, runs, a if a.failed else b, x,
                           f"{label} (failed in {first.label if a.failed else r.label})",
                           slot=name if fam.categories else None)
                continue
            va, vb = a.counters.get(counter), b.counters.get(counter)
            if va and vb is not None:
                s.add(x, vb / va, f"{label}, {where}: {r.label} {fmt_num(vb)} {unit} / "
                      f"{first.label} {fmt_num(va)} {unit} = {vb / va:.3f}×")
    return plot


def compare_section(runs, sid, title, kind, binary):
    sec = Section(sid, title, kind, runs)
    first = runs[0]
    for r in runs[1:]:
        sec.differs.append((r.label, context_diff(first.context, r.context)))
        sec.mismatch.append((r.label, mismatch(first.context, r.context)))
    families = COMPARE.get(kind) or generic_families(runs)
    for fam in families:
        for metric in fam.metrics:
            sec.add(ratio_plot(sec, runs, fam, metric, binary))
    if families and not any(s.kind != "failed" for p in sec.plots for s in p.series):
        sec.notes.append(f"no benchmark succeeded in both {first.label} and a later run: no ratio to plot")
    return sec

