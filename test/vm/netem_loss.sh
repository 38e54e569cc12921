#!/usr/bin/env bash
# Packet loss on the wire (tc netem, 1%): RC bandwidth and latency still
# deliver every byte correctly, through real rxe retransmissions (counted in
# hw_counters), and nothing hangs. Boots its own guest with --netem.
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR BUILD_DIR}
build=${2:?usage: $0 SOURCE_DIR BUILD_DIR}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
"$src/tools/softroce-vm" --netem "loss 1%" --timeout 600 --out "$out" -- bash -c '
  set -e
  "$0/bench/fabench-bw" --loopback -d rxe0 --peer-device rxe1 --op write,send,read -s 64K -n 1000 --timeout 20 \
    --benchmark_out=$FABENCH_OUT/bw.json --benchmark_out_format=json
  "$0/bench/fabench-lat" --loopback -d rxe0 --peer-device rxe1 --op write,send,read -s 4K -n 500 --timeout 20 \
    --benchmark_out=$FABENCH_OUT/lat.json --benchmark_out_format=json
  cat /sys/class/infiniband/rxe*/ports/1/hw_counters/duplicate_request \
      /sys/class/infiniband/rxe*/ports/1/hw_counters/completer_retry_err \
      /sys/class/infiniband/rxe*/ports/1/hw_counters/out_of_seq_request | awk "{ s += \$1 } END { print s }" > $FABENCH_OUT/retries
' "$build" || rc=$?
((rc == 0)) || { echo "FAIL: runs under 1% loss exited $rc"; exit 1; }
retries=$(cat "$out/retries")
((retries > 0)) || { echo "FAIL: no retransmission counted under 1% loss: the loss did not hit the wire"; exit 1; }
/usr/bin/python3 - "$out/bw.json" "$out/lat.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    for b in json.load(open(path))["benchmarks"]:
        assert not b.get("error_occurred"), (b["name"], b.get("error_message"))
        assert b["wrong"] == 0, (b["name"], b["wrong"])
        print("ok:", b["name"], "wrong=0")
PY
echo "ok: every byte correct under 1% loss; rxe counted $retries duplicate/out-of-sequence/retry events"
