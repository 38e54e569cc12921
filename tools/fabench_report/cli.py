"""cli: fabench-report's command line: the arguments, what to write, the lines on stderr
(notes, the warning of a comparison across fabrics) and the exit status."""

import argparse
import json
import os
import sys

from .accept import ACCEPT_TABLE_MAX_N, AcceptFile
from .accept_html import accept_section_html
from .comparison import mismatch_text
from .load import RunFile, load_file
from .names import PROG, InputError
from .page import page
from .render import Renderer
from .report import Report
from .version import version


def write_text(path, text):
    try:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"{path}: cannot write ({e.strerror or e})") from None


def make_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise InputError(f"{path}: cannot create directory ({e.strerror or e})") from None


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="One offline HTML report (inline SVG plots, hover values) from fabench JSON "
        "(--benchmark_out=FILE --benchmark_out_format=json). Several runs of the same binary are overlaid "
        "and compared against the first.",
        epilog="Exit status: 0 written, 2 bad input or usage, 1 other errors.")
    ap.add_argument("-V", "--version", action="version", version=version(),
                    help="print fabench's version and exit")
    ap.add_argument("files", nargs="+", metavar="RUN.json", help="fabench JSON output files (Google Benchmark "
                    "JSON of fabench-lat/-bw/-coll/-kv/-ep, or fabench-accept's report)")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the HTML report here")
    ap.add_argument("--png", metavar="DIR", help="write each plot as DIR/PLOT_ID.png")
    ap.add_argument("--svg", metavar="DIR", help="write each plot as DIR/PLOT_ID.svg (with point tooltips)")
    ap.add_argument("--structure", metavar="FILE", help="write the plot structure (ids, titles, axis labels, "
                    "series, point counts and x values) as JSON ('-' for stdout)")
    ap.add_argument("--accept-table-max", metavar="N", type=int, default=ACCEPT_TABLE_MAX_N,
                    help="fabench-accept matrices of up to N nodes are HTML tables (a cell per pair and "
                    "direction); larger ones are images, one pixel per cell (default %(default)s)")
    a = ap.parse_args(argv)
    if a.accept_table_max < 0:
        ap.error("--accept-table-max must be >= 0")
    if not (a.output or a.png or a.svg or a.structure):
        ap.error("nothing to write: give -o FILE (and/or --png DIR, --svg DIR, --structure FILE)")
    return a


def main(argv):
    a = parse_args(argv)
    loaded = [load_file(p) for p in a.files]
    files = [f for f in loaded if isinstance(f, RunFile)]
    accepts = [f for f in loaded if isinstance(f, AcceptFile)]
    report = Report(files, accepts, a.accept_table_max)
    if a.structure:
        text = json.dumps(report.structure(), indent=1, ensure_ascii=False) + "\n"
        if a.structure == "-":
            sys.stdout.write(text)
        else:
            write_text(a.structure, text)
    if a.output or a.png or a.svg:
        r = Renderer()
        svgs = {p.id: r.svg(p) for p in report.plots}
        if a.svg:
            make_dir(a.svg)
            for pid, text in svgs.items():
                write_text(os.path.join(a.svg, f"{pid}.svg"),
                           "<?xml version='1.0' encoding='utf-8'?>\n" + text)
        if a.png:
            make_dir(a.png)
            for p in report.plots:
                try:
                    r.png(p, os.path.join(a.png, f"{p.id}.png"))
                except OSError as e:
                    raise InputError(f"{a.png}: cannot write {p.id}.png ({e.strerror or e})") from None
        if a.output:
            accept_parts = [accept_section_html(sec, r) for sec in report.accept]
            write_text(a.output, page(report, svgs, accept_parts))
        if report.accept and (a.png or a.svg):
            print(f"{PROG}: note: fabench-accept matrices are drawn in the HTML report only (-o)", file=sys.stderr)
    for f in files:
        bad = sum(1 for b in f.benches if b.errors)
        if bad:
            print(f"{PROG}: note: {f.path}: {bad} failed benchmark(s), shown as failed", file=sys.stderr)
    for sec, label, files, first, diffs in report.mismatches():
        print(f"{PROG}: warning: {sec.title}: {label} ({' + '.join(f.path for f in files)}) differs from "
              f"{first.label} ({' + '.join(f.path for f in first.files)}) in {mismatch_text(diffs)}: the comparison "
              "is across different fabrics", file=sys.stderr)
    if len(report.kinds) > 1:
        print(f"{PROG}: note: files from different binaries ({', '.join(dict.fromkeys(f.binary for f in files))})"
              ": one section each, compared only within a binary", file=sys.stderr)
    what = [x for x in (a.output, a.png and f"{a.png}/*.png", a.svg and f"{a.svg}/*.svg", a.structure) if x]
    extra = f", {sum(len(s.matrices) for s in report.accept)} acceptance matrices" if report.accept else ""
    print(f"{PROG}: wrote {', '.join(what)} ({len(report.plots)} plots{extra})", file=sys.stderr)
    for sec in report.accept:
        print(f"{PROG}: {sec.file.path}: fabench-accept, {sec.file.n} nodes: {sec.verdict.upper()}; culprits: "
              f"{sec.tokens or 'none'}", file=sys.stderr)
    return 0


def run():
    """main with the exit status of the docstring: one line on stderr, never a traceback
    (FABENCH_REPORT_DEBUG=1 shows it)."""
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # never a traceback for users
        if os.environ.get("FABENCH_REPORT_DEBUG"):
            raise
        print(f"{PROG}: error: internal: {type(e).__name__}: {e} (FABENCH_REPORT_DEBUG=1 shows where)",
              file=sys.stderr)
        sys.exit(1)
