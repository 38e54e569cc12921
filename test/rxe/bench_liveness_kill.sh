#!/usr/bin/env bash
# ctest-timeout: 600
# Server liveness, real clients: a client killed (SIGKILL) at many moments of
# every op, transport and direction, or stopped (SIGSTOP) mid-run, never keeps
# the server from serving the next client for more than a few seconds (a
# stopped one: its --timeout). Includes the two cases first reported: a write
# bandwidth client killed 4 s into its run, and a silent TCP connection on a
# fresh server.
source "$(dirname "$0")/liveness_common.bash"
PORT=18720
SERVER_LOG=$WORK/server.log
start_server "$LAT" "$PORT" "$SERVER_LOG" --timeout 4 -v

# The first report: write bandwidth, 64 KiB, killed 4 s into the run.
run_and_kill 4 9 "$BW" -d "$DEV0" -p "$PORT" "$IP1" -s 65536 -n 100000
served_within 5 "write bw killed 4 s into its run"
reap_victim

# Every op/transport/direction, killed mid-run (CI: each op, each transport
# and both directions at least once; full_matrix: every combination).
if full_matrix; then
  cases=(
    "$LAT --op write -c RC" "$LAT --op write -c UC" "$LAT --op send -c RC" "$LAT --op send -c UC"
    "$LAT --op send -c UD" "$LAT --op read -c RC" "$LAT -A FETCH_AND_ADD" "$LAT -A CMP_AND_SWAP"
    "$BW --op write -c RC -s 65536" "$BW --op write -c UC -s 65536" "$BW --op read -s 65536"
    "$BW --op send -c RC -s 65536" "$BW --op send -c UC -s 4096" "$BW --op send -c UD -s 2048"
    "$BW --op write -b -s 65536" "$BW --op send -b -s 65536" "$BW --op send -b -c UC -s 65536"
  )
  delays=(0.05 0.1 0.2 0.3 0.45 0.6 0.8 1.0)
else
  cases=(
    "$LAT --op write -c UC" "$LAT --op send -c UD" "$LAT --op read -c RC" "$LAT -A CMP_AND_SWAP"
    "$BW --op write -c RC -s 65536" "$BW --op send -c UD -s 2048" "$BW --op send -b -c UC -s 65536"
  )
  delays=(0.05 0.2 0.45 0.8)
fi
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  run_and_kill 1.5 9 $c -d "$DEV0" -p "$PORT" "$IP1" -n 100000000
  served_within 5 "SIGKILL mid-run: ${c#"$build"/bench/}"
  reap_victim
done

# Every moment of one conversation, from process start to the run: a sweep
# of kill delays (start-up, device open, connect, setup, exchange, run).
for delay in "${delays[@]}"; do
  run_and_kill "$delay" 9 "$BW" --op send -b -d "$DEV0" -p "$PORT" "$IP1" -s 65536 -n 100000000
  served_within 5 "SIGKILL after $delay s (send bw, bidirectional)"
  reap_victim
done

# A stopped client holds the server no longer than --timeout (4 s), and the
# server says why: one line per stopped client, among the lines of this part.
lines_before=$(wc -l <"$SERVER_LOG")
for c in "$LAT --op write" "$BW --op write -s 65536" "$BW --op send -b -s 65536"; do
  # shellcheck disable=SC2086
  run_and_kill 1.5 STOP $c -d "$DEV0" -p "$PORT" "$IP1" -n 100000000
  served_within 10 "SIGSTOP mid-run: ${c#"$build"/bench/}"
  reap_victim
done
n_stopped=$(tail -n +"$((lines_before + 1))" "$SERVER_LOG" |
  grep -cE "(sent nothing|silent) for 4 s.*; dropped it, serving the next" || true)
((n_stopped == 3)) || { cat "$SERVER_LOG"; fail "server named $n_stopped stopped clients as silent, expected 3"; }
ok "server named the stopped clients: $(grep -m1 -oE "(sent nothing|silent) for 4 s[^;]*" "$SERVER_LOG")"

# While a client is served, a second one is told at once: a real client gets
# the line, and a raw one (timed from its Hello, without process start-up)
# gets it within the 1 s grace plus slack.
run_and_kill 1.5 CONT "$LAT" -d "$DEV0" -p "$PORT" "$IP1" -n 100000000
rc=0
timeout 30 "$LAT" -d "$DEV0" -p "$PORT" "$IP1" -n 50 --timeout 10 >"$WORK/busy.out" 2>&1 || rc=$?
((rc != 0)) || fail "a second client was served while the first ran"
grep -q "busy: serving .*10\.50\.0\.1.* since [0-9:]* ([0-9]* s)" "$WORK/busy.out" || { cat "$WORK/busy.out"; fail "no busy line"; }
ms=$("$PY" - "$IP1" "$PORT" <<'PY'
import socket, struct, sys, time
host, port = sys.argv[1], int(sys.argv[2])
def s(x):
    b = x.encode()
    return struct.pack("<I", len(b)) + b
# Hello v4: version, build version, host, rank, size, then its challenge (empty: no token).
payload = struct.pack("<H", 4) + s("0.1.0") + s("raw-client") + struct.pack("<III", 0, 0, 0)
c = socket.create_connection((host, port), timeout=10)
t0 = time.monotonic()
c.sendall(struct.pack("<IHHI", 0x50434246, 4, 1, len(payload)) + payload)
data = b""
while b"busy: serving" not in data:
    chunk = c.recv(4096)
    if not chunk:
        break
    data += chunk
print(int((time.monotonic() - t0) * 1000) if b"busy: serving" in data else -1)
PY
)
((ms >= 0)) || fail "a raw client's Hello got no busy answer"
((ms < 2500)) || fail "the busy answer took $ms ms after the Hello (grace 1 s)"
ok "second client told: $(grep -o 'busy:.*' "$WORK/busy.out" | head -c 120); a raw Hello got it in $ms ms"
reap_victim
served_within 5 "after the busy refusal"

# The second report: silent connections beside a real client, on a fresh
# server with the default handshake timeout.
kill "$SERVER_PID"
PORT=18721
SERVER_LOG=$WORK/server2.log
start_server "$LAT" "$PORT" "$SERVER_LOG"
exec 4<>"/dev/tcp/$IP1/$PORT"
exec 5<>"/dev/tcp/$IP1/$PORT"
"$PY" -c "
import socket, struct, sys, time
s = socket.create_connection(('$IP1', $PORT))
s.sendall(struct.pack('<IHHI', 0x50434246, 4, 1, 40) + b'half')  # a Hello cut short
time.sleep(20)
" &
PIDS+=($!)
sleep 0.3
served_within 3 "two silent sockets and a half-sent Hello open"
sleep 3.5
# A fresh log: exactly the three, the half Hello named as cut mid-message.
n_dropped=$(grep -c "; dropped it before a valid Hello" "$SERVER_LOG" || true)
((n_dropped == 3)) || { cat "$SERVER_LOG"; fail "the server dropped $n_dropped connections after 3 s, expected the 3 silent ones"; }
n_half=$(grep -c "silent for 3 s in the middle of a message; dropped it before a valid Hello" "$SERVER_LOG" || true)
((n_half == 1)) || { cat "$SERVER_LOG"; fail "the half-sent Hello was not named as cut mid-message ($n_half lines)"; }
ok "silent connections dropped after the handshake timeout: $(grep -m1 -o 'silent for 3 s[^;]*' "$SERVER_LOG")"
exec 4>&- 5>&-
served_within 3 "after the silent connections"
