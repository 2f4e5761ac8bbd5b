#!/usr/bin/env bash
# serve_kv_events.test.sh — `wick serve --kv-events`: the vLLM KV events
# (ZMQ PUB, frames [topic, seq, msgpack batch]) as a subscriber sees them.
# tests/kv_events_sub (built by `make test`) decodes and checks every message
# and keeps the set of blocks stored and not removed.
#
#  1. connect mode: the subscriber binds tcp://127.0.0.1:* and the server
#     connects to it. stories260K with --ctx 512 --parallel 2 --kv-mb 1 (a
#     pool of 6 blocks of 128 positions), 17 completions of 150-400 prompt
#     tokens, some sharing prefixes, some at once: evictions must happen;
#     every message must be well formed (topic kv@127.0.0.1:PORT@MODEL, seq
#     0, 1, 2, ..., BlockStored with 128 token ids, block_size 128 and a known
#     parent, BlockRemoved of a stored block); every prompt's full blocks must
#     have been stored as one chain (first block = its first 128 tokens from
#     POST /tokenize, each next one's parent the block before), and every
#     chain root must be such a first block; once idle, the blocks live at
#     the subscriber must equal wick:prefix_cache_blocks on /metrics; SIGTERM
#     must end with AllBlocksCleared (and exit status 0).
#  2. bind mode: the server binds ipc://, the subscriber connects; a custom
#     --kv-events-topic; the same checks on a few requests.
#  3. --no-prefix-cache: no messages at all; bad endpoints: the server does
#     not start and says why.
# Every server and subscriber started here is stopped on exit; loopback and
# ipc only.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_kv_events
command -v curl >/dev/null || skip "curl not installed"
serve_need_node
SUB="${WICK_BUILD:-$(dirname "$WICK")}/tests/kv_events_sub"
[ -x "$SUB" ] || skip "$SUB not built (make test builds it)"
"$WICK" serve --help 2>&1 | grep -q -- --kv-events || skip "wick serve has no --kv-events"
[ -f "$STORIES" ] || skip "no stories260K model"
NAME=$(basename "$STORIES" .gguf)

# sub_start VAR DIR ARGS...: a subscriber in the background (VAR_PID = its pid)
sub_start() {
  local var=$1 dir=$2; shift 2
  mkdir -p "$dir"
  "$SUB" --dir "$dir" --timeout 120 "$@" >"$dir/out" 2>"$dir/err" &
  local pid=$!
  SERVE_PIDS+=("$pid")
  printf -v "${var}_PID" '%s' "$pid"
}
# state DIR KEY: a value from the subscriber's state file
state() { sed -n "s/^$2 //p" "$1/state" 2>/dev/null; }
# metric URL NAME: the model's value of a gauge
metric() { curl -s --max-time 5 "$1/metrics" | grep -F "$2{model_name=\"$NAME\"}" | awk '{print $2}'; }
# idle URL: wait (<= 30 s) until no request runs or waits
idle() {
  local i
  for i in $(seq 300); do
    [ "$(metric "$1" vllm:num_requests_running)" = 0 ] && [ "$(metric "$1" vllm:num_requests_waiting)" = 0 ] && return 0
    sleep 0.1
  done
  return 1
}
# same_live URL DIR: the subscriber's live blocks reach the server's count (<= 5 s)
same_live() {
  local i want have
  for i in $(seq 50); do
    want=$(metric "$1" wick:prefix_cache_blocks); have=$(state "$2" live)
    [ -n "$want" ] && [ "$want" = "$have" ] && { LIVE=$have; return 0; }
    sleep 0.1
  done
  LIVE="subscriber $have, /metrics ${want:-none}"
  return 1
}
# stop_all SERVER_PID SUB_PID DIR LABEL: SIGTERM the server, then the
# subscriber must have seen AllBlocksCleared and exited 0
stop_all() {
  local spid=$1 bpid=$2 dir=$3 label=$4 rc i
  kill -TERM "$spid"; wait "$spid"; rc=$?
  [ $rc = 0 ] && ok "$label: server exits 0 on SIGTERM" || bad "$label: server exit status $rc after SIGTERM"
  for i in $(seq 100); do kill -0 "$bpid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$bpid" 2>/dev/null; then
    bad "$label: no AllBlocksCleared within 10 s of SIGTERM (state: $(tr '\n' ' ' <"$dir/state"))"
    kill "$bpid" 2>/dev/null
  fi
  wait "$bpid"; rc=$?
  sed 's/^/  | /' "$dir/out" "$dir/err"
  [ $rc = 0 ] && ok "$label: subscriber saw AllBlocksCleared, no check failed" || bad "$label: subscriber exit status $rc"
  [ "$(state "$dir" cleared)" = 1 ] && [ "$(state "$dir" live)" = 0 ] && ok "$label: one AllBlocksCleared, nothing live after it" ||
    bad "$label: cleared $(state "$dir" cleared), live $(state "$dir" live) at the end"
}

# The requests: node drives them (JSON escaping, concurrency); writes each
# prompt's token ids (POST /tokenize) as one JSON line to OUT.
cat >"$TMP/drive.mjs" <<'JS'
import { writeFileSync } from 'node:fs';
const [url, model, out, which] = process.argv.slice(2);
const A = 'Once upon a time there was a little girl named Lily. She loved to play outside in the park. ';
const B = 'One day, a big dog came to the garden and barked at the birds in the tree. ';
const C = 'Tom and Sue went to the beach with their mom. They built a big castle out of sand. ';
let prompts = [A.repeat(6), A.repeat(6) + B.repeat(4), B.repeat(8), C.repeat(7), A.repeat(12),
  C.repeat(4) + A.repeat(5), B.repeat(5) + C.repeat(6), A.repeat(6) + C.repeat(6)];
if (which === 'small') prompts = [A.repeat(7), A.repeat(7) + C.repeat(3), B.repeat(9)];
const post = async (path, body) => {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body) });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
};
const toks = [];
for (const p of prompts) toks.push((await post('/tokenize', { model, prompt: p, add_special: true })).tokens);
const complete = async (i) => {
  const j = await post('/v1/completions', { model, prompt: prompts[i], max_tokens: 4, temperature: 0 });
  if (j.usage.prompt_tokens !== toks[i].length)
    throw new Error(`prompt ${i}: ${j.usage.prompt_tokens} prompt tokens, /tokenize gave ${toks[i].length}`);
};
const n = prompts.length;
for (let i = 0; i < n; i++) await complete(i);              // one at a time
if (which !== 'small') {
  await Promise.all([0, 2, 4].map(complete));                 // three at once (--parallel 2: one queues)
  await Promise.all([1, 5, 6].map(complete));
  await Promise.all([3, 7, 0].map(complete));
} else {
  await Promise.all([0, 1, 2].map(complete));
}
writeFileSync(out, toks.map((t) => JSON.stringify(t)).join('\n') + '\n');
console.log(`drive: ${n} prompts of ${toks.map((t) => t.length).join(', ')} tokens`);
JS
# The chains: every prompt's full blocks stored in order; every root is a prompt's first block.
cat >"$TMP/chains.mjs" <<'JS'
import { readFileSync } from 'node:fs';
const [stored, prompts] = process.argv.slice(2);
const lines = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const evs = lines(stored), toks = lines(prompts);
const byParent = new Map();
for (const e of evs) {
  const k = `${e.parent}|${e.tokens.join(',')}`;
  if (!byParent.has(k)) byParent.set(k, e.hash);
}
let fail = 0, blocks = 0;
const firsts = new Set();
toks.forEach((t, i) => {
  let parent = null;
  for (let b = 0; (b + 1) * 128 <= t.length; b++) {
    const chunk = t.slice(b * 128, (b + 1) * 128);
    if (b === 0) firsts.add(chunk.join(','));
    const h = byParent.get(`${parent}|${chunk.join(',')}`);
    if (h === undefined) { console.log(`FAIL: prompt ${i}: block ${b} never stored (after parent ${parent})`); fail++; return; }
    parent = h; blocks++;
  }
});
for (const e of evs)
  if (e.parent === null && !firsts.has(e.tokens.join(','))) {
    console.log(`FAIL: root block ${e.hash} is not the first 128 tokens of a prompt`); fail++;
  }
console.log(`chains: ${toks.length} prompts, ${blocks} prompt blocks found in ${evs.length} BlockStored events`);
process.exit(fail ? 1 : 0);
JS

# ---- 1. connect mode (the subscriber binds)
D="$TMP/a"
sub_start A "$D" --bind 'tcp://127.0.0.1:*' --until-cleared
for _ in $(seq 100); do [ -s "$D/endpoint" ] && break; sleep 0.1; done
EP=$(cat "$D/endpoint" 2>/dev/null)
if [ -z "$EP" ]; then
  bad "subscriber did not bind: $(cat "$D/err")"
elif serve_start S -m "$STORIES" -t 2 --ctx 512 --parallel 2 --kv-mb 1 --kv-events "$EP"; then
  sleep 0.5 # the connection and the subscription reach the server (seq 0 must arrive)
  PORT=${S##*:}
  if node "$TMP/drive.mjs" "$S" "$NAME" "$TMP/prompts.jsonl" all; then ok "17 completions"; else bad "requests failed"; fi
  idle "$S" || bad "the server did not go idle"
  if same_live "$S" "$D"; then ok "live blocks at the subscriber = wick:prefix_cache_blocks = $LIVE"
  else bad "live blocks differ: $LIVE"; fi
  [ "$(state "$D" topic)" = "kv@127.0.0.1:$PORT@$NAME" ] && ok "topic kv@127.0.0.1:$PORT@$NAME" ||
    bad "topic '$(state "$D" topic)', want kv@127.0.0.1:$PORT@$NAME"
  [ "$(state "$D" errors)" = 0 ] && ok "$(state "$D" messages) messages well formed" || bad "subscriber errors: $(cat "$D/err")"
  rem=$(state "$D" removed); st=$(state "$D" stored)
  [ "${rem:-0}" -gt 0 ] && ok "evictions: $st stored, $rem removed" || bad "no BlockRemoved ($st stored): the pool did not fill"
  [ "$(state "$D" seq)" = $(($(state "$D" messages) - 1)) ] && ok "seq 0..$(state "$D" seq)" || bad "seq $(state "$D" seq) after $(state "$D" messages) messages"
  if node "$TMP/chains.mjs" "$D/stored.jsonl" "$TMP/prompts.jsonl"; then ok "prompt chains and roots"; else bad "prompt chains"; fi
  stop_all "$S_PID" "$A_PID" "$D" connect
else
  bad "server with --kv-events $EP did not start"
fi

# ---- 2. bind mode (ipc://, the server binds), custom topic
D="$TMP/b"
mkdir -p "$D"
if serve_start S2 -m "$STORIES" -t 2 --ctx 512 --parallel 2 --kv-mb 1 --kv-events "ipc://$TMP/kv.sock" \
     --kv-events-topic "kv@10.1.2.3@my-model"; then
  sub_start B "$D" --connect "ipc://$TMP/kv.sock" --until-cleared
  sleep 0.5
  if node "$TMP/drive.mjs" "$S2" "$NAME" "$TMP/prompts2.jsonl" small; then ok "bind: 6 completions"; else bad "bind: requests failed"; fi
  idle "$S2" || bad "bind: the server did not go idle"
  if same_live "$S2" "$D"; then ok "bind: live blocks = wick:prefix_cache_blocks = $LIVE"; else bad "bind: live blocks differ: $LIVE"; fi
  [ "$(state "$D" topic)" = "kv@10.1.2.3@my-model" ] && ok "bind: --kv-events-topic" || bad "bind: topic '$(state "$D" topic)'"
  [ "$(state "$D" errors)" = 0 ] && [ "$(state "$D" messages)" -gt 0 ] && ok "bind: $(state "$D" messages) messages well formed" ||
    bad "bind: $(state "$D" messages) messages, errors: $(cat "$D/err")"
  if node "$TMP/chains.mjs" "$D/stored.jsonl" "$TMP/prompts2.jsonl"; then ok "bind: prompt chains"; else bad "bind: prompt chains"; fi
  stop_all "$S2_PID" "$B_PID" "$D" bind
else
  bad "server with --kv-events ipc://... did not start"
fi

# ---- 3. no prefix cache: nothing published; bad endpoints refused
D="$TMP/c"
sub_start C "$D" --bind 'tcp://127.0.0.1:*'
for _ in $(seq 100); do [ -s "$D/endpoint" ] && break; sleep 0.1; done
if serve_start S3 -m "$STORIES" -t 2 --no-prefix-cache --kv-events "$(cat "$D/endpoint")"; then
  sleep 0.3
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$S3/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt":"Once upon a time there was a little girl named Lily. She loved to play outside in the park. Once upon a time there was a little girl named Lily. She loved to play outside in the park.","max_tokens":4}')
  [ "$code" = 200 ] || bad "no-prefix-cache: completion status $code"
  serve_stop "$S3_PID"
  sleep 0.3
  [ "$(state "$D" messages)" = 0 ] && ok "--no-prefix-cache: no messages" || bad "--no-prefix-cache: $(state "$D" messages) messages"
else
  bad "server with --no-prefix-cache --kv-events did not start"
fi
kill "$C_PID" 2>/dev/null; wait "$C_PID" 2>/dev/null
for ep in bogus "ipc://$TMP/no/such/dir/kv.sock"; do
  out=$(timeout 20 "$WICK" serve --host 127.0.0.1 --port 0 -m "$STORIES" --kv-events "$ep" 2>&1); rc=$?
  if [ $rc != 0 ] && [[ $out == *"KV events endpoint \"$ep\""* ]]; then ok "--kv-events $ep refused: $out"
  else bad "--kv-events $ep: status $rc, output: $out"; fi
done

finish
