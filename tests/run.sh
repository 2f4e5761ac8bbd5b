#!/usr/bin/env bash
# run.sh — runs every test program in BUILD/tests (test_*) and every
# tests/*.test.sh script, several at once, each under a time limit; prints
# each suite's output as it ends with its time, then one closing line
# "N passed, N failed" (suites, not checks) and the slowest suites.
# Usage: tests/run.sh [-j JOBS] [-t SECONDS] BUILD_DIR [NAME_PREFIX]
#   -j JOBS     suites run at once (default $TEST_JOBS, else 2)
#   -t SECONDS  a suite running longer is killed and fails (default $TEST_TIMEOUT, else 1800)
#   NAME_PREFIX only suites whose name starts with it (make test T=serve_)
set -u
jobs=${TEST_JOBS:-2}
limit=${TEST_TIMEOUT:-1800}
while getopts "j:t:" o; do
  case $o in
    j) jobs=$OPTARG ;;
    t) limit=$OPTARG ;;
    *) echo "usage: tests/run.sh [-j JOBS] [-t SECONDS] BUILD_DIR [NAME_PREFIX]"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
build=${1:-build}
filter=${2:-}
export WICK_BIN="$PWD/$build/wick"
export WICK_BUILD="$PWD/$build"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# the suites: name and command; the ones known to take longest first, so
# that they do not end up running alone at the end
slow_first="test_quant_kernels reference_quant.test.sh reference.test.sh serve_basic.test.sh llamacpp_gguf.test.sh"
names=(); cmds=()
add() { [[ -n "$filter" && "$1" != "$filter"* ]] && return; names+=("$1"); cmds+=("$2"); }
for s in $slow_first; do
  if [[ $s == *.test.sh ]]; then [ -f "tests/$s" ] && add "$s" "bash tests/$s"
  else [ -x "$build/tests/$s" ] && add "$s" "$build/tests/$s"; fi
done
for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  n=$(basename "$t"); [[ " $slow_first " == *" $n "* ]] && continue
  add "$n" "$t"
done
for s in tests/*.test.sh; do
  [ -f "$s" ] || continue
  n=$(basename "$s"); [[ " $slow_first " == *" $n "* ]] && continue
  add "$n" "bash $s"
done
[ ${#names[@]} -gt 0 ] || { echo "no suite matches '$filter'"; exit 1; }

passed=0; failed=0; failures=(); times=()
declare -A start_of
finish() { # index rc
  local i=$1 rc=$2 n=${names[$1]} secs
  secs=$(( $(date +%s%N) / 1000000 - start_of[$1] ))
  secs=$(awk -v ms="$secs" 'BEGIN { printf "%.1f", ms / 1000 }')
  echo "=== $n ($secs s)"
  cat "$logs/$i.log"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL: $n killed after $limit s"; fi
  if [ "$rc" = 0 ]; then passed=$((passed+1)); echo "--- $n: ok ($secs s)"
  else failed=$((failed+1)); failures+=("$n"); echo "--- $n: FAILED, status $rc ($secs s)"; fi
  times+=("$secs $n")
}
declare -A index_of
running=0; next=0; total=${#names[@]}
while [ $next -lt $total ] || [ $running -gt 0 ]; do
  while [ $running -lt "$jobs" ] && [ $next -lt $total ]; do
    start_of[$next]=$(( $(date +%s%N) / 1000000 ))
    timeout --kill-after=10 "$limit" ${cmds[$next]} >"$logs/$next.log" 2>&1 &
    index_of[$!]=$next
    running=$((running+1)); next=$((next+1))
  done
  done_pid=""
  wait -n -p done_pid; rc=$?
  [ -n "$done_pid" ] || continue
  running=$((running-1))
  finish "${index_of[$done_pid]}" "$rc"
done
echo "slowest suites:"; printf '%s\n' "${times[@]}" | sort -rn | head -n 8 | sed 's/^/  /'
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
