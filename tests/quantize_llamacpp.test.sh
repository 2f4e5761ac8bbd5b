#!/usr/bin/env bash
# quantize_llamacpp.test.sh — `wick quantize` and `wick convert` write files
# llama.cpp itself loads and runs to the same logits, with the tensor types
# llama-quantize chooses; wick's quantizers match llama.cpp's in quality; and
# files llama.cpp quantizes to every type load in wick and give llama.cpp's
# logits. llama.cpp is its own prebuilt library (tests/llamacpp/setup.sh,
# driven by bench/llamacpp_ref.c). Skips without node/npm/Linux x86-64,
# NumPy, or ../shared.
# The random models carry stories260K's small SentencePiece tokenizer (512
# tokens, which llama.cpp reads), so every file is small.
#  1. Types: for every mix llama.cpp writes (Q2_K .. Q8_0, F16, BF16; not
#     Q2_K_S, which it refuses without an importance matrix), wick quantize
#     gives every tensor the type llama.cpp gives it — llama and qwen3 (tied)
#     tiny256 models, and stories260K, whose 64- and 172-wide rows take the
#     fallbacks.
#  2. Bytes: for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16 and BF16 every tensor but
#     the searched-scale types (the Q6_K output) is byte-identical to llama.cpp's,
#     and every GGUF key llama.cpp writes has the same value in wick's file.
#  3. Quality: on a tiny256 model whose weights are Gaussian and heavy-tailed
#     rows, the RMSE of every quantized type wick writes is <= 1.05 x llama.cpp's
#     on the same tensors.
#  4. wick quantize output (GGUF and HF input, several mixes) loads in llama.cpp;
#     last-position logits agree with wick's on the same file. Bounds as
#     llamacpp_gguf.test.sh: quantized files max|diff| <= 6e-2·max|logit|,
#     1-cos <= 1.5e-3.
#  5. wick convert output (HF llama / qwen2 / qwen3 / stories260K) loads in
#     llama.cpp: F32 and F16 files max|diff| <= 3e-3·max|logit|, 1-cos <= 2e-6;
#     BF16 files the quantized bounds (llama.cpp rounds activations to bf16 for
#     BF16 weights); stories260K's 40 greedy tokens equal llama.cpp's and the
#     known story.
#  6. llama.cpp's files of every type (qwen3 tiny256, llama tiny with
#     fallbacks) load in wick: logits within the quantized bounds of llama.cpp's
#     (F16 within the F32 bounds).
#  7. The other archs (granite, gemma2, gemma3, phi3 with and without LongRoPE,
#     qwen2moe, qwen3moe, mixtral; tiny256, every feature on): wick quantize
#     gives every tensor llama.cpp's type for several mixes (expert stacks take
#     the ffn_* rules, the router stays F32, attn_qkv takes attn_v's); and in
#     llama.cpp, with the bounds of 4 and 5: wick convert of the HF model
#     (BF16) to F32 and as it is, wick quantize Q4_K_M of the HF model and of
#     make-test-model's F32 GGUF. A 21-token prompt, below Phi-3's 32-token
#     test window (recent llama.cpp ignores Phi-3's window, wick applies it as
#     HF does).
. "$(dirname "$0")/lib.sh"
t_init quantize_llamacpp
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
STORIES="$SHARED/models/stories260K"
TOK="$STORIES/hf"
[ -f "$STORIES/stories260K-f32.gguf" ] && [ -f "$TOK/tokenizer.json" ] || skip "$SHARED fixtures absent"
PY=/usr/bin/python3
"$PY" -c "import numpy" 2>/dev/null || skip "python3-numpy not installed"
tmp=$(mktemp -d /tmp/wick-quantize-XXXXXX); trap 'rm -rf "$tmp"' EXIT
LIB=$(tests/llamacpp/setup.sh "$tmp") || skip "llama.cpp unavailable here"
REF="$tmp/llamacpp_ref"
CMP="$PY tests/reference/gguf_compare.py"

lq() { "$REF" "$LIB" quantize "$1" "$2" "$3" 2 || { bad "llama.cpp quantize $3 $1"; return 1; }; }
wq() { "$WICK" quantize "$@" >/dev/null || { bad "wick quantize $*"; return 1; }; }

"$WICK" make-test-model --arch llama --shape tiny256 --format gguf --dtype f32 --seed 3 --tokenizer "$TOK" \
  --out "$tmp/llama256.gguf" || bad "make-test-model llama"
"$WICK" make-test-model --arch qwen3 --shape tiny256 --format gguf --dtype f32 --seed 3 --tokenizer "$TOK" \
  --out "$tmp/qwen256.gguf" || bad "make-test-model qwen3"
MIXES="q2_k q3_k_s q3_k_m q3_k_l q4_k_s q4_k_m q5_k_s q5_k_m q6_k iq4_nl iq4_xs q4_0 q4_1 q5_0 q5_1 q8_0 f16 bf16"

# 1 + 2: types and bytes
for src in "$tmp/llama256.gguf" "$tmp/qwen256.gguf" "$STORIES/stories260K-f32.gguf"; do
  for t in $MIXES; do
    lq "$src" "$tmp/l.gguf" "$t" && wq "$src" "$tmp/w.gguf" "$t" || continue
    check $CMP types "$tmp/l.gguf" "$tmp/w.gguf"
    case $t in q4_0|q4_1|q5_0|q5_1|q8_0|f16|bf16) check $CMP same-bytes "$tmp/l.gguf" "$tmp/w.gguf" ;; esac
  done
done

# 3: quality on Gaussian and heavy-tailed weights
cp "$tmp/llama256.gguf" "$tmp/noise.gguf"
check $CMP perturb "$tmp/noise.gguf" 17
for t in q2_k q3_k_s q4_k_s q5_k_s q6_k iq4_nl iq4_xs q4_0 q4_1 q5_0 q5_1 q8_0; do
  lq "$tmp/noise.gguf" "$tmp/l.gguf" "$t" && wq "$tmp/noise.gguf" "$tmp/w.gguf" "$t" || continue
  check $CMP rmse "$tmp/noise.gguf" "$tmp/l.gguf" "$tmp/w.gguf" "$t" 1.05
done

# logits of wick and llama.cpp on one file: label, file, prompt, rel bound, cos bound
prompt='The quick brown fox jumps over the lazy dog. 1234 + 5678 = ?'
same_logits() {
  local ids
  ids=$("$WICK" tokenize -m "$2" -p "$prompt" | tr -d '[] ') || { bad "$1: wick tokenize"; return; }
  "$WICK" logits -m "$2" -p "$prompt" >"$tmp/w.json" || { bad "$1: wick logits"; return; }
  "$REF" "$LIB" logits "$2" "$ids" >"$tmp/l.json" || { bad "$1: llama.cpp cannot run it"; return; }
  check $CMP logits "$tmp/w.json" "$tmp/l.json" "$1" "$3" "$4"
}
QB="6e-2 1.5e-3"; FB="3e-3 2e-6"

# 4: wick quantize output in llama.cpp, from GGUF and from HF input
for t in q2_k q3_k_m q4_k_m q5_k_m q6_k iq4_xs q4_1 q5_0 q2_k_s; do
  wq "$tmp/qwen256.gguf" "$tmp/w.gguf" "$t" && same_logits "wick quantize qwen3 tiny256 gguf $t" "$tmp/w.gguf" $QB
done
for arch in llama qwen2 qwen3; do
  "$WICK" make-test-model --arch "$arch" --shape tiny256 --format hf --dtype bf16 --seed 4 --tokenizer "$TOK" \
    --out "$tmp/hf-$arch" || { bad "make-test-model hf $arch"; continue; }
  "$WICK" make-test-model --arch "$arch" --shape tiny --format hf --dtype bf16 --seed 4 --tokenizer "$TOK" \
    --out "$tmp/hf64-$arch" || { bad "make-test-model hf tiny $arch"; continue; }
  wq "$tmp/hf64-$arch" "$tmp/w.gguf" q4_k_m && same_logits "wick quantize $arch tiny hf q4_k_m" "$tmp/w.gguf" $QB
  for t in q4_k_m q5_k_s iq4_nl q8_0; do
    wq "$tmp/hf-$arch" "$tmp/w.gguf" "$t" && same_logits "wick quantize $arch tiny256 hf $t" "$tmp/w.gguf" $QB
  done
done

# 5: wick convert output in llama.cpp
for arch in llama qwen2 qwen3; do
  for ot in f32 f16 bf16 auto; do
    "$WICK" convert "$tmp/hf-$arch" "$tmp/c.gguf" --outtype "$ot" >/dev/null || { bad "wick convert $arch $ot"; continue; }
    case $ot in f32|f16) b=$FB ;; *) b=$QB ;; esac
    same_logits "wick convert $arch $ot" "$tmp/c.gguf" $b
  done
done
want=432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322,265,282,295,433,426,385,328,432,358,394,261,370,432,352,266,268,388,426
if "$WICK" convert "$STORIES/hf" "$tmp/st.gguf" >/dev/null; then
  ids=$("$WICK" tokenize -m "$tmp/st.gguf" -p "Once upon a time" | tr -d '[] ')
  got=$("$REF" "$LIB" greedy "$tmp/st.gguf" "$ids" 40)
  mine=$("$WICK" generate -m "$tmp/st.gguf" -p "Once upon a time" -n 40 --temp 0 --json |
         "$PY" -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["tokens"])))')
  if [ "$ids" = 1,403,407,261,378 ] && [ "$got" = "$want" ] && [ "$mine" = "$want" ]; then ok
  else bad "stories260K converted: ids $ids, llama.cpp $got, wick $mine"; fi
else
  bad "wick convert stories260K"
fi

# 6: llama.cpp's files of every type in wick
"$WICK" make-test-model --arch llama --shape tiny --format gguf --dtype f32 --seed 3 --tokenizer "$TOK" \
  --out "$tmp/llama64.gguf" || bad "make-test-model llama tiny"
for src in qwen256 llama64; do
  for t in $MIXES; do
    lq "$tmp/$src.gguf" "$tmp/l.gguf" "$t" || continue
    case $t in f16) b=$FB ;; *) b=$QB ;; esac
    same_logits "llama.cpp $t $src in wick" "$tmp/l.gguf" $b
  done
done

# 7: the other archs
prompt='The quick brown fox jumps.'
for spec in granite gemma2 gemma3 phi3 phi3:longrope qwen2moe qwen3moe mixtral; do
  arch=${spec%%:*}; ropt=()
  case $spec in *:*) ropt=(--rope-scaling "${spec#*:}") ;; esac
  # llama.cpp gives a model whose general.name (the directory's name) says
  # phi3 Phi-3's special tokens, which this test tokenizer lacks
  n=${spec/:/-}; n=${n/phi3/phi}
  "$WICK" make-test-model --arch "$arch" "${ropt[@]}" --shape tiny256 --format gguf --dtype f32 --seed 4 \
    --tokenizer "$TOK" --out "$tmp/$n.gguf" || { bad "make-test-model $spec gguf"; continue; }
  "$WICK" make-test-model --arch "$arch" "${ropt[@]}" --shape tiny256 --format hf --dtype bf16 --seed 4 \
    --tokenizer "$TOK" --out "$tmp/hf-$n" || { bad "make-test-model $spec hf"; continue; }
  if [ "$spec" = "$arch" ]; then
    for t in q4_k_m q3_k_m q2_k q5_k_s iq4_xs q6_k q8_0; do
      lq "$tmp/$n.gguf" "$tmp/l.gguf" "$t" && wq "$tmp/$n.gguf" "$tmp/w.gguf" "$t" || continue
      check $CMP types "$tmp/l.gguf" "$tmp/w.gguf"
    done
  fi
  for ot in f32 auto; do
    "$WICK" convert "$tmp/hf-$n" "$tmp/c.gguf" --outtype "$ot" >/dev/null || { bad "wick convert $spec $ot"; continue; }
    case $ot in f32) b=$FB ;; *) b=$QB ;; esac
    same_logits "wick convert $spec $ot" "$tmp/c.gguf" $b
  done
  wq "$tmp/hf-$n" "$tmp/w.gguf" q4_k_m && same_logits "wick quantize $spec tiny256 hf q4_k_m" "$tmp/w.gguf" $QB
  wq "$tmp/$n.gguf" "$tmp/w.gguf" q4_k_m && same_logits "wick quantize $spec tiny256 gguf q4_k_m" "$tmp/w.gguf" $QB
done

finish
