#!/usr/bin/env bash
# ctest-timeout: 600
# fabench-kv moves the exact bytes: every layout (contiguous, layer-major,
# block-major) x fragmentation 0/100 % x merged/unmerged x push/pull, over the
# wire (prefill on rxe0, decode on rxe1) and in loopback (both on rxe0); SGE
# lists, several QPs and a batch; TP 2 -> 1 and 1 -> 2; MLA (DeepSeek-R1)
# 1 -> 2; the WR sweep and its knee. Each decode rank checks every page of
# every transfer at notification time (wrong == 0).
source "$(dirname "$0")/kv_common.bash"
M=(--model llama-3.1-8b --isl 32)
ALL=(--layout contiguous,layer,block --frag 0,1 --merge on,off --direction push,pull)
# per direction: contiguous + 2 layouts x 2 fragmentations x 2 merges
kv_run wire 2 -d "$DEV0,$DEV1" "${M[@]}" "${ALL[@]}"
check_kv_json "$WORK/wire.json" 18 --iterations 2 --names 'kv/llama-3.1-8b/contiguous/push/isl32/tp1-1/iter' ||
  fail "wire: results"
ok "wire: 18 transfers, every page checked"
kv_run loopback 2 -d "$DEV0" "${M[@]}" --layout contiguous,layer,block --frag 1 --merge off --direction push,pull
check_kv_json "$WORK/loopback.json" 6 || fail "loopback: results"
ok "loopback: 6 transfers"
kv_run lanes 2 -d "$DEV0,$DEV1" "${M[@]}" --layout layer --frag 1 --merge on --max-sge 4 --qps 3 --batch 2 \
  --direction push,pull
check_kv_json "$WORK/lanes.json" 4 --names 'contiguous/push/isl32/tp1-1\+b2/iter,layer/push/isl32/tp1-1/frag1\+sge4\+b2/iter' ||
  fail "lanes: results"
ok "SGE lists, 3 QPs, batch 2"
kv_run tp21 3 -d "$DEV0,$DEV1" "${M[@]}" --prefill-tp 2 --layout layer,block --frag 0.5 --direction push,pull
check_kv_json "$WORK/tp21.json" 6 --names 'tp2-1' || fail "TP 2 -> 1: results"
kv_run tp12 3 -d "$DEV0,$DEV1" "${M[@]}" --decode-tp 2 --layout layer,block --frag 0.5 --direction push,pull --qps 2
check_kv_json "$WORK/tp12.json" 6 --names 'tp1-2' || fail "TP 1 -> 2: results"
ok "TP 2 -> 1 and 1 -> 2"
kv_run mla 3 -d "$DEV0,$DEV1" --model deepseek-r1 --isl 128 --decode-tp 2 --layout layer --direction push,pull
check_kv_json "$WORK/mla.json" 4 --names 'deepseek-r1' || fail "MLA: results"
grep -q '"kv_bytes_per_token": "70272"' "$WORK/mla.json" || fail "MLA: DeepSeek-R1 is not 70272 B/token"
ok "DeepSeek-R1 (MLA) 1 -> 2"
kv_run sweep 2 -d "$DEV0,$DEV1" "${M[@]}" --wr-sweep -b 4K -e 256K -f 8
check_kv_json "$WORK/sweep.json" 3 --present wr_bytes,sges --names '4096B/sge1,32768B,262144B' || fail "sweep: results"
grep -Eq "WR sweep \(push, 1 SGE, post list 1, signal every 16\): best [0-9.]+ GB/s .*50 % of it from [0-9]+ B per WR, 90 % from [0-9]+ B per WR" \
  "$WORK/sweep.out" || { cat "$WORK/sweep.out"; fail "sweep: no knee line"; }
ok "WR sweep: $(grep -o '50 % of it.*' "$WORK/sweep.out")"

# Two ranks for prefill TP 1 + decode TP 2: one clear line, status 2, at once.
t0=$SECONDS
rc=0
"$LAUNCH" -n 2 --timeout 60 -- "$KV" -d "$DEV0" -x 1 --timeout 5 "${M[@]}" --decode-tp 2 >"$WORK/mismatch.out" 2>&1 || rc=$?
((rc != 0)) || fail "a world of the wrong size ran"
grep -q "prefill TP 1 and decode TP 2 need 3 ranks, but 2 were launched" "$WORK/mismatch.out" ||
  { cat "$WORK/mismatch.out"; fail "world size mismatch: no clear line"; }
ok "wrong world size refused in $((SECONDS - t0)) s"
