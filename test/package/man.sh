#!/usr/bin/env bash
# The man pages (cmake/FabenchMan.cmake): one per binary in $1/bench and fabench-report, each
# rendered by man -l and by groff with every warning on, with no warning, and naming the options
# every binary has.
set -euo pipefail
build=$1
dir=$build/man
fail=0
names=(fabench-report)
for b in "$build"/bench/fabench-*; do
  [[ -x $b && -f $b ]] && names+=("$(basename "$b")")
done
for n in "${names[@]}"; do
  page=$dir/$n.1
  if [[ ! -f $page || ! -f $page.gz ]]; then
    echo "FAIL: $n: no $page(.gz)"; fail=1; continue
  fi
  warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1 || echo "groff exit $?")
  warn+=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page.gz" 2>&1 >/dev/null || echo "man exit $?")
  if [[ -n $warn ]]; then
    echo "FAIL: $n.1: $warn"; fail=1
  fi
  text=$(MANWIDTH=100 man -E UTF-8 -l "$page.gz" 2>/dev/null)
  for want in NAME SYNOPSIS --version --help; do
    grep -q -- "$want" <<<"$text" || { echo "FAIL: $n.1 does not mention $want"; fail=1; }
  done
done
((fail)) && exit 1
echo "OK: ${#names[@]} man pages render without warnings: ${names[*]}"
