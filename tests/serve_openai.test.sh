#!/usr/bin/env bash
# serve_openai.test.sh — `wick serve`'s OpenAI API (/v1) through the real
# `openai` npm client (v6, pinned in tests/js/package.json, installed into
# tests/js/node_modules; skips without node/npm/registry).
#
# Two servers on 127.0.0.1 (port 0, the port parsed from what it prints):
#  - stories260K (--ctx 128): completions greedy = `wick generate --temp 0 -n 40`
#    (text, finish_reason, prompt/completion token counts; prompt as text and as
#    ids; again with the prefix cached), streaming (one id, include_usage chunk
#    last, no usage without it), stop strings (plain, array, streamed), max_tokens
#    → "length" with exactly that many tokens, seed reproducibility at
#    temperature 1, logprobs:2 (shapes, <= 0, greedy token = top-1), models.list(),
#    errors (unknown model 404, n:2 400, wrong types 400, missing fields 400,
#    prompt longer than the context 400);
#  - a random llama tiny256 Q8_0 model with a chat template (--ctx 256): the same,
#    plus chat completions (non-streamed = streamed, role in the first delta,
#    usage), chat logprobs (top_logprobs 3, bytes), max_completion_tokens and
#    max_tokens, chat stop strings, a second turn;
#  - stories260K with --api-key, --parallel 1 --max-queue 1 (tests/js/serve_limits.mjs):
#    wrong or missing key → 401 (AuthenticationError) while /health and /metrics
#    stay open; 5 long streams at once → at least 3 refused with 503/429 +
#    retry-after + JSON error; aborting the rest leaves nothing running.
# tests/js/serve_openai.mjs holds the checks; one line per check.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_openai
serve_need_npm

# ref PROMPT N MODEL OUT: `wick generate --temp 0 --json` plus the prompt's ids
ref() {
  local prompt=$1 n=$2 model=$3 out=$4
  "$WICK" generate -m "$model" -p "$prompt" -n "$n" --temp 0 --json -t 1 >"$TMP/gen.json" 2>"$TMP/gen.err" || { cat "$TMP/gen.err"; return 1; }
  "$WICK" tokenize -m "$model" -p "$prompt" >"$TMP/ids.json" 2>>"$TMP/gen.err" || { cat "$TMP/gen.err"; return 1; }
  node -e 'const fs=require("fs");const [p,n,g,i,o]=process.argv.slice(1);
    fs.writeFileSync(o, JSON.stringify({prompt:p, n:+n, gen:JSON.parse(fs.readFileSync(g)), prompt_ids:JSON.parse(fs.readFileSync(i))}))' \
    "$prompt" "$n" "$TMP/gen.json" "$TMP/ids.json" "$out"
}

if [ -f "$STORIES" ]; then
  ran=1
  if ref "Once upon a time" 40 "$STORIES" "$TMP/ref_stories.json"; then
    want=", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
    got=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).gen.text)' "$TMP/ref_stories.json")
    [ "$got" = "$want" ] && ok "wick generate stories260K greedy 40 = the known text" || bad "wick generate stories260K: '$got'"
    if serve_start S1 -m "$STORIES" --ctx 128 -t 1; then
      run_js stories260K "$JS/serve_openai.mjs" --name stories260K --url "$S1" --ref "$TMP/ref_stories.json" --ctx 128
      serve_stop "$S1_PID"
    else bad "stories260K server did not start"; fi
  else bad "wick generate on stories260K failed"; fi
else
  skip_part "$STORIES not found (shared fixtures absent): the stories260K part"
fi

if [ -f "$STORIES" ]; then
  # --api-key, and a queue of one place in front of one sequence
  if serve_start S3 -m "$STORIES" --ctx 2048 -t 1 --parallel 1 --max-queue 1 --api-key sk-wick-test; then
    run_js limits "$JS/serve_limits.mjs" --name limits --url "$S3" --key sk-wick-test --ctx 2048
    serve_stop "$S3_PID"
  else bad "stories260K server with --api-key did not start"; fi
else
  skip_part "$STORIES not found (shared fixtures absent): the --api-key and queue limits part"
fi

M="$TMP/llama-tiny256-q8_0.gguf"
if make_model "$M" --arch llama --format gguf --shape tiny256 --dtype q8_0 --seed 3 &&
   ref "The quick brown fox jumps over the lazy dog." 32 "$M" "$TMP/ref_llama.json"; then
  ran=1
  if serve_start S2 -m "$M" --ctx 256 -t 1; then
    run_js llama-tiny256-q8_0 "$JS/serve_openai.mjs" --name llama-tiny256-q8_0 --url "$S2" --ref "$TMP/ref_llama.json" --ctx 256 --chat
    serve_stop "$S2_PID"
  else bad "llama tiny256 server did not start"; fi
else bad "making the random llama tiny256 model failed"; fi

finish
