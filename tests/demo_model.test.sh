#!/usr/bin/env bash
# demo_model.test.sh — the built-in demo model (models/stories260K, shipped in
# the repo): `wick generate` with no -m, from any working directory, gives the
# model's known greedy story; WICK_MODEL overrides it. Needs no ../shared.
. "$(dirname "$0")/lib.sh"
t_init demo_model
WICK=$(realpath "${WICK_BIN:-build/wick}")
story=', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.'
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
got=$(cd "$tmp" && "$WICK" generate -p "Once upon a time" -n 40 --temp 0)
expect "generate without -m" "$got" "$story"
got=$(cd "$tmp" && "$WICK" info | sed -n 's/^architecture: *//p')
expect "info without -m" "$got" "llama"
err=$(cd "$tmp" && WICK_MODEL=/nonexistent/model.gguf "$WICK" generate -p hi -n 1 2>&1 >/dev/null); rc=$?
expect "WICK_MODEL missing: exit status" "$rc" "1"
case "$err" in "wick: error: "*nonexistent*) ok;; *) bad "error line: $err";; esac
finish
