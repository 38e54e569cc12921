#!/usr/bin/env bash
# guest-clock-lat.sh: 2 B RDMA write latency under each of the guest's
# clocksources, in one boot: switches hpet, tsc (sysfs) for --rounds rounds and
# runs fabench-lat and ib_write_lat once each under each (2000 iterations,
# client on CPU 0, server on CPU 1, SCHED_IDLE, as bench/compare/perftest.sh),
# printing fabench-lat's p50 and ib_write_lat's t_typical (one-way, µs).
#   tools/softroce-vm --wire -- bench/compare/guest-clock-lat.sh [--rounds N] [--build DIR]
set -euo pipefail
prog=guest-clock-lat.sh
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=3 build=$root/build/default
while (($#)); do
  case $1 in
    --rounds) rounds=${2:-}; [[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --rounds needs a positive number" >&2; exit 2; }; shift ;;
    --build) build=${2:?--build needs a directory}; shift ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; echo; exit 0 ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ ${FABENCH_IN_VM:-} == 1 ]] || { echo "$prog: error: run inside tools/softroce-vm --wire (see --help)" >&2; exit 2; }
lat=$build/bench/fabench-lat
[[ -x $lat ]] || { echo "$prog: error: no $lat: build first" >&2; exit 2; }
cs=/sys/devices/system/clocksource/clocksource0
if ! grep -qw tsc $cs/available_clocksource || ! grep -qw hpet $cs/available_clocksource; then
  echo "$prog: error: the guest kernel offers $(cat $cs/available_clocksource), not both hpet and tsc" >&2
  exit 2
fi
port=18900
for ((round = 1; round <= rounds; round++)); do
  for c in hpet tsc; do
    echo "$c" >$cs/current_clocksource
    port=$((port + 2))
    taskset -c 1 chrt -i 0 "$lat" -d rxe1 -x 1 -p $port --timeout 20 >/dev/null 2>&1 &
    srv=$!
    sleep 1.5
    f=$(taskset -c 0 chrt -i 0 "$lat" -d rxe0 -x 1 -p $port 10.50.0.2 -I 0 --op write -s 2 -n 2000 --timeout 20 \
      --benchmark_format=json 2>/dev/null | python3 -c 'import json, sys
print(" ".join("%.1f" % b["p50_us"] for b in json.load(sys.stdin)["benchmarks"]))') || f=failed
    kill $srv 2>/dev/null || true
    wait $srv 2>/dev/null || true
    timeout 60 taskset -c 1 chrt -i 0 ib_write_lat -d rxe1 -x 1 -s 2 -n 2000 -p $((port + 1)) >/dev/null 2>&1 &
    srv=$!
    sleep 1.5
    p=$(timeout 60 taskset -c 0 chrt -i 0 ib_write_lat -d rxe0 -x 1 -s 2 -n 2000 -p $((port + 1)) 10.50.0.2 2>/dev/null |
      awk '$1 == "2" { print $5 }') || true
    wait $srv 2>/dev/null || true
    echo "round $round $(cat $cs/current_clocksource): fabench-lat p50 ${f:-failed} us, ib_write_lat t_typical ${p:-failed} us"
  done
done
