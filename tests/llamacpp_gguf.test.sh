#!/usr/bin/env bash
# llamacpp_gguf.test.sh — wick reads GGUF files written by llama.cpp's own
# quantizer as they are, and computes what llama.cpp computes on them.
#
# llama.cpp comes from its prebuilt library in the npm package
# @node-llama-cpp/linux-x64 (tests/llamacpp/setup.sh); bench/llamacpp_ref.c
# drives it. Without node/npm, off Linux x86-64, or without ../shared, the
# suite skips.
#  1. The real stories260K model, quantized by llama.cpp to Q8_0, Q4_0 and F16
#     (its FFN width 172 makes llama.cpp keep ffn_down in F16): 40 greedy
#     tokens from wick equal llama.cpp's, id for id.
#  2. Random llama / qwen2 / qwen3 models with the real Qwen3 tokenizer,
#     written by wick in F32 and quantized by llama.cpp (F16, Q8_0, Q4_0, and
#     Q6_K on a 256-wide shape, where llama.cpp's Q4_0 also writes the tied
#     output as Q6_K): the last position's logits agree with llama.cpp's.
#     The same for granite, gemma2, gemma3 and phi3 (F32, Q8_0, Q4_0) with
#     their features on (make-test-model's profiles), and phi3 with LongRoPE:
#     this checks wick's reading of llama.cpp's GGUF conventions (Granite's
#     scale keys, Gemma's norms stored as w + 1 and its query scale, Gemma 3's
#     local RoPE base on 5 of 6 layers, Phi-3's fused tensors and LongRoPE
#     factors). Phi-3's test window (32) is longer than the prompt: recent
#     llama.cpp ignores Phi-3's sliding window (its PR 13676), wick applies
#     it as HF does.
#     The same for the mixture-of-experts archs (qwen3moe, qwen2moe with its
#     shared expert, Mixtral as "llama" with experts: 8 experts, 2 per token,
#     3-D expert stacks; llama.cpp keeps the router in F32 and, with 8
#     experts, writes attn_k/attn_v as Q8_0 in a Q4_0 file).
#     Bounds: F32/F16 max|diff| <= 3e-3·max|logit| and 1-cos <= 2e-6 (llama.cpp
#     keeps K/V and attention in F16); quantized files max|diff| <= 6e-2·max|logit|
#     and 1-cos <= 1.5e-3 (both engines quantize activations to 8 bits, each
#     its own way; a misread layout gives 1-cos near 1).
. "$(dirname "$0")/lib.sh"
t_init llamacpp_gguf
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
STORIES="$SHARED/models/stories260K/stories260K-f32.gguf"
TOK="$SHARED/tokenizers/qwen3"
[ -f "$STORIES" ] && [ -f "$TOK/tokenizer.json" ] || skip "$SHARED fixtures absent"
PY=/usr/bin/python3  # Debian python3-numpy
"$PY" -c "import numpy" 2>/dev/null || skip "python3-numpy not installed"
tmp=$(mktemp -d /tmp/wick-llamacpp-XXXXXX); trap 'rm -rf "$tmp"' EXIT
LIB=$(tests/llamacpp/setup.sh "$tmp") || skip "llama.cpp unavailable here"
REF="$tmp/llamacpp_ref"

# 1. stories260K: greedy tokens, id for id
prompt="Once upon a time"
for t in q8_0 q4_0 f16; do
  f="$tmp/stories-$t.gguf"
  "$REF" "$LIB" quantize "$STORIES" "$f" "$t" 2 || { bad "llama.cpp quantize stories260K $t"; continue; }
  ids=$("$WICK" tokenize -m "$f" -p "$prompt" | tr -d '[] ')
  want=$("$REF" "$LIB" greedy "$f" "$ids" 40)
  got=$("$WICK" generate -m "$f" -p "$prompt" -n 40 --temp 0 --json |
        "$PY" -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["tokens"])))')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else bad "stories260K $t: wick $got, llama.cpp $want"; fi
done

# 2. random models: last-position logits
prompt='The quick brown fox jumps over the lazy dog. 1234 + 5678 = ?'
compare() { # label, wick json, llama.cpp json, rel bound, cos bound
  "$PY" - "$@" <<'PY'
import json, sys
import numpy as np
label, wf, lf, rel_max, cos_max = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
a = np.array(json.load(open(wf))["logits"], dtype=np.float64)
b = np.array(json.load(open(lf))["logits"], dtype=np.float64)
if a.shape != b.shape:
    print(f"FAIL: {label}: {a.shape[0]} logits from wick, {b.shape[0]} from llama.cpp"); sys.exit(1)
rel = np.abs(a - b).max() / np.abs(b).max()
cos = 1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b)
good = rel <= rel_max and cos <= cos_max
print(f"{'ok  ' if good else 'FAIL'} {label}: max|diff|/max|logit| {rel:.2e} (<= {rel_max:g}), 1-cos {cos:.2e} (<= {cos_max:g})")
sys.exit(0 if good else 1)
PY
}
for spec in "llama tiny f16 q8_0 q4_0" "qwen2 tiny f16 q8_0 q4_0" "qwen3 tiny f16 q8_0 q4_0" "qwen3 tiny256 q6_k q4_0" \
            "granite tiny q8_0 q4_0" "gemma2 tiny q8_0 q4_0" "gemma3 tiny q8_0 q4_0" "phi3 tiny q8_0 q4_0" \
            "phi3:longrope tiny q4_0" \
            "qwen3moe tiny f16 q8_0 q4_0" "qwen2moe tiny f16 q8_0 q4_0" "mixtral tiny f16 q8_0 q4_0" "qwen3moe tiny256 q6_k"; do
  set -- $spec; arch=$1; shape=$2; shift 2
  ropt=()  # arch:SCALING = --rope-scaling SCALING
  case $arch in *:*) ropt=(--rope-scaling "${arch#*:}"); arch=${arch/:/-} ;; esac
  src="$tmp/$arch-$shape-f32.gguf"
  "$WICK" make-test-model --arch "${arch%%-*}" --shape "$shape" --format gguf --dtype f32 --seed 3 \
    "${ropt[@]}" --tokenizer "$TOK" --out "$src" || { bad "make-test-model $arch $shape"; continue; }
  ids=$("$WICK" tokenize -m "$src" -p "$prompt" | tr -d '[] ')
  for t in f32 "$@"; do
    f="$src"
    if [ "$t" != f32 ]; then
      f="$tmp/$arch-$shape-$t.gguf"
      "$REF" "$LIB" quantize "$src" "$f" "$t" 2 || { bad "llama.cpp quantize $arch $shape $t"; continue; }
    fi
    "$WICK" logits -m "$f" -p "$prompt" >"$tmp/w.json" || { bad "wick logits $arch $shape $t"; continue; }
    "$REF" "$LIB" logits "$f" "$ids" >"$tmp/l.json" || { bad "llama.cpp logits $arch $shape $t"; continue; }
    case $t in f32|f16) bounds="3e-3 2e-6" ;; *) bounds="6e-2 1.5e-3" ;; esac
    if compare "$arch $shape $t" "$tmp/w.json" "$tmp/l.json" $bounds; then ok; else FAIL=$((FAIL+1)); fi
  done
done
finish
