#!/usr/bin/env bash
# fabench-lat and fabench-bw between two processes, server on rxe1 and client
# on rxe0 over the veth wire: every operation and transport, payload verified
# (wrong == 0) and counters present. One server serves the whole sweep.
source "$(dirname "$0")/bench_common.bash"

start_server "$LAT" 18701 "$WORK/lat-server.log" --timeout 10
timeout 300 "$LAT" -d "$DEV0" -p 18701 "$IP1" --op all -c RC,UC,UD -n 300 -s 2,4096 --timeout 10 \
  --benchmark_out="$WORK/lat.json" --benchmark_out_format=json || fail "fabench-lat sweep exited $?"
# write rc/uc, send rc/uc/ud at 2 sizes = 10, read rc at 2 sizes = 2, 2 atomics
check_json "$WORK/lat.json" 14 300 || fail "latency results"
ok "latency: write/send/read/atomics over RC/UC/UD, data verified"

# Messages above the MTU (4096): write, send and read of 64 KiB over RC.
timeout 300 "$LAT" -d "$DEV0" -p 18701 "$IP1" --op write,send,read -s 65536 -n 100 --timeout 10 \
  --benchmark_out="$WORK/lat-big.json" --benchmark_out_format=json || fail "64 KiB latency exited $?"
check_json "$WORK/lat-big.json" 3 100 || fail "64 KiB latency results"
ok "latency at 64 KiB (multi-packet)"

# The same server process serves the bandwidth client: one server, any test.
timeout 300 "$BW" -d "$DEV0" -p 18701 "$IP1" --op all -c RC,UC,UD -s 4096 -n 2000 --timeout 10 \
  --benchmark_out="$WORK/bw.json" --benchmark_out_format=json || fail "fabench-bw sweep exited $?"
# write rc/uc, send rc/uc/ud, read rc = 6
check_json "$WORK/bw.json" 6 2000 || fail "bandwidth results"
ok "bandwidth: write/send/read over RC/UC/UD, data verified"

timeout 300 "$BW" -d "$DEV0" -p 18701 "$IP1" --op write,send,read -s 65536 -n 500 -b --timeout 10 \
  --benchmark_out="$WORK/bibw.json" --benchmark_out_format=json || fail "bidirectional exited $?"
check_json "$WORK/bibw.json" 3 500 || fail "bidirectional results"
"$PY" - "$WORK/bibw.json" <<'PY' || fail "bidirectional counters"
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    assert "_bibw/" in b["name"], b["name"]
    assert b["tx_Gbps"] > 0 and b["rx_Gbps"] > 0, b
PY
ok "bidirectional bandwidth (both directions measured)"

timeout 300 "$BW" -d "$DEV0" -p 18701 "$IP1" --op write,send -s 8 -q 4 -l 8 -Q 16 -t 64 -n 8000 --timeout 10 \
  --benchmark_out="$WORK/rate.json" --benchmark_out_format=json || fail "message rate exited $?"
check_json "$WORK/rate.json" 2 8000 || fail "message rate results"
ok "message rate with 4 QPs, post lists of 8, CQ moderation 16"

timeout 300 "$BW" -d "$DEV0" -p 18701 "$IP1" --op write,send -s 4096 -n 1000 -e --timeout 10 \
  --benchmark_out="$WORK/ev.json" --benchmark_out_format=json || fail "event-mode bandwidth exited $?"
check_json "$WORK/ev.json" 2 1000 || fail "event-mode bandwidth results"
timeout 300 "$LAT" -d "$DEV0" -p 18701 "$IP1" --op send,read -n 300 -e --timeout 10 \
  --benchmark_out="$WORK/ev-lat.json" --benchmark_out_format=json || fail "event-mode latency exited $?"
check_json "$WORK/ev-lat.json" 2 300 || fail "event-mode latency results"
ok "event mode (completion channel) for bandwidth and latency"

# A send ping-pong reposts a consumed receive only while the rest of its run
# needs one (-r 64: none in the last 64 iterations; UC and UD with -n and no -r:
# every receive posted before the run, perftest's depth rule, none in the loop).
# Three runs of each benchmark on one connection: each starts on a queue that
# the run before left empty, so a refill that is missing stalls it.
timeout 300 "$LAT" -d "$DEV0" -p 18701 "$IP1" --op send -c RC,UC,UD -r 64 -n 300 --benchmark_repetitions=3 \
  --timeout 10 --benchmark_out="$WORK/rx64.json" --benchmark_out_format=json || fail "send latency -r 64 exited $?"
check_json "$WORK/rx64.json" 9 300 || fail "send latency -r 64 results"
timeout 300 "$LAT" -d "$DEV0" -p 18701 "$IP1" --op send -c UC,UD -n 300 --benchmark_repetitions=3 --timeout 10 \
  --benchmark_out="$WORK/rxrun.json" --benchmark_out_format=json || fail "UC/UD send latency exited $?"
check_json "$WORK/rxrun.json" 6 300 || fail "UC/UD send latency results"
ok "send ping-pongs: receives reposted only while the run needs them, the queue refilled between runs"

# Nine client runs above, each one session.
server_served "$WORK/lat-server.log" 9
