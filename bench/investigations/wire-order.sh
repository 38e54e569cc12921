#!/usr/bin/env bash
# wire-order.sh: does the test bed's wire keep each QP's packets in order?
# Runs clean RDMA write bandwidth runs (fabench-bw, rxe0 -> rxe1 over the
# veth pair) with Receive Packet Steering on the veths off and on, alternating,
# and prints per setting the responder's out-of-sequence requests and
# duplicates, the requester's sequence NAKs and retries, and the packets the
# kernel dropped (softnet_stat): a gap with no drop is a reordering. Inside the
# Soft-RoCE VM:
#   tools/softroce-vm --wire -- bench/investigations/wire-order.sh [--rounds N] [--runs R]
set -euo pipefail
prog=wire-order.sh
. "$(dirname "$0")/../compare/common.sh"   # wait_listen

usage() {
  cat <<EOF
Usage: bench/investigations/$prog [--rounds N] [--runs R] [--size BYTES] [--iters N] [--build DIR]
  --rounds N    rounds; each runs every setting once, in alternating order (default 2)
  --runs R      fabench-bw runs per setting and round (default 10)
  --size BYTES  message size (default 65536)
  --iters N     messages per run (default 500)
  --build DIR   the build with bench/fabench-bw (default build/default)
Settings: rps=off (each packet waits on the backlog of the CPU that sent it)
and rps=on (rps_cpus of every veth and switch port set to all CPUs, as
tools/softroce-vm does: a flow is steered to one CPU by its hash).
EOF
}

rounds=2 runs=10 size=65536 iters=500 build=build/default
while (($#)); do
  case $1 in
    --rounds) rounds=${2:?--rounds needs a count}; shift ;;
    --runs) runs=${2:?--runs needs a count}; shift ;;
    --size) size=${2:?--size needs bytes}; shift ;;
    --iters) iters=${2:?--iters needs a count}; shift ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for v in rounds runs size iters; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --$v needs a positive whole number, not '${!v}'" >&2; exit 2; }
done
[[ ${FABENCH_WIRE:-0} == 1 ]] || { echo "$prog: error: run inside 'tools/softroce-vm --wire'" >&2; exit 2; }
bw=$build/bench/fabench-bw
[[ -x $bw ]] || { echo "$prog: error: $bw not found (build first, or --build DIR)" >&2; exit 2; }
dev0=${FABENCH_RXE_DEV0:-rxe0} dev1=${FABENCH_RXE_DEV1:-rxe1} ip1=${FABENCH_RXE_IP1:-10.50.0.2}
port=18719

hw() { local v; read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2"; echo "$v"; }
drops() { # packets dropped by all CPUs' backlogs (softnet_stat, 2nd column, hex)
  local n=0 _p d _r
  while read -r _p d _r; do n=$((n + 16#$d)); done </proc/net/softnet_stat
  echo $n
}
mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
rps() { # rps off|on
  local f m=0
  [[ $1 == on ]] && m=$mask
  for f in /sys/class/net/veth*/queues/rx-*/rps_cpus /sys/class/net/swp*/queues/rx-*/rps_cpus; do
    [[ -w $f ]] && echo "$m" >"$f"
  done
  return 0
}

log=$(mktemp /tmp/wire-order.XXXXXX)
"$bw" -d "$dev1" -p $port --timeout 60 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -f "$log"' EXIT
wait_listen $port $server "$log" || exit 1

declare -A tot
keys=(gaps dups naks retries drops fails)
for s in off on; do for k in "${keys[@]}"; do tot[$s.$k]=0; done; done
echo "# $runs runs of fabench-bw -s $size -n $iters -u 20 per setting and round, $(nproc) CPUs"
printf '%-6s %-4s %5s %5s %5s %8s %6s %6s\n' round rps gaps dups naks retries drops fails
for ((r = 1; r <= rounds; r++)); do
  order=(off on); ((r % 2 == 0)) && order=(on off)
  for s in "${order[@]}"; do
    rps "$s"
    o=$(hw "$dev1" out_of_seq_request) d=$(hw "$dev1" duplicate_request)
    n=$(hw "$dev0" rcvd_seq_err) c=$(hw "$dev0" completer_retry_err) k=$(drops) f=0
    for ((i = 0; i < runs; i++)); do
      timeout 120 "$bw" -d "$dev0" -p $port "$ip1" -s "$size" -n "$iters" --timeout 20 -u 20 \
        --counters none >/dev/null 2>&1 || f=$((f + 1))
    done
    o=$(($(hw "$dev1" out_of_seq_request) - o)) d=$(($(hw "$dev1" duplicate_request) - d))
    n=$(($(hw "$dev0" rcvd_seq_err) - n)) c=$(($(hw "$dev0" completer_retry_err) - c)) k=$(($(drops) - k))
    printf '%-6s %-4s %5d %5d %5d %8d %6d %6d\n' "$r" "$s" "$o" "$d" "$n" "$c" "$k" "$f"
    for kv in gaps:$o dups:$d naks:$n retries:$c drops:$k fails:$f; do
      tot[$s.${kv%%:*}]=$((tot[$s.${kv%%:*}] + ${kv#*:}))
    done
  done
done
for s in off on; do
  printf '%-6s %-4s %5d %5d %5d %8d %6d %6d\n' all "$s" "${tot[$s.gaps]}" "${tot[$s.dups]}" \
    "${tot[$s.naks]}" "${tot[$s.retries]}" "${tot[$s.drops]}" "${tot[$s.fails]}"
done
echo "gaps: out_of_seq_request ($dev1); dups: duplicate_request ($dev1); naks: rcvd_seq_err ($dev0);"
echo "retries: completer_retry_err ($dev0); drops: softnet_stat; fails: runs that exited non-zero"
