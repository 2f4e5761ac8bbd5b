# serve_common.sh — sourced by tests/serve_*.test.sh: starts `wick serve` on
# loopback, waits for /health, and kills every server it started on exit.
# The counting and skipping helpers (ok, bad, skip, skip_part, finish) are
# tests/lib.sh's, which this file sources.
#
#   serve_init NAME            the suite's name; sets WICK, SHARED, JS, TMP,
#                              STORIES (../shared's stories260K, else the same
#                              file shipped as the demo model); traps EXIT
#   serve_need_node            skips without node
#   serve_need_npm [PKG...]    installs the pinned clients (openai, ollama, and
#                              PKG...) into tests/js/node_modules once (one install
#                              at a time: suites run in parallel); skips without
#                              npm/registry
#   serve_start VAR ARGS...    starts `$WICK serve --host 127.0.0.1 --port 0 ARGS...`,
#                              parses the port it prints, waits for GET /health = 200;
#                              sets VAR to the base URL (http://127.0.0.1:PORT) and
#                              VAR_PID to its pid; returns 1 (log printed) if it fails
#   serve_stop PID             kills one server started here
#   make_model OUT ARGS...     make-test-model into $TMP (cached per ARGS)
#   run_js NAME SCRIPT ARGS... runs a node check script, adds its counts
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

serve_init() {
  t_init "$1"
  WICK=${WICK_BIN:-build/wick}
  SHARED=${WICK_SHARED:-../shared}
  JS=tests/js
  STORIES="$SHARED/models/stories260K/stories260K-f32.gguf"
  # without ../shared: the same file, shipped in the repo as the demo model
  [ -f "$STORIES" ] || STORIES="$PWD/models/stories260K/stories260K-f32.gguf"
  TMP=$(mktemp -d)
  SERVE_PIDS=()
  trap serve_cleanup EXIT
  trap 'exit 130' INT TERM
  if [ ! -x "$WICK" ]; then bad "$WICK not built"; finish; fi
  if ! "$WICK" serve --help >/dev/null 2>&1; then bad "$WICK serve --help failed"; finish; fi
}

serve_cleanup() {
  local p
  for p in "${SERVE_PIDS[@]:-}"; do
    [ -n "$p" ] || continue
    kill "$p" 2>/dev/null
  done
  for p in "${SERVE_PIDS[@]:-}"; do
    [ -n "$p" ] || continue
    # give it 5 s to exit on SIGTERM, then SIGKILL
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  [ -n "${TMP:-}" ] && rm -rf "$TMP"
}

serve_need_node() {
  command -v node >/dev/null || skip "node not installed"
}

serve_need_npm() {
  serve_need_node
  command -v npm >/dev/null || skip "npm not installed"
  local pkgs=(openai ollama "$@")
  npm_missing() {
    local pkg want have
    for pkg in "${pkgs[@]}"; do
      want=$(node -e 'console.log(require(process.argv[1]).dependencies[process.argv[2]])' "$PWD/$JS/package.json" "$pkg")
      have=$(node -e 'try{console.log(require(process.argv[1]).version)}catch{console.log("none")}' "$PWD/$JS/node_modules/$pkg/package.json")
      [ "$want" = "$have" ] || return 0
    done
    return 1
  }
  npm_missing || return 0
  (
    flock 9
    npm_missing || exit 0
    npm install --prefix "$JS" --no-audit --no-fund --no-package-lock --loglevel=error >/dev/null 2>"$TMP/npm.log"
  ) 9>"$JS/.npm-install.lock"
  if npm_missing; then
    cat "$TMP/npm.log" 2>/dev/null
    skip "npm install of the test clients (${pkgs[*]}) failed (registry unreachable?)"
  fi
}

# serve_start VAR ARGS... (see above)
serve_start() {
  local var=$1; shift
  local log="$TMP/serve.$var.log" port="" i code
  "$WICK" serve --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  local pid=$!
  SERVE_PIDS+=("$pid")
  printf -v "${var}_PID" '%s' "$pid"
  printf -v "${var}_LOG" '%s' "$log"
  # the port it bound: the first "127.0.0.1:PORT" (or "localhost:PORT") it prints
  for i in $(seq 600); do
    port=$(grep -aoE '(127\.0\.0\.1|localhost|0\.0\.0\.0):[0-9]+' "$log" 2>/dev/null | head -n1 | sed 's/.*://')
    [ -n "$port" ] && [ "$port" != 0 ] && break
    port=""
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL: wick serve $* printed no 127.0.0.1:PORT (log follows)"; sed 's/^/  | /' "$log" | tail -n 30
    return 1
  fi
  local url="http://127.0.0.1:$port"
  for i in $(seq 600); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/health" 2>/dev/null)
    [ "$code" = 200 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$code" != 200 ]; then
    echo "FAIL: wick serve $*: GET /health gave '$code' (log follows)"; sed 's/^/  | /' "$log" | tail -n 30
    return 1
  fi
  printf -v "$var" '%s' "$url"
  return 0
}

serve_stop() {
  local pid=$1
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

# make_model OUT ARGS... : a random test model (wick make-test-model ARGS --out OUT)
make_model() {
  local out=$1; shift
  [ -f "$out" ] && return 0
  "$WICK" make-test-model "$@" --out "$out" >/dev/null 2>"$TMP/mk.err" || { cat "$TMP/mk.err"; return 1; }
}

# run_js NAME SCRIPT ARGS...: runs a node check script, prints its output and
# adds its closing "NAME: P passed, F failed" line to PASS/FAIL
run_js() {
  local n=$1; shift
  node "$@" >"$TMP/js.$n.out" 2>&1
  local rc=$?
  cat "$TMP/js.$n.out"
  local last; last=$(grep -aE "^$n: [0-9]+ passed, [0-9]+ failed$" "$TMP/js.$n.out" | tail -n 1)
  if [[ $last =~ ^$n:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    PASS=$((PASS + BASH_REMATCH[1])); FAIL=$((FAIL + BASH_REMATCH[2]))
    [ $rc -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && FAIL=$((FAIL+1))
  else
    bad "$n: the check script did not finish (rc $rc)"
  fi
}
