#!/usr/bin/env bash
# ctest-timeout: 600
# fabench-congest over real verbs on the pair (rxe0/rxe1): 4 ranks, congestors 2 and 3
# (put-incast), victims 0 and 1; each victim test alone and loaded: latency and bandwidth under
# fabench-launch, the all-reduce under mpirun. Each benchmark has its
# CIF and both phases' percentiles in order; the all-reduce's output is the exact sum on every
# victim (wrong == 0). The switch scenarios (a hot port named, a killed congestor) are
# vm:congest_port's.
source "$(dirname "$0")/bench_common.bash"
CONGEST=$build/bench/fabench-congest
LAUNCH=$2/tools/fabench-launch
[[ -x $CONGEST ]] || fail "no $CONGEST (build first)"
COMMON=(-d "$DEV0,$DEV1" -x 1 --timeout 20 --congestor-ranks 2,3 --pattern put-incast --rounds 1)

check_congest_json() {
  local file=$1 n=$2; shift 2
  "$PY" "$(dirname "$0")/check_bench_json.py" "$file" --expect "$n" --positive cif,cif_p99,samples \
    --ordered isolated_p50_us,isolated_p90_us,isolated_p99_us,isolated_p999_us \
    --ordered loaded_p50_us,loaded_p90_us,loaded_p99_us,loaded_p999_us --context device "$@"
}

t0=$SECONDS
"$LAUNCH" -n 4 --timeout 300 -- "$CONGEST" "${COMMON[@]}" --test latency -n 60 \
  --benchmark_out="$WORK/lat.json" --benchmark_out_format=json >"$WORK/lat.out" 2>&1 || {
  tail -30 "$WORK/lat.out"
  fail "latency victims: fabench-congest failed"
}
check_congest_json "$WORK/lat.json" 1 --names 'congest/latency/put-incast' --positive behind_cif_p99 ||
  fail "latency victims: results"
ok "latency victims, alone and beside put-incast ($((SECONDS - t0)) s)"

t0=$SECONDS
"$LAUNCH" -n 4 --timeout 300 -- "$CONGEST" "${COMMON[@]}" --test bandwidth -n 8 \
  --benchmark_out="$WORK/bw.json" --benchmark_out_format=json >"$WORK/bw.out" 2>&1 || {
  tail -30 "$WORK/bw.out"
  fail "bandwidth victims: fabench-congest failed"
}
"$PY" "$(dirname "$0")/check_bench_json.py" "$WORK/bw.json" --expect 1 --positive cif,isolated_GBps,loaded_GBps \
  --ordered isolated_p999_GBps,isolated_p99_GBps,isolated_p90_GBps,isolated_p50_GBps || fail "bandwidth victims: results"
ok "bandwidth victims ($((SECONDS - t0)) s)"

# A real launcher: mpirun (rank and size from OMPI_COMM_WORLD_*).
rc=0
timeout 300 mpirun --allow-run-as-root --oversubscribe -np 4 -x MASTER_PORT=18772 \
  "$CONGEST" "${COMMON[@]}" --test allreduce -n 40 --benchmark_format=json >"$WORK/mpi.json" 2>"$WORK/mpi.err" || rc=$?
((rc == 0)) || { tail -20 "$WORK/mpi.err"; fail "mpirun -np 4 exited $rc"; }
check_congest_json "$WORK/mpi.json" 1 --zero wrong --names 'congest/allreduce/put-incast' || fail "mpirun -np 4: results"
grep -q 'hot port: n/a (all-reduce)' "$WORK/mpi.json" || fail "mpirun -np 4: the all-reduce's label should attribute no port"
ok "mpirun -np 4: the victims' all-reduce exact on every victim, alone and loaded"
