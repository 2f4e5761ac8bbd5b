#!/usr/bin/env bash
# cli.test.sh — the CLI end to end: every subcommand `wick --help` lists
# answers --help with its usage, `wick --version`; then, on the real
# stories260K model (../shared), the exact greedy story from both formats,
# tokenize output, --json fields, info.
. "$(dirname "$0")/lib.sh"
t_init cli
WICK=${WICK_BIN:-build/wick}
SHARED=${WICK_SHARED:-../shared}
M="$SHARED/models/stories260K"

# --help: status 0 and a line "usage: wick <sub>" on stdout, for every subcommand listed
subs=$("$WICK" --help | awk '/^commands:/ { f = 1; next } f && /^$/ { exit } f && /^  [a-z]/ { print $1 }')
[ "$(echo "$subs" | wc -w)" -ge 12 ]; expect "wick --help lists the subcommands ($(echo $subs))" "$?" "0"
for sub in $subs; do
  out=$("$WICK" "$sub" --help 2>&1); rc=$?
  expect "wick $sub --help: status" "$rc" "0"
  echo "$out" | grep -q "^usage: wick $sub\( \|$\)"; expect "wick $sub --help: a line 'usage: wick $sub'" "$?" "0"
  out=$("$WICK" "$sub" -h 2>/dev/null); rc=$?
  expect "wick $sub -h: status" "$rc" "0"
done
# --version and version: "wick X.Y.Z (build ...)", the same from both
v=$("$WICK" --version); rc=$?
expect "wick --version: status" "$rc" "0"
echo "$v" | grep -Eq '^wick [0-9]+\.[0-9]+\.[0-9]+ \(build [^)]+\)$'; expect "wick --version prints the version and build: $v" "$?" "0"
expect "wick version = wick --version" "$("$WICK" version)" "$v"
"$WICK" generate --no-such-flag >/dev/null 2>&1; expect "an unknown flag is still an error" "$?" "1"

if [ ! -d "$M" ]; then skip_part "$M not found (shared fixtures absent): the stories260K checks"; finish; fi
story=', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.'
for model in "$M/stories260K-f32.gguf" "$M/hf"; do
  got=$("$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0)
  expect "generate $model" "$got" "$story"
  got=$(WICK_PREFILL_CHUNK=1 "$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0 -t 1)
  expect "generate $model chunk 1, 1 thread" "$got" "$story"
  got=$("$WICK" tokenize -m "$model" -p "Hello world" --no-special)
  expect "tokenize $model --no-special" "$got" "[346,306,414,263,304,341]"
  got=$("$WICK" tokenize -m "$model" -p "Hello world")
  expect "tokenize $model (BOS)" "$got" "[1,346,306,414,263,304,341]"
  json=$("$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0 --json)
  for field in '"text":", there was a little girl' '"tokens":[432,383,286,261' '"prompt_tokens":5' \
               '"finish_reason":"length"' '"load_ms":' '"prefill_ms":' '"ttft_ms":' '"decode_ms":' \
               '"prefill_tok_s":' '"decode_tok_s":'; do
    case "$json" in *"$field"*) ok;; *) bad "--json lacks $field: $json";; esac
  done
  got=$("$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0 --stop "Lily" --stop "park")
  expect "generate --stop $model" "$got" ", there was a little girl named "
  json=$("$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0 --stop "ed Li" --json)
  case "$json" in *'"text":", there was a little girl nam"'*'"finish_reason":"stop"'*) ok;;
    *) bad "--stop across tokens --json: $json";; esac
  got=$("$WICK" generate -m "$model" -p "Once upon a time" -n 40 --temp 0 --stream-every 7)
  expect "generate --stream-every 7 $model" "$got" "$story"
  info=$("$WICK" info -m "$model")
  case "$info" in *"architecture:     llama"*"heads:            8 (kv 4, head_dim 8)"*"SentencePiece"*) ok;;
    *) bad "info $model: $info";; esac
done
"$WICK" help | grep -q "make-test-model"; expect "help lists commands" "$?" "0"
# Same seed, same output on any thread count (sampling, not greedy).
a=$("$WICK" generate -m "$M/hf" -p "Once upon a time" -n 40 --temp 0.9 --seed 42 -t 1)
b=$("$WICK" generate -m "$M/hf" -p "Once upon a time" -n 40 --temp 0.9 --seed 42 -t 2)
c=$("$WICK" generate -m "$M/hf" -p "Once upon a time" -n 40 --temp 0.9 --seed 43 -t 2)
expect "seed 42 reproduces across thread counts" "$a" "$b"
[ "$a" != "$c" ]; expect "seeds 42 and 43 differ" "$?" "0"
# Invalid UTF-8 in the prompt: replaced by U+FFFD, exactly one warning line.
tmpf=$(mktemp); printf 'Once upon a \xff\xfe time' >"$tmpf"
"$WICK" generate -m "$M/hf" -f "$tmpf" -n 3 --temp 0 >/dev/null 2>"$tmpf.err"; expect "invalid UTF-8 prompt runs" "$?" "0"
expect "one warning line" "$(cat "$tmpf.err")" "wick: warning: input has 2 invalid UTF-8 bytes; replaced with U+FFFD"
rm -f "$tmpf" "$tmpf.err"
# wick bench --json: the fields, one probe before the tests and one after
# every --probe-every decode steps and at each tg run's end (2 repeats of 10
# steps every 4: 1 + 2 × 3 readings), a chunk sweep entry per size.
json=$("$WICK" bench -m "$M/stories260K-f32.gguf" -p 16 -n 10 -r 2 -t 2 --probe-every 4 --membw-mib 64 \
       --chunk 0,8 --json)
got=$(printf '%s' "$json" | python3 -c '
import json, sys
a = json.load(sys.stdin)
ok = all(k in a for k in ("prefill_tok_s", "decode_tok_s", "ttft_ms", "membw_gb_s", "decode_ceiling_tok_s",
                          "decode_pct_of_ceiling", "peak_rss_mb", "weights_mb", "kv_cache_mb"))
print(ok, len(a["membw_probes_gb_s"]), len(a["decode_tok_s_runs"]), len(a["decode_pct_runs"]),
      all(x > 0 for x in a["membw_probes_gb_s"] + a["decode_pct_runs"]), len(a["chunk_sweep"]), a["probe_every"])')
expect "bench --json" "$got" "True 7 2 2 True 2 4"
"$WICK" bench -m "$M/stories260K-f32.gguf" -p 8 -n 4 -r 1 --probe-every -1 >/dev/null 2>&1
expect "bench rejects a negative --probe-every" "$?" "1"
finish
