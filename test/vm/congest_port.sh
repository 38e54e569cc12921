#!/usr/bin/env bash
# fabench-congest on the switch test bed (tools/softroce-vm --devices 4): 8 ranks, rank r on
# device r mod 4; congestors 1-3 (the incast target is rank 1, on rxe1), victims 0,4,5,6,7
# (rank 5 behind rxe1). Latency victims, put-incast and incast, 3 rounds. In one guest:
#   limited  node 1's cable rate-limited in both directions (netem rate 3mbit limit 200): for
#            each pattern the paths through rxe1 have a p99 CIF > 2 and at least twice that of
#            the paths that avoid it, and the label names rxe1 as the hot port;
#   even     no limit: no port named.
#   kill     a congestor SIGKILLed during the second benchmark: rank 0 names it and exits
#            non-zero; the benchmark measured before is in its output. Rank 0 names a dead rank
#            at once when it waits on it, else when its own part of the phase ends (a victim's
#            iterations: short phases here, -n 40), so the bound is the phase plus --timeout 5.
# CONGEST_REPEAT=N runs limited and even N times each (default 1); docs/results/congest.md has
# a recorded run. CONGEST_ITERS sets -n (default 150).
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR BUILD_DIR}
build=${2:?usage: $0 SOURCE_DIR BUILD_DIR}
repeat=${CONGEST_REPEAT:-1}
[[ ${FABENCH_MATRIX:-} == full ]] && repeat=${CONGEST_REPEAT:-3}
iters=${CONGEST_ITERS:-150}
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "CONGEST_REPEAT: '$repeat' is not a count >= 1" >&2; exit 2; }
out=$(mktemp -d)
trap '[[ -n ${KEEP_OUT:-} ]] || rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
"$src/tools/softroce-vm" --devices 4 --timeout $((700 + 500 * (repeat - 1))) --out "$out" -- bash -c '
set -u
congest=$1/bench/fabench-congest launch=$2/tools/fabench-launch o=$FABENCH_OUT
read -ra nets <<<"$FABENCH_NETDEVS"
devs=$(echo $FABENCH_DEVICES | tr " " ,)
common=(-d "$devs" -x 1 --congestor-ranks 1-3)
run() {
  local name=$1; shift
  local t0=$SECONDS
  timeout 600 "$launch" -n 8 --timeout 580 -- "$congest" "${common[@]}" -n '"$iters"' \
    --benchmark_out=$o/$name.json --benchmark_out_format=json "$@" >$o/$name.out 2>&1
  echo "$name: exit $? after $((SECONDS - t0)) s"
}
for i in $(seq '"$repeat"'); do
  tc qdisc add dev ${nets[1]} root netem rate 3mbit limit 200
  tc qdisc add dev swp1 root netem rate 3mbit limit 200
  run limited$i --timeout 30 --test latency --rounds 3 --pattern put-incast,incast
  tc qdisc del dev ${nets[1]} root; tc qdisc del dev swp1 root
  run even$i --timeout 30 --test latency --rounds 3 --pattern put-incast,incast
done
# kill: ranks by hand so that the test knows their pids; rank 2 (a congestor) dies 3 s into
# the second benchmark (bandwidth, long phases), after the first (latency) has finished.
pids=()
for r in $(seq 0 7); do
  RANK=$r WORLD_SIZE=8 MASTER_ADDR=127.0.0.1 MASTER_PORT=19311 stdbuf -oL "$congest" "${common[@]}" --timeout 5 \
    --rounds 1 --pattern put-incast --test latency,bandwidth -n 40 >$o/kill.$r.out 2>&1 &
  pids+=($!)
done
for _ in $(seq 600); do grep -q "congest/latency/put-incast" $o/kill.0.out 2>/dev/null && break; sleep 0.5; done
sleep 3
kill -9 ${pids[2]}
t0=$SECONDS
rc=0; wait ${pids[0]} || rc=$?
echo "kill: rank 0 exit $rc, $((SECONDS - t0)) s after the kill" | tee $o/kill.result
for p in "${pids[@]:1}"; do timeout 30 tail --pid=$p -f /dev/null || kill -9 $p 2>/dev/null; done
' _ "$build" "$src" || rc=$?
cat "$out"/*.out 2>/dev/null | grep -E "congest/|error" | cut -c1-400 || true
((rc == 0)) || fail "the guest exited $rc"

check() {  # check NAME EXPECT(hot|none)
  python3 - "$out/$1.json" "$2" <<'PY' || fail "$1: see above"
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [b for b in doc["benchmarks"] if b.get("run_type") != "aggregate"]
assert len(runs) == 2, f"{len(runs)} benchmarks"
for b in runs:
    assert not b.get("error_occurred"), b.get("error_message")
    label, behind, elsewhere = b["label"], b["behind_cif_p99"], b["elsewhere_cif_p99"]
    print(f'{sys.argv[1].split("/")[-1]} {b["name"]}: behind {behind:.2f} elsewhere {elsewhere:.2f}; {label[:60]}')
    for phase in ("isolated", "loaded"):  # one-way latency percentiles, in order
        tail = [b[f"{phase}_p{p}_us"] for p in ("50", "90", "99", "999")]
        assert 0 < tail[0] <= tail[1] <= tail[2] <= tail[3], (phase, tail)
    moved = sorted({k.split("/")[0] for k in b if k[0] == "r" and "/" in k and k.split("/")[0][1:].isdigit()})
    # every rank whose counters moved has its deltas in the JSON (rR/NAME)
    assert len(moved) == b["moved_ranks"], (moved, b["moved_ranks"])
    if sys.argv[2] == "hot":
        assert label.startswith("hot port: rxe1;"), label
        assert behind > 2 and behind >= 2 * elsewhere, (behind, elsewhere)
    else:
        assert label.startswith("hot port: none;"), label
PY
}
for i in $(seq "$repeat"); do
  check limited$i hot
  check even$i none
done
echo "PASS: the limited port named and its paths' p99 CIF > 2 and >= 2x the others, $repeat time(s); no port named without a limit"

cat "$out/kill.result"
read -r _ _ _ _ krc ksec _ <"$out/kill.result"  # "kill: rank 0 exit RC, S s after the kill"
krc=${krc%,}
[[ $krc != 0 ]] || fail "kill: rank 0 exited 0"
((ksec <= 40)) || fail "kill: rank 0 took $ksec s (bound: a 40-iteration phase and --timeout 5, 40 s)"
grep -q "rank 2" "$out/kill.0.out" || { tail -5 "$out/kill.0.out"; fail "kill: rank 0 does not name rank 2"; }
grep -q "congest/latency/put-incast.*cif=" "$out/kill.0.out" || fail "kill: the first benchmark's result is lost"
echo "PASS: a killed congestor is named by rank 0 within $ksec s; the result measured before it is kept"
