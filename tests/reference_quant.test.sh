#!/usr/bin/env bash
# reference_quant.test.sh — quantized files of every weight type against the
# independent NumPy reference (tests/reference/check_quantized.py): files
# written by llama.cpp's own quantizer (when its library can be had: see
# tests/llamacpp/setup.sh) and by `wick quantize`, in every type and mix, on
# shapes whose rows are whole K-quant super-blocks (tiny256) and on shapes
# where the K-quants fall back per tensor (tiny). For each file wick's
# dequantization must equal the NumPy one written from the format
# definitions (tests/reference/dequant.py), and wick's logits must match the
# reference run on the dequantized weights (same argmax, cosine >= 0.999).
# Env: WICK_BIN (default build/wick). Skips without /usr/bin/python3 + NumPy;
# without llama.cpp only wick's files are checked (said in the output).
caller=$PWD
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
t_init reference_quant
PY=/usr/bin/python3
if [ -n "${WICK_BIN:-}" ]; then
  case "$WICK_BIN" in /*) ;; */*) WICK_BIN="$caller/$WICK_BIN" ;; esac
else
  WICK_BIN=build/wick
fi
if ! [ -x "$PY" ] || ! "$PY" -c 'import numpy' 2>/dev/null; then
  skip "python3-numpy not installed"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wick-refq.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
args=()
if LIB=$(tests/llamacpp/setup.sh "$tmp" 2>"$tmp/setup.err"); then
  args=(--llamacpp "$tmp/llamacpp_ref" "$LIB")
else
  skip_part "llama.cpp's quantized files: llama.cpp unavailable ($(tail -1 "$tmp/setup.err")); checking wick-quantized files only"
fi
"$PY" tests/reference/check_quantized.py --wick "$WICK_BIN" --tmp "$tmp" "${args[@]}"
