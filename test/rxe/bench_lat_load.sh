#!/usr/bin/env bash
# fabench-lat --load between two processes, server on rxe1 and client on rxe0
# over the veth wire: every latency benchmark runs twice, without and with a
# load streaming on QPs of its own (write flat out, write both ways, write and
# read at a given rate). Checked from the JSON: both cases exist for each size, no
# error, wrong == 0, the iterations asked for, load_gbps > 0 on the loaded
# cases and, with rate=, at most 1.2x the offered rate. A bad spec is one
# line and a non-zero exit. Loaded latency is not asserted to be higher (on
# a shared VM that is noise); the p50/p99 ratios are printed.
# ctest-timeout: 600
source "$(dirname "$0")/bench_common.bash"

PORT=18711
start_server "$LAT" "$PORT" "$WORK/server.log" --timeout 10

# run NAME ARGS...: one client run into $WORK/NAME.json.
run() {
  local name=$1; shift
  timeout 300 "$LAT" -d "$DEV0" -p "$PORT" "$IP1" --timeout 10 \
    --benchmark_out="$WORK/$name.json" --benchmark_out_format=json "$@" || fail "fabench-lat $* exited $?"
}

# check_load FILE EXPECTED_LOADED_NAME_SUFFIX [RATE_BPS]: every plain case has
# its loaded twin right after it, load_gbps > 0 (and <= 1.2 x RATE per
# streaming end when given); prints loaded/unloaded p50 and p99.
check_load() {
  "$PY" - "$@" <<'PY'
import json, re, sys
path, suffix = sys.argv[1], sys.argv[2]
rate = float(sys.argv[3]) if len(sys.argv) > 3 else None
runs = [b for b in json.load(open(path))["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
for b in runs:  # Google Benchmark appends /iterations:N/manual_time
    b["name"] = re.sub(r"/(iterations|min_time|repeats):[^/]+|/manual_time|/real_time", "", b["name"])
bad = []
plain = [b for b in runs if "/load:" not in b["name"]]
loaded = {b["name"]: b for b in runs if "/load:" in b["name"]}
if len(plain) != len(loaded) or not plain:
    bad.append(f"{len(plain)} plain and {len(loaded)} loaded cases")
for i, b in enumerate(runs):
    if "/load:" in b["name"]:
        continue
    twin = b["name"] + "/" + suffix
    if twin not in loaded:
        bad.append(f"{b['name']}: no loaded case {twin}")
        continue
    if i + 1 >= len(runs) or runs[i + 1]["name"] != twin:
        bad.append(f"{twin} does not follow {b['name']}")
    lb = loaded[twin]
    if "load_gbps" in b:
        bad.append(f"{b['name']}: an unloaded case reports load_gbps")
    g = lb.get("load_gbps", 0)
    if not g > 0:
        bad.append(f"{twin}: load_gbps {g} not positive")
    if rate is not None and g * 1e9 > 1.2 * rate * (2 if "_bidir" in suffix else 1):
        bad.append(f"{twin}: load_gbps {g} above 1.2 x the offered {rate / 1e9} Gb/s")
    ctr = {k: v for k, v in lb.items() if "ctr:" in k}
    print(f"{b['name']}: load {g:.3f} Gb/s; loaded/unloaded p50 {lb['p50_us'] / b['p50_us']:.2f}x, "
          f"p99 {lb['p99_us'] / b['p99_us']:.2f}x; loaded counters {ctr}")
for line in bad:
    print("FAIL:", line)
sys.exit(1 if bad else 0)
PY
}

# Flat out: write and read latency at two sizes under a 64 KiB write load.
# The emulated link drops packets under a flat-out load (completer_retry_err
# moves), and an RC requester retransmits after its QP timeout (67 ms at the
# default -u 14): 2000 iterations make a latency loop long enough not to be
# spent entirely inside one retransmission wait (load_gbps would be 0,
# correctly). A shorter -u makes spurious retransmissions in the emulated
# guest, which rxe can answer with a NAK (remote invalid request).
run flat --op write,read -s 2,4096 -n 2000 --load write,64K
check_json "$WORK/flat.json" 8 2000 || fail "--load write,64K: results"
check_load "$WORK/flat.json" load:write_65536 || fail "--load write,64K: loaded cases"
ok "latency with and without a flat-out 64 KiB write load"

# Both ends stream (two QPs each); send latency beside it. (Flat-out
# bidirectional 64 KiB reads, 4 MiB in flight per QP both ways, stalled rxe's
# read retransmission for seconds in one of a few runs in the emulated guest.)
# 2000 round trips, not 300: a load's bytes count at its signaled
# completions (one per cq_mod writes of 64 KiB), so a loop of 300 sends
# (17 ms in the unoptimized --coverage build) could end before the leader's
# first one and read load_tx_gbps = 0.
run bidir --op write,send -s 64 -n 2000 --load write,64K,qps=2,bidir
check_json "$WORK/bidir.json" 4 2000 || fail "--load write,64K,qps=2,bidir: results"
check_load "$WORK/bidir.json" load:write_65536_qps2_bidir || fail "--load write,64K,qps=2,bidir: loaded cases"
"$PY" - "$WORK/bidir.json" <<'PY' || fail "bidirectional load counters"
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if "/load:" in b["name"]:
        assert b["load_tx_gbps"] > 0 and b["load_rx_gbps"] > 0, b
PY
ok "bidirectional write load (both ends stream)"

# Paced loads: what they achieve inside the latency run stays near the
# offered rate (well below what the emulated link carries flat out, about
# 0.1-0.3 Gb/s beside a ping-pong; small messages, so the loop's window holds many).
run rate --op write -s 2,64 -n 2000 --load write,4K,rate=20M
check_json "$WORK/rate.json" 4 2000 || fail "--load write,4K,rate=20M: results"
check_load "$WORK/rate.json" load:write_4096_rate20M 20000000 || fail "--load write,4K,rate=20M: loaded cases"
run rate-read --op write -s 64 -n 2000 --load read,4K,rate=20M
check_json "$WORK/rate-read.json" 2 2000 || fail "--load read,4K,rate=20M: results"
check_load "$WORK/rate-read.json" load:read_4096_rate20M 20000000 || fail "--load read,4K,rate=20M: loaded cases"
ok "write and read loads paced at 20 Mb/s"

# A bad spec: one line naming the bad part, non-zero exit, before any connection.
for spec in write,64K,rate=2GB send,64K write,64K,qps=0 write,64K,depth=3; do
  set +e
  out=$("$LAT" -d "$DEV0" -p "$PORT" "$IP1" --load "$spec" 2>&1)
  rc=$?
  set -e
  ((rc != 0)) || fail "--load $spec exited 0"
  [[ $(printf '%s\n' "$out" | wc -l) -eq 1 ]] || fail "--load $spec: more than one line: $out"
  part=${spec##*,}
  [[ $spec == send,* ]] && part=send
  [[ $out == *"--load $spec: $part"* ]] || fail "--load $spec: the line does not name '$part': $out"
done
ok "bad --load specs: one line each, naming the bad part, non-zero exit"

server_served "$WORK/server.log" 4
