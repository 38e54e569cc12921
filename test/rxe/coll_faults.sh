#!/usr/bin/env bash
# ctest-timeout: 300
# fabench-coll under faults: a rank killed (SIGKILL) or stopped (SIGSTOP) in
# the middle of a collective makes every other rank exit non-zero within the
# timeout, naming that rank. Ranks are started by hand (RANK/WORLD_SIZE) so
# the test knows each one's pid.
source "$(dirname "$0")/coll_common.bash"
source "$(dirname "$0")/ranks_common.bash"
N=4
T=5

# start_world PORT [now]: N ranks of a long all-reduce; sets RANK_PIDS. Returns 3 s into the
# collective, or with `now` as soon as rank 0 says the world is up (before its first run).
start_world() {
  local port=$1 now=${2:-}
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
  for _ in {1..600}; do has "$WORK/rank0.out" "world up" && break; nap 0.1; done
  grep -q "world up" "$WORK/rank0.out" || { cat "$WORK"/rank*.out; fail "the world never came up"; }
  [[ -n $now ]] && return
  nap 3
  for p in "${RANK_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { cat "$WORK"/rank*.out; fail "a rank exited before the fault"; }; done
}

start_world 18731
kill -9 "${RANK_PIDS[2]}"
expect_named 2 "rank 2 killed" $((T + 3))

start_world 18732
kill -STOP "${RANK_PIDS[1]}"
expect_named 1 "rank 1 stopped" $((T + 3))
kill -9 "${RANK_PIDS[1]}" 2>/dev/null || true

# Rank 0 stopped: its Keepalives end, and every rank names it (not the ring
# neighbour it waits on) within the timeout.
start_world 18734
kill -STOP "${RANK_PIDS[0]}"
expect_named 0 "rank 0 stopped" $((T + 3))
kill -9 "${RANK_PIDS[0]}" 2>/dev/null || true

# Rank 0 stopped as soon as the world is up, while it calibrates and builds its report's
# context: the others wait between runs, and name it within the timeout there too.
start_world 18735 now
kill -STOP "${RANK_PIDS[0]}"
expect_named 0 "rank 0 stopped before its first run" $((T + 3))
kill -9 "${RANK_PIDS[0]}" 2>/dev/null || true

start_world 18733
kill -9 "${RANK_PIDS[0]}"
expect_named 0 "rank 0 killed" $((T + 3))
