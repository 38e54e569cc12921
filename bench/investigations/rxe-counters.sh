#!/usr/bin/env bash
# rxe-counters.sh: runs a command and samples the rxe devices' hw_counters
# while it runs, then prints the veth pair's packet and drop counts: where a
# run's packets went (retransmissions, duplicates, drops on the wire). Inside
# the Soft-RoCE VM:
#   tools/softroce-vm --wire -- bench/investigations/rxe-counters.sh -- CMD [ARGS...]
set -euo pipefail
prog=rxe-counters.sh

usage() {
  cat <<EOF
Usage: bench/investigations/$prog [--every S] [--devices LIST] [--links LIST] -- CMD [ARGS...]
  --every S       seconds between samples (default 20)
  --devices LIST  rxe devices to sample (default rxe0,rxe1)
  --links LIST    network interfaces whose counters are printed at the end
                  (default veth0,veth1)
Prints one line per sample (t in seconds since the start, then DEVICE.COUNTER=VALUE
for the counters that say where packets went), the command's exit status, and
'ip -s link' of each link. Exits with the command's status.
EOF
}

every=20 devices=rxe0,rxe1 links=veth0,veth1
while (($#)); do
  case $1 in
    --every) every=${2:?--every needs seconds}; shift ;;
    --devices) devices=${2:?--devices needs a list}; shift ;;
    --links) links=${2:?--links needs a list}; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "$prog: error: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
(($#)) || { echo "$prog: error: no command given (see --help)" >&2; exit 2; }
[[ $every =~ ^[1-9][0-9]*$ ]] || { echo "$prog: error: --every needs a whole number of seconds" >&2; exit 2; }
IFS=, read -r -a devs <<<"$devices"
IFS=, read -r -a nics <<<"$links"
counters=(sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_seq_err completer_retry_err
  retry_exceeded_err rcvd_rnr_err)

sample() {
  local line="t=$1" d c v
  for d in "${devs[@]}"; do
    for c in "${counters[@]}"; do
      v=$(cat "/sys/class/infiniband/$d/ports/1/hw_counters/$c" 2>/dev/null || echo -)
      line+=" $d.$c=$v"
    done
  done
  echo "$line"
}

start=$SECONDS
sample 0
"$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  for ((i = 0; i < every * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sample $((SECONDS - start))
done
rc=0
wait "$pid" || rc=$?
echo "$prog: the command exited with status $rc after $((SECONDS - start)) s"
for n in "${nics[@]}"; do ip -s link show "$n" 2>/dev/null || echo "$prog: no interface $n"; done
exit "$rc"
