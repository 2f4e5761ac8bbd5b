#!/usr/bin/env bash
# serve_responses.test.sh — `wick serve`'s OpenAI Responses API
# (/v1/responses, GET/DELETE /v1/responses/{id}) through the real `openai`
# npm client (v6), the OpenAI Agents SDK (@openai/agents) and LangChain
# (@langchain/openai), all pinned in
# tests/js/package.json (skips without node/npm/registry).
#
#  - a random qwen3 tiny model with the Qwen3 tokenizer and chat template
#    (../shared): response shapes, greedy text = the chat route's, streamed
#    events, max_output_tokens, store/retrieve/delete, previous_response_id,
#    instructions, text.format, errors, LangChain's ChatOpenAI with
#    useResponsesApi (tests/js/serve_responses.mjs, section "shapes");
#  - a qwen2.5 tiny model scripted (make-test-model --script) to call
#    get_weather for Paris and then, after the tool's answer, to say "The
#    weather in Paris is sunny.": the function_call item whole and streamed,
#    the tool-output turn, and the Agents SDK running the tool loop (section
#    "tools"); a qwen3 tiny model scripted to think, then answer: the
#    reasoning item whole and streamed, and sent back (section "reasoning").
#    Both skipped (SKIP line) while make-test-model has no --script.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_responses
serve_need_npm @openai/agents zod @langchain/openai @langchain/core

QTOK3="$SHARED/tokenizers/qwen3"
QTOK25="$SHARED/tokenizers/qwen2.5"

if [ -d "$QTOK3" ]; then
  M="$TMP/qwen3-tiny.gguf"
  if make_model "$M" --arch qwen3 --shape tiny --tokenizer "$QTOK3" --seed 5; then
    if serve_start S1 -m "$M" --ctx 1024 -t 1; then
      run_js shapes "$JS/serve_responses.mjs" --name shapes --url "$S1" --sections shapes
      serve_stop "$S1_PID"
    else bad "qwen3 tiny server did not start"; fi
  else bad "making the random qwen3 tiny model failed"; fi
else
  skip_part "$QTOK3 not found (shared fixtures absent): the response shapes part"
fi

if ! "$WICK" make-test-model --help 2>&1 | grep -q -- '--script'; then
  skip_part "wick make-test-model has no --script: the tool loop (openai client and Agents SDK) and the reasoning part"
elif [ ! -d "$QTOK25" ]; then
  skip_part "$QTOK25 not found (shared fixtures absent): the tool loop"
else
  T1=$'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
  A2=$'</tool_response><|im_end|>\n<|im_start|>assistant\n'
  M2="$TMP/qwen25-weather.gguf"
  if make_model "$M2" --arch qwen2 --format gguf --tokenizer "$QTOK25" \
       --script "$T1" --script "The weather in Paris is sunny." --after "$A2"; then
    if serve_start S2 -m "$M2" --ctx 2048 -t 1; then
      run_js tools "$JS/serve_responses.mjs" --name tools --url "$S2" --sections tools
      serve_stop "$S2_PID"
    else bad "scripted qwen2.5 server did not start"; fi
  else bad "making the scripted qwen2.5 model failed"; fi
  M3="$TMP/qwen3-think.gguf"
  if [ ! -d "$QTOK3" ]; then
    skip_part "$QTOK3 not found (shared fixtures absent): the reasoning part"
  elif make_model "$M3" --arch qwen3 --format gguf --tokenizer "$QTOK3" \
       --script $'<think>\nI should greet.\n</think>\n\nHello there.'; then
    if serve_start S3 -m "$M3" --ctx 2048 -t 1; then
      run_js reasoning "$JS/serve_responses.mjs" --name reasoning --url "$S3" --sections reasoning
      serve_stop "$S3_PID"
    else bad "scripted qwen3 server did not start"; fi
  else bad "making the scripted qwen3 model failed"; fi
fi

finish
