#!/usr/bin/env bash
# fabench-coll --transport shm on this host (no RDMA device, no VM): every collective,
# algorithm and type at 1 to 8 ranks launched by fabench-launch, with 1 element, fewer
# elements than ranks, counts not divisible by the rank count and 2 MiB; every output checked
# bit for bit on every rank (wrong = 0, all-reduce/all-gather outputs identical across ranks).
# Then --compute none (named so, not checked, says so), --reduce-threads 2 (checked), and a
# segment name left in /dev/shm by nobody. Arguments: BUILD_DIR SOURCE_DIR.
set -euo pipefail
build=$1 src=$2
COLL=$build/bench/fabench-coll
LAUNCH=$src/tools/fabench-launch
CHECK=$src/test/rxe/check_bench_json.py
PY=$(command -v /usr/bin/python3 || command -v python3)
WORK=$(mktemp -d /tmp/fabench-shm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
[[ -x $COLL ]] || fail "no $COLL (build first)"

ALL=(--coll allreduce,allgather,reducescatter,alltoall --algo ring,rhd,oneshot,rd,auto --a2a-algo pairwise,allatonce)
per_size=9  # allreduce 5 algorithms, allgather 1, reducescatter 1, alltoall 2
shm_before=$(ls /dev/shm | grep -c '^fabench-' || true)

# run N DTYPES SIZES [EXTRA...]: rank 0's JSON in $WORK/N.json.
run() {
  local n=$1 dtypes=$2 sizes=$3
  shift 3
  local out=$WORK/$n.json rc=0
  timeout 300 "$LAUNCH" -n "$n" -- "$COLL" --transport shm "$@" --dtype "$dtypes" -s "$sizes" -n 3 --timeout 20 \
    --benchmark_format=json >"$out.all" 2>"$WORK/$n.err" || rc=$?
  ((rc == 0)) || { tail -20 "$WORK/$n.err"; fail "fabench-launch -n $n exited $rc"; }
  sed -n 's/^\[0\] //p' "$out.all" >"$out"
}

count() { echo $(($(tr -cd , <<<"$1" | wc -c) + 1)); }

for n in 1 2 3 4 5 6 7 8; do
  if ((n <= 3)); then dtypes=f32,bf16,f16 sizes=4,12,1028,2M; else dtypes=f32,bf16 sizes=4,12,1028,256K; fi
  run "$n" "$dtypes" "$sizes" "${ALL[@]}"
  expect=$((per_size * $(count "$dtypes") * $(count "$sizes")))
  # One rank moves nothing over the wire: busbw is 0 by definition ((n-1)/n).
  busbw=(--positive-if busbw_GBps:logical_bytes)
  ((n > 1)) || busbw=()
  "$PY" "$CHECK" "$WORK/$n.json" --expect "$expect" --zero wrong "${busbw[@]}" \
    --present time_max_us,time_min_us,algbw_GBps,wire_bytes,predicted_us,ranks,reduce_us,wait_us \
    --context transport,reduce_path,cost_model || fail "$n ranks: results"
  grep -q '"transport": "shm"' "$WORK/$n.json" || fail "$n ranks: the context does not say shm"
  ok "$n ranks over shared memory: $expect benchmarks, wrong = 0 everywhere"
done

# --compute none: the same schedule, no reductions or copies; named and labelled, no wrong counter.
run 4 bf16 1M --coll allreduce,alltoall --algo ring,rhd --compute none
"$PY" "$CHECK" "$WORK/4.json" --expect 3 --positive busbw_GBps --names 'compute:none,compute:none,compute:none' ||
  fail "--compute none: results"
if grep -q '"wrong"' "$WORK/4.json"; then fail "--compute none reported a wrong count it did not check"; fi
grep -q 'compute none: output not checked' "$WORK/4.json" || fail "--compute none: no label saying the output is unchecked"
ok "--compute none: 3 benchmarks named compute:none, output not checked and labelled so"

# --reduce-threads 2 with 5 sub-chunks per ring chunk: the same outputs.
run 3 f32,bf16 4,1028,3M --coll allreduce,reducescatter --algo ring,rhd --reduce-threads 2 --pipeline 5
"$PY" "$CHECK" "$WORK/3.json" --expect 18 --zero wrong --context reduce_threads || fail "--reduce-threads 2: results"
ok "--reduce-threads 2: 18 benchmarks, wrong = 0"

# Every rank unlinks its segment once the peers have mapped it.
shm_after=$(ls /dev/shm | grep -c '^fabench-' || true)
((shm_after <= shm_before)) || fail "segments left in /dev/shm: $(ls /dev/shm | grep '^fabench-')"
ok "no fabench segment left in /dev/shm"
