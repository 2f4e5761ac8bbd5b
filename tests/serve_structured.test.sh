#!/usr/bin/env bash
# serve_structured.test.sh — structured output through `wick serve` with the
# real clients (openai@6 .parse() with zod, Vercel ai generateObject via
# @ai-sdk/openai-compatible, @langchain/openai withStructuredOutput, ollama
# with format), every API spelling (OpenAI response_format, llama.cpp
# grammar / json_schema, vLLM structured_outputs and guided_*, Ollama
# format), ajv validating sampled outputs, and the 400s; plus `wick generate`
# and `wick grammar --check` on the command line. Clients pinned in
# tests/js/package.json (installed into tests/js/node_modules; skips without
# node/npm/registry).
#
# Servers on 127.0.0.1 (port 0): stories260K (completions and Ollama
# generate; the repo's demo model without ../shared) and a random llama
# tiny256 Q8_0 model with a chat template (chat routes and the clients).
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_structured

# ---- the command line (no npm needed) ----
cat >"$TMP/pet.json" <<'JSON'
{"type":"object","properties":{"kind":{"enum":["cat","dog"]},"age":{"type":"integer","minimum":0,"maximum":9}},
 "required":["kind","age"],"additionalProperties":false}
JSON
out=$("$WICK" generate -m "$STORIES" -p "Once upon a time" -n 40 --temp 0 --json-schema "$TMP/pet.json" -t 1 2>&1)
[[ $out =~ ^\{\"kind\":\"(cat|dog)\",\"age\":[0-9]\}$ ]] && ok "generate --json-schema: '$out'" || bad "generate --json-schema: '$out'"
out=$("$WICK" generate -m "$STORIES" -p "Once" -n 20 --temp 0.9 --seed 3 --regex '[0-9]{3}-[a-z]{2}' -t 1 2>&1)
[[ $out =~ ^[0-9]{3}-[a-z]{2}$ ]] && ok "generate --regex: '$out'" || bad "generate --regex: '$out'"
out=$("$WICK" generate -m "$STORIES" -p "Once" -n 20 --temp 0 --choice alpha --choice beta -t 1 2>&1)
[[ $out == alpha || $out == beta ]] && ok "generate --choice: '$out'" || bad "generate --choice: '$out'"
printf 'root ::= "<" [a-z]+ ">"\n' >"$TMP/tag.gbnf"
out=$("$WICK" generate -m "$STORIES" -p "Once" -n 20 --temp 0 --grammar "$TMP/tag.gbnf" -t 1 2>&1)
[[ $out =~ ^\<[a-z]+ ]] && ok "generate --grammar: '$out'" || bad "generate --grammar: '$out'"
echo '{"type":"object","properties":{"a":{"type":"string","not":{}}}}' >"$TMP/bad.json"
out=$("$WICK" generate -m "$STORIES" -p "Once" -n 5 --json-schema "$TMP/bad.json" 2>&1); rc=$?
[[ $rc != 0 && $out == *'keyword "not" is not supported (#/properties/a)'* ]] && ok "generate: an unsupported keyword is an error naming it" || bad "generate bad schema: rc=$rc '$out'"
out=$("$WICK" generate -m "$STORIES" -p "Once" -n 5 --regex a --choice b 2>&1); rc=$?
[[ $rc != 0 && $out == *"give one"* ]] && ok "generate: two grammars refused" || bad "generate two grammars: rc=$rc '$out'"

# wick grammar --check: a Qwen-vocabulary model (no dummy prefix) when ../shared has the tokenizer
QTOK="$SHARED/tokenizers/qwen2.5"
if [ -d "$QTOK" ] && make_model "$TMP/qwen-tiny.gguf" --arch qwen2 --format gguf --shape tiny --tokenizer "$QTOK"; then
  printf '%s\n' '{"kind":"cat","age":3}' '{"kind":"cow","age":3}' '{"kind":"dog","age":12}' '{"kind":"dog"}' \
    '"{\"kind\":\"dog\",\"age\":0}"' >"$TMP/check.jsonl"
  out=$("$WICK" grammar -m "$TMP/qwen-tiny.gguf" --json-schema "$TMP/pet.json" --check "$TMP/check.jsonl" --json 2>&1)
  got=$(node -e 'const o=JSON.parse(process.argv[1]);console.log(o.results.map(r=>r.accepted?"A":"R"+r.byte).join(" "), o.masks>0, o.mask_us.p50>0)' "$out" 2>&1)
  [ "$got" = "A R9 R21 R12 A true true" ] && ok "grammar --check: accepted/rejected at the right bytes, mask times" || bad "grammar --check: '$got' from $out"
else
  skip_part "the Qwen tokenizer (../shared) is absent: the grammar --check part"
fi

serve_need_npm zod ai @ai-sdk/openai-compatible @langchain/openai @langchain/core ajv

if serve_start S1 -m "$STORIES" --ctx 512 -t 1; then
  id=$(curl -s "$S1/v1/models" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data[0].id))')
  run_js stories260K "$JS/serve_structured.mjs" --name stories260K --url "$S1" --model "$id"
  serve_stop "$S1_PID"
else bad "stories260K server did not start"; fi

M="$TMP/llama-tiny256-q8_0.gguf"
if make_model "$M" --arch llama --format gguf --shape tiny256 --dtype q8_0 --seed 3; then
  if serve_start S2 -m "$M" --ctx 1024 -t 1; then
    id=$(curl -s "$S2/v1/models" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data[0].id))')
    run_js llama-tiny256 "$JS/serve_structured.mjs" --name llama-tiny256 --url "$S2" --model "$id" --chat
    serve_stop "$S2_PID"
  else bad "llama tiny256 server did not start"; fi
else bad "making the random llama tiny256 model failed"; fi

finish
