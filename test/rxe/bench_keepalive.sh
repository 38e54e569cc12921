#!/usr/bin/env bash
# A client measures in a single-threaded process (its Keepalives come from its
# own loops, ctrl::Pulse, not from a heartbeat thread), and a server with a
# short --timeout still never takes it for a stopped one: one-sided runs, in
# which the server has nothing to do but watch the control socket, last
# several times the server's --timeout and pass. While each runs, the
# client's /proc/PID/status says "Threads: 1".
source "$(dirname "$0")/bench_common.bash"
PORT=18730
SERVER_LOG=$WORK/server.log
TIMEOUT_S=2
start_server "$LAT" "$PORT" "$SERVER_LOG" --timeout "$TIMEOUT_S"

# max_threads PID: the most threads PID had, sampled every 0.2 s until it exits.
max_threads() {
  local pid=$1 max=0 n line
  while kill -0 "$pid" 2>/dev/null; do
    n=0
    { while read -r line; do [[ $line == Threads:* ]] && n=${line##*[[:space:]]}; done </proc/"$pid"/status; } 2>/dev/null || true
    ((n > max)) && max=$n
    nap 0.2
  done
  echo "$max"
}

# long_run NAME CLIENT_ARGS...: a run of at least 2 x the server's --timeout.
clients=0
long_run() {
  local name=$1 rc=0 t0 elapsed threads; shift
  t0=$SECONDS
  "$@" -d "$DEV0" -p "$PORT" "$IP1" --timeout 30 --benchmark_format=json >"$WORK/$name.json" 2>"$WORK/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  threads=$(max_threads "$pid")
  wait "$pid" || rc=$?
  elapsed=$((SECONDS - t0))
  clients=$((clients + 1))
  ((rc == 0)) || { cat "$WORK/$name.err" "$SERVER_LOG"; fail "$name: the client exited $rc"; }
  check_json "$WORK/$name.json" 1
  ((elapsed >= 2 * TIMEOUT_S)) || fail "$name took ${elapsed} s, too short to show keepalives (>= $((2 * TIMEOUT_S)) s)"
  ((threads == 1)) || fail "$name: the client had $threads threads while it ran, expected 1"
  ok "$name: ${elapsed} s against a server with --timeout ${TIMEOUT_S}, client single-threaded"
}

long_run read_lat "$LAT" --op read -s 2 -n 100000
long_run write_bw "$BW" --op write -s 65536 -n 5000
server_served "$SERVER_LOG" "$clients"
