"""names: the program's name and error type, and what fabench's benchmark names mean (the
name patterns of each binary and the labels built from their parts)."""

import re

PROG = "fabench-report"


class InputError(Exception):
    """Bad input or output path: one line, exit 2."""


LAT_RE = re.compile(r"^(?P<op>\w+)_lat/(?P<tr>[a-z]+)/(?P<size>\d+)(?P<opts>(/[^/]+)*)$")
BW_RE = re.compile(r"^(?P<op>\w+)_(?P<dir>bw|bibw)/(?P<tr>[a-z]+)/(?P<size>\d+)(?P<opts>(/[^/]+)*)$")
COLL_RE = re.compile(r"^(?P<coll>[a-z]+)/(?P<algo>[a-z]+)/(?P<dtype>[a-z0-9]+)/(?P<size>\d+)$")
# fabench-kv (kvbench/session.cpp): transfers, and --wr-sweep points (BYTES per WR).
KV_RE = re.compile(r"^kv/(?P<model>.+)/(?P<layout>contiguous|layer|block)/(?P<dir>push|pull)/isl(?P<isl>\d+)/"
                   r"tp(?P<ptp>\d+)-(?P<dtp>\d+)(?:/frag(?P<frag>[0-9.e-]+))?(?P<unmerged>\+unmerged)?"
                   r"(?:\+sge(?P<sge>\d+))?(?:\+b(?P<batch>\d+))?$")
WR_RE = re.compile(r"^wr/(?P<dir>push|pull)/(?P<size>\d+)B/sge(?P<sge>\d+)/list(?P<list>\d+)/sig(?P<sig>\d+)$")
# fabench-ep (epbench/session.cpp): ep/MODEL/MODE/DTYPE/tTOKENS/SKEW, and --reference's floor.
EP_RE = re.compile(r"^ep/(?P<model>[^/]+)/(?P<mode>normal|low-latency)/(?P<dtype>[a-z0-9]+)/t(?P<tokens>\d+)/"
                   r"(?P<skew>[^/]+)(?P<ref>/ref-write)?$")
# fabench-congest (congestbench/session.hpp): congest/TEST/PATTERN[-N:1].
CONGEST_RE = re.compile(r"^congest/(?P<test>latency|bandwidth|allreduce)/(?P<pattern>[a-z-]+?)(?:-(?P<ratio>\d+):1)?$")


def classify(binary, benches):
    """The family of a file: from its binary's name, else from its benchmarks' names."""
    if binary.startswith("fabench-"):
        return binary[len("fabench-"):]
    keys = [b.key for b in benches]
    for kind, rxs in (("lat", (LAT_RE,)), ("bw", (BW_RE,)), ("coll", (COLL_RE,)), ("kv", (KV_RE, WR_RE)),
                     ("ep", (EP_RE,)), ("congest", (CONGEST_RE,))):
        if keys and all(any(rx.match(k) for rx in rxs) for k in keys):
            return kind
    return "other"


def opts_text(opts):
    return opts.replace("/", " ").strip()


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def lat_what(m):
    return f"{m['op']} {m['tr'].upper()}{(' ' + opts_text(m['opts'])) if m['opts'] else ''}"


def bw_what(m):
    return (f"{m['op']} {m['tr'].upper()}{' bidirectional' if m['dir'] == 'bibw' else ''}"
            f"{(' ' + opts_text(m['opts'])) if m['opts'] else ''}")


# ---- fabench-kv

KV_LAYOUT_ORDER = {"contiguous": 0, "layer": 1, "block": 2}
KV_X_LABEL = "layout, fragmentation (fraction of pages moved)"


def kv_category(m):
    """The bar group of a transfer: its layout (and fragmentation when paged)."""
    return m["layout"] if m["frag"] is None else f"{m['layout']}, frag {m['frag']}"


def kv_variant(m):
    """The bar of a transfer within its group: direction, merge, SGEs."""
    return f"{m['dir']} {'unmerged' if m['unmerged'] else 'merged'}" + (f", {m['sge']} SGEs" if m["sge"] else "")


def kv_group(m):
    """What efficiency is measured within (fabench-kv's ceiling key, less the direction)."""
    return f"{m['model']}, ISL {m['isl']}, TP {m['ptp']}→{m['dtp']}" + (f", batch {m['batch']}" if m["batch"] else "")


def kv_categories(matches):
    ordered = sorted(matches, key=lambda m: (KV_LAYOUT_ORDER[m["layout"]], float(m["frag"] or 0)))
    return list(dict.fromkeys(kv_category(m) for m in ordered))


def wr_curve(m):
    return f"{m['dir']}, {m['sge']} SGE{'s' if m['sge'] != '1' else ''}, post list {m['list']}, signal 1/{m['sig']}"


# ---- fabench-ep

EP_X_LABEL = "tokens per rank and call, routing skew"

def ep_group(m):
    """What one set of plots shows: a model in one mode and dispatch type."""
    return f"{m['model']}, {m['mode']}, {m['dtype']}"


def ep_category(m):
    """The bar group of a benchmark: its tokens (and skew unless uniform)."""
    return f"{m['tokens']} tokens" + (f", {m['skew']}" if m["skew"] != "uniform" else "")


def ep_categories(matches):
    """Uniform first, then by skew; within each by tokens."""
    ordered = sorted(matches, key=lambda m: (m["skew"] != "uniform", m["skew"], int(m["tokens"])))
    return list(dict.fromkeys(ep_category(m) for m in ordered))
