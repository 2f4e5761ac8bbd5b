#!/usr/bin/env bash
# reference.test.sh — compares wick's logits against an independent NumPy
# reference implementation (tests/reference/, written from the papers and the
# Hugging Face transformers semantics, not from wick's code).
#   1. validates the reference itself on the real stories260K model (GGUF and HF)
#      from the shared fixtures: greedy decoding must reproduce the known ids;
#   2. for every arch x format x dtype, wick writes a tiny random-weight model
#      (make-test-model), prints the logits of a prompt (logits), and the
#      reference recomputes them from the same file (tests/reference/check_wick.py).
# Env: WICK_BIN (default build/wick), WICK_SHARED (default ../shared).
# Needs /usr/bin/python3 with NumPy (Debian python3-numpy); skips without it.
caller=$PWD
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
t_init reference
PY=/usr/bin/python3
# defaults are relative to the repository root; paths given in the environment
# are relative to the caller's directory
if [ -n "${WICK_BIN:-}" ]; then
  case "$WICK_BIN" in /*) ;; */*) WICK_BIN="$caller/$WICK_BIN" ;; esac
else
  WICK_BIN=build/wick
fi
if [ -n "${WICK_SHARED:-}" ]; then
  case "$WICK_SHARED" in /*) SHARED=$WICK_SHARED ;; *) SHARED="$caller/$WICK_SHARED" ;; esac
else
  SHARED=../shared
fi
REF=tests/reference

if ! [ -x "$PY" ] || ! "$PY" -c 'import numpy' 2>/dev/null; then
  skip "python3-numpy not installed"
fi

# ---- step 1: the reference reproduces the known stories260K greedy story
want=1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322,265,282,295,433,426,385,328,432,358,394,261,370,432,352,266,268,388,426
st="$SHARED/models/stories260K"
if [ -d "$st" ]; then
  for m in "$st/stories260K-f32.gguf" "$st/hf"; do
    got=$("$PY" "$REF/run_reference.py" "$m" --tokens 1,403,407,261,378 --greedy 40 |
          "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(",".join(map(str, d["tokens"] + d["generated"])))')
    if [ "$got" = "$want" ]; then
      ok "reference stories260K ${m#"$st/"} greedy 40 tokens match"
    else
      bad "reference stories260K ${m#"$st/"} greedy: got $got"
    fi
  done
else
  skip_part "reference validation on stories260K: $st not found (set WICK_SHARED)"
fi

# ---- step 2: wick vs reference on tiny random-weight models
if ! command -v "$WICK_BIN" >/dev/null 2>&1; then
  bad "wick binary $WICK_BIN not found (build first, or set WICK_BIN)"
  finish
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wick-ref.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$PY" "$REF/check_wick.py" --wick "$WICK_BIN" --tmp "$tmp" --prior "$PASS,$FAIL"
