#!/usr/bin/env bash
# bench_tokenize.sh — encoding speed of `wick tokenize` on 5 MiB of English
# text (the licence texts in /usr/share/common-licenses, repeated), per
# tokenizer, measured as a user sees it: wall time of the whole process
# (start, loading the tokenizer, reading the file, encoding, printing the ids).
# Best of 3 runs. Prints a table, then one JSON line.
#
# usage: bench/bench_tokenize.sh [WICK_BIN]   (default build/wick; env WICK_SHARED)
set -eu
WICK=${1:-${WICK_BIN:-build/wick}}
SHARED=${WICK_SHARED:-../shared}
SIZE=$((5 * 1024 * 1024))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

src=/usr/share/common-licenses
text="$tmp/english.txt"
if [ -d "$src" ]; then
  while [ "$(stat -c %s "$text" 2>/dev/null || echo 0)" -lt "$SIZE" ]; do cat "$src"/* >>"$text"; done
else # fall back to the project's own English prose
  while [ "$(stat -c %s "$text" 2>/dev/null || echo 0)" -lt "$SIZE" ]; do cat README.md >>"$text"; done
fi
head -c "$SIZE" "$text" >"$tmp/in.txt"

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
best_of_3() { # tokenizer -> best seconds for the whole process
  local best=""
  for _ in 1 2 3; do
    local t0 t1 dt
    t0=$(now)
    "$WICK" tokenize -m "$1" -f "$tmp/in.txt" --no-special >"$tmp/ids.json"
    t1=$(now)
    dt=$(calc "$t1 - $t0")
    if [ -z "$best" ] || [ "$(calc "($dt < $best) ? 1 : 0")" = 1 ]; then best=$dt; fi
  done
  echo "$best"
}
load_time() { # a 1-byte input: process start + loading
  local t0 t1
  t0=$(now)
  "$WICK" tokenize -m "$1" -p x >/dev/null
  t1=$(now)
  calc "$t1 - $t0"
}

printf '%-14s %10s %10s %10s %10s %12s\n' tokenizer "MiB" "total s" "load s" "tokens" "MB/s total"
json="{\"bench\":\"tokenize\",\"bytes\":$SIZE,\"results\":["
sep=""
for spec in "qwen3:$SHARED/tokenizers/qwen3" "qwen2.5:$SHARED/tokenizers/qwen2.5" \
            "stories260K:$SHARED/models/stories260K/stories260K-f32.gguf" \
            "gpt-2:$SHARED/tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"; do
  name=${spec%%:*}; path=${spec#*:}
  [ -e "$path" ] || { echo "SKIP: $path not found"; continue; }
  secs=$(best_of_3 "$path")
  load=$(load_time "$path")
  ntok=$(tr -cd ',' <"$tmp/ids.json" | wc -c); ntok=$((ntok + 1))
  mbs=$(calc "$SIZE / 1000000 / $secs")
  printf '%-14s %10.1f %10.3f %10.3f %10d %12.2f\n' "$name" "$(calc "$SIZE / 1048576")" "$secs" "$load" "$ntok" "$mbs"
  json+="$sep{\"tokenizer\":\"$name\",\"seconds\":$(printf %.4f "$secs"),\"load_seconds\":$(printf %.4f "$load"),\"tokens\":$ntok,\"mb_per_s\":$(printf %.3f "$mbs")}"
  sep=","
done
echo "$json]}"
