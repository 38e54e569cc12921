# Shared by the kv_*.sh rxe tests: fabench-kv paths and its JSON check. Sourced.
source "$(dirname "$0")/bench_common.bash"
KV=$build/bench/fabench-kv
LAUNCH=$2/tools/fabench-launch
[[ -x $KV ]] || fail "no $KV (build first)"

# check_kv_json FILE N_EXPECTED [MORE check_bench_json.py ARGS]: no errors, no
# wrong page, rates and per-request times reported, the shape in the context.
check_kv_json() {
  local file=$1 n=$2; shift 2
  "$PY" "$(dirname "$0")/check_bench_json.py" "$file" --expect "$n" --zero wrong \
    --positive GBps,p50_us,wrs_per_request,wr_rate,bytes_per_request,bytes_per_second \
    --ordered p50_us,p99_us,max_us --context kv_model,kv_bytes_per_token,kv_tp,device "$@"
}

# kv_run NAME NRANKS ARGS...: fabench-kv on NRANKS local ranks, JSON to $WORK/NAME.json.
kv_run() {
  local name=$1 n=$2; shift 2
  local t0=$SECONDS
  "$LAUNCH" -n "$n" --timeout 240 -- "$KV" -x 1 --timeout 10 -n 2 \
    --benchmark_out="$WORK/$name.json" --benchmark_out_format=json "$@" >"$WORK/$name.out" 2>&1 || {
    tail -30 "$WORK/$name.out"
    fail "$name: fabench-kv failed"
  }
  echo "($name: $((SECONDS - t0)) s)"
}
