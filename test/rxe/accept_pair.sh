#!/usr/bin/env bash
# ctest-timeout: 300
# fabench-accept in the two-device test bed (the switch test bed, with its
# bad link, bad node and stopped rank, is vm:accept_fabric): 4 ranks started
# by fabench-launch, rank r on rxe(r mod 2), so a pair crosses the wire (0-1)
# or stays on one device (0-2). Three runs, each accepted (exit 0) against
# absolute thresholds the emulated guest meets (5 Mb/s per direction):
#   round-robin  every pair once (6), JSON and JUnit XML (one testcase each);
#   bisection    nodes 0-1 against 2-3: 4 pairs;
#   --pairs      a file of 2 pairs by node index, thresholds from a --spec file.
source "$(dirname "$0")/bench_common.bash"
ACC=$build/bench/fabench-accept
LAUNCH=${2:?usage: $0 BUILD_DIR SOURCE_DIR}/tools/fabench-launch
[[ -x $ACC ]] || fail "no $ACC (build first)"
common=(-d "$DEV0,$DEV1" -s 64K -t 4 -D 0.3 --lat-iters 100 --timeout 10 --port-gbps 0.1)

# accept NAME ARGS...: 4 ranks; rank 0's reports in $WORK/NAME.{json,xml}.
accept() {
  local name=$1 t0=$SECONDS; shift
  "$LAUNCH" -n 4 --timeout 240 -- "$ACC" "${common[@]}" --json "$WORK/$name.json" --junit "$WORK/$name.xml" "$@" \
    >"$WORK/$name.out" 2>&1 || { tail -30 "$WORK/$name.out"; fail "$name: fabench-accept did not accept"; }
  echo "($name: $((SECONDS - t0)) s)"
}

accept round-robin --min-bw-fraction 0.05 --min-bidir-fraction 0.05
accept bisection --schedule bisection --min-bw-fraction 0.05 --min-bidir-fraction 0.05
printf '# node indexes\n0 1\n2 3\n' >"$WORK/pairs.txt"
printf '{"min_bw_fraction": 0.05, "min_bidir_fraction": 0.05, "retests": 0}\n' >"$WORK/spec.json"
accept pairs --pairs "$WORK/pairs.txt" --spec "$WORK/spec.json"

"$PY" - "$WORK" <<'PY'
import json, os, sys
import xml.etree.ElementTree as ET
work = sys.argv[1]
bad = []
def check(cond, msg):
    print(("ok: " if cond else "FAIL: ") + msg)
    if not cond:
        bad.append(msg)
for name, want in (("round-robin", {(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)}),
                   ("bisection", {(0, 2), (0, 3), (1, 2), (1, 3)}),
                   ("pairs", {(0, 1), (2, 3)})):
    d = json.load(open(os.path.join(work, name + ".json")))
    got = {(p["a"], p["b"]) for p in d["pairs"]}
    check(d["summary"]["verdict"] == "pass" and got == want and len(d["pairs"]) == len(want),
          f"{name}: verdict {d['summary']['verdict']}, pairs {sorted(got)}")
    for p in d["pairs"]:
        a = p["attempts"][-1]
        check(a["status"] == "ok" and p["verdict"] == "pass"
              and all(a[k] and a[k] > 0.005 for k in ("bw_a_to_b_gbps", "bw_b_to_a_gbps", "bw_bidir_gbps"))
              and a["lat_p50_us"] and 0 < a["lat_p50_us"] <= a["lat_p99_us"] <= a["lat_max_us"],
              f"{name}: {p['a']}-{p['b']} {a['status']}: {a['bw_a_to_b_gbps']:.3f} / {a['bw_b_to_a_gbps']:.3f} / "
              f"{a['bw_bidir_gbps']:.3f} Gb/s, latency p50 {a['lat_p50_us']:.1f} us")
    cases = ET.parse(os.path.join(work, name + ".xml")).getroot().iter("testcase")
    cases = list(cases)
    check(len(cases) == len(want) and not any(c.find("failure") is not None for c in cases),
          f"{name}: JUnit has {len(cases)} testcases, none failed")
sys.exit(1 if bad else 0)
PY
ok "fabench-accept accepts the test bed's pairs: round-robin, bisection and a pairs file"
