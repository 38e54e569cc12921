#!/usr/bin/env bash
# The fault matrix (docs/design/fault-matrix.md), run inside the Soft-RoCE guest by
# tools/fault-matrix: fabench-lat and fabench-bw between rxe0 and rxe1 over
# the veth wire, with one fault per case, and what each end must do about it.
#
#   fault_matrix.sh BUILD_DIR [SECTION...]     SECTION: kill stop netem ranks (default: all)
#
# kill   a proxy on the control connection (test/rxe/cut_proxy.py) sends
#        SIGKILL to the client or the server just after the frame that starts
#        a phase: connect (Hello), setup, exchange (endpoints), run, finish,
#        teardown (Goodbye), for every op of both binaries.
# stop   the same with SIGSTOP, in the run.
# netem  tc netem on both veths (loss 1 % and 5 %, delay 5 ms, reorder,
#        duplicate, corrupt) for a whole run of every op.
# ranks  fabench-coll (4 ranks) and fabench-kv (3 ranks) on rxe0/rxe1: one
#        rank killed or stopped during start-up or in the run.
#
# Each case appends one row to $FABENCH_OUT/matrix/rows.tsv: section, case,
# expected, observed, verdict (pass or FAIL). The script's exit status is 0
# when every row passed.
set -uo pipefail
build=${1:?usage: $0 BUILD_DIR [SECTION...]}
shift
sections=("$@")
((${#sections[@]})) || sections=(kill stop netem ranks)
here=$(cd "$(dirname "$0")" && pwd)
proxy_py=$here/../rxe/cut_proxy.py
LAT=$build/bench/fabench-lat
BW=$build/bench/fabench-bw
COLL=$build/bench/fabench-coll
KV=$build/bench/fabench-kv
DEV0=${FABENCH_RXE_DEV0:-rxe0}
DEV1=${FABENCH_RXE_DEV1:-rxe1}
IP1=${FABENCH_RXE_IP1:-10.50.0.2}
PY=$(command -v /usr/bin/python3 || command -v python3)
out=${FABENCH_OUT:-/tmp}/matrix
work=$(mktemp -d /tmp/fabench-matrix.XXXXXX)
mkdir -p "$out"
rows=$out/rows.tsv
: >"$rows"
PORT=18800
PPORT=18801
TIMEOUT=4   # --timeout of both ends: a silent peer is given up after 4 s
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# row SECTION CASE EXPECTED OBSERVED VERDICT
row() {
  local obs=${4//$'\t'/ }
  obs=${obs//$'\n'/ }
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$obs" "$5" >>"$rows"
  printf '%-5s %-4s %-46s %s\n' "$1" "$5" "$2" "${obs:0:150}"
}
# first_error FILE: the first line that says what went wrong, else the last line.
first_error() {
  local l
  l=$(grep -m1 -E "error: |ERROR OCCURRED|failed: " "$1")
  [[ -n $l ]] || l=$(grep -m1 -E "died|closed|silent|timed out|no progress|refused" "$1")
  [[ -n $l ]] || l=$(grep -v '^\s*$' "$1" | tail -n 1)
  l=${l#fabench-*: }
  printf '%s' "${l:0:200}"
}

# start_server BIN LOG: a fresh server on DEV1 for one case, leading a
# process group of its own (setsid, no fork: $! is the server) that its
# serving processes join, so that "-$server" stops all of it as Ctrl-Z would.
start_server() {
  setsid "$1" -d "$DEV1" -p "$PORT" --timeout "$TIMEOUT" >"$2" 2>&1 &
  server=$!
  pids+=("$server")
  for _ in $(seq 150); do
    grep -q "serving on" "$2" && return 0
    kill -0 "$server" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
stop_server() { kill -9 -- "-$server" 2>/dev/null; wait "$server" 2>/dev/null; }

# probe: can a new client be served (2 B write latency, 50 iterations)?
# Retries while the server says busy, up to MAX_S seconds; prints the seconds.
probe() {
  local max_s=$1 t0 rc=1
  t0=$(now)
  while awk -v a="$t0" -v b="$(now)" -v m="$max_s" 'BEGIN { exit !(b - a < m) }'; do
    rc=0
    timeout 60 "$LAT" -d "$DEV0" -p "$PORT" "$IP1" -n 50 --timeout 10 >"$work/probe.out" 2>&1 || rc=$?
    ((rc == 0)) && break
    grep -q "busy: serving" "$work/probe.out" || break
    sleep 0.2
  done
  secs "$t0" "$(now)"
  return $rc
}

# Client arguments per binary and op: two benchmarks each (so a fault at the
# first one's finish still has a benchmark after it), runs long enough that
# the run phase is still going when the fault lands, short enough for the
# matrix.
client_args() {  # BIN OP
  if [[ $1 == lat ]]; then
    if [[ $2 == atomic ]]; then echo "$LAT --op atomic_fadd,atomic_cswap -n 3000"
    else echo "$LAT --op $2 -s 2,64 -n 3000"; fi
  else
    echo "$BW --op $2 -s 4096,65536 -n 1500"
  fi
}
ops_of() { [[ $1 == lat ]] && echo "write send read atomic" || echo "write send read"; }
bin_of() { [[ $1 == lat ]] && echo "$LAT" || echo "$BW"; }

# fault_case SIGNAL ROLE BENCH OP PHASE FRAME: one proxied conversation; the
# proxy sends SIGNAL to ROLE's process just after FRAME.
fault_case() {
  local sig=$1 role=$2 bench=$3 op=$4 phase=$5 frame=$6
  local name="$bench $op: $role $([[ $sig == KILL ]] && echo killed || echo stopped) at $phase"
  local mode=kill section=kill
  [[ $sig == STOP ]] && mode=stop section=stop
  if ! start_server "$(bin_of "$bench")" "$work/server.log"; then
    row "$section" "$name" "-" "the server did not start: $(first_error "$work/server.log")" FAIL
    return
  fi
  local pidfile=$work/victim.pid
  # The server killed: its first process (the serving one dies with it);
  # stopped: its whole group, the process serving the client included.
  if [[ $role == server && $mode == stop ]]; then
    echo "-$server" >"$pidfile"
  elif [[ $role == server ]]; then
    echo "$server" >"$pidfile"
  else
    rm -f "$pidfile"
  fi
  "$PY" "$proxy_py" "$PPORT" "$IP1" "$PORT" "$frame" "$mode=@$pidfile" >"$work/proxy.out" 2>&1 &
  local proxy=$!
  pids+=("$proxy")
  for _ in $(seq 100); do ss -Hltn "sport = :$PPORT" | grep -q . && break; sleep 0.1; done
  local json=$work/client.json
  rm -f "$json"
  # shellcheck disable=SC2046
  $(client_args "$bench" "$op") -d "$DEV0" -p "$PPORT" 127.0.0.1 --timeout "$TIMEOUT" \
    --benchmark_out="$json" --benchmark_out_format=json >"$work/client.out" 2>&1 &
  local client=$!
  pids+=("$client")
  # The proxy reads the file when it acts, well after the client's Hello.
  [[ $role == client ]] && echo "$client" >"$pidfile"
  # The client ends (killed, stopped then released below, or by itself); at
  # most 60 s.
  local t_end rc=0 waited=0
  while kill -0 "$client" 2>/dev/null && ((waited < 600)); do
    [[ $role == client && $mode == stop ]] && grep -q "cut_proxy: stop after" "$work/proxy.out" && break
    sleep 0.1; waited=$((waited + 1))
  done
  local act t_act
  # The proxy prints when it acts (0.3 s after the frame) or when the
  # conversation ends before the phase: give it a moment after the client.
  for _ in $(seq 30); do grep -q "cut_proxy:" "$work/proxy.out" && break; sleep 0.1; done
  act=$(grep -m1 "cut_proxy:" "$work/proxy.out")
  t_act=$(grep -m1 -oE "at [0-9.]+$" <<<"$act" | cut -c4-)
  local hung=0
  if [[ $role == server ]] && kill -0 "$client" 2>/dev/null; then
    hung=1; kill -9 "$client" 2>/dev/null
  fi
  if [[ -z $act || $act == *"ended before the phase"* ]]; then
    kill -9 "$client" 2>/dev/null; wait "$client" 2>/dev/null
    row "$section" "$name" "-" "the conversation never reached $phase (${act:-no proxy line}); client: $(first_error "$work/client.out")" FAIL
    kill -9 "$proxy" 2>/dev/null; stop_server
    return
  fi
  if [[ $role == server ]]; then
    wait "$client" 2>/dev/null; rc=$?
    ((hung)) && rc=124
    t_end=$(now)
    local took n_ok n_err
    took=$(secs "$t_act" "$t_end")
    read -r n_ok n_err < <("$PY" - "$json" <<'PY'
import json, sys
try:
    runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
except Exception:
    runs = []
ok = [b for b in runs if not b.get("error_occurred") and b.get("wrong", 0) == 0]
print(len(ok), len(runs) - len(ok))
PY
)
    local line expected verdict=pass
    line=$(first_error "$work/client.out")
    if [[ $phase == teardown ]]; then
      expected="client keeps both results; exit 0, or non-zero naming the server"
      ((n_ok == 2)) || verdict=FAIL
      ((rc == 0)) || grep -qiE "server|peer" <<<"$line" || verdict=FAIL
    else
      expected="client exits non-zero within ${TIMEOUT} s + 2, naming the server"
      ((rc != 0 && rc != 124)) || verdict=FAIL
      awk -v t="$took" -v m="$((TIMEOUT + 2))" 'BEGIN { exit !(t <= m) }' || verdict=FAIL
      grep -qiE "server|peer|127\.0\.0\.1" <<<"$line" || verdict=FAIL
    fi
    [[ $mode == stop ]] && kill -9 -- "-$server" 2>/dev/null
    row "$section" "$name" "$expected" "exit $rc after ${took} s; results kept: $n_ok ok, $n_err failed; \"$line\"" "$verdict"
  else
    # The client is gone (or stopped): the server must drop it and serve the
    # next client: at once for a dead one, within --timeout for a stopped one.
    local max_s=5 expected="server drops it at once, names it, serves the next within 5 s"
    if [[ $mode == stop ]]; then
      max_s=$((TIMEOUT + 4))
      expected="server drops it after --timeout (${TIMEOUT} s), names it silent, serves the next within $max_s s"
    fi
    local served prc=0 verdict=pass line
    served=$(probe "$max_s") || prc=$?
    served=$(awk -v a="$t_act" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
    line=$(grep -m1 "dropped it" "$work/server.log" | sed -E 's/^\[[^]]*\] \[[^]]*\] //')
    ((prc == 0)) || verdict=FAIL
    kill -0 "$server" 2>/dev/null || verdict=FAIL
    [[ -n $line ]] || verdict=FAIL
    [[ $mode == stop && $line != *silent* && $line != *"sent nothing"* ]] && verdict=FAIL
    if [[ $phase == teardown && -z $line && $prc == 0 ]]; then
      # After Goodbye the client may be gone before the kill: nothing to drop.
      grep -q "already exited" "$work/proxy.out" && verdict=pass line="(the client had exited after its Goodbye)"
    fi
    kill -9 "$client" 2>/dev/null; wait "$client" 2>/dev/null
    row "$section" "$name" "$expected" \
      "next client $( ((prc == 0)) && echo "served ${served} s after the fault" || echo "NOT served: $(first_error "$work/probe.out")"); server: \"${line:0:160}\"" "$verdict"
  fi
  kill -9 "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null
  stop_server
  rm -f "$pidfile"
}

section_kill() {
  local bench op role p
  for bench in lat bw; do
    for op in $(ops_of "$bench"); do
      for p in connect:hello setup:setup exchange:endpoints run:run:1 finish:finish teardown:goodbye; do
        for role in client server; do
          fault_case KILL "$role" "$bench" "$op" "${p%%:*}" "${p#*:}"
        done
      done
    done
  done
  # Results already measured are kept: the server dies in the second size's run.
  for bench in lat bw; do
    kept_case "$bench"
  done
}

# kept_case BENCH: two sizes, the server killed in the second one's run: the
# first size's result is in the client's JSON and the exit status is non-zero.
kept_case() {
  local bench=$1 name="$1 write: server killed in the 2nd size's run"
  start_server "$(bin_of "$bench")" "$work/server.log" || { row kill "$name" - "the server did not start" FAIL; return; }
  echo "$server" >"$work/victim.pid"
  "$PY" "$proxy_py" "$PPORT" "$IP1" "$PORT" run:2 "kill=@$work/victim.pid" >"$work/proxy.out" 2>&1 &
  local proxy=$!
  pids+=("$proxy")
  for _ in $(seq 100); do ss -Hltn "sport = :$PPORT" | grep -q . && break; sleep 0.1; done
  local sizes="2,64" n=3000
  [[ $bench == bw ]] && sizes="4096,65536" n=1500
  local rc=0
  timeout 120 "$(bin_of "$bench")" --op write -s "$sizes" -n $n -d "$DEV0" -p "$PPORT" 127.0.0.1 --timeout "$TIMEOUT" \
    --benchmark_out="$work/kept.json" --benchmark_out_format=json >"$work/kept.out" 2>&1 || rc=$?
  local got
  got=$("$PY" - "$work/kept.json" <<'PY'
import json, sys
try:
    runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
except Exception as e:
    print(f"no JSON ({e})"); sys.exit()
print("; ".join(f"{b['name'].split('/')[2]} B: " + (f"error" if b.get("error_occurred") else f"ok, wrong={b.get('wrong')}") for b in runs))
PY
)
  local verdict=pass
  ((rc != 0 && rc != 124)) || verdict=FAIL
  [[ $got == *"ok, wrong=0"*"error"* ]] || verdict=FAIL
  row kill "$name" "first size's result kept in the JSON, second one an error, exit non-zero" \
    "exit $rc; $got; \"$(first_error "$work/kept.out")\"" "$verdict"
  kill -9 "$proxy" 2>/dev/null; wait "$proxy" 2>/dev/null
  stop_server
}

section_stop() {
  local bench op role
  for bench in lat bw; do
    for op in $(ops_of "$bench"); do
      for role in client server; do
        fault_case STOP "$role" "$bench" "$op" run run:1
      done
    done
  done
}

# netem_case SPEC BENCH OP: a whole run under SPEC; it completes with every
# byte verified, or fails with one line; never hangs.
netem_case() {
  local spec=$1 bench=$2 op=$3 name="$2 $3 under netem $1"
  start_server "$(bin_of "$bench")" "$work/server.log" || { row netem "$name" - "the server did not start" FAIL; return; }
  local op_args=(--op "$op") sizes=2,4096 n=300
  [[ $op == atomic ]] && op_args=(-A FETCH_AND_ADD) sizes=8
  [[ $bench == bw ]] && sizes=65536 n=200
  local rc=0 t0
  t0=$(now)
  timeout 300 "$(bin_of "$bench")" "${op_args[@]}" -s "$sizes" -n $n -d "$DEV0" -p "$PORT" "$IP1" --timeout 30 \
    --benchmark_out="$work/netem.json" --benchmark_out_format=json >"$work/netem.out" 2>&1 || rc=$?
  local took
  took=$(secs "$t0" "$(now)")
  local summary
  summary=$("$PY" - "$work/netem.json" "$n" <<'PY'
import json, sys
n = int(sys.argv[2])
try:
    runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
except Exception as e:
    print(f"BAD no JSON ({e})"); sys.exit()
parts, bad = [], False
for b in runs:
    size = b["name"].split("/")[2]
    if b.get("error_occurred"):
        parts.append(f"{size} B: error"); continue
    ctr = {k[4:]: v for k, v in b.items() if k.startswith("ctr:") and v and not k.endswith(("bytes", "packets", "pkts"))}
    ok = b.get("wrong", -1) == 0 and b["iterations"] == n
    bad |= not ok
    c = ", ".join(f"{k} {int(v)}" for k, v in sorted(ctr.items()))
    parts.append(f"{size} B: {b['iterations']} iterations, wrong={int(b.get('wrong', -1))}" + (f" ({c})" if c else ""))
print(("BAD " if bad else "") + "; ".join(parts))
PY
)
  local verdict=pass observed
  if ((rc == 124 || rc == 137)); then
    verdict=FAIL observed="hung: killed by timeout 300"
  elif ((rc == 0)); then
    [[ $summary == BAD* || $summary == *error* ]] && verdict=FAIL
    observed="completed in ${took} s: ${summary#BAD }"
  else
    observed="exit $rc after ${took} s: \"$(first_error "$work/netem.out")\"; ${summary#BAD }"
    [[ -n $(first_error "$work/netem.out") ]] || verdict=FAIL
  fi
  row netem "$name" "completes with every byte verified, or fails with one line; ends" "$observed" "$verdict"
  stop_server
}

section_netem() {
  local spec bench op
  for spec in "loss 1%" "loss 5%" "delay 5ms" "delay 2ms reorder 25% 50%" "duplicate 5%" "corrupt 1%"; do
    for dev in veth0 veth1; do
      # shellcheck disable=SC2086  # the spec is several words
      tc qdisc replace dev "$dev" root netem $spec || { row netem "$spec" - "tc rejected it" FAIL; continue 2; }
    done
    for bench in lat bw; do
      for op in $(ops_of "$bench"); do
        netem_case "$spec" "$bench" "$op"
      done
    done
  done
  for dev in veth0 veth1; do tc qdisc del dev "$dev" root 2>/dev/null; done
}

# ranks_case BIN N SIGNAL VICTIM WHEN: N ranks of BIN started by hand
# (RANK/WORLD_SIZE); rank VICTIM gets SIGNAL at WHEN: "start-up" (1 s after
# launch, before the world is up) or "run" (3 s into the benchmark). Every
# other rank must exit non-zero within the bound, naming rank VICTIM.
RANK_TIMEOUT=5
rank_port=18850
ranks_case() {
  local bin=$1 n=$2 sig=$3 victim=$4 when=$5; shift 5
  local label=${bin##*/}
  local name="$label $*: rank $victim $([[ $sig == KILL ]] && echo killed || echo stopped) at $when"
  rank_port=$((rank_port + 1))
  local rpids=() r
  for r in $(seq 0 $((n - 1))); do
    RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$rank_port \
      "$bin" -d "$DEV0,$DEV1" "$@" -n 100000000 --timeout $RANK_TIMEOUT >"$work/rank$r.out" 2>&1 &
    rpids+=($!)
    pids+=($!)
  done
  local state
  if [[ $when == start-up ]]; then
    sleep 1
    state="world up at the fault: $(grep -q "world up" "$work/rank0.out" && echo yes || echo no)"
  else
    for _ in $(seq 120); do grep -q "world up" "$work/rank0.out" && break; sleep 0.5; done
    if ! grep -q "world up" "$work/rank0.out"; then
      for p in "${rpids[@]}"; do kill -9 "$p" 2>/dev/null; done
      row ranks "$name" - "the world never came up: $(first_error "$work/rank0.out")" FAIL
      return
    fi
    sleep 3
    state="running"
  fi
  local t0 max
  t0=$(now)
  kill -"$sig" "${rpids[victim]}"
  max=$((RANK_TIMEOUT + 3))
  local verdict=pass obs=() latest=0
  for r in $(seq 0 $((n - 1))); do
    ((r == victim)) && continue
    # Checked every 50 ms (tail --pid sleeps a second between checks: each rank after the first
    # was timed up to a second late).
    local deadline=$((SECONDS + max + 10))
    while kill -0 "${rpids[r]}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.05; done
    local rc=0
    if kill -0 "${rpids[r]}" 2>/dev/null; then
      kill -9 "${rpids[r]}"; wait "${rpids[r]}" 2>/dev/null
      verdict=FAIL obs+=("rank $r still running after $((max + 10)) s")
      continue
    fi
    wait "${rpids[r]}"; rc=$?
    local took line
    took=$(secs "$t0" "$(now)")
    latest=$took
    line=$(first_error "$work/rank$r.out")
    ((rc != 0)) || verdict=FAIL
    # "rank 2 ...", "peer rank 0 ...", "(from ranks 0, 3)"
    grep -qE "ranks? ([0-9]+, )*$victim\b" <<<"$line" || verdict=FAIL
    obs+=("rank $r: exit $rc after $took s: \"${line:0:120}\"")
  done
  awk -v t="$latest" -v m="$max" 'BEGIN { exit !(t <= m) }' || verdict=FAIL
  kill -9 "${rpids[victim]}" 2>/dev/null; wait "${rpids[victim]}" 2>/dev/null
  local IFS=";"
  obs=("${obs[@]/#/ }")
  row ranks "$name" "every other rank exits non-zero within $max s, naming rank $victim" "$state; ${obs[*]}" "$verdict"
}

section_ranks() {
  local coll=(--coll allreduce --algo ring -s 64K)
  local kv=(-x 1 --model llama-3.1-8b --isl 64 --prefill-tp 2 --layout contiguous)
  local when v
  for when in start-up run; do
    for v in 0 2; do
      ranks_case "$COLL" 4 KILL "$v" "$when" "${coll[@]}"
      ranks_case "$KV" 3 KILL "$v" "$when" "${kv[@]}" --direction push
    done
  done
  for v in 0 1; do
    ranks_case "$COLL" 4 STOP "$v" run "${coll[@]}"
  done
  ranks_case "$KV" 3 STOP 2 run "${kv[@]}" --direction push
  ranks_case "$KV" 3 KILL 1 run "${kv[@]}" --direction pull
  ranks_case "$KV" 3 STOP 0 run "${kv[@]}" --direction pull
}

[[ ${FABENCH_WIRE:-0} == 1 ]] || { echo "fault_matrix.sh: needs the guest's wire (tools/softroce-vm --wire)" >&2; exit 2; }
for s in "${sections[@]}"; do
  case $s in
    kill|stop|netem|ranks) "section_$s" ;;
    *) echo "fault_matrix.sh: unknown section '$s' (kill, stop, netem, ranks)" >&2; exit 2 ;;
  esac
done
n=$(wc -l <"$rows")
bad=$(grep -c $'\tFAIL$' "$rows")
echo "fault matrix: $n cases, $((n - bad)) pass, $bad FAIL"
((bad == 0))
