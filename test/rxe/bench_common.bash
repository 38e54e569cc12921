# Shared by the bench_*.sh rxe tests: paths, devices, a server helper and
# JSON assertions over Google Benchmark output. Sourced, not run.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR [SOURCE_DIR]}
LAT=$build/bench/fabench-lat
BW=$build/bench/fabench-bw
DEV0=${FABENCH_RXE_DEV0:-rxe0}
DEV1=${FABENCH_RXE_DEV1:-rxe1}
IP1=${FABENCH_RXE_IP1:-10.50.0.2}
# Debian's interpreter: a pyenv shim in PATH would add seconds under emulation.
PY=$(command -v /usr/bin/python3 || command -v python3)
WORK=$(mktemp -d /tmp/fabench-test.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Polls use builtins only: under TCG a fork+exec (grep, sleep, ss) costs about
# 65 ms of guest CPU, taken from the processes the poll waits for.
# nap SECONDS: a sleep without a process (a read that times out on a pipe no
# one writes to; this shell holds both ends).
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }
# has FILE TEXT: FILE exists and contains TEXT (grep -qF, without a process).
has() {
  local text=""
  [[ -r $1 ]] || return 1
  IFS= read -r -d '' text <"$1" || true
  [[ $'\n'$text == *"$2"* ]]   # a TEXT that starts with \n also matches the first line
}
# listening PORT: something listens on TCP PORT (ss -ltn, read from /proc).
listening() {
  local suffix f _sl addr _rem state _rest
  printf -v suffix ':%04X' "$1"
  for f in /proc/net/tcp /proc/net/tcp6; do
    [[ -r $f ]] || continue
    while read -r _sl addr _rem state _rest; do
      [[ $state == 0A && $addr == *"$suffix" ]] && return 0
    done <"$f"
  done
  return 1
}

# The long matrices run whole with FABENCH_MATRIX=full (tools/test
# --full-matrix); by default (CI) a subset that still covers every kind of
# case. Their full results: docs/results/reliability.md.
full_matrix() { [[ ${FABENCH_MATRIX:-ci} == full ]]; }
ok() { echo "ok: $*"; }

# start_server BIN PORT LOG [ARGS...]: a server on DEV1, waiting until it listens.
# With SERVER_GROUP=1 the server leads a process group of its own (setsid:
# no fork here, so SERVER_PID is still the server's), which its serving
# processes join: `kill -STOP -- -$SERVER_PID` stops the whole server, as
# Ctrl-Z in its terminal would.
start_server() {
  local bin=$1 port=$2 log=$3 launch=(); shift 3
  [[ ${SERVER_GROUP:-0} == 1 ]] && launch=(setsid)
  "${launch[@]}" "$bin" -d "$DEV1" -p "$port" "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  for _ in {1..100}; do
    has "$log" "serving on" && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log"; fail "server $bin exited early"; }
    nap 0.1
  done
  cat "$log"; fail "server did not start listening"
}

# serving_pids [SERVER]: the pids of the processes serving clients of SERVER
# ($SERVER_PID by default): the children of its spawner (ctrl::ServingProcess),
# one per line; nothing when none serves.
serving_pids() {
  local spawner
  for spawner in $(pgrep -P "${1:-$SERVER_PID}"); do pgrep -P "$spawner" || true; done
}

# server_served LOG N: the server ($SERVER_PID) is alive, LOG has no error and
# one goodbye per client: N clients, no more, no fewer.
server_served() {
  local log=$1 want=$2 n
  kill -0 "$SERVER_PID" || fail "the server died"
  grep -q "error" "$log" && { cat "$log"; fail "server logged errors"; }
  n=$(grep -c 'said goodbye' "$log" || true)
  ((n == want)) || { cat "$log"; fail "the server logged $n goodbyes, expected the $want clients"; }
  ok "one server served the $want clients without error"
}

# wait_listen PORT: until something listens on TCP PORT (at most 20 s).
wait_listen() {
  for _ in {1..200}; do
    listening "$1" && return 0
    nap 0.1
  done
  fail "nothing listens on port $1"
}

# check_json FILE N_EXPECTED [ITERATIONS]: every benchmark ran without error,
# moved correct data (wrong == 0) and reported its counters.
check_json() {
  "$PY" - "$@" <<'PY'
import json, sys
path, expected = sys.argv[1], int(sys.argv[2])
iters = int(sys.argv[3]) if len(sys.argv) > 3 else None
doc = json.load(open(path))
runs = [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
bad = []
for b in runs:
    name = b["name"]
    if b.get("error_occurred"):
        bad.append(f"{name}: {b.get('error_message')}")
        continue
    if b.get("wrong", -1) != 0:
        bad.append(f"{name}: wrong={b.get('wrong')}")
    if iters is not None and b["iterations"] != iters:
        bad.append(f"{name}: {b['iterations']} iterations, expected {iters}")
    if "_lat/" in name:
        for k in ("min_us", "p50_us", "p99_us", "p99.9_us", "p99.99_us", "max_us", "mean_us"):
            if not b.get(k, 0) > 0:
                bad.append(f"{name}: counter {k} missing or not positive")
        if not b["min_us"] <= b["p50_us"] <= b["p99_us"] <= b["max_us"]:
            bad.append(f"{name}: percentiles out of order")
        if b.get("samples") != b["iterations"]:
            bad.append(f"{name}: {b.get('samples')} samples for {b['iterations']} iterations")
    else:
        for k in ("Gbps", "Mmsgps", "bytes_per_second"):
            if not b.get(k, 0) > 0:
                bad.append(f"{name}: counter {k} missing or not positive")
if len(runs) != expected:
    bad.append(f"{len(runs)} benchmarks ran, expected {expected}: {[b['name'] for b in runs]}")
for line in bad:
    print("FAIL:", line)
ctx = doc["context"]
for k in ("device", "link_layer", "active_mtu", "gid_index", "peer_host", "kernel", "rdma_core"):
    if k not in ctx:
        print(f"FAIL: context lacks {k}")
        bad.append(k)
print(f"checked {len(runs)} benchmarks in {path}")
sys.exit(1 if bad else 0)
PY
}
