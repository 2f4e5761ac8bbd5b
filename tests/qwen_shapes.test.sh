#!/usr/bin/env bash
# qwen_shapes.test.sh — Qwen2.5-0.5B- and Qwen3-0.6B-shaped random models with
# the real Qwen3 tokenizer load from GGUF and HF, `wick info` describes them
# correctly, and both formats of the same seed generate the same tokens.
. "$(dirname "$0")/lib.sh"
t_init qwen_shapes
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
TOK="$SHARED/tokenizers/qwen3"
[ -f "$TOK/tokenizer.json" ] || skip "$TOK not found (shared fixtures absent)"
tmp=$(mktemp -d /tmp/wick-qwen-XXXXXX); trap 'rm -rf "$tmp"' EXIT
check() { # name, condition-result
  if [ "$2" = 0 ]; then ok; else bad "$1"; fi
}
expect_line() { # info-file, regex
  grep -Eq "$2" "$1"; check "$(basename "$1"): /$2/" $?
}
prompt='<|im_start|>user
Hello, who are you?<|im_end|>
<|im_start|>assistant
'
for spec in "qwen2 qwen2.5-0.5b" "qwen3 qwen3-0.6b"; do
  set -- $spec; arch=$1; shape=$2
  for fmt in gguf hf; do
    out="$tmp/$shape-$fmt"; [ "$fmt" = gguf ] && out="$out.gguf"
    "$WICK" make-test-model --arch "$arch" --shape "$shape" --format "$fmt" --dtype bf16 --seed 5 \
      --tokenizer "$TOK" --out "$out"; check "make-test-model $arch $shape $fmt" $?
    info="$tmp/info-$shape-$fmt.txt"
    "$WICK" info -m "$out" >"$info"; check "info $shape $fmt" $?
    expect_line "$info" "^format: +$fmt$"
    expect_line "$info" "^architecture: +$arch$"
    expect_line "$info" "^vocab: +151936$"
    expect_line "$info" "^tied embeddings: +yes$"
    # GGUF lists a token for every embedding row (unused [PAD] entries past
    # the tokenizer's 151,669), as llama.cpp's converter writes it
    ntok=151669; [ "$fmt" = gguf ] && ntok=151936
    expect_line "$info" "^tokenizer: +byte-level BPE, $ntok tokens, bos -1, eos 151645, adds bos: no$"
    expect_line "$info" "^chat template: +yes$"
    # a padding row of the GGUF vocabulary decodes to nothing (llama.cpp prints nothing for UNUSED tokens)
    if [ "$fmt" = gguf ]; then
      pad=$("$WICK" detokenize -m "$out" --ids 151700,9707); check "detokenize a [PAD] id $shape" $?
      [ "$pad" = "Hello" ]; check "a [PAD] id decodes to nothing ($shape: \"$pad\")" $?
    fi
    if [ "$shape" = qwen2.5-0.5b ]; then
      expect_line "$info" "^hidden: +896$"; expect_line "$info" "^layers: +24$"
      expect_line "$info" "^heads: +14 \(kv 2, head_dim 64\)$"; expect_line "$info" "^ffn: +4864$"
      expect_line "$info" "^qkv bias: +yes$"; expect_line "$info" "^q/k norm: +no$"
      expect_line "$info" "^parameters: +494032768 "
    else
      expect_line "$info" "^hidden: +1024$"; expect_line "$info" "^layers: +28$"
      expect_line "$info" "^heads: +16 \(kv 8, head_dim 128\)$"; expect_line "$info" "^ffn: +3072$"
      expect_line "$info" "^qkv bias: +no$"; expect_line "$info" "^q/k norm: +yes$"
      expect_line "$info" "^parameters: +596049920 "
    fi
    expect_line "$info" "BF16"
    "$WICK" generate -m "$out" -p "$prompt" -n 6 --temp 0 --json >"$tmp/gen-$shape-$fmt.json"
    check "generate $shape $fmt" $?
    grep -Eq '"finish_reason":"(length|stop)"' "$tmp/gen-$shape-$fmt.json"; check "generate $shape $fmt json" $?
    rm -rf "$out"
  done
  toks() { grep -o '"tokens":\[[0-9,]*\]' "$1"; }
  a=$(toks "$tmp/gen-$shape-gguf.json"); b=$(toks "$tmp/gen-$shape-hf.json")
  [ -n "$a" ] && [ "$a" = "$b" ]; check "$shape: gguf and hf generate the same tokens ($a vs $b)" $?
  echo "$shape: $a"
done
finish
