#!/usr/bin/env bash
# tools/fabench-launch: 8 ranks bootstrap through it; output lines carry the
# rank; a failing rank stops the others at once and its status is the exit
# status; --timeout stops everything with 124.
source "$(dirname "$0")/bootstrap_common.bash"

# 1. Eight ranks, all succeed.
rc=0
timeout 120 "$launch" -n 8 -- "$probe" --timeout 30 >"$work/ok.out" 2>"$work/ok.err" || rc=$?
cat "$work/ok.out"
((rc == 0)) || { cat "$work/ok.err"; fail "fabench-launch -n 8 exited $rc"; }
for r in 0 1 2 3 4 5 6 7; do
  grep -q "^\[$r\] rank $r/8 (.*): rendezvous, allgather of 8 ranks' endpoints and 3 barriers ok .*\[RANK/WORLD_SIZE\]" \
    "$work/ok.out" || fail "no success line prefixed [$r] from rank $r"
done
echo "OK: 8 ranks under fabench-launch"

# 2. Rank 2 dies (SIGKILL) at the last barrier: the others are stopped long
#    before their 30 s timeout. The exit status is the first failure the
#    launcher sees: rank 2's 137, or, when a survivor that noticed the death
#    exits before the kernel reports rank 2's (gVisor does this), that
#    survivor's 1; either way the launcher names the rank it reports.
#    Timed from rank 2's death (its --stamp), not from before the launch:
#    the launcher's own start-up is no part of stopping (python3 behind a
#    pyenv shim takes ~20 s to start in the emulated VM).
mkdir "$work/die"
t0=$(now_ms); rc=0
timeout 120 "$launch" -n 4 --grace 1 -- "$probe" --timeout 30 --die-rank 2 --die-at barrier --stamp "$work/die" \
  >"$work/die.out" 2>"$work/die.err" || rc=$?
t1=$(now_ms)
cat "$work/die.err"
if ((rc == 137)); then
  grep -q "^fabench-launch: rank 2 was killed by SIGKILL; stopping the other 3 rank(s)" "$work/die.err" ||
    fail "status 137 but the launcher did not name rank 2"
elif ((rc == 1)); then
  grep -Eq "^fabench-launch: rank [0134] exited with status 1; stopping the other 3 rank\(s\)" "$work/die.err" ||
    fail "status 1 but the launcher did not name the rank that exited 1"
  grep -Eq "^\[0\] fabench_bootstrap_probe: rank 0: peer rank 2 \($host 127\.0\.0\.1:[0-9]+\) closed the connection" \
    "$work/die.err" || fail "nobody named rank 2 as the one that died"
else
  fail "exit status $rc, want 137 (rank 2 killed) or 1 (a survivor that noticed it)"
fi
grep -q "^\[2\] fabench_bootstrap_probe: rank 2: killing myself" "$work/die.err" || fail "rank 2's stderr not prefixed [2]"
dt=$(( t1 - $(stamp_of "$work/die" 2 died) ))
check_bound "$dt" 10000 30000 "took $dt ms to stop after rank 2 died (the ranks' timeout is 30 s)"
echo "OK: rank 2's death ended the launch in $dt ms with status $rc" \
  "($(( $(stamp_of "$work/die" 0 begin) - t0 )) ms from the launch to rank 0's rendezvous)"

# 3. A plain failing command: the first failure's status is the exit status.
rc=0
timeout 60 "$launch" -n 3 -- sh -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 30' 2>"$work/five.err" || rc=$?
((rc == 5)) || fail "exit status $rc, want 5"
echo "OK: exit status of the first failing rank (5)"

# 4. --timeout. Timed from the first rank's start (the launcher's clock starts
#    once it has started them), so the launcher's own start-up is not in it.
t0=$(now_ms); rc=0
timeout 60 "$launch" -n 2 --timeout 1 --grace 1 -- \
  bash -c 'echo "${EPOCHREALTIME:-}" >"$0/slow.$RANK.start"; exec sleep 30' "$work" 2>"$work/slow.err" || rc=$?
t1=$(now_ms)
((rc == 124)) || fail "exit status $rc after --timeout, want 124"
first=
for r in 0 1; do
  s=$(cat "$work/slow.$r.start" 2>/dev/null || true); s=${s/[.,]/}
  [[ $s =~ ^[0-9]+$ ]] || fail "rank $r recorded no start time (bash without \$EPOCHREALTIME?)"
  s=$(( 10#$s / 1000 ))
  [[ -z $first || $s -lt $first ]] && first=$s
done
dt=$(( t1 - first ))
check_bound "$dt" 5000 30000 "--timeout 1 took $dt ms from the first rank's start (the ranks sleep 30 s)"
echo "OK: --timeout 1 stopped both ranks $dt ms after they started (124;" \
  "$(( first - t0 )) ms of launcher start-up before that)"
