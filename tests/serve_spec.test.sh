#!/usr/bin/env bash
# serve_spec.test.sh — speculative decoding in `wick serve`: with --lookup,
# --draft-layers and --draft MODEL as the server default, a greedy request's
# completion equals the same request with "speculative": false, several
# requests at once (some opting out) all equal their plain answers, a request
# can opt into prompt lookup on a server started with --draft-max alone,
# /metrics counts vllm:spec_decode_num_draft_tokens and _accepted_tokens
# (accepted <= drafted, both > 0), a bad "speculative" value is a 400 naming
# the field, and bad flags are one clear error.
# Model: stories260K from ../shared, else a random test model.
set -u
cd "$(dirname "$0")/.." || exit 1
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
pass=0; fail=0
ok()  { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
finish() { echo "serve_spec: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }
command -v curl >/dev/null || { echo "skip: curl not installed"; echo "serve_spec: 0 passed, 0 failed"; exit 0; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; echo "serve_spec: 0 passed, 0 failed"; exit 0; }

M="$SHARED/models/stories260K/stories260K-f32.gguf"
if [ ! -f "$M" ]; then
  M="$TMP/tiny.gguf"
  "$WICK" make-test-model --arch llama --format gguf --shape tiny --seed 1 --out "$M" >/dev/null 2>&1 || { bad "make-test-model"; finish; }
fi
NLAYER=$("$WICK" info -m "$M" | sed -n 's/^layers: *\([0-9]*\).*/\1/p')

start() { # VAR ARGS...
  local var=$1; shift
  local log="$TMP/$var.log" port="" code=""
  "$WICK" serve --port 0 -t 2 "$@" >"$log" 2>"$log.err" &
  local pid=$!
  PIDS+=("$pid")
  printf -v "${var}_PID" '%s' "$pid"
  for _ in $(seq 300); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { bad "server $* printed no port: $(cat "$log" "$log.err")"; return 1; }
  for _ in $(seq 300); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")
    [ "$code" = 200 ] && break
    sleep 0.1
  done
  [ "$code" = 200 ] || { bad "server $*: /health gave $code"; return 1; }
  printf -v "$var" '%s' "http://127.0.0.1:$port"
}

# complete URL PROMPT SPEC OUT: greedy completion text of 60 tokens to OUT; SPEC is the "speculative" JSON
complete() {
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "max_tokens": 60, "temperature": 0, "speculative": json.loads(sys.argv[2])}))' "$2" "$3")
  curl -s -o "$4.json" -w '%{http_code}' "$1/v1/completions" -H 'Content-Type: application/json' -d "$body" >"$4.st"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["choices"][0]["text"], end="")' "$4.json" >"$4" 2>/dev/null
}

PROMPTS=("Once upon a time" "Lily had a red ball. Lily went to the park with her red ball. Lily" "Tom and Sam")

for mode in "--lookup 3" "--draft-layers $((NLAYER > 1 ? NLAYER - 1 : 1))" "--draft $M --draft-max 4"; do
  # shellcheck disable=SC2086
  start S $mode || continue
  for i in 0 1 2; do
    complete "$S" "${PROMPTS[$i]}" false "$TMP/plain$i"
    complete "$S" "${PROMPTS[$i]}" true "$TMP/spec$i"
    if [ "$(cat "$TMP/spec$i.st")" = 200 ] && cmp -s "$TMP/plain$i" "$TMP/spec$i"; then ok; else
      bad "$mode: prompt $i: speculative answer differs: $(cat "$TMP/spec$i.json") vs $(cat "$TMP/plain$i.json")"; fi
  done
  # several at once, every other one opting out
  jobs=()
  for i in 0 1 2 3 4 5; do
    complete "$S" "${PROMPTS[$((i % 3))]}" "$([ $((i % 2)) = 0 ] && echo true || echo false)" "$TMP/c$i" &
    jobs+=($!)
  done
  wait "${jobs[@]}"
  for i in 0 1 2 3 4 5; do
    if cmp -s "$TMP/c$i" "$TMP/plain$((i % 3))"; then ok; else bad "$mode: concurrent request $i differs"; fi
  done
  curl -s "$S/metrics" >"$TMP/metrics"
  d=$(sed -n 's/^vllm:spec_decode_num_draft_tokens{[^}]*} \([0-9]*\).*/\1/p' "$TMP/metrics")
  a=$(sed -n 's/^vllm:spec_decode_num_accepted_tokens{[^}]*} \([0-9]*\).*/\1/p' "$TMP/metrics")
  if [ -n "$d" ] && [ -n "$a" ] && [ "$d" -gt 0 ] && [ "$a" -le "$d" ]; then ok; else bad "$mode: metrics drafted '$d' accepted '$a'"; fi
  grep -q '^# TYPE vllm:spec_decode_num_drafts counter' "$TMP/metrics" && ok || bad "$mode: no vllm:spec_decode_num_drafts"
  kill -TERM "$S_PID"; wait "$S_PID" 2>/dev/null
done

# --draft-max alone: requests opt in to lookup; a bad field is a 400; a drafter the server lacks is a 400
start S --draft-max 6 && {
  complete "$S" "${PROMPTS[1]}" false "$TMP/p"
  complete "$S" "${PROMPTS[1]}" '{"method": "lookup", "num_speculative_tokens": 5, "lookup": 2}' "$TMP/l"
  cmp -s "$TMP/p" "$TMP/l" && ok || bad "opt-in lookup differs"
  curl -s "$S/metrics" | grep -Eq '^vllm:spec_decode_num_draft_tokens\{[^}]*\} [1-9]' && ok || bad "opt-in lookup drafted nothing"
  for badspec in '"yes"' '{"method": "magic"}' '{"num_speculative_tokens": 0}' '{"method": "draft"}'; do
    complete "$S" "x" "$badspec" "$TMP/bad"
    st=$(cat "$TMP/bad.st")
    if [ "$st" = 400 ] && grep -q 'speculative\|draft model' "$TMP/bad.json"; then ok; else bad "speculative $badspec: $st $(cat "$TMP/bad.json")"; fi
  done
  kill -TERM "$S_PID"; wait "$S_PID" 2>/dev/null
}

# flags: one clear error each
for f in "--draft-layers 0" "--lookup 0" "--draft-max 33" "--lookup 2 --draft-layers 1"; do
  # shellcheck disable=SC2086
  out=$("$WICK" serve --port 0 $f 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q '^wick: error: serve: '; then ok; else bad "serve $f: rc $rc: $out"; fi
done
finish
