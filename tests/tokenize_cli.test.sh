#!/usr/bin/env bash
# tokenize_cli.test.sh — `wick tokenize` / `wick detokenize` end to end on
# tokenizer-only sources (a tokenizer.json directory, a tokenizer.json path,
# vocab.json + merges.txt, a vocab-only GGUF) and on models of both formats:
# ids, exact text back (no newline added when piped), --skip-special,
# --jsonl batch mode, the one-line invalid UTF-8 warning, and errors.
. "$(dirname "$0")/lib.sh"
t_init tokenize_cli
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
[ -d "$SHARED/tokenizers/qwen3" ] || skip "$SHARED/tokenizers/qwen3 not found (shared fixtures absent)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

Q=$SHARED/tokenizers/qwen3
# the same ids from every form of the Qwen tokenizer
for src in "$Q" "$Q/tokenizer.json" "$SHARED/tokenizers/qwen2.5"; do
  expect "tokenize $src" "$("$WICK" tokenize -m "$src" -p 'Hello world <|im_start|> 世界 🙂')" \
    "[9707,1879,220,151644,220,99489,27484]"
done
expect "gpt-2 vocab-only gguf" "$("$WICK" tokenize -m "$SHARED/tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf" -p 'Hello world')" "[15496,995]"
for src in "$SHARED/models/stories260K/hf" "$SHARED/models/stories260K/stories260K-f32.gguf"; do
  expect "stories BOS $src" "$("$WICK" tokenize -m "$src" -p 'Hello world')" "[1,346,306,414,263,304,341]"
  # the exact text back: BOS kept or skipped, no trailing newline when piped
  "$WICK" detokenize -m "$src" --ids 1,346,306,414,263,304,341 >"$tmp/out"
  expect "detokenize $src" "$(od -An -c "$tmp/out" | tr -s ' ')" "$(printf '<s> Hello world' | od -An -c | tr -s ' ')"
  "$WICK" detokenize -m "$src" --ids '[1, 346,306,414,263,304,341]' --skip-special >"$tmp/out"
  expect "detokenize --skip-special $src" "$(cat "$tmp/out"; echo "|")" "Hello world|"
done
# byte-fallback pieces join into characters; emoji round trip
ids=$("$WICK" tokenize -m "$SHARED/models/stories260K/hf" -p '日本 🙂 ok' --no-special)
expect "stories byte fallback round trip" "$("$WICK" detokenize -m "$SHARED/models/stories260K/hf" --ids "$ids")" "日本 🙂 ok"
ids=$("$WICK" tokenize -m "$Q" -p $'tabs\tand\r\nnewlines  🇯🇵👨‍👩‍👧‍👦' --no-special)
expect "qwen3 round trip" "$("$WICK" detokenize -m "$Q" --ids "$ids" | od -An -c)" "$(printf 'tabs\tand\r\nnewlines  🇯🇵👨‍👩‍👧‍👦' | od -An -c)"

# --jsonl both ways
printf '%s\n' '"Hello world"' '"<|im_end|>\n"' '""' >"$tmp/in.jsonl"
"$WICK" tokenize -m "$Q" --jsonl "$tmp/in.jsonl" >"$tmp/ids.jsonl"
expect "tokenize --jsonl" "$(tr '\n' ' ' <"$tmp/ids.jsonl")" "[9707,1879] [151645,198] [] "
expect "detokenize --jsonl" "$("$WICK" detokenize -m "$Q" --jsonl "$tmp/ids.jsonl" | tr '\n' ' ')" '"Hello world" "<|im_end|>\n" "" '
expect "detokenize --jsonl --skip-special" "$("$WICK" detokenize -m "$Q" --jsonl "$tmp/ids.jsonl" --skip-special | tr '\n' ' ')" '"Hello world" "\n" "" '

# invalid UTF-8: replaced, one warning line
printf 'ok \xff\xfe x \xe4\xb8' >"$tmp/bad.txt"
"$WICK" tokenize -m "$Q" -f "$tmp/bad.txt" >"$tmp/out" 2>"$tmp/err"
expect "invalid UTF-8 warning" "$(cat "$tmp/err")" "wick: warning: input has 4 invalid UTF-8 bytes; replaced with U+FFFD"
expect "invalid UTF-8 decoded" "$("$WICK" detokenize -m "$Q" --ids "$(cat "$tmp/out")")" "ok �� x �"
"$WICK" tokenize -m "$Q" -p 'clean' >/dev/null 2>"$tmp/err"
expect "no warning for valid text" "$(cat "$tmp/err")" ""

# errors: one line, exit 1
for args in "detokenize -m $Q --ids 1,x" "detokenize -m $Q --ids 999999" "detokenize -m $Q" \
            "tokenize -m $tmp/none -p x" "tokenize -m $tmp -p x"; do
  # shellcheck disable=SC2086
  "$WICK" $args >/dev/null 2>"$tmp/err"; rc=$?
  expect "error exit: $args" "$rc" "1"
  expect "one error line: $args" "$(wc -l <"$tmp/err" | tr -d ' '):$(cut -c1-12 "$tmp/err")" "1:wick: error:"
done
"$WICK" help | grep -q "detokenize -m MODEL"; expect "help lists detokenize" "$?" "0"
finish
