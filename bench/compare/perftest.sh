#!/usr/bin/env bash
# perftest.sh: fabench against perftest, measured the same way, alternately.
#
# Runs INSIDE the Soft-RoCE test bed (or on any host with two RDMA devices
# that reach each other), e.g.
#   tools/softroce-vm --wire --timeout 1500 --out /tmp/cmp -- \
#       bench/compare/perftest.sh --build build/perf
# Server on DEV1 (rxe1, 10.50.0.2), client on DEV0 (rxe0), GID index 1.
# For each test it runs perftest (P) and the equivalent fabench configuration
# (F) in pairs whose order alternates (P F, F P, P F, ...), so a drift of the
# machine (other jobs, thermal, the emulator) hits both tools alike. Prints,
# per test, fabench/perftest as the ratio of the medians over the pairs, the
# spread of the per-pair ratios (min..max), their geometric mean with a 95 %
# interval and a verdict from it (ahead, at parity, BEHIND or undecided; see
# compare.py). --max-pairs adds pairs to a test while its verdict is
# undecided. The devices' hw_counters are read around every run of either
# tool, and compare.py sets their event counters (retransmissions, RNR NAKs,
# duplicates) per run side by side. With --callgrind it
# also counts user-space instructions per message of the client (see
# bench/compare/callgrind.sh). Raw outputs go to $FABENCH_OUT (or --out).
# Across guest boots: bench/compare/boots.sh.
set -euo pipefail

prog=perftest.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/common.sh"   # wait_listen, testbed_devices, steer_rx, restore_rps
usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]

Options:
  --build DIR        fabench build directory holding bench/fabench-{lat,bw} (default build/perf)
  --pairs N          perftest/fabench pairs per test (default 5; at least 1)
  --max-pairs N      go on adding pairs to a test while its verdict is undecided
                     (its 95 % interval holds 1 but reaches past the margin), up to
                     N pairs in all (default: --pairs, no extra pairs)
  --margin F         parity margin of the verdicts (default 0.05: at parity means
                     at most 5 % behind at the interval's worse end)
  --lat-iters N      iterations of every latency test, both tools (default 2000)
  --bw-iters N       64 KiB write bandwidth messages, both tools (default 2000)
  --rate-iters N     8 B message rate: messages PER QP (perftest's -n; fabench
                     gets N x QPs in total, the same message count) (default 5000)
  --tests LIST       comma list of tests, or "all" (default: the core set
                     write_lat_2,write_lat_4K,send_lat_2,send_lat_4K,read_lat_2,
                     read_lat_4K,write_bw_64K,msgrate_8B); the others:
                     write_lat_64K,uc_write_lat_2,ud_send_lat_2,atomic_fadd_lat,
                     atomic_cswap_lat,read_bw_64K,send_bw_4K,send_bw_4K_bidir,
                     write_bw_64K_bidir,write_bw_1M
  --clock SOURCE     fabench-lat's --clock (auto, tsc, monotonic; default: its own default, auto)
  --callgrind        afterwards, instructions per message (bench/compare/callgrind.sh)
  --callgrind-only   only that
  --cg-n1 N --cg-n2 N  message counts of the two callgrind runs (default 2000, 12000)
  --out DIR          raw results and the summary (default \$FABENCH_OUT, else a temp dir)
  --run-timeout S    limit of every single tool run in seconds (default 180)
  --no-pin           do not pin (default: client on CPU 0, servers on CPU 1, both tools)
  --no-idle          normal scheduling policy (default: SCHED_IDLE for both tools' processes)
  --rps MODE         receive processing of each device's network interface (RoCE; root):
                     local (Receive Packet Steering to the CPU its side is pinned to:
                     rxe0's interface to CPU 0, rxe1's to CPU 1; the masks are put back at
                     exit; the default in the test bed, with pinning) or keep (as it is;
                     the default elsewhere)
  -h, --help         this help

Devices: \$FABENCH_RXE_DEV0/DEV1 (rxe0/rxe1), server address \$FABENCH_RXE_IP1 (10.50.0.2).
EOF
}
die() { echo "$prog: error: $*" >&2; exit 2; }

build=build/perf pairs=5 max_pairs="" margin=0.05 lat_iters=2000 bw_iters=2000 rate_iters=5000
tests=write_lat_2,write_lat_4K,send_lat_2,send_lat_4K,read_lat_2,read_lat_4K,write_bw_64K,msgrate_8B
callgrind=0 compare=1 cg_n1=2000 cg_n2=12000 out=${FABENCH_OUT:-} run_timeout=180 pin=1 idle=1 lat_clock="" rps=""
while (($#)); do
  case "$1" in
    --build) build=${2:?}; shift ;;
    --pairs) pairs=${2:?}; shift ;;
    --max-pairs) max_pairs=${2:?}; shift ;;
    --margin) margin=${2:?}; shift ;;
    --lat-iters) lat_iters=${2:?}; shift ;;
    --bw-iters) bw_iters=${2:?}; shift ;;
    --rate-iters) rate_iters=${2:?}; shift ;;
    --tests) tests=${2:?}; shift ;;
    --clock) lat_clock=${2:?}; shift ;;
    --callgrind) callgrind=1 ;;
    --callgrind-only) callgrind=1 compare=0 ;;
    --cg-n1) cg_n1=${2:?}; shift ;;
    --cg-n2) cg_n2=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --run-timeout) run_timeout=${2:?}; shift ;;
    --no-pin) pin=0 ;;
    --no-idle) idle=0 ;;
    --rps) rps=${2:?}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
max_pairs=${max_pairs:-$pairs}
for v in pairs max_pairs lat_iters bw_iters rate_iters cg_n1 cg_n2 run_timeout; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v//_/-}: '${!v}' is not a positive number"
done
((max_pairs >= pairs)) || die "--max-pairs $max_pairs is below --pairs $pairs"
[[ $margin =~ ^0?\.[0-9]+$ ]] && [[ ! $margin =~ ^0?\.0*$ ]] || die "--margin: '$margin' is not a fraction between 0 and 1 (e.g. 0.05)"
[[ -z $rps || $rps == keep || $rps == local ]] || die "--rps: '$rps' is not keep or local"
((rate_iters % 8 == 0)) || die "--rate-iters: $rate_iters is not a multiple of the post list (8); perftest refuses it"

testbed_devices "--build $build"
[[ ${FABENCH_WIRE:-1} == 1 ]] || echo "$prog: warning: FABENCH_WIRE=0: rxe0<->rxe1 traffic takes the kernel's local path, not the veth wire (use softroce-vm --wire)" >&2
LAT=$build/bench/fabench-lat BW=$build/bench/fabench-bw
[[ -x $LAT && -x $BW ]] || die "no $LAT / $BW: build first (cmake --build $build)"
for t in ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat ib_write_bw ib_send_bw ib_read_bw python3 timeout ss; do
  command -v $t >/dev/null || die "'$t' not found (perftest, python3, coreutils, iproute2)"
done

# Pinning: with two CPUs, a spinning client and a spinning server that share
# one CPU take turns at the scheduler tick (ms), which splits every latency
# run into a fast and a slow mode at random. Pinning them apart (both tools
# alike) removes that lottery; the kernel's rxe work runs where it is raised.
# SCHED_IDLE: the kernel's rxe work that a packet defers to ksoftirqd or a
# kworker must wait for a spinning benchmark process on its CPU to use up its
# time slice (milliseconds) under the normal policy; that puts whole runs into
# a slow mode at random. As SCHED_IDLE tasks both tools' processes yield to
# that kernel work at once and still have the CPU to themselves otherwise.
CLI=() SRV=()
if ((idle)) && command -v chrt >/dev/null; then CLI=(chrt -i 0) SRV=(chrt -i 0); fi
pinned=0
if ((pin)) && (($(nproc) >= 2)) && command -v taskset >/dev/null; then
  CLI+=(taskset -c 0) SRV+=(taskset -c 1) pinned=1
fi

if [[ -z $out ]]; then out=$(mktemp -d /tmp/fabench-compare.XXXXXX); fi
raw=$out/raw
mkdir -p "$raw"
echo "$prog: raw results in $raw" >&2

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'cleanup; restore_rps' EXIT

# --rps local (steer_rx, common.sh) by default in the test bed, where a flow's receive CPU
# otherwise follows its hash.
if [[ -z $rps ]]; then
  if [[ ${FABENCH_IN_VM:-0} == 1 ]] && ((pinned)); then rps=local; else rps=keep; fi
fi
if [[ $rps == local ]]; then
  ((pinned)) || die "--rps local steers to the CPUs of the pinning (client CPU 0, servers CPU 1): it needs 2 CPUs, taskset and no --no-pin"
  steer_rx "$DEV0" 0
  steer_rx "$DEV1" 1
fi

# fabench servers: started once, serve every client of the run.
FLAT_PORT=18700 FBW_PORT=18701
start_fabench_servers() {
  timeout $((run_timeout * 100)) "${SRV[@]}" "$LAT" -d "$DEV1" -x "$GID" -p $FLAT_PORT --timeout 120 \
    >"$raw/fabench-lat.server.log" 2>&1 &
  PIDS+=($!); wait_listen $FLAT_PORT $! "$raw/fabench-lat.server.log" || die "fabench-lat server did not start"
  timeout $((run_timeout * 100)) "${SRV[@]}" "$BW" -d "$DEV1" -x "$GID" -p $FBW_PORT --timeout 120 \
    >"$raw/fabench-bw.server.log" 2>&1 &
  PIDS+=($!); wait_listen $FBW_PORT $! "$raw/fabench-bw.server.log" || die "fabench-bw server did not start"
}

# Counters around every run, both tools alike: the rxe devices' hw_counters
# (retransmissions, RNR NAKs, duplicate and out-of-sequence requests...) read
# from sysfs before the run (before perftest's server starts; before
# fabench's client, its server idles between runs) and after it, outside both
# tools' timing. PREFIX.ctr gets the counters that moved: "DEVICE.COUNTER
# CHANGE" (compare.py sets them side by side).
ctr_snap() {   # FILE
  grep -H . /sys/class/infiniband/"$DEV0"/ports/1/hw_counters/* \
    /sys/class/infiniband/"$DEV1"/ports/1/hw_counters/* >"$1" 2>/dev/null || true
}
ctr_delta() {   # PREFIX: PREFIX.ctr0 (before) -> PREFIX.ctr
  local after=$1.ctr1
  ctr_snap "$after"
  # /sys/class/infiniband/DEV/ports/1/hw_counters/NAME:VALUE
  awk -F: 'NR == FNR { b[$1] = $2; next }
           ($1 in b) && $2 != b[$1] { n = split($1, p, "/"); print p[5] "." p[n], $2 - b[$1] }' \
    "$1.ctr0" "$after" >"$1.ctr" 2>/dev/null || true
  rm -f "$1.ctr0" "$after"
}

# run_perftest PREFIX BIN ARGS...: a fresh server per run (perftest serves one
# client). perftest converts rdtsc cycles with a CPU clock it samples at start;
# when that sampling fails (under emulation: "Correlation coefficient r^2 <
# 0.9") it reports inf/nan. Such a run is repeated, at most twice; the
# discarded output is kept as PREFIX.discarded-K.txt.
pt_port=18800
run_perftest() {
  local prefix=$1 bin=$2; shift 2
  local attempt rc
  for attempt in 1 2 3; do
    pt_port=$((pt_port + 1))
    ctr_snap "$prefix.ctr0"
    timeout "$run_timeout" "${SRV[@]}" "$bin" -d "$DEV1" -x "$GID" -p $pt_port "$@" >"$prefix.server.txt" 2>&1 &
    local spid=$!
    wait_listen $pt_port $spid "$prefix.server.txt" || { wait $spid || true; continue; }
    rc=0
    timeout "$run_timeout" "${CLI[@]}" "$bin" -d "$DEV0" -x "$GID" -p $pt_port "$@" "$IP1" >"$prefix.txt" 2>&1 || rc=$?
    wait $spid || rc=$((rc ? rc : $?))
    ctr_delta "$prefix"
    if ((rc != 0)); then
      echo "$prog: $bin $* failed ($rc):" >&2; tail -5 "$prefix.txt" "$prefix.server.txt" >&2
    elif grep -Eqi '(^|[[:space:]])(-?inf|-?nan)([[:space:]]|$)' "$prefix.txt"; then
      echo "$prog: $bin $*: no valid clock (inf/nan in its report), repeating" >&2
    else
      return 0
    fi
    mv "$prefix.txt" "$prefix.discarded-$attempt.txt"
  done
  return 1
}

# run_fabench PREFIX BIN PORT ARGS...
run_fabench() {
  local prefix=$1 bin=$2 port=$3; shift 3
  local rc=0
  local extra=()
  [[ -n $lat_clock && $bin == "$LAT" ]] && extra=(--clock "$lat_clock")
  ctr_snap "$prefix.ctr0"
  timeout "$run_timeout" "${CLI[@]}" "$bin" -d "$DEV0" -x "$GID" -p "$port" "$@" "${extra[@]}" \
    --benchmark_out="$prefix.json" --benchmark_out_format=json "$IP1" >"$prefix.txt" 2>&1 || rc=$?
  ctr_delta "$prefix"
  ((rc == 0)) || { echo "$prog: $bin $* failed ($rc):" >&2; tail -5 "$prefix.txt" >&2; return 1; }
}

# The tests: perftest binary + args | fabench binary + args. Both get the
# same size, iteration count (messages), GID, queue depths; latency tools
# keep their fixed shallow queue (perftest: depth 1 and every WR signaled;
# fabench-lat: depth 2, every WR signaled, on UC and UD waited for at once),
# send latency 512 receives.
# Inline: perftest turns it off on devices it does not know ("Device not
# recognized to implement inline feature"), rxe among them, so fabench gets
# -I 0 to do the same work (its default would inline small messages).
declare -A PT_BIN PT_ARGS FB_BIN FB_ARGS KIND
ALL_TESTS=()
define() { KIND[$1]=$2 PT_BIN[$1]=$3 PT_ARGS[$1]=$4 FB_BIN[$1]=$5 FB_ARGS[$1]=$6; ALL_TESTS+=("$1"); }
define write_lat_2  lat ib_write_lat "-s 2 -n $lat_iters"            "$LAT" "-I 0 --op write -s 2 -n $lat_iters"
define write_lat_4K lat ib_write_lat "-s 4096 -n $lat_iters"         "$LAT" "-I 0 --op write -s 4096 -n $lat_iters"
define send_lat_2   lat ib_send_lat  "-s 2 -r 512 -n $lat_iters"     "$LAT" "-I 0 --op send -s 2 -r 512 -n $lat_iters"
define send_lat_4K  lat ib_send_lat  "-s 4096 -r 512 -n $lat_iters"  "$LAT" "-I 0 --op send -s 4096 -r 512 -n $lat_iters"
define read_lat_2   lat ib_read_lat  "-s 2 -n $lat_iters"            "$LAT" "--op read -s 2 -n $lat_iters"
define read_lat_4K  lat ib_read_lat  "-s 4096 -n $lat_iters"         "$LAT" "--op read -s 4096 -n $lat_iters"
define write_bw_64K bw  ib_write_bw  "-s 65536 -q 1 -l 1 -t 128 -Q 100 -n $bw_iters --report_gbits" \
                        "$BW" "-I 0 -s 65536 -q 1 -l 1 -t 128 -Q 100 -n $bw_iters"
define msgrate_8B   bw  ib_write_bw  "-s 8 -q 4 -l 8 -t 128 -Q 8 -n $rate_iters --report_gbits" \
                        "$BW" "-I 0 -s 8 -q 4 -l 8 -t 128 -Q 8 -n $((rate_iters * 4))"
# Beyond the core set: every other op, transport and direction both tools have.
define write_lat_64K  lat ib_write_lat "-s 65536 -n $lat_iters"          "$LAT" "-I 0 --op write -s 65536 -n $lat_iters"
define uc_write_lat_2 lat ib_write_lat "-c UC -s 2 -n $lat_iters"        "$LAT" "-I 0 -c UC --op write -s 2 -n $lat_iters"
define ud_send_lat_2  lat ib_send_lat  "-c UD -s 2 -r 512 -n $lat_iters" "$LAT" "-I 0 -c UD --op send -s 2 -r 512 -n $lat_iters"
define atomic_fadd_lat  lat ib_atomic_lat "-A FETCH_AND_ADD -n $lat_iters" "$LAT" "-A FETCH_AND_ADD -n $lat_iters"
define atomic_cswap_lat lat ib_atomic_lat "-A CMP_AND_SWAP -n $lat_iters"  "$LAT" "-A CMP_AND_SWAP -n $lat_iters"
define read_bw_64K  bw ib_read_bw  "-s 65536 -q 1 -t 128 -Q 100 -n $bw_iters --report_gbits" \
                       "$BW" "--op read -s 65536 -q 1 -t 128 -Q 100 -n $bw_iters"
define send_bw_4K   bw ib_send_bw  "-s 4096 -q 1 -t 128 -Q 100 -r 512 -n $bw_iters --report_gbits" \
                       "$BW" "-I 0 --op send -s 4096 -q 1 -t 128 -Q 100 -r 512 -n $bw_iters"
define send_bw_4K_bidir bw ib_send_bw "-b -s 4096 -q 1 -t 128 -Q 100 -r 512 -n $bw_iters --report_gbits" \
                       "$BW" "-b -I 0 --op send -s 4096 -q 1 -t 128 -Q 100 -r 512 -n $bw_iters"
define write_bw_64K_bidir bw ib_write_bw "-b -s 65536 -q 1 -l 1 -t 128 -Q 100 -n $bw_iters --report_gbits" \
                       "$BW" "-b -I 0 -s 65536 -q 1 -l 1 -t 128 -Q 100 -n $bw_iters"
define write_bw_1M  bw ib_write_bw "-s 1048576 -q 1 -t 128 -Q 100 -n $((bw_iters / 8)) --report_gbits" \
                       "$BW" "-I 0 -s 1048576 -q 1 -t 128 -Q 100 -n $((bw_iters / 8))"
# perftest's latency clients print every sample (-U, after the timed loop), so
# that compare.py sets fabench's mean of every sample against perftest's mean of
# every sample: perftest's own t_avg leaves out a run's 2 largest samples.
for t in "${ALL_TESTS[@]}"; do
  if [[ ${KIND[$t]} == lat ]]; then PT_ARGS[$t]+=" -U"; fi
done
if [[ $tests == all ]]; then tests=$(IFS=,; echo "${ALL_TESTS[*]}"); fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "kernel: $(uname -r)  cpus: $(nproc)  wire: ${FABENCH_WIRE:-?}  in_vm: ${FABENCH_IN_VM:-0}"
  echo "perftest: $(dpkg-query -W -f='${Version}' perftest 2>/dev/null || echo unknown)"
  echo "fabench: $("$LAT" --version 2>/dev/null || echo unknown)"
  echo "pinning: client ${CLI[*]:-none}, servers ${SRV[*]:-none}"
  echo "receive steering (--rps $rps): ${RPS_DESC:-as found}"
  echo "options: pairs=$pairs max_pairs=$max_pairs margin=$margin lat_iters=$lat_iters bw_iters=$bw_iters rate_iters=$rate_iters (per QP)"
  echo "fabench-lat --clock: ${lat_clock:-default (auto)}"
} >"$out/environment.txt"

if ((compare)); then
  start_fabench_servers
  IFS=, read -ra test_list <<<"$tests"
  for t in "${test_list[@]}"; do
    [[ -n ${KIND[$t]:-} ]] || die "unknown test '$t' (see --help)"
  done
  for t in "${test_list[@]}"; do
    echo "$t|${KIND[$t]}|${PT_BIN[$t]} ${PT_ARGS[$t]}|$(basename "${FB_BIN[$t]}") ${FB_ARGS[$t]}"
  done >"$out/tests.txt"
  of=$pairs; ((max_pairs > pairs)) && of="$pairs..$max_pairs"
  for t in "${test_list[@]}"; do
    port=$FLAT_PORT; [[ ${KIND[$t]} == bw ]] && port=$FBW_PORT
    for ((p = 1; p <= max_pairs; p++)); do
      # Past --pairs, only while the verdict is undecided.
      if ((p > pairs)) && python3 "$here/compare.py" --margin "$margin" --decided "$out" "$t" >&2; then break; fi
      # P F, F P, P F, ...
      if ((p % 2)); then order="P F"; else order="F P"; fi
      for tool in $order; do
        prefix=$raw/$t.$p.$tool
        # shellcheck disable=SC2086  # the argument lists are meant to split
        if [[ $tool == P ]]; then
          run_perftest "$prefix" "${PT_BIN[$t]}" ${PT_ARGS[$t]} || true
        else
          run_fabench "$prefix" "${FB_BIN[$t]}" "$port" ${FB_ARGS[$t]} || true
        fi
      done
      echo "$prog: $t pair $p/$of ($order) done" >&2
    done
  done
  python3 "$here/compare.py" --margin "$margin" "$out" | tee "$out/summary.md"
fi

if ((callgrind)); then
  ((compare)) && { cleanup; PIDS=(); }
  "$here/callgrind.sh" --build "$build" --n1 "$cg_n1" --n2 "$cg_n2" --out "$out/callgrind" --run-timeout 900 |
    tee "$out/callgrind.md"
fi
