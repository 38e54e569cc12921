#!/usr/bin/env bash
# coll.sh: fabench-coll against the MPI library's own collectives and against
# the link (ib_write_bw), inside the Soft-RoCE VM:
#   tools/softroce-vm --wire -- bench/compare/coll.sh [--ranks 4,8] [--sizes 4K..4M]
# Builds bench/compare/mpi_coll.c with mpicc into a temp dir, then for each
# pair (A B A B ...): per rank count, MPI all-reduce + all-to-all, then
# fabench-coll (when built) with the same ranks and sizes, then ib_write_bw
# rxe0 -> rxe1 (64 MiB) as the link ceiling. Prints a markdown table of busbw
# (GB/s, G = 1e9, nccl-tests' definitions) per size: the median over pairs and
# the min..max spread, and the ratios fabench/MPI and ring/ib_write_bw.
# Ranks alternate rxe0 (even) and rxe1 (odd) so traffic crosses the veth wire;
# no shared-memory transport is enabled, so ranks cannot bypass it.
# Findings behind the MPI settings: docs/mpi-over-rxe.md.
set -euo pipefail
prog=coll.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"   # wait_listen
root=$(cd "$here/../.." && pwd)

usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]   (inside tools/softroce-vm --wire)
  --ranks LIST       rank counts, e.g. 4,8 (default 4)
  --sizes MIN..MAX   buffer sizes S in bytes, K/M/G = 2^10.. (default 4K..4M)
  --factor F         size step (default 4)
  --pairs N          MPI/fabench pairs, alternated A B A B (default 2; at least 1)
  --mpi LIST         MPI transports: ucx (Open MPI pml ucx over rc_verbs on the rxe
                     devices), tcp (pml ob1, btl tcp over veth0/veth1); default ucx
  --build DIR        fabench build dir (default $root/build/default)
  --fabench-args S   extra arguments for fabench-coll (e.g. "-D 1" or "--timeout 300"; the
                     algorithms are set: all-reduce ring,rhd,oneshot,rd,auto, all-to-all
                     pairwise,allatonce)
  --iters N          mpi_coll: at most N timed calls per size (default 20)
  --budget S         mpi_coll: seconds per size; fewer calls when N would take longer (default 1)
  --run-timeout S    kill one mpirun after S seconds (default 300)
  --out DIR          keep raw outputs there (default \$FABENCH_OUT/coll or a temp dir)
  --report FILE,...  run nothing: print the tables from results.tsv files of earlier runs
                     (their rows together: one run's pair 1 and another's count as 2 pairs)
Exit status: 0 when every run finished with no wrong element, 1 otherwise.
EOF
}

ranks_list=4 sizes=4K..4M factor=4 pairs=2 mpi_list=ucx build=$root/build/default
fabench_args="" iters=20 budget=1 run_timeout=300 out="" report=""
while (($#)); do
  case $1 in
    --ranks) ranks_list=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --factor) factor=$2; shift ;;
    --pairs) pairs=$2; shift ;;
    --mpi) mpi_list=$2; shift ;;
    --build) build=$2; shift ;;
    --fabench-args) fabench_args=$2; shift ;;
    --iters) iters=$2; shift ;;
    --budget) budget=$2; shift ;;
    --run-timeout) run_timeout=$2; shift ;;
    --out) out=$2; shift ;;
    --report) report=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ $sizes == *..* ]] || { echo "$prog: error: --sizes wants MIN..MAX, got '$sizes'" >&2; exit 2; }
smin=${sizes%%..*} smax=${sizes##*..}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --pairs wants a positive number" >&2; exit 2; }
IFS=, read -r -a ranks_arr <<<"$ranks_list"
IFS=, read -r -a mpi_arr <<<"$mpi_list"
for t in "${mpi_arr[@]}"; do
  [[ $t == ucx || $t == tcp ]] || { echo "$prog: error: --mpi: '$t' is neither ucx nor tcp" >&2; exit 2; }
done

# Debian's interpreter: a pyenv shim in PATH costs ~20 s per start under emulation.
PY=$(command -v /usr/bin/python3 || command -v python3)

# print_table RESULTS HAVE_FABENCH MPI_LIST PAIRS: median over pairs with the
# min..max spread, per size.
print_table() {
  "$PY" "$here/coll_table.py" "$@"
}

if [[ -n $report ]]; then
  IFS=, read -r -a report_files <<<"$report"
  rows=$(mktemp /tmp/fabench-coll-report.XXXXXX)
  trap 'rm -f "$rows"' EXIT
  for f in "${report_files[@]}"; do
    [[ -r $f ]] || { echo "$prog: error: --report: cannot read $f" >&2; exit 2; }
    cat "$f" >>"$rows"
  done
  print_table "$rows" 1 "$mpi_list" "the pairs of the given runs that measured each cell"
  exit 0
fi

dev0=${FABENCH_RXE_DEV0:-rxe0} dev1=${FABENCH_RXE_DEV1:-rxe1}
ip1=${FABENCH_RXE_IP1:-10.50.0.2}
for d in "$dev0" "$dev1"; do
  [[ -e /sys/class/infiniband/$d ]] ||
    { echo "$prog: error: no RDMA device $d; run inside the test bed: tools/softroce-vm --wire -- bench/compare/$prog" >&2; exit 1; }
done
[[ ${FABENCH_WIRE:-1} == 1 ]] ||
  echo "$prog: warning: not a --wire test bed: rxe0<->rxe1 traffic is delivered inside the kernel" >&2
for c in mpicc mpirun ib_write_bw; do
  command -v $c >/dev/null || { echo "$prog: error: $c not installed (on the host: tools/install-deps)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/fabench-coll.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [[ -z $out ]]; then
  if [[ -n ${FABENCH_OUT:-} ]]; then out=$FABENCH_OUT/coll; else out=$(mktemp -d /tmp/fabench-coll-out.XXXXXX); fi
fi
mkdir -p "$out"
results=$out/results.tsv
: >"$results"
failures=0
note() { echo "$prog: $*" >&2; }
t_start=$SECONDS

mpicc -O2 -Wall -o "$tmp/mpi_coll" "$here/mpi_coll.c" || { note "error: mpicc failed"; exit 1; }

# Each rank's device by rank parity: even -> rxe0/veth0, odd -> rxe1/veth1.
# "rankdev.sh mpi CMD...": sets UCX_NET_DEVICES; "rankdev.sh fabench BIN ARGS...": BIN -d DEV ARGS.
cat >"$tmp/rankdev.sh" <<EOF
#!/bin/bash
r=\${OMPI_COMM_WORLD_RANK:?not started by mpirun (Open MPI)}
if ((r % 2 == 0)); then dev=$dev0; else dev=$dev1; fi
mode=\$1; shift
case \$mode in
  mpi) export UCX_NET_DEVICES=\$dev:1; exec "\$@" ;;
  fabench) bin=\$1; shift; exec "\$bin" -d "\$dev" "\$@" ;;
esac
echo "rankdev.sh: bad mode \$mode" >&2; exit 2
EOF
chmod +x "$tmp/rankdev.sh"

mpirun_base=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
# MPI transports (see docs/mpi-over-rxe.md). ucx: RC over the rxe devices,
# UD only for wire-up; UD's destination-GID check must be off on rxe (it
# drops every UD packet otherwise, and UD endpoints time out). No sm/posix/cma.
# RC timeout 10 s instead of UCX's 1 s: with 64 MiB messages (16 MiB at 8
# ranks) on the emulated guest's 2 vCPUs, an ACK can take longer than 1 s, and
# the QP failed with a flushed send ("Work Request Flushed Error").
mpi_args() {
  case $1 in
    ucx) echo "--mca pml ucx --mca osc ucx --mca btl self -x UCX_TLS=rc_verbs,ud_verbs,self" \
      "-x UCX_IB_GID_INDEX=1 -x UCX_UD_VERBS_ETH_DGID_CHECK=n -x UCX_RC_VERBS_TIMEOUT=10s" ;;
    tcp) echo "--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include veth0,veth1" ;;
  esac
}

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

run_mpi() {  # PAIR TRANSPORT N
  local p=$1 t=$2 n=$3 log=$out/mpi-$2-n$3-p$1 rc=0
  note "pair $p: MPI ($t) x $n ranks ..."
  # shellcheck disable=SC2046
  timeout "$run_timeout" "${mpirun_base[@]}" -np "$n" $(mpi_args "$t") \
    "$tmp/rankdev.sh" mpi "$tmp/mpi_coll" -b "$smin" -e "$smax" -f "$factor" --coll allreduce,alltoall \
    --dtype f32 -n "$iters" -w 3 -T "$budget" --transport "openmpi-$t" >"$log.out" 2>"$log.err" || rc=$?
  ((rc == 0)) || { note "  MPI ($t, $n ranks) exited $rc; last lines of $log.err:"; tail -n 8 "$log.err" >&2; failures=$((failures + 1)); }
  "$PY" "$here/coll_rows.py" mpi "$p" "mpi-$t" "$log.out" >>"$results"
}

fabench_bin=$build/bench/fabench-coll
run_fabench() {  # PAIR N
  local p=$1 n=$2 log=$out/fabench-n$2-p$1 rc=0 port
  port=$(free_port)
  note "pair $p: fabench-coll x $n ranks ..."
  rm -rf "$log.ranks"
  # shellcheck disable=SC2086
  timeout "$run_timeout" "${mpirun_base[@]}" -np "$n" --output-filename "$log.ranks" -x MASTER_PORT="$port" \
    "$tmp/rankdev.sh" fabench "$fabench_bin" --coll allreduce,alltoall --algo ring,rhd,oneshot,rd,auto --a2a-algo pairwise,allatonce \
    -b "$smin" -e "$smax" -f "$factor" --dtype f32 --benchmark_format=json $fabench_args \
    >"$log.out" 2>"$log.err" || rc=$?
  local json=$log.ranks/1/rank.0/stdout
  [[ -s $json ]] || json=$log.out
  cp "$json" "$log.json" 2>/dev/null || true
  ((rc == 0)) || { note "  fabench-coll ($n ranks) exited $rc; last lines of $log.err:"; tail -n 8 "$log.err" >&2; failures=$((failures + 1)); }
  "$PY" "$here/coll_rows.py" fabench "$p" "$n" "$log.json" >>"$results" || { note "  fabench-coll: no usable output or failed benchmarks (above): $log.json"; failures=$((failures + 1)); }
}

run_link() {  # PAIR
  local p=$1 log=$out/ib_write_bw-p$1 port rc=0 spid
  port=$(free_port)
  note "pair $p: ib_write_bw $dev0 -> $dev1, 64 MiB ..."
  timeout 120 ib_write_bw -d "$dev1" -x 1 -p "$port" -s 67108864 -n 5 --report_gbits >"$log.srv" 2>&1 &
  spid=$!
  if ! wait_listen "$port" "$spid" "$log.srv"; then
    failures=$((failures + 1)); return
  fi
  timeout 120 ib_write_bw -d "$dev0" -x 1 -p "$port" -s 67108864 -n 5 --report_gbits "$ip1" >"$log.out" 2>&1 || rc=$?
  wait "$spid" || true
  local gbits
  gbits=$(awk '$1 == 67108864 { print $4 }' "$log.out" | tail -n 1)
  if ((rc != 0)) || [[ -z $gbits ]]; then
    note "  ib_write_bw exited $rc with no result:"; tail -n 8 "$log.out" >&2; failures=$((failures + 1)); return
  fi
  printf '%s\tib_write_bw\tlink\t-\t2\t67108864\t%s\t0\n' "$p" "$(awk -v g="$gbits" 'BEGIN { printf "%.6f", g / 8 }')" >>"$results"
}

have_fabench=0
if [[ -x $fabench_bin ]]; then
  have_fabench=1
else
  note "fabench-coll is not built ($fabench_bin absent): reporting MPI and ib_write_bw only"
fi

for ((p = 1; p <= pairs; p++)); do
  for n in "${ranks_arr[@]}"; do
    for t in "${mpi_arr[@]}"; do run_mpi "$p" "$t" "$n"; done
    ((have_fabench)) && run_fabench "$p" "$n"
  done
  run_link "$p"
done

print_table "$results" "$have_fabench" "$mpi_list" "$pairs"
echo
echo "$prog: raw outputs in $out; $((SECONDS - t_start)) s in all; $failures failed run(s)"
total_wrong=$(awk -F'\t' '{ s += $8 } END { print s + 0 }' "$results")
((total_wrong == 0)) || { echo "$prog: $total_wrong wrong element(s) reported (see the table)"; failures=$((failures + 1)); }
((failures == 0))
