#!/usr/bin/env bash
# The CMake package as a user meets it: install the fabench-dev component of build dir $1 into a
# fresh prefix, configure test/package/consumer (source dir $2) against it with compiler $3, C++
# flags $4 and link flags $5 (the build dir's), build it and run it.
set -euo pipefail
build=$1 src=$2 cxx=${3:-c++} cxxflags=${4:-} ldflags=${5:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabench-consumer-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --component fabench-dev >/dev/null
test -f "$tmp/prefix/include/fabench/verbs/device.hpp"
test ! -e "$tmp/prefix/bin"  # the dev component holds no binaries
cmake -S "$src/test/package/consumer" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" >/dev/null
cmake --build "$tmp/build" >/dev/null
out=$("$tmp/build/fabench-consumer")
echo "$out"
want=$(sed -n 's/^project(fabench VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
grep -qx "fabench $want" <<<"$out" || { echo "FAIL: the consumer does not report fabench $want"; exit 1; }
grep -Eq '^([0-9]+ RDMA device|no device list: )' <<<"$out" || { echo "FAIL: no device list line"; exit 1; }
echo "OK: find_package(fabench $want) from an install prefix, fabench::verbs linked and run"
