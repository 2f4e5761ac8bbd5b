/* version.c — wick's version and build (wick.h). The Makefile passes the git
 * commit as WICK_BUILD_ID when it compiles this file. The version is the one
 * the Ollama routes announce (/api/version), which Ollama's clients read. */
#include "wick.h"

#define WICK_VERSION "0.9.0"

#ifndef WICK_BUILD_ID
#define WICK_BUILD_ID "unknown"
#endif

#if defined(__clang__)
#define WICK_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define WICK_COMPILER "gcc " __VERSION__
#else
#define WICK_COMPILER "an unknown compiler"
#endif

const char *wick_version(void) { return WICK_VERSION; }

const char *wick_build(void) { return WICK_BUILD_ID ", " WICK_COMPILER; }

const char *wick_fingerprint(void) { return "b" WICK_VERSION "-" WICK_BUILD_ID; }
