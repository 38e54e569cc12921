#!/usr/bin/env bash
# The man pages (cmake/FabenchMan.cmake): one per binary in $1/bench and per installed tool
# (fabench-report, fabench-launch, softroce-vm), each rendered by man -l and by groff with every
# warning on, with no warning, and naming the options it has (the tools have no --version).
set -euo pipefail
build=$1
dir=$build/man
fail=0
tools=(fabench-report fabench-launch softroce-vm)
names=("${tools[@]}")
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
  wants=(NAME SYNOPSIS --help)
  [[ $n == fabench-launch || $n == softroce-vm ]] || wants+=(--version)
  for want in "${wants[@]}"; do
    grep -q -- "$want" <<<"$text" || { echo "FAIL: $n.1 does not mention $want"; fail=1; }
  done
done
((fail)) && exit 1
echo "OK: ${#names[@]} man pages render without warnings: ${names[*]}"
