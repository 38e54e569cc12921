# common.sh: helpers of the comparison scripts in bench/compare (sourced, not run).
# shellcheck shell=bash

# wait_listen PORT PID LOG: returns once something listens on TCP PORT, with a
# bound of 10 s. Returns 1, after the end of LOG and one line naming the port, when
# the server PID has exited or nothing listens in time. A server, perftest's
# or fabench's, is ready once it listens: a fixed sleep is too short on a
# loaded guest and wasted time on an idle one.
wait_listen() {
  local port=$1 pid=$2 log=$3 who=${prog:-${0##*/}}
  for _ in $(seq 200); do
    ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 5 "$log" >&2
      echo "$who: server on port $port exited before it listened" >&2
      return 1
    fi
    sleep 0.05
  done
  tail -n 5 "$log" >&2
  echo "$who: nothing listens on port $port after 10 s" >&2
  return 1
}
