#!/usr/bin/env bash
# ctest-timeout: 600
# Server liveness, phase by phase: a proxy on the control connection cuts a
# real client's conversation exactly after the frame that starts each phase
# (connect, info, setup, endpoint exchange, run, finish, teardown), either
# closing it (a dead client: the server must let go at once) or freezing it
# (a stopped client: the server must let go within its --timeout, 4 s here).
# After each, a new client is served.
source "$(dirname "$0")/liveness_common.bash"
PORT=18722
PROXY_PORT=18723
SERVER_LOG=$WORK/server.log
start_server "$LAT" "$PORT" "$SERVER_LOG" --timeout 4

# cut PHASE MODE MAX_S CLIENT_ARGS...: the client talks through the proxy, which
# acts at PHASE; then a direct client must be served within MAX_S seconds.
cut() {
  local phase=$1 mode=$2 max_s=$3; shift 3
  local t_case=$SECONDS
  "$PY" "$here/cut_proxy.py" "$PROXY_PORT" "$IP1" "$PORT" "$phase" "$mode" >"$WORK/proxy.out" 2>&1 &
  local proxy=$!
  PIDS+=("$proxy")
  wait_listen "$PROXY_PORT"
  "$@" -d "$DEV0" -p "$PROXY_PORT" 127.0.0.1 --timeout 30 >"$WORK/victim.out" 2>&1 &
  VICTIM=$!
  PIDS+=("$VICTIM")
  for _ in $(seq 300); do grep -q "cut_proxy:" "$WORK/proxy.out" && break; sleep 0.05; done
  grep -q "cut_proxy: $mode after" "$WORK/proxy.out" || { cat "$WORK/proxy.out" "$WORK/victim.out"; fail "proxy never reached phase $phase"; }
  served_within "$max_s" "$mode at $phase: ${*#"$build"/bench/}"
  kill -9 "$proxy" 2>/dev/null || true
  wait "$proxy" 2>/dev/null || true
  reap_victim
  echo "   (case took $((SECONDS - t_case)) s)"
}

# Two sizes: run:2 is the second benchmark's run, after a second setup.
for phase in hello info setup endpoints run:1 run:2 finish goodbye; do
  cut "$phase" close 5 "$LAT" -s 2,64 -n 2000
done
for phase in endpoints run:1 finish; do
  cut "$phase" close 5 "$BW" --op send -b -s 65536 -n 2000
  cut "$phase" close 5 "$BW" --op write -c UC -s 65536 -n 2000
done
lines_before=$(wc -l <"$SERVER_LOG")
for phase in info setup endpoints run:1 finish goodbye; do
  cut "$phase" freeze 10 "$LAT" -n 2000
done
cut run:1 freeze 10 "$BW" --op write -s 65536 -n 100000000
cut run:1 freeze 10 "$BW" --op send -s 65536 -n 100000000
# One drop line per frozen client, among the lines of the freeze cases.
n=$(tail -n +"$((lines_before + 1))" "$SERVER_LOG" |
  grep -cE "(sent nothing|silent) for 4 s.*; dropped it, serving the next" || true)
((n == 8)) || { cat "$SERVER_LOG"; fail "the server named $n frozen clients as silent, expected 8"; }
ok "every frozen client dropped within --timeout and named as silent ($n)"
