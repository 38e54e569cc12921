#!/usr/bin/env bash
# ctest-timeout: 900
# fabench-coll across 2, 3, 4, 5 and 8 ranks (3 and 8, and 2 MiB at every rank
# count and type, with FABENCH_MATRIX=full), launched by fabench-launch, by
# Open MPI's mpirun and by srun under a real single-node Slurm: every
# collective, algorithm and type; 1 element, fewer elements than ranks,
# counts not divisible by the rank count, and a few MiB. Every output is
# checked bit for bit on every rank (wrong = 0) and all-reduce/all-gather
# outputs are bitwise identical across ranks (counted in wrong).
source "$(dirname "$0")/coll_common.bash"
source "$(dirname "$0")/slurm_common.bash"
ALL=(--coll allreduce,allgather,reducescatter,alltoall --algo ring,rhd,oneshot,rd,auto --a2a-algo pairwise,allatonce)
# Buffer bytes: f32 1 element (4), 3 elements (12), 257 elements (1028), 2 MiB.
SIZES=4,12,1028,2M
# The small ones alone. 2 MiB costs the most in the test bed (5 ranks, f32,
# one launch each: 24 s for 2M, 12 s for the three others, about 6 s of either
# starting the ranks): CI runs it at 2 ranks for every type and at 5 for f32;
# full_matrix everywhere.
SMALL=4,12,1028
# per collective x type x size: allreduce 5 algorithms, allgather 1, reducescatter 1, alltoall 2
per_size=9

# list_len LIST: the number of entries of a comma list.
list_len() { echo $(($(tr -cd , <<<"$1" | wc -c) + 1)); }

run_launch() {
  local n=$1 dtypes=$2 sizes=$3
  local nd ns
  nd=$(list_len "$dtypes") ns=$(list_len "$sizes")
  local out=$WORK/launch$n.json rc=0
  timeout 600 "$LAUNCH" -n "$n" -- "$COLL" -d "$DEV0,$DEV1" "${ALL[@]}" --dtype "$dtypes" -s "$sizes" -n 3 \
    --timeout 20 --benchmark_format=json >"$out" 2>"$WORK/launch$n.err" || rc=$?
  ((rc == 0)) || { tail -20 "$WORK/launch$n.err"; fail "fabench-launch -n $n exited $rc"; }
  # fabench-launch prefixes each line with [rank]: rank 0's JSON is the document.
  sed -n 's/^\[0\] //p' "$out" >"$out.0"
  check_coll_json "$out.0" $((per_size * nd * ns)) || fail "fabench-launch -n $n: results"
  ok "fabench-launch -n $n: $((per_size * nd * ns)) benchmarks, wrong = 0 everywhere"
}

run_launch 2 f32,bf16,f16 "$SIZES"

# --compute none (the same writes, no reductions or copies: named so, not checked, labelled so)
# and --reduce-threads 2 with 3 ring sub-chunks (checked), over RDMA.
rc=0
timeout 300 "$LAUNCH" -n 2 -- "$COLL" -d "$DEV0,$DEV1" --coll allreduce --algo ring,rhd --dtype bf16 -s 1M \
  --compute none -n 3 --timeout 20 --benchmark_format=json >"$WORK/none.json" 2>"$WORK/none.err" || rc=$?
((rc == 0)) || { tail -20 "$WORK/none.err"; fail "--compute none exited $rc"; }
sed -n 's/^\[0\] //p' "$WORK/none.json" >"$WORK/none.json.0"
"$PY" "$(dirname "$0")/check_bench_json.py" "$WORK/none.json.0" --expect 2 --positive busbw_GBps \
  --present reduce_us,wait_us --names 'compute:none,compute:none' || fail "--compute none: results"
grep -q 'compute none: output not checked' "$WORK/none.json.0" || fail "--compute none: not labelled unchecked"
! grep -q '"wrong"' "$WORK/none.json.0" || fail "--compute none reported a wrong count it did not check"
ok "--compute none over RDMA: 2 benchmarks named compute:none, labelled unchecked"
rc=0
timeout 300 "$LAUNCH" -n 2 -- "$COLL" -d "$DEV0,$DEV1" --coll allreduce,reducescatter --algo ring --dtype f32,bf16 \
  -s 1028,2M --reduce-threads 2 --pipeline 3 -n 3 --timeout 20 --benchmark_format=json >"$WORK/rt.json" \
  2>"$WORK/rt.err" || rc=$?
((rc == 0)) || { tail -20 "$WORK/rt.err"; fail "--reduce-threads 2 exited $rc"; }
sed -n 's/^\[0\] //p' "$WORK/rt.json" >"$WORK/rt.json.0"
check_coll_json "$WORK/rt.json.0" 8 || fail "--reduce-threads 2 --pipeline 3: results"
ok "--reduce-threads 2 --pipeline 3 over RDMA: 8 benchmarks, wrong = 0"
# CI: 2 ranks, 5 (odd, not a power of two), and 4 under mpirun and srun
# below, those two on the small sizes; full_matrix adds 3 and 8, and 2 MiB
# everywhere.
LAUNCHER_SIZES=$SMALL
if full_matrix; then
  LAUNCHER_SIZES=$SIZES
  run_launch 5 f32,f16 "$SIZES"
  run_launch 3 f32,bf16 "$SIZES"
  run_launch 8 bf16 4,12,1028,256K
else
  run_launch 5 f32 "$SIZES"
  run_launch 5 f16 "$SMALL"
fi
nls=$(list_len "$LAUNCHER_SIZES")

# mpirun: rank and size from OMPI_COMM_WORLD_*. One type per launcher below
# (bf16 here, f32 under srun): every type already ran under fabench-launch.
rc=0
timeout 600 mpirun --allow-run-as-root --oversubscribe -np 4 -x MASTER_PORT=18741 \
  "$COLL" -d "$DEV0,$DEV1" "${ALL[@]}" --dtype bf16 -s "$LAUNCHER_SIZES" -n 3 --timeout 20 \
  --benchmark_format=json >"$WORK/mpi.json" 2>"$WORK/mpi.err" || rc=$?
((rc == 0)) || { tail -20 "$WORK/mpi.err"; fail "mpirun -np 4 exited $rc"; }
check_coll_json "$WORK/mpi.json" $((per_size * nls)) || fail "mpirun -np 4: results"
grep -q '"launcher": "Open MPI' "$WORK/mpi.json" || fail "mpirun: the context does not name Open MPI as the launcher"
ok "mpirun -np 4: every benchmark correct; launcher recorded as Open MPI"

# srun under a real Slurm (slurmctld, slurmd, munge started here).
slurm_up || fail "Slurm did not start"
rc=0
MASTER_ADDR=127.0.0.1 MASTER_PORT=18742 timeout 600 srun -n 4 --overcommit \
  "$COLL" -d "$DEV0,$DEV1" "${ALL[@]}" --dtype f32 -s "$LAUNCHER_SIZES" -n 3 --timeout 20 \
  --benchmark_format=json >"$WORK/srun.json" 2>"$WORK/srun.err" || rc=$?
slurm_down || true
((rc == 0)) || { tail -20 "$WORK/srun.err"; fail "srun -n 4 exited $rc"; }
check_coll_json "$WORK/srun.json" $((per_size * nls)) || fail "srun -n 4: results"
grep -q '"launcher": "Slurm' "$WORK/srun.json" || fail "srun: the context does not name Slurm as the launcher"
ok "srun -n 4 under Slurm: every benchmark correct; launcher recorded as Slurm"
