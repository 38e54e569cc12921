#!/usr/bin/env python3
"""bench/compare/compare.py: the verdicts from the pair ratios' 95 % interval,
on made-up raw results in perftest's and fabench's own formats.

  test_compare.py verdicts     the table and summary.json
  test_compare.py decided      --decided's exit status (perftest.sh --max-pairs)
  test_compare.py boots        --boots: each boot's geometric mean is one sample
  test_compare.py means        "mean": every sample of both tools (perftest's -U list), else mean/t_avg
  test_compare.py counters     the event-counter table from perftest.sh's .ctr files
  test_compare.py rotate       bench/investigations/rotate_summary.py: per-round ratios and pooled percentiles
  test_compare.py rotate_boots rotate_summary.py --boots: a rotation across boots
  test_compare.py segments     bench/investigations/segments.py: a traced round trip (UD 2 B, RC 4 KiB) split
                               into its parts
  test_compare.py callgrind    callgrind_summary.py: per-iteration instructions, sorting apart
  test_compare.py coll         coll.sh's coll_rows.py (mpi_coll lines, fabench-coll JSON after log lines,
                               a failed benchmark) and coll_table.py (medians, ratios to MPI and the link)
  test_compare.py kv           kv.sh's kv_tables.py: the efficiency table and the WR-rate pairs
  test_compare.py ep           ep.sh's ep_table.py: rows from fabench-ep, mpi_ep and fabench-coll
                               output, the goals' tables (per-pair ratios), a failed benchmark
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "..", "bench", "compare", "compare.py")
ROTATE_SUMMARY = os.path.join(HERE, "..", "..", "bench", "investigations", "rotate_summary.py")
SEGMENTS = os.path.join(HERE, "..", "..", "bench", "investigations", "segments.py")
CALLGRIND_SUMMARY = os.path.join(HERE, "..", "..", "bench", "compare", "callgrind_summary.py")
COLL_ROWS = os.path.join(HERE, "..", "..", "bench", "compare", "coll_rows.py")
COLL_TABLE = os.path.join(HERE, "..", "..", "bench", "compare", "coll_table.py")
KV_TABLES = os.path.join(HERE, "..", "..", "bench", "compare", "kv_tables.py")
EP_TABLE = os.path.join(HERE, "..", "..", "bench", "compare", "ep_table.py")
FIXTURES = os.path.join(HERE, "..", "report", "fixtures")

LAT_HEADER = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
              "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n")
BW_HEADER = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"


def write_pair(raw, test, kind, p, perftest, fabench):
    with open(os.path.join(raw, f"{test}.{p}.P.txt"), "w", encoding="utf-8") as f:
        if kind == "lat":
            f.write(LAT_HEADER + f" 2       2000          1.00          9.00      {perftest:.3f}    "
                    f"{perftest * 1.1:.3f}       0.10       5.00      8.00\n")
        else:
            f.write(BW_HEADER + f" 65536      2000           0.50               {perftest * 0.52:.4f}"
                    f"             {perftest:.6f}\n")
    bench = {"name": test, "run_type": "iteration"}
    if kind == "lat":
        bench.update(p50_us=fabench, mean_us=fabench * 1.1, min_us=1.0, p99_us=5.0)
    else:
        bench.update(Mmsgps=fabench, Gbps=fabench * 0.52)
    with open(os.path.join(raw, f"{test}.{p}.F.json"), "w", encoding="utf-8") as f:
        json.dump({"benchmarks": [bench]}, f)


# test -> (kind, [(perftest, fabench) per pair], expected verdict of the first metric)
CASES = {
    # fabench 10 % faster in every pair, little spread
    "lat_ahead": ("lat", [(50, 45), (60, 54.5), (55, 49.3), (52, 47), (58, 52)], "fabench ahead"),
    # 10 % slower in every pair
    "lat_behind": ("lat", [(50, 55), (60, 66.5), (55, 60.3), (52, 57), (58, 64)], "fabench BEHIND"),
    # within +-2 %, both ways: the interval holds 1 and stays inside 5 %
    "lat_parity": ("lat", [(50, 50.5), (60, 59.4), (55, 55.8), (52, 51.6), (58, 58.4), (54, 53.8)], "at parity"),
    # +-30 %, both ways: the interval holds 1 and reaches past 5 %
    "lat_noisy": ("lat", [(50, 65), (60, 45), (55, 70), (52, 40), (58, 60)], "undecided"),
    # rates: higher is better
    "bw_ahead": ("bw", [(1.0, 1.2), (1.1, 1.3), (0.9, 1.1), (1.0, 1.19), (1.05, 1.24)], "fabench ahead"),
    "bw_behind": ("bw", [(1.0, 0.8), (1.1, 0.9), (0.9, 0.7), (1.0, 0.81), (1.05, 0.85)], "fabench BEHIND"),
    "two_pairs": ("lat", [(50, 45), (60, 54)], "undecided (fewer than 3 pairs)"),
}


def make_out(tmp):
    raw = os.path.join(tmp, "raw")
    os.makedirs(raw)
    with open(os.path.join(tmp, "tests.txt"), "w", encoding="utf-8") as f:
        for test, (kind, pairs, _) in CASES.items():
            f.write(f"{test}|{kind}|ib_x -s 2|fabench-x -s 2\n")
            for p, (pt, fb) in enumerate(pairs, 1):
                write_pair(raw, test, kind, p, pt, fb)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def verdicts(tmp):
    run = subprocess.run([sys.executable, COMPARE, tmp], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"compare.py exited {run.returncode}: {run.stderr}")
    summary = json.load(open(os.path.join(tmp, "summary.json"), encoding="utf-8"))
    for test, (kind, pairs, want) in CASES.items():
        metric = "median" if kind == "lat" else "Mmsgps"
        got = summary[test]["metrics"][metric]
        if got["verdict"] != want:
            fail(f"{test}: verdict '{got['verdict']}', expected '{want}' (ci {got['ci95']})")
        if len(got["pair_ratios"]) != len(pairs):
            fail(f"{test}: {len(got['pair_ratios'])} pair ratios, expected {len(pairs)}")
        if got["ci95"] is not None and not got["ci95"][0] <= got["geomean_ratio"] <= got["ci95"][1]:
            fail(f"{test}: geometric mean {got['geomean_ratio']} outside its interval {got['ci95']}")
        row = [line for line in run.stdout.splitlines() if line.startswith(f"| {test} | {metric} |")]
        if len(row) != 1 or not row[0].rstrip().endswith(f"| {want} |"):
            fail(f"{test}: table row {row} does not end with the verdict '{want}'")
    # A tighter margin turns parity into undecided.
    run = subprocess.run([sys.executable, COMPARE, "--margin", "0.005", tmp], capture_output=True, text=True,
                         check=False)
    if "| lat_parity | median |" not in run.stdout or "undecided" not in [
            c.strip() for c in next(line for line in run.stdout.splitlines()
                                    if line.startswith("| lat_parity | median |")).split("|")]:
        fail(f"--margin 0.005 kept lat_parity at parity:\n{run.stdout}")
    print("ok: verdicts of", ", ".join(CASES))


def decided(tmp):
    for test, (_, _, want) in CASES.items():
        run = subprocess.run([sys.executable, COMPARE, "--margin", "0.05", "--decided", tmp, test],
                             capture_output=True, text=True, check=False)
        expect = 1 if want.startswith("undecided") else 0
        if run.returncode != expect:
            fail(f"--decided {test}: exit {run.returncode}, expected {expect} ({run.stdout.strip()})")
    run = subprocess.run([sys.executable, COMPARE, "--decided", tmp, "no_such_test"], capture_output=True,
                         text=True, check=False)
    if run.returncode == 0 or "no test no_such_test" not in run.stderr:
        fail(f"--decided of an unknown test: exit {run.returncode}, stderr {run.stderr!r}")
    print("ok: --decided exit statuses")


def boots(tmp):
    # test -> per boot the pair ratios (None: the boot lacks the test), expected verdict
    cases = {
        "steady": ([[0.9, 0.91, 0.89], [0.92, 0.9, 0.91], [0.9, 0.9, 0.92]], "fabench ahead"),
        # every boot's own pairs agree, but the boots do not: no verdict across them
        "moving": ([[1.1, 1.1, 1.11], [0.9, 0.91, 0.9], [1.05, 1.04, 1.05]], "undecided"),
        "two_boots": ([[1.0, 1.0, 1.0], [1.0, 1.01, 0.99], None], "undecided (fewer than 3 boots)"),
    }
    outs = []
    for b in range(3):
        out = os.path.join(tmp, f"boot{b}")
        os.makedirs(out)
        summary = {name: {"kind": "lat", "metrics": {"median": {"pair_ratios": per[b]}}}
                   for name, (per, _) in cases.items() if per[b] is not None}
        with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f)
        outs.append(out)
    run = subprocess.run([sys.executable, COMPARE, "--boots", *outs], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"--boots exited {run.returncode}: {run.stderr}")
    for name, (per, want) in cases.items():
        row = [line for line in run.stdout.splitlines() if line.startswith(f"| {name} | median |")]
        if len(row) != 1 or not row[0].rstrip().endswith(f"| {want} |"):
            fail(f"--boots {name}: row {row}, expected the verdict '{want}'")
        if f"| {sum(p is not None for p in per)} |" not in row[0]:
            fail(f"--boots {name}: row {row} has the wrong boot count")
    run = subprocess.run([sys.executable, COMPARE, "--boots", outs[0], os.path.join(tmp, "nowhere")],
                         capture_output=True, text=True, check=False)
    if run.returncode == 0 or "nowhere/summary.json" not in run.stderr:
        fail(f"--boots with a missing summary.json: exit {run.returncode}, stderr {run.stderr!r}")
    print("ok: --boots verdicts of", ", ".join(cases))


def counters(tmp):
    raw = os.path.join(tmp, "raw")
    # lat_ahead: perftest's runs retransmit once in two of five, fabench's three
    # times in every run; traffic counters stay out of the table; bw_ahead has
    # files for fabench only (perftest's cells then say "-", not 0).
    for p in range(1, 6):
        with open(os.path.join(raw, f"lat_ahead.{p}.P.ctr"), "w", encoding="utf-8") as f:
            f.write("rxe0.sent_pkts 4000\n" + ("rxe0.completer_retry_err 1\n" if p <= 2 else ""))
        with open(os.path.join(raw, f"lat_ahead.{p}.F.ctr"), "w", encoding="utf-8") as f:
            f.write("rxe0.sent_pkts 4000\nrxe0.completer_retry_err 3\nrxe1.duplicate_request 3\n")
        with open(os.path.join(raw, f"bw_ahead.{p}.F.ctr"), "w", encoding="utf-8") as f:
            f.write("rxe1.send_rnr_err 2\n")
    run = subprocess.run([sys.executable, COMPARE, tmp], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"compare.py exited {run.returncode}: {run.stderr}")
    want = ["| lat_ahead | rxe0.completer_retry_err | 0.40 | 3.00 |",
            "| lat_ahead | rxe1.duplicate_request | 0.00 | 3.00 |",
            "| bw_ahead | rxe1.send_rnr_err | - | 2.00 |"]
    for row in want:
        if row not in run.stdout.splitlines():
            fail(f"counter row '{row}' missing from:\n{run.stdout}")
    if "sent_pkts" in run.stdout:
        fail("a traffic counter (sent_pkts) is in the event-counter table")
    summary = json.load(open(os.path.join(tmp, "summary.json"), encoding="utf-8"))
    c = summary["lat_ahead"]["counters"]
    if c["perftest"]["runs"] != 5 or c["fabench"]["per_run"].get("rxe0.completer_retry_err") != 3.0:
        fail(f"summary.json counters of lat_ahead: {c}")
    if "counters" in summary["lat_behind"]:
        fail("lat_behind has no counter files, yet summary.json has counters for it")
    # Counter files in which only traffic moved: one line says so, no table.
    for p in range(1, 6):
        for tool in ("P", "F"):
            for test in ("lat_ahead", "bw_ahead"):
                with open(os.path.join(raw, f"{test}.{p}.{tool}.ctr"), "w", encoding="utf-8") as f:
                    f.write("rxe0.sent_pkts 4000\n")
    run = subprocess.run([sys.executable, COMPARE, tmp], capture_output=True, text=True, check=False)
    if "| test | device.counter |" in run.stdout or "none moved" not in run.stdout:
        fail(f"only traffic counters moved, yet no 'none moved' line or a table:\n{run.stdout}")
    print("ok: event counters per run, both tools")


def write_rotation(out, specs, transforms, rounds=6):
    """A rotate.sh OUT (setup.txt, raw/rR.vJ.txt with every sample, -U): round r's base
    samples are 50+r .. 149+r, each twice; variant j's are transforms[j] of them."""
    raw = os.path.join(out, "raw")
    os.makedirs(raw)
    with open(os.path.join(out, "setup.txt"), "w", encoding="utf-8") as f:
        f.write("test: ud_send_lat_2\n" + "".join(f"variant {j}: {v}\n" for j, v in enumerate(specs)))
    for r in range(rounds):
        base = [50.0 + r + (i % 100) for i in range(200)]
        for j, tf in enumerate(transforms):
            with open(os.path.join(raw, f"r{r}.v{j}.txt"), "w", encoding="utf-8") as f:
                f.write(LAT_HEADER + "#, usec\n")
                f.writelines(f"{i + 1}, {tf(x):g}\n" for i, x in enumerate(base))
                f.write("-" * 40 + "\n")


def rotate(tmp):
    # rotate.sh's layout: setup.txt names the variants, raw/rR.vJ.txt holds a
    # perftest-layout report with every sample (-U). Variant 1 is variant 0
    # plus 5 us on every sample (a shift of the whole distribution, the floor
    # included), variant 2 the same samples as variant 0.
    out = os.path.join(tmp, "rotate")
    raw = os.path.join(out, "raw")
    write_rotation(out, ["perftest", "fabench", "fabench-once"], [lambda x: x, lambda x: x + 5.0, lambda x: x])
    run = subprocess.run([sys.executable, ROTATE_SUMMARY, out], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"rotate_summary.py failed: {run.stderr}")
    print(run.stdout)
    # The ratio tables in order: the medians', the 5th percentiles', the means of every
    # sample, the means without each run's 2 largest samples (perftest's t_avg).
    tables, cur = [], None
    for line in run.stdout.splitlines():
        if line.count("|") != 6:
            cur = None
            continue
        if cur is None:
            cur = {}
            tables.append(cur)
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if ":" in cells[0]:
            cur[cells[0]] = cells[1:]
    if len(tables) != 4:
        fail(f"want four ratio tables (median, 5th percentile, two means), got {len(tables)}")
    # Run medians 99.5+r (variant 1: 104.5+r), over the six rounds 102.0 / 107.0; the runs'
    # 5th percentiles 55+r (60+r), over the rounds 57.5 / 62.5; the runs' means of every
    # sample 99.5+r, 102.0 / 107.0; without the two largest (149+r twice) 99+r, 101.5 / 106.5.
    for got, ref, shifted in ((tables[0], "102.0", "107.0"), (tables[1], "57.5", "62.5"),
                              (tables[2], "102.0", "107.0"), (tables[3], "101.5", "106.5")):
        want = {"0: perftest": ["6", ref, "reference"], "1: fabench": ["6", shifted], "2: fabench-once": ["6", ref]}
        for name, cells in want.items():
            if got.get(name, [])[:len(cells)] != cells:
                fail(f"ratio row {name}: {got.get(name)}, want {cells}")
        if not got["1: fabench"][3].startswith("fabench BEHIND"):
            fail(f"a 5 us shift in every round is not BEHIND: {got['1: fabench']}")
        if not got["2: fabench-once"][2].startswith("1.000 [1.000..1.000]") or got["2: fabench-once"][3] != "at parity":
            fail(f"identical samples are not at parity: {got['2: fabench-once']}")
    # Pooled: 1200 samples per variant, every percentile 5 us apart.
    pooled = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
              for line in run.stdout.splitlines() if line.count("|") == 14}
    p0, p1 = pooled.get("0: perftest"), pooled.get("1: fabench")
    if not p0 or not p1 or p0[0] != "1200" or p1[0] != "1200" or len(p0) != 12:
        fail(f"pooled rows (samples, p1..p99, p99.9, max, mean): {p0} {p1}")
    if p0[9:] != ["154.0", "154.0", "102.0"]:  # p99.9 and max 149+5, mean of 99.5+r over r = 0..5
        fail(f"pooled p99.9, max, mean: {p0[9:]}, want 154.0, 154.0, 102.0")
    for a, b in zip(p0[1:], p1[1:]):
        if abs(float(b) - float(a) - 5.0) > 1e-6:
            fail(f"pooled percentiles not shifted by 5 us: {p0} {p1}")
    # A perftest run whose CPU-frequency estimate failed prints "inf" for every sample: that
    # run is left out (its round's ratios too) and named; the other five rounds decide.
    with open(os.path.join(raw, "r3.v0.txt"), "w", encoding="utf-8") as f:
        f.write(LAT_HEADER + "#, usec\n" + "".join(f"{i + 1}, inf\n" for i in range(200)) + "-" * 40 + "\n")
    run = subprocess.run([sys.executable, ROTATE_SUMMARY, out], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"rotate_summary.py failed with one run's samples inf: {run.stderr}")
    medians = {}  # the first ratio table's rows: runs, median over the runs, ratio, verdict
    for line in run.stdout.splitlines():
        if line.count("|") != 6:
            if medians:
                break
            continue
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if ":" in cells[0]:
            medians[cells[0]] = cells[1:]
    if medians.get("0: perftest", [""])[0] != "5" or not medians.get("1: fabench", [""] * 4)[3].startswith(
            "fabench BEHIND"):
        fail(f"with one perftest run left out, want 5 perftest runs and the shift still BEHIND: {medians}")
    pooled = {line.split("|")[1].strip(): line.split("|")[2].strip()
              for line in run.stdout.splitlines() if line.count("|") == 14}
    if pooled.get("0: perftest") != "1000" or pooled.get("1: fabench") != "1200":
        fail(f"pooled samples with one perftest run left out: {pooled}, want 1000 / 1200")
    if "r3.v0 (perftest)" not in run.stdout:
        fail(f"the run left out is not named: {run.stdout}")
    # A report without samples is an error, not an empty row.
    with open(os.path.join(raw, "r0.v2.txt"), "w", encoding="utf-8") as f:
        f.write(LAT_HEADER)
    run = subprocess.run([sys.executable, ROTATE_SUMMARY, out], capture_output=True, text=True, check=False)
    if run.returncode == 0 or "no samples" not in run.stderr:
        fail(f"a report without samples was accepted: rc {run.returncode}, {run.stderr}")


def write_trace(path, parts, cycles=400, rate=2000, rc=False, switches=0):
    """A rotate.sh --trace record: `parts` (us) = to_srv, srv_rx, srv_user, sys, to_cli, cli_rx, cli_user;
    both system calls last `sys`. `rate` TSC ticks per us. Other writes, packets and the send
    completions are there too, as in a real trace: for UD (2-byte sends, 56 B packets) inside each
    system call; for RC (4 KiB sends, 4140 B packets) with the peer's 48-byte ACK, which reaches
    each end shortly before the peer's message. `switches`: task switches on CPU 1 per round trip."""
    to_srv, srv_rx, srv_user, sys_us, to_cli, cli_rx, cli_user = parts
    packet = 4140 if rc else 56
    lines, t = [], 1_000_000.0
    first = t - 500
    def ev(cpu, us, text):
        lines.append(f"     fabench-lat-{200 + cpu}     [{cpu:03d}] .....  {int(round(us * rate))}: {text}\n")
    def send_completion(cpu, us):
        if rc:  # the ACK and the completion it brings, before the message
            ev(cpu, us - 2, f"netif_receive_skb: dev=veth{cpu} skbaddr=00000000abcdbeef len=48")
            ev(cpu, us - 1.5, "fabench_cqpost: (rxe_cq_post+0x0/0x190 [rdma_rxe])")
    ev(0, first, "tracing_mark_write: fabench-mark 7000000000")
    for _ in range(cycles):
        w1 = t + to_srv + srv_rx + srv_user
        r0 = w1 + to_cli
        ev(0, t, "sys_write(fd: 3, buf: 7ffc0000, count: 20)")
        if not rc:
            ev(0, t + sys_us * 0.9, "fabench_cqpost: (rxe_cq_post+0x0/0x190 [rdma_rxe])")
        ev(0, t + sys_us, "sys_write -> 0x20")
        send_completion(1, t + to_srv)
        ev(1, t + to_srv, f"netif_receive_skb: dev=veth1 skbaddr=00000000deadbeef len={packet}")
        ev(1, t + to_srv + 1, "netif_receive_skb: dev=veth1 skbaddr=00000000feedbeef len=52")  # control plane
        ev(1, t + to_srv + srv_rx, "fabench_cqpost: (rxe_cq_post+0x0/0x190 [rdma_rxe])")
        ev(1, w1, "sys_write(fd: 3, buf: 7ffc0000, count: 20)")
        ev(1, w1 + 0.5, "sys_write(fd: 1, buf: 7ffc0000, count: 10)")  # not a doorbell
        if not rc:
            ev(1, w1 + sys_us * 0.9, "fabench_cqpost: (rxe_cq_post+0x0/0x190 [rdma_rxe])")
        ev(1, w1 + sys_us, "sys_write -> 0x20")
        for k in range(switches):
            ev(1, w1 + sys_us + 0.1 * (k + 1), "sched_switch: prev_comm=fabench-lat prev_pid=201 prev_prio=120 "
               "prev_state=R ==> next_comm=ksoftirqd/1 next_pid=20 next_prio=120")
        send_completion(0, r0)
        ev(0, r0, f"netif_receive_skb: dev=veth0 skbaddr=00000000deadbeef len={packet}")
        ev(0, r0 + cli_rx, "fabench_cqpost: (rxe_cq_post+0x0/0x190 [rdma_rxe])")
        t = r0 + cli_rx + cli_user
    ev(0, t + 500, f"tracing_mark_write: fabench-mark {7000000000 + int(round((t + 500 - first) * 1000))}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("# tracer: nop\n#\n")
        f.writelines(lines)


def segments(tmp):
    for test, rc in (("ud_send_lat_2", False), ("send_lat_4K", True)):
        out = os.path.join(tmp, f"seg-{test}")
        raw = os.path.join(out, "raw")
        os.makedirs(raw)
        with open(os.path.join(out, "setup.txt"), "w", encoding="utf-8") as f:
            f.write(f"test: {test}\nvariant 0: perftest\nvariant 1: fabench-once\n")
        # Variant 1: 1 us more in the server's user space, 2 us more in the client's.
        for r in range(2):
            write_trace(os.path.join(raw, f"r{r}.v0.trace"), (30, 15, 8, 40, 30, 15, 8), rc=rc)
            write_trace(os.path.join(raw, f"r{r}.v1.trace"), (30, 15, 9, 40, 30, 15, 10), rate=2600, rc=rc,
                        switches=2)
        run = subprocess.run([sys.executable, SEGMENTS, out], capture_output=True, text=True, check=False)
        if run.returncode != 0:
            fail(f"segments.py failed on {test}: {run.stderr}")
        print(run.stdout)
        rows = [[c.strip() for c in line.split("|")[1:-1]] for line in run.stdout.splitlines() if line.count("|") == 14]
        want = {"0: perftest": ["40.00", "30.00", "15.00", "8.00", "40.00", "30.00", "15.00", "8.00", "106.00"],
                "1: fabench-once": ["40.00", "30.00", "15.00", "9.00", "40.00", "30.00", "15.00", "10.00", "109.00"]}
        seen = 0
        label = None
        for cells in rows[2:]:
            label = cells[0] or label
            if label not in want:
                fail(f"{test}: unexpected row {cells}")
            # 400 cycles per run less 2 x 100 at the ends, 2 runs
            if cells[3].startswith("p") and (cells[2] != "400" or cells[1] != "2"):
                fail(f"{test}: runs/cycles of {label}: {cells[1:3]}, want 2 / 400")
            if cells[4:] != want[label]:
                fail(f"{test}: {label} {cells[3]}: {cells[4:]}, want {want[label]}")
            seen += 1
        if seen != 10:
            fail(f"{test}: want 5 rows per variant, got {seen}")
        for line in ("- 0: perftest: 0.000 / 0.000; 0.00 % of round trips, mean 0.00 us; without: 106.00 us",
                     "- 1: fabench-once: 0.000 / 2.000; 100.00 % of round trips, mean 109.00 us; without: 0.00 us",
                     "  - switched to on CPU 1, per round trip: ksoftirqd/1 2.000"):
            if line not in run.stdout.splitlines():
                fail(f"{test}: no task-switch line '{line}'")
    # The UD trace read as the RC test's: no message of 4140 B, no round trip.
    ud = os.path.join(tmp, "seg-ud_send_lat_2")
    with open(os.path.join(ud, "setup.txt"), "w", encoding="utf-8") as f:
        f.write("test: send_lat_4K\nvariant 0: perftest\nvariant 1: fabench-once\n")
    run = subprocess.run([sys.executable, SEGMENTS, ud], capture_output=True, text=True, check=False)
    if run.returncode == 0 or "no complete round trip" not in run.stderr:
        fail(f"a UD trace was split as an RC 4 KiB one: rc {run.returncode}, {run.stderr}")
    # A test whose messages the wire does not tell apart (RC 2 B: as long as an ACK) is refused.
    with open(os.path.join(ud, "setup.txt"), "w", encoding="utf-8") as f:
        f.write("test: send_lat_2\nvariant 0: perftest\nvariant 1: fabench-once\n")
    run = subprocess.run([sys.executable, SEGMENTS, ud], capture_output=True, text=True, check=False)
    if run.returncode == 0 or "send_lat_2 is not one segments.py can split" not in run.stderr:
        fail(f"send_lat_2 was accepted: rc {run.returncode}, {run.stderr}")
    # A trace without the two rate markers is an error.
    out = os.path.join(tmp, "seg-send_lat_4K")
    path = os.path.join(out, "raw", "r1.v1.trace")
    with open(path, encoding="utf-8") as f:
        kept = [line for line in f if "fabench-mark" not in line]
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(kept)
    run = subprocess.run([sys.executable, SEGMENTS, out], capture_output=True, text=True, check=False)
    if run.returncode == 0 or "fabench-mark" not in run.stderr:
        fail(f"a trace without markers was accepted: rc {run.returncode}, {run.stderr}")
    print("ok: parts of the round trip, both variants, UD and RC")


def means(tmp):
    # Two stalls of 5 ms among 200 samples of 50 us: perftest's t_avg (50) leaves them out,
    # fabench's mean_us (99.5) and the mean of perftest's -U list (99.5) keep them.
    every = [50.0] * 198 + [5000.0, 5000.0]
    mean = sum(every) / len(every)
    out = os.path.join(tmp, "means")
    raw = os.path.join(out, "raw")
    os.makedirs(raw)
    with open(os.path.join(out, "tests.txt"), "w", encoding="utf-8") as f:
        f.write("with_u|lat|ib_send_lat -s 2 -U|fabench-lat -s 2\nwithout_u|lat|ib_send_lat -s 2|fabench-lat -s 2\n")
    for test in ("with_u", "without_u"):
        for p in range(1, 6):
            with open(os.path.join(raw, f"{test}.{p}.P.txt"), "w", encoding="utf-8") as f:
                if test == "with_u":
                    f.write(LAT_HEADER + "#, usec\n" + "".join(f"{i + 1}, {x:g}\n" for i, x in enumerate(every)))
                f.write(LAT_HEADER + " 2       200          50.00          5000.00      50.00    	       50.00"
                        "       	1.00  		50.00  		5000.00\n")
            with open(os.path.join(raw, f"{test}.{p}.F.json"), "w", encoding="utf-8") as f:
                json.dump({"benchmarks": [{"name": test, "run_type": "iteration", "p50_us": 50.0, "mean_us": mean,
                                           "min_us": 50.0, "p99_us": 5000.0}]}, f)
    run = subprocess.run([sys.executable, COMPARE, out], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"compare.py exited {run.returncode}: {run.stderr}")
    print(run.stdout)
    summary = json.load(open(os.path.join(out, "summary.json"), encoding="utf-8"))
    got_u, got_no = summary["with_u"]["metrics"], summary["without_u"]["metrics"]
    if set(got_u) != {"median", "mean"} or set(got_no) != {"median", "mean/t_avg"}:
        fail(f"metrics with -U {sorted(got_u)}, without {sorted(got_no)}: want median+mean, median+mean/t_avg")
    if got_u["mean"]["pair_ratios"] != [1.0] * 5 or got_u["mean"]["verdict"] != "at parity":
        fail(f"the same samples' means are not at parity: {got_u['mean']}")
    if abs(got_u["mean"]["perftest_median"] - mean) > 1e-9:
        fail(f"perftest's mean of every sample {got_u['mean']['perftest_median']}, want {mean}")
    if got_no["mean/t_avg"]["verdict"] != "fabench BEHIND" or abs(got_no["mean/t_avg"]["pair_ratios"][0] - mean / 50) > 1e-9:
        fail(f"mean/t_avg is not fabench's mean against t_avg: {got_no['mean/t_avg']}")
    if "mean/t_avg: fabench's mean of every sample against perftest's t_avg" not in run.stdout:
        fail("the table does not say what mean/t_avg is")
    # --boots: a summary.json from before -U (no perftest_mean) has "mean" against t_avg.
    old = os.path.join(tmp, "means_old")
    os.makedirs(old)
    with open(os.path.join(old, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"with_u": {"kind": "lat", "metrics": {"mean": {"pair_ratios": [1.9, 2.0, 2.1]}}}}, f)
    run = subprocess.run([sys.executable, COMPARE, "--boots", out, old, out], capture_output=True, text=True,
                         check=False)
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): line for line in run.stdout.splitlines()
            if line.startswith("| with_u |")}
    if "| 2 |" not in rows.get(("with_u", "mean"), "") or "| 1 |" not in rows.get(("with_u", "mean/t_avg"), ""):
        fail(f"--boots mixed the two means: {rows}")
    print("ok: means on one definition with -U, mean/t_avg without, kept apart across boots")


def callgrind(tmp):
    # Two runs per tool (1000 and 5000 iterations) in callgrind_annotate's
    # --auto=no format. Per iteration: perftest's loop 300 and the provider
    # 200, fabench's loop 100 (a "[clone ...]" name, 40 of it on a line of
    # inlined header code that names no object) and the provider 200;
    # both sort their samples after the loop (n log n: not per-iteration).
    out = os.path.join(tmp, "callgrind")
    os.makedirs(out)
    with open(os.path.join(out, "runs.txt"), "w", encoding="utf-8") as f:
        f.write("atomic_cswap_lat|-A CMP_AND_SWAP|1000|5000|ib_atomic_lat|fabench-lat\n")
    rxe = "/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
    loops = {"perftest": ("???:0x0000000000021eb0", "/usr/bin/ib_atomic_lat", 300),
             "fabench": ("???:fabench::pair::(anonymous namespace)::onesided_latency(fabench::pair::Side&) "
                         "[clone .constprop.0]", "/work/build/default/bench/fabench-lat", 100)}
    sorts = {"perftest": ("./stdlib/msort.c:msort_with_tmp.part.0'2", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
             "fabench": ("???:void std::__introsort_loop<double*>(double*, double*, long)",
                         "/work/build/default/bench/fabench-lat")}
    setup = 1_000_000
    for tool, (fn, obj, per_iter) in loops.items():
        for n in (1000, 5000):
            sort_ir = int(n * 10 * (n.bit_length()))  # grows faster than n
            rows = [(per_iter * n, fn, obj), (200 * n, "???:0x0000000000002ca0", rxe),
                    (sort_ir, sorts[tool][0], sorts[tool][1]), (setup, "./elf/dl-lookup.c:do_lookup_x", "/lib/ld.so")]
            if tool == "fabench":
                # 40 of its 100 from code inlined from a header: that line names no object.
                rows[0] = (60 * n, fn, obj)
                rows.append((40 * n, "build/harness/loop.hpp:" + fn.split(":", 1)[1], None))
            total = sum(r[0] for r in rows)
            with open(os.path.join(out, f"atomic_cswap_lat.{tool}.{n}.cg"), "w", encoding="utf-8") as f:
                # The provider's 200 per iteration: two calls of its poll at 100 each (the
                # callee's object and name compressed to ids after their first use), and one
                # call of another provider function that does not count as the poll.
                f.write(f"events: Ir\nob=(1) {obj}\nfn=(1) loop\ncob=(2) {rxe}\ncfn=(3) 0x0000000000002ca0\n"
                        f"calls={n} 0\n* {100 * n}\ncob=(2)\ncfn=(3)\ncalls={n} 0\n* {100 * n}\n"
                        f"cob=(2)\ncfn=(4) 0x0000000000003cc0\ncalls=1 0\n* 50\nsummary: {total}\n")
            with open(os.path.join(out, f"atomic_cswap_lat.{tool}.{n}.annotate.txt"), "w", encoding="utf-8") as f:
                f.write("-" * 80 + "\nIr\n" + "-" * 80 + f"\n{total:,} (100.0%)  PROGRAM TOTALS\n\n" + "-" * 80 +
                        "\nIr  file:function\n" + "-" * 80 + "\n")
                for ir, name, o in rows:
                    f.write(f"{ir:,} ({100 * ir / total:5.2f}%)  {name}" + (f" [{o}]\n" if o else "\n"))
    run = subprocess.run([sys.executable, CALLGRIND_SUMMARY, out], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        fail(f"callgrind_summary.py exited {run.returncode}: {run.stderr}")
    print(run.stdout)
    if "### atomic_cswap_lat: ib_atomic_lat / fabench-lat -A CMP_AND_SWAP" not in run.stdout:
        fail("the heading does not name both latency tools")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:]] for line in run.stdout.splitlines()
            if line.startswith(("| perftest", "| fabench"))}
    want = {"perftest": (300 + 200, "300 (0x0000000000021eb0)"), "fabench": (100 + 200, "100 (fabench::pair::")}
    for tool, (base, loop) in want.items():
        got = rows.get(tool)
        if got is None:
            fail(f"no row for {tool}: {sorted(rows)}")
        if int(got[4]) != base:
            fail(f"{tool}: {got[4]} instructions per iteration without sorting, want {base}")
        if int(got[3]) <= base:
            fail(f"{tool}: the whole difference {got[3]} should include the sort's n log n growth")
        if not got[5].startswith(loop):
            fail(f"{tool}: loop function column '{got[5]}', want it to start with '{loop}'")
        # fabench-lat's own code: its loop (a "[clone ...]" name) and its sort, 100 + 137.5.
        if tool == "fabench" and "fabench-lat 238" not in got[6]:
            fail(f"fabench's loop is not counted to fabench-lat (a [clone ...] name): '{got[6]}'")
    for tool in ("perftest", "fabench"):
        polls = [line for line in run.stdout.splitlines() if line.startswith(f"| {tool} (polls apart) |")]
        if len(polls) != 1 or [c.strip() for c in polls[0].split("|")[2:4]] != ["2.00", "100"]:
            fail(f"{tool}: want 2.00 poll calls per iteration at 100 Ir each: {polls}")
    if "without clock reads or sorting: 0.600" not in run.stdout:
        fail("the ratio without sorting is not 300/500")
    print("ok: per-iteration instructions with sorting apart, [clone] names on their object")


def rotate_boots(tmp):
    # Three boots of perftest and two fabench builds: build 1 is 4-6 % slower than
    # perftest in every boot, build 2 as fast as perftest in every boot.
    specs = ["perftest", "fabench-once@/a", "fabench-once@/b"]
    outs = []
    for b, k in enumerate((1.04, 1.05, 1.06)):
        outs.append(os.path.join(tmp, f"boot{b}"))
        write_rotation(outs[-1], specs, [lambda x: x, lambda x, k=k: x * k, lambda x: x])

    def table(args):
        run = subprocess.run([sys.executable, ROTATE_SUMMARY, "--boots", *args], capture_output=True, text=True,
                             check=False)
        if run.returncode != 0:
            fail(f"rotate_summary.py --boots {args}: {run.stderr}")
        print(run.stdout)
        rows = [[c.strip() for c in line.split("|")[1:-1]] for line in run.stdout.splitlines()
                if line.startswith("| ") and ":" in line.split("|")[1]]
        if len(rows) != 4:  # two variants x (median, 5th percentile)
            fail(f"want 4 rows (2 variants x 2 statistics), got {rows}")
        return rows

    for row in table(outs):
        if row[0] == "1: fabench-once@/a":
            if row[1] != "1.040, 1.050, 1.060" or not row[2].startswith("1.050 [") or row[3] != "variant BEHIND":
                fail(f"a build 4-6 % slower in every boot: {row}")
        elif row[1] != "1.000, 1.000, 1.000" or row[3] != "at parity":
            fail(f"a build as fast in every boot: {row}")
    # Against build 1 (--ref 1), build 2 is ahead and perftest is not listed as the reference.
    for row in table(["--ref", "1", *outs]):
        if row[0] == "2: fabench-once@/b" and row[3] != "variant ahead":
            fail(f"build 2 against build 1: {row}")
        if row[0].startswith("1:"):
            fail(f"the reference has a row of its own: {row}")
    # Boots of other rotations, one boot, and an unknown reference are refused.
    other = os.path.join(tmp, "other")
    write_rotation(other, ["perftest", "fabench"], [lambda x: x, lambda x: x])
    for args, want in (([outs[0], other], "other variants"), ([outs[0]], "two or more"),
                       (["--ref", "7", *outs], "no such variant")):
        run = subprocess.run([sys.executable, ROTATE_SUMMARY, "--boots", *args], capture_output=True, text=True,
                             check=False)
        if run.returncode == 0 or want not in run.stderr:
            fail(f"--boots {args} was not refused with '{want}': rc {run.returncode}, {run.stderr}")
    print("ok: rotations across boots, per variant, against any variant")


def coll(tmp):
    """coll.sh's rows and table, without MPI or a test bed."""
    mpi = os.path.join(tmp, "mpi.out")
    with open(mpi, "w", encoding="utf-8") as f:
        f.write("mpi_coll: 4 ranks\n")
        for size, busbw in ((4096, 0.010), (65536, 0.020)):
            f.write(json.dumps({"coll": "allreduce", "ranks": 4, "bytes": size, "busbw_GBps": busbw, "wrong": 0}) + "\n")
        f.write('{"coll": "allreduce", "ranks": 4, "byt\n')  # cut short by a timeout
    fab = os.path.join(tmp, "fabench.json")
    with open(os.path.join(FIXTURES, "coll.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(fab, "w", encoding="utf-8") as f:
        f.write("[rank 0] connected\n" + json.dumps(doc))
    results = os.path.join(tmp, "results.tsv")
    with open(results, "w", encoding="utf-8") as out:
        r1 = subprocess.run([sys.executable, COLL_ROWS, "mpi", "1", "mpi-ucx", mpi], stdout=out, text=True,
                            stderr=subprocess.PIPE, check=False)
        r2 = subprocess.run([sys.executable, COLL_ROWS, "fabench", "1", "4", fab], stdout=out, text=True,
                            stderr=subprocess.PIPE, check=False)
        out.write("1\tib_write_bw\tlink\t-\t2\t67108864\t0.050000\t0\n")
    rows = [line.split("\t") for line in open(results, encoding="utf-8").read().splitlines()]
    fab_rows = [r for r in rows if r[1] == "fabench"]
    if r1.returncode or r2.returncode or len([r for r in rows if r[1] == "mpi-ucx"]) != 2 or \
            len(fab_rows) != len([b for b in doc["benchmarks"] if not b.get("error_occurred")]):
        fail(f"coll_rows.py: rc {r1.returncode}/{r2.returncode} ({r2.stderr}), rows {rows}")
    if fab_rows[0][:6] != ["1", "fabench", "ring", "allreduce", "4", "4096"]:
        fail(f"coll_rows.py: first fabench row {fab_rows[0]}")
    doc["benchmarks"][0].update(error_occurred=True, error_message="peer gone")
    with open(fab, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    r = subprocess.run([sys.executable, COLL_ROWS, "fabench", "1", "4", fab], capture_output=True, text=True,
                       check=False)
    if r.returncode != 3 or "peer gone" not in r.stderr:
        fail(f"coll_rows.py with a failed benchmark: rc {r.returncode}, {r.stderr}")
    with open(fab, "w", encoding="utf-8") as f:
        f.write("fabench-coll: error: no RDMA device\n")
    r = subprocess.run([sys.executable, COLL_ROWS, "fabench", "1", "4", fab], capture_output=True, text=True,
                       check=False)
    if r.returncode != 2 or "not JSON" not in r.stderr or "Traceback" in r.stderr:
        fail(f"coll_rows.py without JSON: rc {r.returncode}, {r.stderr}")
    r = subprocess.run([sys.executable, COLL_TABLE, results, "1", "ucx", "1"], capture_output=True, text=True,
                       check=False)
    want = "| 4096 | 0.01 | "
    if r.returncode or "### allreduce, 4 ranks" not in r.stdout or want not in r.stdout or \
            "Link ceiling: ib_write_bw rxe0 -> rxe1, 64 MiB, 0.05 GB/s" not in r.stdout:
        fail(f"coll_table.py: rc {r.returncode}: {r.stdout} {r.stderr}")
    print("ok: coll.sh's rows (MPI lines, fabench-coll JSON after log lines, failures) and its table")


def kv(tmp):
    """kv.sh's tables from its outputs (the fixtures are kv.sh's own files)."""
    r = subprocess.run([sys.executable, KV_TABLES, "efficiency", os.path.join(FIXTURES, "kv.json")],
                       capture_output=True, text=True, check=False)
    lines = [line for line in r.stdout.splitlines() if line.startswith("| kv/")]
    if r.returncode or len(lines) != 6 or not lines[0].startswith("| kv/llama-3.1-70b/contiguous/push/isl4096/tp1-1 | 20 |"):
        fail(f"kv_tables.py efficiency: rc {r.returncode}: {r.stdout} {r.stderr}")
    out = os.path.join(tmp, "kvout")
    os.makedirs(out)
    for p in (1, 2):
        with open(os.path.join(FIXTURES, f"kv_rate_{p}.json"), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(out, f"kv-rate-{p}.json"), "w", encoding="utf-8") as f:
            f.write(text)
        with open(os.path.join(out, f"ib-rate-{p}.out"), "w", encoding="utf-8") as f:
            f.write(BW_HEADER + f" 4096       32768          0.50               0.17             {0.004 * p:.6f}\n")
    r = subprocess.run([sys.executable, KV_TABLES, "rate", out, "2"], capture_output=True, text=True, check=False)
    kv_rates = [json.load(open(os.path.join(out, f"kv-rate-{p}.json")))["benchmarks"][0]["wr_rate"] for p in (1, 2)]
    want = f"| 1 | {kv_rates[0]:,.0f} | 4,000 | {kv_rates[0] / 4000:.3f} |"
    if r.returncode or want not in r.stdout or "| median |" not in r.stdout:
        fail(f"kv_tables.py rate: rc {r.returncode}, expected {want!r}: {r.stdout} {r.stderr}")
    os.remove(os.path.join(out, "kv-rate-2.json"))
    r = subprocess.run([sys.executable, KV_TABLES, "rate", out, "2"], capture_output=True, text=True, check=False)
    if r.returncode == 0 or "cannot read" not in r.stderr or "Traceback" in r.stderr:
        fail(f"kv_tables.py rate without a run's JSON: rc {r.returncode}, {r.stderr}")
    print("ok: kv.sh's efficiency table and WR-rate pairs")


def ep(tmp):
    """ep.sh's rows and tables from real fabench-ep outputs (the report's fixtures), an mpi_ep line
    and a fabench-coll all-to-all document made up in its format."""
    def rows(*args):
        return subprocess.run([sys.executable, EP_TABLE, "--rows", *args], capture_output=True, text=True, check=False)
    mpi = os.path.join(tmp, "mpi.out")
    with open(mpi, "w", encoding="utf-8") as f:
        f.write(json.dumps({"label": "t16", "ranks": 2, "iters": 4, "dispatch_us": 60000.0, "combine_us": 60000.0,
                            "dispatch_p99_us": 1, "combine_p99_us": 1, "mean_us": 120000.0, "fabric_bytes": 917504,
                            "wrong": 0}) + "\n")
    with open(os.path.join(FIXTURES, "ep_normal_2.json"), encoding="utf-8") as f:
        ctx = json.load(f)["context"]
    coll_doc = {"context": ctx, "benchmarks": [
        {"name": f"alltoall/{a}/bf16/451584/iterations:4/manual_time", "run_type": "iteration", "iterations": 4,
         "real_time": t, "cpu_time": 1, "time_unit": "us", "time_max_us": t, "wrong": 0}
        for a, t in (("pairwise", 80000.0), ("allatonce", 50000.0))]}
    coll_json, sizes = os.path.join(tmp, "coll.json"), os.path.join(tmp, "sizes")
    with open(coll_json, "w", encoding="utf-8") as f:
        f.write("fabench-coll: rank 0 up\n" + json.dumps(coll_doc))
    with open(sizes, "w", encoding="utf-8") as f:
        f.write("451584 16\n")
    results = os.path.join(tmp, "results.tsv")
    runs = [("ep", "1", "2", os.path.join(FIXTURES, "ep_normal_2.json"), "uniform"), ("mpi", "1", "16", mpi),
            ("coll", "1", "2", coll_json, sizes), ("ep", "1", "2", os.path.join(FIXTURES, "ep_ll_2.json"), "ll"),
            ("ep", "1", "4", os.path.join(FIXTURES, "ep_skew_uniform_4.json"), "skew-uniform"),
            ("ep", "1", "4", os.path.join(FIXTURES, "ep_skew_hot4_4.json"), "skew-hot-rank4")]
    with open(results, "w", encoding="utf-8") as out:
        for args in runs:
            r = rows(*args)
            if r.returncode:
                fail(f"ep_table.py --rows {' '.join(args)}: rc {r.returncode}: {r.stderr}")
            out.write(r.stdout)
    got = [line.split("\t") for line in open(results, encoding="utf-8").read().splitlines()]
    tools = [g[1] for g in got]
    if tools != ["ep", "mpi", "coll-pairwise", "coll-allatonce", "ep-ll", "ep-ll-ref", "ep-skew", "ep-skew"]:
        fail(f"ep_table.py rows: tools {tools}")
    r = subprocess.run([sys.executable, EP_TABLE, results], capture_output=True, text=True, check=False)
    ep_mean = float(got[0][8])
    want_a = f"| 2 | 16 | 917504 | {917504 / 2 / ep_mean / 1e3:.3g} | {917504 / 2 / 120000.0 / 1e3:.3g} | " \
             f"{120000.0 / ep_mean:.3g} |"
    want_b = f"| 2 | 16 | 451584 | allatonce | {ep_mean / 100000.0:.3g} |"
    ll = [g for g in got if g[1].startswith("ep-ll")]
    want_c = f"| 2 | 128 | {float(ll[0][6]) / float(ll[1][6]):.3g} |"
    if r.returncode or want_a not in r.stdout or want_b not in r.stdout or want_c not in r.stdout or \
            "| 4 | 32 | hot-rank:4 | 1024 / 256.0 |" not in r.stdout:
        fail(f"ep_table.py tables: rc {r.returncode}, expected {want_a!r}, {want_b!r}, {want_c!r}: {r.stdout} {r.stderr}")
    with open(os.path.join(FIXTURES, "ep_normal_2.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["benchmarks"][0].update(error_occurred=True, error_message="rank 1 gone")
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    r = rows("ep", "1", "2", bad, "uniform")
    if r.returncode != 3 or "rank 1 gone" not in r.stderr:
        fail(f"ep_table.py with a failed benchmark: rc {r.returncode}, {r.stderr}")
    r = rows("ep", "1", "2", mpi, "uniform")
    if r.returncode != 2 or "Traceback" in r.stderr:
        fail(f"ep_table.py on a file that is not Google Benchmark JSON: rc {r.returncode}, {r.stderr}")
    print("ok: ep.sh's rows (fabench-ep, mpi_ep, fabench-coll after log lines, failures) and its goals' tables")


def main():
    tests = {"coll": coll, "kv": kv, "ep": ep, "verdicts": verdicts, "decided": decided, "boots": boots, "means": means, "counters": counters,
             "rotate": rotate, "rotate_boots": rotate_boots, "segments": segments, "callgrind": callgrind}
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        make_out(tmp)
        tests[sys.argv[1]](tmp)


if __name__ == "__main__":
    main()
