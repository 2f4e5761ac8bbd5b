#!/usr/bin/env bash
# serve_concurrency.test.sh — continuous batching in `wick serve`, through the
# real `openai` npm client (skips without node/npm/registry or wick serve).
#
# For stories260K and random llama tiny256 models in F32, F16, BF16, Q8_0, Q4_0
# and Q6_K (a 512-token vocabulary and untied embeddings, so the text varies):
# 24 requests of mixed prompt lengths and max_tokens (completions and chat,
# streamed and not, greedy plus seeded samples) run one at a time, then all 24
# at concurrency 8 on a server started with --parallel 8 (some with stop strings,
# some with logprobs); every output (text, finish_reason, completion_tokens, the
# logprob values) must be byte-identical to its solo run, the
# requests must overlap, /metrics must count the generated tokens and never show
# more than 8 running. Then:
#  - aborts: a 4,000-token stream aborted (AbortController) after 3 chunks must
#    be cancelled (far fewer tokens generated), vllm:num_requests_running must
#    go back to 0, and the next request must still give its solo output; the
#    same with 10 streams at once, 2 of them queued;
#  - preemption: a server whose KV pool (--kv-mb) holds 8 blocks of 128
#    positions while 8 concurrent 300-token generations need up to 32: /metrics
#    must count preemptions and every output (greedy and seeded samples) must
#    still equal its solo run;
#  - shared prefix: 24 requests behind one long common prefix (prefix reuse
#    across sequences) equal their solo runs.
# tests/js/serve_concurrency.mjs holds the checks. Bounded: ~300 requests.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_concurrency
serve_need_npm

conc() { # LABEL MODEL SERVE-ARGS -- CHECK-ARGS
  local label=$1 model=$2; shift 2
  local sargs=() cargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  cargs=("$@")
  if serve_start S -m "$model" -t 2 "${sargs[@]}"; then
    run_js "$label" "$JS/serve_concurrency.mjs" --name "$label" --url "$S" "${cargs[@]}"
    serve_stop "$S_PID"
  else bad "$label: server did not start"; fi
}

if [ -f "$STORIES" ]; then
  conc stories260K "$STORIES" --parallel 8 --ctx 128 -- --ctx 128 --requests 24 --concurrency 8
else
  skip_part "$STORIES not found (shared fixtures absent): the stories260K part"
fi

for dt in f32 f16 bf16 q8_0 q4_0 q6_k; do
  M="$TMP/llama-tiny256-$dt.gguf"
  if ! make_model "$M" --arch llama --format gguf --shape tiny256 --dtype "$dt" --seed 11; then bad "make-test-model $dt"; continue; fi
  extra=()
  [ "$dt" = q8_0 ] && extra=(--chat)
  conc "llama-tiny256-$dt" "$M" --parallel 8 --ctx 256 -- --ctx 256 --requests 24 --concurrency 8 --sampled "${extra[@]}"
done

M="$TMP/llama-tiny256-q4_0.gguf"
if [ -f "$M" ]; then
  # aborts: long streams on a long context
  conc abort "$M" --parallel 8 --ctx 4096 -- --ctx 256 --requests 8 --concurrency 8 --abort 4000
  # preemption: 8 blocks (2 MiB at 2,048 bytes per position: 2 layers x K,V x 2 heads x 64 x f32)
  conc preemption "$M" --parallel 8 --ctx 512 --kv-mb 2 -- --ctx 512 --requests 16 --concurrency 8 --long 300 --expect-preemption --sampled
  # a long prefix shared by every request: prefix reuse across sequences under load
  conc shared-prefix "$M" --parallel 8 --ctx 512 -- --ctx 512 --requests 24 --concurrency 8 --shared-prefix --sampled
else
  skip_part "aborts, preemption, shared prefix: the Q4_0 test model could not be made (counted above)"
fi

finish
