#!/usr/bin/env bash
# ctest-timeout: 300
# fabench-kv under faults: a decode or prefill rank killed (SIGKILL) or
# stopped (SIGSTOP) in the middle of a transfer makes the other ranks exit
# non-zero within the timeout, naming it. Ranks are started by hand
# (RANK/WORLD_SIZE) so the test knows each one's pid.
source "$(dirname "$0")/kv_common.bash"
source "$(dirname "$0")/ranks_common.bash"
N=3
T=5

# start_world PORT DIRECTION: prefill TP 2 -> decode TP 1, a long run; sets RANK_PIDS.
start_world() {
  local port=$1 dir=$2
  RANK_PIDS=()
  for r in $(seq 0 $((N - 1))); do
    RANK=$r WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$KV" -d "$DEV0,$DEV1" -x 1 --model llama-3.1-8b --isl 64 --prefill-tp 2 --layout contiguous \
      --direction "$dir" -n 100000000 --timeout $T >"$WORK/rank$r.out" 2>&1 &
    RANK_PIDS+=($!)
    PIDS+=($!)
  done
  for _ in {1..600}; do has "$WORK/rank0.out" "world up" && break; nap 0.1; done
  grep -q "world up" "$WORK/rank0.out" || { cat "$WORK"/rank*.out; fail "the world never came up"; }
  nap 3
  for p in "${RANK_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { cat "$WORK"/rank*.out; fail "a rank exited before the fault"; }; done
}

start_world 18741 push
kill -9 "${RANK_PIDS[2]}"
expect_named 2 "push: decode rank (rank 2) killed" $((T + 3))

start_world 18742 pull
kill -9 "${RANK_PIDS[1]}"
expect_named 1 "pull: prefill rank 1 killed" $((T + 3))

start_world 18743 push
kill -STOP "${RANK_PIDS[2]}"
expect_named 2 "push: decode rank (rank 2) stopped" $((T + 3))
kill -9 "${RANK_PIDS[2]}" 2>/dev/null || true

start_world 18744 pull
kill -9 "${RANK_PIDS[0]}"
expect_named 0 "pull: rank 0 (prefill, the leader) killed" $((T + 3))
