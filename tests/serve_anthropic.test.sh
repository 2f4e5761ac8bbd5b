#!/usr/bin/env bash
# serve_anthropic.test.sh — `wick serve`'s Anthropic Messages API
# (/v1/messages, /v1/messages/count_tokens) through the real
# `@anthropic-ai/sdk` client (pinned in tests/js/package.json, installed into
# tests/js/node_modules; skips without node/npm/registry).
#
# Servers on 127.0.0.1 (port 0, the port parsed from what it prints):
#  - a random qwen3 tiny model with the Qwen3 tokenizer and chat template
#    (--ctx 512, --api-key: the SDK's x-api-key): whole messages = /v1/chat/completions on the translated body
#    (greedy text, token counts, stop_reason), streamed events in order and =
#    whole, messages.stream(), max_tokens, prefill, stop_sequences,
#    count_tokens = the prompt of the same request = /v1/chat/completions/render
#    (with tools, thinking disabled, a tool conversation), errors in Anthropic's
#    shape (400 invalid_request_error, 404 not_found_error, and the router's
#    own: a body that is not JSON, 401 for a wrong key);
#  - scripted models (`make-test-model --script`; a SKIP line without it): one
#    whose greedy reply is a Hermes tool call (Qwen2.5 tokenizer), and after a
#    tool response "The weather in Paris is sunny." — tool_use blocks whole and
#    streamed (input_json_delta), tool_choice tool/any, the tool_result turn's
#    answer; one that thinks first (Qwen3) — thinking then text blocks,
#    streamed thinking_delta, display "omitted".
# tests/js/serve_anthropic.mjs holds the checks; one line per check.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_anthropic
serve_need_npm @anthropic-ai/sdk

TOK="$SHARED/tokenizers"
if [ ! -d "$TOK/qwen3" ]; then
  skip "$TOK/qwen3 not found (shared fixtures absent)"
fi

M="$TMP/qwen3-tiny.gguf"
if make_model "$M" --arch qwen3 --shape tiny --tokenizer "$TOK/qwen3" --seed 5; then
  if serve_start S1 -m "$M" --ctx 512 -t 1 --api-key sk-wick-anth; then
    run_js random "$JS/serve_anthropic.mjs" --name random --url "$S1" --part random --key sk-wick-anth
    serve_stop "$S1_PID"
  else bad "qwen3 tiny server did not start"; fi
else bad "making the random qwen3 tiny model failed"; fi

if ! "$WICK" make-test-model --help 2>&1 | grep -q -- '--script'; then
  skip_part "wick make-test-model has no --script: the scripted tool-call and thinking parts"
  finish
fi

# the reply a Hermes-style model gives when it calls get_weather
TOOL_SCRIPT='<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>'
MT="$TMP/qwen2-tool.gguf"
if [ ! -d "$TOK/qwen2.5" ]; then
  skip_part "$TOK/qwen2.5 not found: the scripted tool-call part"
elif make_model "$MT" --arch qwen2 --tokenizer "$TOK/qwen2.5" --script "$TOOL_SCRIPT" \
     --script 'The weather in Paris is sunny.' --after $'</tool_response><|im_end|>\n<|im_start|>assistant\n'; then
  if serve_start S2 -m "$MT" --ctx 1024 -t 1; then
    run_js tool "$JS/serve_anthropic.mjs" --name tool --url "$S2" --part tool
    serve_stop "$S2_PID"
  else bad "scripted tool-call server did not start"; fi
else bad "making the scripted tool-call model failed"; fi

THINK_SCRIPT='<think>
Let me think.
</think>

The answer is 4.'
MK="$TMP/qwen3-think.gguf"
if make_model "$MK" --arch qwen3 --tokenizer "$TOK/qwen3" --script "$THINK_SCRIPT"; then
  if serve_start S3 -m "$MK" --ctx 1024 -t 1; then
    run_js think "$JS/serve_anthropic.mjs" --name think --url "$S3" --part think
    serve_stop "$S3_PID"
  else bad "scripted thinking server did not start"; fi
else bad "making the scripted thinking model failed"; fi

finish
