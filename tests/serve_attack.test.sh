#!/usr/bin/env bash
# serve_attack.test.sh — a bounded attack on `wick serve` (loopback only,
# well under two minutes, everything it starts stopped on exit): malformed
# bodies on every POST route, 1,100 slow connections while a normal request
# must still succeed, a disconnect storm, then /health 200, nothing running
# or waiting, and the known greedy text; then SIGTERM ends the server with
# status 0. tests/js/serve_attack.mjs holds the checks. Under ASan+UBSan too
# (make test SAN=1).
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_attack
serve_need_node
[ -f "$STORIES" ] || skip "no stories260K model"

# 1,100 client sockets plus the server's: raise the open-file limit as far as allowed
ulimit -n "$(ulimit -Hn)" 2>/dev/null
slow=1100
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 2600 ]; then
  slow=$(( ($(ulimit -n) - 300) / 2 ))
  echo "note: open-file limit $(ulimit -n): $slow slow connections instead of 1100"
fi

want=", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
limit=$((1 << 20))
if serve_start S -m "$STORIES" --ctx 2048 -t 1 --parallel 4 --body-limit "$limit"; then
  run_js attack "$JS/serve_attack.mjs" --name attack --url "$S" --slow "$slow" --body-limit "$limit" \
    --prompt "Once upon a time" --n 40 --want-text "$want"
  if kill -0 "$S_PID" 2>/dev/null; then ok "the server is still running"; else bad "the server died (log follows)"; tail -n 20 "$S_LOG"; fi
  kill -TERM "$S_PID"
  for _ in $(seq 100); do kill -0 "$S_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$S_PID" 2>/dev/null; then bad "SIGTERM: still running after 10 s"
  else wait "$S_PID"; rc=$?; [ $rc = 0 ] && ok "SIGTERM: exits with status 0" || { bad "SIGTERM: exit status $rc"; tail -n 30 "$S_LOG"; }; fi
else
  bad "server did not start"
fi
finish
