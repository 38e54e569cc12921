#!/usr/bin/env bash
# ctest-timeout: 900
# fabench-ep over real verbs: 2, 3 and 4 ranks on rxe0/rxe1, normal and low-latency modes,
# bf16 and fp8, uniform and hot-rank routing, under fabench-launch, mpirun and srun (a real
# single-node Slurm). Every dispatched copy and every combined token of
# the checked call is compared bit for bit (wrong == 0); the per-call counters are present and
# ordered; the JSON context carries the shape. A rank killed mid-dispatch is named by rank 0.
source "$(dirname "$0")/bench_common.bash"
EP=$build/bench/fabench-ep
LAUNCH=$2/tools/fabench-launch
[[ -x $EP ]] || fail "no $EP (build first)"

check_ep_json() {
  local file=$1 n=$2; shift 2
  "$PY" "$(dirname "$0")/check_bench_json.py" "$file" --expect "$n" --zero wrong \
    --positive dispatch_us,combine_us,recv_tokens_max,recv_tokens_mean,predicted_us \
    --ordered dispatch_us,dispatch_p99_us --ordered combine_us,combine_p99_us \
    --context ep_model,ep_top_k,ep_routing,device "$@"
}

ep_run() {
  local name=$1 n=$2; shift 2
  local t0=$SECONDS
  "$LAUNCH" -n "$n" --timeout 300 -- "$EP" -d "$DEV0,$DEV1" -x 1 --timeout 20 -n 3 \
    --benchmark_out="$WORK/$name.json" --benchmark_out_format=json "$@" >"$WORK/$name.out" 2>&1 || {
    tail -30 "$WORK/$name.out"
    fail "$name: fabench-ep failed"
  }
  echo "($name: $((SECONDS - t0)) s)"
}

SMALL=(--model mixtral-8x7b --tokens 16)
ep_run two 2 "${SMALL[@]}" --mode normal,low-latency --dtype bf16,fp8
check_ep_json "$WORK/two.json" 4 --names 'ep/mixtral-8x7b/normal/bf16/t16/uniform,normal/fp8,low-latency/bf16,low-latency/fp8' ||
  fail "2 ranks: results"
ok "2 ranks: normal and low-latency, bf16 and fp8, every copy and token checked"

ep_run three 3 --model qwen3-235b-a22b --tokens 8 --mode normal,low-latency
check_ep_json "$WORK/three.json" 2 || fail "3 ranks: results"
ok "3 ranks (128 experts: 43, 43, 42 per rank)"

ep_run hot 4 --model qwen3-235b-a22b --tokens 32 --skew hot-rank:3 --dtype fp8
check_ep_json "$WORK/hot.json" 1 --names 'hot-rank:3' || fail "4 ranks, hot rank: results"
ok "4 ranks, hot-rank:3"

# Real launchers: mpirun (rank and size from OMPI_COMM_WORLD_*) and srun under a real Slurm.
rc=0
timeout 600 mpirun --allow-run-as-root --oversubscribe -np 3 -x MASTER_PORT=18762 \
  "$EP" -d "$DEV0,$DEV1" -x 1 --timeout 20 -n 3 "${SMALL[@]}" --mode low-latency \
  --benchmark_format=json >"$WORK/mpi.json" 2>"$WORK/mpi.err" || rc=$?
((rc == 0)) || { tail -20 "$WORK/mpi.err"; fail "mpirun -np 3 exited $rc"; }
check_ep_json "$WORK/mpi.json" 1 || fail "mpirun -np 3: results"
grep -q '"launcher": "Open MPI' "$WORK/mpi.json" || fail "mpirun: the context does not name Open MPI"
ok "mpirun -np 3: every copy and token checked; launcher Open MPI"
source "$(dirname "$0")/slurm_common.bash"
slurm_up || fail "Slurm did not start"
rc=0
MASTER_ADDR=127.0.0.1 MASTER_PORT=18763 timeout 600 srun -n 2 --overcommit \
  "$EP" -d "$DEV0,$DEV1" -x 1 --timeout 20 -n 3 "${SMALL[@]}" \
  --benchmark_format=json >"$WORK/srun.json" 2>"$WORK/srun.err" || rc=$?
slurm_down || true
((rc == 0)) || { tail -20 "$WORK/srun.err"; fail "srun -n 2 exited $rc"; }
check_ep_json "$WORK/srun.json" 1 || fail "srun -n 2: results"
grep -q '"launcher": "Slurm' "$WORK/srun.json" || fail "srun: the context does not name Slurm"
ok "srun -n 2 under Slurm: every copy and token checked"

# A rank killed in the middle of its calls: every other rank exits non-zero within the
# timeout, naming it. Ranks started by hand (RANK/WORLD_SIZE) so the test knows their pids.
source "$(dirname "$0")/ranks_common.bash"
N=3
T=5
RANK_PIDS=()
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=$N MASTER_ADDR=127.0.0.1 MASTER_PORT=18761 \
    "$EP" -d "$DEV0,$DEV1" -x 1 --model mixtral-8x7b --tokens 64 -n 100000000 --timeout $T \
    >"$WORK/rank$r.out" 2>&1 &
  RANK_PIDS+=($!)
  PIDS+=($!)
done
for _ in {1..600}; do has "$WORK/rank0.out" "world up" && break; nap 0.1; done
grep -q "world up" "$WORK/rank0.out" || { cat "$WORK"/rank*.out; fail "the world never came up"; }
nap 3
kill -9 "${RANK_PIDS[2]}"
expect_named 2 "rank 2 killed mid-dispatch" $((T + 3))

# Bad input: one line, status 2.
rc=0
"$EP" --model gpt-5 >"$WORK/bad.out" 2>&1 || rc=$?
((rc == 2)) && grep -q 'unknown model "gpt-5"' "$WORK/bad.out" || { cat "$WORK/bad.out"; fail "bad model"; }
ok "bad input: exit 2, one line"
