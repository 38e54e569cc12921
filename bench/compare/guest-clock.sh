#!/usr/bin/env bash
# guest-clock.sh: what the test-bed guest's clocksource costs. Switches the
# guest kernel between its HPET and its TSC (sysfs, same boot), alternating,
# and times under each: 200 starts of /bin/true, 100 000 clock_gettime calls
# from Python, and a set of rxe tests (ctest). The TSC is a choice only when
# the kernel trusts it: tools/softroce-vm boots TCG guests with tsc=reliable.
#   tools/softroce-vm --wire -- bench/compare/guest-clock.sh [--rounds N]
set -euo pipefail
prog=guest-clock.sh
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=2 regex='rxe:(bench_reversed|bench_token)$' build=$root/build/default
usage() {
  cat <<EOF2
Usage: bench/compare/$prog [--rounds N] [-R REGEX] [--build DIR]   (inside tools/softroce-vm)
  --rounds N   hpet, tsc pairs (default $rounds)
  -R REGEX     the rxe tests timed (default '$regex')
  --build DIR  the build tree whose ctest runs (default $build)
EOF2
}
while (($#)); do
  case $1 in
    --rounds) rounds=${2:-}; [[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --rounds needs a positive number" >&2; exit 2; }; shift ;;
    -R) regex=${2:?-R needs a regex}; shift ;;
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
status=0
for ((round = 1; round <= rounds; round++)); do
  for c in hpet tsc; do
    echo "$c" >$cs/current_clocksource
    log=$(mktemp)
    t_true=$({ time (for _ in {1..200}; do /bin/true; done); } 2>&1)
    t_clock=$(/usr/bin/python3 -c 'import time
t = time.perf_counter()
for _ in range(100000): time.clock_gettime(time.CLOCK_MONOTONIC)
print("%.3f" % (time.perf_counter() - t))')
    t_tests=$({ time (ctest --test-dir "$build" -L rxe -R "$regex" >"$log" 2>&1 || echo FAILED >>"$log"); } 2>&1)
    passed=$(grep -oE "[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+" "$log" || echo "no ctest summary")
    grep -q FAILED "$log" && status=1
    echo "round $round  $(cat $cs/current_clocksource)  200 x /bin/true ${t_true} s  100k clock_gettime ${t_clock} s  tests ${t_tests} s ($passed)"
    rm -f "$log"
  done
done
exit $status
