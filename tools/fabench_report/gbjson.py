"""gbjson: the one reader of Google Benchmark JSON (--benchmark_out_format=json, or
--benchmark_format=json on stdout) in fabench's Python: fabench-report, bench/compare/*.py,
test/rxe/check_bench_json.py and the tests read through it. Standard library only, so that
the test bed's python3 runs it.

  doc = read(path)               the document, checked: a "benchmarks" list of named entries
                                 (and a "context" object, {} where absent); GBJsonError else
  iterations(doc)                the iteration entries (the runs, not the aggregates)
  failed(b), error(b)            whether an entry failed (SkipWithError) and its message
  benchmarks(doc)                one Benchmark per fabench benchmark: counters the median
                                 over its repetitions (or its median aggregate), its errors

  python3 -m fabench_report.gbjson [--counter K]... FILE|-
                                 one line per iteration entry: its name and the counters K
                                 (all numeric ones when no --counter), tab-separated
"""

import json
import re
import statistics
import sys


class GBJsonError(ValueError):
    """Not a readable Google Benchmark JSON document: one line, naming the file."""


# Google Benchmark appends these to a benchmark's name; fabench's own name is what is left
# (write_lat/rc/64, allreduce/ring/f32/4096).
_GB_SUFFIX = re.compile(r"^(iterations|min_time|min_warmup_time|repeats|threads):|"
                        r"^(manual_time|real_time|process_time)$")

# Fields of an entry that are Google Benchmark's own, not counters.
_NOT_COUNTERS = {
    "name", "run_name", "run_type", "family_index", "per_family_instance_index", "repetitions",
    "repetition_index", "threads", "time_unit", "label", "error_occurred", "error_message",
    "aggregate_name", "aggregate_unit", "big_o", "rms",
}


def parse_text(path, text, object_hook=None, skip_leading=False):
    """The JSON document in text (path names it in errors). skip_leading: text before the first
    '{' (log lines of a run that printed JSON on stdout) is skipped."""
    if skip_leading and "{" in text:
        text = text[text.index("{"):]
    if not text.strip():
        raise GBJsonError(f"{path}: not JSON (empty file)")
    try:
        return json.loads(text, object_hook=object_hook)
    except json.JSONDecodeError as e:
        raise GBJsonError(f"{path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise GBJsonError(f"{path}: not JSON (nested too deeply)") from None


def read_json(path, object_hook=None, skip_leading=False):
    """Any JSON document from path ('-': stdin), with one-line errors (GBJsonError)."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except OSError as e:
        raise GBJsonError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GBJsonError(f"{path}: not JSON (not UTF-8 text)") from None
    del raw  # a fabench-accept report of 1024 nodes is 200 MB: not twice
    return parse_text(path, text, object_hook, skip_leading)


def check(path, doc):
    """doc if it is Google Benchmark output ("context" defaults to {}), else GBJsonError."""
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or \
            not isinstance(doc.get("context", {}), dict):
        raise GBJsonError(f"{path}: not Google Benchmark output (no \"benchmarks\" list)")
    doc.setdefault("context", {})
    for i, b in enumerate(doc["benchmarks"]):
        if not isinstance(b, dict) or not isinstance(b.get("name"), str):
            raise GBJsonError(f"{path}: benchmark #{i + 1} has no name")
    return doc


def read(path, skip_leading=False):
    """A Google Benchmark JSON document from path, checked (GBJsonError otherwise)."""
    return check(path, read_json(path, skip_leading=skip_leading))


def base_name(name):
    """fabench's name of a benchmark: Google Benchmark's suffixes removed."""
    return "/".join(p for p in name.split("/") if not _GB_SUFFIX.search(p))


def is_aggregate(b):
    return b.get("run_type", "iteration") == "aggregate"


def iterations(doc):
    """The entries of the runs themselves (an entry without run_type is one)."""
    return [b for b in doc["benchmarks"] if not is_aggregate(b)]


def failed(b):
    return bool(b.get("error_occurred"))


def error(b):
    return str(b.get("error_message") or "failed (no message)")


def measured(doc, prog, failures):
    """The runs that measured: each failed one is printed to stderr as "PROG:   NAME: ERROR"
    and appended to `failures` instead."""
    for b in iterations(doc):
        if failed(b):
            failures.append(b["name"])
            print(f"{prog}:   {b['name']}: {error(b)}", file=sys.stderr)
            continue
        yield b


def counters(b):
    """The numeric fields of an entry that are not Google Benchmark's own: its counters (and
    iterations, real_time, cpu_time)."""
    return {k: float(v) for k, v in b.items()
            if k not in _NOT_COUNTERS and not isinstance(v, bool) and isinstance(v, (int, float))}


class Benchmark:
    """One fabench benchmark of a document: its counters (median over the repetitions that
    succeeded), its label, the error messages of those that failed."""

    def __init__(self, key):
        self.key = key
        self.counters = {}
        self.label = ""
        self.errors = []
        self.ok_reps = 0

    @property
    def failed(self):
        return self.ok_reps == 0

    @property
    def error(self):
        return self.errors[0] if self.errors else ""


def benchmarks(doc):
    """[Benchmark] in order of first appearance, keyed by base_name. Where a benchmark has only
    aggregates (--benchmark_report_aggregates_only), its median (or mean) aggregate stands in."""
    iters, aggs = {}, {}
    for b in doc["benchmarks"]:
        key = base_name(b.get("run_name", b["name"]))
        if is_aggregate(b):
            aggs.setdefault(key, {})[b.get("aggregate_name", "")] = b
        else:
            iters.setdefault(key, []).append(b)
    out = []
    for key in dict.fromkeys(list(iters) + list(aggs)):
        bench = Benchmark(key)
        reps = iters.get(key)
        if not reps:
            a = aggs[key]
            reps = [a.get("median") or a.get("mean") or next(iter(a.values()))]
        good = []
        for r in reps:
            if failed(r):
                bench.errors.append(error(r))
            else:
                good.append(r)
            if r.get("label") and not bench.label:
                bench.label = str(r["label"])
        bench.ok_reps = len(good)
        fields = {}
        for r in good:
            for k, v in counters(r).items():
                fields.setdefault(k, []).append(v)
        bench.counters = {k: statistics.median(v) for k, v in fields.items()}
        out.append(bench)
    return out


def main(argv):
    want, args = [], list(argv)
    while len(args) > 1 and args[0] == "--counter":
        want.append(args[1])
        args = args[2:]
    if len(args) != 1:
        print("usage: python3 -m fabench_report.gbjson [--counter K]... FILE|-", file=sys.stderr)
        return 2
    try:
        doc = read(args[0], skip_leading=True)
    except GBJsonError as e:
        print(f"gbjson: error: {e}", file=sys.stderr)
        return 2
    status = 0
    for b in iterations(doc):
        if failed(b):
            print(f"gbjson: {b['name']}: {error(b)}", file=sys.stderr)
            status = 1
            continue
        c = counters(b)
        keys = want or sorted(c)
        if any(k not in c for k in keys):
            print(f"gbjson: {b['name']}: no counter {', '.join(k for k in keys if k not in c)}", file=sys.stderr)
            status = 1
            continue
        print("\t".join([b["name"]] + [f"{c[k]:g}" for k in keys]))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
