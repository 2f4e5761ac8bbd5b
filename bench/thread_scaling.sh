#!/usr/bin/env bash
# thread_scaling.sh — how decode and prefill scale from 1 to 2 threads, next
# to how the memory does. For each model, R rounds of `wick bench` with 1 and
# 2 threads back to back (-p 512 -n 128 -r 1); each round prints the 2-thread
# ÷ 1-thread ratios of prefill, of decode and of the bandwidth probe (median
# of each run's readings). Decode is bound by memory bandwidth, so its ratio
# can only follow the memory's: on a machine where one core already draws
# most of the bandwidth the two threads share, no decode kernel reaches 2×.
# The summary gives the medians over rounds, split by whether the memory's
# own ratio was at least 1.6 at the time.
# Usage: bench/thread_scaling.sh [BUILD_DIR] [ROUNDS] MODEL...
set -eu
build=${1:-build}; rounds=${2:-5}; shift 2
WICK="$build/wick"
PY=/usr/bin/python3
for m in "$@"; do
  rows=""
  for ((r = 0; r < rounds; r++)); do
    a=$("$WICK" bench -m "$m" -p 512 -n 128 -r 1 -t 1 --json)
    b=$("$WICK" bench -m "$m" -p 512 -n 128 -r 1 -t 2 --json)
    rows+="$a"$'\n'"$b"$'\n'
  done
  ROWS="$rows" "$PY" - "$m" <<'PY'
import json, os, statistics as st, sys
runs = [json.loads(l) for l in os.environ["ROWS"].splitlines() if l.strip()]
pairs = list(zip(runs[0::2], runs[1::2]))
print(sys.argv[1])
print("  round  pp 1t   pp 2t  ratio | tg 1t  tg 2t  ratio | bw 1t  bw 2t  ratio")
rat = []
for i, (a, b) in enumerate(pairs):
    pp, tg, bw = (b[k] / a[k] for k in ("prefill_tok_s", "decode_tok_s", "membw_gb_s"))
    rat.append((pp, tg, bw))
    print("  %5d %6.0f %7.0f %5.2fx | %5.1f %6.1f %5.2fx | %5.1f %6.1f %5.2fx" % (
        i, a["prefill_tok_s"], b["prefill_tok_s"], pp, a["decode_tok_s"], b["decode_tok_s"], tg,
        a["membw_gb_s"], b["membw_gb_s"], bw))
print("  median prefill ratio %.2fx over %d rounds" % (st.median(r[0] for r in rat), len(rat)))
for name, sel in (("memory ratio >= 1.6", [r for r in rat if r[2] >= 1.6]),
                  ("memory ratio < 1.6", [r for r in rat if r[2] < 1.6])):
    if sel:
        print("  %s: %d rounds, median decode ratio %.2fx, memory %.2fx" % (
            name, len(sel), st.median(r[1] for r in sel), st.median(r[2] for r in sel)))
PY
done
