#!/usr/bin/env bash
# tokenizer_conformance.test.sh — wick's tokenizers against reference
# implementations on the committed corpus tests/data/tokenizer_corpus.jsonl
# (3,000+ strings: code, many scripts, emoji, whitespace and digit runs,
# contractions, special-token text; made by tests/data/make_corpus.py).
#
# For the real Qwen3 tokenizer and the stories260K tokenizer.json, every string
# must give the same ids as @lenml/tokenizers (transformers.js) with and
# without special tokens (wick's default / --no-special), and decoding those
# ids must give the same text, keeping and skipping special tokens. The
# reference packages are installed here with npm (pinned in tests/js/package.json)
# into tests/js/node_modules; without node/npm the suite skips. Hugging Face's
# own `tokenizers` (Rust, Node binding) is installed too, to adjudicate the
# cases listed in tests/js/tokenize_ref.mjs where @lenml/tokenizers deviates
# from it. wick runs in batch mode (tokenize/detokenize --jsonl): four
# processes per tokenizer, not one per string. The closing line counts
# strings: one string passes when all four results match for it.
. "$(dirname "$0")/lib.sh"
t_init tokenizer_conformance
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
CORPUS=tests/data/tokenizer_corpus.jsonl
JS=tests/js

command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"
[ -d "$SHARED/tokenizers/qwen3" ] || skip "$SHARED/tokenizers/qwen3 not found (shared fixtures absent)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# install the pinned reference packages once (node_modules is git-ignored)
want_lenml=$(node -e 'console.log(require(process.argv[1]).dependencies["@lenml/tokenizers"])' "$PWD/$JS/package.json")
want_hf=$(node -e 'console.log(require(process.argv[1]).dependencies["tokenizers"])' "$PWD/$JS/package.json")
have() { node -e 'try{console.log(require(process.argv[1]).version)}catch{console.log("none")}' "$PWD/$JS/node_modules/$1/package.json"; }
if [ "$(have @lenml/tokenizers)" != "$want_lenml" ] || [ "$(have tokenizers)" != "$want_hf" ]; then
  if ! flock "$JS/.npm-install.lock" npm install --prefix "$JS" --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null 2>"$tmp/npm.log"; then
    cat "$tmp/npm.log"
    skip "npm install of the reference tokenizers failed (registry unreachable?)"
  fi
fi

run() { # name, tokenizer dir
  local n=$1 dir=$2 ok=1
  "$WICK" tokenize -m "$dir" --jsonl "$CORPUS" >"$tmp/$n.ids" 2>"$tmp/$n.err" || ok=0
  "$WICK" tokenize -m "$dir" --jsonl "$CORPUS" --no-special >"$tmp/$n.ids_ns" 2>>"$tmp/$n.err" || ok=0
  "$WICK" detokenize -m "$dir" --jsonl "$tmp/$n.ids" >"$tmp/$n.dec" 2>>"$tmp/$n.err" || ok=0
  "$WICK" detokenize -m "$dir" --jsonl "$tmp/$n.ids" --skip-special >"$tmp/$n.dec_skip" 2>>"$tmp/$n.err" || ok=0
  if [ $ok = 0 ]; then
    bad "wick failed on $n:"; cat "$tmp/$n.err"; return
  fi
  node "$JS/tokenize_ref.mjs" "$n" "$dir" "$CORPUS" "$tmp/$n.ids" "$tmp/$n.ids_ns" "$tmp/$n.dec" \
    "$tmp/$n.dec_skip" >"$tmp/$n.out" 2>&1
  local rc=$?
  cat "$tmp/$n.out"
  local last; last=$(tail -n 1 "$tmp/$n.out")
  if [[ $last =~ ^$n:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    PASS=$((PASS + BASH_REMATCH[1])); FAIL=$((FAIL + BASH_REMATCH[2]))
    [ $rc -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && FAIL=$((FAIL+1))
  else
    bad "the reference script for $n did not finish"
  fi
}
run qwen3 "$SHARED/tokenizers/qwen3"
run stories260K "$SHARED/models/stories260K/hf"
finish
