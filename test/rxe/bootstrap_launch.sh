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
t0=$(now_ms); rc=0
timeout 120 "$launch" -n 4 --grace 1 -- "$probe" --timeout 30 --die-rank 2 --die-at barrier \
  >"$work/die.out" 2>"$work/die.err" || rc=$?
dt=$(( $(now_ms) - t0 ))
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
((dt < 10000)) || fail "took $dt ms to stop after rank 2 died"
echo "OK: rank 2's death ended the launch in $dt ms with status $rc"

# 3. A plain failing command: the first failure's status is the exit status.
rc=0
timeout 60 "$launch" -n 3 -- sh -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 30' 2>"$work/five.err" || rc=$?
((rc == 5)) || fail "exit status $rc, want 5"
echo "OK: exit status of the first failing rank (5)"

# 4. --timeout.
t0=$(now_ms); rc=0
timeout 60 "$launch" -n 2 --timeout 1 --grace 1 -- sleep 30 2>"$work/slow.err" || rc=$?
dt=$(( $(now_ms) - t0 ))
((rc == 124)) || fail "exit status $rc after --timeout, want 124"
((dt < 5000)) || fail "--timeout 1 took $dt ms"
echo "OK: --timeout 1 stopped both ranks in $dt ms (124)"
