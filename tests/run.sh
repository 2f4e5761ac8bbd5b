#!/usr/bin/env bash
# run.sh — runs every test program in BUILD/tests and every tests/*.test.sh
# script, then prints one closing line "N passed, N failed" (suites, not checks).
# Usage: tests/run.sh BUILD_DIR
set -u
build=${1:-build}
export WICK_BIN="$PWD/$build/wick"
export WICK_BUILD="$PWD/$build"
passed=0; failed=0; failures=()
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  if "$t"; then passed=$((passed+1)); else failed=$((failed+1)); failures+=("$name"); fi
done
for s in tests/*.test.sh; do
  [ -f "$s" ] || continue
  name=$(basename "$s")
  if bash "$s"; then passed=$((passed+1)); else failed=$((failed+1)); failures+=("$name"); fi
done
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
