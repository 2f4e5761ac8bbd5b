/* json_strict.c — request bodies held to JSON as RFC 8259 defines it, before
 * cJSON (which is lenient) parses them; and duplicate object keys resolved
 * as JavaScript and Python resolve them (see json_strict.h). */
#include "serve/json_strict.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

typedef struct scan {
    const char *s;
    size_t n, i;
    int depth;
    char *why;
    size_t cap;
} scan;

static int fail(scan *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(scan *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, c->cap, fmt, ap);
    va_end(ap);
    return -1;
}

static void ws(scan *c) {
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

static int hex4(scan *c, unsigned *v) {
    if (c->n - c->i < 4) return fail(c, "a \\u escape needs 4 hex digits");
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char h = c->s[c->i++];
        unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0') : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                   : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
        if (d == 16) return fail(c, "a \\u escape needs 4 hex digits");
        *v = *v * 16 + d;
    }
    return 0;
}

static int string(scan *c) {
    c->i++; /* the opening quote */
    while (c->i < c->n) {
        unsigned char ch = (unsigned char)c->s[c->i];
        if (ch == '"') {
            c->i++;
            return 0;
        }
        if (ch < 0x20) return fail(c, "a raw control character (0x%02x) in a string must be escaped", ch);
        if (ch != '\\') {
            c->i++;
            continue;
        }
        if (++c->i >= c->n) break;
        char e = c->s[c->i++];
        if (strchr("\"\\/bfnrt", e) && e) continue;
        if (e != 'u') return fail(c, "invalid escape \\%c in a string", e);
        unsigned v;
        if (hex4(c, &v) < 0) return -1;
        if (v == 0) return fail(c, "\\u0000 (a NUL character) in strings is not supported");
        if (v >= 0xDC00 && v <= 0xDFFF) return fail(c, "a lone low surrogate \\u%04X in a string", v);
        if (v >= 0xD800 && v <= 0xDBFF) {
            unsigned lo;
            if (c->n - c->i < 2 || c->s[c->i] != '\\' || c->s[c->i + 1] != 'u')
                return fail(c, "a lone high surrogate \\u%04X in a string", v);
            c->i += 2;
            if (hex4(c, &lo) < 0) return -1;
            if (lo < 0xDC00 || lo > 0xDFFF) return fail(c, "a lone high surrogate \\u%04X in a string", v);
        }
    }
    return fail(c, "a string is not closed");
}

static bool digit(const scan *c) { return c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9'; }

static int number(scan *c) {
    if (c->s[c->i] == '-') c->i++;
    if (!digit(c)) return fail(c, "invalid number");
    if (c->s[c->i] == '0') {
        c->i++;
        if (digit(c)) return fail(c, "a number may not have leading zeros");
    } else {
        while (digit(c)) c->i++;
    }
    if (c->i < c->n && c->s[c->i] == '.') {
        c->i++;
        if (!digit(c)) return fail(c, "invalid number: digits must follow '.'");
        while (digit(c)) c->i++;
    }
    if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
        c->i++;
        if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
        if (!digit(c)) return fail(c, "invalid number: digits must follow the exponent");
        while (digit(c)) c->i++;
    }
    return 0;
}

static int literal(scan *c, const char *word) {
    size_t l = strlen(word);
    if (c->n - c->i < l || memcmp(c->s + c->i, word, l) != 0) return fail(c, "invalid value");
    c->i += l;
    return 0;
}

static int value(scan *c);

static int container(scan *c, bool object) {
    if (++c->depth > JSON_STRICT_MAX_DEPTH) return fail(c, "nested deeper than %d levels", JSON_STRICT_MAX_DEPTH);
    const char close = object ? '}' : ']';
    c->i++;
    ws(c);
    if (c->i < c->n && c->s[c->i] == close) {
        c->i++;
        c->depth--;
        return 0;
    }
    for (;;) {
        if (object) {
            if (c->i >= c->n || c->s[c->i] != '"') return fail(c, "an object key must be a string");
            if (string(c) < 0) return -1;
            ws(c);
            if (c->i >= c->n || c->s[c->i] != ':') return fail(c, "':' expected after an object key");
            c->i++;
        }
        if (value(c) < 0) return -1;
        ws(c);
        if (c->i < c->n && c->s[c->i] == ',') {
            c->i++;
            ws(c);
            continue;
        }
        if (c->i < c->n && c->s[c->i] == close) {
            c->i++;
            c->depth--;
            return 0;
        }
        return fail(c, object ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int value(scan *c) {
    ws(c);
    if (c->i >= c->n) return fail(c, "a value is missing");
    switch (c->s[c->i]) {
    case '{': return container(c, true);
    case '[': return container(c, false);
    case '"': return string(c);
    case 't': return literal(c, "true");
    case 'f': return literal(c, "false");
    case 'n': return literal(c, "null");
    default:
        if (c->s[c->i] == '-' || digit(c)) return number(c);
        return fail(c, "invalid value");
    }
}

int json_strict_check(const char *s, size_t n, size_t *at, char *why, size_t cap) {
    scan c = {.s = s, .n = n, .why = why, .cap = cap};
    int rc = value(&c);
    if (rc == 0) {
        ws(&c);
        if (c.i < n) rc = fail(&c, "data after the JSON value");
    }
    if (at) *at = c.i;
    return rc;
}

/* ---- duplicate keys: the last one stays ---- */

static bool key_eq(const cJSON *a, const cJSON *b) { return strcmp(a->string, b->string) == 0; }

/* Drop the members of o whose key comes again later. */
static void dedupe_object(cJSON *o) {
    int n = cJSON_GetArraySize(o);
    if (n < 2) return;
    cJSON **seen = NULL;
    size_t cap = 0;
    if (n > 16) { /* a hash set of the keys kept, walked from the last member */
        cap = 32;
        while (cap < (size_t)n * 2) cap *= 2;
        seen = calloc(cap, sizeof *seen);
        if (!seen) return;
    }
    cJSON *last = o->child;
    while (last && last->next) last = last->next;
    for (cJSON *it = last, *prev; it; it = prev) {
        prev = it == o->child ? NULL : it->prev; /* (cJSON: the first member's prev is the last) */
        bool dup = false;
        if (seen) {
            size_t h = (size_t)XXH3_64bits(it->string, strlen(it->string)) & (cap - 1);
            while (seen[h] && !(dup = key_eq(seen[h], it))) h = (h + 1) & (cap - 1);
            if (!dup) seen[h] = it;
        } else {
            for (cJSON *j = it->next; j && !dup; j = j->next) dup = key_eq(j, it);
        }
        if (dup) cJSON_Delete(cJSON_DetachItemViaPointer(o, it));
    }
    free(seen);
}

void json_keep_last(cJSON *j) {
    if (!j) return;
    if (cJSON_IsObject(j)) dedupe_object(j);
    for (cJSON *it = j->child; it; it = it->next) json_keep_last(it);
}
