#!/usr/bin/env bash
# testmodel_script.test.sh — scripted test models (`wick make-test-model
# --script TEXT [--after TEXT]`): with the Qwen2.5 and Qwen3 tokenizers of
# ../shared, greedy decoding through `wick generate` (raw prompts rendered by
# `wick template`, and --chat) gives exactly each script's text and tokens and
# then stops: a Hermes tool call, a two-turn tool conversation, a thinking
# answer, a JSON object, in f32 and f16; a prompt no script covers ends at
# once; `wick serve` answers a chat request with the script; the synthetic
# tokenizer with --arch llama; the errors for scripts that cannot be built.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
t_init testmodel_script
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
TMP=$(mktemp -d)
SERVE_PID=""
cleanup() {
  if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
command -v python3 >/dev/null || skip "python3 not installed"

TOOL='<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>'
ANSWER='The weather in Paris is sunny.'
AFTER_TOOL='</tool_response><|im_end|>
<|im_start|>assistant
'
THINK='<think>
Let me think.
</think>

The answer is 4.'
JSON='{"name": "Alice", "age": 30, "tags": ["a", "b"], "ok": true}'

# json_field JSON KEY: one field of `wick generate --json`'s object (lists as JSON)
json_field() { printf '%s' "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(v if isinstance(v,str) else json.dumps(v,separators=(",",":")), end="")' "$2"; }

# gen_check LABEL MODEL WANT GENERATE-ARGS...: the text and the tokens of greedy decoding
gen_check() {
  local label=$1 model=$2 want=$3; shift 3
  local out text toks want_toks
  out=$("$WICK" generate -m "$model" --temp 0 -n 200 --json "$@" 2>"$TMP/err") || { bad "$label: generate failed: $(cat "$TMP/err")"; return; }
  text=$(json_field "$out" text)
  expect "$label: text" "$text" "$want"
  toks=$(json_field "$out" tokens)
  want_toks=$("$WICK" tokenize -m "$model" -p "$want" --no-special)
  expect "$label: tokens" "$toks" "$want_toks"
  expect "$label: finish_reason" "$(json_field "$out" finish_reason)" "stop"
}

# The conversations: a question; the question, the tool call and its result.
cat >"$TMP/conv1.json" <<'EOF'
{"messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
EOF
cat >"$TMP/conv2.json" <<'EOF'
{"messages": [{"role": "user", "content": "What is the weather in Paris?"},
  {"role": "assistant", "content": "", "tool_calls": [{"type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
  {"role": "tool", "content": "{\"temperature\": 22, \"sky\": \"sunny\"}"}]}
EOF

# the synthetic tokenizer (no ../shared needed), --arch llama, a JSON object
M="$TMP/llama.gguf"
if "$WICK" make-test-model --arch llama --dtype f16 --script "$JSON" --out "$M" >"$TMP/mk.out" 2>&1; then
  ok "make-test-model --arch llama --script (synthetic tokenizer)"
  gen_check "llama, synthetic tokenizer, JSON, --chat" "$M" "$JSON" --chat -p "Some JSON, please."
  gen_check "llama, JSON, raw prompt" "$M" "$JSON" -p "<|im_start|>user
Hi<|im_end|>
<|im_start|>assistant
"
else
  bad "make-test-model --arch llama --script: $(cat "$TMP/mk.out")"
fi

# errors
"$WICK" make-test-model --arch gemma2 --script "x" --out "$TMP/x.gguf" >/dev/null 2>"$TMP/err"
expect "--script with --arch gemma2 is an error" "$?" "1"
grep -q "qwen2, qwen3 or llama" "$TMP/err"; expect "  ... naming the archs: $(cat "$TMP/err")" "$?" "0"
"$WICK" make-test-model --arch llama --script "a<|im_end|>b" --out "$TMP/x.gguf" >/dev/null 2>"$TMP/err"
expect "a script holding the end token is an error" "$?" "1"
grep -q "ends generation" "$TMP/err"; expect "  ... saying so: $(cat "$TMP/err")" "$?" "0"
"$WICK" make-test-model --arch llama --script "one" --script "two" --out "$TMP/x.gguf" >/dev/null 2>"$TMP/err"
expect "two scripts after the same text is an error" "$?" "1"
grep -q "tell apart" "$TMP/err"; expect "  ... saying why: $(cat "$TMP/err")" "$?" "0"
"$WICK" make-test-model --arch llama --after "x" --script "one" --out "$TMP/x.gguf" >/dev/null 2>"$TMP/err"
expect "--after before any --script is an error" "$?" "1"
"$WICK" make-test-model --arch llama --script "one" --dtype q8_0 --out "$TMP/x.gguf" >/dev/null 2>"$TMP/err"
expect "--script with --dtype q8_0 is an error" "$?" "1"

TOKS="$SHARED/tokenizers"
if [ ! -d "$TOKS/qwen2.5" ] || [ ! -d "$TOKS/qwen3" ]; then
  skip_part "$TOKS/qwen2.5 or qwen3 not found (shared fixtures absent): the Qwen checks"
  finish
fi

for pair in "qwen2 qwen2.5" "qwen3 qwen3"; do
  set -- $pair; arch=$1; tok=$TOKS/$2
  for dt in f32 f16; do
    M="$TMP/$arch-$dt-tool.gguf"
    if ! "$WICK" make-test-model --arch "$arch" --dtype "$dt" --tokenizer "$tok" --script "$TOOL" \
         --script "$ANSWER" --after "$AFTER_TOOL" --out "$M" >"$TMP/mk.out" 2>&1; then
      bad "make-test-model $arch $dt, two turns: $(cat "$TMP/mk.out")"; continue
    fi
    ok "make-test-model $arch $dt, two turns: $(cat "$TMP/mk.out")"
    size=$(stat -c %s "$M")
    [ "$size" -lt 50000000 ]; expect "$arch $dt: the file is under 50 MB ($size bytes)" "$?" "0"
    # turn 1: the template's prompt for the question -> the tool call
    "$WICK" template -m "$tok" -i "$TMP/conv1.json" >"$TMP/p1.txt"
    gen_check "$arch $dt: turn 1, raw prompt" "$M" "$TOOL" -f "$TMP/p1.txt"
    gen_check "$arch $dt: turn 1, --chat" "$M" "$TOOL" --chat -p "What is the weather in Paris?"
    # turn 2: with the tool's result -> the answer
    "$WICK" template -m "$tok" -i "$TMP/conv2.json" >"$TMP/p2.txt"
    case "$(cat "$TMP/p2.txt"; printf x)" in
      *"$AFTER_TOOL"x) ok;;
      *) bad "$arch: the rendered tool turn does not end with the --after text: $(tail -c 80 "$TMP/p2.txt")";;
    esac
    gen_check "$arch $dt: turn 2, raw prompt" "$M" "$ANSWER" -f "$TMP/p2.txt"
    # a prompt no script covers: the end token at once
    out=$("$WICK" generate -m "$M" --temp 0 -n 20 --json -p "Hello there, how are you")
    expect "$arch $dt: an uncovered prompt ends at once" "$(json_field "$out" text)|$(json_field "$out" finish_reason)" "|stop"
  done
  # an --after text is tokenized alone, so it starts where a token of the
  # prompt starts: " JSON." (its space included), as in "... in JSON."
  M="$TMP/$arch-json.gguf"
  if "$WICK" make-test-model --arch "$arch" --dtype f16 --tokenizer "$tok" --script "$JSON" \
       --after " JSON.<|im_end|>
<|im_start|>assistant
" --out "$M" >"$TMP/mk.out" 2>&1; then
    gen_check "$arch: JSON after a custom --after" "$M" "$JSON" --chat -p "Who is Alice? Answer in JSON."
  else
    bad "make-test-model $arch JSON: $(cat "$TMP/mk.out")"
  fi
done

# qwen3 thinking: the reasoning and the answer, from --chat
M="$TMP/qwen3-think.gguf"
if "$WICK" make-test-model --arch qwen3 --dtype f16 --tokenizer "$TOKS/qwen3" --script "$THINK" --out "$M" >"$TMP/mk.out" 2>&1; then
  gen_check "qwen3 thinking, --chat" "$M" "$THINK" --chat -p "What is 2+2?"
else
  bad "make-test-model qwen3 thinking: $(cat "$TMP/mk.out")"
fi

# wick serve: a chat request gets the tool call, the tool's result the answer
command -v curl >/dev/null || { skip_part "curl not installed: the serve checks"; finish; }
M="$TMP/qwen2-f16-tool.gguf"
[ -f "$M" ] || { bad "no qwen2 model for the serve checks"; finish; }
"$WICK" serve --host 127.0.0.1 --port 0 -m "$M" -t 1 >"$TMP/serve.log" 2>&1 &
SERVE_PID=$!
port=""
for _ in $(seq 300); do
  port=$(grep -aoE '127\.0\.0\.1:[0-9]+' "$TMP/serve.log" | head -n1 | sed 's/.*://')
  [ -n "$port" ] && [ "$port" != 0 ] && break
  port=""; kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.1
done
code=""
for _ in $(seq 300); do
  [ -n "$port" ] || break
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/health")
  [ "$code" = 200 ] && break; sleep 0.1
done
if [ "$code" != 200 ]; then
  bad "wick serve did not come up: $(tail -n 5 "$TMP/serve.log")"
else
  body=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["temperature"]=0; c["tools"]=[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]; print(json.dumps(c))' "$TMP/conv1.json")
  r=$(curl -s --max-time 60 "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' -d "$body")
  got=$(printf '%s' "$r" | python3 -c '
import json, sys
m = json.load(sys.stdin)["choices"][0]["message"]
calls = m.get("tool_calls") or []
if calls:
    f = calls[0]["function"]; print("call", f["name"], json.loads(f["arguments"]))
else:
    print("text", m.get("content"))' 2>&1)
  case "$got" in
    "call get_weather {'city': 'Paris'}") ok "serve: the tool call, parsed";;
    *) bad "serve: turn 1: $got ($r)";;
  esac
  body=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["temperature"]=0; print(json.dumps(c))' "$TMP/conv2.json")
  r=$(curl -s --max-time 60 "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' -d "$body")
  got=$(printf '%s' "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"])' 2>&1)
  expect "serve: turn 2 ($r)" "$got" "$ANSWER"
fi
kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; SERVE_PID=""
finish
