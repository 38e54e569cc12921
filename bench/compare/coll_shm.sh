#!/usr/bin/env bash
# coll_shm.sh: fabench-coll --transport shm against Open MPI's shared-memory transport (pml ob1,
# btl self,vader) on this host, no device and no VM:
#   bench/compare/coll_shm.sh [--ranks 2] [--sizes 4K..64M] [--pairs 3]
# Builds bench/compare/mpi_coll.c with mpicc into a temp dir; per pair (A B A B ...): MPI's
# all-reduce and all-to-all (f32), then fabench-coll with the same ranks and sizes (all-reduce
# ring and rhd f32 and bf16, all-to-all pairwise and allatonce f32, and the same all-reduces
# with --compute none). Prints coll_shm_table.py's tables: busbw per size (median over pairs,
# min..max), fabench/MPI, bf16/f32, full/none, and predicted/measured time.
set -euo pipefail
prog=coll_shm.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ranks=2 sizes=4K..64M factor=4 pairs=3 build=$root/build/default out=
usage() {
  echo "Usage: bench/compare/$prog [--ranks N] [--sizes MIN..MAX] [--factor F] [--pairs N] [--build DIR] [--out DIR]"
  echo "  --ranks N          ranks on this host (default 2)"
  echo "  --sizes MIN..MAX   buffer sizes S, K/M/G = 2^10.. (default 4K..64M)"
  echo "  --factor F         size step (default 4)"
  echo "  --pairs N          MPI/fabench pairs, alternated (default 3)"
  echo "  --build DIR        fabench build dir (default $root/build/default)"
  echo "  --out DIR          keep raw outputs there (default: a temp dir, removed)"
}
die() { echo "$prog: error: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --ranks) ranks=${2:?}; shift ;;
    --sizes) sizes=${2:?}; shift ;;
    --factor) factor=${2:?}; shift ;;
    --pairs) pairs=${2:?}; shift ;;
    --build) build=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done
[[ $sizes == *..* ]] || die "--sizes takes MIN..MAX"
smin=${sizes%..*} smax=${sizes#*..}
for c in mpicc mpirun; do command -v $c >/dev/null || die "$c not found (tools/install-deps)"; done
coll=$build/bench/fabench-coll
[[ -x $coll ]] || die "no $coll (build first)"
tmp=$(mktemp -d /tmp/coll_shm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
[[ -n $out ]] || out=$tmp/out
mkdir -p "$out"
mpicc -O2 -Wall -o "$tmp/mpi_coll" "$here/mpi_coll.c" || die "mpicc failed"
for ((p = 1; p <= pairs; ++p)); do
  echo "$prog: pair $p of $pairs: MPI" >&2
  mpirun --allow-run-as-root --oversubscribe -np "$ranks" --mca pml ob1 --mca btl self,vader \
    "$tmp/mpi_coll" -b "$smin" -e "$smax" -f "$factor" --coll allreduce,alltoall -n 50 -T 1 --transport vader \
    >"$out/mpi.$p.jsonl"
  echo "$prog: pair $p of $pairs: fabench-coll" >&2
  for compute in full none; do
    args=(--coll allreduce,alltoall --algo ring,rhd --a2a-algo pairwise,allatonce --dtype f32,bf16)
    [[ $compute == none ]] && args=(--coll allreduce --algo ring,rhd --dtype f32,bf16)
    "$root/tools/fabench-launch" -n "$ranks" -- "$coll" --transport shm "${args[@]}" --compute "$compute" \
      -b "$smin" -e "$smax" -f "$factor" -D 0.3 --benchmark_format=json 2>"$out/fabench.$compute.$p.err" |
      sed -n 's/^\[0\] //p' >"$out/fabench.$compute.$p.json"
  done
done
python3 "$here/coll_shm_table.py" --pairs "$pairs" "$out"
