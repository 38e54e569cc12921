#!/usr/bin/env python3
"""coll_table.py RESULTS HAVE_FABENCH MPI_LIST PAIRS: coll.sh's tables from its results.tsv rows
(coll_rows.py's): per collective and rank count, busbw per size, the median over the pairs with
the min..max spread, the ratios best fabench / MPI and against ib_write_bw (the link).
HAVE_FABENCH: 1 when fabench-coll ran; MPI_LIST: --mpi's order (the first is the reference);
PAIRS: the pair count, or what the medians are over."""
import collections, statistics, sys
path, have_fabench, mpi_list, pairs = sys.argv[1], sys.argv[2] == "1", sys.argv[3].split(","), sys.argv[4]
cells = collections.defaultdict(list)   # (coll, ranks, column, bytes) -> [busbw]
wrong = collections.defaultdict(int)
link = []
for line in open(path):
    pair, source, algo, coll, n, size, busbw, bad = line.rstrip("\n").split("\t")
    if source == "ib_write_bw":
        link.append(float(busbw)); continue
    col = source if source.startswith("mpi") else "fabench " + algo
    key = (coll, n, col, int(size))
    cells[key].append(float(busbw)); wrong[key] += int(bad)
def fmt(v): return "%.3g" % v if v >= 0.01 else "%.2g" % v
def med(xs): return statistics.median(xs)
def cell(key):
    xs = cells.get(key)
    if not xs: return "-"
    s = fmt(med(xs)) + (" [%s..%s]" % (fmt(min(xs)), fmt(max(xs))) if len(xs) > 1 else "")
    return s + (" **wrong %d**" % wrong[key] if wrong[key] else "")
link_med = med(link) if link else None
print()
over = "%s pair(s)" % pairs if pairs.isdigit() else pairs
print("busbw in GB/s (1e9 B/s), median over %s [min..max]; nccl-tests' busbw." % over)
if link:
    print("Link ceiling: ib_write_bw rxe0 -> rxe1, 64 MiB, %s GB/s [%s..%s] (%s Gb/s)."
          % (fmt(link_med), fmt(min(link)), fmt(max(link)), fmt(link_med * 8)))
else:
    print("Link ceiling: ib_write_bw gave no result.")
if not have_fabench:
    print("fabench-coll: not built, so only MPI and ib_write_bw are reported.")
groups = sorted({(k[0], k[1]) for k in cells}, key=lambda g: (g[0], int(g[1]) if g[1].isdigit() else 0))
for coll, n in groups:
    keys = [k for k in cells if k[0] == coll and k[1] == n]
    present = {k[2] for k in keys}
    mpis = [c for c in ("mpi-" + t for t in mpi_list) if c in present]  # --mpi's order: the first is the reference
    fabs = sorted(c for c in present if c.startswith("fabench"))
    cols = mpis + fabs
    ref = next((c for c in ("fabench ring", "fabench pairwise") if c in fabs), fabs[0] if fabs else None)
    head = ["bytes"] + [c.replace("mpi-", "MPI ") for c in cols]
    if fabs and mpis: head.append("best fabench / %s" % mpis[0].replace("mpi-", "MPI "))
    if ref and link: head.append("%s / ib_write_bw" % ref.replace("fabench ", ""))
    if mpis and link: head.append("%s / ib_write_bw" % mpis[0].replace("mpi-", "MPI "))
    print("\n### %s, %s ranks\n" % (coll, n))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for size in sorted({k[3] for k in keys}):
        get = lambda c: cells.get((coll, n, c, size))
        row = [str(size)] + [cell((coll, n, c, size)) for c in cols]
        if fabs and mpis:
            best = max(((med(get(c)), c) for c in fabs if get(c)), default=None)
            m = get(mpis[0])
            row.append("%.3gx (%s)" % (best[0] / med(m), best[1].replace("fabench ", "")) if best and m else "-")
        if ref and link:
            row.append("%.3g" % (med(get(ref)) / link_med) if get(ref) else "-")
        if mpis and link:
            row.append("%.3g" % (med(get(mpis[0])) / link_med) if get(mpis[0]) else "-")
        print("| " + " | ".join(row) + " |")
