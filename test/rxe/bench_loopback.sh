#!/usr/bin/env bash
# --loopback: both ends in one process, on one device (rxe's internal
# loopback) and on two devices (-d rxe0 --peer-device rxe1).
source "$(dirname "$0")/bench_common.bash"

timeout 300 "$LAT" --loopback -d "$DEV0" --op all -c RC,UC,UD -n 200 --timeout 10 \
  --benchmark_out="$WORK/lat.json" --benchmark_out_format=json || fail "loopback latency exited $?"
check_json "$WORK/lat.json" 8 200 || fail "loopback latency results"
ok "fabench-lat --loopback on one device"

timeout 300 "$BW" --loopback -d "$DEV0" --peer-device "$DEV1" --op all -c RC,UC,UD -n 1000 -s 4096 --timeout 10 \
  --benchmark_out="$WORK/bw.json" --benchmark_out_format=json || fail "loopback bandwidth exited $?"
check_json "$WORK/bw.json" 6 1000 || fail "loopback bandwidth results"
python3 - "$WORK/bw.json" <<'PY' || fail "context of a two-device loopback"
import json, sys
ctx = json.load(open(sys.argv[1]))["context"]
assert ctx["device"] == "rxe0" and ctx["peer_device"] == "rxe1" and ctx["mode"] == "loopback", ctx
PY
ok "fabench-bw --loopback across two devices"
