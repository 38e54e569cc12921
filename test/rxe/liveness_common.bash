# Shared by the bench_liveness_*.sh rxe tests: a long-lived server and a probe
# client that must be served within a bound after each fault. Sourced.
source "$(dirname "$0")/bench_common.bash"
here=$(dirname "$0")

# now_ms: milliseconds since the epoch.
now_ms() { echo $((${EPOCHREALTIME/[.,]/} / 1000)); }

# served_within MAX_S WHAT: a new client (2 B write latency, 50 iterations) is
# served within MAX_S seconds, retrying while the server is busy; the server
# is alive afterwards. Prints how long it took.
served_within() {
  local max_s=$1 what=$2 t0 rc=1 tries=0
  t0=${EPOCHREALTIME/[.,]/}   # us; no process in this loop but the probe (see nap)
  while ((${EPOCHREALTIME/[.,]/} - t0 < max_s * 1000000)); do
    tries=$((tries + 1))
    rc=0
    timeout 60 "$LAT" -d "$DEV0" -p "$PORT" "$IP1" -n 50 --timeout 10 >"$WORK/probe.out" 2>&1 || rc=$?
    ((rc == 0)) && break
    has "$WORK/probe.out" "busy: serving" || { cat "$WORK/probe.out"; tail -5 "$SERVER_LOG"; fail "$what: probe failed with other than busy"; }
    nap 0.3
  done
  local ms=$(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
  ((rc == 0)) || { cat "$WORK/probe.out"; tail -20 "$SERVER_LOG"; fail "$what: no client served within $max_s s"; }
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$SERVER_LOG"; fail "$what: server died"; }
  ok "$what: next client served after $((ms / 1000)).$(( (ms % 1000) / 100 )) s ($tries attempt(s))"
}

# run_and_kill DELAY_S SIGNAL CLIENT_ARGS...: start a client, send SIGNAL after DELAY_S.
run_and_kill() {
  local delay=$1 sig=$2; shift 2
  "$@" >"$WORK/victim.out" 2>&1 &
  VICTIM=$!
  PIDS+=("$VICTIM")
  sleep "$delay"
  kill -"$sig" "$VICTIM" 2>/dev/null || true
}

# reap_victim: the stopped or killed client is gone before the next case.
reap_victim() {
  kill -9 "$VICTIM" 2>/dev/null || true
  wait "$VICTIM" 2>/dev/null || true
}
