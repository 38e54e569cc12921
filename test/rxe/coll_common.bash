# Shared by the coll_*.sh rxe tests: fabench-coll paths and a JSON check. Sourced.
source "$(dirname "$0")/bench_common.bash"
COLL=$build/bench/fabench-coll
LAUNCH=$2/tools/fabench-launch
[[ -x $COLL ]] || fail "no $COLL (build first)"

# check_coll_json FILE N_EXPECTED: every benchmark ran without error, wrong == 0,
# busbw/algbw reported for those that move data.
check_coll_json() {
  "$PY" - "$@" <<'PY'
import json, sys
path, expected = sys.argv[1], int(sys.argv[2])
doc = json.load(open(path))
runs = [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
bad = []
for b in runs:
    name = b["name"]
    if b.get("error_occurred"):
        bad.append(f"{name}: {b.get('error_message')}")
        continue
    if b.get("wrong", -1) != 0:
        bad.append(f"{name}: wrong={b.get('wrong')}")
    if b.get("logical_bytes", 0) > 0 and not b.get("busbw_GBps", 0) > 0:
        bad.append(f"{name}: no busbw")
    for k in ("time_max_us", "time_min_us", "algbw_GBps", "wire_bytes", "predicted_us", "ranks"):
        if k not in b:
            bad.append(f"{name}: counter {k} missing")
if len(runs) != expected:
    bad.append(f"{len(runs)} benchmarks ran, expected {expected}")
for line in bad:
    print("FAIL:", line)
print(f"checked {len(runs)} benchmarks in {path}")
sys.exit(1 if bad else 0)
PY
}
