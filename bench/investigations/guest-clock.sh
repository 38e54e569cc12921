#!/usr/bin/env bash
# guest-clock.sh: what the test-bed guest's clocksource costs. Switches the
# guest kernel between its HPET and its TSC (sysfs, same boot), alternating,
# and times under each: 200 starts of /bin/true, 100 000 clock_gettime calls
# from Python, and a set of rxe tests (ctest). The TSC is a choice only when
# the kernel trusts it: tools/softroce-vm boots TCG guests with tsc=reliable.
#   tools/softroce-vm --wire -- bench/investigations/guest-clock.sh [--rounds N]
# --latency times 2 B RDMA write latency instead: fabench-lat's p50 and
# ib_write_lat's t_typical (one-way, µs), once each under each clocksource
# (2000 iterations; client on CPU 0, server on CPU 1, SCHED_IDLE, as
# bench/compare/perftest.sh).
set -euo pipefail
prog=guest-clock.sh
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/bench/compare/common.sh"   # wait_listen
rounds=2 regex='rxe:(bench_reversed|bench_token)$' build=$root/build/default latency=0
usage() {
  cat <<EOF2
Usage: bench/investigations/$prog [--rounds N] [-R REGEX | --latency] [--build DIR]   (inside tools/softroce-vm --wire)
  --rounds N   hpet, tsc pairs (default $rounds)
  -R REGEX     the rxe tests timed (default '$regex')
  --latency    2 B write latency of fabench-lat and ib_write_lat instead of
               process starts, clock reads and tests
  --build DIR  the build tree whose ctest runs (default $build)
EOF2
}
while (($#)); do
  case $1 in
    --rounds) rounds=${2:-}; [[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --rounds needs a positive number" >&2; exit 2; }; shift ;;
    -R) regex=${2:?-R needs a regex}; shift ;;
    --latency) latency=1 ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ ${FABENCH_IN_VM:-} == 1 ]] || { echo "$prog: error: run inside tools/softroce-vm (see --help)" >&2; exit 2; }
cs=/sys/devices/system/clocksource/clocksource0
grep -qw tsc $cs/available_clocksource ||
  { echo "$prog: error: the guest kernel offers no TSC clocksource ($(cat $cs/available_clocksource)); the kernel needs tsc=reliable on its command line" >&2; exit 2; }
echo "clocksources: $(cat $cs/available_clocksource)"
TIMEFORMAT=%R
# costs: process starts, clock reads and the rxe tests, under the current
# clocksource; one line; non-zero when a test failed.
costs() {
  local log t_true t_clock t_tests passed rc=0
  log=$(mktemp)
  t_true=$({ time (for _ in {1..200}; do /bin/true; done); } 2>&1)
  t_clock=$(/usr/bin/python3 "$root/bench/investigations/clock_reads.py" 100000)
  t_tests=$({ time (ctest --test-dir "$build" -L rxe -R "$regex" >"$log" 2>&1 || echo FAILED >>"$log"); } 2>&1)
  passed=$(grep -oE "[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+" "$log" || echo "no ctest summary")
  grep -q FAILED "$log" && rc=1
  echo "200 x /bin/true ${t_true} s  100k clock_gettime ${t_clock} s  tests ${t_tests} s ($passed)"
  rm -f "$log"
  return $rc
}
# latency PORT: one 2 B write latency run of each tool (ports PORT, PORT+1);
# one line; non-zero when a run failed.
latency() {
  local port=$1 lat=$build/bench/fabench-lat srv f p rc=0
  taskset -c 1 chrt -i 0 "$lat" -d rxe1 -x 1 -p "$port" --timeout 20 >/dev/null 2>&1 &
  srv=$!
  wait_listen "$port" $srv /dev/null || { kill $srv 2>/dev/null; return 1; }
  f=$(taskset -c 0 chrt -i 0 "$lat" -d rxe0 -x 1 -p "$port" 10.50.0.2 -I 0 --op write -s 2 -n 2000 --timeout 20 \
    --benchmark_format=json 2>/dev/null | PYTHONPATH="$root/tools" python3 -m fabench_report.gbjson --counter p50_us - |
    awk -F'\t' '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 }') || { f=failed rc=1; }
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  timeout 60 taskset -c 1 chrt -i 0 ib_write_lat -d rxe1 -x 1 -s 2 -n 2000 -p $((port + 1)) >/dev/null 2>&1 &
  srv=$!
  wait_listen $((port + 1)) $srv /dev/null || { kill $srv 2>/dev/null; return 1; }
  p=$(timeout 60 taskset -c 0 chrt -i 0 ib_write_lat -d rxe0 -x 1 -s 2 -n 2000 -p $((port + 1)) 10.50.0.2 2>/dev/null |
    awk '$1 == "2" { print $5 }') || true
  wait "$srv" 2>/dev/null || true
  [[ -n $p ]] || rc=1
  echo "fabench-lat p50 ${f:-failed} us, ib_write_lat t_typical ${p:-failed} us"
  return $rc
}
status=0 port=18900
for ((round = 1; round <= rounds; round++)); do
  for c in hpet tsc; do
    echo "$c" >$cs/current_clocksource
    if ((latency)); then
      port=$((port + 2))
      result=$(latency $port) || status=1
    else
      result=$(costs) || status=1
    fi
    echo "round $round  $(cat $cs/current_clocksource)  $result"
  done
done
exit $status
