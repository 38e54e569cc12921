#!/usr/bin/env bash
# A rank that dies or never arrives makes every other rank fail within the
# timeout, with rank 0 naming it and forwarding that line to the others; a
# dead rank 0 is named by the others. Ranks are started directly (not by a
# launcher that would kill the survivors) so each one's own report is checked.
source "$(dirname "$0")/bootstrap_common.bash"
N=8

# 1. Rank 3 never connects (killed at start): rank 0 waits the full 4 s
#    timeout, then everyone fails naming rank 3. Timed from rank 0's start of
#    the rendezvous (its deadline's origin), so process start-up is not in it.
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 4 --die-rank 3 --die-at start --stamp "$work"
wait_ranks $N
[[ $(rc_of 3) == 137 ]] || fail "rank 3 should have died by SIGKILL, rc $(rc_of 3)"
line="rendezvous timed out after 4 s: rank 3 of 8 never connected to rank 0 \\($host "
expect_err 0 "rank 0: $line"
begin0=$(stamp_of "$work" 0 begin)
for r in 1 2 4 5 6 7; do
  [[ $(rc_of $r) != 0 ]] || fail "rank $r exited 0 without rank 3"
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $line"
  dt=$(( $(end_of $r) - begin0 ))
  # 4 s of waiting, then rank 0's report and the exit: at most 4 s more (a
  # tolerance, not a timeout ruled out), plus $slack_ms in the VM.
  ((dt >= 3900 && dt < 4000 + 4000 + slack_ms)) ||
    fail "rank $r failed $dt ms after rank 0 began the rendezvous, want 4 s + at most $((4000 + slack_ms)) ms"
done
echo "OK: missing rank 3 named by all 7 others, who gave up $(( $(end_of 0) - begin0 )) ms after rank 0 began" \
  "($(( begin0 - t0 )) ms of start-up before that)"

# 2. Rank 3 connects, then is killed while the rendezvous waits for a late
#    rank 7: rank 0 notices at once (well before the 10 s timeout).
#    Rank 7 is late by 4 s (plus $slack_ms in the VM, where starting the
#    others takes longer), all still well inside the 10 s.
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 10 --delay-rank 7 --delay-ms $((4000 + slack_ms))
sleep 1.5
# $work/3.pid is the `timeout` wrapping rank 3; kill the probe itself, its child.
# It must have connected (and said hello) first: under emulation 1.5 s may
# not be enough to start 8 ranks, so wait for its connection to rank 0.
pid3=
for ((i = 0; i < 200; i++)); do
  [[ -s $work/3.pid ]] && pid3=$(pgrep -P "$(cat "$work/3.pid")") || pid3=
  if [[ -n $pid3 ]] && ss -Htnp state established "( dport = :$port )" 2>/dev/null | grep -q "pid=$pid3,"; then
    ((i == 0)) || sleep 0.5  # (connected just now: give it time to send its hello)
    break
  fi
  sleep 0.1
done
[[ -n $pid3 ]] || fail "rank 3's probe never started"
kill_ms=$(now_ms)
kill -9 "$pid3"
wait_ranks $N
peer3="peer rank 3 \\($host 127\\.0\\.0\\.1:[0-9]+\\) closed the connection during rendezvous"
expect_err 0 "rank 0: $peer3"
for r in 1 2 4 5 6; do
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $peer3"
  dt=$(( $(end_of $r) - kill_ms ))
  check_bound "$dt" 3000 10000 "rank $r took $dt ms after rank 3's death to fail (timeout 10 s)"
done
# Rank 7 arrives after rank 0 has given up: it cannot reach rank 0.
[[ $(rc_of 7) != 0 ]] || fail "late rank 7 exited 0"
expect_err 7 "rank 7: rank 7 cannot reach rank 0 for the rendezvous"
echo "OK: rank 3 killed mid-rendezvous, named by rank 0 and 5 others within $(( $(end_of 0) - kill_ms )) ms"

# 3. Rank 5 dies at the last barrier.
port=$(free_port)
spawn_ranks $N "$port" --timeout 20 --barriers 3 --die-rank 5 --die-at barrier --stamp "$work"
wait_ranks $N
peer5="peer rank 5 \\($host 127\\.0\\.0\\.1:[0-9]+\\) closed the connection during barrier 5"
expect_err 0 "rank 0: $peer5"
died=$(stamp_of "$work" 5 died)
slowest=0
for r in 1 2 3 4 6 7; do
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $peer5"
  dt=$(( $(end_of $r) - died ))
  ((dt > slowest)) && slowest=$dt
  check_bound "$dt" 10000 20000 "rank $r failed $dt ms after rank 5 died (timeout 20 s: the death was not noticed)"
done
echo "OK: rank 5 died at barrier 5, named by all others, the last $slowest ms after the death"

# 4. Rank 0 dies at the allgather: every other rank names rank 0.
port=$(free_port)
spawn_ranks $N "$port" --timeout 20 --die-rank 0 --die-at allgather --stamp "$work"
wait_ranks $N
died=$(stamp_of "$work" 0 died)
slowest=0
for r in 1 2 3 4 5 6 7; do
  expect_err $r "rank $r: peer rank 0 \\($host 127\\.0\\.0\\.1:$port\\) closed the connection during allgather 1"
  dt=$(( $(end_of $r) - died ))
  ((dt > slowest)) && slowest=$dt
  check_bound "$dt" 10000 20000 "rank $r failed $dt ms after rank 0 died (timeout 20 s: the death was not noticed)"
done
echo "OK: rank 0's death named by all 7 others, the last $slowest ms after the death"
