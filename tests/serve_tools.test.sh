#!/usr/bin/env bash
# serve_tools.test.sh — tool calls, tool_choice and reasoning through
# `wick serve` with the real clients (openai@6, Vercel ai with
# @ai-sdk/openai-compatible, @langchain/openai, ollama; tests/js/
# serve_tools.mjs). Scripted models (`wick make-test-model --script`) whose
# greedy output is a given text stand in for models that call tools and
# think: a Qwen2.5 one calling get_weather and then answering from the
# tool's result, a Qwen3 one thinking first; a random-weight Qwen3 model
# checks that forced calls validate against the tool's schema, seed after
# seed, and n = 4 computing the prompt once. Needs ../shared's Qwen
# tokenizers (skips without them).
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_tools

Q25="$SHARED/tokenizers/qwen2.5" Q3="$SHARED/tokenizers/qwen3"
[ -d "$Q25" ] && [ -d "$Q3" ] || skip "the Qwen tokenizers of ../shared are absent"
"$WICK" make-test-model --help 2>&1 | grep -q -- --script || skip "make-test-model has no --script"
serve_need_npm ai @ai-sdk/openai-compatible @langchain/openai @langchain/core ajv

model_id() { curl -s "$1/v1/models" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data[0].id))'; }

CALL='<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>'
H="$TMP/hermes.gguf"
if "$WICK" make-test-model --arch qwen2 --tokenizer "$Q25" --out "$H" --script "$CALL" \
     --script 'The weather in Paris is sunny.' --after $'</tool_response><|im_end|>\n<|im_start|>assistant\n' >"$TMP/mk1.log" 2>&1; then
  if serve_start S1 -m "$H" --ctx 1024 -t 1; then
    run_js hermes "$JS/serve_tools.mjs" --mode hermes --url "$S1" --model "$(model_id "$S1")"
    serve_stop "$S1_PID"
  else bad "the scripted Hermes model's server did not start"; fi
else bad "making the scripted Hermes model failed: $(cat "$TMP/mk1.log")"; fi

T="$TMP/think.gguf"
if "$WICK" make-test-model --arch qwen3 --tokenizer "$Q3" --out "$T" \
     --script $'<think>\nLet me think.\n</think>\n\nThe answer is 4.' >"$TMP/mk2.log" 2>&1; then
  if serve_start S2 -m "$T" --ctx 1024 -t 1; then
    run_js think "$JS/serve_tools.mjs" --mode think --url "$S2" --model "$(model_id "$S2")"
    serve_stop "$S2_PID"
  else bad "the scripted thinking model's server did not start"; fi
else bad "making the scripted thinking model failed: $(cat "$TMP/mk2.log")"; fi

# the other families: Qwen2.5's BPE with the family's special tokens and a
# template of its shape (tests/data/tool_templates)
family_model() { # FAMILY ID_REGEX SCRIPT1 AFTER1 AFTER2
  local f=$1 dir="$TMP/tok-$1" out="$TMP/$1.gguf" after1=()
  [ -n "$4" ] && after1=(--after "$4")
  python3 tests/data/tool_templates/make_tokenizer.py "$f" "$Q25" "$dir" &&
    "$WICK" make-test-model --arch qwen2 --dtype f16 --tokenizer "$dir" --out "$out" --script "$3" "${after1[@]}" \
      --script 'The weather in Paris is sunny.' --after "$5" >"$TMP/mk.$f.log" 2>&1 || { bad "making the scripted $f model failed: $(cat "$TMP/mk.$f.log")"; return; }
  if serve_start SF -m "$out" --ctx 1024 -t 1; then
    run_js "$f" "$JS/serve_tools.mjs" --mode family --family "$f" --idre "$2" --url "$SF" --model "$(model_id "$SF")"
    serve_stop "$SF_PID"
  else bad "the scripted $f model's server did not start"; fi
}
family_model llama3 '^call_[A-Za-z0-9]{24}$' '{"name": "get_weather", "parameters": {"city": "Paris"}}' '' \
  $'ipython<|end_header_id|>\n\nsunny, 24 C<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n'
family_model mistral '^[A-Za-z0-9]{9}$' '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]' '[/INST]' \
  '[TOOL_RESULTS]sunny, 24 C[/TOOL_RESULTS]'
family_model granite '^call_[A-Za-z0-9]{24}$' '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]' '' \
  $'<|start_of_role|>tool<|end_of_role|>sunny, 24 C<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>'

R="$TMP/qwen3-random.gguf"
if make_model "$R" --arch qwen3 --format gguf --shape tiny --tokenizer "$Q3"; then
  if serve_start S3 -m "$R" --ctx 1024 -t 1; then
    run_js required "$JS/serve_tools.mjs" --mode required --url "$S3" --model "$(model_id "$S3")" --seeds 100
    run_js n "$JS/serve_tools.mjs" --mode n --url "$S3" --model "$(model_id "$S3")"
    serve_stop "$S3_PID"
  else bad "the random Qwen3 model's server did not start"; fi
else bad "making the random Qwen3 model failed"; fi

finish
