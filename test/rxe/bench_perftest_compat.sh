#!/usr/bin/env bash
# ctest-timeout: 900
# A script written for perftest, run once with ib_write_bw/ib_write_lat and
# once with fabench-bw/fabench-lat --output-format perftest in their place
# (the binary swapped, the flags unchanged), over the veth wire: the same awk
# fields come out (bandwidth column 4 of the 65536 row, t_typical column 5),
# numeric, positive and in the same units. Then perftest flags for real:
# --report_gbits, -F, --perform_warm_up (its packets cross the wire), -w as
# a pass/fail exit status, --output=bandwidth, --out_json, --run_infinitely.
source "$(dirname "$0")/bench_common.bash"
[[ ${FABENCH_WIRE:-0} == 1 ]] || fail "not in a --wire test bed (FABENCH_WIRE=${FABENCH_WIRE:-unset})"

FB_PORT=18731
start_server "$BW" "$FB_PORT" "$WORK/bw-server.log" --timeout 20
LAT_PORT=18732
start_server "$LAT" "$LAT_PORT" "$WORK/lat-server.log" --timeout 20
PT_PORT=18740

# run_tool OUT CMD...: one client run; a perftest binary gets its own server
# on DEV1 first (fabench's servers above serve every client).
run_tool() {
  local out=$1; shift
  local rc=0
  if [[ $1 == ib_* ]]; then
    PT_PORT=$((PT_PORT + 1))
    timeout 120 "$1" -d "$DEV1" -x 1 -p "$PT_PORT" "${@:2}" >"$out.server" 2>&1 &
    local spid=$!
    sleep 1
    timeout 120 "$@" -d "$DEV0" -x 1 -p "$PT_PORT" "$IP1" >"$out" 2>"$out.err" || rc=$?
    wait "$spid" || true
  else
    local port=$FB_PORT
    [[ $1 == "$LAT" ]] && port=$LAT_PORT
    timeout 120 "$@" -d "$DEV0" -p "$port" "$IP1" >"$out" 2>"$out.err" || rc=$?
  fi
  return $rc
}

# The "user's script": what people pipe perftest's table through.
bw_field() { awk '/^ *65536 / {print $4}' "$1"; }
lat_field() { awk '/^ *2 / {print $5}' "$1"; }
column_of() { awk -v name="$2" '/#bytes/ {for (i = 1; i <= NF; i++) if (index($i, name) == 1) print i}' "$1"; }

# same_field NAME PERFTEST FABENCH MAX_RATIO: both one positive number, within MAX_RATIO of each other
# (a unit slip, MB/s for Gb/s or ns for us, is 100x or more).
same_field() {
  "$PY" - "$@" <<'PY' || exit 1
import sys
name, a, b, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
try:
    x, y = float(a), float(b)
except ValueError:
    sys.exit(f"FAIL: {name}: not one number each: perftest {a!r}, fabench {b!r}")
if not (x > 0 and y > 0):
    sys.exit(f"FAIL: {name}: not positive: perftest {x}, fabench {y}")
if max(x, y) / min(x, y) > limit:
    sys.exit(f"FAIL: {name}: perftest {x} and fabench {y} differ by more than {limit}x (units?)")
print(f"ok: {name}: perftest {x}, fabench {y}")
PY
}

FB_BW=("$BW" --output-format perftest)
FB_LAT=("$LAT" --output-format perftest)

run_tool "$WORK/pt-bw.txt" ib_write_bw -s 65536 -n 1000 --report_gbits -F || fail "ib_write_bw exited $?"
run_tool "$WORK/fb-bw.txt" "${FB_BW[@]}" -s 65536 -n 1000 --report_gbits -F || {
  cat "$WORK/fb-bw.txt.err"; fail "fabench-bw exited $?"; }
cat "$WORK/fb-bw.txt"
same_field "BW average[Gb/sec] (awk \$4)" "$(bw_field "$WORK/pt-bw.txt")" "$(bw_field "$WORK/fb-bw.txt")" 10
# The header splits "BW average[Gb/sec]" in two words: the same word index in both headers.
pt_col=$(column_of "$WORK/pt-bw.txt" "average[Gb/sec]") fb_col=$(column_of "$WORK/fb-bw.txt" "average[Gb/sec]")
[[ -n $pt_col && $pt_col == "$fb_col" ]] ||
  fail "average[Gb/sec] is header word ${pt_col:-none} for ib_write_bw, ${fb_col:-none} for fabench-bw"
ok "ib_write_bw -> fabench-bw: the same awk field, in Gb/sec"

run_tool "$WORK/pt-lat.txt" ib_write_lat -s 2 -n 1000 -F || fail "ib_write_lat exited $?"
run_tool "$WORK/fb-lat.txt" "${FB_LAT[@]}" -s 2 -n 1000 -F || { cat "$WORK/fb-lat.txt.err"; fail "fabench-lat exited $?"; }
cat "$WORK/fb-lat.txt"
same_field "t_typical[usec] (awk \$5)" "$(lat_field "$WORK/pt-lat.txt")" "$(lat_field "$WORK/fb-lat.txt")" 20
[[ $(column_of "$WORK/pt-lat.txt" "t_typical") == 5 && $(column_of "$WORK/fb-lat.txt" "t_typical") == 5 ]] ||
  fail "t_typical is not column 5 in both headers"
ok "ib_write_lat -> fabench-lat: t_typical in column 5, in usec"

# --perform_warm_up: an unmeasured run before the measured one, so at least
# twice the measured messages' packets cross veth0 (64 KiB at MTU <= 4096 is
# >= 16 packets each); the table still reports the measured 200.
tx_pkts() { cat /sys/class/net/veth0/statistics/tx_packets; }
before=$(tx_pkts)
run_tool "$WORK/fb-warm.txt" "${FB_BW[@]}" -s 65536 -n 200 --perform_warm_up || fail "--perform_warm_up exited $?"
after=$(tx_pkts)
(( after - before >= 2 * 200 * 16 )) || fail "--perform_warm_up: only $((after - before)) packets for 200 measured + warm-up"
[[ $(awk '/^ *65536 / {print $2}' "$WORK/fb-warm.txt") == 200 ]] || fail "--perform_warm_up: the row does not report 200 iterations"
ok "--perform_warm_up ran $((after - before)) packets for 200 measured messages"

# -w: the average below the limit fails the run (exit 1, one line), above it passes.
run_tool "$WORK/fb-wpass.txt" "${FB_BW[@]}" -s 65536 -n 200 -w 0.001 || fail "-w 0.001 should pass, exited $?"
rc=0
run_tool "$WORK/fb-wfail.txt" "${FB_BW[@]}" -s 65536 -n 200 -w 1000000 || rc=$?
((rc == 1)) || fail "-w 1000000 should fail with exit 1, got $rc"
grep -q "is below the -w limit 1e+06" "$WORK/fb-wfail.txt.err" || { cat "$WORK/fb-wfail.txt.err"; fail "-w: no limit line"; }
rc=0
run_tool "$WORK/pt-wfail.txt" ib_write_bw -s 65536 -n 200 -w 1000000 || rc=$?
((rc != 0)) || fail "ib_write_bw -w 1000000 passed: the test bed is not what this test assumes"
ok "-w: pass exits 0, a miss exits 1 (perftest exits $rc)"

# --output=bandwidth: one number, perftest's MB/sec; --out_json: the same value as the table.
run_tool "$WORK/fb-out.txt" "$BW" -s 65536 -n 200 --output=bandwidth || fail "--output=bandwidth exited $?"
[[ $(wc -l <"$WORK/fb-out.txt") == 1 ]] && grep -Eq '^[0-9]+\.[0-9]{6}$' "$WORK/fb-out.txt" ||
  { cat "$WORK/fb-out.txt"; fail "--output=bandwidth is not one number"; }
run_tool "$WORK/fb-json.txt" "${FB_BW[@]}" -s 65536 -n 200 --out_json --out_json_file "$WORK/out.json" ||
  fail "--out_json exited $?"
"$PY" - "$WORK/out.json" "$(bw_field "$WORK/fb-json.txt")" <<'PY' || fail "--out_json"
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"]
assert r["MsgSize"] == 65536 and r["n_iterations"] == 200, r
assert abs(r["BW_average"] - float(sys.argv[2])) < 0.01, (r["BW_average"], sys.argv[2])
assert doc["test_info"]["test"] == "RDMA_Write_BW_Test", doc["test_info"]
PY
ok "--output=bandwidth prints one number; --out_json matches the table"

# --run_infinitely: rounds of -D 1 until SIGINT, then exit 0.
"${FB_BW[@]}" -d "$DEV0" -p "$FB_PORT" "$IP1" -s 4096 -D 1 --run_infinitely >"$WORK/fb-inf.txt" 2>&1 &
inf=$!
PIDS+=("$inf")
for _ in $(seq 120); do
  (($(grep -c '^ *4096 ' "$WORK/fb-inf.txt") >= 2)) && break
  sleep 0.5
done
kill -INT "$inf"
rc=0
timeout 60 tail --pid="$inf" -f /dev/null || fail "--run_infinitely did not stop after SIGINT"
wait "$inf" || rc=$?
((rc == 0)) || { cat "$WORK/fb-inf.txt"; fail "--run_infinitely exited $rc after SIGINT"; }
# How many rounds fit before the SIGINT is open (at least the 2 waited for);
# what each one printed is not: every 4096 line is one whole row (bytes,
# iterations > 0, peak >= 0, average and message rate > 0), nothing else
# starts with 4096 and nothing says error.
rounds=$(grep -c '^ *4096 ' "$WORK/fb-inf.txt" || true)
whole=$(awk '$1 == "4096" && NF == 5 && $2 ~ /^[1-9][0-9]*$/ && $3 ~ /^[0-9]+\.[0-9]+$/ &&
             $4 ~ /^[0-9]+\.[0-9]+$/ && $4 + 0 > 0 && $5 ~ /^[0-9]+\.[0-9]+$/ && $5 + 0 > 0' "$WORK/fb-inf.txt" | wc -l)
((rounds >= 2 && whole == rounds)) ||
  { cat "$WORK/fb-inf.txt"; fail "--run_infinitely: $rounds rows of 4096, $whole of them whole rows (want >= 2, all whole)"; }
grep -qi "error" "$WORK/fb-inf.txt" && { cat "$WORK/fb-inf.txt"; fail "--run_infinitely printed an error"; }
ok "--run_infinitely: $rounds rounds, each a whole row, stopped by SIGINT with exit 0"

# --mr_per_qp: the client registers one memory region per QP (the kernel's
# resource table lists 4 of its MRs while it writes over 4 QPs, against 1
# without the flag), and every byte written still checks out (wrong = 0).
mr_peak() {
  local pid=$1 peak=0 n
  while kill -0 "$pid" 2>/dev/null; do
    n=$(rdma resource show mr 2>/dev/null | grep -c " pid $pid " || true)
    ((n > peak)) && peak=$n
    sleep 0.1
  done
  echo "$peak"
}
for flag in "" --mr_per_qp; do
  "$BW" -d "$DEV0" -p "$FB_PORT" "$IP1" -q 4 -s 4096 -D 2 $flag \
    --benchmark_out="$WORK/mrqp$flag.json" --benchmark_out_format=json >"$WORK/mrqp$flag.txt" 2>&1 &
  mp=$!
  PIDS+=("$mp")
  peak=$(mr_peak "$mp")
  rc=0
  wait "$mp" || rc=$?
  ((rc == 0)) || { cat "$WORK/mrqp$flag.txt"; fail "fabench-bw -q 4 $flag exited $rc"; }
  check_json "$WORK/mrqp$flag.json" 1 || fail "fabench-bw -q 4 $flag: results"
  echo "fabench-bw -q 4 ${flag:-(one MR)}: at most $peak memory regions of the client at once"
  if [[ -n $flag ]]; then ((peak == 4)) || fail "--mr_per_qp: $peak memory regions seen, 4 expected"
  else ((peak == 1)) || fail "without --mr_per_qp: $peak memory regions seen, 1 expected"; fi
done
ok "--mr_per_qp: 4 memory regions for 4 QPs (1 without), every byte checked"

# --ipv6: both ends on a RoCE v2 GID with an IPv6 address (the guest's veths
# have link-local ones) across the wire, every byte checked.
V6_PORT=18733
start_server "$LAT" "$V6_PORT" "$WORK/v6-server.log" --timeout 20 --ipv6
timeout 120 "$LAT" -d "$DEV0" -p "$V6_PORT" "$IP1" --ipv6 --op write,read -n 200 --timeout 20 \
  --benchmark_out="$WORK/v6.json" --benchmark_out_format=json >"$WORK/v6.txt" 2>&1 ||
  { cat "$WORK/v6.txt"; fail "fabench-lat --ipv6 exited $?"; }
check_json "$WORK/v6.json" 2 200 || fail "fabench-lat --ipv6: results"
"$PY" - "$WORK/v6.json" <<'PY' || fail "--ipv6: the GID in the context"
import json, sys
ctx = json.load(open(sys.argv[1]))["context"]
assert ctx["gid_type"] == "RoCE v2" and ":" in ctx["gid"] and "." not in ctx["gid"], (ctx["gid_type"], ctx["gid"])
print("--ipv6: GID", ctx["gid_index"], ctx["gid"])
PY
ok "--ipv6: write and read latency over RoCE v2 GIDs with IPv6 addresses"

# --source_ip: the control connection leaves from the address given (a second
# address on rxe0's netdev), as the server's log shows.
IP0=${FABENCH_RXE_IP0:-10.50.0.1}
read -ra nets <<<"${FABENCH_NETDEVS:-}"
SRC=${IP0%.*}.11
ip addr add "$SRC/24" dev "${nets[0]:?FABENCH_NETDEVS unset}"
timeout 120 "$LAT" -d "$DEV0" -p "$LAT_PORT" "$IP1" --source_ip "$SRC" -n 100 >"$WORK/src.txt" 2>&1 ||
  { ip addr del "$SRC/24" dev "${nets[0]}"; cat "$WORK/src.txt"; fail "fabench-lat --source_ip exited $?"; }
ip addr del "$SRC/24" dev "${nets[0]}"
grep " connected" "$WORK/lat-server.log" | grep -qF "($SRC:" ||
  { tail -5 "$WORK/lat-server.log"; fail "--source_ip $SRC: the server did not see the client at $SRC"; }
"$LAT" -d "$DEV0" -p "$LAT_PORT" "$IP1" --source_ip 192.0.2.1 -n 10 >"$WORK/src-bad.txt" 2>&1 && fail "an unusable --source_ip was accepted"
grep -q "cannot use source address 192.0.2.1" "$WORK/src-bad.txt" || { cat "$WORK/src-bad.txt"; fail "--source_ip 192.0.2.1: no clear line"; }
ok "--source_ip: the server saw the client at $SRC; an address not of this host is refused in one line"
