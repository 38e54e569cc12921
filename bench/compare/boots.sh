#!/usr/bin/env bash
# boots.sh: perftest.sh in N separate boots of the Soft-RoCE test bed, then
# compare.py --boots over them. One boot is one sample: the guest's speed and
# the tool it happens to favour move from boot to boot by more than a boot's
# own interval, so only a series of boots can show a row at parity (see
# docs/design/perftest-parity.md, "The statistic and the verdicts"). Runs on
# the host (it boots the guests):
#   bench/compare/boots.sh --boots 8 --out /tmp/boots -- --tests all --pairs 4
# Boot k's results land in OUT/boot<k>/all; a boot that fails is named and
# left out; the table covers the boots that finished.
set -euo pipefail

prog=boots.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
usage() {
  cat <<EOF
Usage: bench/compare/$prog [OPTIONS] [-- PERFTEST_SH_OPTIONS...]
  --boots N         guest boots (default 8)
  --out DIR         where each boot's results go (required; OUT/boot<k>/all)
  --build DIR       fabench build directory, passed to perftest.sh (default build/default)
  --mem MIB         guest memory (default 6144)
  --boot-timeout S  limit of each boot (default 1500)
  --margin F        parity margin of the verdicts (default 0.05)
Options after -- go to perftest.sh in every boot (default: --tests all --pairs 4).
The boots run one after the other under flock /tmp/fabench-vm.lock (one guest at a time).
EOF
}
die() { echo "$prog: error: $*" >&2; exit 2; }

boots=8 out="" build=build/default mem=6144 boot_timeout=1500 margin=0.05
while (($#)); do
  case "$1" in
    --boots) boots=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --mem) mem=${2:?}; shift ;;
    --boot-timeout) boot_timeout=${2:?}; shift ;;
    --margin) margin=${2:?}; shift ;;
    --) shift; break ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
pt_args=("$@")
((${#pt_args[@]})) || pt_args=(--tests all --pairs 4)
for v in boots mem boot_timeout; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v//_/-}: '${!v}' is not a positive number"
done
((boots >= 2)) || die "--boots: an interval across boots needs at least 2"
[[ -n $out ]] || die "--out DIR is required"
[[ -x $build/bench/fabench-lat ]] || die "no $build/bench/fabench-lat: build first"
for a in "${pt_args[@]}"; do
  [[ $a != --out ]] || die "perftest.sh's --out is set per boot (OUT/boot<k>/all); leave it out"
done
mkdir -p "$out"
# The scripts each boot runs, copied once: editing the checkout during a
# series changes nothing in it. The checkout's layout is kept: compare.py reads
# fabench's JSON through tools/fabench_report/gbjson.py, found from its own path.
rm -rf "$out/scripts"
mkdir -p "$out/scripts/bench" "$out/scripts/tools"
cp -r "$here" "$out/scripts/bench/compare"
cp -r "$root/tools/fabench_report" "$out/scripts/tools/fabench_report"
scripts=$out/scripts/bench/compare
vm=$out/scripts/tools/softroce-vm
cp "$root/tools/softroce-vm" "$vm"

done_outs=()
for ((k = 1; k <= boots; k++)); do
  b=$out/boot$k
  rm -rf "$b"
  mkdir -p "$b"
  t0=$SECONDS
  rc=0
  # $FABENCH_OUT is the guest's; it is expanded there, by bash -c.
  # shellcheck disable=SC2016
  flock /tmp/fabench-vm.lock "$vm" --wire --mem "$mem" --timeout "$boot_timeout" --out "$b" -- \
    bash -c '"$0" --build "$1" "${@:2}" --out "$FABENCH_OUT/all"' "$scripts/perftest.sh" "$build" "${pt_args[@]}" \
    >"$b/log" 2>&1 || rc=$?
  if ((rc == 0)) && [[ -r $b/all/summary.json ]]; then
    done_outs+=("$b/all")
    echo "$prog: boot $k/$boots done in $((SECONDS - t0)) s"
  else
    echo "$prog: boot $k/$boots FAILED (exit $rc) after $((SECONDS - t0)) s; see $b/log" >&2
  fi
done
((${#done_outs[@]} >= 2)) || die "fewer than 2 boots finished; nothing to compare"
python3 "$scripts/compare.py" --margin "$margin" --boots "${done_outs[@]}" | tee "$out/boots.md"
