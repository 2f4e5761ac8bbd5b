#!/usr/bin/env bash
# serve_spec.test.sh — speculative decoding in `wick serve`: with --lookup,
# --draft-layers and --draft MODEL as the server default, a greedy request's
# completion equals the same request with "speculative": false, several
# requests at once (some opting out) all equal their plain answers, a request
# can opt into prompt lookup on a server started with --draft-max alone,
# /metrics counts vllm:spec_decode_num_draft_tokens_total and _accepted_tokens_total
# (accepted <= drafted, both > 0), a bad "speculative" value is a 400 naming
# the field, and bad flags are one clear error.
# Model: stories260K (from ../shared, else the repo's demo copy); servers
# without -m serve the same built-in demo model.
# Servers on 127.0.0.1 (port 0), started and stopped by serve_common.sh.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_spec
command -v curl >/dev/null || skip "curl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -f "$STORIES" ] || skip "$STORIES not found (the demo model is missing)"
M=$STORIES
NLAYER=$("$WICK" info -m "$M" | sed -n 's/^layers: *\([0-9]*\).*/\1/p')

start() { # VAR ARGS...: serve_start, counted as a failure when the server does not come up
  serve_start "$1" -t 2 "${@:2}" || { bad "server ${*:2} did not start"; return 1; }
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
  d=$(sed -n 's/^vllm:spec_decode_num_draft_tokens_total{[^}]*} \([0-9]*\).*/\1/p' "$TMP/metrics")
  a=$(sed -n 's/^vllm:spec_decode_num_accepted_tokens_total{[^}]*} \([0-9]*\).*/\1/p' "$TMP/metrics")
  if [ -n "$d" ] && [ -n "$a" ] && [ "$d" -gt 0 ] && [ "$a" -le "$d" ]; then ok; else bad "$mode: metrics drafted '$d' accepted '$a'"; fi
  grep -q '^# TYPE vllm:spec_decode_num_drafts_total counter' "$TMP/metrics" && ok || bad "$mode: no vllm:spec_decode_num_drafts_total"
  serve_stop "$S_PID"
done

# --draft-max alone: requests opt in to lookup; a bad field is a 400; a drafter the server lacks is a 400
start S --draft-max 6 && {
  complete "$S" "${PROMPTS[1]}" false "$TMP/p"
  complete "$S" "${PROMPTS[1]}" '{"method": "lookup", "num_speculative_tokens": 5, "lookup": 2}' "$TMP/l"
  cmp -s "$TMP/p" "$TMP/l" && ok || bad "opt-in lookup differs"
  curl -s "$S/metrics" | grep -Eq '^vllm:spec_decode_num_draft_tokens_total\{[^}]*\} [1-9]' && ok || bad "opt-in lookup drafted nothing"
  for badspec in '"yes"' '{"method": "magic"}' '{"num_speculative_tokens": 0}' '{"method": "draft"}'; do
    complete "$S" "x" "$badspec" "$TMP/bad"
    st=$(cat "$TMP/bad.st")
    if [ "$st" = 400 ] && grep -q 'speculative\|draft model' "$TMP/bad.json"; then ok; else bad "speculative $badspec: $st $(cat "$TMP/bad.json")"; fi
  done
  serve_stop "$S_PID"
}

# flags: one clear error each
for f in "--draft-layers 0" "--lookup 0" "--draft-max 33" "--lookup 2 --draft-layers 1"; do
  # shellcheck disable=SC2086
  out=$("$WICK" serve --port 0 $f 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q '^wick: error: serve: '; then ok; else bad "serve $f: rc $rc: $out"; fi
done
finish
