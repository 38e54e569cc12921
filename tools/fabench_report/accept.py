"""accept: fabench-accept's JSON report ("fabench_accept": 1) read, checked and modelled: its
pairs and attempts, the N x N matrices to draw and the section's verdict, counts and lists.
Drawn by accept_html (tables up to --accept-table-max nodes) and accept_image (larger N)."""

import json
import math
import os

from .names import PROG, InputError
from .render import import_matplotlib

# One section per report: the verdict, the counts, the culprits with their evidence, the failed and
# flaky pairs, and five N x N matrices (row = sender / node a, column = receiver / node b, values
# of the counting attempt: the last one): bandwidth one direction at a time (directed),
# bidirectional bandwidth, latency p50 and p99 (symmetric) and the verdicts. Two renderings:
#
#   N <= --accept-table-max (64): an HTML table, one <td class="fr-cell"> per cell with data-a,
#     data-b, data-verdict (pass|flaky|fail|timeout|unmeasured), data-status, data-value and a
#     tooltip; a culprit node's row and column cells (and headers) carry data-culprit="node", a
#     culprit link's two cells data-culprit="link".
#   larger N: an inline SVG drawn by matplotlib whose heatmap is one embedded PNG at one pixel per
#     cell (imshow, interpolation "none": the SVG backend keeps the data resolution), so 1024
#     nodes are 1 M pixels, not 1 M DOM nodes; the culprit marks are a few vector shapes with
#     data-culprit, data-node / data-a, data-b.
#
# Either way each matrix is a <figure class="accept-matrix" data-n="N" data-render="table|image"
# data-culprits="node:17 link:3-5">, the summary of what a test (or a reader) checks.

ACCEPT_VERSION = 1
ACCEPT_STATUS = {"ok": 0, "failed": 1, "timeout": 2}
ACCEPT_FIELD = {"bw_ab": "bw_a_to_b_gbps", "bw_ba": "bw_b_to_a_gbps", "bw_bidir": "bw_bidir_gbps",
                "p50": "lat_p50_us", "p99": "lat_p99_us"}
ACCEPT_TABLE_MAX_N = 64
ACCEPT_VERDICTS = ("pass", "flaky", "fail", "timeout", "unmeasured")
ACCEPT_CODE = {k: i for i, k in enumerate(ACCEPT_VERDICTS)}
ACCEPT_COLORS = {"pass": "#2ca02c", "flaky": "#ffbf00", "fail": "#d62728", "timeout": "#e6007e",
                 "unmeasured": "#e0e0e0"}
ACCEPT_VERDICT_TEXT = {"pass": "pass", "flaky": "flaky (passed on retest)", "fail": "fail",
                       "timeout": "fail: timed out", "unmeasured": "not measured"}
# Cells without a value in a value matrix: what happened to the pair's counting attempt.
ACCEPT_NOVALUE = {"failed": ("#d62728", "failed: no value"), "timeout": ("#e6007e", "timed out: no value"),
                  "unmeasured": ("#e0e0e0", "not measured")}


class AcceptAttempt:
    """One attempt of a pair, as report_json writes it (read by load_file's object hook, so that a
    1024-node report of 523 776 pairs does not stay in memory as dicts)."""
    __slots__ = ("status", "reason", "qps", "bw_ab", "bw_ba", "bw_bidir", "p50", "p99", "pmax", "lanes_ab",
                 "lanes_ba", "violations")

    def __init__(self, d):
        self.status = d.get("status")
        self.reason = d.get("reason", "")
        self.qps = d.get("qps")
        self.bw_ab = d.get("bw_a_to_b_gbps")
        self.bw_ba = d.get("bw_b_to_a_gbps")
        self.bw_bidir = d.get("bw_bidir_gbps")
        self.p50 = d.get("lat_p50_us")
        self.p99 = d.get("lat_p99_us")
        self.pmax = d.get("lat_max_us")
        self.lanes_ab = d.get("lanes_a_to_b_gbps") or None
        self.lanes_ba = d.get("lanes_b_to_a_gbps") or None
        self.violations = d.get("violations") or None


class AcceptPair:
    __slots__ = ("a", "b", "round", "verdict", "attempts")

    def __init__(self, d):
        self.a = d.get("a")
        self.b = d.get("b")
        self.round = d.get("round")
        self.verdict = d.get("verdict")
        self.attempts = d.get("attempts")

    @property
    def last(self):
        return self.attempts[-1]

    @property
    def category(self):
        """pass, flaky, fail, or timeout: failed, and the counting attempt timed out."""
        if self.verdict == "fail" and self.last.status == "timeout":
            return "timeout"
        return self.verdict


def json_hook(d):
    if "violations" in d and "status" in d and "bw_a_to_b_gbps" in d:
        return AcceptAttempt(d)
    if "attempts" in d and "verdict" in d and "a" in d and "b" in d:
        return AcceptPair(d)
    return d


def _is_index(v, n):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n


def import_numpy():
    try:
        import numpy
    except ImportError:
        import_matplotlib()  # re-runs with /usr/bin/python3, or says what to install
        import numpy
    return numpy


def _is_value(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


class AcceptFile:
    """A fabench-accept JSON report, checked: one InputError line naming the first bad field."""

    def __init__(self, path, doc):
        self.path = path
        self.name = os.path.basename(path)

        def bad(what):
            raise InputError(f"{path}: not a fabench-accept report ({what})")

        version = doc.get("fabench_accept")
        if version != ACCEPT_VERSION:
            raise InputError(f"{path}: fabench-accept report format {json.dumps(version)}; this {PROG} reads "
                             f"format {ACCEPT_VERSION}")
        nodes = doc.get("nodes")
        if not isinstance(nodes, list) or len(nodes) < 2 or not all(isinstance(x, dict) for x in nodes):
            bad("\"nodes\" is not a list of at least 2 node objects")
        self.n = n = len(nodes)
        self.names = [str(x.get("name") or "") for x in nodes]
        self.port_gbps = [x.get("port_gbps") if _is_value(x.get("port_gbps")) else None for x in nodes]
        pairs = doc.get("pairs")
        if not isinstance(pairs, list):
            bad("no \"pairs\" list")
        seen = set()
        for i, p in enumerate(pairs):
            where = f"pairs[{i}]"
            if not isinstance(p, AcceptPair):
                bad(f"{where} is not a pair with a, b, verdict and attempts")
            if not _is_index(p.a, n) or not _is_index(p.b, n) or p.a == p.b:
                bad(f"{where}: a and b must be two node indexes within 0..{n - 1} (got {p.a!r}, {p.b!r})")
            key = (min(p.a, p.b), max(p.a, p.b))
            if key in seen:
                bad(f"{where}: pair {p.a}-{p.b} given twice")
            seen.add(key)
            if p.verdict not in ("pass", "flaky", "fail"):
                bad(f"{where}.verdict must be pass, flaky or fail (got {json.dumps(p.verdict)})")
            if not isinstance(p.attempts, list) or not p.attempts or \
                    not all(isinstance(x, AcceptAttempt) for x in p.attempts):
                bad(f"{where}.attempts must be a non-empty list of attempts")
            for k, at in enumerate(p.attempts):
                if at.status not in ACCEPT_STATUS:
                    bad(f"{where}.attempts[{k}].status must be ok, failed or timeout (got {json.dumps(at.status)})")
        self.pairs = pairs
        # The counting attempts as arrays (one entry per pair), for the matrices of a large run.
        np = import_numpy()
        count = len(pairs)
        self.a = np.fromiter((p.a for p in pairs), dtype=np.int64, count=count)
        self.b = np.fromiter((p.b for p in pairs), dtype=np.int64, count=count)
        lasts = [p.attempts[-1] for p in pairs]
        self.category = np.fromiter((ACCEPT_CODE[p.category] for p in pairs), dtype=np.int8, count=count)
        self.status = np.fromiter((ACCEPT_STATUS[at.status] for at in lasts), dtype=np.int8, count=count)
        self.values = {}
        for field in ("bw_ab", "bw_ba", "bw_bidir", "p50", "p99"):
            vals = [getattr(at, field) for at in lasts]
            if not set(map(type, vals)) <= {float, int, type(None)}:
                i = next(i for i, v in enumerate(vals) if not _is_value(v))
                bad(f"pairs[{i}]: its last attempt's {ACCEPT_FIELD[field]} is neither a number nor null")
            arr = np.array(vals, dtype=np.float64)
            if np.isinf(arr).any():
                bad(f"pairs[{int(np.isinf(arr).argmax())}]: its last attempt's {ACCEPT_FIELD[field]} is infinite")
            self.values[field] = arr
        self.summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
        self.spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        self.fleet = doc.get("fleet") if isinstance(doc.get("fleet"), dict) else {}
        self.metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        culprits = doc.get("culprits", [])
        if not isinstance(culprits, list):
            bad("\"culprits\" is not a list")
        self.culprits = []
        for i, c in enumerate(culprits):
            ok_kind = isinstance(c, dict) and c.get("kind") in ("node", "link")
            want = 1 if ok_kind and c["kind"] == "node" else 2
            if not ok_kind or not isinstance(c.get("nodes"), list) or len(c["nodes"]) != want or \
                    not all(_is_index(x, n) for x in c["nodes"]):
                bad(f"culprits[{i}] must have kind node (one node) or link (two nodes), indexes within 0..{n - 1}")
            self.culprits.append(c)


def node_name(f, i):
    return f"{i} ({f.names[i]})" if f.names[i] else str(i)


def pair_name(f, a, b):
    both = f" ({f.names[a]}-{f.names[b]})" if f.names[a] or f.names[b] else ""
    return f"{a}-{b}{both}"


def culprit_token(c):
    return f"node:{c['nodes'][0]}" if c["kind"] == "node" else f"link:{c['nodes'][0]}-{c['nodes'][1]}"


class Matrix:
    """One N x N matrix of an acceptance report: what to draw and how each cell reads."""

    def __init__(self, mid, title, what, unit, fields, directed, lower_is_worse, ceiling=None):
        self.id = mid
        self.title = title
        self.what = what
        self.unit = unit
        self.fields = fields  # the attempt's fields for cell (a, b) and (b, a); None: the verdict matrix
        self.getter = None if fields is None else (lambda at, fwd: getattr(at, fields[0 if fwd else 1]))
        self.directed = directed
        self.lower_is_worse = lower_is_worse
        self.ceiling = ceiling
        self.render = "table"
        self.range = None  # (lo, hi) of the colour scale
        self.clipped = 0  # values above hi, drawn as hi
        self.kinds = {}  # cell kind -> count: value, failed, timeout, unmeasured (verdict matrix: verdicts)

    def cells(self, f):
        """(a, b, pair, value) of every measured cell: a pair fills (a, b) and (b, a)."""
        for p in f.pairs:
            at = p.last
            if self.getter is None:
                yield p.a, p.b, p, None
                yield p.b, p.a, p, None
            else:
                yield p.a, p.b, p, self.getter(at, True)
                yield p.b, p.a, p, self.getter(at, False)

    @staticmethod
    def kind(p, v):
        if v is not None:
            return "value"
        st = p.last.status
        return "failed" if st == "failed" else "timeout" if st == "timeout" else "unmeasured"

    def structure(self):
        d = {"id": self.id, "title": self.title, "render": self.render, "directed": self.directed,
             "cells": sum(self.kinds.values()), "kinds": self.kinds}
        if self.getter is not None:
            d["unit"] = self.unit
            d["range"] = [round(x, 6) for x in self.range] if self.range else None
            if self.clipped:
                d["above_range"] = self.clipped
        return d


class AcceptSection:
    def __init__(self, f, sid, table_max):
        self.file = f
        self.id = sid
        self.kind = "accept"
        self.title = f"Fabric acceptance (fabench-accept): {f.name}"
        n = f.n
        ports = [x for x in f.port_gbps if x]
        spec_rate = f.spec.get("port_gbps") if _is_value(f.spec.get("port_gbps")) else None
        rate = spec_rate or (max(ports) if ports else None)
        self.rate = rate
        self.matrices = [
            Matrix(f"{sid}-bw", "Bandwidth, one direction at a time: sender (row) → receiver (column)",
                   "bandwidth", "Gb/s", ("bw_ab", "bw_ba"), True, True, rate),
            Matrix(f"{sid}-bidir", "Bidirectional bandwidth (both directions at once, their sum)",
                   "bidirectional bandwidth", "Gb/s", ("bw_bidir", "bw_bidir"), False, True,
                   2 * rate if rate else None),
            Matrix(f"{sid}-lat-p50", "Latency p50 (one-way = RTT/2)", "latency p50", "µs",
                   ("p50", "p50"), False, False),
            Matrix(f"{sid}-lat-p99", "Latency p99 (one-way = RTT/2)", "latency p99", "µs",
                   ("p99", "p99"), False, False),
            Matrix(f"{sid}-verdict", "Verdicts (of the pair; the counting attempt is the last)", "verdict", "",
                   None, False, False),
        ]
        np = import_numpy()
        for m in self.matrices:
            m.render = "table" if n <= table_max else "image"
            counts = {}
            if m.fields is None:
                for k, code in ACCEPT_CODE.items():
                    counts[k] = 2 * int((f.category == code).sum())
                values = np.empty(0)
            else:
                both = np.concatenate([f.values[m.fields[0]], f.values[m.fields[1]]])
                status = np.concatenate([f.status, f.status])
                have = ~np.isnan(both)
                values = both[have]
                counts["value"] = int(have.sum())
                counts["failed"] = int((~have & (status == ACCEPT_STATUS["failed"])).sum())
                counts["timeout"] = int((~have & (status == ACCEPT_STATUS["timeout"])).sum())
                counts["unmeasured"] = int((~have & (status == ACCEPT_STATUS["ok"])).sum())
            counts["unmeasured"] = counts.get("unmeasured", 0) + n * n - 2 * len(f.pairs)
            order = ACCEPT_VERDICTS if m.fields is None else ("value", "failed", "timeout", "unmeasured")
            m.kinds = {k: counts[k] for k in order if counts.get(k)}
            if m.fields is not None and m.lower_is_worse:  # bandwidth: up to the link rate (or the best)
                m.range = (0.0, float(max(m.ceiling or 0.0, values.max() if values.size else 0.0)) or 1.0)
            elif m.fields is not None:  # latency: the fleet median mid-scale, twice it and above darkest
                med = float(np.median(values)) if values.size else 0.0
                m.range = (0.0, 2 * med if med > 0 else 1.0)
                m.clipped = int((values > m.range[1]).sum())
        cat = {k: [f.pairs[i] for i in np.flatnonzero(f.category == code)] for k, code in ACCEPT_CODE.items()}
        self.failed = cat.get("fail", []) + cat.get("timeout", [])
        self.failed.sort(key=lambda p: (min(p.a, p.b), max(p.a, p.b)))
        self.flaky = cat.get("flaky", [])
        self.tokens = " ".join(culprit_token(c) for c in f.culprits)
        s = f.summary
        self.verdict = s.get("verdict") if s.get("verdict") in ("pass", "fail") else \
            ("fail" if self.failed else "pass")
        self.counts = {"pass": len(cat.get("pass", [])), "flaky": len(self.flaky), "fail": len(self.failed)}
        self.notes = []
        md = f.metadata
        if md.get("synthetic"):
            self.notes.append("Synthetic: " + str(md.get("note") or "not a measurement") +
                              (f" (generator: {md['generator']})" if md.get("generator") else ""))
        if s.get("retest_pending"):
            self.notes.append(f"{s['retest_pending']} pair(s) still had a retest pending: they read fail")
        if self.counts["pass"] + self.counts["flaky"] + self.counts["fail"] != len(f.pairs):
            self.notes.append("summary counts differ from the pairs")  # cannot happen: categories cover all

    def reasons(self, p):
        """The counting attempt's violations, one line each (a failed status: its reason)."""
        at = p.last
        texts = [str(v.get("text", "")) for v in (at.violations or []) if isinstance(v, dict)]
        if not texts and at.status != "ok":
            texts = [f"{at.status}: {at.reason}"]
        return texts

    def structure(self):
        f = self.file
        d = {"id": self.id, "title": self.title, "kind": "accept", "file": f.name, "nodes": f.n,
             "pairs": len(f.pairs), "verdict": self.verdict, "counts": self.counts, "notes": self.notes,
             "culprits": [{"kind": c["kind"], "nodes": c["nodes"], "pairs": len(c.get("pairs") or []),
                           "evidence": str(c.get("evidence", ""))} for c in f.culprits],
             "matrices": [m.structure() for m in self.matrices], "plots": []}
        cut = 50
        d["failed"] = [{"pair": f"{p.a}-{p.b}", "category": p.category, "attempts": len(p.attempts),
                        "reasons": self.reasons(p)} for p in self.failed[:cut]]
        d["flaky"] = [{"pair": f"{p.a}-{p.b}", "attempts": len(p.attempts)} for p in self.flaky[:cut]]
        if len(self.failed) > cut or len(self.flaky) > cut:
            d["lists_cut_at"] = cut
        return d


