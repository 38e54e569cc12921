#!/usr/bin/env bash
# --loopback: both ends in one process, on one device (rxe's internal
# loopback) and on two devices (-d rxe0 --peer-device rxe1).
source "$(dirname "$0")/bench_common.bash"

timeout 300 "$LAT" --loopback -d "$DEV0" --op all -c RC,UC,UD -n 200 --timeout 10 \
  --benchmark_out="$WORK/lat.json" --benchmark_out_format=json || fail "loopback latency exited $?"
check_json "$WORK/lat.json" 8 200 || fail "loopback latency results"
ok "fabench-lat --loopback on one device"

timeout 300 "$BW" --loopback -d "$DEV0" --peer-device "$DEV1" --op all -c RC,UC,UD -n 1000 -s 4096 --timeout 10 \
  --benchmark_out="$WORK/bw.json" --benchmark_out_format=json || fail "loopback bandwidth exited $?"
check_json "$WORK/bw.json" 6 1000 || fail "loopback bandwidth results"
python3 - "$WORK/bw.json" <<'PY' || fail "context of a two-device loopback"
import json, sys
ctx = json.load(open(sys.argv[1]))["context"]
assert ctx["device"] == "rxe0" and ctx["peer_device"] == "rxe1" and ctx["mode"] == "loopback", ctx
PY
ok "fabench-bw --loopback across two devices"

# Google Benchmark's own flags work unchanged: filter, repetitions with
# aggregates, CSV on stdout, JSON to a file, and compare.py over two runs.
timeout 300 "$LAT" --loopback -d "$DEV0" --op write,read -s 2,64 -n 200 --timeout 10 \
  --benchmark_filter='write_lat/rc/64' --benchmark_repetitions=3 --benchmark_format=csv \
  --benchmark_out="$WORK/rep1.json" --benchmark_out_format=json >"$WORK/rep.csv" || fail "repetitions run exited $?"
grep -q '^"write_lat/rc/64/iterations:200/manual_time_mean"' "$WORK/rep.csv" || { cat "$WORK/rep.csv"; fail "no mean aggregate in CSV"; }
(( $(grep -c '^"write_lat/rc/64/iterations:200/manual_time"' "$WORK/rep.csv") == 3 )) || fail "expected 3 repetitions in CSV"
grep -q 'read_lat\|write_lat/rc/2/' "$WORK/rep.csv" && fail "--benchmark_filter let other benchmarks through"
timeout 300 "$LAT" --loopback -d "$DEV0" -s 64 -n 200 --timeout 10 --benchmark_repetitions=3 \
  --benchmark_out="$WORK/rep2.json" --benchmark_out_format=json >/dev/null || fail "second repetitions run exited $?"
"$PY" /usr/share/benchmark/compare.py benchmarks "$WORK/rep1.json" "$WORK/rep2.json" >"$WORK/compare.txt" 2>&1 ||
  { cat "$WORK/compare.txt"; fail "compare.py failed on two fabench JSON runs"; }
grep -q "write_lat/rc/64" "$WORK/compare.txt" || { cat "$WORK/compare.txt"; fail "compare.py output lacks the benchmark"; }
ok "Google Benchmark filter, repetitions, CSV, JSON out and compare.py"

# --clock: the TSC (one instruction per sample, its rate measured over each
# run) and CLOCK_MONOTONIC give the same latencies, each run's samples add up
# to the run's CLOCK_MONOTONIC time, and the context names the clock. Two
# runs of each, alternating.
for i in 1 2; do
  for c in tsc monotonic; do
    timeout 300 "$LAT" --loopback -d "$DEV0" --op write,read -n 1000 --timeout 10 --clock $c \
      --benchmark_out="$WORK/clock_${c}_$i.json" --benchmark_out_format=json >/dev/null || fail "--clock $c exited $?"
    check_json "$WORK/clock_${c}_$i.json" 2 1000 || fail "--clock $c results"
  done
done
"$PY" - "$WORK" <<'PY' || fail "--clock tsc against --clock monotonic"
import json, statistics, sys
p50 = {}
for c in ("tsc", "monotonic"):
    for i in (1, 2):
        d = json.load(open(f"{sys.argv[1]}/clock_{c}_{i}.json"))
        assert d["context"]["clock"] == c, d["context"].get("clock")
        for b in d["benchmarks"]:
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
            per_iter_us = b["real_time"] * scale  # the run's CLOCK_MONOTONIC time per iteration
            # The samples tile the run: their mean is its time per iteration.
            assert abs(b["mean_us"] - per_iter_us) <= 0.02 * per_iter_us, (c, b["name"], b["mean_us"], per_iter_us)
            assert 0 < b["min_us"] <= b["p50_us"] <= b["max_us"], b
            p50.setdefault((c, b["name"].split("/")[0]), []).append(b["p50_us"])
for op in ("write_lat", "read_lat"):
    t, m = statistics.median(p50[("tsc", op)]), statistics.median(p50[("monotonic", op)])
    print(f"{op}: p50 {t:.1f} us (tsc) / {m:.1f} us (monotonic) = {t / m:.2f}")
    assert 0.33 < t / m < 3, (op, t, m)
PY
ok "--clock tsc and --clock monotonic agree; samples add up to the run's time"
