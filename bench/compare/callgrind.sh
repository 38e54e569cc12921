#!/usr/bin/env bash
# callgrind.sh: user-space instructions per message of the write-bandwidth
# client, perftest's ib_write_bw against fabench-bw, under valgrind's
# callgrind. Each tool's client runs twice, with N1 and N2 messages; the
# difference (Ir(N2) - Ir(N1)) / (N2 - N1) is the per-message cost of the
# loop with setup, connection, reporting and teardown cancelled out. The
# servers run natively. perftest gets -N (no peak bandwidth): its peak search
# after the loop grows with N^2 / cq_mod and would otherwise count as
# per-message work (-N also drops its two rdtsc per message from the loop).
# perftest sends nothing inline on rxe (it does not know the device), so
# fabench-bw gets -I 0 to do the same work.
#
# --lat: the latency clients instead (UD send 2 B, RC send 4 KiB, compare-
# and-swap; the arguments perftest.sh gives both tools), per iteration; the
# sorting of the samples after the loop is shown apart.
#
# Runs inside the test bed, like perftest.sh:
#   tools/softroce-vm --wire --timeout 1500 -- bench/compare/callgrind.sh --build build/perf
set -euo pipefail

prog=callgrind.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]
  --build DIR       fabench build directory (default build/perf)
  --n1 N --n2 N     total messages of the two runs (default 2000, 12000; 2048, 12288 with
                    --rate, whose runs need multiples of 32; 1000, 5000 with --lat)
  --rate            also the message-rate configuration (-s 8 -q 4 -l 8 -Q 8)
  --lat             the latency clients instead of the bandwidth ones: ud_send_lat_2,
                    send_lat_4K and atomic_cswap_lat (default --n1 1000 --n2 5000)
  --only NAME       only the configuration NAME (bw8, rate8 with --rate; ud_send_lat_2,
                    send_lat_4K or atomic_cswap_lat with --lat)
  --out DIR         callgrind files and the table (default \$FABENCH_OUT/callgrind, else a temp dir)
  --run-timeout S   limit of every run (default 900)
EOF
}
die() { echo "$prog: error: $*" >&2; exit 2; }

build=build/perf n1="" n2="" rate=0 lat=0 out="" run_timeout=900 only=""
while (($#)); do
  case "$1" in
    --build) build=${2:?}; shift ;;
    --n1) n1=${2:?}; shift ;;
    --n2) n2=${2:?}; shift ;;
    --rate) rate=1 ;;
    --lat) lat=1 ;;
    --only) only=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --run-timeout) run_timeout=${2:?}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
if ((lat)); then n1=${n1:-1000} n2=${n2:-5000}; elif ((rate)); then n1=${n1:-2048} n2=${n2:-12288}; else n1=${n1:-2000} n2=${n2:-12000}; fi
[[ $n1 =~ ^[1-9][0-9]*$ && $n2 =~ ^[1-9][0-9]*$ ]] || die "--n1 and --n2 must be positive integers"
((n2 > n1)) || die "--n2 must exceed --n1"
# --rate's perftest run takes -n per QP, a multiple of its post list: 4 QPs x 8.
((!rate || (n1 % 32 == 0 && n2 % 32 == 0))) || die "--rate needs --n1 and --n2 multiples of 32 (4 QPs x post list 8)"
. "$here/common.sh"   # wait_listen, testbed_devices, lat_test_args
testbed_devices "--build $build"
BW=$build/bench/fabench-bw LAT=$build/bench/fabench-lat
[[ -x $BW && -x $LAT ]] || die "no $BW / $LAT: build first"
for t in valgrind callgrind_annotate ib_write_bw ib_send_lat ib_atomic_lat python3 ss timeout; do
  command -v $t >/dev/null || die "'$t' not found"
done
[[ -n $out ]] || out=${FABENCH_OUT:+$FABENCH_OUT/callgrind}
[[ -n $out ]] || out=$(mktemp -d /tmp/fabench-callgrind.XXXXXX)
mkdir -p "$out"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

VG=(valgrind --tool=callgrind --quiet)
# Same pinning as perftest.sh: client on CPU 0, servers on CPU 1.
CLI=() SRV=()
if (($(nproc) >= 2)) && command -v taskset >/dev/null; then CLI=(taskset -c 0) SRV=(taskset -c 1); fi
# One fabench server (fabench-bw, or fabench-lat with --lat) for all runs.
FB_PORT=18711 FBIN=$BW
((lat)) && FBIN=$LAT
timeout $((run_timeout * 20)) "${SRV[@]}" "$FBIN" -d "$DEV1" -x "$GID" -p $FB_PORT --timeout 600 >"$out/fabench.server.log" 2>&1 &
PIDS+=($!); wait_listen $FB_PORT $! "$out/fabench.server.log" || die "the ${FBIN##*/} server did not start"
pt_port=18900
# run_pt TAG N QPS TOOL ARGS...: perftest's -n is per QP; its bandwidth tools get -N
run_pt() {
  local tag=$1 n=$2 qps=$3 tool=$4; shift 4
  local per_qp=$((n / qps)) extra=()
  [[ $tool == *_bw ]] && extra=(-N)
  pt_port=$((pt_port + 1))
  timeout "$run_timeout" "${SRV[@]}" "$tool" -d "$DEV1" -x "$GID" -p $pt_port "$@" "${extra[@]}" -n $per_qp \
    >"$out/$tag.server.txt" 2>&1 &
  local spid=$!
  wait_listen $pt_port $spid "$out/$tag.server.txt" || die "the $tool server did not start"
  local rc=0
  timeout "$run_timeout" "${CLI[@]}" "${VG[@]}" --callgrind-out-file="$out/$tag.cg" \
    "$tool" -d "$DEV0" -x "$GID" -p $pt_port "$@" "${extra[@]}" -n $per_qp "$IP1" >"$out/$tag.txt" 2>&1 || rc=$?
  wait $spid || true
  # After the loop perftest samples the CPU clock for its report; under
  # valgrind that sampling often fails ("Can't produce a report", exit 1).
  # The loop has run by then and callgrind still writes its counts; the
  # report's status is recorded so the summary can say when n1 and n2 differ.
  if ((rc != 0)) && ! { [[ -s $out/$tag.cg ]] && grep -q "Can't produce a report" "$out/$tag.txt"; }; then
    tail "$out/$tag.txt" >&2; die "perftest under callgrind failed ($tag, exit $rc)"
  fi
  echo "$rc" >"$out/$tag.rc"
}
run_fb() {
  local tag=$1 n=$2; shift 2
  timeout "$run_timeout" "${CLI[@]}" "${VG[@]}" --callgrind-out-file="$out/$tag.cg" \
    "$FBIN" -d "$DEV0" -x "$GID" -p $FB_PORT "$@" -n "$n" "$IP1" >"$out/$tag.txt" 2>&1 ||
    { tail "$out/$tag.txt" >&2; die "${FBIN##*/} under callgrind failed ($tag)"; }
}

# NAME|QPS|PERFTEST TOOL|PERFTEST ARGS|FABENCH ARGS
if ((lat)); then
  configs=()
  for t in ud_send_lat_2 send_lat_4K atomic_cswap_lat; do
    lat_test_args "$t"   # PT, FB: as rotate.sh and perftest.sh run them
    configs+=("$t|1|${PT[0]}|${PT[*]:1}|${FB[*]}")
  done
else
  configs=("bw8|1|ib_write_bw|-s 8 -q 1 -l 1 -t 128 -Q 100|-I 0 -s 8 -q 1 -l 1 -t 128 -Q 100")
  ((rate)) && configs+=("rate8|4|ib_write_bw|-s 8 -q 4 -l 8 -t 128 -Q 8|-I 0 -s 8 -q 4 -l 8 -t 128 -Q 8")
fi
if [[ -n $only ]]; then
  printf '%s\n' "${configs[@]}" | cut -d'|' -f1 | grep -qx -- "$only" || die "--only $only: no such configuration"
fi
: >"$out/runs.txt"
for c in "${configs[@]}"; do
  IFS='|' read -r name qps tool pt_args fb_args <<<"$c"
  [[ -z $only || $name == "$only" ]] || continue
  for n in "$n1" "$n2"; do
    # shellcheck disable=SC2086
    run_pt "$name.perftest.$n" "$n" "$qps" "$tool" $pt_args
    echo "$prog: $name perftest n=$n done" >&2
    # shellcheck disable=SC2086
    run_fb "$name.fabench.$n" "$n" $fb_args
    echo "$prog: $name fabench n=$n done" >&2
  done
  echo "$name|$pt_args|$n1|$n2|$tool|${FBIN##*/}" >>"$out/runs.txt"
done
for f in "$out"/*.cg; do
  callgrind_annotate --auto=no --threshold=100 "$f" >"${f%.cg}.annotate.txt" 2>/dev/null || true
done
python3 "$here/callgrind_summary.py" "$out"
