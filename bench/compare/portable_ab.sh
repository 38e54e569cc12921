#!/usr/bin/env bash
# portable_ab.sh [REV]: the portable reduction path of this checkout against that of REV
# (default 24793b0, before the SIMD paths), both in one process, alternating, 8 MiB sums.
# Builds REV's lib/src/coll/reduce.cpp under another namespace with this checkout's
# build/default/lib/libfabench_coll.a (build it first), into a temp dir.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rev=${1:-24793b0}
lib=$root/build/default/lib/libfabench_coll.a
[[ -f $lib ]] || { echo "portable_ab.sh: no $lib (cmake --build build/default --target fabench_coll)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/portable_ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show "$rev:lib/include/fabench/coll/reduce.hpp" | sed 's/namespace fabench::coll {/namespace fabench_old::coll {/' >"$tmp/reduce_old.hpp"
git -C "$root" show "$rev:lib/src/coll/reduce.cpp" |
  sed 's/namespace fabench::coll {/namespace fabench_old::coll {/; s|#include "fabench/coll/reduce.hpp"|#include "reduce_old.hpp"|' >"$tmp/reduce_old.cpp"
g++ -std=c++20 -O2 -c "$tmp/reduce_old.cpp" -I"$tmp" -o "$tmp/reduce_old.o"
g++ -std=c++20 -O2 -I"$root/lib/include" "$here/portable_ab/ab.cpp" "$tmp/reduce_old.o" "$lib" -lfmt -o "$tmp/ab"
for i in 1 2 3; do "$tmp/ab"; done
