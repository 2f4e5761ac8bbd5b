#!/usr/bin/env bash
# run_bar.sh — reproduce the performance issue's tables: random-weight
# Qwen2.5-0.5B and Qwen3-0.6B shapes (real Qwen vocab, tied embeddings) in
# Q8_0, Q4_0, F16 (BF16 with --bf16), `wick bench` with 2 and 1 threads, the
# prefill chunk sweep, and peak RSS for an 8,192-token prompt with chunking on.
# Usage: bench/run_bar.sh [BUILD_DIR] [OUT_DIR]   (models go to $WICK_BENCH_TMP or /tmp)
set -eu
build=${1:-build}; out=${2:-bench/results}
WICK="$build/wick"; SHARED=${WICK_SHARED:-../shared}; tmp=${WICK_BENCH_TMP:-/tmp/wick-bench}
dtypes="q8_0 q4_0 f16"; [ "${3:-}" = --bf16 ] && dtypes="$dtypes bf16"
mkdir -p "$out" "$tmp"
for spec in "qwen2 qwen2.5-0.5b" "qwen3 qwen3-0.6b"; do
  set -- $spec; arch=$1; shape=$2
  for dt in $dtypes; do
    m="$tmp/$shape-$dt.gguf"
    [ -f "$m" ] || "$WICK" make-test-model --arch "$arch" --shape "$shape" --format gguf --dtype "$dt" \
      --seed 1 --tokenizer "$SHARED/tokenizers/qwen3" --out "$m"
    for t in 2 1; do
      extra=""; [ "$t" = 2 ] && extra="--chunk 0,128,256,512,1024"
      "$WICK" bench -m "$m" -p 512 -n 128 -t "$t" -r 3 $extra --json | tee "$out/$shape-$dt-t$t.json"
    done
    # bounded prefill memory: 8,192-token prompt, chunking on (default chunk)
    "$WICK" bench -m "$m" -p 8192 -n 16 -t 2 -r 1 --ctx 8192 --json | tee "$out/$shape-$dt-p8192.json"
  done
done
