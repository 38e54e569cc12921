#!/usr/bin/env bash
# congest_iso.sh: fabench-congest's isolated victim figures against fabench-lat and fabench-bw
# measuring the same traffic, in one guest, alternated:
#   tools/softroce-vm --wire -- bench/compare/congest_iso.sh [--pairs 3]
# fabench-congest runs 4 ranks (even ranks on rxe0, odd on rxe1; congestors 2,3, victims 0 and
# 1), so its isolated phase is two victims, each toward the other: 8 B ping-pongs in both
# directions at once (latency), 8 x 128 KiB writes in both directions (bandwidth). From the
# point-to-point tools: one fabench-lat (8 B, rxe0 -> rxe1: one flow; write, polling memory,
# and send, taking a receive completion as the victims' writes with immediate do), two at once
# (write, one each way: the victims' two flows, but four busy processes where the victims are
# two), and
# fabench-bw -b (write, 128 KiB, 8 in flight, both ways). Only the isolated phases are compared
# (the loaded ones run, put-incast 3 -> 2, and are ignored). Prints a markdown table
# (congest_iso_table.py): medians over the pairs and the ratio congest / tool per pair.
set -euo pipefail
prog=congest_iso.sh
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"   # wait_listen, testbed_devices
root=$(cd "$here/../.." && pwd)

usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS]   (inside tools/softroce-vm --wire)
  --pairs N        congest / tool pairs, alternated A B B A ... (default 3)
  --lat-iters N    latency iterations per run, each side (default 2000)
  --bw-iters N     bandwidth iterations (1 MiB each) per run (default 60)
  --build DIR      fabench build dir (default $root/build/default)
  --out DIR        keep the raw outputs there (default \$FABENCH_OUT/congest_iso or a temp dir)
  -h, --help       this help
Exit status: 0 when every run ended with status 0, 1 otherwise, 2 on bad input.
EOF
}

die() { echo "$prog: $*" >&2; exit 2; }
pairs=3 lat_iters=2000 bw_iters=60 build=$root/build/default out=""
while (($#)); do
  case $1 in
    --pairs|--lat-iters|--bw-iters|--build|--out) (($# >= 2)) || die "$1 needs a value" ;;&
    --pairs) pairs=$2; shift ;;
    --lat-iters) lat_iters=$2; shift ;;
    --bw-iters) bw_iters=$2; shift ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
for v in "$pairs" "$lat_iters" "$bw_iters"; do [[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a count >= 1"; done
for b in fabench-congest fabench-lat fabench-bw; do
  [[ -x $build/bench/$b ]] || die "$build/bench/$b not built (cmake --build --preset default)"
done
testbed_devices
IP0=${FABENCH_RXE_IP0:-10.50.0.1}
out=${out:-${FABENCH_OUT:+$FABENCH_OUT/congest_iso}}
out=${out:-$(mktemp -d)}
mkdir -p "$out"
bench=$build/bench
failed=0

congest() {  # NAME TEST ITERS
  timeout 600 "$root/tools/fabench-launch" -n 4 --timeout 580 -- "$bench/fabench-congest" -d "$DEV0,$DEV1" \
    -x "$GID" --congestor-ranks 2,3 --pattern put-incast --rounds 1 --test "$2" -n "$3" \
    --benchmark_out="$out/$1.json" --benchmark_out_format=json >"$out/$1.out" 2>&1 || {
    echo "$prog: $1 failed (see $out/$1.out)" >&2; failed=1; }
}

lat_one() {  # NAME OP TAG: one fabench-lat, rxe0 -> rxe1
  local s
  "$bench/fabench-lat" -d "$DEV1" -p 18610 -x "$GID" --timeout 60 --once >"$out/$1.s$3.out" 2>&1 & s=$!
  wait_listen 18610 $s "$out/$1.s$3.out" || { failed=1; return; }
  "$bench/fabench-lat" -d "$DEV0" -p 18610 -x "$GID" --timeout 60 --op "$2" -s 8 -n "$lat_iters" "$IP1" \
    --benchmark_out="$out/$1.$3.json" --benchmark_out_format=json >"$out/$1.$3.out" 2>&1 || {
    echo "$prog: $1 (one flow, $2) failed (see $out/$1.$3.out)" >&2; failed=1; }
  wait $s || true
}

lat_pair() {  # NAME: two fabench-lat at once, one each way
  local s1 s2 c1 c2
  "$bench/fabench-lat" -d "$DEV1" -p 18611 -x "$GID" --timeout 60 --once >"$out/$1.s1.out" 2>&1 & s1=$!
  "$bench/fabench-lat" -d "$DEV0" -p 18612 -x "$GID" --timeout 60 --once >"$out/$1.s2.out" 2>&1 & s2=$!
  if ! wait_listen 18611 $s1 "$out/$1.s1.out" || ! wait_listen 18612 $s2 "$out/$1.s2.out"; then
    kill $s1 $s2 2>/dev/null || true
    failed=1
    return
  fi
  for side in 1 2; do
    local dev=$DEV0 ip=$IP1 port=18611
    ((side == 2)) && dev=$DEV1 ip=$IP0 port=18612
    "$bench/fabench-lat" -d "$dev" -p $port -x "$GID" --timeout 60 --op write -s 8 -n "$lat_iters" "$ip" \
      --benchmark_out="$out/$1.c$side.json" --benchmark_out_format=json >"$out/$1.c$side.out" 2>&1 &
    ((side == 1)) && c1=$! || c2=$!
  done
  local rc=0
  wait $c1 || rc=1
  wait $c2 || rc=1
  ((rc == 0)) || { echo "$prog: $1 failed (see $out/$1.c*.out)" >&2; failed=1; }
  wait $s1 $s2 || true
}

bw_pair() {  # NAME: fabench-bw -b, write 128 KiB, 8 in flight; -n counts 128 KiB messages
  local s
  "$bench/fabench-bw" -d "$DEV1" -p 18613 -x "$GID" --timeout 60 --once >"$out/$1.s.out" 2>&1 & s=$!
  wait_listen 18613 $s "$out/$1.s.out" || { failed=1; return; }
  "$bench/fabench-bw" -d "$DEV0" -p 18613 -x "$GID" --timeout 60 -b -s 128K -t 8 -n $((bw_iters * 8)) "$IP1" \
    --benchmark_out="$out/$1.c.json" --benchmark_out_format=json >"$out/$1.c.out" 2>&1 || {
    echo "$prog: $1 failed (see $out/$1.c.out)" >&2; failed=1; }
  wait $s || true
}

for i in $(seq "$pairs"); do
  order=(congest tool)
  ((i % 2 == 0)) && order=(tool congest)
  for who in "${order[@]}"; do
    echo "pair $i: $who"
    if [[ $who == congest ]]; then
      congest "congest-lat.$i" latency "$lat_iters"
      congest "congest-bw.$i" bandwidth "$bw_iters"
    else
      lat_one "lat.$i" write c0
      lat_one "lat.$i" send c3
      lat_pair "lat.$i"
      bw_pair "bw.$i"
    fi
  done
done
python3 "$here/congest_iso_table.py" "$out" "$pairs" || failed=1
echo "raw outputs: $out"
exit $failed
