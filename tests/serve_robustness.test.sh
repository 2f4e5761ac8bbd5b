#!/usr/bin/env bash
# serve_robustness.test.sh — bad and hostile requests against `wick serve`,
# with node's built-in fetch and raw sockets only (no npm packages; skips
# without node or without the stories260K fixture).
#
# About 60 requests on 127.0.0.1: malformed JSON (truncated, trailing garbage,
# not JSON, empty, array, null, 100,000 levels deep), wrong types and missing
# fields (prompt, max_tokens "x" / -5 / 2.5 / 1e30 / 2^63, temperature -1 /
# 1e999, top_logprobs 1000, stop 7, token ids out of range, chat messages),
# the Ollama routes likewise, a prompt longer than the context, invalid UTF-8
# bytes in a string and in a key, a body over the server's limit (413, also ten
# times a body 8× over it, answered while it still arrives: never a reset;
# when only Content-Length announces it), unknown routes (404), wrong methods
# (404/405), a garbage request line and a 200 KB header (4xx or closed, no
# hang), a chunked request body; clients that disconnect mid-stream, right
# after sending, or abort a non-streamed request (nothing may stay running);
# three stalled connections (headers cut short, body withheld) while /health
# and a completion must still answer at once. Every bad request must get a
# clean 4xx with the API's JSON error shape. Afterwards /health is 200, nothing
# runs, the greedy completion of "Once upon a time" is the known text, and
# SIGTERM with a stream open ends the server (status 0) within 5 s.
# tests/js/serve_robustness.mjs holds the checks.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_robustness
serve_need_node
[ -f "$STORIES" ] || skip "$STORIES not found (shared fixtures absent)"

want=", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
limit=$((1 << 20))
if serve_start S -m "$STORIES" --ctx 2048 -t 1 --parallel 4 --body-limit "$limit"; then
  run_js robustness "$JS/serve_robustness.mjs" --name robustness --url "$S" --ctx 2048 --body-limit "$limit" \
    --prompt "Once upon a time" --n 40 --want-text "$want"
  if kill -0 "$S_PID" 2>/dev/null; then ok "the server is still running"; else bad "the server died (log follows)"; tail -n 20 "$S_LOG"; fi
  # SIGTERM with a long stream open: the server exits by itself, status 0, within 5 s
  curl -s -N --max-time 20 "$S/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt":"Once upon a time","max_tokens":2000,"temperature":0,"ignore_eos":true,"stream":true}' >"$TMP/term.out" 2>&1 &
  cpid=$!
  sleep 0.3
  kill -TERM "$S_PID"
  for i in $(seq 50); do kill -0 "$S_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$S_PID" 2>/dev/null; then bad "SIGTERM with a stream open: still running after 5 s"
  else wait "$S_PID"; rc=$?; [ $rc = 0 ] && ok "SIGTERM with a stream open: exits with status 0 within 5 s" || bad "SIGTERM: exit status $rc"; fi
  kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
  serve_stop "$S_PID"
else
  bad "server did not start"
fi
finish
