#!/usr/bin/env bash
# ep.sh: fabench-ep's goals (issue: wide expert parallelism), measured inside the Soft-RoCE VM:
#   tools/softroce-vm --wire --mem 6144 -- bench/compare/ep.sh [--ranks 2,4] [--tokens 16,64,256]
# Per pair (the tools' order alternates A B C, C B A, ...):
#  (a) fabench-ep, normal mode, uniform routing, dispatch + combine, against MPI_Alltoallv moving
#      the same per-destination counts (bench/compare/mpi_ep.c, built with mpicc; the counts from
#      fabench-ep --plan --plan-copies), per rank count and token count;
#  (b) the same bytes through fabench-coll's all-to-all (pairwise and allatonce, the faster
#      counts): S = the mean bytes a rank dispatches, its own copies included, one all-to-all
#      for dispatch and one for combine;
#  (c) low-latency mode, 2 ranks, --ll-tokens (128): dispatch p50 against its floor in the same
#      run (fabench-ep --reference: one plain write of the same bytes + one zero-byte
#      write-with-immediate per destination);
#  (d) hot-rank skews (--skews) against uniform at --skew-ranks ranks, --skew-tokens tokens in
#      --skew-mode (low-latency: one copy per (token, expert), so a hot rank receives R x the
#      mean; in normal mode DeepSeek's top-8 of 256 already reaches every one of 4 ranks):
#      combine p50 and received tokens per rank.
# Ranks alternate rxe0 (even) and rxe1 (odd), so traffic crosses the veth wire; Open MPI runs
# over UCX's rc_verbs on the same devices, no shared memory (docs/mpi-over-rxe.md).
# Prints markdown tables (bench/compare/ep_table.py); raw outputs and results.tsv go to --out.
set -euo pipefail
prog=ep.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
die() { echo "$prog: error: $*" >&2; exit 2; }

usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]   (inside tools/softroce-vm --wire)
  --ranks LIST        rank counts of (a) and (b) (default 2,4)
  --tokens LIST       tokens per rank of (a) and (b) (default 16,64,256)
  --model NAME        fabench-ep preset (default deepseek-v3)
  --ll-tokens N       tokens of (c), 2 ranks (default 128; 0: skip (c))
  --skews LIST        skews of (d) (default hot-rank:2,hot-rank:4; none: skip (d))
  --skew-ranks N      ranks of (d) (default 4)
  --skew-tokens N     tokens of (d) (default 32)
  --skew-mode M       mode of (d) (default low-latency)
  --pairs N           rounds, the tools' order alternating (default 2)
  --iters N           calls per benchmark and tool (default 10)
  --mpi T             ucx or tcp (default ucx)
  --build DIR         fabench build dir (default $root/build/default)
  --run-timeout S     kill one launch after S seconds (default 300)
  --out DIR           raw outputs (default \$FABENCH_OUT/ep or a temp dir)
  --report FILE       run nothing: the tables from an earlier run's results.tsv
EOF
}
ranks_list=2,4 tokens_list=16,64,256 model=deepseek-v3 ll_tokens=128 skews=hot-rank:2,hot-rank:4
skew_ranks=4 skew_tokens=32 skew_mode=low-latency pairs=2 iters=10 mpi=ucx build=$root/build/default run_timeout=300 out="" report=""
while (($#)); do
  case $1 in
    --ranks) ranks_list=$2; shift ;;
    --tokens) tokens_list=$2; shift ;;
    --model) model=$2; shift ;;
    --ll-tokens) ll_tokens=$2; shift ;;
    --skews) skews=$2; shift ;;
    --skew-ranks) skew_ranks=$2; shift ;;
    --skew-tokens) skew_tokens=$2; shift ;;
    --skew-mode) skew_mode=$2; shift ;;
    --pairs) pairs=$2; shift ;;
    --iters) iters=$2; shift ;;
    --mpi) mpi=$2; shift ;;
    --build) build=$2; shift ;;
    --run-timeout) run_timeout=$2; shift ;;
    --out) out=$2; shift ;;
    --report) report=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
PY=$(command -v /usr/bin/python3 || command -v python3)
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "--pairs wants a positive number"
[[ $mpi == ucx || $mpi == tcp ]] || die "--mpi: ucx or tcp"
if [[ -n $report ]]; then
  [[ -r $report ]] || die "--report: cannot read $report"
  exec "$PY" "$here/ep_table.py" "$report"
fi
IFS=, read -r -a ranks_arr <<<"$ranks_list"
IFS=, read -r -a tokens_arr <<<"$tokens_list"
EP=$build/bench/fabench-ep COLL=$build/bench/fabench-coll
for b in "$EP" "$COLL"; do [[ -x $b ]] || die "no $b (build first)"; done
dev0=${FABENCH_RXE_DEV0:-rxe0} dev1=${FABENCH_RXE_DEV1:-rxe1}
for d in "$dev0" "$dev1"; do
  [[ -e /sys/class/infiniband/$d ]] || die "no RDMA device $d; run inside the test bed: tools/softroce-vm --wire -- bench/compare/$prog"
done
for c in mpicc mpirun; do command -v $c >/dev/null || die "$c not installed (on the host: tools/install-deps)"; done

tmp=$(mktemp -d /tmp/fabench-ep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[[ -n $out ]] || out=${FABENCH_OUT:+$FABENCH_OUT/ep}
[[ -n $out ]] || out=$(mktemp -d /tmp/ep-compare.XXXXXX)
mkdir -p "$out"
results=$out/results.tsv
: >"$results"
failures=0
note() { echo "$prog: $*" >&2; }
t_start=$SECONDS
mpicc -O2 -Wall -o "$tmp/mpi_ep" "$here/mpi_ep.c" || die "mpicc failed"

# MPI ranks: UCX on the device of the rank's parity (coll.sh's rankdev.sh).
cat >"$tmp/rankdev.sh" <<EOF
#!/bin/bash
r=\${OMPI_COMM_WORLD_RANK:?not started by mpirun (Open MPI)}
if ((r % 2 == 0)); then export UCX_NET_DEVICES=$dev0:1; else export UCX_NET_DEVICES=$dev1:1; fi
exec "\$@"
EOF
chmod +x "$tmp/rankdev.sh"
mpirun_base=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
# shellcheck disable=SC2054  # commas inside MPI's arguments, not array separators
if [[ $mpi == ucx ]]; then
  mpi_args=(--mca pml ucx --mca osc ucx --mca btl self -x UCX_TLS=rc_verbs,ud_verbs,self -x UCX_IB_GID_INDEX=1
    -x UCX_UD_VERBS_ETH_DGID_CHECK=n -x UCX_RC_VERBS_TIMEOUT=10s)
else
  mpi_args=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include veth0,veth1)
fi
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The counts of (N, T): $tmp/counts-nN-tT (N lines of N copies) and "D C S" (bytes per copy
# each way, the coll size) in $tmp/bytes-nN-tT.
plan_counts() {  # N T
  local n=$1 t=$2 f=$tmp/plan-n$1-t$2 d c s
  "$EP" --plan --plan-copies --ep "$n" --model "$model" --tokens "$t" --mode normal >"$f" || die "fabench-ep --plan failed"
  awk '$1 == "copies" { sub(/.*: /, ""); print }' "$f" >"$tmp/counts-n$n-t$t"
  read -r d c < <(awk '$1 == "bytes" { print $6, $8 }' "$f")
  # S: the mean bytes a rank dispatches (its own copies included), a multiple of 64 x N
  s=$(awk -v n="$n" -v d="$d" '{ for (i = 1; i <= NF; ++i) s += $i }
    END { printf "%d\n", int(s * d / n / (64 * n)) * 64 * n }' "$tmp/counts-n$n-t$t")
  echo "$d $c $s" >"$tmp/bytes-n$n-t$t"
  [[ $(wc -l <"$tmp/counts-n$n-t$t") -eq $n ]] || die "fabench-ep --plan-copies printed no $n x $n counts ($f)"
}

run_ep() {  # PAIR N TAG ARGS...: one fabench-ep launch; rows tagged TAG
  local p=$1 n=$2 tag=$3 log rc=0; shift 3
  log=$out/ep-$tag-n$n-p$p
  note "pair $p: fabench-ep $tag x $n ranks ..."
  rm -rf "$log.ranks"
  timeout "$run_timeout" "${mpirun_base[@]}" -np "$n" --output-filename "$log.ranks" -x MASTER_PORT="$(free_port)" \
    "$EP" -d "$dev0,$dev1" -x 1 --timeout 60 -n "$iters" --model "$model" --benchmark_format=json "$@" \
    >"$log.out" 2>"$log.err" || rc=$?
  local json=$log.ranks/1/rank.0/stdout
  [[ -s $json ]] || json=$log.out
  cp "$json" "$log.json" 2>/dev/null || true
  ((rc == 0)) || { note "  fabench-ep exited $rc; last lines of $log.err:"; tail -n 8 "$log.err" >&2; failures=$((failures + 1)); }
  "$PY" "$here/ep_table.py" --rows ep "$p" "$n" "$log.json" "$tag" >>"$results" || failures=$((failures + 1))
}

run_mpi() {  # PAIR N T
  local p=$1 n=$2 t=$3 log=$out/mpi-n$2-t$3-p$1 rc=0 d c s
  read -r d c s <"$tmp/bytes-n$n-t$t"
  note "pair $p: MPI_Alltoallv ($mpi) x $n ranks, $t tokens ..."
  timeout "$run_timeout" "${mpirun_base[@]}" -np "$n" "${mpi_args[@]}" "$tmp/rankdev.sh" "$tmp/mpi_ep" \
    --counts "$tmp/counts-n$n-t$t" --dispatch-bytes "$d" --combine-bytes "$c" -n "$iters" -w 3 --label "t$t" \
    >"$log.out" 2>"$log.err" || rc=$?
  ((rc == 0)) || { note "  MPI exited $rc; last lines of $log.err:"; tail -n 8 "$log.err" >&2; failures=$((failures + 1)); }
  "$PY" "$here/ep_table.py" --rows mpi "$p" "$t" "$log.out" >>"$results" || failures=$((failures + 1))
}

run_coll() {  # PAIR N: every token count's S in one launch
  local p=$1 n=$2 log=$out/coll-n$2-p$1 rc=0 sizes="" t d c s
  for t in "${tokens_arr[@]}"; do
    read -r d c s <"$tmp/bytes-n$n-t$t"
    sizes+=${sizes:+,}$s
    echo "$s $t" >>"$tmp/coll-sizes-n$n"
  done
  note "pair $p: fabench-coll all-to-all x $n ranks, sizes $sizes ..."
  rm -rf "$log.ranks"
  timeout "$run_timeout" "${mpirun_base[@]}" -np "$n" --output-filename "$log.ranks" -x MASTER_PORT="$(free_port)" \
    "$COLL" -d "$dev0,$dev1" -x 1 --timeout 60 -n "$iters" --coll alltoall --a2a-algo pairwise,allatonce --dtype bf16 \
    -s "$sizes" --benchmark_format=json >"$log.out" 2>"$log.err" || rc=$?
  local json=$log.ranks/1/rank.0/stdout
  [[ -s $json ]] || json=$log.out
  cp "$json" "$log.json" 2>/dev/null || true
  ((rc == 0)) || { note "  fabench-coll exited $rc; last lines of $log.err:"; tail -n 8 "$log.err" >&2; failures=$((failures + 1)); }
  "$PY" "$here/ep_table.py" --rows coll "$p" "$n" "$log.json" "$tmp/coll-sizes-n$n" >>"$results" || failures=$((failures + 1))
}

for n in "${ranks_arr[@]}"; do
  for t in "${tokens_arr[@]}"; do plan_counts "$n" "$t"; done
done
for ((p = 1; p <= pairs; p++)); do
  for n in "${ranks_arr[@]}"; do
    rm -f "$tmp/coll-sizes-n$n"
    steps=(ep mpi coll)
    ((p % 2)) || steps=(coll mpi ep)
    for s in "${steps[@]}"; do
      case $s in
        ep) run_ep "$p" "$n" uniform --mode normal --tokens "$tokens_list" ;;
        mpi) for t in "${tokens_arr[@]}"; do run_mpi "$p" "$n" "$t"; done ;;
        coll) run_coll "$p" "$n" ;;
      esac
    done
  done
  ((ll_tokens > 0)) && run_ep "$p" 2 ll --mode low-latency --tokens "$ll_tokens" --reference
  if [[ $skews != none ]]; then
    IFS=, read -r -a skew_arr <<<"$skews"
    run_ep "$p" "$skew_ranks" skew-uniform --mode "$skew_mode" --tokens "$skew_tokens"
    for k in "${skew_arr[@]}"; do run_ep "$p" "$skew_ranks" "skew-${k/:/}" --mode "$skew_mode" --tokens "$skew_tokens" --skew "$k"; done
  fi
done

"$PY" "$here/ep_table.py" "$results"
echo
echo "$prog: raw outputs in $out; $((SECONDS - t_start)) s in all; $failures failed run(s)"
((failures == 0))
