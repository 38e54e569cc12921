# Shared by test/rxe/bootstrap_*.sh (sourced; not a test itself: the test
# glob takes *.sh). $1 = build dir, $2 = source dir. Needs no RDMA device.
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR SOURCE_DIR}
src=${2:?usage: $0 BUILD_DIR SOURCE_DIR}
probe=$build/test/helpers/fabench_bootstrap_probe
launch=$src/tools/fabench-launch
[[ -x $probe ]] || { echo "FAIL: $probe not built (target fabench_bootstrap_probe)"; exit 1; }
host=$(hostname)
work=$(mktemp -d /tmp/fabench-bootstrap.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# Wall clock in ms since the epoch (the probe's --stamp files use the same
# clock). $EPOCHREALTIME (bash 5) spares a fork+exec of date per reading,
# which costs real time under emulation.
now_ms() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then
    local t=${EPOCHREALTIME/[.,]/}
    echo $(( 10#$t / 1000 ))
  else
    echo $(( $(date +%s%N) / 1000000 ))
  fi
}

# Timing bounds. Every bound measures from the event it is about (a rank's
# death, rank 0 starting its rendezvous wait: the probe's --stamp files), not
# from before start-up: in the Soft-RoCE VM (FABENCH_IN_VM=1, qemu TCG on a
# possibly shared host) starting a process takes from 0.2 s to many seconds
# (python3 behind a pyenv shim: ~20 s). What is left is scheduling, which
# emulation still slows 10-100x, so in the VM each bound gets $slack_ms more;
# every bound, slack included, stays below the timeout it proves was not waited
# out (check_bound enforces that).
if [[ ${FABENCH_IN_VM:-0} == 1 ]]; then slack_ms=4000; else slack_ms=0; fi

# check_bound DT BOUND NOT_WAITED WHAT: fail with WHAT unless DT < BOUND +
# $slack_ms, which must be below NOT_WAITED (ms), the wait the check rules out.
check_bound() {
  local dt=$1 bound=$(( $2 + slack_ms )) not_waited=$3
  ((bound < not_waited)) || fail "test bug: bound $bound ms is not below the $not_waited ms it is to rule out"
  ((dt < bound)) || fail "$4 (bound $bound ms)"
}

# stamp_of DIR RANK WHAT: the probe's --stamp DIR time (ms) for RANK.
stamp_of() {
  [[ -s $1/$2.$3 ]] || fail "rank $2 wrote no $3 stamp in $1"
  cat "$1/$2.$3"
}
# Debian's interpreter where present: a pyenv shim costs ~20 s per start under emulation.
free_port() { "$(command -v /usr/bin/python3 || command -v python3)" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
fail() { echo "FAIL: $*"; for f in "$work"/*.err; do [[ -s $f ]] && sed "s|^|  $(basename "$f" .err): |" "$f"; done; exit 1; }

# spawn_ranks N PORT PROBE_ARGS...: start N probes directly (no launcher, so
# nobody kills the survivors and each reports what it saw). Rank r writes
# $work/r.{out,err,pid,rc,end}.
spawn_ranks() {
  local n=$1 port=$2; shift 2
  rm -f "$work"/*
  for ((r = 0; r < n; r++)); do
    (
      RANK=$r WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        timeout 120 "$probe" "$@" >"$work/$r.out" 2>"$work/$r.err" &
      echo $! >"$work/$r.pid"
      rc=0; wait $! || rc=$?
      echo $rc >"$work/$r.rc"; now_ms >"$work/$r.end"
    ) 2>/dev/null &  # (bash's "Killed" notices; the probe's stderr is in $work/r.err)
  done
}

# wait_ranks N: wait for every rank's wrapper to finish.
wait_ranks() {
  local n=$1
  for ((r = 0; r < n; r++)); do
    for ((i = 0; i < 1500; i++)); do [[ -s $work/$r.end ]] && break; sleep 0.1; done
    [[ -s $work/$r.end ]] || fail "rank $r still running after 150 s"
  done
}

rc_of() { cat "$work/$1.rc"; }
end_of() { cat "$work/$1.end"; }
err_of() { cat "$work/$1.err"; }

# expect_err RANK REGEX: rank's stderr matches the (extended) regex.
expect_err() {
  grep -Eq -- "$2" "$work/$1.err" || fail "rank $1's error does not match /$2/; it said: $(err_of "$1")"
}
