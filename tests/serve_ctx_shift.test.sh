#!/usr/bin/env bash
# serve_ctx_shift.test.sh — context shift (`wick serve --context-shift`,
# llama-server's, opt-in) on stories260K with -c 256 -np 2 (128 positions per
# sequence), checked with python3's standard library (tests/serve_ctx_shift.py
# holds the checks):
#  - with the flag: llama.cpp's suite case (301-token prompt, n_predict 64:
#    prompt_n 109, predicted_n 64, truncated), the kept prompt as llama-server's
#    block arithmetic cuts it (same output as those ids sent alone), the output
#    after a generation shift = a fresh request whose prompt is the kept tokens
#    (n_keep, n_discard, several shifts), the OpenAI routes and a stream;
#  - without it (the default, and --no-context-shift): a long prompt is a 400
#    "exceeds the available context size", n_keep is refused, n_predict -1
#    ends at the full context with truncated true;
#  - both flags at once: refused.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_ctx_shift
command -v python3 >/dev/null || skip "python3 not installed"
[ -f "$STORIES" ] || skip "$STORIES not found"
CHECK=tests/serve_ctx_shift.py

run_py() {
  local n=$1; shift
  timeout 300 python3 "$CHECK" --name "$n" "$@" >"$TMP/py.$n.out" 2>&1
  cat "$TMP/py.$n.out"
  local last; last=$(grep -aE "^$n: [0-9]+ passed, [0-9]+ failed$" "$TMP/py.$n.out" | tail -n 1)
  if [[ $last =~ ^$n:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    PASS=$((PASS + BASH_REMATCH[1])); FAIL=$((FAIL + BASH_REMATCH[2]))
  else
    bad "$n: the checker did not finish"
  fi
}

if serve_start S1 -m "$STORIES" -c 256 -np 2 -t 1 --context-shift; then
  run_py shift --part shift --url "$S1"
  serve_stop "$S1_PID"
else bad "server with --context-shift did not start"; fi

if serve_start S2 -m "$STORIES" -c 256 -np 2 -t 1; then
  run_py off --part off --url "$S2"
  serve_stop "$S2_PID"
else bad "server without --context-shift did not start"; fi

if serve_start S3 -m "$STORIES" -c 256 -np 2 -t 1 --no-context-shift; then
  run_py off_flag --part off --url "$S3"
  serve_stop "$S3_PID"
else bad "server with --no-context-shift did not start"; fi

if "$WICK" serve -m "$STORIES" --context-shift --no-context-shift --port 0 >"$TMP/both.out" 2>&1; then
  bad "--context-shift with --no-context-shift started"
elif grep -q "not both" "$TMP/both.out"; then ok "--context-shift with --no-context-shift: refused"
else bad "--context-shift with --no-context-shift: $(head -c 300 "$TMP/both.out")"; fi
finish
