#!/usr/bin/env bash
# grammar_vs_llama_server.sh — structured output end to end against
# llama-server: `wick serve` and a llama-server (built from source, given as
# LLAMA_SERVER) on the same file, each sent the same /v1/completions
# requests, without and with llama.cpp's "json_schema" field (a spelling
# both servers take), one stream and N concurrent streams, alternating
# engine and mode within each round. Every request samples at temperature 1
# (seeded) for exactly TOKENS tokens: the schema (an array of at least 200
# {id, name} objects) cannot end sooner and ignore_eos holds the plain ones.
# Prints per round and mode the aggregate decode tok/s (completion tokens
# over the wall time of the round's requests) and, at the end, the medians
# and each engine's constrained/plain ratio.
# Usage: bench/grammar_vs_llama_server.sh MODEL.gguf LLAMA_SERVER [BUILD_DIR] [THREADS] [ROUNDS] [TOKENS] [STREAMS]
set -eu
model=$1; llama=$2; build=${3:-build}; threads=${4:-2}; rounds=${5:-3}; n=${6:-128}; streams=${7:-8}
tmp=$(mktemp -d)
wport=18431; lport=18432
schema='{"type":"array","minItems":200,"items":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["id","name"],"additionalProperties":false}}'
"$build/wick" serve -m "$model" --host 127.0.0.1 --port $wport -t "$threads" -np "$streams" > "$tmp/wick.log" 2>&1 &
wpid=$!
"$llama" -m "$model" --host 127.0.0.1 --port $lport -t "$threads" -np "$streams" -c $((streams * 512)) \
  --webui none > "$tmp/llama.log" 2>&1 &
lpid=$!
trap 'kill $wpid $lpid 2>/dev/null; wait $wpid $lpid 2>/dev/null; rm -rf "$tmp"' EXIT
for port in $wport $lport; do
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && break; sleep 0.2; done
done

# one request: prints its completion tokens
one() { # port seed constrained
  local extra=""
  [ "$3" = 1 ] && extra=",\"json_schema\":$schema"
  curl -s "http://127.0.0.1:$1/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"The list:\",\"max_tokens\":$n,\"temperature\":1,\"seed\":$2,\"ignore_eos\":true,\"cache_prompt\":false$extra}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["completion_tokens"])'
}
export -f one; export n schema

# aggregate tok/s of c concurrent requests
run() { # port constrained c round
  local t0 t1 toks
  t0=$(date +%s.%N)
  toks=$(seq "$3" | xargs -P "$3" -I{} bash -c "one $1 \$(( $4 * 100 + {} )) $2" | paste -sd+ | bc)
  t1=$(date +%s.%N)
  echo "scale=2; $toks / ($t1 - $t0)" | bc
}

one $wport 1 1 > /dev/null; one $lport 1 1 > /dev/null # warm-up
: > "$tmp/results"
for r in $(seq "$rounds"); do
  for c in 1 "$streams"; do
    for eng in wick llama; do
      port=$wport; [ $eng = llama ] && port=$lport
      p=$(run $port 0 "$c" "$r"); k=$(run $port 1 "$c" "$r")
      echo "round $r $eng streams $c: plain $p constrained $k tok/s"
      echo "$eng $c $p $k" >> "$tmp/results"
    done
  done
done
python3 - "$tmp/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for eng in ("wick", "llama"):
    for c in sorted({int(r[1]) for r in rows}):
        rs = [r for r in rows if r[0] == eng and int(r[1]) == c]
        p = statistics.median(float(r[2]) for r in rs); k = statistics.median(float(r[3]) for r in rs)
        ratio = statistics.median(float(r[3]) / float(r[2]) for r in rs)
        print(f"{eng:5} streams {c}: plain {p:.1f} tok/s, json_schema {k:.1f} tok/s, ratio {ratio:.3f} (median of {len(rs)})")
EOF
