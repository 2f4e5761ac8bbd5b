#!/usr/bin/env bash
# grammar_vs_llamacpp.sh — structured output against llama.cpp's grammar
# sampler (the one llama-server's json_schema uses, from the prebuilt
# libllama of tests/llamacpp, driven by bench/llamacpp_ref.c) on the same
# file and the same JSON Schema, in one run, alternating: each engine's
# decode tok/s sampling at temperature 1 without and with the schema, one
# stream. llama.cpp gets the schema as GBNF from llama.cpp's own converter
# (examples/json_schema_to_grammar.py of a llama.cpp checkout, given as
# CONVERTER; it is not part of this repository).
# Usage: bench/grammar_vs_llamacpp.sh MODEL.gguf SCHEMA.json CONVERTER [BUILD_DIR] [THREADS] [ROUNDS] [TOKENS]
set -eu
model=$1; schema=$2; conv=$3; build=${4:-build}; threads=${5:-2}; rounds=${6:-3}; n=${7:-128}
tmp=${WICK_BENCH_TMP:-/tmp/wick-bench}
mkdir -p "$tmp"
LIB=$(tests/llamacpp/setup.sh "$tmp")
python3 "$conv" "$schema" > "$tmp/schema.gbnf"
for r in $(seq "$rounds"); do
  echo "round $r"
  "$build/bench/grammar_decode" "$model" -c 1 -n "$n" -t "$threads" -r 1 --schema "$schema" 2>&1 | grep "^| 1 |" | sed "s/^/wick (1 stream): plain, constrained, ratio /" || true
  "$tmp/llamacpp_ref" "$LIB" grammar "$model" "$tmp/schema.gbnf" -n "$n" -t "$threads" -r 1 -s "$r"
done
