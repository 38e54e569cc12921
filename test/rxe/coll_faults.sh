#!/usr/bin/env bash
# ctest-timeout: 300
# fabench-coll under faults: a rank killed (SIGKILL) or stopped (SIGSTOP) in
# the middle of a collective makes every other rank exit non-zero within the
# timeout, naming that rank. Ranks are started by hand (RANK/WORLD_SIZE) so
# the test knows each one's pid.
source "$(dirname "$0")/coll_common.bash"
N=4
T=5

# start_world PORT: N ranks of a long all-reduce; sets RANK_PIDS.
start_world() {
  local port=$1
  RANK_PIDS=()
  for r in $(seq 0 $((N - 1))); do
    RANK=$r WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$COLL" -d "$DEV0,$DEV1" --coll allreduce --algo ring -s 64K -n 100000000 --timeout $T \
      >"$WORK/rank$r.out" 2>&1 &
    RANK_PIDS+=($!)
    PIDS+=($!)
  done
  # Wait until the collective runs: rank 0 logs "world up" once every QP is
  # connected, and starts its only benchmark right after.
  for _ in $(seq 120); do grep -q "world up" "$WORK/rank0.out" && break; sleep 0.5; done
  grep -q "world up" "$WORK/rank0.out" || { cat "$WORK"/rank*.out; fail "the world never came up"; }
  sleep 3
  for p in "${RANK_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { cat "$WORK"/rank*.out; fail "a rank exited before the fault"; }; done
}

# expect_named VICTIM WHAT MAX_S: every other rank exits non-zero within MAX_S
# seconds, and its stderr names rank VICTIM.
expect_named() {
  local victim=$1 what=$2 max_s=$3 t0=$SECONDS
  for r in $(seq 0 $((N - 1))); do
    ((r == victim)) && continue
    local rc=0
    timeout $((max_s + 5)) tail --pid="${RANK_PIDS[$r]}" -f /dev/null || true
    if kill -0 "${RANK_PIDS[$r]}" 2>/dev/null; then
      cat "$WORK/rank$r.out"; fail "$what: rank $r still running $((SECONDS - t0)) s later"
    fi
    wait "${RANK_PIDS[$r]}" || rc=$?
    ((rc != 0)) || { cat "$WORK/rank$r.out"; fail "$what: rank $r exited 0"; }
    grep -q "rank $victim" "$WORK/rank$r.out" || { cat "$WORK/rank$r.out"; fail "$what: rank $r does not name rank $victim"; }
    ok "$what: rank $r exited $rc after $((SECONDS - t0)) s: $(grep -m1 -o "error: .*" "$WORK/rank$r.out" | head -c 160)"
  done
  ((SECONDS - t0 <= max_s)) || fail "$what: the others took $((SECONDS - t0)) s (limit $max_s s)"
}

start_world 18731
kill -9 "${RANK_PIDS[2]}"
expect_named 2 "rank 2 killed" $((T + 3))

start_world 18732
kill -STOP "${RANK_PIDS[1]}"
expect_named 1 "rank 1 stopped" $((T + 10))
kill -9 "${RANK_PIDS[1]}" 2>/dev/null || true

start_world 18733
kill -9 "${RANK_PIDS[0]}"
expect_named 0 "rank 0 killed" $((T + 3))
