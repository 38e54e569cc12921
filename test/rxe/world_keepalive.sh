#!/usr/bin/env bash
# The N-rank binaries keep each other alive at a short --timeout: with
# --timeout 1 every rank takes a second of silence from a peer for a stopped
# peer, so rank 0's Keepalives to the others, theirs to rank 0
# (world::Driver's ctrl::Heartbeat) and fabench-kv's heartbeat writes from the
# posting side to the waiting one must come every quarter of it
# (ctrl::keepalive_interval), not every second. Runs several times the
# timeout long, of fabench-coll and of fabench-kv (push and pull), pass.
source "$(dirname "$0")/kv_common.bash"
COLL=$build/bench/fabench-coll
[[ -x $COLL ]] || fail "no $COLL (build first)"
TIMEOUT_S=1

# long_world NAME MIN_S BINARY ARGS...: two ranks by fabench-launch, rank 0's
# JSON to $WORK/NAME.json; exits 0 and takes at least MIN_S seconds.
long_world() {
  local name=$1 min_s=$2 rc=0 t0=$SECONDS; shift 2
  "$LAUNCH" -n 2 --timeout 120 -- "$@" --timeout "$TIMEOUT_S" --benchmark_format=json \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  local elapsed=$((SECONDS - t0))
  ((rc == 0)) || { tail -20 "$WORK/$name.err" >&2; fail "$name: exited $rc with --timeout $TIMEOUT_S"; }
  sed -n 's/^\[0\] //p' "$WORK/$name.out" >"$WORK/$name.json"
  ((elapsed >= min_s)) || fail "$name took ${elapsed} s, too short to show keepalives (>= $min_s s)"
  echo "$elapsed"
}

# About 5 s for 2000 iterations of a 64 KiB ring all-reduce in the test bed.
e=$(long_world coll 4 "$COLL" -d "$DEV0,$DEV1" --coll allreduce --algo ring -s 64K -n 2000)
check_coll_json() {
  "$PY" "$(dirname "$0")/check_bench_json.py" "$1" --expect "$2" --zero wrong --positive busbw_GBps
}
check_coll_json "$WORK/coll.json" 1 || fail "coll: results"
ok "fabench-coll all-reduce: ${e} s with --timeout $TIMEOUT_S on both ranks"

# About 8 s for 50 iterations (push) of llama-3.1-8b, 64 tokens, contiguous.
for dir in push pull; do
  e=$(long_world "kv_$dir" 4 "$KV" -d "$DEV0,$DEV1" -x 1 --model llama-3.1-8b --isl 64 --layout contiguous \
    --direction "$dir" -n 50)
  check_kv_json "$WORK/kv_$dir.json" 1 || fail "kv $dir: results"
  ok "fabench-kv $dir: ${e} s with --timeout $TIMEOUT_S on both ranks"
done
