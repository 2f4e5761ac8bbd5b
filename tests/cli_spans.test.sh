#!/usr/bin/env bash
# cli_spans.test.sh — span requests from the command line on the repo's demo
# model (stories260K, no ../shared needed): `wick generate --prefix --span
# -p` prints the same greedy text with the span cache off and on; --json
# holds the segments (P with BOS, spans and Q without); with shared positions
# the order of the spans does not matter; bad options, empty or missing span
# files and spans longer than the context are one-line errors with a non-zero
# exit. (Logit-level exactness against the ordinary prefill is test_spans.)
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
t_init cli_spans
WICK=${WICK_BIN:-build/wick}
M=models/stories260K/stories260K-f32.gguf
has() { # name, text, fragment
  case "$2" in *"$3"*) ok;; *) FAIL=$((FAIL+1)); printf 'FAIL: %s: no %s in\n  %s\n' "$1" "$3" "$2";; esac
}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
printf 'Lily was a little girl. She had a red ball and a big dog.' >"$TMP/a.txt"
printf 'Tom liked to run in the park with his friends every day.' >"$TMP/b.txt"
: >"$TMP/empty.txt"
gen() { "$WICK" generate -m "$M" --temp 0 -n 24 -t 1 "$@" 2>&1; }

for pos in sequential shared; do
  for anchor in prefix bos none; do
    on=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" --span "$TMP/b.txt" -p " One day" --anchor $anchor --positions $pos)
    off=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" --span "$TMP/b.txt" -p " One day" --anchor $anchor --positions $pos --no-span-cache)
    expect "span cache on = off ($anchor, $pos)" "$on" "$off"
    [ -n "$on" ]; expect "span output not empty ($anchor, $pos)" "$?" "0"
  done
done
# shared positions: the order of the spans does not matter
ab=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" --span "$TMP/b.txt" -p " One day" --positions shared)
ba=$(gen --prefix "Once upon a time" --span "$TMP/b.txt" --span "$TMP/a.txt" -p " One day" --positions shared)
expect "shared positions: order of spans" "$ab" "$ba"

# --json: the segments (P with BOS, spans and Q without special tokens)
json=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" -p " One day" --json)
has "--json segments" "$json" '"segments":{"prefix":[1,'
has "--json span_cached_tokens" "$json" '"span_cached_tokens":0'
p_ids=$("$WICK" tokenize -m "$M" -p "Once upon a time"); s_ids=$("$WICK" tokenize -m "$M" -f "$TMP/a.txt" --no-special)
q_ids=$("$WICK" tokenize -m "$M" -p " One day" --no-special)
has "--json prefix ids" "$json" "\"prefix\":$p_ids"
has "--json span ids" "$json" "\"spans\":[$s_ids]"
has "--json suffix ids" "$json" "\"suffix\":$q_ids"
# blend K covering every span token differs from the isolated spans (it is the ordinary prefill)
blend=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" --span "$TMP/b.txt" -p " One day" --blend-first-k 1000)
blend_off=$(gen --prefix "Once upon a time" --span "$TMP/a.txt" --span "$TMP/b.txt" -p " One day" --blend-first-k 1000 --no-span-cache)
expect "blend: span cache on = off" "$blend" "$blend_off"

# errors: one line, non-zero exit
out=$(gen --prefix x --span "$TMP/a.txt" -p q --anchor middle); rc=$?
expect "bad --anchor exits non-zero" "$rc" "1"; has "bad --anchor message" "$out" "wick: error: generate: --anchor must be prefix, bos or none"
out=$(gen --span "$TMP/a.txt" -p q --positions sideways); rc=$?
expect "bad --positions exits non-zero" "$rc" "1"; has "bad --positions message" "$out" "--positions must be sequential or shared"
out=$(gen --span "$TMP/empty.txt" -p q); rc=$?
expect "empty span exits non-zero" "$rc" "1"; has "empty span message" "$out" "is empty"
out=$(gen --prefix x -p q); rc=$?
expect "--prefix without --span exits non-zero" "$rc" "1"; has "--prefix without --span message" "$out" "need at least one --span"
out=$(gen --span "$TMP/a.txt" -p q --blend-first-k -3); rc=$?
expect "negative blend exits non-zero" "$rc" "1"
out=$(gen --span "$TMP/a.txt" --span "$TMP/b.txt" -p q --ctx 20); rc=$?
expect "spans longer than the context exit non-zero" "$rc" "1"; has "too long message" "$out" "context holds"
out=$(gen --span "$TMP/missing.txt" -p q); rc=$?
expect "missing span file exits non-zero" "$rc" "1"

finish
