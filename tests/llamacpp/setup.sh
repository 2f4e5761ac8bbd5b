#!/usr/bin/env bash
# setup.sh — make llama.cpp's own library usable here: install the pinned npm
# package that ships the prebuilt libllama (tests/llamacpp/package.json) into
# tests/llamacpp/node_modules, and build bench/llamacpp_ref.c (our driver that
# dlopens it) into OUT_DIR. Prints the library directory on success; prints
# the reason to stderr and exits 1 when llama.cpp can't be had on this machine
# (no node/npm, not Linux x86-64, registry unreachable).
# Usage: tests/llamacpp/setup.sh OUT_DIR   (run from the repository root)
set -u
out=${1:?usage: setup.sh OUT_DIR}
dir=tests/llamacpp
want=3.22.1
mkdir -p "$out"
lib="$PWD/$dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
  echo "llama.cpp's prebuilt library is for Linux x86-64 only" >&2; exit 1
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "node/npm not installed" >&2; exit 1
fi
have=$(node -e 'try{console.log(require(process.argv[1]).version)}catch{console.log("none")}' \
  "$PWD/$dir/node_modules/@node-llama-cpp/linux-x64/package.json")
if [ "$have" != "$want" ] || ! ls "$lib"/libllama*.so >/dev/null 2>&1; then
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-package-lock --loglevel=error >"$out/npm.log" 2>&1; then
    cat "$out/npm.log" >&2
    echo "npm install of @node-llama-cpp/linux-x64@$want failed (registry unreachable?)" >&2; exit 1
  fi
fi
if ! ${CC_HOST:-cc} -std=c17 -O2 -Wall -Wextra -Werror -o "$out/llamacpp_ref" bench/llamacpp_ref.c -ldl 2>"$out/cc.log"; then
  cat "$out/cc.log" >&2; echo "cannot build bench/llamacpp_ref.c" >&2; exit 1
fi
echo "$lib"
