#!/usr/bin/env bash
# serve_ollama.test.sh — `wick serve`'s Ollama API (/api/*) through the real
# `ollama` npm client (pinned in tests/js/package.json, installed into
# tests/js/node_modules; skips without node/npm/registry).
#
# On stories260K (no chat template) and on a random llama tiny256 Q4_0 model
# with a chat template: version(), list() (/api/tags fields), show(), ps();
# generate greedy (num_predict, temperature 0) = `wick generate --temp 0` and =
# /v1/completions, streamed = not streamed, the final object's fields (done,
# done_reason, total_duration, load_duration, prompt_eval_count,
# prompt_eval_duration, eval_count, eval_duration: integers, nanoseconds),
# options.stop / seed / num_predict; chat (llama model) streamed and not, =
# /v1/chat/completions; keep_alive 0 unloads (ps() stops listing the model) and
# the next request loads it again; empty prompt → "load" / "unload"; unknown
# model → ResponseError 404; prompt_eval_count counts only the prompt tokens
# evaluated (those reused from the KV cache are not); details.quantization_level names the weight
# type. tests/js/serve_ollama.mjs holds the checks.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_ollama
serve_need_npm

ref() { # PROMPT N MODEL OUT
  "$WICK" generate -m "$3" -p "$1" -n "$2" --temp 0 --json -t 1 >"$TMP/gen.json" 2>"$TMP/gen.err" || { cat "$TMP/gen.err"; return 1; }
  node -e 'const fs=require("fs");const [p,n,g,o]=process.argv.slice(1);
    fs.writeFileSync(o, JSON.stringify({prompt:p, n:+n, gen:JSON.parse(fs.readFileSync(g))}))' "$1" "$2" "$TMP/gen.json" "$4"
}

if [ -f "$STORIES" ]; then
  if ref "Once upon a time" 40 "$STORIES" "$TMP/ref_stories.json" && serve_start S1 -m "$STORIES" --ctx 128 -t 1; then
    run_js stories260K "$JS/serve_ollama.mjs" --name stories260K --url "$S1" --ref "$TMP/ref_stories.json"
    serve_stop "$S1_PID"
  else bad "stories260K: reference or server failed"; fi
else
  skip_part "$STORIES not found (shared fixtures absent): the stories260K part"
fi

M="$TMP/llama-tiny256-q4_0.gguf"
if make_model "$M" --arch llama --format gguf --shape tiny256 --dtype q4_0 --seed 5 &&
   ref "The quick brown fox jumps over the lazy dog." 32 "$M" "$TMP/ref_llama.json" &&
   serve_start S2 -m "$M" --ctx 256 -t 1; then
  run_js llama-tiny256-q4_0 "$JS/serve_ollama.mjs" --name llama-tiny256-q4_0 --url "$S2" --ref "$TMP/ref_llama.json" --chat
  serve_stop "$S2_PID"
else bad "llama tiny256: model, reference or server failed"; fi

finish
