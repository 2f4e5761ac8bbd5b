#!/usr/bin/env bash
# serve_webui.test.sh — the built-in web chat of `wick serve` and CORS.
# One server on 127.0.0.1 (port 0; the demo model stories260K, --ctx 4096,
# --api-key, --allowed-origins 'http://app.test:*'), stopped here:
#  - curl: / is "Ollama is running" for curl and Ollama clients, the page for
#    Accept: text/html (no key needed), its files under /webui/ with their
#    Content-Type, the Content-Security-Policy, an ETag (304 on
#    If-None-Match); the API still wants the key; CORS preflights from an
#    allowed origin (the allow headers) and from another (403, none);
#  - tests/js/webui.mjs in headless Chromium (puppeteer-core; SKIP without
#    /usr/bin/chromium): key in the settings, model picker, a streamed reply
#    (= the API's at temperature 0), a document attached as a span and reused
#    on the second question, stop, conversations, markdown sanitized, a
#    screenshot (build/webui.png), and a cross-origin fetch from app.test
#    (works) and evil.test (refused), both mapped to 127.0.0.1.
# WEBUI_DOCS_SHOT=1 also writes docs/webui.png (the README's screenshot).
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
serve_init serve_webui
[ -f "$STORIES" ] || skip "$STORIES not found (the demo model is missing)"
command -v curl >/dev/null || skip "curl not installed"

KEY=webui-test-key
if ! serve_start S -m "$STORIES" --ctx 4096 -t 1 --api-key "$KEY" --allowed-origins 'http://app.test:*'; then
  bad "the server did not start"; finish
fi
MODEL=$(basename "$STORIES" .gguf)

# hdr FILE NAME: the value of a response header in a curl -D dump
hdr() { grep -i "^$2:" "$1" | head -n1 | cut -d' ' -f2- | tr -d '\r'; }

body=$(curl -s --max-time 10 "$S/")
expect "GET / (curl): Ollama's answer" "$body" "Ollama is running"
curl -s --max-time 10 -D "$TMP/h" -o "$TMP/page" -H 'Accept: text/html,application/xhtml+xml,*/*;q=0.8' "$S/"
expect "GET / (browser): status" "$(head -n1 "$TMP/h" | cut -d' ' -f2)" 200
expect "GET / (browser): Content-Type" "$(hdr "$TMP/h" Content-Type)" "text/html; charset=utf-8"
grep -q '<title>wick chat</title>' "$TMP/page"; check test $? -eq 0
csp=$(hdr "$TMP/h" Content-Security-Policy)
[[ $csp == "default-src 'none'; script-src 'self'; style-src 'self'; "* && $csp != *http* ]]; check test $? -eq 0 || echo "  CSP: $csp"
expect "GET / (browser): Vary" "$(grep -ci '^Vary: Accept' "$TMP/h")" 1
etag=$(hdr "$TMP/h" ETag)
[[ $etag =~ ^\"[0-9a-f]{16}\"$ ]]; check test $? -eq 0 || echo "  ETag: $etag"
expect "GET / (browser): Cache-Control" "$(hdr "$TMP/h" Cache-Control)" "no-cache"
expect "GET / again with If-None-Match: 304" \
  "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -H 'Accept: text/html' -H "If-None-Match: $etag" "$S/")" 304
for f in "app.js text/javascript" "marked.min.js text/javascript" "purify.min.js text/javascript" "app.css text/css"; do
  set -- $f
  got=$(curl -s --max-time 10 -o /dev/null -w '%{http_code} %{content_type}' "$S/webui/$1")
  expect "GET /webui/$1 without the key" "$got" "200 $2; charset=utf-8"
done
expect "GET /webui/nothing.js: 404" "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$S/webui/nothing.js")" 404
expect "POST /webui/app.js: not served" "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -d '{}' "$S/webui/app.js")" 401
expect "GET /v1/models without the key: 401" "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$S/v1/models")" 401

# preflights: OPTIONS with Origin, Access-Control-Request-Method/-Headers
preflight() {
  curl -s --max-time 10 -D "$TMP/p" -o /dev/null -X OPTIONS -H "Origin: $1" -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: authorization,content-type' "$S/v1/chat/completions"
  head -n1 "$TMP/p" | cut -d' ' -f2
}
expect "preflight from http://app.test:3000: 200" "$(preflight http://app.test:3000)" 200
expect "  Access-Control-Allow-Origin" "$(hdr "$TMP/p" Access-Control-Allow-Origin)" "http://app.test:3000"
expect "  Access-Control-Allow-Headers" "$(hdr "$TMP/p" Access-Control-Allow-Headers)" "authorization,content-type"
expect "  Access-Control-Allow-Methods" "$(hdr "$TMP/p" Access-Control-Allow-Methods)" "GET, POST"
expect "  Access-Control-Allow-Credentials" "$(hdr "$TMP/p" Access-Control-Allow-Credentials)" "true"
expect "preflight from http://evil.test:3000: 403" "$(preflight http://evil.test:3000)" 403
expect "  no Access-Control-Allow-Origin" "$(hdr "$TMP/p" Access-Control-Allow-Origin)" ""
expect "preflight from https://app.test (another scheme): 403" "$(preflight https://app.test)" 403

if [ ! -x /usr/bin/chromium ]; then
  skip_part "/usr/bin/chromium not installed (apt-get install chromium): the browser checks did not run"
else
  serve_need_npm puppeteer-core
  printf '%s\n' "Lily had a red ball. She liked to play with it in the park every day." >"$TMP/lily.txt"
  mkdir -p "$(dirname "$WICK")"
  shot="$(dirname "$WICK")/webui.png"
  extra=(); [ "${WEBUI_DOCS_SHOT:-0}" = 1 ] && extra=(--docs-shot docs/webui.png)
  run_js webui "$JS/webui.mjs" --url "$S" --key "$KEY" --model "$MODEL" --doc "$TMP/lily.txt" --shot "$shot" "${extra[@]}"
fi
if kill -0 "$S_PID" 2>/dev/null; then ok "the server is still running"; else bad "the server died"; tail -n 20 "$S_LOG"; fi
serve_stop "$S_PID"
finish
