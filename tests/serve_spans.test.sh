#!/usr/bin/env bash
# serve_spans.test.sh — span requests (position-independent caching of
# documents) over `wick serve`'s HTTP API, through the real `openai` npm
# client (v6, tests/js/node_modules; skips without node/npm/registry) and
# fetch. Three servers on 127.0.0.1 (port 0), every one stopped here:
#  - stories260K (--ctx 256): /v1/completions with a prompt object {prefix,
#    spans, suffix} at temperature 0 = `wick generate --prefix --span F1 --span
#    F2 -p Q --temp 0 --json` (text, token counts, segments via /render); again
#    with span_cached_tokens = every span token and the same text; streamed;
#    the segments given as ids; positions shared (= the CLI's, and the same
#    with the spans shuffled, all from the cache); anchor none + blend first_k
#    3 (= the CLI's); anchor bos; anchor ids; the /metrics span counters move;
#    bad span requests (empty span or suffix, wrong types, unknown anchor or
#    positions, bad first_k, 257 spans, spans longer than the context) → 400
#    with OpenAI's error object, the server healthy afterwards;
#  - the same with --no-span-cache: the same text, span_cached_tokens 0;
#  - a random llama tiny256 model with a ChatML template (--ctx 512): chat
#    messages with "span": true through the openai client (the same answer
#    twice, the second from the span cache; streamed; = /v1/completions with
#    the rendered segments), spnl's POST /v1/query/execute (text/plain and
#    JSON, stream=true|false, repeat n 1, monad, no plus) = the chat span
#    request, and its unsupported nodes → 400.
# tests/js/serve_spans.mjs holds the checks; one line per check.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_spans
serve_need_npm
[ -f "$STORIES" ] || skip "$STORIES not found (the demo model is missing)"

PREFIX="Once upon a time, in a small town,"
SUFFIX=" One day, Lily"
N=24
printf '%s' "Lily had a red ball. She liked to play with it in the park every day." >"$TMP/d1.txt"
printf '%s' "Tom had a big dog. The dog liked to run and jump with Tom." >"$TMP/d2.txt"

# gen OUT ARGS...: `wick generate` of the span request with ARGS added
gen() {
  local out=$1; shift
  "$WICK" generate -m "$STORIES" --ctx 256 -t 1 --prefix "$PREFIX" --span "$TMP/d1.txt" --span "$TMP/d2.txt" \
    -p "$SUFFIX" --temp 0 -n "$N" --json "$@" >"$out" 2>"$TMP/gen.err" || { cat "$TMP/gen.err"; return 1; }
}
if gen "$TMP/seq.json" && gen "$TMP/shared.json" --positions shared && gen "$TMP/blend.json" --anchor none --blend-first-k 3; then
  node -e 'const fs=require("fs");const [p,s,n,d1,d2,a,b,c,o]=process.argv.slice(1);const j=(f)=>JSON.parse(fs.readFileSync(f,"utf8"));
    fs.writeFileSync(o, JSON.stringify({prefix:p, suffix:s, n:+n, docs:[fs.readFileSync(d1,"utf8"), fs.readFileSync(d2,"utf8")],
      seq:j(a), shared:j(b), blend:j(c)}))' \
    "$PREFIX" "$SUFFIX" "$N" "$TMP/d1.txt" "$TMP/d2.txt" "$TMP/seq.json" "$TMP/shared.json" "$TMP/blend.json" "$TMP/refs.json"
else
  bad "wick generate with --span failed"; finish
fi

M="$TMP/llama-tiny256-q8_0.gguf"
make_model "$M" --arch llama --format gguf --shape tiny256 --dtype q8_0 --seed 3 || { bad "make-test-model failed"; finish; }

if serve_start S -m "$STORIES" --ctx 256 -t 1 &&
   serve_start NC -m "$STORIES" --ctx 256 -t 1 --no-span-cache &&
   serve_start C -m "$M" --ctx 512 -t 1; then
  run_js spans "$JS/serve_spans.mjs" --name spans --url "$S" --nocache-url "$NC" --chat-url "$C" --refs "$TMP/refs.json"
  for v in S NC C; do
    pid_var="${v}_PID"; log_var="${v}_LOG"
    if kill -0 "${!pid_var}" 2>/dev/null; then ok "server $v still running"
    else bad "server $v died (log follows)"; tail -n 20 "${!log_var}"; fi
    serve_stop "${!pid_var}"
  done
else
  bad "a server did not start"
fi
finish
