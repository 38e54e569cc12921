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
  for _ in {1..300}; do has "$WORK/proxy.out" "cut_proxy:" && break; nap 0.05; done
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
# CI: the bandwidth cases at run:1 only and the latency freezes at four
# phases; full_matrix: every phase listed.
bw_phases=(run:1) freeze_phases=(info setup run:1 goodbye)
full_matrix && bw_phases=(endpoints run:1 finish) freeze_phases=(info setup endpoints run:1 finish goodbye)
for phase in "${bw_phases[@]}"; do
  cut "$phase" close 5 "$BW" --op send -b -s 65536 -n 2000
  cut "$phase" close 5 "$BW" --op write -c UC -s 65536 -n 2000
done
lines_before=$(wc -l <"$SERVER_LOG")
for phase in "${freeze_phases[@]}"; do
  cut "$phase" freeze 10 "$LAT" -n 2000
done
cut run:1 freeze 10 "$BW" --op write -s 65536 -n 100000000
cut run:1 freeze 10 "$BW" --op send -s 65536 -n 100000000
# One drop line per frozen client, among the lines of the freeze cases.
n=$(tail -n +"$((lines_before + 1))" "$SERVER_LOG" |
  grep -cE "(sent nothing|silent) for 4 s.*; dropped it, serving the next" || true)
frozen=$((${#freeze_phases[@]} + 2))
((n == frozen)) || { cat "$SERVER_LOG"; fail "the server named $n frozen clients as silent, expected $frozen"; }
ok "every frozen client dropped within --timeout and named as silent ($n)"

# The other way round: a server stopped (SIGSTOP) as a run starts: its
# process group, the server and the process serving this client, as Ctrl-Z
# would. Its Keepalives end with it, and the client names it within its
# --timeout (4 s) + 2: a latency loop stalls, while a long write run goes on
# (rxe, as a NIC would, answers a stopped process's RDMA writes) until the
# client sees the silence on the control connection.
# stopped_server PORT PROXY_PORT BIN ARGS...
stopped_server() {
  local port=$1 proxy_port=$2 bin=$3 main_server=$SERVER_PID; shift 3
  SERVER_GROUP=1 start_server "$bin" "$port" "$WORK/stopped.log" --timeout 4
  local server=$SERVER_PID
  SERVER_PID=$main_server
  echo "-$server" >"$WORK/stopped.pid"
  "$PY" "$here/cut_proxy.py" "$proxy_port" "$IP1" "$port" run:1 "stop=@$WORK/stopped.pid" >"$WORK/proxy.out" 2>&1 &
  local proxy=$! rc=0 t0
  PIDS+=("$proxy")
  wait_listen "$proxy_port"
  t0=$(now_ms)
  timeout 60 "$bin" -d "$DEV0" -p "$proxy_port" 127.0.0.1 --timeout 4 "$@" >"$WORK/client.out" 2>&1 || rc=$?
  local ms=$(($(now_ms) - t0)) what="${bin##*/} $*"
  grep -q "cut_proxy: stop after" "$WORK/proxy.out" || { cat "$WORK/proxy.out" "$WORK/client.out"; fail "$what: the proxy never stopped the server"; }
  ((rc != 0 && rc != 124)) || { cat "$WORK/client.out"; fail "$what: client exit $rc with a stopped server"; }
  grep -qE "peer fabench|127\.0\.0\.1:$proxy_port" "$WORK/client.out" || { cat "$WORK/client.out"; fail "$what: the client does not name the stopped server"; }
  ((ms <= 9000)) || { cat "$WORK/client.out"; fail "$what: the client took $ms ms to give up on the stopped server (limit: start-up + 4 s + 2)"; }
  ok "stopped server, $what: client exit $rc after $((ms / 1000)).$(((ms % 1000) / 100)) s: $(grep -m1 -oE "ERROR OCCURRED: .*" "$WORK/client.out" | head -c 200)"
  kill -9 -- "-$server" 2>/dev/null || true
  kill -9 "$proxy" 2>/dev/null || true
  wait "$server" "$proxy" 2>/dev/null || true
}
stopped_server 18726 18727 "$LAT" --op write -n 1000000
stopped_server 18728 18729 "$BW" --op write -s 65536 -n 100000000
