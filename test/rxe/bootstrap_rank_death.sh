#!/usr/bin/env bash
# A rank that dies or never arrives makes every other rank fail within the
# timeout, with rank 0 naming it and forwarding that line to the others; a
# dead rank 0 is named by the others. Ranks are started directly (not by a
# launcher that would kill the survivors) so each one's own report is checked.
source "$(dirname "$0")/bootstrap_common.bash"
N=8

# 1. Rank 3 never connects (killed at start): rank 0 waits the full 4 s
#    timeout, then everyone fails naming rank 3.
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 4 --die-rank 3 --die-at start
wait_ranks $N
[[ $(rc_of 3) == 137 ]] || fail "rank 3 should have died by SIGKILL, rc $(rc_of 3)"
line="rendezvous timed out after 4 s: rank 3 of 8 never connected to rank 0 \\($host "
expect_err 0 "rank 0: $line"
for r in 1 2 4 5 6 7; do
  [[ $(rc_of $r) != 0 ]] || fail "rank $r exited 0 without rank 3"
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $line"
  dt=$(( $(end_of $r) - t0 ))
  # 4 s of waiting, plus process start-up (slow under sanitizers or gVisor).
  ((dt >= 3900 && dt < 4000 + 4000)) || fail "rank $r failed after $dt ms, want 4 s + at most 4 s"
done
echo "OK: missing rank 3 named by all 7 others, who gave up after $(( $(end_of 0) - t0 )) ms"

# 2. Rank 3 connects, then is killed while the rendezvous waits for a late
#    rank 7: rank 0 notices at once (well before the 10 s timeout).
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 10 --delay-rank 7 --delay-ms 4000
sleep 1.5
# $work/3.pid is the `timeout` wrapping rank 3; kill the probe itself, its child.
kill_ms=$(now_ms)
kill -9 "$(pgrep -P "$(cat "$work/3.pid")")"
wait_ranks $N
peer3="peer rank 3 \\($host 127\\.0\\.0\\.1:[0-9]+\\) closed the connection during rendezvous"
expect_err 0 "rank 0: $peer3"
for r in 1 2 4 5 6; do
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $peer3"
  dt=$(( $(end_of $r) - kill_ms ))
  ((dt < 3000)) || fail "rank $r took $dt ms after rank 3's death to fail"
done
# Rank 7 arrives after rank 0 has given up: it cannot reach rank 0.
[[ $(rc_of 7) != 0 ]] || fail "late rank 7 exited 0"
expect_err 7 "rank 7: rank 7 cannot reach rank 0 for the rendezvous"
echo "OK: rank 3 killed mid-rendezvous, named by rank 0 and 5 others within $(( $(end_of 0) - kill_ms )) ms"

# 3. Rank 5 dies at the last barrier.
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 20 --barriers 3 --die-rank 5 --die-at barrier
wait_ranks $N
peer5="peer rank 5 \\($host 127\\.0\\.0\\.1:[0-9]+\\) closed the connection during barrier 5"
expect_err 0 "rank 0: $peer5"
for r in 1 2 3 4 6 7; do
  expect_err $r "rank $r: rank 0 \\($host\\) reports: $peer5"
  dt=$(( $(end_of $r) - t0 ))
  ((dt < 10000)) || fail "rank $r failed after $dt ms (timeout 20 s: the death was not noticed)"
done
echo "OK: rank 5 died at barrier 5, named by all others"

# 4. Rank 0 dies at the allgather: every other rank names rank 0.
port=$(free_port); t0=$(now_ms)
spawn_ranks $N "$port" --timeout 20 --die-rank 0 --die-at allgather
wait_ranks $N
for r in 1 2 3 4 5 6 7; do
  expect_err $r "rank $r: peer rank 0 \\($host 127\\.0\\.0\\.1:$port\\) closed the connection during allgather 1"
  dt=$(( $(end_of $r) - t0 ))
  ((dt < 10000)) || fail "rank $r failed after $dt ms (timeout 20 s: the death was not noticed)"
done
echo "OK: rank 0's death named by all 7 others"
