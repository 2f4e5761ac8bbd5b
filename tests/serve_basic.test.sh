#!/usr/bin/env bash
# serve_basic.test.sh — `wick serve` end to end with curl alone (no npm): every
# route answers with the right status and JSON shape, bad input of each kind
# (malformed JSON, wrong types, huge numbers, unknown model, oversized and
# non-UTF-8 bodies, a prompt longer than the context, unknown routes) gets a
# 4xx and leaves the server serving, a client that leaves mid-stream has its
# request cancelled, --api-key guards the APIs but not /health, and SIGTERM
# ends the server with status 0 (under ASan: no leaks).
# Model: stories260K from ../shared, else a random test model.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
t_init serve_basic
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
command -v curl >/dev/null || skip "curl not installed"
command -v python3 >/dev/null || skip "python3 not installed"

M="$SHARED/models/stories260K/stories260K-f32.gguf"
if [ ! -f "$M" ]; then
  skip_part "$M not found (shared fixtures absent): a random tiny llama model instead"
  M="$TMP/tiny.gguf"
  "$WICK" make-test-model --arch llama --format gguf --shape tiny --seed 1 --out "$M" >/dev/null 2>&1 || { bad "make-test-model"; finish; }
fi
NAME=$(basename "$M" .gguf)

# start VAR ARGS...: a server on a free port; VAR = base URL, VAR_PID = its pid
start() {
  local var=$1; shift
  local log="$TMP/$var.log" port="" code=""
  "$WICK" serve --port 0 "$@" >"$log" 2>"$log.err" &
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

# req METHOD URL [BODY-FILE-OR-STRING] [curl args...]: status in $ST, body in $TMP/b, headers in $TMP/h
req() {
  local method=$1 url=$2; shift 2
  local data=()
  if [ $# -gt 0 ]; then
    if [ -f "$1" ]; then data=(--data-binary "@$1"); else data=(--data-binary "$1"); fi
    shift
  fi
  ST=$(curl -s -X "$method" -o "$TMP/b" -D "$TMP/h" -w '%{http_code}' -H 'Content-Type: application/json' "${data[@]}" "$@" "$url")
}
# expect_http LABEL STATUS [PYTHON-CONDITION on j (the body as JSON) / t (as text) / h (headers)]
expect_http() {
  local label=$1 want=$2 cond=${3:-True}
  if [ "$ST" != "$want" ]; then bad "$label: status $ST, want $want: $(head -c 300 "$TMP/b")"; return; fi
  if python3 - "$TMP/b" "$TMP/h" "$cond" <<'PY'
import json, sys
t = open(sys.argv[1], encoding="utf-8", errors="replace").read()
h = open(sys.argv[2], encoding="latin-1").read().lower()
try: j = json.loads(t)
except Exception: j = None
sys.exit(0 if eval(sys.argv[3]) else 1)
PY
  then ok; else bad "$label: $cond: $(head -c 400 "$TMP/b")"; fi
}

start S -m "$M" --ctx 512 -t 1 --parallel 2 --max-queue 8 --body-limit 65536 || finish

# ---- routes
req GET "$S/health"; expect_http "health" 200 'j == {"status": "ok"}'
req GET "$S/"; expect_http "GET /" 200 '"Ollama is running" in t'
ST=$(curl -s -I -o /dev/null -w '%{http_code}' "$S/"); expect_http "HEAD /" 200
ST=$(curl -s -I -o /dev/null -w '%{http_code}' "$S/api/version"); expect_http "HEAD /api/version" 200
req GET "$S/v1/models"; expect_http "models" 200 "j['object'] == 'list' and j['data'][0]['id'] == '$NAME' and j['data'][0]['object'] == 'model'"
req GET "$S/v1/models/$NAME"; expect_http "model by id" 200 "j['id'] == '$NAME'"
req GET "$S/v1/models/nope"; expect_http "unknown model id" 404 "j['error']['type'] == 'not_found_error'"
req POST "$S/v1/completions" '{"prompt":"Once upon a time","max_tokens":12,"temperature":0}'
expect_http "completions" 200 "j['object'] == 'text_completion' and len(j['choices'][0]['text']) > 0 and j['choices'][0]['finish_reason'] == 'length' and j['usage']['completion_tokens'] == 12 and j['usage']['total_tokens'] == j['usage']['prompt_tokens'] + 12 and 'cached_tokens' in j['usage']['prompt_tokens_details']"
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["choices"][0]["text"])' "$TMP/b")
req POST "$S/v1/completions" '{"prompt":"Once upon a time","max_tokens":12,"temperature":0,"stream":true,"stream_options":{"include_usage":true}}'
expect_http "completions stream" 200 "t.endswith('data: [DONE]\n\n') and len({json.loads(l[6:])['id'] for l in t.split('\n\n') if l.startswith('data: {')}) == 1 and json.loads(t.split('\n\n')[-3][6:])['choices'] == [] and ''.join(c['text'] for l in t.split('\n\n') if l.startswith('data: {') for c in json.loads(l[6:])['choices']) == '''$first'''"
req POST "$S/v1/completions" '{"prompt":"Once upon a time","max_tokens":8,"logprobs":2,"temperature":0}'
expect_http "completions logprobs" 200 "len(j['choices'][0]['logprobs']['tokens']) == 8 and all(len(d) == 2 for d in j['choices'][0]['logprobs']['top_logprobs'])"
req POST "$S/v1/chat/completions" '{"messages":[{"role":"user","content":"Hello"}],"max_tokens":6,"temperature":0,"logprobs":true,"top_logprobs":2}'
expect_http "chat" 200 "j['object'] == 'chat.completion' and j['choices'][0]['message']['role'] == 'assistant' and isinstance(j['choices'][0]['message']['content'], str) and len(j['choices'][0]['logprobs']['content']) == j['usage']['completion_tokens']"
req POST "$S/v1/chat/completions" '{"messages":[{"role":"user","content":[{"type":"text","text":"Hello"}]}],"max_completion_tokens":6,"stream":true}'
expect_http "chat stream" 200 "json.loads(t.split('\n\n')[0][6:])['choices'][0]['delta']['role'] == 'assistant' and json.loads(t.split('\n\n')[-3][6:])['choices'][0]['finish_reason'] in ('stop', 'length') and t.endswith('data: [DONE]\n\n')"
req POST "$S/api/generate" "{\"model\":\"$NAME\",\"prompt\":\"Once upon a time\",\"raw\":true,\"stream\":false,\"options\":{\"num_predict\":12,\"temperature\":0}}"
expect_http "ollama generate" 200 "j['done'] is True and j['done_reason'] == 'length' and j['eval_count'] == 12 and j['response'] == '''$first''' and isinstance(j['context'], list) and j['total_duration'] > 0"
req POST "$S/api/generate" "{\"model\":\"$NAME\",\"prompt\":\"Once upon a time\",\"options\":{\"num_predict\":5}}"
expect_http "ollama generate stream" 200 "all(json.loads(l) for l in t.splitlines()) and json.loads(t.splitlines()[-1])['done'] is True and 'application/x-ndjson' in h"
req POST "$S/api/chat" "{\"model\":\"$NAME\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":false,\"options\":{\"num_predict\":4}}"
expect_http "ollama chat" 200 "j['message']['role'] == 'assistant' and j['done'] is True and 'prompt_eval_count' in j"
req POST "$S/api/generate" "{\"model\":\"$NAME\",\"prompt\":\"\"}"; expect_http "ollama load" 200 "j['done_reason'] == 'load'"
req GET "$S/api/tags"; expect_http "tags" 200 "j['models'][0]['name'] == '$NAME' and 'details' in j['models'][0]"
req GET "$S/api/ps"; expect_http "ps" 200 "j['models'][0]['name'] == '$NAME' and j['models'][0]['context_length'] == 512"
req POST "$S/api/show" "{\"model\":\"$NAME\"}"; expect_http "show" 200 "'general.architecture' in j['model_info'] and 'completion' in j['capabilities']"
req GET "$S/api/version"; expect_http "version" 200 "isinstance(j['version'], str)"
req POST "$S/tokenize" '{"content":"Hello world","add_special":true}'; expect_http "tokenize" 200 "len(j['tokens']) > 0"
toks=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["tokens"]))' "$TMP/b")
req POST "$S/detokenize" "{\"tokens\":$toks}"; expect_http "detokenize" 200 "'Hello world' in j['content']"
req POST "$S/v1/completions/render" '{"prompt":"Hello world"}'; expect_http "render completions" 200 "j[0]['token_ids'] == $toks"
req POST "$S/v1/chat/completions/render" '{"messages":[{"role":"user","content":"Hi"}]}'; expect_http "render chat" 200 "len(j['token_ids']) > 0"
req GET "$S/metrics"
expect_http "metrics" 200 "'text/plain; version=0.0.4' in h and all(('%s{model_name=\"$NAME\"' % n) in t for n in ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:num_preemptions_total', 'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total', 'vllm:time_to_first_token_seconds_bucket', 'vllm:inter_token_latency_seconds_count', 'vllm:e2e_request_latency_seconds_sum', 'vllm:cache_config_info', 'vllm:lora_requests_info', 'vllm:request_success_total'])"

# ---- bad input: each a 4xx with a clear error, the server still serving
req POST "$S/v1/completions" '{"prompt": "x", '; expect_http "malformed JSON" 400 "j['error']['type'] == 'invalid_request_error'"
req POST "$S/v1/completions" '[1,2]'; expect_http "JSON not an object" 400 "'error' in j"
req POST "$S/v1/completions" '{"prompt":"x","max_tokens":"ten"}'; expect_http "max_tokens string" 400 "j['error']['param'] == 'max_tokens'"
req POST "$S/v1/completions" '{"prompt":"x","max_tokens":1e30}'; expect_http "max_tokens 1e30" 400 "j['error']['param'] == 'max_tokens'"
req POST "$S/v1/completions" '{"prompt":"x","max_tokens":-5}'; expect_http "max_tokens negative" 400 "j['error']['param'] == 'max_tokens'"
req POST "$S/v1/completions" '{"prompt":"x","temperature":"hot"}'; expect_http "temperature string" 400 "j['error']['param'] == 'temperature'"
req POST "$S/v1/completions" '{"prompt":"x","stop":5}'; expect_http "stop number" 400 "j['error']['param'] == 'stop'"
req POST "$S/v1/completions" '{"prompt":"x","n":4096}'; expect_http "n above --parallel" 400 "j['error']['param'] == 'n'"
req POST "$S/v1/completions" '{"prompt":"x","stream":"yes"}'; expect_http "stream string" 400 "j['error']['param'] == 'stream'"
req POST "$S/v1/completions" '{"max_tokens":3}'; expect_http "no prompt" 400 "j['error']['param'] == 'prompt'"
req POST "$S/v1/completions" '{"prompt":[999999]}'; expect_http "token id out of range" 400 "'error' in j"
req POST "$S/v1/chat/completions" '{"messages":"hi"}'; expect_http "messages string" 400 "j['error']['param'] == 'messages'"
req POST "$S/v1/chat/completions" '{"messages":[{"content":"hi"}]}'; expect_http "message without role" 400 "j['error']['param'] == 'messages'"
req POST "$S/v1/completions" '{"model":"no-such-model","prompt":"x"}'; expect_http "unknown model" 404 "j['error']['code'] == 'model_not_found' and '$NAME' in j['error']['message']"
req POST "$S/tokenize" '{"model":"no-such-model","content":"x"}'; expect_http "tokenize: unknown model" 404 "j['error']['code'] == 'model_not_found' and j['error']['param'] == 'model'"
python3 -c 'import sys; sys.stdout.write("{\"prompt\":\"" + "once upon a time " * 200 + "\"}")' > "$TMP/long.json"
req POST "$S/v1/completions" "$TMP/long.json"; expect_http "prompt longer than the context" 400 "'x-should-retry: false' in h and j['error']['code'] == 'context_length_exceeded'"
python3 -c 'import sys; sys.stdout.write("{\"prompt\":\"" + "a" * 70000 + "\"}")' > "$TMP/big.json"
req POST "$S/v1/completions" "$TMP/big.json"; expect_http "body over --body-limit" 413 "'error' in j"
printf '{"prompt":"\xff\xfe"}' > "$TMP/bad_utf8.json"
req POST "$S/v1/completions" "$TMP/bad_utf8.json"; expect_http "invalid UTF-8 body" 400 "'UTF-8' in j['error']['message']"
req POST "$S/api/generate" '{"prompt":"x","options":{"num_predict":"many"}}'; expect_http "ollama wrong type" 400 "isinstance(j['error'], str)"
req POST "$S/api/generate" '{"model":"nope","prompt":"x"}'; expect_http "ollama unknown model" 404 "isinstance(j['error'], str)"
req POST "$S/api/generate" '{"prompt":"x","format":"yaml"}'; expect_http "ollama format yaml" 400 "isinstance(j['error'], str)"
req POST "$S/api/generate" '{"prompt":"x","keep_alive":"soon"}'; expect_http "ollama bad keep_alive" 400 "isinstance(j['error'], str)"
req GET "$S/no/such/route"; expect_http "unknown route" 404 "'error' in j"
req GET "$S/v1/completions"; expect_http "wrong method" 405 "'error' in j"
req GET "$S/health"; expect_http "health after the bad requests" 200

# ---- SIGTERM: clean exit (status 0; under ASan no leaks)
kill -TERM "$S_PID"; wait "$S_PID"; rc=$?
[ $rc = 0 ] && ok || { bad "server exit status $rc after SIGTERM"; tail -n 30 "$TMP/S.log.err"; }

# ---- --api-key: /v1 and /api need it, /health does not (a random model with a
# long context, so that a stream lasts long enough to be abandoned)
L="$TMP/tiny256.gguf"
"$WICK" make-test-model --arch llama --format gguf --shape tiny256 --dtype q8_0 --seed 3 --out "$L" >/dev/null 2>&1 || { bad "make-test-model tiny256"; finish; }
start K -m "$L" --ctx 4096 -t 1 --api-key sekrit || finish
NAME=tiny256
req GET "$K/v1/models"; expect_http "no key" 401 "j['error']['type'] == 'authentication_error'"
req GET "$K/v1/models" "" -H "Authorization: Bearer wrong"; expect_http "wrong key" 401
req GET "$K/v1/models" "" -H "Authorization: Bearer sekrit"; expect_http "right key" 200 "j['data'][0]['id'] == '$NAME'"
req GET "$K/api/tags"; expect_http "no key (ollama)" 401 "isinstance(j['error'], str)"
req GET "$K/health"; expect_http "health without a key" 200

# ---- a client that leaves mid-stream: its request is cancelled
gen_total() { curl -s "$K/metrics" | sed -n 's/^vllm:generation_tokens_total{[^}]*} \([0-9]*\).*/\1/p'; }
g0=$(gen_total)
curl -s -N --max-time 0.2 -o /dev/null "$K/v1/completions" -H "Authorization: Bearer sekrit" -H 'Content-Type: application/json' \
  --data-binary '{"prompt":"Once upon a time","max_tokens":4000,"ignore_eos":true,"stream":true}'
running=1
for _ in $(seq 50); do
  running=$(curl -s "$K/metrics" | sed -n 's/^vllm:num_requests_running{[^}]*} \([0-9]*\).*/\1/p')
  [ "$running" = 0 ] && break
  sleep 0.1
done
[ "$running" = 0 ] && ok || bad "after a client left mid-stream: num_requests_running $running"
g1=$(gen_total)
echo "info: abandoned stream: $((g1 - g0)) of 4000 tokens generated"
[ $((g1 - g0)) -lt 3900 ] && ok || bad "the abandoned stream was not cancelled: $((g1 - g0)) tokens generated"
req GET "$K/health"; expect_http "health after the abort" 200

kill -INT "$K_PID"; wait "$K_PID"; rc=$?
[ $rc = 0 ] && ok || { bad "server exit status $rc after SIGINT"; tail -n 30 "$TMP/K.log.err"; }

finish
