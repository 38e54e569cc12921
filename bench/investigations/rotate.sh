#!/usr/bin/env bash
# rotate.sh: one latency test, perftest and one or more fabench-lat variants,
# in rounds whose order rotates and reverses, with every sample kept.
#
# perftest.sh compares the medians of alternating pairs. Where a row stays
# behind, this script asks why: each variant changes one thing (a fresh
# server per run, a flag), and every variant takes every position of a round
# equally often (round r starts at variant r mod K; every other block of K
# rounds runs in reverse), so position and drift cancel. Both tools print
# every sample (-U, fabench-lat through --output-format perftest), so the
# summary (rotate_summary.py) has, beside the per-round ratio of the medians,
# that of each run's 5th percentile and the percentiles of all samples
# pooled: a shift of the fastest samples (p1..p25) is a cost in every
# iteration; one in the body only is the test bed's slow phases.
#
# --trace (ud_send_lat_2, send_lat_4K) also records each run with the kernel's tracer
# (the doorbell write() of both ends, each packet's arrival, each completion
# rxe posts) and segments.py splits every round trip into its parts: each
# end's system call, its kernel receive path and its user-space turnaround.
#
# Runs INSIDE the Soft-RoCE test bed, like perftest.sh (same devices, pinning,
# SCHED_IDLE and receive steering), e.g.
#   tools/softroce-vm --wire --timeout 1200 --out /tmp/rot -- \
#       bench/investigations/rotate.sh --build build/default --test ud_send_lat_2 --rounds 16 \
#       perftest fabench fabench-once
set -euo pipefail

prog=rotate.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../compare/common.sh"   # wait_listen, testbed_devices, steer_rx, restore_rps, lat_test_args
usage() {
  cat <<EOF
Usage: bench/investigations/$prog [OPTIONS] --test TEST VARIANT...

VARIANT (the first is the reference of the ratios):
  perftest[:ARGS]       the perftest tool of TEST, a fresh server per run
  perftest+thread[:ARGS]  the same with one more, idle thread in each process
                        (LD_PRELOAD of idle_thread.c, built into OUT), as
                        fabench-lat's processes have their heartbeat thread
  perftest+thread-files[:ARGS]  the same, the idle thread on a file table of its
                        own (unshare(CLONE_FILES)): glibc's multi-thread paths
                        without the kernel's shared file table
  fabench[:ARGS]        fabench-lat against one server started once (as perftest.sh runs it)
  fabench-once[:ARGS]   fabench-lat against a fresh server per run (--once)
  fabench-once@DIR[:ARGS]  the same, both ends from the fabench build DIR (two builds
                        in one boot: a change against its base)
  ARGS: extra flags of that tool, comma-separated (fabench:--clock,tsc; perftest:-t,2;
  perftest's go to its server too)

Options:
  --test TEST     read_lat_2, read_lat_4K, ud_send_lat_2, send_lat_2, write_lat_2,
                  send_lat_4K, write_lat_4K, write_lat_64K, uc_write_lat_2,
                  atomic_fadd_lat or atomic_cswap_lat (the arguments perftest.sh
                  gives both tools)
  --rounds N      rounds, each runs every variant once (default 8; a multiple of
                  2 x the variants balances positions and directions)
  --iters N       iterations of every run (default 2000)
  --build DIR     fabench build directory (default build/perf)
  --out DIR       raw outputs and summary.txt (default \$FABENCH_OUT, else a temp dir)
  --run-timeout S limit of every run (default 120)
  --trace         (ud_send_lat_2 or send_lat_4K, root) trace every run (tracefs,
                  x86-tsc clock) into raw/rR.vJ.trace; segments.py OUT prints
                  the parts of a round trip per variant (also in OUT/segments.txt)
  -h, --help      this help
EOF
}
die() { echo "$prog: error: $*" >&2; exit 2; }

build=build/perf test="" rounds=8 iters=2000 out=${FABENCH_OUT:-} run_timeout=120 trace=0
variants=()
while (($#)); do
  case "$1" in
    --test) test=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    --iters) iters=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --run-timeout) run_timeout=${2:?}; shift ;;
    --trace) trace=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) variants+=("$1") ;;
  esac
  shift
done
[[ -n $test ]] || die "--test is required (see --help)"
for n in rounds iters run_timeout; do
  [[ ${!n} =~ ^[1-9][0-9]*$ ]] || die "--${n//_/-}: '${!n}' is not a positive integer"
done
((${#variants[@]} >= 2)) || die "give at least two variants (e.g. perftest fabench)"
for v in "${variants[@]}"; do
  [[ $v =~ ^(perftest(\+thread(-files)?)?|fabench|fabench-once(@[^:]+)?)(:.*)?$ ]] ||
    die "variant '$v' is not perftest[+thread[-files]][:ARGS], fabench[:ARGS] or fabench-once[@DIR][:ARGS]"
  if [[ $v =~ ^fabench-once@([^:]+) ]]; then
    [[ -x ${BASH_REMATCH[1]}/bench/fabench-lat ]] || die "variant '$v': no ${BASH_REMATCH[1]}/bench/fabench-lat"
  fi
done

# The arguments of perftest.sh's definitions (both tools the same work).
lat_test_args "$test" || die "--test: '$test' is not one of the tests in --help"
PT+=(-n "$iters" -U) FB+=(-n "$iters" --output-format perftest -U)
if ((trace)); then
  # Only these tests' messages are told apart from anything else on the wire
  # by their length alone (RC's ACKs are as long as a 2 B send): segments.py.
  [[ $test == ud_send_lat_2 || $test == send_lat_4K ]] || die "--trace: only with --test ud_send_lat_2 or send_lat_4K"
  ((EUID == 0)) || die "--trace needs root (the kernel's tracer)"
fi

testbed_devices "--build $build --test $test ..."
LAT=$build/bench/fabench-lat
[[ -x $LAT ]] || die "no $LAT: build first (cmake --build $build)"
command -v "${PT[0]}" >/dev/null || die "'${PT[0]}' not found (perftest)"
(($(nproc) >= 2)) || die "needs 2 CPUs (client on CPU 0, servers on CPU 1)"

# As perftest.sh: SCHED_IDLE, client on CPU 0, servers on CPU 1, each
# device's receive processing on its side's CPU.
CLI=(chrt -i 0 taskset -c 0) SRV=(chrt -i 0 taskset -c 1)
if [[ -z $out ]]; then out=$(mktemp -d /tmp/fabench-rotate.XXXXXX); fi
raw=$out/raw
mkdir -p "$raw"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
T=/sys/kernel/tracing TRACE_ON=0
trace_off() {
  ((TRACE_ON)) || return 0
  echo 0 >$T/tracing_on; echo >$T/set_event; echo >$T/kprobe_events; echo local >$T/trace_clock
}
trap 'cleanup; restore_rps; trace_off' EXIT
steer_rx "$DEV0" 0
steer_rx "$DEV1" 1

SERVER_PORT=18750
if printf '%s\n' "${variants[@]}" | grep -q '^fabench\(:\|$\)'; then
  timeout $((run_timeout * rounds * ${#variants[@]})) "${SRV[@]}" "$LAT" -d "$DEV1" -x "$GID" -p $SERVER_PORT \
    --timeout 60 >"$raw/server.log" 2>&1 &
  PIDS+=($!); wait_listen $SERVER_PORT $! "$raw/server.log" || die "fabench-lat server did not start"
fi

# perftest+thread: a library that starts one idle thread in each process.
if printf '%s\n' "${variants[@]}" | grep -q '^perftest+thread'; then
  command -v cc >/dev/null || die "perftest+thread needs a C compiler (cc)"
  cc -O2 -shared -fPIC -o "$out/idle_thread.so" "$here/idle_thread.c" -lpthread ||
    die "perftest+thread: building $here/idle_thread.c failed"
fi

# --trace: tracefs, the events below, x86-tsc timestamps (a marker with
# CLOCK_MONOTONIC's nanoseconds at each end of a run gives the rate).
trace_mark() { echo "fabench-mark $(date +%s%N)" >$T/trace_marker; }
if ((trace)); then
  mountpoint -q $T || mount -t tracefs nodev $T || die "--trace: cannot mount tracefs on $T"
  TRACE_ON=1
  { echo 0 >$T/tracing_on && echo x86-tsc >$T/trace_clock && echo 16384 >$T/buffer_size_kb &&
    echo >$T/set_event && echo 'p:fabench_cqpost rxe_cq_post' >$T/kprobe_events; } 2>/dev/null ||
    die "--trace: cannot set up the tracer (x86-tsc clock, a kprobe on rdma_rxe's rxe_cq_post)"
  for e in syscalls:sys_enter_write syscalls:sys_exit_write net:netif_receive_skb kprobes:fabench_cqpost \
    sched:sched_switch; do
    echo $e >>$T/set_event 2>/dev/null || die "--trace: no event $e"
  done
fi

port=18760
run_variant() {   # VARIANT PREFIX
  local v=$1 f=$2 name=${1%%:*} extra=() s rc=0 lat=$LAT
  [[ $v == *:* ]] && IFS=, read -r -a extra <<<"${v#*:}"
  if [[ $name == fabench-once@* ]]; then lat=${name#fabench-once@}/bench/fabench-lat name=fabench-once; fi
  local pre=()
  if [[ $name == perftest+thread ]]; then pre=(env "LD_PRELOAD=$out/idle_thread.so") name=perftest; fi
  if [[ $name == perftest+thread-files ]]; then
    pre=(env "LD_PRELOAD=$out/idle_thread.so" FABENCH_IDLE_THREAD_FILES=own) name=perftest
  fi
  port=$((port + 1))
  case $name in
    perftest)
      timeout "$run_timeout" "${SRV[@]}" "${pre[@]}" "${PT[@]}" "${extra[@]}" -d "$DEV1" -x "$GID" -p $port \
        >"$f.server.txt" 2>&1 &
      s=$!; wait_listen $port $s "$f.server.txt" || return 1
      timeout "$run_timeout" "${CLI[@]}" "${pre[@]}" "${PT[@]}" "${extra[@]}" -d "$DEV0" -x "$GID" -p $port "$IP1" \
        >"$f.txt" 2>&1 || rc=$?
      wait $s || rc=$((rc ? rc : $?)) ;;
    fabench-once)
      timeout "$run_timeout" "${SRV[@]}" "$lat" -d "$DEV1" -x "$GID" -p $port --once --timeout 60 >"$f.server.txt" 2>&1 &
      s=$!; wait_listen $port $s "$f.server.txt" || return 1
      timeout "$run_timeout" "${CLI[@]}" "$lat" -d "$DEV0" -x "$GID" -p $port "${FB[@]}" "${extra[@]}" "$IP1" \
        >"$f.txt" 2>&1 || rc=$?
      wait $s || rc=$((rc ? rc : $?)) ;;
    fabench)
      timeout "$run_timeout" "${CLI[@]}" "$LAT" -d "$DEV0" -x "$GID" -p $SERVER_PORT "${FB[@]}" "${extra[@]}" "$IP1" \
        >"$f.txt" 2>&1 || rc=$? ;;
  esac
  ((rc == 0)) || { echo "$prog: $v failed ($rc):" >&2; tail -5 "$f.txt" >&2; return 1; }
}

k=${#variants[@]}
{
  echo "test: $test  rounds: $rounds  iters: $iters  kernel: $(uname -r)  cpus: $(nproc)"
  echo "pinning: client ${CLI[*]}, servers ${SRV[*]}; receive steering: $RPS_DESC"
  for ((j = 0; j < k; j++)); do echo "variant $j: ${variants[j]}"; done
} | tee "$out/setup.txt" >&2
for ((r = 0; r < rounds; r++)); do
  order=()
  for ((j = 0; j < k; j++)); do order+=($(((r + j) % k))); done
  if (((r / k) % 2 == 1)); then
    for ((j = 0; j < k / 2; j++)); do
      t=${order[j]} order[j]=${order[k - 1 - j]} order[k - 1 - j]=$t
    done
  fi
  for j in "${order[@]}"; do
    if ((trace)); then echo >$T/trace; echo 1 >$T/tracing_on; trace_mark; fi
    run_variant "${variants[j]}" "$raw/r$r.v$j" || die "round $r: ${variants[j]} failed (outputs in $raw)"
    if ((trace)); then trace_mark; echo 0 >$T/tracing_on; cp $T/trace "$raw/r$r.v$j.trace"; fi
  done
  echo "$prog: round $((r + 1))/$rounds done (order ${order[*]})" >&2
done
python3 "$here/rotate_summary.py" "$out" | tee "$out/summary.txt"
if ((trace)); then python3 "$here/segments.py" "$out" | tee "$out/segments.txt"; fi
