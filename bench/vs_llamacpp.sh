#!/usr/bin/env bash
# vs_llamacpp.sh — wick against llama.cpp on the same machine, the same run and
# the same files: random-weight Qwen2.5-0.5B and Qwen3-0.6B shapes (real Qwen
# vocab, tied embeddings) written by wick in BF16, then quantized by llama.cpp's
# own quantizer to Q8_0, Q4_0 and F16 (the files a llama.cpp user has). Each
# file is measured by llama.cpp (bench/llamacpp_ref.c driving the prebuilt
# libllama from npm, llama-bench's pp/tg method) and by `wick bench`, back to
# back, R times in alternation; medians and the wick/llama.cpp ratios are
# printed as a table.
# Usage: bench/vs_llamacpp.sh [BUILD_DIR] [THREADS] [ROUNDS]
#        (models go to $WICK_BENCH_TMP or /tmp/wick-bench; needs ../shared)
set -eu
build=${1:-build}; threads=${2:-2}; rounds=${3:-3}
WICK="$build/wick"; SHARED=${WICK_SHARED:-../shared}; tmp=${WICK_BENCH_TMP:-/tmp/wick-bench}
PY=/usr/bin/python3
mkdir -p "$tmp"
LIB=$(tests/llamacpp/setup.sh "$tmp")
REF="$tmp/llamacpp_ref"
field() { "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }
printf '%-13s %-5s %8s %8s %6s %8s %8s %6s\n' shape type "pp wick" "pp llama" ratio "tg wick" "tg llama" ratio
for spec in "qwen2 qwen2.5-0.5b" "qwen3 qwen3-0.6b"; do
  set -- $spec; arch=$1; shape=$2
  src="$tmp/$shape-bf16.gguf"
  [ -f "$src" ] || "$WICK" make-test-model --arch "$arch" --shape "$shape" --format gguf --dtype bf16 \
    --seed 1 --tokenizer "$SHARED/tokenizers/qwen3" --out "$src"
  for t in q8_0 q4_0 f16; do
    f="$tmp/$shape-llamacpp-$t.gguf"
    [ -f "$f" ] || "$REF" "$LIB" quantize "$src" "$f" "$t" 2
    wp=(); wt=(); lp=(); lt=()
    for ((r = 0; r < rounds; r++)); do
      l=$("$REF" "$LIB" bench "$f" -p 512 -n 128 -t "$threads" -r 1)
      w=$("$WICK" bench -m "$f" -p 512 -n 128 -t "$threads" -r 1 --json)
      lp+=("$(echo "$l" | field prefill_tok_s)"); lt+=("$(echo "$l" | field decode_tok_s)")
      wp+=("$(echo "$w" | field prefill_tok_s)"); wt+=("$(echo "$w" | field decode_tok_s)")
    done
    "$PY" - "$shape" "$t" "${wp[*]}" "${lp[*]}" "${wt[*]}" "${lt[*]}" <<'PY'
import statistics as st, sys
shape, t, *cols = sys.argv[1:]
wp, lp, wt, lt = (st.median(map(float, c.split())) for c in cols)
print(f"{shape:<13} {t:<5} {wp:8.1f} {lp:8.1f} {wp/lp:5.2f}x {wt:8.1f} {lt:8.1f} {wt/lt:5.2f}x")
PY
  done
done
