#!/usr/bin/env bash
# The shared token (--token, --token-file, FABENCH_TOKEN; lib/ctrl/token.hpp).
# A pair server without one says once that any host can use it; a server
# with one serves a client that proves it, while a client without it or with
# another one fails with one line within seconds and the server, having
# logged and dropped it, serves the next right client at once. The N-rank
# rendezvous (fabench-coll under fabench-launch) runs with FABENCH_TOKEN on
# every rank, and one rank with another token fails the run with a clear line.
source "$(dirname "$0")/coll_common.bash"

printf 'lab-secret\n' >"$WORK/token"
chmod 600 "$WORK/token"

# expect_refused PATTERN CMD...: CMD fails within 10 s with one line on
# stderr, matching PATTERN.
expect_refused() {
  local pattern=$1; shift
  local rc=0 start=$SECONDS
  timeout 60 "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  ((rc != 0)) || { cat "$WORK/out" "$WORK/err"; fail "'$*' succeeded; expected a refusal"; }
  ((SECONDS - start <= 10)) || fail "'$*' took $((SECONDS - start)) s to fail"
  grep -Eq -- "$pattern" "$WORK/err" || { cat "$WORK/err"; fail "'$*': no line matching /$pattern/"; }
  local lines
  lines=$(grep -c . "$WORK/err")
  ((lines == 1)) || { cat "$WORK/err"; fail "'$*' printed $lines lines on stderr, expected one"; }
  ok "refused in $((SECONDS - start)) s: $(head -c 200 "$WORK/err")"
}

# run_client BIN LOG ARGS...: a run of BIN against the server (-p in ARGS) must succeed.
run_client() {
  local bin=$1 log=$2; shift 2
  timeout 120 "$bin" -d "$DEV0" "$@" "$IP1" -n 200 --timeout 10 >"$log" 2>&1 || { cat "$log"; fail "client '$*' failed"; }
}

# --- a server without a token ------------------------------------------------
start_server "$LAT" 18761 "$WORK/open.log" --timeout 10
n=$(grep -c "warning: no token: any host that reaches .*:18761 can use this server" "$WORK/open.log" || true)
((n == 1)) || { cat "$WORK/open.log"; fail "the tokenless server printed $n exposure lines, expected one"; }
expect_refused "error: peer .* holds no token, so it serves any host that reaches it" \
  "$LAT" -d "$DEV0" -p 18761 "$IP1" -n 200 --timeout 10 --token-file "$WORK/token"
run_client "$LAT" "$WORK/open-client.out" -p 18761
kill "$SERVER_PID"
ok "a server without a token said so in one line and served a client without one"

# --- a server with a token ---------------------------------------------------
start_server "$BW" 18762 "$WORK/s.log" --token-file "$WORK/token" --timeout 10
! grep -q "no token" "$WORK/s.log" || { cat "$WORK/s.log"; fail "a server with a token said it had none"; }
run_client "$BW" "$WORK/right0.out" -p 18762 --token lab-secret
expect_refused "^fabench-bw: error: peer .* requires a token; give this end the same one" \
  "$BW" -d "$DEV0" -p 18762 "$IP1" -n 200 --timeout 10
expect_refused "^fabench-bw: error: token mismatch: peer .* holds another token" \
  "$BW" -d "$DEV0" -p 18762 "$IP1" -n 200 --timeout 10 --token wrong-secret
expect_refused "^fabench-bw: error: token mismatch: peer .* holds another token" \
  env FABENCH_TOKEN=lab-secre "$BW" -d "$DEV0" -p 18762 "$IP1" -n 200 --timeout 10
# The next right client, at once (the token from the environment this time).
start=$SECONDS
FABENCH_TOKEN=lab-secret run_client "$BW" "$WORK/right1.out" -p 18762
ok "the right client after three refused ones ran in $((SECONDS - start)) s"
kill -0 "$SERVER_PID" || { cat "$WORK/s.log"; fail "the server died"; }
n=$(grep -c "requires one.*; dropped it$" "$WORK/s.log" || true)
((n == 1)) || { cat "$WORK/s.log"; fail "server logged $n tokenless clients, expected 1"; }
n=$(grep -c "token mismatch: .*; dropped it$" "$WORK/s.log" || true)
((n == 2)) || { cat "$WORK/s.log"; fail "server logged $n token mismatches, expected 2"; }
n=$(grep -c "said goodbye" "$WORK/s.log" || true)
((n == 2)) || { cat "$WORK/s.log"; fail "server served $n clients, expected the 2 right ones"; }
grep -q "lab-secret" "$WORK/s.log" "$WORK"/*.out "$WORK/err" && fail "the token appears in a log"
kill "$SERVER_PID"
ok "the token server logged each refused client in one line and served both right ones"

# --- the N-rank rendezvous ---------------------------------------------------
COLL_ARGS=(-d "$DEV0,$DEV1" --coll allreduce --algo ring --dtype f32 -s 4K -n 3 --timeout 20)
rc=0
start=$SECONDS
FABENCH_TOKEN=lab-secret timeout 300 "$LAUNCH" -n 3 -- "$COLL" "${COLL_ARGS[@]}" --benchmark_format=json \
  >"$WORK/coll.json" 2>"$WORK/coll.err" || rc=$?
good_s=$((SECONDS - start))
((rc == 0)) || { tail -20 "$WORK/coll.err"; fail "fabench-launch -n 3 with FABENCH_TOKEN exited $rc"; }
sed -n 's/^\[0\] //p' "$WORK/coll.json" >"$WORK/coll.json.0"
check_coll_json "$WORK/coll.json.0" 1 || fail "fabench-coll with a token: results"
ok "fabench-coll -n 3 with FABENCH_TOKEN on every rank ($good_s s, start-up included)"

# Rank 2 holds another token: it fails with one line, rank 0 logs the dropped
# connection, and fabench-launch stops the run: about as soon as the good run
# ended (start-up dominates under emulation), not after the 20 s timeout.
rc=0
start=$SECONDS
FABENCH_TOKEN=lab-secret timeout 300 "$LAUNCH" -n 3 -- \
  bash -c '[[ $RANK == 2 ]] && export FABENCH_TOKEN=not-the-secret; exec "$0" "$@"' "$COLL" "${COLL_ARGS[@]}" \
  >"$WORK/bad.out" 2>"$WORK/bad.err" || rc=$?
((rc != 0)) || { cat "$WORK/bad.err"; fail "a world with one wrong token succeeded"; }
((SECONDS - start <= good_s + 10)) ||
  fail "the wrong token took $((SECONDS - start)) s to fail the run (the good run: $good_s s)"
grep -Eq "^\[2\] fabench-coll: error: token mismatch: peer rank 0 \(.*\) holds another token" "$WORK/bad.err" ||
  { cat "$WORK/bad.err"; fail "rank 2 did not say 'token mismatch'"; }
grep -Eq "^\[0\] .*ignoring a connection from .*: token mismatch: peer rank 2 " "$WORK/bad.err" ||
  { cat "$WORK/bad.err"; fail "rank 0 did not log the dropped rank 2"; }
ok "one rank with another token failed the run in $((SECONDS - start)) s: $(grep -m1 '^\[2\]' "$WORK/bad.err")"
