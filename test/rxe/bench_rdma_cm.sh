#!/usr/bin/env bash
# ctest-timeout: 600
# -R (rdma_cm) across the veth wire, fabench client to fabench server:
# latency and bandwidth for RC, UC and UD, every byte checked (wrong == 0);
# during a run the kernel lists the client's rdma_cm ids in the port space of
# each transport (TCP for RC, IB for UC, UDP for UD), and the packets cross
# veth0. A -R client whose control address is on no RDMA device fails in one
# line without hanging, and the server goes on serving.
source "$(dirname "$0")/bench_common.bash"
[[ ${FABENCH_WIRE:-0} == 1 ]] || fail "not in a --wire test bed (FABENCH_WIRE=${FABENCH_WIRE:-unset})"

LAT_PORT=18761
BW_PORT=18762
start_server "$LAT" "$LAT_PORT" "$WORK/lat-server.log" --timeout 20
LAT_PID=$SERVER_PID
start_server "$BW" "$BW_PORT" "$WORK/bw-server.log" --timeout 20
BW_PID=$SERVER_PID

tx_pkts() { cat /sys/class/net/veth0/statistics/tx_packets; }

# The benchmarks: every transport, both binaries, with their byte checks.
before=$(tx_pkts)
timeout 120 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R -c RC,UC --op write -s 2,4096 -n 500 --timeout 20 \
  --benchmark_out="$WORK/lat-conn.json" --benchmark_out_format=json "$IP1" >"$WORK/lat-conn.txt" 2>&1 ||
  { cat "$WORK/lat-conn.txt"; fail "fabench-lat -R RC,UC exited $?"; }
check_json "$WORK/lat-conn.json" 4 500
timeout 120 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R -c UD --op send -s 2,1024 -n 500 --timeout 20 \
  --benchmark_out="$WORK/lat-ud.json" --benchmark_out_format=json "$IP1" >"$WORK/lat-ud.txt" 2>&1 ||
  { cat "$WORK/lat-ud.txt"; fail "fabench-lat -R UD exited $?"; }
check_json "$WORK/lat-ud.json" 2 500
timeout 120 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R --op read,atomic_fadd -n 500 --timeout 20 \
  --benchmark_out="$WORK/lat-rc1.json" --benchmark_out_format=json "$IP1" >"$WORK/lat-rc1.txt" 2>&1 ||
  { cat "$WORK/lat-rc1.txt"; fail "fabench-lat -R read,atomic_fadd exited $?"; }
check_json "$WORK/lat-rc1.json" 2 500
timeout 120 "$BW" -d "$DEV0" -p "$BW_PORT" -R -c RC,UC --op write -q 3 -s 65536 -n 500 --timeout 20 \
  --benchmark_out="$WORK/bw-conn.json" --benchmark_out_format=json "$IP1" >"$WORK/bw-conn.txt" 2>&1 ||
  { cat "$WORK/bw-conn.txt"; fail "fabench-bw -R RC,UC -q 3 exited $?"; }
check_json "$WORK/bw-conn.json" 2 500
timeout 120 "$BW" -d "$DEV0" -p "$BW_PORT" -R -c UD --op send -q 2 -s 1024 -n 2000 --timeout 20 \
  --benchmark_out="$WORK/bw-ud.json" --benchmark_out_format=json "$IP1" >"$WORK/bw-ud.txt" 2>&1 ||
  { cat "$WORK/bw-ud.txt"; fail "fabench-bw -R UD -q 2 exited $?"; }
check_json "$WORK/bw-ud.json" 1 2000
timeout 120 "$BW" -d "$DEV0" -p "$BW_PORT" -R -c RC --op read,send -b -s 4096 -n 1000 --timeout 20 \
  --benchmark_out="$WORK/bw-rc.json" --benchmark_out_format=json "$IP1" >"$WORK/bw-rc.txt" 2>&1 ||
  { cat "$WORK/bw-rc.txt"; fail "fabench-bw -R read,send -b exited $?"; }
check_json "$WORK/bw-rc.json" 2 1000
after=$(tx_pkts)
# 500 x 3 QPs x 64 KiB at MTU <= 4096 alone is 24000 packets leaving rxe0.
((after - before >= 24000)) || fail "only $((after - before)) packets crossed veth0"
"$PY" - "$WORK"/lat-conn.json "$WORK"/bw-ud.json <<'PY' || fail "the JSON does not say rdma_cm"
import json, sys
for path in sys.argv[1:]:
    doc = json.load(open(path))
    assert doc["context"].get("connection_setup") == "rdma_cm", f"{path}: context connection_setup is not rdma_cm"
    for b in doc["benchmarks"]:
        assert "/rdma_cm" in b["name"], f"{path}: {b['name']} lacks /rdma_cm"
PY
ok "RC, UC, UD latency and bandwidth over rdma_cm: every byte checked, $((after - before)) packets on veth0"

# The ids themselves: while a 3 s run is on, the kernel lists the client's
# rdma_cm ids on DEV0, of the transport's QP type and port space, connected
# to the server.
cm_ids_during() {  # TRANSPORT OP PS
  local transport=$1 op=$2 ps=$3
  timeout 60 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R -c "$transport" --op "$op" -D 3 --timeout 20 "$IP1" \
    >"$WORK/ids-$transport.txt" 2>&1 &
  local pid=$!
  local seen=""
  for _ in $(seq 60); do
    seen=$(rdma resource show cm_id 2>/dev/null |
      grep -E "^link $DEV0/[0-9]+ .* qp-type $transport state CONNECT ps ($ps) " | grep "dst-addr $IP1:" || true)
    [[ -n $seen ]] && break
    sleep 0.1
  done
  wait "$pid" || { cat "$WORK/ids-$transport.txt"; fail "-R -c $transport -D 3 exited non-zero"; }
  [[ -n $seen ]] || { rdma resource show cm_id; fail "-R -c $transport: no rdma_cm id of port space $ps on $DEV0"; }
  grep -q "wrong=0" "$WORK/ids-$transport.txt" || { cat "$WORK/ids-$transport.txt"; fail "-R -c $transport: no wrong=0"; }
  ok "-R -c $transport: the kernel lists the client's id: $(echo "$seen" | head -1 | tr -s ' ')"
}
cm_ids_during RC write TCP
cm_ids_during UC write 'IB|IPoIB'  # iproute2 6.1 prints RDMA_PS_IB (0x13f) as "IPoIB"
cm_ids_during UD send UDP

# The perftest table says so.
timeout 60 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R -n 200 --output-format perftest "$IP1" >"$WORK/pt.txt" 2>&1 ||
  { cat "$WORK/pt.txt"; fail "-R --output-format perftest exited $?"; }
grep -Eq "rdma_cm QPs[[:space:]]*: ON" "$WORK/pt.txt" || { cat "$WORK/pt.txt"; fail "the perftest table lacks 'rdma_cm QPs : ON'"; }
ok "--output-format perftest: rdma_cm QPs : ON"

# A control connection over 127.0.0.1: no RDMA device has that address, so
# the server refuses to listen there; the client fails in one line, quickly.
start=$(date +%s)
rc=0
timeout 60 "$LAT" -d "$DEV0" -p "$LAT_PORT" -R -n 100 --timeout 10 127.0.0.1 >"$WORK/lo.txt" 2>&1 || rc=$?
elapsed=$(($(date +%s) - start))
((rc != 0 && rc != 124)) || { cat "$WORK/lo.txt"; fail "-R over 127.0.0.1 exited $rc (expected a failure, not a hang)"; }
grep -q "ERROR OCCURRED: 'server: rdma_cm: 127.0.0.1 (the address the client reached) belongs to no RDMA device, but this server uses $DEV1 (-d)'" \
  "$WORK/lo.txt" || { cat "$WORK/lo.txt"; fail "-R over 127.0.0.1: the error does not name the address"; }
ok "-R over 127.0.0.1 failed in ${elapsed}s: $(grep -o "ERROR OCCURRED.*" "$WORK/lo.txt" | head -1)"

# Both servers served every client and are still up.
for pid in "$LAT_PID" "$BW_PID"; do kill -0 "$pid" || fail "a server died"; done
grep -c "said goodbye" "$WORK/lat-server.log" | grep -qx 8 || { cat "$WORK/lat-server.log"; fail "the latency server did not say goodbye to 8 clients"; }
ok "the servers served every client and are still up"
