#!/usr/bin/env bash
# Bad input and faults: one clear line and a non-zero exit for each user
# error; a dead peer is named within the timeout and measured results are
# kept; the server survives garbage, oversized requests and dead clients.
source "$(dirname "$0")/bench_common.bash"
here=$(dirname "$0")

# expect_error RC_WANTED PATTERN CMD...: CMD exits non-zero (or exactly
# RC_WANTED when not "any") and its stderr has one line matching PATTERN.
expect_error() {
  local want=$1 pattern=$2; shift 2
  local rc=0
  timeout 60 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  ((rc != 0)) || { cat "$WORK/out" "$WORK/err"; fail "'$*' succeeded; expected an error"; }
  [[ $want == any || $rc == "$want" ]] || { cat "$WORK/err"; fail "'$*' exited $rc, expected $want"; }
  grep -Eq -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*': no line matching /$pattern/"; }
  local lines
  lines=$(grep -c . "$WORK/err")
  ((lines == 1)) || { cat "$WORK/err"; fail "'$*' printed $lines lines on stderr, expected one"; }
  ok "$(head -c 150 "$WORK/err")"
}

# --- user errors -----------------------------------------------------------
expect_error any "rxe9.*(rxe0|rxe1)" "$LAT" --loopback -d rxe9
expect_error any "77.*RoCE v2" "$LAT" --loopback -d "$DEV0" -x 77
expect_error 2 "exceeds rxe0 port 1's max_msg_sz" "$BW" --loopback -d "$DEV0" -s 3G
expect_error 2 "contradict" "$LAT" --loopback -d "$DEV0" -a -s 64
expect_error 2 "contradict" "$LAT" --loopback -d "$DEV0" -n 10 -D 1
expect_error 2 "loopback" "$LAT" --loopback 10.0.0.1
expect_error 2 "read needs RC" "$LAT" --loopback -d "$DEV0" --op read -c UD
# fabench-lat has no -b (bidirectional runs are fabench-bw's): the flag itself is
# refused, by name. (A latency spec with bidirectional set, which only a leader
# could send, is validate()'s contradiction: test/unit/test_pair_spec.cpp.)
expect_error 2 "^fabench-lat: error: unknown flag -b \(see --help\)$" \
  "$LAT" --loopback -d "$DEV0" -b
expect_error 2 "MTU" "$BW" --loopback -d "$DEV0" -m 3000
expect_error 2 "Q 200 exceeds -t 16" "$BW" --loopback -d "$DEV0" -t 16 -Q 200

# memlock too low: the registration fails with the hint, the run exits non-zero.
# Root's CAP_IPC_LOCK ignores the limit, so this runs as nobody without it.
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
  bash -c "ulimit -l 64; timeout 60 '$BW' --loopback -d '$DEV0' -s 4M -n 10 --timeout 5" >"$WORK/ml.out" 2>&1 || rc=$?
((rc != 0)) || fail "a 4 MiB registration under ulimit -l 64 succeeded"
grep -q "ulimit -l" "$WORK/ml.out" || { cat "$WORK/ml.out"; fail "no memlock hint"; }
ok "memlock: $(grep -o 'ibv_reg_mr[^)]*)' "$WORK/ml.out" | head -1)"

# The same limit on the client alone: that benchmark fails with the hint,
# the conversation survives and the next benchmark runs on the same server.
start_server "$LAT" 18716 "$WORK/s0.log" --timeout 10
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
  bash -c "ulimit -l 64; timeout 120 '$LAT' -d '$DEV0' -p 18716 '$IP1' -s 4M,2 -n 100 --timeout 10 --benchmark_format=json" \
  >"$WORK/ml2.json" 2>"$WORK/ml2.err" || rc=$?
((rc == 1)) || { cat "$WORK/ml2.err"; fail "client under ulimit -l 64 exited $rc, expected 1"; }
"$PY" - "$WORK/ml2.json" <<'PY' || { cat "$WORK/ml2.err"; fail "a local registration failure broke the session"; }
import json, sys
b = {x["name"]: x for x in json.load(open(sys.argv[1]))["benchmarks"]}
big = b["write_lat/rc/4194304/iterations:100/manual_time"]
assert big.get("error_occurred") and "ulimit -l" in big["error_message"], big
small = b["write_lat/rc/2/iterations:100/manual_time"]
assert not small.get("error_occurred") and small["wrong"] == 0, small
PY
kill "$SERVER_PID"
ok "client-side memlock failure: that benchmark failed with the hint, the next one ran"

# Port in use.
start_server "$LAT" 18711 "$WORK/s1.log"
expect_error any "18711.*already in use|already in use.*18711" "$LAT" -d "$DEV1" -p 18711

# Unreachable peer: named, within the timeout.
start=$SECONDS
expect_error any "10\.50\.0\.99" "$LAT" -d "$DEV0" -p 18711 10.50.0.99 --timeout 3
((SECONDS - start <= 15)) || fail "unreachable peer took $((SECONDS - start)) s to report (timeout 3 s)"

# A peer of another protocol version: one line naming both versions.
"$PY" "$here/fake_peer.py" server 18712 &
PIDS+=($!)
wait_listen 18712
expect_error any "9\.9\.9.*0\.1\.0|0\.1\.0.*9\.9\.9" "$LAT" -d "$DEV0" -p 18712 127.0.0.1 --timeout 5

# --- the server as a network service ----------------------------------------
"$PY" "$here/fake_peer.py" garbage 18711
"$PY" "$here/fake_peer.py" client 18711 >/dev/null || true
sleep 0.5
kill -0 "$SERVER_PID" || { cat "$WORK/s1.log"; fail "server died on garbage"; }
# One line per bad client, each dropped before a valid Hello: the v99 Hello by
# its version, the garbage and the HTTP request by their magic (or, when the
# server's Hello reached a client that had already closed, by the close).
n=$(grep -c "; dropped it before a valid Hello" "$WORK/s1.log" || true)
((n == 3)) || { cat "$WORK/s1.log"; fail "server logged $n dropped connections, expected the 3 bad clients"; }
n=$(grep -c "control protocol v99.*; dropped it before a valid Hello" "$WORK/s1.log" || true)
((n == 1)) || { cat "$WORK/s1.log"; fail "the v99 Hello was not dropped by its version ($n lines)"; }
n=$(grep -cE "(bad magic 0x[0-9a-f]{8}|closed the connection).*; dropped it before a valid Hello" "$WORK/s1.log" || true)
((n == 2)) || { cat "$WORK/s1.log"; fail "garbage and HTTP were not dropped by their magic ($n lines)"; }
timeout 120 "$LAT" -d "$DEV0" -p 18711 "$IP1" -n 200 --timeout 10 >"$WORK/after-garbage.out" 2>&1 ||
  { cat "$WORK/after-garbage.out"; fail "a real client failed after the garbage"; }
ok "server logged garbage, an HTTP request and a v99 Hello, then served a real client"

kill "$SERVER_PID"
start_server "$BW" 18713 "$WORK/s2.log" --max-mem 1M
rc=0
timeout 120 "$BW" -d "$DEV0" -p 18713 "$IP1" -s 4M -n 10 --timeout 10 >"$WORK/mm.out" 2>&1 || rc=$?
((rc != 0)) || fail "server accepted 4 MiB under --max-mem 1M"
grep -q "above its --max-mem of 1 MiB" "$WORK/mm.out" || { cat "$WORK/mm.out"; fail "refusal does not name --max-mem 1M"; }
timeout 120 "$BW" -d "$DEV0" -p 18713 "$IP1" -s 64K -n 100 --timeout 10 >/dev/null 2>&1 ||
  fail "server did not serve a request within --max-mem after refusing one"
ok "server refused 4 MiB above --max-mem 1M and kept serving"

# --- a peer killed mid-run ---------------------------------------------------
# client_failed OUT LIMIT_S WHAT: just after a kill, the background $client
# exits non-zero within LIMIT_S (killed_at: when the kill was sent).
client_failed() {
  local out=$1 limit=$2 what=$3 rc=0
  killed_at=$SECONDS
  timeout 90 tail --pid="$client" -f /dev/null || true
  wait "$client" || rc=$?
  ((rc != 0)) || { cat "$out"; fail "client exited 0 after $what"; }
  ((SECONDS - killed_at <= limit)) || fail "client took $((SECONDS - killed_at)) s to notice that $what (timeout 5 s)"
}

# Server killed: the client names it within the timeout; the finished
# benchmark stays in the console output and in --benchmark_out.
kill "$SERVER_PID"
start_server "$LAT" 18714 "$WORK/s3.log" --timeout 5
"$LAT" -d "$DEV0" -p 18714 "$IP1" -s 2,65536 -n 8000 --timeout 5 \
  --benchmark_out="$WORK/killed.json" --benchmark_out_format=json >"$WORK/c3.out" 2>&1 &
client=$!
PIDS+=($client)
for _ in {1..1200}; do has "$WORK/c3.out" $'\nwrite_lat/rc/2/' && break; nap 0.1; done
grep -q "^write_lat/rc/2/" "$WORK/c3.out" || { cat "$WORK/c3.out"; fail "first benchmark never finished"; }
kill -9 "$SERVER_PID"
client_failed "$WORK/c3.out" 30 "its server was killed"
grep -q "10\.50\.0\.2" "$WORK/c3.out" || { cat "$WORK/c3.out"; fail "the error does not name the peer"; }
"$PY" - "$WORK/killed.json" <<'PY' || { cat "$WORK/c3.out"; fail "measured results were not kept"; }
import json, sys
b = {x["name"]: x for x in json.load(open(sys.argv[1]))["benchmarks"]}
first = b["write_lat/rc/2/iterations:8000/manual_time"]
assert not first.get("error_occurred") and first["p50_us"] > 0 and first["wrong"] == 0, first
second = b["write_lat/rc/65536/iterations:8000/manual_time"]
assert second.get("error_occurred"), second
PY
ok "server killed mid-run: client failed in $((SECONDS - killed_at)) s naming $IP1; first result kept in JSON"

# Client killed: the server drops it and serves the next client.
start_server "$BW" 18715 "$WORK/s4.log" --timeout 5
"$BW" -d "$DEV0" -p 18715 "$IP1" -s 65536 -n 2000000 --timeout 5 >"$WORK/c4.out" 2>&1 &
client=$!
PIDS+=($client)
for _ in {1..300}; do has "$WORK/s4.log" "connected" && break; nap 0.1; done
sleep 2
kill -9 "$client"
timeout 120 "$LAT" -d "$DEV0" -p 18715 "$IP1" -n 200 --timeout 30 >"$WORK/c5.out" 2>&1 ||
  { cat "$WORK/s4.log" "$WORK/c5.out"; fail "server did not serve the next client after one was killed"; }
n=$(grep -c "; dropped it, serving the next" "$WORK/s4.log" || true)
((n == 1)) || { cat "$WORK/s4.log"; fail "server logged $n dropped clients, expected the killed one"; }
ok "client killed mid-run: server logged '$(grep -m1 "dropped it" "$WORK/s4.log" | head -c 120)' and served the next"

# The process serving a client killed (a crash of the serving process, which
# is a child of the server's spawner, ctrl::ServingProcess): the server names
# it in its log and to the client, which exits non-zero within the timeout,
# and the next client gets a fresh serving process.
"$BW" -d "$DEV0" -p 18715 "$IP1" -s 65536 -n 2000000 --timeout 5 >"$WORK/c6.out" 2>&1 &
client=$!
PIDS+=("$client")
serving=
for _ in {1..300}; do
  serving=$(serving_pids | head -n1)
  [[ -n $serving ]] && has "$WORK/s4.log" "connected" && break
  nap 0.1
done
[[ -n $serving ]] || { cat "$WORK/s4.log"; fail "no serving process under server $SERVER_PID"; }
sleep 2
kill -9 "$serving"
client_failed "$WORK/c6.out" 7 "its serving process was killed"
grep -q "killed by signal 9" "$WORK/c6.out" || { cat "$WORK/c6.out"; fail "the client was not told how its serving process ended"; }
grep -q "its serving process (pid $serving) was killed by signal 9 (Killed); dropped it, serving the next" "$WORK/s4.log" ||
  { cat "$WORK/s4.log"; fail "the server's log does not name the killed serving process"; }
timeout 120 "$LAT" -d "$DEV0" -p 18715 "$IP1" -n 200 --timeout 30 >"$WORK/c7.out" 2>&1 ||
  { cat "$WORK/s4.log" "$WORK/c7.out"; fail "server did not serve the next client after its serving process was killed"; }
kill -0 "$SERVER_PID" || fail "the server died with its serving process"
ok "serving process killed mid-run: client told in $((SECONDS - killed_at)) s: '$(grep -m1 -oE "killed by signal 9 \([A-Za-z]+\)" "$WORK/c6.out")'; next client served"
