#!/usr/bin/env bash
# ctest-timeout: 300
# fabench-bw --reversed (perftest's flag) across the veth wire: the server
# (rxe1, veth1) writes, sends or reads toward the client (rxe0, veth0), every
# byte checked (wrong == 0). The wire says which way the data went: for
# writes and sends veth1 carries the payload and veth0 little more than acks;
# for reads (the server reads the client's memory) the other way round.
source "$(dirname "$0")/bench_common.bash"
[[ ${FABENCH_WIRE:-0} == 1 ]] || fail "not in a --wire test bed (FABENCH_WIRE=${FABENCH_WIRE:-unset})"
PORT=18771
start_server "$BW" "$PORT" "$WORK/server.log" --timeout 20
tx_bytes() { cat "/sys/class/net/$1/statistics/tx_bytes"; }

# reversed NAME PAYLOAD_FROM SIZE ARGS...: one run of 2000 messages of SIZE
# bytes; PAYLOAD_FROM is the interface that must carry the payload.
reversed() {
  local name=$1 from=$2 size=$3; shift 3
  local other=veth0 n=2000
  [[ $from == veth0 ]] && other=veth1
  local f0 o0 rc=0
  f0=$(tx_bytes "$from") o0=$(tx_bytes "$other")
  timeout 120 "$BW" -d "$DEV0" -p "$PORT" --reversed -s "$size" -n "$n" --timeout 20 "$@" \
    --benchmark_out="$WORK/$name.json" --benchmark_out_format=json "$IP1" >"$WORK/$name.txt" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$WORK/$name.txt"; fail "$name: fabench-bw --reversed $* exited $rc"; }
  check_json "$WORK/$name.json" 1 "$n"
  local moved=$(($(tx_bytes "$from") - f0)) back=$(($(tx_bytes "$other") - o0)) payload=$((n * size))
  ((moved >= payload)) || fail "$name: $from sent $moved B, less than the $payload B of payload"
  ((back * 4 < payload)) || fail "$name: $other sent $back B too: the payload did not go one way"
  grep -q '/reversed' "$WORK/$name.json" || fail "$name: the benchmark name lacks /reversed"
  ok "$name: $from carried $moved B, $other $back B; every byte checked"
}
reversed write veth1 65536 --op write
reversed send veth1 65536 --op send
reversed send_ud veth1 4096 --op send -c UD
reversed read veth0 65536 --op read
reversed write_rdma_cm veth1 65536 --op write -R -q 2
