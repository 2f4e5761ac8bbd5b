#!/usr/bin/env bash
# serve_hardening.test.sh — the defences of `wick serve` against hostile
# clients and careless operators, each checked where it lives:
#  1. HTTP (tests/js/serve_hardening.mjs --mode http): chunked bodies over
#     the limit, Transfer-Encoding, %00, 405, strict JSON, Content-Type,
#     Origin/Host checks and CORS, fields other engines define that wick
#     does not implement, logit_bias, seeds, token ids, /tokenize's default,
#     the counters' _total suffix.
#  2. keys (--mode keys): --api-key before 404, x-api-key, --metrics-key,
#     --allowed-origins.
#  3. connections (--mode conns): caps with eviction, 503 when every
#     connection is busy, the whole-request deadline (--header-timeout).
#  4. the process: client strings escaped in the -v log (newlines, ANSI
#     escapes), SIGUSR1 ignored, SIGHUP a clean shutdown; a model file
#     named so that its name would be ".." refused; oversized prompts (six
#     8 MB prompts at once) rejected without the memory they would take to
#     tokenize; the cache folder: created 0700 with 0600 files, refused when
#     others may write it or it cannot be created, a FIFO named like a block
#     file skipped (no hang at load), disk errors counted on /metrics.
# Loopback only; every server started here is stopped on exit.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_hardening
command -v curl >/dev/null || skip "curl not installed"
serve_need_node
[ -f "$STORIES" ] || skip "no stories260K model"

# ---- 1-3: HTTP, keys, connections
limit=$((1 << 20))
if serve_start A -m "$STORIES" --ctx 2048 -t 1 --parallel 2 --body-limit "$limit"; then
  run_js http "$JS/serve_hardening.mjs" --mode http --name http --url "$A" --body-limit "$limit"
  serve_stop "$A_PID"
else
  bad "server A did not start"
fi
if serve_start B -m "$STORIES" --ctx 512 -t 1 --api-key k-123456 --metrics-key m-654321 \
    --allowed-origins 'https://app.example.com, *.example.org'; then
  run_js keys "$JS/serve_hardening.mjs" --mode keys --name keys --url "$B" --key k-123456 --metrics-key m-654321
  serve_stop "$B_PID"
else
  bad "server B did not start"
fi
if serve_start C -m "$STORIES" --ctx 2048 -t 1 --parallel 2 --max-connections 8 --max-connections-per-ip 8 --header-timeout 3; then
  run_js conns "$JS/serve_hardening.mjs" --mode conns --name conns --url "$C" --max-conn 8 --header-timeout 3
  serve_stop "$C_PID"
else
  bad "server C did not start"
fi

echo "info: ${SECONDS} s"
# ---- 4: the process
# client strings in the access log are escaped
if serve_start D -m "$STORIES" --ctx 512 -t 1 -v; then
  curl -s -o /dev/null "$D/v1/completions" -H 'Content-Type: application/json' \
    --data-binary $'{"model":"x\\nINJECTED 200 fake line \\u001b[31mred","prompt":"a"}'
  curl -s -g -o /dev/null "$D/nope%0aINJECTED2%1b[2J"
  sleep 0.2
  if grep -aq $'\e' "$D_LOG" || grep -aq '^INJECTED' "$D_LOG"; then bad "raw newline or escape from a client in the log: $(grep -a INJECTED "$D_LOG" | head -3)"
  elif grep -aq 'INJECTED 200 fake line \\x1b\[31mred' "$D_LOG" && grep -aq '/nope\\x0aINJECTED2\\x1b\[2J' "$D_LOG"; then ok "client strings in the log are escaped (\\x0a, \\x1b)"
  else bad "the injected strings are not in the log as expected: $(grep -a INJECTED "$D_LOG" | head -3)"; fi
  kill -USR1 "$D_PID"; sleep 0.3
  kill -0 "$D_PID" 2>/dev/null && [ "$(curl -s -o /dev/null -w '%{http_code}' "$D/health")" = 200 ] && ok "SIGUSR1 is ignored" || bad "SIGUSR1 ended the server"
  curl -s -N --max-time 20 "$D/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt":"Once upon a time","max_tokens":400,"temperature":0,"ignore_eos":true,"stream":true}' >"$TMP/hup.out" 2>&1 &
  cpid=$!
  # the signal comes once the stream is under way (its first event is in)
  for _ in $(seq 200); do grep -q 'data: ' "$TMP/hup.out" 2>/dev/null && break; sleep 0.05; done
  kill -HUP "$D_PID"
  for _ in $(seq 50); do kill -0 "$D_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$D_PID" 2>/dev/null; then bad "SIGHUP: still running after 5 s"
  else wait "$D_PID"; rc=$?; [ $rc = 0 ] && ok "SIGHUP shuts down cleanly (status 0)" || bad "SIGHUP: exit status $rc"; fi
  wait "$cpid" 2>/dev/null
  grep -q 'data: ' "$TMP/hup.out" && ok "the stream open at SIGHUP got its data" || bad "the stream open at SIGHUP got nothing (in 10 s)"
else
  bad "server D did not start"
fi

echo "info: ${SECONDS} s"
# refused_start LABEL GREP ARGS...: `wick serve ARGS` must exit non-zero (within
# 5 s) saying GREP, without ever listening
refused_start() {
  local label=$1 want=$2 pid rc; shift 2
  "$WICK" serve --host 127.0.0.1 --port 0 "$@" >"$TMP/refused.out" 2>&1 &
  pid=$!; SERVE_PIDS+=("$pid")
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then bad "$label: the server started anyway"; serve_stop "$pid"; return; fi
  wait "$pid"; rc=$?
  if [ $rc != 0 ] && grep -qi -- "$want" "$TMP/refused.out" && ! grep -q listening "$TMP/refused.out"; then
    ok "$label: refused ($(head -c 150 "$TMP/refused.out" | head -1))"
  else
    bad "$label: status $rc: $(head -c 300 "$TMP/refused.out")"
  fi
}

echo "info: ${SECONDS} s"
# a client that asks for a long stream and never reads it does not hold a stopping server
if make_model "$TMP/tiny256.gguf" --arch llama --format gguf --shape tiny256 --dtype q8_0 --seed 3 &&
   serve_start R -m "$TMP/tiny256.gguf" --ctx 4096 -t 1; then
  node -e '
    const s = require("net").connect(Number(process.argv[1]), "127.0.0.1");
    const b = JSON.stringify({ messages: [{ role: "user", content: "hi" }], max_tokens: 4000, ignore_eos: true, stream: true,
      logprobs: true, top_logprobs: 20 });  /* about 5.7 MB of events: more than the socket buffers hold */
    s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\n\r\n${b}`);
    s.pause(); setTimeout(() => process.exit(0), 60000);' "${R##*:}" &
  npid=$!
  for _ in $(seq 150); do
    q=$(curl -s "$R/metrics" | sed -n 's/^vllm:generation_tokens_total{[^}]*} \([0-9]*\).*/\1/p')
    [ "${q:-0}" -ge 4000 ] && break
    sleep 0.2
  done
  [ "${q:-0}" -ge 4000 ] || bad "the unread stream's 4000 tokens were not generated (${q:-none})"
  kill -TERM "$R_PID"
  for _ in $(seq 100); do kill -0 "$R_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$R_PID" 2>/dev/null; then bad "a stream its client does not read kept the server from stopping for 10 s"
  else wait "$R_PID"; rc=$?; [ $rc = 0 ] && ok "a stream its client does not read: SIGTERM still ends the server (status 0)" || bad "unread stream: SIGTERM exit status $rc"; fi
  kill "$npid" 2>/dev/null; wait "$npid" 2>/dev/null
else
  bad "server R did not start"
fi

# a model whose name would be ".." (a file named "...gguf") is refused
mkdir -p "$TMP/m/sub" "$TMP/cd"
cp "$STORIES" "$TMP/m/sub/...gguf"
refused_start 'a model file "...gguf"' 'model name' -m "$TMP/m/sub/...gguf" --cache-dir "$TMP/cd/cache"
[ -z "$(ls -A "$TMP/cd" | grep -v '^cache$')" ] && ok "nothing written beside the cache folder" || bad "files beside the cache folder: $(ls -A "$TMP/cd")"

echo "info: ${SECONDS} s"
# oversized prompts: rejected before they cost the memory of tokenizing them
if serve_start E -m "$STORIES" --ctx 2048 -t 1 --body-limit $((16 << 20)); then
  node -e 'process.stdout.write(JSON.stringify({prompt: "once upon a time there was a girl ".repeat(260000), max_tokens: 1}))' >"$TMP/big.json"
  hwm0=$(awk '/VmHWM/ {print $2}' "/proc/$E_PID/status")
  cpids=()
  for i in 1 2 3 4 5 6; do
    curl -s -o "$TMP/big.$i.out" -w '%{http_code}\n' "$E/v1/completions" -H 'Content-Type: application/json' --data-binary "@$TMP/big.json" >"$TMP/big.$i.code" &
    cpids+=($!)
  done
  wait "${cpids[@]}"
  hwm1=$(awk '/VmHWM/ {print $2}' "/proc/$E_PID/status")
  codes=$(cat "$TMP"/big.*.code | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  if [ "$(cat "$TMP"/big.*.code | sort -u)" = 400 ] && grep -q context_length_exceeded "$TMP/big.1.out"; then ok "six 8 MB prompts at once → 400 context_length_exceeded"
  else bad "six 8 MB prompts: codes $codes: $(head -c 300 "$TMP/big.1.out")"; fi
  grow=$(( (hwm1 - hwm0) / 1024 ))
  if grep -aq __asan_init "$WICK"; then
    # AddressSanitizer keeps freed memory in quarantine and pads every block: its peak is not the program's
    echo "info: the server's peak memory grew $grow MB for them (not checked: AddressSanitizer build)"
  else
    [ "$grow" -lt 200 ] && ok "the server's peak memory grew $grow MB for them (< 200 MB; tokenizing them in full took over 350 MB)" || bad "the server's peak memory grew $grow MB for six 8 MB prompts"
  fi
  serve_stop "$E_PID"
else
  bad "server E did not start"
fi

echo "info: ${SECONDS} s"
# the cache folder
CD="$TMP/cache"
if serve_start F -m "$STORIES" --ctx 512 -t 1 --cache-dir "$CD"; then
  curl -s -o /dev/null "$F/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"$(printf 'once upon a time %.0s' $(seq 60))\",\"max_tokens\":2}"
  serve_stop "$F_PID"
  [ "$(stat -c %a "$CD")" = 700 ] && ok "the cache folder is created 0700" || bad "cache folder mode $(stat -c %a "$CD")"
  files=$(find "$CD" -name '*.wkv' | wc -l)
  bad_modes=$(find "$CD" -name '*.wkv' ! -perm 600 | wc -l)
  [ "$files" -gt 0 ] && [ "$bad_modes" = 0 ] && ok "its $files block files are 0600" || bad "$files block files, $bad_modes not 0600"
  dmodes=$(find "$CD" -type d ! -perm 700 | wc -l)
  [ "$dmodes" = 0 ] && ok "its folders are 0700" || bad "$dmodes folders not 0700"
  # a FIFO, a folder and a symlink named like block files: skipped, no hang
  sub=$(find "$CD" -mindepth 1 -maxdepth 1 -type d | head -1)
  mkfifo "$sub/00000000000000000000000000000001.wkv"
  mkdir "$sub/00000000000000000000000000000002.wkv"
  ln -s /dev/zero "$sub/00000000000000000000000000000003.wkv"
  if serve_start G -m "$STORIES" --ctx 512 -t 1 --cache-dir "$CD"; then
    ok "a FIFO, a folder and a symlink named like block files do not stop the server loading"
    m=$(curl -s "$G/metrics")
    echo "$m" | grep -Eq '^wick:cache_disk_errors_total\{[^}]*kind="skipped"[^}]*\} [3-9]' && ok "they are counted: wick:cache_disk_errors_total{kind=\"skipped\"}" \
      || bad "no skipped count on /metrics: $(echo "$m" | grep cache_disk_errors | head -5)"
    grep -q 'warning' "$G_LOG" && ok "and a warning is logged" || bad "no warning logged for the skipped files"
    serve_stop "$G_PID"
  else
    bad "the server did not start with a FIFO in its cache folder"
  fi
  rm -f "$sub/00000000000000000000000000000001.wkv" "$sub/00000000000000000000000000000003.wkv"; rmdir "$sub/00000000000000000000000000000002.wkv"
fi
echo "info: ${SECONDS} s"
# refused: a cache folder others may write, or one that cannot be created
mkdir -p "$TMP/open"; chmod 0777 "$TMP/open"
refused_start "a cache folder writable by others" 'others' -m "$STORIES" --cache-dir "$TMP/open"
: >"$TMP/afile"
refused_start "a cache folder that cannot be created" 'cache' -m "$STORIES" --cache-dir "$TMP/afile/cache"

echo "info: ${SECONDS} s"
finish
