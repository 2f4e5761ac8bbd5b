#!/usr/bin/env bash
# serve_llamacpp_api.test.sh — llama-server's native API on `wick serve`
# (/completion, /completions, /infill, /apply-template, /props, /slots,
# /tokenize, /detokenize, /models, the unprefixed aliases), checked with
# python3's standard library (tests/serve_llamacpp_api.py holds the checks):
#  - stories260K (--ctx 128 --parallel 2): greedy /completion = /v1/completions
#    byte for byte (text, token ids, logprobs), ids / mixed / several prompts,
#    the native SSE stream, n_probs, post_sampling_probs (greedy 1 then 0s;
#    sampled = the softmax of the raw top logprobs over the top-k survivors;
#    the same text with or without; streamed = whole), return_tokens, stop
#    words, samplers, the 400s of fields wick cannot honour, tokenize
#    pieces, props, slots, models, apply-template = the chat route's
#    rendering; llama.cpp's chat fields (-b 32): n = 2 with id_slot (each
#    choice = the request alone with seed + index, streamed = whole), the
#    stream's role chunk (content null), a prompt over the context
#    (exceed_context_size_error with n_ctx and n_prompt_tokens, streamed
#    too), return_progress (a record at admission, then one per chunk of 32),
#    timings_per_token, add_generation_prompt with continue_final_message;
#  - a random Qwen2 model on the Qwen2.5 vocabulary (FIM tokens): /infill =
#    /completion of the FIM layout built by hand; bad input_extra 400s;
#    stories260K (no FIM tokens): /infill 400;
#  - with --slot-save-path (when this build has the flag): save -> erase ->
#    restore, then the prompt is served from cache with the same output; on a
#    fresh server, restoring the saved file alone makes the prompt a cache hit;
#    --no-slots: GET /slots 501; without a save path: slot actions 501.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_llamacpp_api
command -v python3 >/dev/null || skip "python3 not installed"
CHECK=tests/serve_llamacpp_api.py

# run_py NAME ARGS...: runs the checker, adds its closing line's counts
run_py() {
  local n=$1; shift
  timeout 300 python3 "$CHECK" --name "$n" "$@" >"$TMP/py.$n.out" 2>&1
  cat "$TMP/py.$n.out"
  local last; last=$(grep -aE "^$n: [0-9]+ passed, [0-9]+ failed$" "$TMP/py.$n.out" | tail -n 1)
  if [[ $last =~ ^$n:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    PASS=$((PASS + BASH_REMATCH[1])); FAIL=$((FAIL + BASH_REMATCH[2]))
  else
    bad "$n: the checker did not finish"
  fi
}

if [ -f "$STORIES" ]; then
  if serve_start S1 -m "$STORIES" --ctx 128 -t 1 --parallel 2 -b 32; then
    run_py stories --part stories --url "$S1"
    run_py nofim --part nofim --url "$S1"
    serve_stop "$S1_PID"
  else bad "stories260K server did not start"; fi
else
  skip_part "$STORIES not found: the stories260K parts"
fi

Q25="$SHARED/tokenizers/qwen2.5"
if [ -d "$Q25" ]; then
  Q="$TMP/qwen2-fim.gguf"
  if make_model "$Q" --arch qwen2 --format gguf --shape tiny --tokenizer "$Q25"; then
    if serve_start S2 -m "$Q" --ctx 256 -t 1; then
      run_py infill --part infill --url "$S2"
      serve_stop "$S2_PID"
    else bad "Qwen2 server did not start"; fi
  else bad "making the Qwen2 test model failed"; fi
else
  skip_part "$Q25 not found: the /infill part"
fi

if [ -f "$STORIES" ]; then
  if "$WICK" serve --help 2>&1 | grep -q -- --slot-save-path; then
    mkdir -p "$TMP/slots"
    if serve_start S3 -m "$STORIES" --ctx 128 -t 1 --parallel 2 --slot-save-path "$TMP/slots"; then
      run_py slots --part slots --url "$S3" --dir "$TMP/slots"
      serve_stop "$S3_PID"
      # a fresh server: the saved slot restored warms its empty prefix cache
      if serve_start S5 -m "$STORIES" --ctx 128 -t 1 --parallel 2 --slot-save-path "$TMP/slots"; then
        run_py slots_fresh --part slots_fresh --url "$S5" --dir "$TMP/slots"
        serve_stop "$S5_PID"
      else bad "second server with --slot-save-path did not start"; fi
    else bad "server with --slot-save-path did not start"; fi
  else
    skip_part "this build has no --slot-save-path: the slot save/restore part"
  fi
  if "$WICK" serve --help 2>&1 | grep -q -- --no-slots; then
    if serve_start S4 -m "$STORIES" --ctx 128 -t 1 --no-slots; then
      run_py noslots --part noslots --url "$S4"
      serve_stop "$S4_PID"
    else bad "server with --no-slots did not start"; fi
  else
    skip_part "this build has no --no-slots: the 501 part"
  fi
fi
finish
