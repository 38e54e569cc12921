# Shared by the coll_*.sh rxe tests: fabench-coll paths and a JSON check. Sourced.
source "$(dirname "$0")/bench_common.bash"
COLL=$build/bench/fabench-coll
LAUNCH=$2/tools/fabench-launch
[[ -x $COLL ]] || fail "no $COLL (build first)"

# check_coll_json FILE N_EXPECTED: every benchmark ran without error, wrong == 0,
# busbw reported for those that move data, the other counters present.
check_coll_json() {
  "$PY" "$(dirname "$0")/check_bench_json.py" "$1" --expect "$2" --zero wrong --positive-if busbw_GBps:logical_bytes \
    --present time_max_us,time_min_us,algbw_GBps,wire_bytes,predicted_us,ranks
}
