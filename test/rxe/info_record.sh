#!/usr/bin/env bash
# fabench-info on the test bed: both rxe devices in the record with an ACTIVE Ethernet port, a
# RoCE v2 GID, their netdev (veth) and its MTU, and no PCIe link (rxe on a veth has no PCI
# parent: nothing invented); MLPerf's fields say RoCE; a benchmark's JSON context carries the
# same record.
source "$(dirname "$0")/bench_common.bash"
INFO=$build/bench/fabench-info

timeout 60 "$INFO" --json "$WORK/info.json" || fail "fabench-info --json exited $?"
timeout 60 "$INFO" >"$WORK/info.txt" || fail "fabench-info exited $?"
grep -q "^$DEV0 " "$WORK/info.txt" || { cat "$WORK/info.txt"; fail "text names no $DEV0"; }
"$PY" - "$WORK/info.json" "$DEV0" "$DEV1" <<'PY' || fail "fabench-info --json record"
import json, sys
doc = json.load(open(sys.argv[1]))
devs = {d["name"]: d for d in doc["devices"]}
for name in sys.argv[2:]:
    d = devs[name]
    assert "pci" not in d, d
    p = d["ports"][0]
    assert p["link_layer"] == "Ethernet" and p["state"] == "ACTIVE", p
    assert any(g.get("type") == "RoCE v2" for g in p["gids"]), p
    assert p["netdev"] and p["netdev_mtu"] > 0, p
assert "RoCE" in doc["mlperf"]["host_networking"], doc["mlperf"]
assert int(doc["mlperf"]["host_network_card_count"]) >= 2, doc["mlperf"]
assert doc["software"]["kernel"], doc["software"]
PY
ok "fabench-info: $DEV0 and $DEV1 recorded"

timeout 300 "$LAT" --loopback -d "$DEV0" -s 64 -n 100 --timeout 10 \
  --benchmark_out="$WORK/lat.json" --benchmark_out_format=json >/dev/null || fail "loopback latency exited $?"
"$PY" - "$WORK/lat.json" "$DEV0" <<'PY' || fail "the interconnect record in a run's context"
import json, sys
ctx = json.load(open(sys.argv[1]))["context"]
rec = json.loads(ctx["interconnect"])
assert sys.argv[2] in [d["name"] for d in rec["devices"]], rec
assert "gids" not in rec["devices"][0]["ports"][0], rec  # the compact form
PY
ok "fabench-lat's JSON context carries the interconnect record"
