# expect_named for the N-rank fault tests (coll_faults, kv_faults). Sourced
# after bench_common.bash; uses N (ranks) and RANK_PIDS (their pids).

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
