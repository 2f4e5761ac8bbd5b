#!/usr/bin/env bash
# serve_llama_flags.test.sh — llama-server's command line on `wick serve`,
# each flag's effect seen through the HTTP APIs: --alias names (answer in
# "model", listed by /v1/models), server-wide sampling defaults (--temp 0 is
# greedy like a request's temperature 0; a request's own field wins; --seed),
# -n is the limit of requests that set none, on every API; --chat-template /
# --chat-template-file change
# the rendered prompt (llama.cpp's named formats: command-r's /apply-template
# text; BOS first as the model adds it, whatever the template; a template that
# raises on a system role gets the system text folded into the user turn;
# --no-jinja reads a template as the built-in format it is recognised as;
# --reasoning on|off|auto sets enable_thinking; today's date in date_string;
# --sleep-idle-seconds unloads an idle model, /props says is_sleeping),
# -v adds __verbose to answers, -c with --parallel gives each sequence its
# share (with --kv-unified all of one shared pool),
# --cors-origins acts as --allowed-origins, --any-model-name answers any
# model name with the default model, and flags wick does not take (or
# values it cannot honour) are errors naming them.
# Model: stories260K (../shared, else the demo copy in models/).
cd "$(dirname "$0")/.." || exit 1
. tests/js/serve_common.sh
serve_init serve_llama_flags
command -v curl >/dev/null || skip "curl not installed"
command -v python3 >/dev/null || skip "python3 not installed"
[ -f "$STORIES" ] || skip "stories260K not found ($STORIES)"

# post URL BODY: the status in $ST, the body in $TMP/b
post() {
  ST=$(curl -s -o "$TMP/b" -w '%{http_code}' -H 'Content-Type: application/json' -d "$2" "$1")
}
# js EXPR: evaluate a Python expression over the last body (j)
js() { python3 -c "import json,sys; j=json.load(open('$TMP/b')); print($1)"; }

# ---- flags refused at start, each error naming what it refuses
refuse() { # what, the text the error must name, args...
  local what=$1 want=$2; shift 2
  if timeout 20 "$WICK" serve --port 0 -m "$STORIES" "$@" >"$TMP/r.out" 2>"$TMP/r.err"; then
    bad "$what: started"
  elif grep -qF -- "$want" "$TMP/r.err"; then ok "$what: refused ($(head -c 150 "$TMP/r.err"))"
  else bad "$what: error does not name \"$want\": $(cat "$TMP/r.err")"; fi
}
refuse "an unknown flag" "--no-such-flag" --no-such-flag
refuse "llama-server's --props (not supported)" "--props" --props
refuse "a template wick has no built-in for" "nonesuch" --chat-template nonesuch
grep -qF "command-r, deepseek" "$TMP/r.err" && ok "an unknown template's error lists the built-in names" ||
  bad "an unknown template's error does not list the names: $(cat "$TMP/r.err")"
refuse "a --reasoning-format llama-server does not have" "sideways" --reasoning-format sideways
refuse "a --reasoning value llama-server does not take" "sideways" --reasoning sideways
refuse "--sleep-idle-seconds 0" "--sleep-idle-seconds" --sleep-idle-seconds 0
refuse "--sleep-idle-seconds with --keep-alive" "give one" --sleep-idle-seconds 5 --keep-alive 5m
refuse "-c leaving too little per sequence" "-c 64" -c 64 --parallel 8
refuse "--ctx and --ctx-size together" "not both" --ctx 256 -c 512
refuse "--flash-attn with a bad value" "--flash-attn" -fa maybe
refuse "-n 0" "--n-predict" -n 0
cp "$STORIES" "$TMP/other.gguf"
refuse "an alias that is another model's name" '"other"' -m "$TMP/other.gguf" --alias x,other
refuse "a quantized KV type" "q8_0" -ctk q8_0 -ctv q8_0
refuse "K and V in different types" "-ctv f16" -ctk f32
refuse "several --api-key keys" "--api-key" --api-key k1,k2
refuse "an unreadable --chat-template-file" "$TMP/none.jinja" --chat-template-file "$TMP/none.jinja"

# ---- server A: llama-server's flags as a user would give them (--alias names
# and --tags kept in byte order, as llama-server's sets)
P='"prompt": "Once upon a time"'
if serve_start A -m "$STORIES" -t 1 --alias wick-c,wick-b --alias wick-a --tags small,chat --tags fim --temp 0 -n 7 -c 512 -np 2 \
     --cors-origins http://app.example --jinja --metrics --no-webui -ngl 0 -fa auto -cb -ctk f16 -ctv f16 --reasoning-format deepseek-legacy; then
  curl -s "$A/v1/models" >"$TMP/b"
  expect "/v1/models id is the first alias in byte order (llama-server's)" "$(js 'j["data"][0]["id"]')" wick-a
  expect "/v1/models lists every alias" "$(js '",".join(j["data"][0]["aliases"])')" wick-a,wick-b,wick-c
  expect "/v1/models lists the --tags" "$(js '",".join(j["data"][0]["tags"])')" chat,fim,small
  ST=$(curl -s -o "$TMP/b" -w '%{http_code}' "$A/v1/models/wick-c")
  expect "GET /v1/models/ALIAS" "$ST $(js 'j["id"]')" "200 wick-a"
  for name in wick-b wick-c stories260K-f32 wick-a:latest; do
    post "$A/v1/completions" "{\"model\": \"$name\", $P}"
    expect "model \"$name\" answers" "$ST $(js 'j["model"]')" "200 wick-a"
  done
  post "$A/v1/completions" "{\"model\": \"wick-d\", $P}"
  expect "an unknown name is still a 404" "$ST" 404

  # --temp 0 and -n 7: greedy, 7 tokens, the same as a request's temperature 0
  post "$A/v1/completions" "{$P}"
  t_default=$(js 'j["choices"][0]["text"]'); n_default=$(js 'j["usage"]["completion_tokens"]')
  expect "-n 7 limits a request without one on /v1/completions" "$n_default $(js 'j["choices"][0]["finish_reason"]')" "7 length"
  post "$A/v1/completions" "{$P, \"temperature\": 0, \"seed\": 99}"
  expect "--temp 0 default = a request's temperature 0" "$(js 'j["choices"][0]["text"]')" "$t_default"
  post "$A/v1/completions" "{$P, \"max_tokens\": 3}"
  expect "a request's smaller max_tokens wins over -n" "$(js 'j["usage"]["completion_tokens"]')" 3
  post "$A/v1/completions" "{$P, \"max_tokens\": 20}"
  expect "a request's larger max_tokens wins over -n 7 (as llama-server)" "$(js 'j["usage"]["completion_tokens"]')" 20
  post "$A/v1/completions" "{$P, \"temperature\": 1.5, \"seed\": 7, \"max_tokens\": 7}"
  t_hot_a=$(js 'j["choices"][0]["text"]')
  post "$A/v1/completions" "{$P, \"max_tokens\": 7}"
  t_greedy7=$(js 'j["choices"][0]["text"]')
  C='"messages": [{"role": "user", "content": "Tell me a story"}]'
  post "$A/v1/chat/completions" "{$C}"
  c_default=$(js 'j["choices"][0]["message"]["content"]')
  expect "-n 7 limits a request without one on /v1/chat/completions" "$(js 'j["usage"]["completion_tokens"]')" 7
  post "$A/v1/chat/completions" "{$C, \"temperature\": 0, \"seed\": 3}"
  expect "chat: --temp 0 = a request's temperature 0" "$(js 'j["choices"][0]["message"]["content"]')" "$c_default"
  post "$A/api/generate" '{"model": "wick-b", "prompt": "Once upon a time", "stream": false}'
  g1=$(js 'j["response"]'); expect "-n 7 limits a request without one on /api/generate" "$ST $(js 'j["eval_count"]')" "200 7"
  post "$A/api/generate" '{"model": "wick-b", "prompt": "Once upon a time", "stream": false, "options": {"temperature": 0, "seed": 5}}'
  expect "ollama: --temp 0 = options.temperature 0" "$(js 'j["response"]')" "$g1"
  post "$A/api/generate" '{"model": "wick-b", "prompt": "Once upon a time", "stream": false, "options": {"num_predict": 2}}'
  expect "options.num_predict overrides -n" "$(js 'j["eval_count"]')" 2
  post "$A/v1/messages" "{\"model\": \"wick-c\", \"max_tokens\": 50, $C}"
  m1=$(js 'j["content"][0]["text"] if j["content"] else ""')
  post "$A/v1/messages" "{\"model\": \"wick-c\", \"max_tokens\": 50, \"temperature\": 0, $C}"
  expect "anthropic: --temp 0 = a request's temperature 0" "$ST $(js 'j["content"][0]["text"] if j["content"] else ""')" "200 $m1"
  post "$A/v1/responses" '{"model": "wick-a", "input": "Tell me a story"}'
  expect "-n 7 limits a request without one on /v1/responses" "$ST $(js 'j["usage"]["output_tokens"]')" "200 7"

  # -c 512 over --parallel 2: 256 positions per sequence
  curl -s "$A/v1/models" >"$TMP/b"
  expect "-c 512 -np 2: each sequence has 256" "$(js 'j["data"][0].get("max_model_len")')" 256
  long=$(python3 -c 'print(" ".join(["Once upon a time there was a little dog."] * 40))')
  post "$A/v1/completions" "{\"prompt\": \"$long\", \"max_tokens\": 1}"
  if [ "$ST" = 400 ] && grep -q 256 "$TMP/b"; then ok "a prompt over 256 tokens: 400 naming the context ($(head -c 160 "$TMP/b"))"
  else bad "a prompt over 256 tokens: $ST $(head -c 300 "$TMP/b")"; fi

  # --no-webui: no web chat for a browser
  expect "--no-webui: / to a browser" "$(curl -s -H 'Accept: text/html' "$A/")" "Ollama is running"
  expect "--no-webui: no /webui/ files" "$(curl -s -o /dev/null -w '%{http_code}' "$A/webui/app.js")" 404

  # --cors-origins = --allowed-origins
  h=$(curl -s -D - -o /dev/null -H 'Origin: http://app.example' "$A/v1/models" | tr -d '\r' | grep -i '^access-control-allow-origin:')
  expect "--cors-origins: the origin is allowed" "$h" "Access-Control-Allow-Origin: http://app.example"
  ST=$(curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://other.example' "$A/v1/models")
  expect "--cors-origins: another origin is refused" "$ST" 403
  curl -s "$A/metrics" | grep '^vllm:cache_config_info' >"$TMP/cc"
  kv=$(sed -n 's/.*block_size="\([0-9]*\)",num_gpu_blocks="\([0-9]*\)".*cache_dtype="\([a-z0-9]*\)".*max_num_seqs="\([0-9]*\)".*/\1 \2 \3 \4/p' "$TMP/cc")
  read -r bs blocks dtype seqs <<<"$kv"
  expect "-c 512 -np 2: a KV pool of 512 positions, 2 sequences" "$((bs * blocks)) $seqs" "512 2"
  expect "-ctk f16 -ctv f16: an f16 KV cache" "$dtype" f16
fi

# ---- server B: no sampling flags; a request's own fields give the same output anywhere
if serve_start B -m "$STORIES" -t 1 -c 300 --any-model-name; then
  post "$B/v1/completions" "{$P, \"temperature\": 1.5, \"seed\": 7, \"max_tokens\": 7}"
  expect "a request's temperature and seed override --temp" "$(js 'j["choices"][0]["text"]')" "$t_hot_a"
  [ "$t_hot_a" != "$t_greedy7" ] && ok "temperature 1.5 differs from the greedy default" || bad "temperature 1.5 gave the greedy text"
  post "$B/v1/completions" "{$P, \"max_tokens\": 1}"
  curl -s "$B/v1/models" >"$TMP/b"
  expect "-c 300 without --parallel: each sequence has 300 (a shared pool)" "$(js 'j["data"][0].get("max_model_len")')" 300
  kv=$(curl -s "$B/metrics" | grep '^vllm:cache_config_info' | sed -n 's/.*block_size="\([0-9]*\)",num_gpu_blocks="\([0-9]*\)".*max_num_seqs="\([0-9]*\)".*/\1 \2 \3/p')
  read -r bs blocks seqs <<<"$kv"
  expect "-c 300 without --parallel: 8 sequences share a pool of 300 positions (rounded up to a block)" \
    "$(( (300 + bs - 1) / bs * bs )) $seqs" "$((bs * blocks)) 8"
  expect "no --alias: the file's name" "$(js 'j["data"][0]["id"]') $(js '"aliases" in j["data"][0]')" "stories260K-f32 False"
  post "$B/v1/chat/completions/render" "{$C}"
  echo "$(js 'j["token_ids"]')" >"$TMP/render_model"
  # --any-model-name: another model's name is answered by the default model, under that name
  post "$B/v1/chat/completions" "{\"model\": \"gpt-3.5-turbo\", $C, \"max_tokens\": 4, \"temperature\": 0}"
  expect "--any-model-name: chat naming another model" "$ST $(js 'j["model"]')" "200 gpt-3.5-turbo"
  any_text=$(js 'j["choices"][0]["message"]["content"]')
  post "$B/v1/chat/completions" "{$C, \"max_tokens\": 4, \"temperature\": 0}"
  expect "--any-model-name: the same reply as the default model's" "$ST $(js 'j["choices"][0]["message"]["content"]')" "200 $any_text"
  post "$B/api/generate" '{"model": "codellama70b", "prompt": "Once upon a time", "stream": false, "options": {"num_predict": 2}}'
  expect "--any-model-name: /api/generate naming another model" "$ST $(js 'j["model"]')" "200 codellama70b"
  post "$B/completion" '{"model": "x/y:z", "prompt": "Once upon a time", "n_predict": 2}'
  expect "--any-model-name: /completion" "$ST $(js 'j["model"]')" "200 x/y:z"
fi

# ---- server U: -c 128 -np 4 --kv-unified: each sequence may use all 128 positions of one
# shared pool; four requests that together need more than it all finish (the newest is
# preempted and recomputed) with the same text as alone
if serve_start U -m "$STORIES" -t 1 -c 128 -np 4 -kvu; then
  curl -s "$U/v1/models" >"$TMP/b"
  expect "-c 128 -np 4 -kvu: each sequence has 128" "$(js 'j["data"][0].get("max_model_len")')" 128
  kv=$(curl -s "$U/metrics" | grep '^vllm:cache_config_info' | sed -n 's/.*block_size="\([0-9]*\)",num_gpu_blocks="\([0-9]*\)".*max_num_seqs="\([0-9]*\)".*/\1 \2 \3/p')
  read -r bs blocks seqs <<<"$kv"
  expect "-c 128 -np 4 -kvu: one pool of 128 positions, 4 sequences" "$((bs * blocks)) $seqs" "128 4"
  U1='{"prompt": "Once upon a time", "n_predict": 100, "temperature": 0, "ignore_eos": true}'
  post "$U/completion" "$U1"
  alone=$(js 'j["content"]')
  expect "-kvu: one request generates 100 tokens" "$ST $(js 'j["tokens_predicted"]')" "200 100"
  pids=()
  for i in 1 2 3 4; do
    curl -s -o "$TMP/u$i" -H 'Content-Type: application/json' -d "$U1" "$U/completion" &
    pids+=($!)
  done
  wait "${pids[@]}"
  same=0
  for i in 1 2 3 4; do
    python3 -c "import json,sys; j=json.load(open('$TMP/u$i')); sys.exit(0 if j['tokens_predicted'] == 100 and j['content'] == sys.argv[1] else 1)" "$alone" && same=$((same + 1))
  done
  expect "-kvu: four requests over the shared pool each give the lone text of 100 tokens" "$same" 4
  serve_stop "$U_PID"
fi
refuse "--kv-unified with --no-kv-unified" "kv-unified" -c 128 -kvu --no-kv-unified

# ---- server V: --verbose adds llama-server's __verbose (the prompt as text, BOS written
# out) to whole answers; a last assistant message is continued (llama-server's prefill)
if serve_start V -m "$STORIES" -t 1 --chat-template llama3 -v; then
  H='<s> <|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n'
  post "$V/v1/chat/completions" '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": 0}'
  expect "-v: chat __verbose.prompt" "$ST $(js 'json.dumps(j["__verbose"]["prompt"])')" "200 \"$H\""
  expect "-v: __verbose.content = the reply" "$(js 'j["__verbose"]["content"] == j["choices"][0]["message"]["content"]')" True
  post "$V/v1/chat/completions" '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Wh"}, {"type": "text", "text": "ill"}]}], "max_tokens": 2}'
  expect "a last assistant message is continued (its parts joined)" "$ST $(js 'json.dumps(j["__verbose"]["prompt"])')" "200 \"${H}Whill\""
  post "$V/v1/chat/completions" '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "A"}, {"role": "assistant", "content": "B"}], "max_tokens": 2}'
  expect "two assistant messages at the end: which to continue is unclear, a 400" "$ST $(js 'j["error"]["param"]')" "400 messages"
  post "$V/v1/chat/completions" '{"messages": [{"role": "user", "content": "Hi"}], "continue_final_message": true}'
  expect "continue_final_message with add_generation_prompt (its default) is a 400" "$ST $(js 'j["error"]["param"]')" "400 continue_final_message"
  post "$V/completion" '{"prompt": "Once upon", "n_predict": 2}'
  expect "-v: /completion __verbose.prompt" "$ST $(js 'j["__verbose"]["prompt"]')" "200 <s> Once upon"
  serve_stop "$V_PID"
fi
post "$B/v1/chat/completions" '{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}'
expect "without -v no __verbose" "$(js '"__verbose" in j')" False

# ---- server C: --seed with a temperature: requests without a seed repeat; with one, theirs
if serve_start S -m "$STORIES" -t 1 --temp 1.5 --seed 7 --top-k 0 --top-p 1 --min-p 0; then
  post "$S/v1/completions" "{$P, \"max_tokens\": 12}"; s1=$(js 'j["choices"][0]["text"]')
  post "$S/v1/completions" "{$P, \"max_tokens\": 12}"; s2=$(js 'j["choices"][0]["text"]')
  expect "--seed: requests without a seed repeat" "$s2" "$s1"
  post "$B/v1/completions" "{$P, \"max_tokens\": 12, \"temperature\": 1.5, \"seed\": 7, \"top_k\": 0, \"top_p\": 1, \"min_p\": 0}"
  expect "--temp --seed --top-k --top-p --min-p = the same fields in a request" "$(js 'j["choices"][0]["text"]')" "$s1"
  post "$S/api/generate" '{"prompt": "Once upon a time", "stream": false, "options": {"num_predict": 12}}'; o1=$(js 'j["response"]')
  post "$S/api/generate" '{"prompt": "Once upon a time", "stream": false, "options": {"num_predict": 12}}'
  expect "--seed on /api/generate" "$(js 'j["response"]')" "$o1"
  serve_stop "$S_PID"
fi

# ---- templates: --chat-template-file and --chat-template NAME replace the model's
printf '%s' '{% for m in messages %}<{{ m.role }}:{{ m.content }}>{% endfor %}{% if add_generation_prompt %}[bot]{% endif %}' >"$TMP/t.jinja"
if serve_start D -m "$STORIES" -t 1 --chat-template-file "$TMP/t.jinja"; then
  post "$D/v1/chat/completions/render" "{$C}"
  got=$(js 'j["token_ids"]')
  post "$D/tokenize" '{"content": "<user:Tell me a story>[bot]", "add_special": true}'
  want=$(js 'j["tokens"]')
  expect "--chat-template-file: the prompt is the file's rendering after BOS (the model adds it)" "$got" "$want"
  [ "$got" != "$(cat "$TMP/render_model" 2>/dev/null)" ] && ok "--chat-template-file differs from the model's template" ||
    bad "--chat-template-file rendered as the model's template"
  serve_stop "$D_PID"
fi
if serve_start E -m "$STORIES" -t 1 --chat-template llama3 --no-jinja; then
  post "$E/v1/chat/completions/render" "{$C}"
  got=$(js 'j["token_ids"]')
  post "$E/tokenize" '{"content": "<|start_header_id|>user<|end_header_id|>\n\nTell me a story<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", "add_special": true}'
  want=$(js 'j["tokens"]')
  expect "--chat-template llama3: the prompt is llama3's rendering" "$got" "$want"
  [ "$got" != "$(cat "$TMP/render_model" 2>/dev/null)" ] && ok "--chat-template llama3 differs from the model's template" ||
    bad "--chat-template llama3 rendered as the model's template"
  serve_stop "$E_PID"
fi
# --no-jinja: a template file read as the built-in format it is recognised
# as (llama3 here: the file's own extra text is not rendered); a model without
# a template is rendered as ChatML
printf '%s' "{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\n\n' + m['content'] + '<|eot_id|>' }}{% endfor %}{{ 'not llama3' }}" >"$TMP/l3.jinja"
if serve_start J -m "$STORIES" -t 1 --no-jinja --chat-template-file "$TMP/l3.jinja"; then
  post "$J/apply-template" '{"messages": [{"role": "user", "content": "Hi"}]}'
  expect "--no-jinja --chat-template-file: rendered as the built-in llama3" "$(js 'j["prompt"]')" \
    "$(printf '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n')"
  serve_stop "$J_PID"
fi
if serve_start K -m "$STORIES" -t 1 --no-jinja; then
  post "$K/apply-template" '{"messages": [{"role": "user", "content": "Hi"}]}'
  expect "--no-jinja, a model without a template: ChatML" "$(js 'j["prompt"]')" \
    "$(printf '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n')"
  serve_stop "$K_PID"
fi
# llama.cpp's named formats; BOS first as the model adds it, whatever the template
if serve_start F -m "$STORIES" -t 1 --chat-template command-r; then
  M='"messages": [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "Hi there"}]'
  post "$F/apply-template" "{$M}"
  expect "--chat-template command-r: /apply-template is llama.cpp's text" "$(js 'j["prompt"]')" \
    "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a test.<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
  post "$F/tokenize" "{\"content\": $(js 'json.dumps(j["prompt"])'), \"add_special\": true}"
  want=$(js 'j["tokens"]')
  post "$F/v1/chat/completions/render" "{$M}"
  expect "--chat-template command-r: the prompt submitted is BOS + the template's text" "$(js 'j["token_ids"]')" "$want"
  serve_stop "$F_PID"
fi
if serve_start G -m "$STORIES" -t 1 --chat-template chatml; then
  post "$G/v1/chat/completions" '{"messages": [{"role": "system", "content": "Book"}, {"role": "user", "content": "What is the best book"}], "max_tokens": 1}'
  expect "--chat-template chatml: BOS counted in the prompt (llama.cpp's 77)" "$(js 'j["usage"]["prompt_tokens"]')" 77
  serve_stop "$G_PID"
fi
# a template without a system role (as Gemma 2's, which raises): the system text
# is folded into the first user message, joined by a newline (as llama.cpp)
printf '%s' "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\n' + m['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}" >"$TMP/nosys.jinja"
if serve_start H -m "$STORIES" -t 1 --jinja --chat-template-file "$TMP/nosys.jinja"; then
  M='"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me a story"}]'
  post "$H/apply-template" "{$M}"
  expect "no system role: the system text opens the first user turn (BOS left to tokenization)" "$(js 'j["prompt"]')" \
    "$(printf '<start_of_turn>user\nBe brief.\nTell me a story<end_of_turn>\n<start_of_turn>model\n')"
  post "$H/tokenize" "{\"content\": $(js 'json.dumps(j["prompt"])'), \"add_special\": true}"
  want=$(js 'j["tokens"]')
  post "$H/v1/chat/completions/render" "{$M}"
  expect "no system role: the prompt has one BOS (the template's)" "$(js 'j["token_ids"]')" "$want"
  post "$H/v1/chat/completions/render" '{"messages": [{"role": "user", "content": "Hi"}]}'
  expect "no system message: rendered as is" "$ST" 200
  T='"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}], "tool_choice": "required"'
  post "$H/v1/chat/completions" "{$M, $T, \"max_tokens\": 4}"
  expect "no system role: a system message with tools and tool_choice required is served" "$ST" 200
  serve_stop "$H_PID"
fi
# --reasoning: templates reading enable_thinking get true (on, auto: the
# default) or false (off); a request's chat_template_kwargs wins. Every
# template gets today's date as date_string and datetime (llama-server's)
printf '%s' "[{{ enable_thinking }}][{{ date_string }}][{{ datetime }}]" >"$TMP/think.jinja"
for mode in auto off on; do
  if serve_start R -m "$STORIES" -t 1 --jinja --chat-template-file "$TMP/think.jinja" --reasoning $mode; then
    d1=$(date '+[%d %b %Y][%b %d %Y]')
    post "$R/apply-template" '{"messages": [{"role": "user", "content": "Hi"}]}'
    d2=$(date '+[%d %b %Y][%b %d %Y]')
    got=$(js 'j["prompt"]')
    want=True; [ $mode = off ] && want=False
    expect "--reasoning $mode: enable_thinking" "${got%%]*}]" "[$want]"
    [ "${got#*]}" = "$d1" ] || [ "${got#*]}" = "$d2" ] && ok "--reasoning $mode: today's date_string and datetime" ||
      bad "date_string/datetime: got ${got#*]}, want $d1"
    post "$R/apply-template" '{"messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": {"enable_thinking": true, "date_string": "x", "datetime": "y"}}'
    expect "--reasoning $mode: the request's kwargs override it" "$(js 'j["prompt"]')" "[True][x][y]"
    serve_stop "$R_PID"
  fi
done
# --sleep-idle-seconds (llama-server's keep-alive): once idle that long the
# model unloads; /props says is_sleeping without loading it, /health stays
# 200, and a request loads it again
if serve_start Z -m "$STORIES" -t 1 --sleep-idle-seconds 3; then
  for _ in $(seq 100); do
    curl -s "$Z/props" >"$TMP/b"
    [ "$(js 'j["is_sleeping"]')" = True ] && break
    sleep 0.2
  done
  expect "--sleep-idle-seconds: asleep once idle" "$(js 'j["is_sleeping"]')" True
  expect "--sleep-idle-seconds: /health while asleep" "$(curl -s -o /dev/null -w '%{http_code}' "$Z/health")" 200
  post "$Z/completion" '{"prompt": "Hello", "n_predict": 1}'
  expect "--sleep-idle-seconds: a request wakes it" "$ST" 200
  curl -s "$Z/props" >"$TMP/b"
  expect "--sleep-idle-seconds: awake after it" "$(js 'j["is_sleeping"]')" False
  serve_stop "$Z_PID"
fi
finish
