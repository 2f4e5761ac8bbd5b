#!/usr/bin/env bash
# spec_cli.test.sh — speculative decoding from the command line: `wick generate`
# with --lookup, --draft-layers and --draft prints exactly the plain greedy
# text (and --json reports the drafted / accepted counts), `wick bench` with a
# drafter reports identical greedy output, and bad flags are one clear error
# each (--draft-layers 0 or >= the layer count, --draft-max out of range, two
# drafters, a draft model of another vocabulary).
# Model: stories260K from ../shared, else a random test model.
. "$(dirname "$0")/lib.sh"
t_init spec_cli
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
M="$SHARED/models/stories260K/stories260K-f32.gguf"
if [ ! -f "$M" ]; then
  skip_part "$M not found (shared fixtures absent): a random tiny llama model instead"
  M="$TMP/tiny.gguf"
  "$WICK" make-test-model --arch llama --format gguf --shape tiny --seed 1 --out "$M" >/dev/null 2>&1 || { echo "FAIL: make-test-model"; exit 1; }
fi
NL=$("$WICK" info -m "$M" | sed -n 's/^layers: *\([0-9]*\).*/\1/p')
P="Lily had a red ball. Lily went to the park with her red ball. Lily"
"$WICK" generate -m "$M" -p "$P" -n 60 --temp 0 >"$TMP/plain" 2>"$TMP/err" || bad "plain generate: $(cat "$TMP/err")"
for f in "--lookup 3" "--lookup 1 --draft-max 32" "--draft-layers $((NL - 1))" "--draft $M --draft-max 3"; do
  # shellcheck disable=SC2086
  "$WICK" generate -m "$M" -p "$P" -n 60 --temp 0 $f >"$TMP/spec" 2>"$TMP/err" || bad "generate $f: $(cat "$TMP/err")"
  cmp -s "$TMP/plain" "$TMP/spec" && ok || bad "generate $f: the text differs from plain decoding"
  # shellcheck disable=SC2086
  "$WICK" generate -m "$M" -p "$P" -n 60 --temp 0 --json $f >"$TMP/j" 2>/dev/null
  python3 - "$TMP/j" <<'PY' && ok || bad "generate $f --json: no speculative counts"
import json, sys
o = json.load(open(sys.argv[1]))["speculative"]
assert o["draft_tokens"] > 0 and 0 <= o["accepted_tokens"] <= o["draft_tokens"] and o["verify_passes"] > 0
PY
done
# sampling runs and is reproducible with the same seed and drafter
"$WICK" generate -m "$M" -p "$P" -n 40 --temp 0.9 --seed 7 --lookup 2 >"$TMP/s1" 2>/dev/null
"$WICK" generate -m "$M" -p "$P" -n 40 --temp 0.9 --seed 7 --lookup 2 >"$TMP/s2" 2>/dev/null
[ -s "$TMP/s1" ] && cmp -s "$TMP/s1" "$TMP/s2" && ok || bad "seeded speculative sampling is not reproducible"
out=$("$WICK" bench -m "$M" --lookup 3 -n 32 -r 1 --json 2>&1)
echo "$out" | python3 -c 'import json,sys; o=json.load(sys.stdin); assert o["greedy_identical"] is True and o["tokens_per_pass"] >= 1' && ok || bad "bench --lookup: $out"
errs=("--draft-layers 0" "--draft-layers $NL" "--draft-max 33 --lookup 2" "--draft-max 4" "--lookup 2 --draft-layers 1" "--lookup 0")
A="$SHARED/models/aidreams260K/aidreams260K-f32.gguf"
if [ -f "$A" ] && [ "$M" != "$TMP/tiny.gguf" ]; then errs+=("--draft $A")
else skip_part "a draft model of another vocabulary: needs $A and stories260K (shared fixtures)"; fi
for f in "${errs[@]}"; do
  # shellcheck disable=SC2086
  out=$("$WICK" generate -m "$M" -p hi -n 4 $f 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q '^wick: error: generate: '; then ok; else bad "generate $f: rc $rc: $out"; fi
done
finish
