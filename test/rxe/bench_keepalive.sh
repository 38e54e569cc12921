#!/usr/bin/env bash
# Both ends measure in single-threaded processes, and their Keepalives come
# from their own loops (ctrl::Pulse), not from heartbeat threads:
#  - the client is one thread; the server serves each client in a serving
#    process of its own (a child of its spawner, ctrl::ServingProcess), also
#    one thread: while each run goes, /proc/PID/status of the client and of
#    the server's serving process say "Threads: 1";
#  - with --timeout 2 on both ends, one-sided runs of several times that
#    pass: the server (which only watches its control socket there) never
#    takes the client for a stopped one, nor the client the server (whose
#    Keepalives come from its wait for "finish").
source "$(dirname "$0")/bench_common.bash"
PORT=18730
SERVER_LOG=$WORK/server.log
TIMEOUT_S=2
start_server "$LAT" "$PORT" "$SERVER_LOG" --timeout "$TIMEOUT_S"

# threads_of PID: its "Threads:" count (0 when it is gone).
threads_of() {
  local n=0 line
  { while read -r line; do [[ $line == Threads:* ]] && n=${line##*[[:space:]]}; done </proc/"$1"/status; } 2>/dev/null || true
  echo "$n"
}

# max_threads PID: sampled every 0.2 s until PID exits, "C S N": the most
# threads PID had, the most any serving process of the server had, and how
# many serving processes were seen (the server's grandchildren: its spawner's
# children).
max_threads() {
  local pid=$1 max=0 smax=0 n s seen=()
  while kill -0 "$pid" 2>/dev/null; do
    n=$(threads_of "$pid")
    ((n > max)) && max=$n
    for s in $(serving_pids); do
      n=$(threads_of "$s")
      ((n > smax)) && smax=$n
      [[ " ${seen[*]} " == *" $s "* ]] || seen+=("$s")
    done
    nap 0.2
  done
  echo "$max $smax ${#seen[@]}"
}

# long_run NAME CLIENT_ARGS...: a run of at least 2 x the server's --timeout.
clients=0
long_run() {
  local name=$1 rc=0 t0 elapsed threads; shift
  t0=$SECONDS
  "$@" -d "$DEV0" -p "$PORT" "$IP1" --timeout "$TIMEOUT_S" --benchmark_format=json >"$WORK/$name.json" \
    2>"$WORK/$name.err" &
  local pid=$! server_threads serving
  PIDS+=("$pid")
  read -r threads server_threads serving < <(max_threads "$pid")
  wait "$pid" || rc=$?
  elapsed=$((SECONDS - t0))
  clients=$((clients + 1))
  ((rc == 0)) || { cat "$WORK/$name.err" "$SERVER_LOG"; fail "$name: the client exited $rc"; }
  check_json "$WORK/$name.json" 1
  ((elapsed >= 2 * TIMEOUT_S)) || fail "$name took ${elapsed} s, too short to show keepalives (>= $((2 * TIMEOUT_S)) s)"
  ((threads == 1)) || fail "$name: the client had $threads threads while it ran, expected 1"
  ((serving == 1)) || { cat "$SERVER_LOG"; fail "$name: $serving serving processes seen, expected the client's one"; }
  ((server_threads == 1)) || fail "$name: the server's serving process had $server_threads threads, expected 1"
  ok "$name: ${elapsed} s, both ends with --timeout ${TIMEOUT_S}; client and serving process single-threaded"
}

long_run read_lat "$LAT" --op read -s 2 -n 100000
long_run write_bw "$BW" --op write -s 65536 -n 5000
server_served "$SERVER_LOG" "$clients"
