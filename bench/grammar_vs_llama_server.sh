#!/usr/bin/env bash
# grammar_vs_llama_server.sh — structured output end to end against
# llama-server: `wick serve` and a llama-server (built from source, given as
# LLAMA_SERVER) on the same file, each sent the same /v1/completions
# requests, without and with llama.cpp's "json_schema" field (a spelling
# both servers take), one stream and N concurrent streams, alternating
# engine and mode within each round. Every request samples at temperature 1
# (seeded) for exactly TOKENS tokens: the schema (an array of at least 200
# {id, name} objects) cannot end sooner and ignore_eos holds the plain ones.
# Prints per round and mode the aggregate tok/s (completion tokens over the
# wall time of the requests, sent at once from one client process, prompt
# and HTTP included) and, at the end, the medians and each engine's
# constrained/plain ratio. LLAMA_SERVER "-" runs wick alone.
# Usage: bench/grammar_vs_llama_server.sh MODEL.gguf LLAMA_SERVER|- [BUILD_DIR] [THREADS] [ROUNDS] [TOKENS] [STREAMS]
set -eu
model=$(realpath "$1"); llama=$2; [ "$llama" = - ] || llama=$(realpath "$llama"); build=${3:-build}; threads=${4:-2}; rounds=${5:-3}; n=${6:-128}; streams=${7:-8}
tmp=$(mktemp -d)
wport=18431; lport=18432
schema='{"type":"array","minItems":200,"items":{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["id","name"],"additionalProperties":false}}'
"$build/wick" serve -m "$model" --host 127.0.0.1 --port $wport -t "$threads" -np "$streams" > "$tmp/wick.log" 2>&1 &
wpid=$!
lpid=
if [ "$llama" != - ]; then
  # (from the scratch folder: it writes a llama.log where it runs)
  (cd "$tmp" && exec "$llama" -m "$model" --host 127.0.0.1 --port $lport -t "$threads" -np "$streams" \
    -c $((streams * 512)) --webui none > "$tmp/llama.out" 2>&1) &
  lpid=$!
else
  lport=0
fi
trap 'kill $wpid $lpid 2>/dev/null; wait $wpid $lpid 2>/dev/null; rm -rf "$tmp"' EXIT
for port in $wport $lport; do
  [ "$port" = 0 ] && continue
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && break; sleep 0.2; done
done

python3 - "$wport" "$lport" "$rounds" "$n" "$streams" "$schema" <<'EOF'
import concurrent.futures, json, statistics, sys, time, urllib.request
wport, lport, rounds, n, streams = map(int, sys.argv[1:6])
schema = json.loads(sys.argv[6])

def one(port, seed, constrained):
    body = {"prompt": "The list:", "max_tokens": n, "temperature": 1, "seed": seed, "ignore_eos": True,
            "cache_prompt": False}
    if constrained:
        body["json_schema"] = schema
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)["usage"]["completion_tokens"]

def run(port, constrained, c, rnd):
    """aggregate tok/s of c concurrent requests: completion tokens over the wall time"""
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(c) as ex:
        toks = sum(ex.map(lambda i: one(port, rnd * 100 + i, constrained), range(c)))
    return toks / (time.perf_counter() - t0)

ports = {"wick": wport, "llama": lport} if lport else {"wick": wport}
for p in ports.values():
    one(p, 1, True)  # warm-up: the vocabulary trie, the schema's first compile
res = []
for rnd in range(1, rounds + 1):
    for c in (1, streams):
        for eng, port in ports.items():
            p, k = run(port, False, c, rnd), run(port, True, c, rnd)
            print(f"round {rnd} {eng} streams {c}: plain {p:.1f} constrained {k:.1f} tok/s", flush=True)
            res.append((eng, c, p, k))
for eng in ports:
    for c in (1, streams):
        rs = [r for r in res if r[0] == eng and r[1] == c]
        p = statistics.median(r[2] for r in rs); k = statistics.median(r[3] for r in rs)
        ratio = statistics.median(r[3] / r[2] for r in rs)
        print(f"{eng:5} streams {c}: plain {p:.1f} tok/s, json_schema {k:.1f} tok/s, ratio {ratio:.3f} (median of {len(rs)})")
EOF
