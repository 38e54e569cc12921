#!/usr/bin/env python3
"""segments.py OUT: where the time of a send ping-pong goes, per variant.

Reads what `rotate.sh --trace --test TEST` leaves in OUT: setup.txt (the
test and the variants) and raw/rR.vJ.trace, the kernel tracer's record of
each run with x86-tsc timestamps. TEST is ud_send_lat_2 or send_lat_4K, the
two send ping-pongs whose messages the wire tells apart from everything else
by their length alone (an RC 2-byte send is as long as an ACK). In those
runs the client is pinned to CPU 0, the server to CPU 1, and each device's
receive processing to its side's CPU. Events used:
  W  sys_enter_write of 32 bytes: rxe's doorbell, the system call of a post
  X  sys_exit_write returning 32: its end
  R  netif_receive_skb of a message's packet: 56 bytes for a 2-byte UD send,
     4140 for a 4 KiB RC send (IPv4 20 + UDP 8 + BTH 12 + 4096 + ICRC 4)
  P  fabench_cqpost: a kprobe on rxe_cq_post, rxe writing a completion (the
     first one after R is the receive's: a UD send completes inside its
     system call, an RC send with the peer's ACK, which reaches the sender
     before the reply does)
and two trace_marker lines "fabench-mark NS" (CLOCK_MONOTONIC nanoseconds)
at the ends of the run, which give the TSC's rate.

Each round trip, from the client's doorbell W0 to its next one, is split into
  cli_sys      W0 -> X0   the client's post system call (the requester sends)
  to_srv       W0 -> R1   until the packet is received on the server's CPU
  srv_rx       R1 -> P1   the server's kernel receive path, to the completion
  srv_user     P1 -> W1   the server's user space: sees the completion,
                          reposts the receive, posts the reply
  srv_sys      W1 -> X1   the server's post system call
  to_cli       W1 -> R0   until the reply is received on the client's CPU
  cli_rx       R0 -> P0   the client's kernel receive path
  cli_user     P0 -> W0'  the client's user space (sample, repost, next post)
  cycle        W0 -> W0'  the round trip
(to_srv and srv_rx + srv_user + to_cli + cli_rx + cli_user add up to the
cycle; the two _sys parts lie inside to_srv and to_cli.) Printed: the 1st,
10th and 50th percentile of each part over all cycles of a variant, each
part's mean over the variant's fastest 20 % of cycles and over its cycles
between the 80th and 90th percentile (which parts a slow round trip spends
its time in), and the task switches (sched_switch) per round trip on each
CPU while the split round trips ran (and to which tasks), with the share of
round trips during which either CPU switched tasks and the mean round trip
with and without.
"""
import bisect
import collections
import glob
import os
import re
import sys

PARTS = ["cli_sys", "to_srv", "srv_rx", "srv_user", "srv_sys", "to_cli", "cli_rx", "cli_user", "cycle"]
DOORBELL = 0x20  # bytes of rxe's post_send doorbell command
# The length on the wire of each traced test's message.
PACKET = {
    "ud_send_lat_2": 56,  # IPv4 20 + UDP 8 + BTH 12 + DETH 8 + 2 B + pad 2 + ICRC 4
    "send_lat_4K": 4140,  # IPv4 20 + UDP 8 + BTH 12 + 4096 B + ICRC 4 (one packet at a 4096 MTU)
}
SKIP = 100  # cycles left out at each end of a run (start-up, the last reply)

EVENT = re.compile(r"^\s*.+-\d+\s+\[(\d+)\]\s+\S+\s+(\d+): (\w+)(.*)$")


def die(msg):
    sys.exit(f"segments.py: error: {msg}")


def parse(path, packet):
    """Per (kind, cpu) the sorted timestamps, and the TSC ticks per microsecond."""
    ev = collections.defaultdict(list)
    marks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = EVENT.match(line)
            if not m:
                continue
            cpu, ts, name = int(m.group(1)), int(m.group(2)), m.group(3)
            rest = m.group(4).removeprefix(":").strip()
            if name == "sys_write":
                if rest.startswith(f"-> {DOORBELL:#x}"):
                    ev["X", cpu].append(ts)
                elif f"count: {DOORBELL:x})" in rest:
                    ev["W", cpu].append(ts)
            elif name == "netif_receive_skb":
                if rest.endswith(f" len={packet}"):
                    ev["R", cpu].append(ts)
            elif name == "fabench_cqpost":
                ev["P", cpu].append(ts)
            elif name == "sched_switch":
                to = re.search(r"next_comm=(\S+)", rest)
                ev["N", cpu].append((ts, to.group(1) if to else "?"))
            elif name == "tracing_mark_write" and rest.startswith("fabench-mark "):
                marks.append((ts, int(rest.split()[1])))
    if len(marks) != 2 or marks[1][1] <= marks[0][1] or marks[1][0] <= marks[0][0]:
        die(f"{path}: want two fabench-mark lines at the ends of the run, found {len(marks)}")
    ticks_per_us = (marks[1][0] - marks[0][0]) / ((marks[1][1] - marks[0][1]) / 1000.0)
    for v in ev.values():
        v.sort()
    for cpu in (0, 1):  # the switches' times alone, for bisect
        ev["S", cpu] = [ts for ts, _ in ev["N", cpu]]
    return ev, ticks_per_us


def after(xs, t):
    i = bisect.bisect_right(xs, t)
    return xs[i] if i < len(xs) else None


def cycles(ev, ticks_per_us):
    out = []
    w0s = ev["W", 0]
    for w0 in w0s[SKIP:len(w0s) - SKIP]:
        x0 = after(ev["X", 0], w0)
        r1 = after(ev["R", 1], w0)
        p1 = r1 and after(ev["P", 1], r1)
        w1 = p1 and after(ev["W", 1], p1)
        x1 = w1 and after(ev["X", 1], w1)
        r0 = w1 and after(ev["R", 0], w1)
        p0 = r0 and after(ev["P", 0], r0)
        w0n = p0 and after(w0s, p0)
        if None in (x0, r1, p1, w1, x1, r0, p0, w0n):
            continue
        ticks = [x0 - w0, r1 - w0, p1 - r1, w1 - p1, x1 - w1, r0 - w1, p0 - r0, w0n - p0, w0n - w0]
        # The last element: whether either CPU switched tasks during this round trip.
        switched = any(bisect.bisect_left(ev["S", cpu], w0n) > bisect.bisect_left(ev["S", cpu], w0) for cpu in (0, 1))
        out.append([t / ticks_per_us for t in ticks] + [switched])
    return out


def quantile(sorted_xs, q):
    return sorted_xs[min(len(sorted_xs) - 1, int(q * len(sorted_xs)))]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    try:
        with open(os.path.join(out, "setup.txt"), encoding="utf-8") as f:
            setup = f.read()
    except OSError as e:
        die(f"{out}: no setup.txt ({e.strerror}); give rotate.sh's --out directory")
    names = dict(re.findall(r"^variant (\d+): (.+)$", setup, re.M))
    test = re.search(r"^test: (\S+)", setup, re.M)
    if not test or test.group(1) not in PACKET:
        die(f"{out}/setup.txt: test {test.group(1) if test else '(none)'} is not one segments.py can split "
            f"({', '.join(PACKET)})")
    packet = PACKET[test.group(1)]
    pooled = collections.defaultdict(list)
    runs = collections.Counter()
    trips = collections.Counter()
    switches = collections.Counter()
    switched_to = collections.defaultdict(collections.Counter)  # (variant, cpu): next task's name: count
    for path in sorted(glob.glob(os.path.join(out, "raw", "r*.v*.trace"))):
        j = re.search(r"\.v(\d+)\.trace$", path).group(1)
        ev, ticks_per_us = parse(path, packet)
        c = cycles(ev, ticks_per_us)
        if not c:
            die(f"{path}: no complete round trip (was it a rotate.sh --trace run of {test.group(1)}?)")
        pooled[j] += c
        runs[j] += 1
        # Task switches on each CPU while the split round trips ran.
        w0s = ev["W", 0]
        lo, hi = w0s[SKIP], w0s[len(w0s) - SKIP]
        trips[j] += len(w0s) - 2 * SKIP
        for cpu in (0, 1):
            xs = ev["S", cpu]
            first, last = bisect.bisect_left(xs, lo), bisect.bisect_left(xs, hi)
            switches[j, cpu] += last - first
            for _, comm in ev["N", cpu][first:last]:
                switched_to[j, cpu][comm] += 1
    if not pooled:
        die(f"{out}/raw: no .trace files (run rotate.sh with --trace)")
    print("Round trips split at the doorbell system calls, packet arrivals and completions (us):\n")
    print("| variant | runs | cycles | stat | " + " | ".join(PARTS) + " |")
    print("|---|---|---|---|" + "---|" * len(PARTS))
    for j in sorted(pooled, key=int):
        c = pooled[j]
        cols = [sorted(x[k] for x in c) for k in range(len(PARTS))]  # x[-1]: switched
        label = f"{j}: {names.get(j, '?')}"
        for q in (0.01, 0.10, 0.50):
            print(f"| {label} | {runs[j]} | {len(c)} | p{int(q * 100)} | "
                  + " | ".join(f"{quantile(col, q):.2f}" for col in cols) + " |")
            label = ""
        cut = quantile(cols[-1], 0.20)
        fast = [x for x in c if x[-2] <= cut]
        print(f"| | | {len(fast)} | fastest 20 %, mean | "
              + " | ".join(f"{sum(x[k] for x in fast) / len(fast):.2f}" for k in range(len(PARTS))) + " |")
        lo, hi = quantile(cols[-1], 0.80), quantile(cols[-1], 0.90)
        slow = [x for x in c if lo <= x[-2] < hi] or [x for x in c if x[-2] == lo]
        print(f"| | | {len(slow)} | 80-90th percentile, mean | "
              + " | ".join(f"{sum(x[k] for x in slow) / len(slow):.2f}" for k in range(len(PARTS))) + " |")
    print("\nTask switches (sched_switch) per round trip on CPU 0 / CPU 1 while the round trips above ran;")
    print("the round trips during which either CPU switched tasks, and the mean round trip with and without:\n")
    for j in sorted(pooled, key=int):
        hit = [x[-2] for x in pooled[j] if x[-1]]
        calm = [x[-2] for x in pooled[j] if not x[-1]]
        print(f"- {j}: {names.get(j, '?')}: {switches[j, 0] / trips[j]:.3f} / {switches[j, 1] / trips[j]:.3f}; "
              f"{100 * len(hit) / len(pooled[j]):.2f} % of round trips, "
              f"mean {sum(hit) / len(hit) if hit else 0:.2f} us; without: {sum(calm) / len(calm) if calm else 0:.2f} us")
        for cpu in (0, 1):
            top = switched_to[j, cpu].most_common(3)
            if top:
                print(f"  - switched to on CPU {cpu}, per round trip: "
                      + ", ".join(f"{comm} {n / trips[j]:.3f}" for comm, n in top))


if __name__ == "__main__":
    main()
