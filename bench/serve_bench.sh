#!/usr/bin/env bash
# serve_bench.sh — the serving benchmark as docs/performance.md quotes it:
# bench/serve_bench.mjs at concurrency 1 and 8, 32 requests of 128 prompt
# tokens and 128 generated tokens, 3 repeats (medians), against `wick serve`
# (-t 2 --parallel 8) and, when LLAMA_SERVER is given, llama-server on the same
# GGUF file (--parallel 8 -c 8×ctx --cont-batching -t 2), in the same run.
#
#   bench/serve_bench.sh [BUILD] [MODEL] [LLAMA_SERVER]
#
# MODEL defaults to a random Qwen2.5-0.5B-shaped Q4_0 model made with
# `wick make-test-model` into BUILD/, with the real Qwen2.5 tokenizer from
# WICK_SHARED (default ../shared): with make-test-model's synthetic one, random
# weights emit byte tokens whose text stays incomplete UTF-8, so streamed text
# arrives in bursts and TTFT / inter-token figures mean nothing. The openai client comes from
# tests/js/node_modules (installed here with npm when missing). Extra options
# for serve_bench.mjs go in SERVE_BENCH_ARGS.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
model=${2:-}
llama=${3:-}
wick="$build/wick"
[ -x "$wick" ] || { echo "serve_bench.sh: $wick not built (make BUILD=$build)"; exit 1; }
if [ -z "$model" ]; then
  tok="${WICK_SHARED:-../shared}/tokenizers/qwen2.5"
  [ -d "$tok" ] || { echo "serve_bench.sh: $tok not found (shared fixtures absent): give a MODEL"; exit 1; }
  model="$build/q25-0.5b-q4_0-qwen2.5tok.gguf"
  [ -f "$model" ] || "$wick" make-test-model --arch qwen2 --format gguf --shape qwen2.5-0.5b --dtype q4_0 \
    --tokenizer "$tok" --out "$model"
fi
[ -d tests/js/node_modules/openai ] || npm install --prefix tests/js --no-audit --no-fund --no-package-lock --loglevel=error
args=(--wick "$wick" --wick-model "$model" --wick-args "-t 2 --parallel 8 --ctx 512"
      --concurrency 1,8 --requests 32 --prompt-tokens 128 --max-tokens 128 --repeats 3 --ctx 512 --threads 2)
[ -n "$llama" ] && args+=(--llama-server "$llama" --llama-model "$model")
exec node bench/serve_bench.mjs "${args[@]}" ${SERVE_BENCH_ARGS:-}
