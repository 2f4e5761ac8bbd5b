#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages wick builds and tests with
# (compilers, cJSON, PCRE2, utf8proc, libmicrohttpd (wick serve), xxHash and
# ZeroMQ (the KV caches and their events), marked and DOMPurify (embedded in
# the web chat), NumPy for the reference tests, Node/npm
# for the tokenizer and template conformance suites). Uses sudo when not root.
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends \
  build-essential pkg-config clang libclang-rt-14-dev \
  libcjson-dev libpcre2-dev libutf8proc-dev libmicrohttpd-dev libxxhash-dev libzmq3-dev \
  python3 python3-numpy libjs-marked node-dompurify >/dev/null
# Node.js + npm run the conformance suites (@lenml/tokenizers, @huggingface/jinja);
# many machines already have them from elsewhere.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm >/dev/null
fi
echo "wick: build dependencies installed"
