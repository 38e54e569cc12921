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

# testbed_devices [ARGS]: the client's and the server's RDMA devices DEV0 and
# DEV1, the server's address IP1 and the GID index GID, from
# FABENCH_RXE_DEV0/DEV1, FABENCH_RXE_IP1 and FABENCH_GID_INDEX (default: the
# test bed's rxe0, rxe1, 10.50.0.2 and 1). Dies (die() of the caller) unless
# both devices exist, naming those that do and the command to run instead
# (ARGS: the script's arguments in that command).
testbed_devices() {
  # shellcheck disable=SC2034  # IP1 is for the sourcing script
  DEV0=${FABENCH_RXE_DEV0:-rxe0} DEV1=${FABENCH_RXE_DEV1:-rxe1} IP1=${FABENCH_RXE_IP1:-10.50.0.2}
  GID=${FABENCH_GID_INDEX:-1}
  local d found
  for d in "$DEV0" "$DEV1"; do
    [[ -e /sys/class/infiniband/$d ]] && continue
    found=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ' || true)
    die "no RDMA device '$d' here (found: ${found:-none}); run me inside the Soft-RoCE test bed: tools/softroce-vm --wire -- bench/compare/$prog${1:+ $1}"
  done
}

# steer_rx DEV CPU (root): Receive Packet Steering of DEV's network interface
# (the one under GID index $GID) to CPU. RoCE packets are received by that
# interface; its receive processing (and with it rxe's responder and
# completer work) then runs on the CPU of the process on that side, as on a
# host whose NIC interrupts are steered to the benchmark's core. Otherwise a
# flow's CPU follows its hash (the test bed spreads over all CPUs), which
# changes with the QP numbers from one run to the next. Each rps_cpus file
# changed is remembered in RPS_SAVED (FILE=OLD_MASK; restore_rps puts them
# back) and described in RPS_DESC. Needs die() and GID from the caller.
RPS_SAVED=() RPS_DESC=""
steer_rx() {   # DEV CPU
  local nd f mask
  nd=$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/ndevs/$GID" 2>/dev/null || true)
  [[ -n $nd ]] || die "receive steering: $1 has no network interface at GID index $GID"
  printf -v mask '%x' $((1 << $2))
  for f in /sys/class/net/"$nd"/queues/rx-*/rps_cpus; do
    [[ -w $f ]] || die "receive steering: cannot write $f (needs root and a kernel with RPS)"
    RPS_SAVED+=("$f=$(<"$f")")
    echo "$mask" >"$f" || die "receive steering: writing $mask to $f failed"
  done
  RPS_DESC+="$1 ($nd) -> CPU $2; "
}
restore_rps() {
  local e
  for e in "${RPS_SAVED[@]}"; do echo "${e#*=}" >"${e%%=*}" 2>/dev/null || true; done
}

# lat_test_args TEST: sets PT (perftest's tool and arguments) and FB
# (fabench-lat's arguments) to what perftest.sh gives both tools for the
# latency test TEST, without -n; returns 1 for a TEST it does not know.
# rotate.sh and callgrind.sh --lat run their latency tests with these.
# shellcheck disable=SC2034  # PT and FB are for the caller
lat_test_args() {
  case $1 in
    read_lat_2) PT=(ib_read_lat -s 2) FB=(--op read -s 2) ;;
    read_lat_4K) PT=(ib_read_lat -s 4096) FB=(--op read -s 4096) ;;
    ud_send_lat_2) PT=(ib_send_lat -c UD -s 2 -r 512) FB=(-I 0 -c UD --op send -s 2 -r 512) ;;
    send_lat_2) PT=(ib_send_lat -s 2 -r 512) FB=(-I 0 --op send -s 2 -r 512) ;;
    write_lat_2) PT=(ib_write_lat -s 2) FB=(-I 0 --op write -s 2) ;;
    send_lat_4K) PT=(ib_send_lat -s 4096 -r 512) FB=(-I 0 --op send -s 4096 -r 512) ;;
    write_lat_4K) PT=(ib_write_lat -s 4096) FB=(-I 0 --op write -s 4096) ;;
    write_lat_64K) PT=(ib_write_lat -s 65536) FB=(-I 0 --op write -s 65536) ;;
    uc_write_lat_2) PT=(ib_write_lat -c UC -s 2) FB=(-I 0 -c UC --op write -s 2) ;;
    atomic_fadd_lat) PT=(ib_atomic_lat -A FETCH_AND_ADD) FB=(-A FETCH_AND_ADD) ;;
    atomic_cswap_lat) PT=(ib_atomic_lat -A CMP_AND_SWAP) FB=(-A CMP_AND_SWAP) ;;
    *) return 1 ;;
  esac
}
