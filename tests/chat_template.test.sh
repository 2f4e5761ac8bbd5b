#!/usr/bin/env bash
# chat_template.test.sh — `wick template` against @huggingface/jinja (the
# Jinja engine of transformers.js) on the real Qwen3 and Qwen2.5 chat templates.
#
# Every conversation in tests/data/conversations/*.json is rendered with both
# tokenizer directories (their tokenizer_config.json chat templates), each in
# four ways: as is, --no-generation-prompt, --enable-thinking false and
# --enable-thinking true. wick's output must be byte-identical to what
# tests/js/render_template.mjs renders with @huggingface/jinja from the same
# template and variables. The package is pinned in tests/js/package.json and
# installed here with npm into tests/js/node_modules (git-ignored); without
# node/npm, or when the install fails, or without ../shared, the suite skips.
# It also checks the command's errors (no template, bad options, a template
# that raises). One line per case, then "chat_template: N passed, N failed".
. "$(dirname "$0")/lib.sh"
t_init chat_template
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
JS=tests/js
CONV=tests/data/conversations

command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"
if [ ! -f "$SHARED/tokenizers/qwen3/tokenizer_config.json" ] || [ ! -f "$SHARED/tokenizers/qwen2.5/tokenizer_config.json" ]; then
  skip "$SHARED/tokenizers/qwen3 or qwen2.5 not found (shared fixtures absent)"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# install the pinned reference package once (node_modules is git-ignored)
want=$(node -e 'console.log(require(process.argv[1]).dependencies["@huggingface/jinja"])' "$PWD/$JS/package.json")
have=$(node -e 'try{console.log(require(process.argv[1]).version)}catch{console.log("none")}' "$PWD/$JS/node_modules/@huggingface/jinja/package.json")
if [ "$have" != "$want" ]; then
  if ! flock "$JS/.npm-install.lock" npm install --prefix "$JS" --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null 2>"$tmp/npm.log"; then
    cat "$tmp/npm.log"
    skip "npm install of @huggingface/jinja@$want failed (registry unreachable?)"
  fi
fi

jstr() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; } # JSON string of $1

# ---- byte-for-byte against @huggingface/jinja ----
variants=("" "--no-generation-prompt" "--enable-thinking false" "--enable-thinking true")
jobs="$tmp/jobs.jsonl"
: >"$jobs"
cases=()
k=0
for tdir in qwen3 qwen2.5; do
  dir="$SHARED/tokenizers/$tdir"
  for conv in "$CONV"/*.json; do
    for v in "${variants[@]}"; do
      k=$((k+1))
      # shellcheck disable=SC2086
      "$WICK" template -m "$dir" -i "$conv" $v >"$tmp/$k.wick" 2>"$tmp/$k.err"
      echo "$?" >"$tmp/$k.rc"
      args=""
      for a in $v; do args="$args${args:+, }$(jstr "$a")"; done
      printf '{"dir": %s, "conversation": %s, "args": [%s], "out": %s}\n' \
        "$(jstr "$dir")" "$(jstr "$conv")" "$args" "$(jstr "$tmp/$k.ref")" >>"$jobs"
      cases+=("$tdir $(basename "$conv")${v:+ [$v]}")
    done
  done
done
if ! node "$JS/render_template.mjs" "$jobs" 2>"$tmp/node.err"; then
  cat "$tmp/node.err"; bad "the reference script did not finish"
  finish
fi
for i in $(seq 1 "$k"); do
  c=${cases[$((i-1))]}
  if [ "$(cat "$tmp/$i.rc")" != 0 ]; then
    bad "$c: wick failed: $(cat "$tmp/$i.err")"
  elif head -c 7 "$tmp/$i.ref" | grep -q '^ERROR: '; then
    bad "$c: the reference failed: $(cat "$tmp/$i.ref")"
  elif cmp -s "$tmp/$i.wick" "$tmp/$i.ref"; then
    ok "$c ($(wc -c <"$tmp/$i.wick") bytes)"
  else
    bad "$c: output differs from @huggingface/jinja"
    diff <(cat "$tmp/$i.ref") <(cat "$tmp/$i.wick") | head -n 20
  fi
done

# ---- the command's own behaviour ----
conv="$CONV/multi_turn.json"
# no template and no --template: the documented error
mkdir -p "$tmp/notmpl"
echo '{"bos_token": "<s>", "eos_token": "</s>"}' >"$tmp/notmpl/tokenizer_config.json"
out=$("$WICK" template -m "$tmp/notmpl" -i "$conv" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$out" = "wick: error: model has no chat template; pass --template chatml|llama3|llama2|mistral" ]; then
  ok "no template: clear error"
else bad "no template: rc=$rc, got: $out"; fi
# built-in templates render, with the config's bos/eos
out=$("$WICK" template -m "$tmp/notmpl" -i "$CONV/no_system_multi_turn.json" --template llama2 2>&1)
want='<s>[INST] Count to three. [/INST] One, two, three. </s><s>[INST] Now backwards. [/INST]'
[ "$out" = "$want" ] && ok "--template llama2" || bad "--template llama2: got: $out"
"$WICK" template -m "$tmp/notmpl" -i "$CONV/single_user.json" --template chatml >"$tmp/chatml.out" 2>&1
if cmp -s "$tmp/chatml.out" <(printf '<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n'); then
  ok "--template chatml"; else bad "--template chatml: got: $(cat "$tmp/chatml.out")"; fi
for t in llama3 mistral; do
  if "$WICK" template -m "$tmp/notmpl" -i "$conv" --template $t >"$tmp/b.out" 2>&1 && [ -s "$tmp/b.out" ]; then
    ok "--template $t"; else bad "--template $t: $(cat "$tmp/b.out")"; fi
done
# roles that do not alternate: raise_exception's message as the error
out=$("$WICK" template -m "$tmp/notmpl" -i "$CONV/tool_calls.json" --template mistral 2>&1); rc=$?
case "$out" in
  "wick: error: chat template: line "*"Conversation roles must alternate user/assistant/user/assistant/...") [ $rc -ne 0 ] && ok "raise_exception -> error" || bad "raise_exception: rc 0" ;;
  *) bad "raise_exception: got: $out" ;;
esac
# bad option values and inputs
"$WICK" template -m "$SHARED/tokenizers/qwen3" -i "$conv" --template nope >/dev/null 2>&1 && bad "unknown --template accepted" || ok "unknown --template rejected"
"$WICK" template -m "$SHARED/tokenizers/qwen3" -i "$conv" --enable-thinking maybe >/dev/null 2>&1 && bad "--enable-thinking maybe accepted" || ok "--enable-thinking maybe rejected"
echo '{"messages": "nope"}' >"$tmp/bad.json"
out=$("$WICK" template -m "$SHARED/tokenizers/qwen3" -i "$tmp/bad.json" 2>&1); rc=$?
[ $rc -ne 0 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && ok "bad conversation: one-line error" || bad "bad conversation: rc=$rc: $out"
echo '{"messages": [' >"$tmp/trunc.json"
"$WICK" template -m "$SHARED/tokenizers/qwen3" -i "$tmp/trunc.json" >/dev/null 2>&1 && bad "truncated JSON accepted" || ok "truncated JSON rejected"
# a syntax error in a model's template names its line and column
printf '%s' '{"chat_template": "{% for m in messages %}\n{{ m.content }\n{% endfor %}"}' >"$tmp/notmpl/tokenizer_config.json"
out=$("$WICK" template -m "$tmp/notmpl" -i "$conv" 2>&1); rc=$?
case "$out" in
  "wick: error: chat template: line 2, column 1: '{{' is not closed"*) [ $rc -ne 0 ] && ok "syntax error with position" || bad "syntax error: rc 0" ;;
  *) bad "syntax error: got: $out" ;;
esac
# no trailing newline is added: the output ends exactly as the template does
printf '%s' '{"chat_template": "{{ messages[0].content }}"}' >"$tmp/notmpl/tokenizer_config.json"
"$WICK" template -m "$tmp/notmpl" -i "$CONV/single_user.json" >"$tmp/exact.out" 2>&1
if cmp -s "$tmp/exact.out" <(printf '%s' "What is the capital of France?"); then ok "exact output, no newline added"; else bad "exact output: $(od -c "$tmp/exact.out" | head -3)"; fi

finish
