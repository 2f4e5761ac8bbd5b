#!/usr/bin/env bash
# json_schema_suite.test.sh — the JSON-Schema-Test-Suite (npm
# json-schema-test-suite, pinned in tests/js/package.json, installed into
# tests/js/node_modules; skips without node/npm/registry) through the
# grammar engine (tests/json_schema_suite.c): across every draft-4 file
# no invalid instance is accepted and, in every group whose schema
# compiles, every valid instance is accepted (optional/format: no invalid
# instance accepted). A group whose
# schema uses what wick does not support is refused with an error naming it;
# the groups each file compiles are pinned below, so coverage cannot shrink
# unnoticed. Left out: optional/bignum and optional/zeroTerminatedFloats,
# whose instances (1.0, 1e52-sized integers) do not survive being parsed and
# printed again as JSON.
cd "$(dirname "$0")/.." || exit 1
source tests/js/serve_common.sh
t_init json_schema_suite
WICK=${WICK_BIN:-build/wick}
JS=tests/js
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
BIN=${WICK_BUILD:-build}/tests/json_schema_suite
[ -x "$BIN" ] || { bad "$BIN not built"; finish; }
serve_need_npm json-schema-test-suite
D=$JS/node_modules/json-schema-test-suite/tests/draft4

"$BIN" "$D"/*.json >"$TMP/out" 2>&1; rc=$?
sed "s|$D/||" "$TMP/out"
[ $rc = 0 ] && ok "no invalid instance accepted, no valid one refused in a compiled group" || bad "wrong answers (see above)"
# formats: wick's are subsets of the RFCs' forms (draft 4 also calls a
# protocol-relative "//host/path" a uri, which RFC 3986 and ajv do not), so
# here only "no invalid instance accepted" is asked
"$BIN" "$D"/optional/format.json >"$TMP/fmt" 2>&1
sed "s|$D/||" "$TMP/fmt" | tee -a "$TMP/out"
grep -q "INVALID ACCEPTED" "$TMP/fmt" && bad "optional/format.json: an invalid instance accepted" || ok "optional/format.json: no invalid instance accepted"

# file: groups compiled (of all its groups); the keywords wick claims compile every group
declare -A want=(
  [type.json]=8 [enum.json]=3 [required.json]=2 [items.json]=2 [additionalItems.json]=5 [minItems.json]=1
  [maxItems.json]=1 [minLength.json]=1 [maxLength.json]=1 [pattern.json]=2 [default.json]=2
  [additionalProperties.json]=4 [properties.json]=1 [ref.json]=5 [anyOf.json]=2 [optional/format.json]=6
  [allOf.json]=3 [minimum.json]=2 [maximum.json]=2 [minProperties.json]=1 [maxProperties.json]=1
  [patternProperties.json]=1
)
for f in "${!want[@]}"; do
  got=$(sed "s|$D/||" "$TMP/out" | awk -v f="$f" '$1 == f {print $5}')
  [ "${got:-0}" -ge "${want[$f]}" ] && ok "$f: ${got:-0} groups compiled (>= ${want[$f]})" || bad "$f: ${got:-0} groups compiled, want >= ${want[$f]}"
done
finish
