#!/usr/bin/env bash
# vs_llamacpp.sh — wick against llama.cpp on the same machine, the same run and
# the same files: random-weight Qwen2.5-0.5B and Qwen3-0.6B shapes (real Qwen
# vocab, tied embeddings) written by wick in BF16, then quantized by llama.cpp's
# own quantizer (the files a llama.cpp user has; $TYPES, default Q8_0, Q4_0,
# F16, BF16 and the Q4_K_M and Q5_K_M mixes). Each file is measured by
# llama.cpp and by `wick bench`, back to back, R times in alternation; medians
# and the wick/llama.cpp ratios are printed as a table. llama.cpp is a
# llama-bench built from source natively when LLAMA_BENCH is given (the peer
# users run; build it outside this repository), else the prebuilt portable
# libllama from npm driven by bench/llamacpp_ref.c (llama-bench's pp/tg method).
# Usage: bench/vs_llamacpp.sh [BUILD_DIR] [THREADS] [ROUNDS] [LLAMA_BENCH]
#        (models go to $WICK_BENCH_TMP or /tmp/wick-bench; $SHAPES picks
#        "qwen2.5-0.5b" and/or "qwen3-0.6b"; needs ../shared)
set -eu
build=${1:-build}; threads=${2:-2}; rounds=${3:-3}; native=${4:-}
TYPES=${TYPES:-"q8_0 q4_0 f16 bf16 q4_k_m q5_k_m"}; SHAPES=${SHAPES:-"qwen2.5-0.5b qwen3-0.6b"}
WICK="$build/wick"; SHARED=${WICK_SHARED:-../shared}; tmp=${WICK_BENCH_TMP:-/tmp/wick-bench}
PY=/usr/bin/python3
mkdir -p "$tmp"
LIB=$(tests/llamacpp/setup.sh "$tmp")
REF="$tmp/llamacpp_ref"
field() { "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())[sys.argv[1]])' "$1"; }
# llama.cpp's pp512 and tg128 of a file as {"prefill_tok_s", "decode_tok_s"}
llama() {
  if [ -z "$native" ]; then "$REF" "$LIB" bench "$1" -p 512 -n 128 -t "$threads" -r 1; return; fi
  "$native" -m "$1" -p 512 -n 128 -t "$threads" -r 1 -o json 2>/dev/null | "$PY" -c '
import json, sys
r = {x["n_prompt"] and "prefill_tok_s" or "decode_tok_s": x["avg_ts"] for x in json.load(sys.stdin)}
print(json.dumps(r))'
}
echo "llama.cpp: ${native:-the portable libllama of the npm package}"
printf '%-13s %-7s %8s %8s %6s %8s %8s %6s\n' shape type "pp wick" "pp llama" ratio "tg wick" "tg llama" ratio
for shape in $SHAPES; do
  case $shape in qwen2.5-0.5b) arch=qwen2 ;; *) arch=qwen3 ;; esac
  src="$tmp/$shape-bf16.gguf"
  [ -f "$src" ] || "$WICK" make-test-model --arch "$arch" --shape "$shape" --format gguf --dtype bf16 \
    --seed 1 --tokenizer "$SHARED/tokenizers/qwen3" --out "$src"
  for t in $TYPES; do
    f="$tmp/$shape-llamacpp-$t.gguf"
    [ -f "$f" ] || "$REF" "$LIB" quantize "$src" "$f" "$t" 2
    wp=(); wt=(); lp=(); lt=()
    for ((r = 0; r < rounds; r++)); do
      l=$(llama "$f")
      w=$("$WICK" bench -m "$f" -p 512 -n 128 -t "$threads" -r 1 --json)
      lp+=("$(echo "$l" | field prefill_tok_s)"); lt+=("$(echo "$l" | field decode_tok_s)")
      wp+=("$(echo "$w" | field prefill_tok_s)"); wt+=("$(echo "$w" | field decode_tok_s)")
    done
    "$PY" - "$shape" "$t" "${wp[*]}" "${lp[*]}" "${wt[*]}" "${lt[*]}" <<'PY'
import statistics as st, sys
shape, t, *cols = sys.argv[1:]
wp, lp, wt, lt = (st.median(map(float, c.split())) for c in cols)
print(f"{shape:<13} {t:<7} {wp:8.1f} {lp:8.1f} {wp/lp:5.2f}x {wt:8.1f} {lt:8.1f} {wt/lt:5.2f}x")
PY
  done
done
