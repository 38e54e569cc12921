#!/usr/bin/env python3
"""clock_reads.py [N]: seconds that N (default 100 000) clock_gettime(CLOCK_MONOTONIC) calls
take from Python (guest-clock.sh: what the guest's clocksource costs)."""
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
t = time.perf_counter()
for _ in range(n):
    time.clock_gettime(time.CLOCK_MONOTONIC)
print("%.3f" % (time.perf_counter() - t))
