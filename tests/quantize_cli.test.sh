#!/usr/bin/env bash
# quantize_cli.test.sh — `wick quantize` and `wick convert` from the command
# line, without llama.cpp: an output that loads and says what it wrote, the
# stories260K story from its quantized and converted files, --dtype on a
# random model of every type, and every error as one line `wick: error: ...`
# with a non-zero exit and no output file left behind (among them what a GGUF
# file cannot hold: an HF MoE model with a dense layer).
. "$(dirname "$0")/lib.sh"
t_init quantize_cli
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
tmp=$(mktemp -d /tmp/wick-qcli-XXXXXX); trap 'rm -rf "$tmp"' EXIT

"$WICK" make-test-model --arch qwen3 --shape tiny256 --format gguf --seed 2 --out "$tmp/m.gguf" >/dev/null ||
  { bad "make-test-model"; finish; }
mkdir "$tmp/empty"

# a summary line naming the file and the type counts, and a file wick loads
out=$("$WICK" quantize "$tmp/m.gguf" "$tmp/q.gguf" Q4_K_M -t 2)
case "$out" in "wrote $tmp/q.gguf: 24 tensors ("*"Q4_K"*"Q6_K"*) ok ;; *) bad "quantize summary: $out" ;; esac
"$WICK" info -m "$tmp/q.gguf" >/dev/null && ok || bad "info on the quantized file"
lines=$("$WICK" quantize "$tmp/m.gguf" "$tmp/q.gguf" q5_0 -v 2>&1 >/dev/null | wc -l)
[ "$lines" -eq 24 ] && ok || bad "-v printed $lines lines, want one per tensor (24)"

# the stories260K story survives Q8_0 and conversion
M="$SHARED/models/stories260K"
if [ -d "$M" ]; then
  story=', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.'
  for src in "$M/stories260K-f32.gguf" "$M/hf"; do
    "$WICK" quantize "$src" "$tmp/s.gguf" q8_0 >/dev/null || { bad "quantize $src"; continue; }
    got=$("$WICK" generate -m "$tmp/s.gguf" -p "Once upon a time" -n 40 --temp 0)
    [ "$got" = "$story" ] && ok || bad "stories260K q8_0 from $src: $got"
  done
  "$WICK" convert "$M/hf" "$tmp/s.gguf" --outtype f16 >/dev/null || bad "convert stories260K"
  got=$("$WICK" generate -m "$tmp/s.gguf" -p "Once upon a time" -n 40 --temp 0)
  [ "$got" = "$story" ] && ok || bad "stories260K converted to f16: $got"
else
  skip_part "stories260K cases: $M not found (shared fixtures absent)"
fi

# --dtype and make-test-model --dtype reach every type
for t in q2_k q3_k q4_k q5_k q6_k iq4_xs iq4_nl q4_1 q5_0 q5_1; do
  "$WICK" logits -m "$tmp/m.gguf" -p "hello" --dtype "$t" >/dev/null && ok || bad "--dtype $t"
  "$WICK" make-test-model --arch llama --shape tiny256 --format gguf --dtype "$t" --out "$tmp/t.gguf" >/dev/null &&
    "$WICK" logits -m "$tmp/t.gguf" -p "hello" >/dev/null && ok || bad "make-test-model --dtype $t"
done

# errors: one line, non-zero exit, no output file
error_case() { # label, expected substring, command...
  local label=$1 want=$2; shift 2
  rm -f "$tmp/o.gguf"
  local err rc
  err=$("$WICK" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -ne 0 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ "$err" == "wick: error: "*"$want"* ]] &&
     [ ! -e "$tmp/o.gguf" ]; then ok; else bad "$label: rc $rc, stderr: $err"; fi
}
error_case "unknown type" 'unknown type "Q4_K_X"' quantize "$tmp/m.gguf" "$tmp/o.gguf" Q4_K_X
error_case "missing input" "nope.gguf" quantize "$tmp/nope.gguf" "$tmp/o.gguf" q4_k_m
printf 'not a gguf file' >"$tmp/junk.gguf"
error_case "unreadable input" "junk.gguf" quantize "$tmp/junk.gguf" "$tmp/o.gguf" q4_k_m
error_case "HF dir without config" "config.json" quantize "$tmp/empty" "$tmp/o.gguf" q4_k_m
error_case "convert: HF dir without config" "config.json" convert "$tmp/empty" "$tmp/o.gguf"
error_case "convert: not a directory" "Hugging Face" convert "$tmp/m.gguf" "$tmp/o.gguf"
error_case "convert: unknown outtype" "--outtype" convert "$tmp/empty" "$tmp/o.gguf" --outtype q8_0
error_case "unwritable output" "cannot create" quantize "$tmp/m.gguf" "$tmp/no/such/dir/o.gguf" q4_k_m
error_case "output is the input" "overwrite" quantize "$tmp/m.gguf" "$tmp/m.gguf" q4_k_m
error_case "missing TYPE" "usage" quantize "$tmp/m.gguf" "$tmp/o.gguf"
error_case "extra argument" 'unexpected argument "x"' quantize "$tmp/m.gguf" "$tmp/o.gguf" q8_0 x
error_case "bad --output-type" "--output-type" quantize "$tmp/m.gguf" "$tmp/o.gguf" q8_0 --output-type q9
error_case "unknown --dtype" "q7_k" logits -m "$tmp/m.gguf" -p hi --dtype q7_k
"$WICK" make-test-model --arch qwen2moe --format hf --mlp-only-layers 0 --out "$tmp/dense-moe" >/dev/null ||
  bad "make-test-model --mlp-only-layers"
error_case "convert: dense layer in a MoE model" "layer 0 is dense" convert "$tmp/dense-moe" "$tmp/o.gguf"
error_case "quantize: dense layer in a MoE model" "layer 0 is dense" quantize "$tmp/dense-moe" "$tmp/o.gguf" q4_k_m
"$WICK" logits -m "$tmp/m.gguf" -p hi >/dev/null && ok || bad "the input survived"

finish
