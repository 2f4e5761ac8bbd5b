#!/bin/bash
# Run llama.cpp's own server test suite against a server binary: wick (through
# wrapper.py, which translates llama-server's flags) or llama-server itself
# (same wrapper, which then only maps model names to local files).
#
# usage: tests/llamacpp_suite/run.sh LLAMACPP_DIR TARGET_BIN [OUT_DIR] [TEST_FILE...]
#   LLAMACPP_DIR  a llama.cpp source tree (tools/server/tests or, in older
#                 trees, examples/server/tests is used)
#   TARGET_BIN    build/wick, or a llama-server binary
#   OUT_DIR       where logs, JUnit XML and report.md go (default:
#                 ./llamacpp-suite-out/<wick|llama-server>)
#   TEST_FILE     test file names (test_basic.py ...); default: all of unit/
# environment: PORT (default 28080), TEST_TIMEOUT (seconds per test, default
#   120), FILE_TIMEOUT (seconds per file, default 1200), PYTHON (default
#   /usr/bin/python3, Debian's, with python3-pytest and friends),
#   WICK_SHARED (fixtures folder, default ../shared beside the checkout),
#   PYTEST_ARGS (extra pytest arguments, e.g. "-k health"),
#   LLAMA_SANITIZE (set to 1 unless given: the suite then waits 30 s instead of
#   12 s for a server to answer /health, which a loaded 2-CPU machine needs).
# Slow tests (pytest -m slow) are left out, as llama.cpp's tests.sh does.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,20p' "$0"; exit 2; }
src=$(cd "$1" && pwd) || exit 2
bin=$(readlink -f "$2")
[[ -x "$bin" ]] || { echo "not an executable: $2" >&2; exit 2; }
if "$bin" serve --help 2>/dev/null | grep -q "wick serve"; then kind=wick; else kind=llama-server; fi
out=${3:-$PWD/llamacpp-suite-out/$kind}
shift $(( $# >= 3 ? 3 : 2 ))
tests=
for d in "$src/tools/server/tests" "$src/examples/server/tests"; do
	[[ -d "$d/unit" ]] && { tests=$d; break; }
done
[[ -n "$tests" ]] || { echo "no server tests under $src" >&2; exit 2; }
# trees of that era serve GET /slots only with --slots (now the default)
[[ $tests == */examples/server/tests ]] && export SUITE_SLOTS_OPT_IN=1
# and shift the context unless --no-context-shift is given (now off by default)
[[ $tests == */examples/server/tests ]] && export SUITE_CTX_SHIFT_DEFAULT=1
py=${PYTHON:-/usr/bin/python3}
"$py" -c 'import pytest, requests, wget' 2>/dev/null ||
	{ echo "$py lacks pytest/requests/wget: apt-get install python3-pytest python3-requests python3-wget python3-aiohttp python3-prometheus-client python3-jsonschema python3-pytest-timeout" >&2; exit 2; }
pypath=$tests:$here
"$py" -c 'import openai' 2>/dev/null || pypath=$pypath:$here/shim
read -ra extra_args <<< "${PYTEST_ARGS:-}"
timeout_arg=()
"$py" -c 'import pytest_timeout' 2>/dev/null && timeout_arg=(--timeout="${TEST_TIMEOUT:-120}")

# ./tmp in the tests folder: the suite's download and --slot-save-path folder
mkdir -p "$out/junit" "$out/logs" "$tests/tmp"
out=$(cd "$out" && pwd)
files=("$@")
[[ ${#files[@]} -gt 0 ]] || mapfile -t files < <(cd "$tests/unit" && ls test_*.py)
# newer trees' default model: stories260K with a 2048-position training
# context (modelmap.py says why), made with the tree's own gguf-py
if [[ $tests == */tools/server/tests ]]; then
	long=$out/stories260K-ctx2048.gguf
	stories=$("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import modelmap; print(modelmap.shared_dir())' "$here")/models/stories260K/stories260K-f32.gguf
	if [[ -f $stories ]] && cp "$stories" "$long.tmp" && chmod u+w "$long.tmp" &&
		PYTHONPATH=$src/gguf-py "$py" "$src/gguf-py/gguf/scripts/gguf_set_metadata.py" --force "$long.tmp" llama.context_length 2048 >/dev/null; then
		mv "$long.tmp" "$long"
		export SUITE_STORIES_LONG_CTX=$long
	else
		echo "could not make the long-context stories260K ($stories): its tests will be skipped" >&2
	fi
fi
# files.tsv: name, exit status, seconds per test file; rerunning some files
# into the same OUT_DIR replaces their rows only
touch "$out/files.tsv"
for f in "${files[@]}"; do
	grep -v "^${f%.py}	" "$out/files.tsv" > "$out/files.tsv.new"
	mv "$out/files.tsv.new" "$out/files.tsv"
done
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || cat "$src/COMMIT" 2>/dev/null || echo unknown)
echo "llama.cpp tests: $tests (commit $commit)"
echo "target: $kind $bin"
start_all=$SECONDS
for f in "${files[@]}"; do
	name=${f%.py}
	rm -f "$out/junit/$name.xml"
	t0=$SECONDS
	(cd "$tests" && PYTHONPATH=$pypath PORT=${PORT:-28080} LLAMA_CACHE=tmp \
		LLAMA_SANITIZE=${LLAMA_SANITIZE-1} \
		SUITE_TARGET_KIND=$kind SUITE_TARGET_BIN=$bin \
		LLAMA_SERVER_BIN_PATH=$here/wrapper.py \
		timeout -k 10 "${FILE_TIMEOUT:-1200}" "$py" -m pytest -p suite_plugin -p no:cacheprovider \
		-m "not slow" "${timeout_arg[@]}" -rA "${extra_args[@]}" \
		--junitxml="$out/junit/$name.xml" "unit/$f") > "$out/logs/$name.log" 2>&1
	rc=$?
	printf '%s\t%s\t%s\n' "$name" "$rc" $((SECONDS - t0)) >> "$out/files.tsv"
	echo "$f: exit $rc, $((SECONDS - t0)) s"
done
{
	echo "# llama.cpp server tests against $kind"
	echo
	echo "- binary: \`$bin\`"
	echo "- llama.cpp commit: $commit"
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); this invocation ran $((SECONDS - start_all)) s"
	echo
	"$py" "$here/report.py" "$out"
} > "$out/report.md"
echo "report: $out/report.md"
