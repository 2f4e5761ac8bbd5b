/* json_strict.h — request bodies held to JSON as RFC 8259 defines it:
 * cJSON accepts raw control characters (and NUL) inside strings, stops at a
 * NUL byte, and keeps the first of duplicate keys. Here a body is checked
 * first (strings: no raw control characters, valid escapes, no \u0000 and no
 * lone surrogates, which C strings cannot carry faithfully; numbers: the
 * JSON grammar; nothing but whitespace after the value; nesting at most
 * JSON_STRICT_MAX_DEPTH), and after parsing the last of duplicate keys wins,
 * as in JavaScript and Python. UTF-8 validity is checked before. */
#ifndef WICK_SERVE_JSON_STRICT_H
#define WICK_SERVE_JSON_STRICT_H

#include <cJSON.h>
#include <stddef.h>

#define JSON_STRICT_MAX_DEPTH 512

/* 0, or -1 with why and *at (the byte offset of the fault). */
int json_strict_check(const char *s, size_t n, size_t *at, char *why, size_t cap);
/* Remove, in every object of j, the members whose key comes again later. */
void json_keep_last(cJSON *j);

#endif
