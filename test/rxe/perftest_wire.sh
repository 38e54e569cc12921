#!/usr/bin/env bash
# perftest between rxe0 and rxe1 over the veth wire: ib_write_bw and
# ib_write_lat must pass, and the packets must really cross veth0/veth1
# (their counters grow by at least the number of messages sent).
set -euo pipefail
dev0=${FABENCH_RXE_DEV0:-rxe0} dev1=${FABENCH_RXE_DEV1:-rxe1}
ip1=${FABENCH_RXE_IP1:-10.50.0.2}
[[ ${FABENCH_WIRE:-0} == 1 ]] || { echo "FAIL: not in a --wire test bed (FABENCH_WIRE=${FABENCH_WIRE:-unset})"; exit 1; }

tx_pkts() { cat /sys/class/net/veth0/statistics/tx_packets; }
port=18600
run_pair() {  # NAME ARGS...: server on dev1, client on dev0
  local name=$1; shift
  port=$((port + 1))
  timeout 60 "$name" -d "$dev1" -x 1 -p $port "$@" >/tmp/$name.srv.log 2>&1 &
  local spid=$!
  sleep 1
  local rc=0
  timeout 60 "$name" -d "$dev0" -x 1 -p $port "$@" "$ip1" >/tmp/$name.cli.log 2>&1 || rc=$?
  wait $spid || rc=$((rc ? rc : $?))
  cat /tmp/$name.cli.log
  if ((rc)); then echo "FAIL: $name $* exited $rc; server said:"; cat /tmp/$name.srv.log; exit 1; fi
}

before=$(tx_pkts)
run_pair ib_write_bw -s 65536 -n 1000
after=$(tx_pkts)
# 1000 x 64 KiB at MTU 4096 is 16000 packets leaving rxe0 through veth0.
(( after - before >= 16000 )) || { echo "FAIL: only $((after - before)) packets crossed veth0; traffic did not use the wire"; exit 1; }
echo "OK: ib_write_bw moved $((after - before)) packets over veth0"

before=$(tx_pkts)
run_pair ib_write_lat -s 64 -n 1000
after=$(tx_pkts)
(( after - before >= 1000 )) || { echo "FAIL: only $((after - before)) packets crossed veth0 for ib_write_lat"; exit 1; }
grep -q 't_avg' /tmp/ib_write_lat.cli.log || { echo "FAIL: ib_write_lat printed no latency table"; exit 1; }
echo "OK: ib_write_lat over the wire"
