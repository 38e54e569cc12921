#!/usr/bin/env bash
# kv.sh: fabench-kv's performance claims, measured inside the Soft-RoCE VM:
#   tools/softroce-vm --wire --mem 6144 -- bench/compare/kv.sh [--pairs 3]
# 1. Efficiency: Llama-3.1-70B, TP 1 -> 1, ISL 4096 (1.34 GB per request),
#    push and pull: the contiguous ceiling, layer-major paged with runs merged
#    (fragmentation 0), and unmerged at 100 % fragmentation, one run (rank 0 on
#    rxe0 = prefill, rank 1 on rxe1 = decode, over the veth wire).
# 2. Posting overhead: WRs/s at 4 KiB per WR, fabench-kv --wr-sweep against
#    ib_write_bw -s 4096 with the same queue settings (256 WRs in flight, a
#    signaled WR every 16), in pairs whose order alternates (A B, B A, ...);
#    prints the median ratio. Both tools as perftest.sh runs them: SCHED_IDLE,
#    the writer (fabench-kv rank 0, ib_write_bw's client) on CPU 0, the target
#    on CPU 1, each device's receive processing steered to its side's CPU
#    (--no-pin: neither, as kv.sh ran before).
# Prints markdown tables; raw outputs go to --out.
set -euo pipefail
prog=kv.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/common.sh"   # wait_listen, testbed_devices, steer_rx, restore_rps
die() { echo "$prog: error: $*" >&2; exit 2; }

usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]   (inside tools/softroce-vm --wire)
  --pairs N        fabench-kv / ib_write_bw pairs for the WR rate (default 3)
  --wrs N          4 KiB WRs per WR-rate run (default 32768 = 128 MiB)
  --model NAME     model of the efficiency run (default llama-3.1-70b)
  --isl N          prompt tokens of the efficiency run (default 4096)
  --max-wr-bytes B largest WR of the efficiency run (default 64M: on rxe under
                   emulation one 671 MB write made no progress for 120 s)
  --skip-efficiency  only the WR rate
  --kv-args S      extra arguments for fabench-kv in the WR-rate runs (e.g. "--spin 0")
  --no-pin         WR rate: no SCHED_IDLE, no CPU per side, no receive steering
  --build DIR      fabench build dir (default $root/build/default)
  --out DIR        keep raw outputs there (default \$FABENCH_OUT/kv or a temp dir)
EOF
}
pairs=3 wrs=32768 model=llama-3.1-70b isl=4096 eff=1 max_wr=64M build=$root/build/default out="" kv_args="" pin=1
while (($#)); do
  case $1 in
    --pairs) pairs=$2; shift ;;
    --wrs) wrs=$2; shift ;;
    --model) model=$2; shift ;;
    --isl) isl=$2; shift ;;
    --skip-efficiency) eff=0 ;;
    --kv-args) kv_args=$2; shift ;;
    --no-pin) pin=0 ;;
    --max-wr-bytes) max_wr=$2; shift ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ -n $out ]] || out=${FABENCH_OUT:+$FABENCH_OUT/kv}
[[ -n $out ]] || out=$(mktemp -d /tmp/kv-compare.XXXXXX)
mkdir -p "$out"
KV=$build/bench/fabench-kv
LAUNCH=$root/tools/fabench-launch
PY=$(command -v /usr/bin/python3 || command -v python3)
[[ -x $KV ]] || { echo "$prog: error: no $KV (build first)" >&2; exit 2; }

if ((eff)); then
  echo "== efficiency: $model ISL $isl, push and pull (one run), WRs of at most $max_wr =="
  "$LAUNCH" -n 2 --timeout 3000 -- "$KV" -d rxe0,rxe1 -x 1 --timeout 120 --model "$model" --isl "$isl" \
    --max-wr-bytes "$max_wr" --layout layer --frag 0,1 --merge on,off --direction push,pull -n 1 \
    --benchmark_filter='contiguous|/frag0/|/frag1\+unmerged/' \
    --benchmark_out="$out/efficiency.json" --benchmark_out_format=json >"$out/efficiency.out" 2>&1 ||
    { tail -20 "$out/efficiency.out"; echo "$prog: efficiency run failed" >&2; exit 1; }
  "$PY" "$here/kv_tables.py" efficiency "$out/efficiency.json"
fi

# The WR-rate pairs as perftest.sh runs its tools (see its comments): SCHED_IDLE,
# the writer on CPU 0 and the target on CPU 1 (a fabench-kv rank on the CPU of
# its number: RANK, set by fabench-launch), each device's receive processing on
# its side's CPU. The devices, the server's address and the GID index: the test
# bed's (testbed_devices, common.sh).
testbed_devices "--skip-efficiency"
W=() T=() PIN=() setting="unpinned"
if ((pin)); then
  (($(nproc) >= 2)) || die "the WR rate pins its two sides to CPUs 0 and 1: needs 2 CPUs (or --no-pin)"
  for t in taskset chrt; do command -v $t >/dev/null || die "$t is needed (or --no-pin)"; done
  trap restore_rps EXIT
  steer_rx "$DEV0" 0
  steer_rx "$DEV1" 1
  W=(chrt -i 0 taskset -c 0) T=(chrt -i 0 taskset -c 1)
  # shellcheck disable=SC2016 # $RANK and $0: the rank's shell expands them
  PIN=(bash -c 'exec chrt -i 0 taskset -c "$RANK" "$0" "$@"')
  setting="SCHED_IDLE, writer on CPU 0, target on CPU 1, receive steering: $RPS_DESC"
fi
echo "== WR rate at 4 KiB: fabench-kv --wr-sweep${kv_args:+ $kv_args} vs ib_write_bw, $pairs pairs of $wrs WRs =="
echo "($setting)"
isl_rate=$((wrs * 4096 / 131072))  # llama-3.1-8b: 131072 B/token
# One pair: fabench-kv then ib_write_bw, or the other way round (the order
# alternates, so a drift of the guest hits both alike).
kv_rate() {  # PAIR
  # shellcheck disable=SC2086 # kv_args: split into words on purpose
  "$LAUNCH" -n 2 --timeout 600 -- "${PIN[@]}" "$KV" -d "$DEV0,$DEV1" -x "$GID" --timeout 60 --model llama-3.1-8b --isl "$isl_rate" \
    --wr-sweep -b 4K -e 4K --signal 16 -n 1 $kv_args \
    --benchmark_out="$out/kv-rate-$1.json" --benchmark_out_format=json >"$out/kv-rate-$1.out" 2>&1 ||
    { tail -20 "$out/kv-rate-$1.out"; echo "$prog: fabench-kv run $1 failed" >&2; exit 1; }
}
ib_rate() {  # PAIR
  local spid
  timeout 300 "${T[@]}" ib_write_bw -d "$DEV1" -x "$GID" -s 4096 -t 256 -Q 16 -n "$wrs" -p 18790 >"$out/ib-server-$1.out" 2>&1 &
  spid=$!
  wait_listen 18790 $spid "$out/ib-server-$1.out" || exit 1
  timeout 300 "${W[@]}" ib_write_bw -d "$DEV0" -x "$GID" -s 4096 -t 256 -Q 16 -n "$wrs" -p 18790 "$IP1" >"$out/ib-rate-$1.out" 2>&1 ||
    { cat "$out/ib-rate-$1.out"; echo "$prog: ib_write_bw run $1 failed" >&2; exit 1; }
  wait $spid || true
}
for p in $(seq "$pairs"); do
  if ((p % 2)); then kv_rate "$p"; ib_rate "$p"; else ib_rate "$p"; kv_rate "$p"; fi
done
"$PY" "$here/kv_tables.py" rate "$out" "$pairs"
