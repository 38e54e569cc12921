#!/usr/bin/env python3
"""coll_rows.py: coll.sh's results.tsv rows (PAIR SOURCE ALGO COLL RANKS BYTES BUSBW WRONG,
tab-separated) from one run's output, on stdout.

  coll_rows.py mpi PAIR SOURCE FILE      mpi_coll's JSON lines (one object per size)
  coll_rows.py fabench PAIR RANKS FILE   fabench-coll's Google Benchmark JSON (log lines before
                                         it skipped); exit 3 when a benchmark failed (named on
                                         stderr), 2 when FILE is not such JSON
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "tools"))
from fabench_report import gbjson  # noqa: E402


def mpi_rows(pair, source, path):
    for line in open(path, encoding="utf-8", errors="replace"):
        if not line.startswith("{"):
            continue
        try:
            j = json.loads(line)
        except ValueError:  # a line cut short by the run's timeout
            continue
        if "busbw_GBps" in j:
            # rows by the size asked for (S is rounded down for all-to-all with odd rank counts)
            size = j.get("requested_bytes", j["bytes"])
            print(pair, source, "mpi", j["coll"], j["ranks"], size, j["busbw_GBps"], j["wrong"], sep="\t")
    return 0


def fabench_rows(pair, ranks, path):
    try:
        doc = gbjson.read(path, skip_leading=True)
    except gbjson.GBJsonError as e:
        print(f"coll.sh:   {e}", file=sys.stderr)
        return 2
    failures = []
    for b in gbjson.measured(doc, "coll.sh", failures):
        parts = b["name"].split("/")  # allreduce/ring/f32/4096[/...]
        size = next((int(x) for x in parts[3:] if x.isdigit()), None)
        if len(parts) < 4 or size is None or "busbw_GBps" not in b:
            continue
        print(pair, "fabench", parts[1], parts[0], ranks, size, b["busbw_GBps"], int(b.get("wrong", 0)), sep="\t")
    return 3 if failures else 0


def main(argv):
    if len(argv) == 4 and argv[0] == "mpi":
        return mpi_rows(*argv[1:])
    if len(argv) == 4 and argv[0] == "fabench":
        return fabench_rows(*argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
